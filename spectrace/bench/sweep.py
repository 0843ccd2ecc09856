"""The sweep: every configuration in turn (lifecycle.run_config), bench.json and bench.md
rewritten after each, the plot at the end, and a non-zero exit when a configuration failed."""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

from spectrace.bench import lifecycle, preflight, resume as resumed
from spectrace.bench.config import check_names, split_names
from spectrace.bench.models import DUMMY_DEFAULT_ARGS, write_dummy_models
from spectrace.bench.plot import render_plot
from spectrace.bench.serving_plot import render_serving_plot
from spectrace.bench.serving_tables import render_serving
from spectrace.bench.tables import summarize
from spectrace.bench.workload import Workload, workload_from_file
from spectrace.errors import SpectraceError


def _check(configs: list[dict], reps: int, better: list[str], mean: list[str], catalog: str | None,
           plot: bool, drafts: str = "dummy", dummy_model: str | None = None, url: str | None = None,
           engines: int = 1) -> None:
    if not configs:
        raise SpectraceError("no configuration: give --config name='server args' or --configs FILE")
    names = [c["name"] for c in configs]
    if len(set(names)) != len(names):
        raise SpectraceError(f"configuration names must be unique: {names}")
    if reps < 1:
        raise SpectraceError(f"--reps must be at least 1, got {reps}")
    if engines < 1:
        raise SpectraceError(f"--engines must be at least 1, got {engines}")
    edited = sorted({c.get("drafts", drafts) for c in configs} - {"dummy"})
    if edited and (not dummy_model or url):
        # the regimes are edits of the dummy weights in an engine the bench starts
        raise SpectraceError(f"--drafts {edited[0]} needs --dummy-model and an engine the bench starts "
                             "(no --url)")
    for option, listed in (("--better-of", better), ("--mean-of", mean)):
        check_names(option, listed, configs)
    if catalog:
        from spectrace.shims import runtime

        try:
            runtime.load_runtime_catalog(catalog)
        except Exception as exc:
            raise SpectraceError(f"cannot read the contract catalog: {exc}")
    if plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise SpectraceError("the plot needs matplotlib: pip install 'spectrace[bench]', or pass --no-plot")


def _check_workload(path: str, configs: list[dict], drafts: str, dummy_model: str | None,
                    once: dict[str, bool]) -> tuple[Workload, dict]:
    """The workload and its raw table (what the engines' workers rebuild the schedule from);
    ``once``: the concurrency sweep's options that a workload, run once per engine, does not take."""
    from spectrace.bench.config import read_table_file

    workload = workload_from_file(path)
    given = [option for option, set_ in once.items() if set_]
    if given:
        raise SpectraceError(f"--workload runs its schedule once per engine: {', '.join(given)} belong to the "
                             "concurrency sweep")
    other = [c["name"] for c in configs if c.get("drafts", drafts) != "kinds"]
    if dummy_model and other:
        # every engine must give each kind its acceptance, and the same greedy outputs
        raise SpectraceError(f"--workload with --dummy-model needs --drafts kinds in every configuration "
                             f"(not in {', '.join(other)})")
    return workload, read_table_file(path)["workload"]


def _without_records(summary: dict) -> dict:
    """bench.json of a serving run points to each configuration's result-NAME.json for its request
    records and metric samples (thousands of requests, every chunk's time) instead of copying them."""
    results = []
    for r in summary["results"]:
        if r.get("serving"):
            kept = {k: v for k, v in r["serving"].items() if k not in ("requests", "samples")}
            r = dict(r, serving=dict(kept, requests_in=f"result-{r['name']}.json"))
        results.append(r)
    return dict(summary, results=results)


