"""Configurations: ``--config NAME='SERVER ARGS'`` options and ``--configs FILE`` (TOML or JSON).

A file holds ``[[config]]`` tables (one engine each) and an optional ``[defaults]`` table: ``args``
(server arguments common to every configuration) and bench options by their long names with
underscores (``seq_reps = 4``), which the command line overrides. Unknown keys are errors, so a
file written for another version of the bench fails before any engine starts."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from spectrace.bench.drafts import REGIMES
from spectrace.errors import SpectraceError

SHIMS_MODES = ("off", "warn", "raise", "record")
DRAFT_REGIMES = REGIMES

# what one [[config]] table may hold
CONFIG_KEYS = {
    "name": "the configuration's name (unique)",
    "args": "SGLang server arguments; {target} and {draft} name the dummy models",
    "shims": "runtime shims for this engine: " + ", ".join(SHIMS_MODES),
    "drafts": "dummy-weight draft regime for this engine: " + ", ".join(DRAFT_REGIMES),
    "env": "environment variables for the engine (PYTHONPATH goes after spectrace's boot folder)",
    "python": "Python executable for this engine",
    "concurrency": "this configuration's concurrencies (e.g. \"1,16\")",
    "reps": "this configuration's repetitions",
    "port": "this configuration's port with --server",
}

# bench options a [defaults] table may set (the command's parameter names)
OPTION_KEYS = ("dummy_model", "drafts", "shims", "catalog", "value_sample", "concurrency", "input_len",
               "output_len", "output_spread", "seq_reps", "reps", "engines", "better_of", "mean_of", "reference",
               "seed", "vocab_size", "timeout", "warmup", "warmup_runs", "plot", "python", "profile")
DEFAULTS_KEYS = ("args",) + OPTION_KEYS


def parse_ints(value, what: str = "concurrency") -> list[int]:
    """Positive integers from "1,4,16", 4 or [1, 4]."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    try:
        if isinstance(value, str):
            values = [int(x) for x in value.split(",") if x.strip()]
        else:
            values = [int(x) for x in value]
    except (TypeError, ValueError):
        raise SpectraceError(f"{what}: expected comma-separated integers, got {value!r}")
    if not values or min(values) < 1:
        raise SpectraceError(f"{what}: expected positive integers, got {value!r}")
    return values


def parse_config_option(text: str) -> dict:
    name, sep, args = text.partition("=")
    if not sep or not name.strip():
        raise SpectraceError(f"--config wants name='server args', got {text!r}")
    return {"name": name.strip(), "args": args.strip()}


def _check_config(path: str, cfg) -> None:
    if not isinstance(cfg, dict) or not isinstance(cfg.get("name"), str) or not cfg["name"]:
        raise SpectraceError(f"{path}: expected a list of configurations with a name each ([[config]])")
    where = f"{path}: configuration {cfg['name']!r}"
    unknown = sorted(set(cfg) - set(CONFIG_KEYS))
    if unknown:
        raise SpectraceError(f"{where}: unknown keys {unknown} (known: {', '.join(CONFIG_KEYS)})")
    if not isinstance(cfg.get("args", ""), str):
        raise SpectraceError(f"{where}: args must be a string")
    if cfg.get("shims", "off") not in SHIMS_MODES:
        raise SpectraceError(f"{where}: shims must be one of {', '.join(SHIMS_MODES)}")
    if cfg.get("drafts", "dummy") not in DRAFT_REGIMES:
        raise SpectraceError(f"{where}: drafts must be one of {', '.join(DRAFT_REGIMES)}")
    if not isinstance(cfg.get("env", {}), dict):
        raise SpectraceError(f"{where}: env must be a table of variables")
    if "concurrency" in cfg:
        parse_ints(cfg["concurrency"], f"{where}: concurrency")


def read_table_file(path: str) -> dict:
    """A TOML or JSON file's top-level table."""
    p = Path(path)
    try:
        if p.suffix == ".json":
            data = json.loads(p.read_text())
        else:
            try:
                import tomllib
            except ImportError:  # python < 3.11
                import tomli as tomllib

            data = tomllib.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise SpectraceError(f"cannot read {path}: {exc}")
    if not isinstance(data, dict):
        raise SpectraceError(f"{path}: expected a table at the top")
    return data


def load_config_file(path: str) -> tuple[list[dict], dict]:
    """(configurations, defaults) of a TOML or JSON file; its [workload] table, if any, is read by
    workload.workload_from_file."""
    data = read_table_file(path)
    unknown = sorted(set(data) - {"config", "configs", "defaults", "workload"})
    if unknown:
        raise SpectraceError(f"{path}: unknown tables {unknown} (known: config, defaults, workload)")
    configs = data.get("config") or data.get("configs") or []
    if not isinstance(configs, list):
        raise SpectraceError(f"{path}: expected a list of configurations with a name each ([[config]])")
    for cfg in configs:
        _check_config(path, cfg)
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise SpectraceError(f"{path}: [defaults] must be a table")
    unknown = sorted(set(defaults) - set(DEFAULTS_KEYS))
    if unknown:
        raise SpectraceError(f"{path}: unknown [defaults] keys {unknown} (known: {', '.join(DEFAULTS_KEYS)})")
    return configs, defaults


def user_flags(args: str) -> list[str]:
    """The flags a configuration names itself (kept even where SGLang does not know them)."""
    return [t.split("=", 1)[0] for t in shlex.split(args) if t.startswith("--")]


def split_names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def check_names(option: str, listed: list[str], configs: list[dict]) -> None:
    """One line naming what ``option`` lists that no configuration is called."""
    names = [c["name"] for c in configs]
    unknown = [n for n in listed if n not in names]
    if unknown:
        raise SpectraceError(f"{option} names no configuration {unknown} (configurations: {names})")
