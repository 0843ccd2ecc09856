# Draft acceptance that changes during a run, for the GPU test of the core's comeback and
# bench/gpu/dd-0.5.17-comeback.toml: with the bench's `accepted` draft regime, the scheduler's
# EAGLEWorkerV2 counts its decode steps and, from step ACCEPTANCE_NEVER_FROM (300) to
# ACCEPTANCE_NEVER_UNTIL (900), rolls the draft's lm_head rows by one, in place (CUDA graphs keep
# the tensor's address), so that no draft is accepted; then it rolls them back. The target is not
# touched: greedy outputs stay the baseline's. Chained like tests/gpu/fault/sitecustomize.py.
import os
import sys

NEVER_FROM = int(os.environ.get("ACCEPTANCE_NEVER_FROM") or 300)
NEVER_UNTIL = int(os.environ.get("ACCEPTANCE_NEVER_UNTIL") or 900)


def _draft_lm_head(worker):
    return worker.draft_worker.draft_runner.model.lm_head.weight


def _patch(module):
    cls = module.EAGLEWorkerV2
    original = cls.forward_batch_generation
    if getattr(original, "_acceptance_switch", False):
        return
    state = {"steps": 0}

    def roll(worker, shift, what):
        import torch

        weight = _draft_lm_head(worker)
        if weight.data_ptr() == worker.target_worker.model_runner.model.lm_head.weight.data_ptr():
            print("[acceptance] the draft's lm_head is the target's: left as it is", file=sys.stderr, flush=True)
            return
        with torch.no_grad():
            weight.copy_(torch.roll(weight, shift, dims=0))
        print(f"[acceptance] pid {os.getpid()} decode step {state['steps']}: {what}", file=sys.stderr, flush=True)

    def forward_batch_generation(self, batch, *args, **kwargs):
        if not (batch.forward_mode.is_extend() or batch.is_extend_in_batch):
            state["steps"] += 1
            if state["steps"] == NEVER_FROM:
                roll(self, 1, "drafts never accepted")
            elif state["steps"] == NEVER_UNTIL:
                roll(self, -1, "drafts accepted again")
        return original(self, batch, *args, **kwargs)

    forward_batch_generation._acceptance_switch = True
    cls.forward_batch_generation = forward_batch_generation
    print(f"[acceptance] pid {os.getpid()}: drafts never accepted in decode steps {NEVER_FROM}-{NEVER_UNTIL}",
          file=sys.stderr, flush=True)


def _chain_shadowed_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    entries = [os.path.abspath(e) if e else "" for e in sys.path]
    after = entries.index(here) + 1 if here in entries else 0
    for entry in sys.path[after:]:
        candidate = os.path.join(entry, "sitecustomize.py") if entry else ""
        if entry and os.path.abspath(entry) != here and os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8") as fh:
                    exec(compile(fh.read(), candidate, "exec"), {"__name__": "sitecustomize", "__file__": candidate})
            except Exception as exc:  # never break interpreter start-up
                print(f"[acceptance] chained sitecustomize in {entry} failed: {exc!r}", file=sys.stderr)
            return


if not getattr(sys, "_acceptance_switch_boot_ran", False):
    sys._acceptance_switch_boot_ran = True
    try:
        from spectrace.shims.post_import import when_imported

        when_imported("sglang.srt.speculative.eagle_worker_v2", _patch)
    except Exception as _exc:
        print(f"[acceptance] not installed: {_exc!r}", file=sys.stderr)
    _chain_shadowed_sitecustomize()
