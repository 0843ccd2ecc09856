"""One configuration's processes: its environment (shims on or off), an optional
``sglang.launch_server`` (``--server``), the worker process, and their ends. Every process runs in
a session of its own, so a timeout or failure ends exactly that configuration's process group
(the engine's scheduler children included) and the sweep goes on with the next one."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from spectrace.bench import drafts
from spectrace.bench.config import parse_ints, user_flags
from spectrace.bench.steady import steady_from_log
from spectrace.errors import SpectraceError

LOG_TAIL_LINES = 15


FIRST_POLL_S = 0.05  # a server already listening (a stand-in, a warm restart) answers at once
LONGEST_POLL_S = 2.0  # an engine loading weights takes minutes: no need to ask more often


def wait_for_server(url: str, proc, timeout: float) -> None:
    """Return once ``url``/health answers; the pause between polls doubles from FIRST_POLL_S up to
    LONGEST_POLL_S, so a quick server is seen quickly and a slow one is not flooded."""
    deadline = time.monotonic() + timeout
    pause = FIRST_POLL_S
    while True:
        if proc.poll() is not None:
            raise SpectraceError(f"the server exited with {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(url + "/health", timeout=5):
                return
        except (urllib.error.URLError, OSError):
            pass
        left = deadline - time.monotonic()
        if left <= 0:
            raise SpectraceError(f"the server at {url} was not ready within {timeout:.0f}s")
        time.sleep(min(pause, left))
        pause = min(2 * pause, LONGEST_POLL_S)


def kill_group(proc) -> None:
    """End ``proc``'s process group: SIGTERM, then SIGKILL for what is left."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def boot_dir() -> Path:
    """The start-up hook's folder; an install without it would run the regimes and the shims
    nowhere and measure dummy drafts under another name."""
    if not (drafts.BOOT_DIR / "sitecustomize.py").is_file():
        raise SpectraceError(f"this spectrace install lacks {drafts.BOOT_DIR / 'sitecustomize.py'} "
                             "(package data): neither the shims nor --drafts accepted/half can reach the engine")
    return drafts.BOOT_DIR


def engine_environment(cfg: dict, shims: str, report: Path | None, common: dict) -> dict:
    """The engine's environment. PYTHONPATH starts with spectrace's boot folder (the shims and
    the draft regime, each switched by its variable), then the configuration's own entries: the
    boot's sitecustomize chains the next one on the path."""
    from spectrace.shims import runtime

    env = runtime.child_environment(shims if shims != "off" else None, str(report) if report else None,
                                    common.get("catalog"), common.get("value_sample"), pool_stats=True)
    if shims == "off":
        env[runtime.ENV_MODE] = "off"
    regime = cfg.get("drafts", common.get("drafts")) or "dummy"
    rest = env.get("PYTHONPATH", "").split(os.pathsep)[1:]
    boot = [str(boot_dir())]
    env.pop(drafts.ENV_DRAFTS, None)
    env.pop(drafts.ENV_VOCAB, None)
    if regime != "dummy":
        env[drafts.ENV_DRAFTS] = regime
    if regime == "kinds":  # the engine splits the range the bench draws the kinds' prompts from
        env[drafts.ENV_VOCAB] = str(common.get("vocab_size") or 32000)
    extra = []
    for key, value in (cfg.get("env") or {}).items():
        if key == "PYTHONPATH":  # e.g. a patched SGLang tree or a test's hook: after the boot folders
            extra = [os.path.abspath(v) for v in str(value).split(os.pathsep) if v]
        else:
            env[key] = str(value)
    env["PYTHONPATH"] = os.pathsep.join(boot + extra + rest)
    return env


def _shims_summary(report: Path) -> dict:
    from spectrace.shims.cli import load_reports

    try:
        rep = load_reports([report])
    except SpectraceError as exc:
        return {"shim_total": {"error": str(exc)}}
    return {"shim_checks": {r.id: {"checks": r.checks, "violations": r.violations} for r in rep.rows.values()},
            "shim_total": {"checks": rep.total_checks, "violations": rep.total_violations,
                           "processes": len(rep.processes), "inactive": rep.inactive}}


def _failed(name: str, args: str, shims: str, error: str, log_path: Path, log) -> dict:
    try:
        tail = log_path.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
    except OSError:
        tail = []
    log(f"[bench] {name}: FAILED ({error}); last lines of {log_path}:\n  " + "\n  ".join(tail))
    return {"name": name, "args": args, "shims": shims, "runs": [], "error": error, "log_tail": tail}


