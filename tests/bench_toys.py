"""Toy torch models shaped as the bench's weight edits (spectrace/bench/drafts.py) read them: a
two-layer Llama target and an EAGLE-3 draft with an ``fc`` over three aux hidden states."""

from __future__ import annotations


def toy_llama(h: int, vocab: int, draft: bool):
    from torch import nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.self_attn, self.mlp = nn.Module(), nn.Module()
            self.self_attn.o_proj, self.mlp.down_proj = nn.Linear(h, h, bias=False), nn.Linear(h, h, bias=False)
            self.input_layernorm = nn.LayerNorm(h)

    m = nn.Module()
    m.model = nn.Module()
    m.model.embed_tokens = nn.Embedding(vocab, h)
    m.model.layers = nn.ModuleList([Layer(), Layer()])
    m.model.norm = nn.LayerNorm(h)
    m.lm_head = nn.Linear(h, vocab, bias=False)
    if draft:
        m.model.fc = nn.Linear(3 * h, h)
    return m
