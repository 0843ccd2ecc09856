# A trace of the tier policy's decisions (the draft-steps series), for reading why a run chose the
# tiers it did: with this folder on the engine's PYTHONPATH (a configuration's `env = { PYTHONPATH =
# "tests/gpu/tiers_trace" }`), every decision prints one `[tiers] step` line to the engine's log
# (batch size, tier, the steps left in the window, whether the bucket is passed through fast) and
# every window's plan one `[tiers] plan` line (its bucket's step times per tier in ms and its
# acceptance per draft position). Chained like tests/gpu/fault/sitecustomize.py.
import importlib.util
import os
import sys


def _patch(module):
    cls = module.TierController
    if getattr(cls.decide, "_traced", False):
        return
    decide, plan = cls.decide, cls._plan

    def traced_decide(self, bs, needs_verify=False, rid=None):
        tier = decide(self, bs, needs_verify, rid)
        bucket = self.buckets[module.bucket_of(bs)]
        print(f"[tiers] step t={self.clock():.4f} bs={bs} tier={tier} left={bucket.steps_left} "
              f"passing={int(bucket.passing)}", file=sys.stderr, flush=True)
        return tier

    def traced_plan(self, bucket, state):
        tier = plan(self, bucket, state)
        times = {t: round(state.time(t) * 1e3, 1) for t in self.tiers if state.time(t) is not None}
        rates = [round(r, 2) for r in state.rates() or []]
        print(f"[tiers] plan bucket={bucket} passing={int(state.passing)} -> {tier} best={state.best} "
              f"ms={times} rates={rates}", file=sys.stderr, flush=True)
        return tier

    traced_decide._traced = True
    cls.decide, cls._plan = traced_decide, traced_plan
    print(f"[tiers] pid {os.getpid()}: tier decisions traced", file=sys.stderr, flush=True)


if not getattr(sys, "_tiers_trace_boot_ran", False):
    sys._tiers_trace_boot_ran = True
    _here = os.path.dirname(os.path.abspath(__file__))
    _spec = importlib.util.spec_from_file_location("_gpu_sitechain", os.path.join(os.path.dirname(_here), "sitechain.py"))
    (_chain := importlib.util.module_from_spec(_spec)).__loader__.exec_module(_chain)
    _chain.boot(_here, "[tiers]", "sglang.srt.speculative.draft_steps", _patch)