def merge_engine(merged: dict | None, result: dict, engine: int, reps: int) -> dict:
    """One configuration's result over its engines: engine e's repetition r becomes repetition
    e * reps + r, so the tables take medians over every engine and pair the repetitions of two
    configurations engine by engine; shim counts add up; steady decode intervals pool; each
    engine's log and start stay listed."""
    for run in result.get("runs", []):
        run["engine"] = engine
        run["rep"] = engine * reps + run.get("rep", 0)
    for prof in result.get("profiles", []):
        prof["engine"] = engine
    own = {k: result.get(k) for k in ("log", "engine_start_s", "wall_s", "error", "shim_total") if k in result}
    if merged is None:
        return dict(result, engines=[own], steady={bs: list(v) for bs, v in (result.get("steady") or {}).items()})
    for bs, values in (result.get("steady") or {}).items():
        merged.setdefault("steady", {}).setdefault(bs, []).extend(values)
    merged["runs"] = merged.get("runs", []) + result.get("runs", [])
    merged["profiles"] = merged.get("profiles", []) + result.get("profiles", [])
    merged["engines"].append(own)
    if result.get("error") and not merged.get("error"):
        merged["error"], merged["log"] = f"engine {engine + 1}: {result['error']}", result.get("log")
    starts = [e.get("engine_start_s") for e in merged["engines"] if e.get("engine_start_s") is not None]
    merged["engine_start_s"] = " / ".join(str(s) for s in starts) if starts else None
    a, b = merged.get("shim_total") or {}, result.get("shim_total") or {}
    if "checks" in a or "checks" in b:
        added = {k: a.get(k, 0) + b.get(k, 0) for k in ("checks", "violations", "processes")}
        merged["shim_total"] = dict(a, **added)
    for cid, counts in (result.get("shim_checks") or {}).items():
        mine = merged.setdefault("shim_checks", {}).setdefault(cid, {"checks": 0, "violations": 0})
        mine["checks"] += counts["checks"]
        mine["violations"] += counts["violations"]
    return merged


def failure_message(failed: list[dict], total: int) -> str:
    """One line: which configurations failed, why, and the log that tells more."""
    parts = [f"{r['name']} ({r['error']}; log {r.get('log', '-')})" for r in failed]
    return f"{len(failed)} of {total} configurations failed: " + "; ".join(parts)


