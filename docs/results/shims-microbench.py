"""Per-step CPU cost of the runtime shims, without a GPU: SGLang 0.5.12's real Scheduler.run_batch
(compiled from the fetched source, as in tests/test_runtime.py) driven 20,000 times with a
stand-in worker, with and without the shims (record mode, the proof's catalogs, no value check).

    SPECTRACE_CACHE_DIR=/work/cache python docs/results/shims-microbench.py [prof]
"""
import sys, time, types; sys.path.insert(0, "tests")  # tests/test_runtime.py helpers
import test_runtime as T
from spectrace.source import resolve_source
from spectrace.contracts import runtime
root = resolve_source("0.5.12").root
torch_ns = {"torch": types.SimpleNamespace(is_tensor=lambda x: isinstance(x, T.FakeTensor))}
real = types.SimpleNamespace(root=root,
  Result=T.real_class(root, T.UTILS, "GenerationBatchResult", methods=("copy_to_cpu",), namespace=torch_ns),
  DraftInput=T.real_class(root, T.EAGLE_INFO, "EagleDraftInput"),
  FutureMap=T.real_class(root, T.OVERLAP, "FutureMap", methods=("store_to_map", "store_to_map_for_new_batch", "is_empty_slice"), namespace={"spec_need_hidden_states": lambda: False}))
mixin = T.real_class(root, T.OUTPROC, "SchedulerOutputProcessorMixin", methods=("_resolve_spec_overlap_tokens","process_batch_result_decode"))
real.Scheduler = T.real_class(root, T.SCHED, "Scheduler", methods=("run_batch",), namespace={"time": time}, bases=(mixin,))
fm = types.ModuleType("sglang.srt.managers.overlap_utils"); fm.FutureMap = real.FutureMap
sys.modules["sglang.srt.managers.overlap_utils"] = fm
worker = T.SpecWorker(real)
sched = T.make_scheduler(real, worker)
batch = T.make_batch("DECODE", bs=1)
batch.spec_algorithm = types.SimpleNamespace(is_none=lambda: False)
N = 20000
def bench():
    t = time.perf_counter()
    for _ in range(N):
        b = T.make_batch("DECODE", bs=1); b.spec_algorithm = batch.spec_algorithm
        sched.run_batch(b)
    return (time.perf_counter() - t) / N * 1e6
base = min(bench() for _ in range(3))
s = runtime.Shims("record", None, "contracts/catalog:docs/results/shims-catalog-0.5.12.toml", value_sample=0)
s.sglang_version = "0.5.12"
s._on_scheduler_module(types.SimpleNamespace(Scheduler=real.Scheduler))
mod = types.ModuleType("w"); mod.SpecWorker = T.SpecWorker; T.SpecWorker.__module__ = "w"
s._on_worker_module(mod)
with_shims = min(bench() for _ in range(3))
print(f"run_batch (real 0.5.12 code, stub env): {base:.1f} us without, {with_shims:.1f} us with shims: +{with_shims-base:.1f} us/step; checks {sum(s.checks.values())}, violations {sum(s.violations.values())}, skipped {s.skipped}")
if len(sys.argv) > 1:
    import cProfile, pstats
    cProfile.run("bench()", "/tmp/prof")
    pstats.Stats("/tmp/prof").sort_stats("tottime").print_stats(12)
