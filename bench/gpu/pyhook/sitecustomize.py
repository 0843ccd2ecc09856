# Copied from shared/gpu/pyhook/sitecustomize.py for the dynamic-disable verification; additions:
# counts of disabled-step results (result.spec_disabled) per decode batch-size bucket, and the
# scheduler's token-pool counters whenever it goes idle (Scheduler.on_idle): available_size,
# evictable and protected sizes, the pool's total, and SGLang's own leak check verdict.
#
# sglang-gpu-probe: runtime hooks for SGLang's scheduler, loaded in EVERY python
# process that has this folder on PYTHONPATH (SGLang spawns its scheduler with
# multiprocessing "spawn", which inherits PYTHONPATH, so the hook reaches it).
#
# Active only when PROBE_HOOK=1 (everything below) or PROBE_HOOK=agree (only the PROBE_AGREE
# weights, for runs under spectrace's shims). With PROBE_HOOK=1:
#  * after `sglang.srt.managers.scheduler` is imported, Scheduler.run_batch is
#    wrapped: it counts calls where batch.is_spec_v2 is true (0.5.17 has no such
#    property: there, a non-NONE spec_algorithm driven by a *V2 worker), whether the result
#    carried next_draft_input, and (for the first PROBE_CHECK_LIMIT spec-v2 calls,
#    with a device sync) whether batch.seq_lens equals the new_seq_lens that the
#    worker produced (next_draft_input.new_seq_lens where that field exists, as in
#    older SGLang; else batch_result.new_seq_lens, as in 0.5.13+);
#  * the EAGLE v2 worker's __init__ is wrapped to record which class ran;
#  * with PROBE_AGREE=1, ModelRunner.load_model is followed by bench/gpu/agree.py's
#    agree_weights (dummy weights under which the EAGLE-3 draft is always right);
#  * imports that no finder could satisfy are recorded (optional deps included);
#  * a daemon thread writes the counters every 0.5 s to
#    $PROBE_STATS_DIR/sched-<pid>.json.
# PROBE_GC_MS=N (independent of PROBE_HOOK): a stderr line per garbage collection of N ms or more,
# in every process.
# Finally any sitecustomize that this file shadows is executed too.
import os
import sys


def _chain_original_sitecustomize():
    # only entries after this folder (one before it, e.g. the spectrace shims' boot folder,
    # chains this file itself: chaining back would recurse)
    here = os.path.dirname(os.path.abspath(__file__))
    entries = [os.path.abspath(e) if e else "" for e in sys.path]
    for p in sys.path[entries.index(here) + 1 if here in entries else 0:]:
        try:
            if not p or os.path.abspath(p) == here:
                continue
            f = os.path.join(p, "sitecustomize.py")
            if os.path.isfile(f):
                g = {"__name__": "sitecustomize", "__file__": f}
                exec(compile(open(f).read(), f, "exec"), g)
                return
        except Exception as e:  # never break interpreter start-up
            print(f"[probe] chained sitecustomize {p} failed: {e!r}", file=sys.stderr)
            return