def run_config(cfg: dict, common: dict, out_dir: Path, log) -> dict:
    """Run one configuration to its end; a failure is the result's ``error`` (with ``log``, the
    file that tells why), never an exception."""
    name = cfg["name"]
    shims = cfg.get("shims", common["shims"]) or "off"
    report = out_dir / f"shims-{name}.jsonl" if shims != "off" else None
    if report and report.exists():
        report.unlink()
    regime = cfg.get("drafts", common.get("drafts")) if common.get("drafts") else None
    try:
        env = engine_environment(cfg, shims, report, common)
    except SpectraceError as exc:
        result = _failed(name, cfg.get("args", ""), shims, str(exc), out_dir / f"log-{name}.txt", log)
        result["drafts"] = regime
        return result
    python = cfg.get("python") or common.get("python") or sys.executable
    args = " ".join(x for x in (common.get("base_args", ""), cfg.get("args", "")) if x)
    models = common.get("models") or {}
    args_filled = args.format(**models) if models else args
    spec = {"name": name, "args": args_filled, "shims": shims,
            "concurrency": parse_ints(cfg["concurrency"]) if cfg.get("concurrency") else common["concurrency"],
            "input_len": common["input_len"], "output_len": common["output_len"],
            "output_spread": common.get("output_spread", 0.0), "seq_reps": common["seq_reps"],
            "seed": common["seed"], "vocab_size": common.get("vocab_size"), "warmup": common["warmup"],
            "warmup_runs": common.get("warmup_runs", 0),
            "user_flags": user_flags(cfg.get("args", "")), "reps": int(cfg.get("reps") or common.get("reps") or 1)}
    if common.get("profile"):
        spec["profile_dir"] = str(out_dir / "profiles" / name)
    if common.get("workload"):
        spec["workload"] = common["workload"]
    t0 = time.time()
    server = None
    log_path = out_dir / f"log-{name}.txt"
    try:
        if common.get("url"):
            spec["url"] = common["url"]
        elif common.get("server"):
            port = int(cfg.get("port") or common.get("port") or 30000)
            cmd = [python, "-m", "sglang.launch_server"] + shlex.split(args_filled) + ["--port", str(port)]
            log(f"[bench] {name}: starting server: {' '.join(cmd)}")
            server_log = out_dir / f"server-{name}.log"
            with open(server_log, "w") as fh:
                server = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=fh, stderr=subprocess.STDOUT)
            spec["url"] = f"http://127.0.0.1:{port}"
            try:
                wait_for_server(spec["url"], server, common["timeout"])
            except SpectraceError as exc:
                result = _failed(name, args_filled, shims, str(exc), server_log, log)
                result.update(wall_s=round(time.time() - t0, 1), log=str(server_log))
                return result
        else:
            spec["argv"] = shlex.split(args_filled)
        result = _run_worker_process(spec, python, env, out_dir, log_path, common["timeout"], log)
    finally:
        if server is not None:
            kill_group(server)
    result["wall_s"] = round(time.time() - t0, 1)
    result["log"] = str(log_path)
    if not common.get("url"):
        result["steady"] = steady_from_log(server_log if server is not None else log_path)
    result["drafts"] = regime
    if report is not None:
        result["shims_report"] = str(report)
        if report.exists():
            result.update(_shims_summary(report))
    return result


def _run_worker_process(spec: dict, python: str, env: dict, out_dir: Path, log_path: Path,
                        timeout: float, log) -> dict:
    name = spec["name"]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(spec, fh)
        spec_path = fh.name
    result_path = out_dir / f"result-{name}.json"
    if result_path.exists():
        result_path.unlink()
    try:
        with open(log_path, "w") as logf:
            proc = subprocess.Popen([python, "-m", "spectrace.bench", "--worker", spec_path,
                                     "--result", str(result_path)],
                                    env=env, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                rc = None
            finally:
                kill_group(proc)
    finally:
        os.unlink(spec_path)
    if result_path.exists():
        return json.loads(result_path.read_text())
    error = f"timed out after {timeout:.0f}s" if rc is None else f"exit code {rc}"
    return _failed(name, spec["args"], spec["shims"], error, log_path, log)
