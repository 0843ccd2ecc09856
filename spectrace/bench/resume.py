"""``--resume``: the engines that an earlier sweep into the same folder finished with this sweep's
settings, so that a sweep longer than a machine's time limit runs in parts. Each finished engine's
result-<name>.json carries what its timed runs depended on; a result without it (the sweep stopped
before the engine's bookkeeping ended) or with an error runs again. A sweep whose engines all
finished, resumed, runs none and writes its tables anew."""

from __future__ import annotations

import json
from pathlib import Path

from spectrace.bench.steady import steady_from_log
from spectrace.errors import SpectraceError

# the sweep's settings that shape an engine's timed runs (not its time limit, python or engine count)
SETTINGS = ("concurrency", "input_len", "output_len", "output_spread", "seq_reps", "shims", "catalog",
            "value_sample", "base_args", "url", "server", "warmup", "warmup_runs", "seed", "vocab_size",
            "reps", "drafts", "workload")


def fingerprint(cfg: dict, common: dict) -> dict:
    """What one engine's timed runs depend on, as JSON reads it back."""
    return json.loads(json.dumps({"config": cfg, "settings": {k: common.get(k) for k in SETTINGS}}, default=str))


def save(out: Path, engine_name: str, result: dict, sweep: dict) -> None:
    """The finished engine's whole result (its shim counts included), for a later --resume."""
    (out / f"result-{engine_name}.json").write_text(json.dumps(dict(result, sweep=sweep), default=str))


def kept(out: Path, engine_name: str, sweep: dict) -> dict | None:
    """The engine's result from an earlier sweep into ``out``; None where it did not finish there.
    Raises SpectraceError where it finished with other settings: mixing them would make the tables lie."""
    path = out / f"result-{engine_name}.json"
    try:
        result = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    earlier = result.pop("sweep", None)
    if earlier is None or result.get("error"):
        return None
    if earlier != sweep:
        raise SpectraceError(f"--resume: {path} ran with other settings ({_first_difference(earlier, sweep)}); "
                             "give another -o folder, or leave out --resume to run every engine again")
    if "steady" not in result and not sweep["settings"].get("url"):
        # a result from before the steady table: its engine's log is beside it
        result["steady"] = steady_from_log(out / f"log-{engine_name}.txt")
    return result


def _first_difference(earlier: dict, now: dict, at: str = "") -> str:
    for key in sorted(set(earlier) | set(now)):
        a, b = earlier.get(key), now.get(key)
        if a != b:
            if isinstance(a, dict) and isinstance(b, dict):
                return _first_difference(a, b, f"{at}{key}.")
            return f"{at}{key}: {json.dumps(a)} then, {json.dumps(b)} now"
    return "none"
