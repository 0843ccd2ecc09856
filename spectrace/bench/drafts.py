"""Draft regimes for dummy-weight engines (``--drafts``): the dummy weights are edited in place in
SGLang's scheduler, right after ``ModelRunner.load_model`` and before CUDA graphs are captured
(graphs keep the weights' addresses, so the edit must not replace a tensor).

- ``dummy``: the weights as SGLang's dummy loader makes them; EAGLE-3 drafts are never accepted.
- ``accepted``: every ``o_proj`` and ``down_proj`` zeroed (attention and MLP add nothing, so the
  residual stays the input token's embedding), every ``*norm.weight`` 1, the target's lm_head =
  embed_tokens: the target's greedy token repeats its input token. The draft's ``fc`` passes the
  first of the three aux hidden states (the target's residual, the embedding of the token at that
  position) and its lm_head is the target's embed_tokens, so it predicts the same token: every
  draft is accepted (accept length 4.00 with 3 steps / 4 draft tokens on SGLang 0.5.12).
- ``half``: the same, except that the target's lm_head row y is embed_tokens row f(y) for a seeded
  pairing f of the vocabulary (an involution without fixed points): the target then alternates
  between two tokens p, f(p), p, ... The draft still predicts the token two positions on from its
  aux hidden state (p), which is right for its first draft token and wrong for the second, every
  step: one draft token accepted per verify step, accept length 2 (half the 4 of ``accepted``
  with 3 steps). Read the exact figure from the bench's accept-length column.
- ``kinds``: the same edit, the target's lm_head mapped per set of a vocabulary split (kinds.py):
  prompts drawn from the ``accepted``, ``half`` or ``never`` set get drafts accepted always, about
  half the time or never, all in one engine (the serving workload's request kinds). The split
  covers ``SPECTRACE_BENCH_VOCAB`` tokens (the bench's prompt range), seeded by the pairing's seed.

The dummy loader seeds every parameter alike, so equal-shaped tensors (embed_tokens and lm_head
of both models) start equal; the copies make the regime independent of that.

``boot/sitecustomize.py`` calls :func:`install_from_environment` in every process that has the boot
folder on PYTHONPATH; nothing here imports torch before SGLang has.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

REGIMES = ("dummy", "accepted", "half", "kinds")
ENV_DRAFTS = "SPECTRACE_BENCH_DRAFTS"
ENV_SEED = "SPECTRACE_BENCH_DRAFTS_SEED"  # the pairing of ``half``, the vocabulary split of ``kinds``
ENV_VOCAB = "SPECTRACE_BENCH_VOCAB"  # the token range that ``kinds`` splits
BOOT_DIR = Path(__file__).resolve().parent.parent / "boot"  # spectrace/boot: shared with the shims
MODEL_RUNNER = "sglang.srt.model_executor.model_runner"
ROW_CHUNK = 16384  # rows per gathered copy in ``half``: bounded scratch memory on the device

# the target's embed_tokens of this process: the draft's lm_head copies it (the target loads first)
_TARGET_EMBED = None


def regime_from_environment() -> str:
    value = os.environ.get(ENV_DRAFTS, "").strip().lower() or "dummy"
    if value not in REGIMES:
        raise ValueError(f"{ENV_DRAFTS}={value!r}: expected one of {', '.join(REGIMES)}")
    return value


def vocabulary_pairing(n: int, seed: int = 0):
    """A seeded involution of range(n) without fixed points (one fixed point when n is odd), as a
    torch LongTensor on the CPU."""
    import torch

    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    m = n // 2 * 2
    a, b = perm[0:m:2], perm[1:m:2]
    f = torch.arange(n)
    f[a] = b
    f[b] = a
    return f


def _copy(dst, src) -> None:
    if dst is src:
        return
    if tuple(dst.shape) == tuple(src.shape):
        dst.copy_(src)
    else:  # vocabulary padding differs: the common rows
        n = min(dst.shape[0], src.shape[0])
        dst[:n].copy_(src[:n])


def _copy_gathered(dst, src, index) -> None:
    """dst[y] = src[index[y]] for the rows of index, a chunk at a time (no full-size temporary)."""
    index = index.to(src.device)
    for i in range(0, index.shape[0], ROW_CHUNK):
        dst[i:i + ROW_CHUNK].copy_(src.index_select(0, index[i:i + ROW_CHUNK]))


def edit_model(model, regime: str, role: str = "target") -> str:
    """Edit a loaded Llama target or EAGLE-3 draft in place for ``regime``; returns the log line."""
    global _TARGET_EMBED
    if regime == "dummy":
        return ""
    if regime not in REGIMES:
        raise ValueError(f"unknown draft regime {regime!r}")
    torch = sys.modules.get("torch")  # SGLang imported it; a fake model in a test needs none
    counts = {"o_proj": 0, "down_proj": 0, "norm": 0}
    with torch.no_grad() if torch is not None else contextlib.nullcontext():
        for name, module in model.named_modules():
            leaf = name.rsplit(".", 1)[-1]
            if leaf in ("o_proj", "down_proj"):
                module.weight.zero_()
                counts[leaf] += 1
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                param.fill_(1.0)
                counts["norm"] += 1
        if not counts["o_proj"] or not counts["down_proj"]:
            raise RuntimeError(f"drafts {regime}: {type(model).__name__} has no o_proj/down_proj to zero "
                               "(only the bench's dummy Llama target and EAGLE-3 draft can be edited)")
        inner = model.model
        embed, head = inner.embed_tokens.weight, model.lm_head.weight
        fc = getattr(inner, "fc", None)
        if fc is not None:  # the EAGLE-3 draft
            w = fc.weight
            width = w.shape[0]
            w.zero_()
            w[:, :width].diagonal().fill_(1.0)
            if getattr(fc, "bias", None) is not None:
                fc.bias.zero_()
            source = _TARGET_EMBED if _TARGET_EMBED is not None else embed
            _copy(head, source)
            what = (f"fc passes aux hidden state 1 of {w.shape[1] // width}, lm_head = "
                    + ("the target's" if source is _TARGET_EMBED else "its") + " embed_tokens")
        else:
            _TARGET_EMBED = embed
            seed = int(os.environ.get(ENV_SEED) or 0)
            rows = min(head.shape[0], embed.shape[0])
            if regime == "half":
                _copy_gathered(head, embed, vocabulary_pairing(rows, seed))
                what = f"lm_head = embed_tokens under a seeded pairing of {rows} tokens (seed {seed})"
            elif regime == "kinds":
                from spectrace.bench.kinds import split_vocabulary, target_rows

                split = split_vocabulary(int(os.environ.get(ENV_VOCAB) or rows), seed)
                _copy_gathered(head, embed, torch.tensor(target_rows(split, rows)))
                sizes = ", ".join(f"{len(ids)} {r}" for r, ids in split.sets.items())
                what = f"lm_head = embed_tokens mapped per set of a split of {split.vocab} tokens ({sizes}; seed {seed})"
            else:
                _copy(head, embed)
                what = "lm_head = embed_tokens"
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()  # the scratch of ``half`` must not shrink the KV pool
    return (f"[spectrace bench] drafts {regime}: {role} {type(model).__name__} (pid {os.getpid()}): zeroed "
            f"{counts['o_proj']} o_proj and {counts['down_proj']} down_proj, {counts['norm']} norm weights "
            f"set to 1, {what}")


def wrap_model_runner(module, regime: str) -> None:
    """Wrap ``module.ModelRunner.load_model`` so that every model it loads is edited."""
    cls = module.ModelRunner
    original = cls.load_model
    if getattr(original, "_spectrace_drafts", None):
        return

    def load_model(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        role = "draft" if getattr(self, "is_draft_worker", False) else "target"
        print(edit_model(self.model, regime, role), file=sys.stderr, flush=True)
        return out

    load_model._spectrace_drafts = regime
    load_model.__wrapped__ = original
    cls.load_model = load_model


def install_from_environment() -> str:
    """Register the load_model wrapper when SPECTRACE_BENCH_DRAFTS asks for an edit; returns the
    regime."""
    regime = regime_from_environment()
    if regime != "dummy":
        from spectrace.shims.post_import import when_imported

        when_imported(MODEL_RUNNER, lambda module: wrap_model_runner(module, regime))
    return regime
