# Draft acceptance that changes during a run, for the GPU test of the core's comeback and
# bench/gpu/dd-0.5.17-comeback.toml: with the bench's `accepted` draft regime, the scheduler's
# EAGLEWorkerV2 counts its decode steps and, from step ACCEPTANCE_NEVER_FROM (300) to
# ACCEPTANCE_NEVER_UNTIL (900), rolls the draft's lm_head rows by one, in place (CUDA graphs keep
# the tensor's address), so that no draft is accepted; then it rolls them back. The target is not
# touched: greedy outputs stay the baseline's. Chained like tests/gpu/fault/sitecustomize.py.
import importlib.util
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


if not getattr(sys, "_acceptance_switch_boot_ran", False):
    sys._acceptance_switch_boot_ran = True
    _here = os.path.dirname(os.path.abspath(__file__))
    _spec = importlib.util.spec_from_file_location("_gpu_sitechain", os.path.join(os.path.dirname(_here), "sitechain.py"))
    (_chain := importlib.util.module_from_spec(_spec)).__loader__.exec_module(_chain)
    _chain.boot(_here, "[acceptance]", "sglang.srt.speculative.eagle_worker_v2", _patch)
