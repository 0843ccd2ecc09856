"""The worker process: one configuration's engine (or server), every concurrency in turn.

The bench starts it as ``python -m spectrace.bench --worker SPEC.json --result RESULT.json`` with
the shims' environment, so that the environment reaches exactly this engine's scheduler and a
crash or hang ends only this configuration."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from spectrace.bench.prompts import output_lengths, prompts_for
from spectrace.errors import describe

# more than the dynamic-disable series' 16-position catch-up window, so its flush runs once too
WARM_AFTER_FLUSH_TOKENS = 32


def _count(outs: list[dict]) -> tuple[int, float | None]:
    """(output ids, accept length) over a run's outputs. The accept length is tokens per verify step,
    bonus included: from the correct drafts where SGLang reports them, since completion tokens over
    verify steps also counts the tokens of steps that did not speculate (dynamic disable)."""
    meta = [o.get("meta_info") or {} for o in outs]
    toks = sum(len(o.get("output_ids") or []) for o in outs)
    ver = sum(m.get("spec_verify_ct", 0) or 0 for m in meta)
    if not ver:
        return toks, None
    if all("spec_num_correct_drafts" in m for m in meta if m.get("spec_verify_ct")):
        accepted = ver + sum(m.get("spec_num_correct_drafts", 0) for m in meta)
    else:
        accepted = sum(m.get("completion_tokens", 0) or 0 for m in meta)
    return toks, round(accepted / ver, 3)


SPEC_META = ("completion_tokens", "spec_verify_ct", "spec_num_correct_drafts", "spec_accept_length")


def _spec_meta(outs: list[dict]) -> list[dict] | None:
    """Each request's speculative counters as SGLang reported them, for checks of its own accept length
    (None where no request ran a verify step)."""
    meta = [o.get("meta_info") or {} for o in outs]
    if not any(m.get("spec_verify_ct") for m in meta):
        return None
    return [{k: m[k] for k in SPEC_META if k in m} for m in meta]


def _per_request(sampling: dict, count: int, spec: dict) -> list[dict]:
    lengths = output_lengths(count, spec["output_len"], spec.get("output_spread") or 0.0)
    return [dict(sampling, max_new_tokens=n) for n in lengths]


def _timed(driver, c: int, spec: dict, sampling: dict, vocab: int, seed: int) -> tuple[list[dict], float]:
    """C=1: ``seq_reps`` requests one after another, the sum of their times; C>1: C at once."""
    if c == 1:
        outs, wall = [], 0.0
        prompts = prompts_for(1, spec["seq_reps"], spec["input_len"], vocab, seed)
        for p, params in zip(prompts, _per_request(sampling, len(prompts), spec)):
            t = time.perf_counter()
            outs += driver.generate([p], params)
            wall += time.perf_counter() - t
        return outs, wall
    prompts = prompts_for(c, c, spec["input_len"], vocab, seed)
    params = _per_request(sampling, c, spec) if spec.get("output_spread") else sampling
    t = time.perf_counter()
    outs = driver.generate(prompts, params)
    return outs, time.perf_counter() - t


def _profiled(driver, c: int, spec: dict, sampling: dict, vocab: int) -> dict:
    """One untimed run of C's workload under SGLang's profiler; a profile that cannot be taken is
    one line in the log and an ``error``, never a lost sweep."""
    from spectrace.bench.profile import profile_run

    def run():  # prompts of its own, apart from the timed and warm-up runs'
        return _timed(driver, c, spec, sampling, vocab, spec["seed"] + 32452843)[0]

    try:
        ranks = profile_run(driver, Path(spec["profile_dir"]) / f"C{c}", run, lambda outs: _count(outs)[0])
    except Exception as exc:  # SGLang's profiler is another program's API: any failure is reported, not raised
        message = describe(exc)
        print(f"[bench] {spec['name']} C={c}: no profile: {message}", flush=True)
        return {"concurrency": c, "error": message}
    brief = [{k: v for k, v in rank.items() if k != "kernels"} for rank in ranks]  # bench.json keeps the kernels
    print(f"[bench] {spec['name']} C={c}: profile {json.dumps(brief)}", flush=True)
    return {"concurrency": c, "ranks": ranks}


def _serving(driver, spec: dict, sampling: dict, vocab: int) -> dict:
    """The workload's schedule against the server, from an emptied cache, with the pool counters
    around it (the ``--workload`` run, in place of the concurrency list)."""
    import os

    from spectrace.bench.drafts import ENV_SEED
    from spectrace.bench.kinds import split_vocabulary
    from spectrace.bench.serving import ServingRun
    from spectrace.bench.workload import build_schedule, workload_from_dict

    workload = workload_from_dict(spec["workload"], "workload")
    # the engine's weight edit splits the same range with the same seed (this process has its environment)
    split = split_vocabulary(vocab, int(os.environ.get(ENV_SEED) or 0))
    schedule = build_schedule(workload, split)
    pool_before = driver.pool(flush=True)
    warm = prompts_for(8, 8, workload.input_len, vocab, spec["seed"] + 104729)  # the emptied allocator, as above
    driver.generate(warm, dict(sampling, max_new_tokens=WARM_AFTER_FLUSH_TOKENS))
    run = ServingRun(driver.url, schedule, workload.phase_at, timeout=spec.get("request_timeout", 3600))
    wall = run.run(sampling)
    out = dict(run.result(), wall_s=round(wall, 3), conversations=len(schedule), pool_before=pool_before,
               pool_after_run=driver.pool(flush=False))
    if (gauges := driver.gauges()):
        out["gauges"] = gauges
    out["pool_after"] = driver.pool(flush=True)
    failed = sum(1 for r in run.records if r.error)
    print(f"[bench] {spec['name']}: workload of {len(schedule)} conversations, {len(run.records)} requests "
          f"({failed} failed) in {wall:.1f}s", flush=True)
    return out


def run_worker(spec: dict) -> dict:
    """Run one configuration; returns its result dict."""
    from spectrace.bench.drivers import EngineDriver, HttpDriver

    sampling = {"max_new_tokens": spec["output_len"], "ignore_eos": True, "temperature": 0.0}
    vocab = spec.get("vocab_size") or 32000
    reps = spec.get("reps", 1)
    if spec.get("url"):
        driver = HttpDriver(spec["url"])
    else:
        driver = EngineDriver(spec["argv"], set(spec.get("user_flags", [])))
    res = {"name": spec["name"], "sglang": driver.version, "args": spec.get("args", ""),
           "shims": spec.get("shims") or "off", "engine_start_s": driver.start_s,
           "dropped_default_flags": driver.dropped, "runs": []}
    print(f"[bench] {spec['name']}: SGLang {driver.version} up in {driver.start_s}s", flush=True)
    if driver.dropped:
        print(f"[bench] {spec['name']}: SGLang {driver.version} does not know {', '.join(driver.dropped)}: "
              "left out", flush=True)
    try:
        if spec.get("workload") and not spec.get("url"):
            raise RuntimeError("a workload streams its requests over HTTP: it needs a server (--server or --url)")
        if spec.get("warmup", True):
            driver.generate(prompts_for(0, 2, spec["input_len"], vocab, 7), dict(sampling, max_new_tokens=16))
            driver.generate(prompts_for(0, max(spec["concurrency"]), spec["input_len"], vocab, 8),
                            dict(sampling, max_new_tokens=16))
        if spec.get("workload"):
            res["serving"] = _serving(driver, spec, sampling, vocab)
            return res
        for run in range(spec.get("warmup_runs", 0)):
            for c in spec["concurrency"]:  # prompts seeded apart from every timed run's
                _timed(driver, c, spec, sampling, vocab, spec["seed"] + 15485863 + run)
        # the concurrency list in turn, rep after rep: drift spreads over every level
        for rep in range(reps):
            for c in spec["concurrency"]:
                pool_before = driver.pool(flush=True)
                # SGLang's flush_cache also empties the CUDA caching allocator: without this untimed
                # request the run's first steps would allocate afresh, a cost no serving engine pays
                warm = prompts_for(c, c, spec["input_len"], vocab, spec["seed"] + 104729 + rep)
                driver.generate(warm, dict(sampling, max_new_tokens=WARM_AFTER_FLUSH_TOKENS))
                # new prompts per repetition (a repeated prompt would hit the prefix cache); rep 0
                # keeps the prompts of a single-repetition run
                outs, wall = _timed(driver, c, spec, sampling, vocab, spec["seed"] + 7919 * rep)
                pool_after_run = driver.pool(flush=False)
                gauges = driver.gauges()
                pool_after = driver.pool(flush=True)
                toks, accept_len = _count(outs)
                run = {"concurrency": c, "requests": len(outs), "output_tokens": toks, "wall_s": round(wall, 3),
                       "tok_per_s": round(toks / wall, 1) if wall else None,
                       "accept_len": accept_len,
                       "pool_before": pool_before, "pool_after_run": pool_after_run, "pool_after": pool_after}
                if gauges:
                    run["gauges"] = gauges
                if reps > 1:
                    run["rep"] = rep
                shown = dict(run)
                run["output_ids"] = [o.get("output_ids") for o in outs]  # for output equality
                if (spec_meta := _spec_meta(outs)) is not None:
                    run["spec_meta"] = spec_meta
                res["runs"].append(run)
                print(f"[bench] {spec['name']} C={c}: {json.dumps(shown)}", flush=True)
        if spec.get("profile_dir"):  # after the timed runs, which the profiler must not slow
            res["profiles"] = [_profiled(driver, c, spec, sampling, vocab) for c in spec["concurrency"]]
    finally:
        driver.close()
    return res


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m spectrace.bench")
    ap.add_argument("--worker", required=True, metavar="SPEC.json")
    ap.add_argument("--result", required=True, metavar="RESULT.json")
    a = ap.parse_args(argv)
    result = run_worker(json.loads(Path(a.worker).read_text()))
    Path(a.result).write_text(json.dumps(result, default=str))
    return 0