def _install_probe(agree_only=False):
    import collections
    import importlib.abc
    import importlib.machinery
    import json
    import threading
    import time

    stats_dir = os.environ.get("PROBE_STATS_DIR", "/tmp")
    check_limit = int(os.environ.get("PROBE_CHECK_LIMIT", "400"))
    ST = collections.Counter()
    INFO = {"pid": os.getpid(), "model_worker_classes": [], "spec_workers": [],
            "first_errors": [], "missing_imports": []}
    missing = set()
    lock = threading.Lock()
    started = []

    def dump():
        with lock:
            d = dict(INFO)
            d["counts"] = dict(ST)
            d["missing_imports"] = sorted(missing)
        path = os.path.join(stats_dir, f"sched-{os.getpid()}.json")
        tmp = path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(d, fh, indent=1, sort_keys=True)
        os.replace(tmp, path)

    def start_dumper():
        if started:
            return
        started.append(1)

        def loop():
            while True:
                time.sleep(0.5)
                try:
                    dump()
                except Exception:
                    pass

        threading.Thread(target=loop, name="probe-dump", daemon=True).start()

    def note_error(tag, e):
        ST["wrapper_error:" + tag] += 1
        if len(INFO["first_errors"]) < 5:
            INFO["first_errors"].append(f"{tag}: {e!r}")

    def patch_scheduler(mod):
        Scheduler = getattr(mod, "Scheduler", None)
        if Scheduler is None or getattr(Scheduler.run_batch, "_probe", False):
            return
        orig = Scheduler.run_batch

        def run_batch(self, batch, *args, **kwargs):
            start_dumper()
            res = orig(self, batch, *args, **kwargs)
            try:
                ST["run_batch_calls"] += 1
                if hasattr(batch, "is_spec_v2"):  # <= 0.5.16: ScheduleBatch.is_spec_v2
                    spec_v2, how = bool(batch.is_spec_v2), "batch.is_spec_v2"
                else:  # 0.5.17: every speculative algorithm but NGRAM runs a *V2 worker
                    sa = getattr(batch, "spec_algorithm", None)
                    spec_v2 = (sa is not None and not sa.is_none()
                               and type(getattr(self, "model_worker", None)).__name__.endswith("V2"))
                    how = "spec_algorithm+V2 worker"
                INFO["spec_v2_test"] = how
                if not spec_v2:
                    ST["non_spec_v2_calls"] += 1
                    return res
                ST["spec_v2_calls"] += 1
                fm = getattr(batch, "forward_mode", None)
                ST["spec_v2_mode:" + str(getattr(fm, "name", fm))] += 1
                ST["spec_v2_enable_overlap:" + str(getattr(self, "enable_overlap", None))] += 1
                mw = type(getattr(self, "model_worker", None)).__name__
                if mw not in INFO["model_worker_classes"]:
                    INFO["model_worker_classes"].append(mw)
                if str(getattr(fm, "name", fm)) == "DECODE":
                    # steps the (adaptive) worker used; 0.5.14+ tiers include steps=0
                    steps = getattr(getattr(self, "model_worker", None), "speculative_num_steps", None)
                    bs = len(getattr(batch, "reqs", ()) or ())
                    bucket = next((b for b in (1, 8, 32, 64) if bs <= b), "more")
                    ST[f"decode_steps:{steps}"] += 1
                    ST[f"decode_bs<={bucket}:steps:{steps}"] += 1
                if str(getattr(fm, "name", fm)) == "DECODE":
                    bs = len(getattr(batch, "reqs", ()) or ())
                    bucket = next((b for b in (1, 4, 16, 32, 64, 128) if bs <= b), "more")
                    tag = "off" if getattr(res, "spec_disabled", False) else "on"
                    ST[f"dd_decode_{tag}"] += 1
                    ST[f"dd_decode_bs<={bucket}:{tag}"] += 1
                ndi = getattr(res, "next_draft_input", None)
                ST["next_draft_input_nonnull" if ndi is not None else "next_draft_input_none"] += 1
                if ST["seq_lens_checked"] < check_limit:
                    ST["seq_lens_checked"] += 1
                    src, new = "next_draft_input.new_seq_lens", getattr(ndi, "new_seq_lens", None)
                    if new is None:
                        src, new = "batch_result.new_seq_lens", getattr(res, "new_seq_lens", None)
                    sl = getattr(batch, "seq_lens", None)
                    if new is None or sl is None:
                        ST["seq_lens_cmp:missing(new=%s,seq_lens=%s)" % (new is not None, sl is not None)] += 1
                    else:
                        import torch

                        torch.cuda.synchronize()  # overlap: tensors live on the forward stream
                        if new is sl:
                            ST[f"seq_lens_is_same_tensor_as:{src}"] += 1
                        eq = tuple(sl.shape) == tuple(new.shape) and bool(torch.equal(sl, new.to(sl.device, sl.dtype)))
                        ST[f"seq_lens_eq:{src}:{eq}"] += 1
                        if not eq and ST["seq_lens_ne_examples"] < 3:
                            ST["seq_lens_ne_examples"] += 1
                            INFO.setdefault("seq_lens_ne", []).append(
                                {"mode": str(getattr(fm, "name", fm)), "seq_lens": sl[:4].tolist(), "new": new[:4].tolist()})
            except Exception as e:
                note_error("run_batch", e)
            return res

        run_batch._probe = True
        Scheduler.run_batch = run_batch

        orig_on_idle = getattr(Scheduler, "on_idle", None)
        if orig_on_idle is not None:
            def on_idle(self, *a, **k):
                try:
                    alloc = self.token_to_kv_pool_allocator
                    snap = {
                        "available": int(alloc.available_size()),
                        "evictable": int(self.tree_cache.evictable_size()),
                        "protected": int(self.tree_cache.protected_size()),
                        "total": int(getattr(self, "max_total_num_tokens", -1)),
                        "running": len(self.running_batch.reqs),
                        "waiting": len(self.waiting_queue),
                    }
                    snap["leak"] = bool(self._check_all_pools(self.get_pool_stats())[0])
                    with lock:
                        pi = INFO.setdefault("pool_idle", {})
                        pi.setdefault("first", snap)
                        pi["last"] = snap
                        pi["idle_checks"] = pi.get("idle_checks", 0) + 1
                        if snap["leak"]:
                            pi["leaks"] = pi.get("leaks", 0) + 1
                except Exception as e:
                    note_error("on_idle", e)
                return orig_on_idle(self, *a, **k)

            Scheduler.on_idle = on_idle
        print(f"[probe] pid {os.getpid()}: wrapped {mod.__name__}.Scheduler.run_batch", file=sys.stderr, flush=True)

    def patch_eagle_v2(mod):
        for cname in ("EAGLEWorkerV2", "EagleWorkerV2"):
            cls = getattr(mod, cname, None)
            if cls is None or getattr(cls.__init__, "_probe", False):
                continue
            orig_init = cls.__init__

            def __init__(self, *a, _orig=orig_init, _c=cname, **k):
                _orig(self, *a, **k)
                INFO["spec_workers"].append(_c)
                print(f"[probe] pid {os.getpid()}: {_c} constructed "
                      f"(type={type(self).__name__})", file=sys.stderr, flush=True)

            __init__._probe = True
            cls.__init__ = __init__

    def patch_model_runner(mod):
        """What follows ModelRunner.load_model: PROBE_AGREE=1, weights for which EAGLE-3 drafts are
        accepted (bench/gpu/agree.py); PROBE_AUX=1, a non-speculative server whose target computes
        EAGLE-3's aux hidden states as an EAGLE-3 server's target does (and drops them): is that
        capture what slows the patched server's plain decode graph?"""
        agree = os.environ.get("PROBE_AGREE") == "1"
        aux = os.environ.get("PROBE_AUX") == "1"
        if not (agree or aux):
            return
        if agree:
            sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            from agree import agree_weights

        runner = mod.ModelRunner
        orig_load = runner.load_model

        def load_model(self, *a, **k):
            out = orig_load(self, *a, **k)
            name = type(self.model).__name__
            setter = getattr(self.model, "set_eagle3_layers_to_capture", None)
            if aux and not getattr(self, "is_draft_worker", False) and setter is not None:
                setter()
                print(f"[probe] pid {os.getpid()}: aux capture on {name}: "
                      f"layers {getattr(self.model.model, 'layers_to_capture', None)}",
                      file=sys.stderr, flush=True)
            if agree:
                done = agree_weights(self.model)
                print(f"[probe] pid {os.getpid()}: agree weights on {name}: {done}", file=sys.stderr, flush=True)
            return out

        runner.load_model = load_model

    HOOKS = {
        "sglang.srt.managers.scheduler": patch_scheduler,
        "sglang.srt.speculative.eagle_worker_v2": patch_eagle_v2,
        "sglang.srt.model_executor.model_runner": patch_model_runner,
    }
    if agree_only:
        # under spectrace's shims: hook no module they watch (scheduler, workers), since this
        # finder, inserted after theirs, would take those imports without asking them
        HOOKS = {"sglang.srt.model_executor.model_runner": patch_model_runner}

    class _PostImport(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname not in HOOKS:
                return None
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or spec.loader is None:
                return None
            loader = spec.loader
            orig_exec = loader.exec_module

            def exec_module(module):
                orig_exec(module)
                try:
                    HOOKS[fullname](module)
                except Exception as e:
                    print(f"[probe] patching {fullname} failed: {e!r}", file=sys.stderr, flush=True)

            loader.exec_module = exec_module
            return spec

    class _Missing(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname.startswith(("_", "sglang.")):
                return None
            with lock:
                missing.add(fullname)
            return None

    sys.meta_path.insert(0, _PostImport())
    if agree_only:
        return
    sys.meta_path.append(_Missing())

    import atexit

    def _report_missing():
        if missing and os.environ.get("PROBE_PRINT_MISSING") == "1":
            print("[probe] imports not found in pid %d: %s" % (os.getpid(), " ".join(sorted(missing))),
                  file=sys.stderr, flush=True)

    atexit.register(_report_missing)


def _install_gc_log(threshold_ms):
    """PROBE_GC_MS=N: one stderr line per garbage collection longer than N ms, in every process
    of the engine (the scheduler, the tokenizer manager in the driver's process, the detokenizer),
    with the wall clock, so that a slow request boundary in the decode log can be matched to it.
    SGLang's own --gc-warning-threshold-secs covers only the tokenizer manager."""
    import gc
    import time

    started = {}

    def name():
        try:
            with open("/proc/self/comm") as fh:  # SGLang sets its processes' titles
                return fh.read().strip()
        except OSError:
            return "?"

    def on_gc(phase, info):
        if phase == "start":
            started["t"] = time.perf_counter()
            return
        ms = (time.perf_counter() - started.get("t", time.perf_counter())) * 1e3
        if ms >= threshold_ms:
            now = time.time()  # one reading for the seconds and the milliseconds
            print(f"[probe] gc pid {os.getpid()} ({name()}) gen {info.get('generation')}: {ms:.1f} ms, "
                  f"collected {info.get('collected')} at {time.strftime('%H:%M:%S', time.localtime(now))}."
                  f"{int(now * 1000) % 1000:03d}", file=sys.stderr, flush=True)

    gc.callbacks.append(on_gc)


if not getattr(sys, "_probe_hook_ran", False):  # once per interpreter, however it is chained
    sys._probe_hook_ran = True
    if os.environ.get("PROBE_GC_MS"):
        try:
            _install_gc_log(float(os.environ["PROBE_GC_MS"]))
        except Exception as _e:
            print(f"[probe] gc log not installed: {_e!r}", file=sys.stderr)
    if os.environ.get("PROBE_HOOK") in ("1", "agree"):
        try:
            _install_probe(agree_only=os.environ.get("PROBE_HOOK") == "agree")
        except Exception as _e:
            print(f"[probe] install failed: {_e!r}", file=sys.stderr)
    _chain_original_sitecustomize()
