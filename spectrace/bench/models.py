"""Dummy model configs for engines without weights (``--load-format dummy``): a Llama target and
an EAGLE-3 draft, shaped as the GPU recipe's probe shapes them."""

from __future__ import annotations

import json
import os
from pathlib import Path

SHAPES = {
    # head_dim 128 and GQA group 4 as in the 8B shape, so JIT-compiled kernels are shared
    "small": dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=2, vocab_size=32000, aux_layer_ids=[0, 1, 2]),
    # Llama-3.1-8B shaped
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
               num_key_value_heads=8, vocab_size=128256, aux_layer_ids=[1, 15, 28]),
}

# The server arguments of a dummy-model run; flags a version does not know are renamed or
# dropped by the engine driver (drivers.known_flags_only).
DUMMY_DEFAULT_ARGS = ("--model-path {target} --load-format dummy --skip-tokenizer-init "
                      "--attention-backend triton --sampling-backend pytorch --grammar-backend none "
                      "--dtype bfloat16 --random-seed 0 --mem-fraction-static 0.55 --context-length 4096 "
                      "--disable-piecewise-cuda-graph")


def write_dummy_models(shape: str, root: str | os.PathLike) -> dict:
    """``config.json`` for a Llama target and an EAGLE-3 draft. The draft is shaped as
    sglang/srt/models/llama_eagle3.py reads it: one layer, ``draft_vocab_size == vocab_size`` (no
    hot-token map), explicit aux hidden-state layers (the default collapses on a 4-layer target)."""
    s = SHAPES[shape]
    root = Path(root)
    target, draft = root / f"target-{shape}", root / f"draft-{shape}"
    common = dict(
        model_type="llama", hidden_act="silu", rms_norm_eps=1e-5, hidden_size=s["hidden_size"],
        intermediate_size=s["intermediate_size"], num_attention_heads=s["num_attention_heads"],
        num_key_value_heads=s["num_key_value_heads"], head_dim=s["hidden_size"] // s["num_attention_heads"],
        vocab_size=s["vocab_size"], max_position_embeddings=8192, rope_theta=500000.0, bos_token_id=1,
        eos_token_id=2, pad_token_id=0, torch_dtype="bfloat16", tie_word_embeddings=False,
        attention_bias=False, initializer_range=0.02)
    configs = {
        target: dict(common, architectures=["LlamaForCausalLM"], num_hidden_layers=s["num_hidden_layers"]),
        draft: dict(common, architectures=["LlamaForCausalLMEagle3"], num_hidden_layers=1,
                    draft_vocab_size=s["vocab_size"], target_hidden_size=s["hidden_size"],
                    eagle_config={"eagle_aux_hidden_state_layer_ids": s["aux_layer_ids"],
                                  "use_aux_hidden_state": True}),
    }
    for path, cfg in configs.items():
        path.mkdir(parents=True, exist_ok=True)
        (path / "config.json").write_text(json.dumps(cfg, indent=1))
    return {"target": str(target), "draft": str(draft), "vocab_size": s["vocab_size"]}