def bench(configs: list[dict], *, out_dir: str, concurrency: list[int], input_len: int = 128,
          output_len: int = 128, output_spread: float = 0.0, seq_reps: int = 3, shims: str = "off",
          catalog: str | None = None, value_sample: int | None = None, dummy_model: str | None = None,
          base_args: str = "",
          url: str | None = None, server: bool = False, port: int | None = None, timeout: float = 900,
          warmup: bool = True, warmup_runs: int = 0, plot: bool = True, reference: str | None = None,
          seed: int = 1234,
          vocab_size: int | None = None, python: str | None = None, reps: int = 1,
          better_of: str | None = None, mean_of: str | None = None, drafts: str = "dummy",
          engines: int = 1, resume: bool = False, profile: bool = False, workload: str | None = None,
          log=print) -> dict:
    """Run every configuration (``engines`` engines each, in rounds over the configurations, so
    that drift over the sweep spreads over all of them; with ``resume``, those an earlier sweep into
    ``out_dir`` finished with the same settings are kept); returns bench.json's content. Raises
    SpectraceError (exit 1) after writing the outputs when a configuration failed."""
    better, mean = split_names(better_of), split_names(mean_of)
    _check(configs, reps, better, mean, catalog, plot, drafts, dummy_model, url, engines)
    once = {"--reps": reps > 1, "--engines": engines > 1, "--warmup-runs": warmup_runs > 0, "--profile": profile}
    served, served_table = _check_workload(workload, configs, drafts, dummy_model, once) if workload else (None, None)
    server = server or bool(workload and not url)  # a workload streams over HTTP: a server per configuration
    if not url and not resume:  # one line, not an engine's traceback, where SGLang is missing; nothing written
        preflight.check_engines_can_start(configs, python)
    names = [c["name"] for c in configs]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # a SIGTERM (e.g. from `timeout`) unwinds through run_config, which ends the engine's group
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    models = {}
    if dummy_model:
        models = write_dummy_models(dummy_model, out / "models")
        vocab_size = vocab_size or models["vocab_size"]
        base_args = " ".join(x for x in (DUMMY_DEFAULT_ARGS, base_args) if x)
    common = dict(concurrency=concurrency, input_len=input_len, output_len=output_len,
                  output_spread=output_spread, seq_reps=seq_reps,
                  shims=shims, catalog=catalog, value_sample=value_sample, base_args=base_args, url=url,
                  server=server, port=port, timeout=timeout, warmup=warmup, warmup_runs=warmup_runs, seed=seed,
                  vocab_size=vocab_size or 32000, models=models, python=python, reps=reps,
                  drafts=drafts if dummy_model else None, engines=engines, profile=profile)
    if served_table is not None:
        common["workload"] = served_table
    merged: dict[str, dict] = {}
    order = [(e, cfg) for e in range(engines) for cfg in configs]
    # each engine's files (log, result, shims report) under a name of its own
    engine_cfgs = [dict(cfg, name=f"{cfg['name']}.{e + 1}") if engines > 1 else cfg for e, cfg in order]
    sweeps = [resumed.fingerprint(cfg, common) for _, cfg in order]
    # every kept engine checked before any runs: a refused --resume leaves the folder as it was
    kept = [resumed.kept(out, c["name"], sweep) if resume else None for c, sweep in zip(engine_cfgs, sweeps)]
    if not url and resume:  # the engines that will run, now that the kept ones are known
        preflight.check_engines_can_start([cfg for (_, cfg), k in zip(order, kept) if k is None], python)
    for i, (e, cfg) in enumerate(order):
        regime = f", drafts {cfg.get('drafts', drafts)}" if dummy_model else ""
        which = f" (engine {e + 1} of {engines})" if engines > 1 else ""
        r = kept[i]
        if r is not None:
            log(f"[bench] configuration {cfg['name']}{which}: kept from the earlier sweep in {out}")
        else:
            log(f"[bench] configuration {cfg['name']}{which}: {cfg.get('args', '')} "
                f"(shims {cfg.get('shims', shims)}{regime})")
            r = lifecycle.run_config(engine_cfgs[i], common, out, log)
            if not r.get("error"):
                resumed.save(out, engine_cfgs[i]["name"], r, sweeps[i])
        r["name"] = cfg["name"]
        for run in r.get("runs", []):
            log(f"[bench]   C={run['concurrency']}: {run.get('tok_per_s')} tok/s, accept {run.get('accept_len')}")
        if r.get("serving"):
            sv = r["serving"]
            failed = sum(1 for x in sv["requests"] if x.get("error"))
            log(f"[bench]   workload: {len(sv['requests'])} requests ({failed} failed) in {sv['wall_s']} s")
        if r.get("shim_total"):
            log(f"[bench]   shims: {r['shim_total']}")
        if engines > 1:
            r = merge_engine(merged.get(cfg["name"]), r, e, int(cfg.get("reps") or reps))
        merged[cfg["name"]] = r
        results = [merged[n] for n in names if n in merged]
        # after every engine: a bench stopped by a time budget keeps the finished ones' table
        pending = [c["name"] + (f" (engine {f + 1})" if engines > 1 else "") for f, c in order[i + 1:]]
        summary, md = summarize(results, common, reference, better, mean, pending=pending,
                                markdown=render_serving(results, served, reference, better) if served else None)
        (out / "bench.json").write_text(json.dumps(_without_records(summary), indent=1, default=str))
        (out / "bench.md").write_text(md)
    png = out / "bench.png"
    if png.exists():
        png.unlink()  # an earlier sweep's plot must not pass for this one's
    if plot:
        drawn = render_serving_plot(results, served, png) if served else \
            render_plot(results, png, f"{input_len} in / {output_len} out, greedy")
        if not drawn:
            log("[bench] no plot: no configuration has a timed run")
    log(md)
    failed = [r for r in results if r.get("error")]
    if failed:
        raise SpectraceError(failure_message(failed, len(results)), exit_code=1)
    return summary
