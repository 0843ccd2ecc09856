"""Dummy weights under which an EAGLE-3 draft is always right (PROBE_AGREE=1, see pyhook).

With SGLang's dummy weights the draft is never accepted (accept length 1.0), so speculation can
only lose.  To measure the other case with the same compute (every GEMM still runs at full size),
the loaded dummy weights are edited in place, in the scheduler process, right after
``ModelRunner.load_model`` (before CUDA graphs are captured; in-place edits keep the addresses
the graphs use):

* every ``o_proj`` and ``down_proj`` is zero, so attention and MLP add nothing and the residual
  stream of the target stays its token embedding ``e(x)`` at every layer;
* every RMSNorm weight is 1 (dummy init draws them uniform in +-1e-3, with random signs);
* the target's ``lm_head`` equals ``embed_tokens``: the logits are ``E . e(x)/rms(e(x))``, whose
  argmax is ``x`` itself (for uniform random rows of dimension 4096 the self-similarity exceeds
  every other row by far: ``bench/gpu/agree_check.py``).  The target repeats its input token;
* the draft's ``fc`` selects the first of the three aux hidden states (all three are ``e(x)``),
  its layers add nothing, its ``lm_head`` equals its embedding (the target's), so it predicts ``x``
  at every draft step: every draft token is accepted (accept length = num_draft_tokens).

The outputs are degenerate (the last prompt token repeated), and the draft's KV does not matter
to its prediction; this measures speculation's throughput with accepted drafts, not draft quality.
"""

from __future__ import annotations


def agree_weights(model) -> dict:
    import torch

    done = {"zeroed": 0, "norms": 0, "head_tied": False, "fc_select": False}
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, p in params.items():
            if name.endswith(("o_proj.weight", "down_proj.weight")):
                p.zero_()
                done["zeroed"] += 1
            elif name.endswith("norm.weight"):
                p.fill_(1.0)
                done["norms"] += 1
        embed = params.get("model.embed_tokens.weight")
        head = params.get("lm_head.weight")
        if embed is not None and head is not None and head.shape == embed.shape:
            if head.data_ptr() != embed.data_ptr():
                head.copy_(embed)
            done["head_tied"] = True
        fc = params.get("model.fc.weight")
        if fc is not None:
            h = fc.shape[0]
            fc.zero_()
            fc[:, :h].copy_(torch.eye(h, dtype=fc.dtype, device=fc.device))
            done["fc_select"] = True
    return done
