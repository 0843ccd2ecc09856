"""Checks made before any engine starts: each configuration's Python must find SGLang, so that a
machine without it gets one line instead of an engine's traceback per configuration."""

from __future__ import annotations

import os
import subprocess
import sys

# finds the package without importing it: a check of the path, not of SGLang's own imports
FIND_SGLANG = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('sglang') else 3)"


def _pythonpath(cfg: dict) -> str:
    own = [os.path.abspath(v) for v in str((cfg.get("env") or {}).get("PYTHONPATH", "")).split(os.pathsep) if v]
    rest = [v for v in os.environ.get("PYTHONPATH", "").split(os.pathsep) if v]
    return os.pathsep.join(own + rest)


def sglang_missing(python: str, pythonpath: str) -> str | None:
    """Why ``python`` with ``pythonpath`` cannot import sglang; None where it can."""
    env = dict(os.environ, PYTHONPATH=pythonpath)
    try:
        proc = subprocess.run([python, "-c", FIND_SGLANG], env=env, capture_output=True, timeout=120)
    except OSError as exc:
        return f"cannot run {python}: {exc.strerror or exc}"
    except subprocess.TimeoutExpired:
        return f"{python} did not answer within 120 s"
    if proc.returncode == 3:
        return f"sglang is not importable by {python}"
    if proc.returncode:
        return f"{python} failed (exit code {proc.returncode})"
    return None


def check_engines_can_start(configs: list[dict], python: str | None) -> None:
    """Raise SpectraceError naming the first configuration whose Python lacks SGLang (each distinct
    Python and PYTHONPATH is asked once)."""
    from spectrace.errors import SpectraceError

    asked: dict[tuple[str, str], str | None] = {}
    for cfg in configs:
        key = (cfg.get("python") or python or sys.executable, _pythonpath(cfg))
        if key not in asked:
            asked[key] = sglang_missing(*key)
        if asked[key]:
            raise SpectraceError(f"configuration {cfg['name']}: {asked[key]}: install SGLang there, give "
                                 "--python, or drive a running server with --url")
