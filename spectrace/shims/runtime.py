"""Runtime shims: check the scheduler<->worker contracts inside a live SGLang process.

The contract catalog (``contracts/catalog/*.toml``) names the reads the scheduler makes on a
worker's ``GenerationBatchResult`` without a None check. Static analysis says where they are; the
shims check, step by step, that the worker really honoured them, and name both code sites (the
scheduler's read and the worker's return) at the first step where one did not (docs/shims.md).

This module is the entry point: ``install()`` / ``uninstall()`` in this process, and the
environment (``child_environment()``, read back by ``install_from_environment()`` from
``boot/sitecustomize.py``) that installs the shims in every Python process started afterwards,
SGLang's spawned scheduler included. The work is done by its neighbours:

* ``post_import``: run a callback right after a module's body executed;
* ``plans``: the catalog (``load_runtime_catalog``) as ``ContractPlan`` records;
* ``sites``: code sites from the imported source (``ast``);
* ``checks``: ``Shims``, the wrappers and the checks;
* ``pool_stats``: KV-pool counters in ``get_server_info()`` (``SPECTRACE_POOL_STATS``);
* ``report_writer`` and ``return_tracker``: the JSON-lines report, the return that ran;
* ``violation``: ``MODES``, ``ContractViolation`` and its message.

The whole package imports only the standard library (and ``spectrace.contracts.catalog``,
``spectrace.sides``, ``spectrace.errors``, which do too), so that it runs in an SGLang environment
where spectrace's analysis dependencies (networkx, ...) are not installed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from spectrace.shims.checks import Shims
from spectrace.shims.plans import DEFAULT_CATALOG, load_runtime_catalog
from spectrace.shims.post_import import forget_hooks, when_imported
from spectrace.shims.violation import MODES, ContractViolation

__all__ = ["install", "uninstall", "install_from_environment", "child_environment", "active_shims",
           "ContractViolation", "MODES", "load_runtime_catalog", "when_imported", "BOOT_DIR",
           "DEFAULT_CATALOG"]

ENV_MODE = "SPECTRACE_SHIMS"              # warn | raise | record; unset/"0"/"off": no checks
ENV_REPORT = "SPECTRACE_SHIMS_REPORT"     # JSON-lines report path ("{pid}" expands)
ENV_CATALOG = "SPECTRACE_SHIMS_CATALOG"   # catalog dirs or files, os.pathsep-joined (default: packaged)
ENV_SAMPLE = "SPECTRACE_SHIMS_VALUE_SAMPLE"  # value check every N-th eligible step; 0: off
ENV_POOL = "SPECTRACE_POOL_STATS"         # "1": add KV-pool counters to get_server_info()
DEFAULT_VALUE_SAMPLE = 16

BOOT_DIR = Path(__file__).resolve().parent.parent / "boot"  # spectrace/boot: shared with the bench
# boot/sitecustomize.py spells these out itself: it must decide before importing anything
OFF_VALUES = ("", "0", "off", "false", "no")

_ACTIVE: Shims | None = None


def active_shims() -> Shims | None:
    return _ACTIVE


def child_environment(mode: str | None, report: str | None = None, catalog: str | None = None,
                      value_sample: int | None = None, pool_stats: bool = False,
                      env: dict | None = None) -> dict:
    """The environment that makes every Python child (spawned schedulers included) install the
    shims at start-up: the activation variables plus ``boot/`` at the front of PYTHONPATH."""
    env = dict(os.environ if env is None else env)
    if mode:
        env[ENV_MODE] = mode
    if report:
        env[ENV_REPORT] = os.path.abspath(report)
    if catalog:
        env[ENV_CATALOG] = os.pathsep.join(os.path.abspath(c) for c in str(catalog).split(os.pathsep) if c)
    if value_sample is not None:
        env[ENV_SAMPLE] = str(value_sample)
    if pool_stats:
        env[ENV_POOL] = "1"
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(BOOT_DIR)]
    env["PYTHONPATH"] = os.pathsep.join([str(BOOT_DIR)] + parts)
    return env


def install(mode: str = "warn", report: str | None = None, catalog: str | None = None,
            value_sample: int = DEFAULT_VALUE_SAMPLE, pool_stats: bool = False, propagate: bool = True,
            checks: bool = True) -> Shims:
    """Install the shims in this process and, with ``propagate``, in every Python process it
    starts afterwards (SGLang's scheduler runs in a spawned child: call this before
    ``sglang.Engine(...)``). Returns the process's ``Shims`` (idempotent)."""
    global _ACTIVE
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if propagate:
        os.environ.update(child_environment(mode if checks else None, report, catalog, value_sample,
                                            pool_stats))
        if not checks:
            os.environ[ENV_MODE] = "off"
    if _ACTIVE is not None:
        return _ACTIVE
    _ACTIVE = Shims(mode, report, catalog, value_sample=value_sample, pool_stats=pool_stats,
                    checks=checks)
    _ACTIVE.hook()
    return _ACTIVE


def uninstall() -> None:
    """Close the report and stop checking (wrapped methods stay wrapped but pass through)."""
    global _ACTIVE
    if _ACTIVE is not None:
        _ACTIVE.stop()
        _ACTIVE = None
    # without the callbacks and the finder, a later install() starts clean instead of stacking a
    # second set of wrappers on modules imported after this point
    forget_hooks()
    for var in (ENV_MODE, ENV_REPORT, ENV_CATALOG, ENV_SAMPLE, ENV_POOL):
        os.environ.pop(var, None)


def install_from_environment() -> Shims | None:
    """Called by boot/sitecustomize.py: install when SPECTRACE_SHIMS or SPECTRACE_POOL_STATS
    asks for it; nothing at all otherwise."""
    mode = os.environ.get(ENV_MODE, "").strip().lower()
    pool = os.environ.get(ENV_POOL, "").strip().lower() not in OFF_VALUES
    checks = mode not in OFF_VALUES
    if not checks and not pool:
        return None
    if checks and mode not in MODES:
        print(f"[spectrace] {ENV_MODE}={mode!r} is not one of {MODES}: shims not installed", file=sys.stderr)
        return None
    sample = os.environ.get(ENV_SAMPLE, "").strip()
    shims = install(mode if checks else "record", report=os.environ.get(ENV_REPORT) or None,
                    catalog=os.environ.get(ENV_CATALOG) or None,
                    value_sample=int(sample) if sample.isdigit() else DEFAULT_VALUE_SAMPLE,
                    pool_stats=pool, propagate=False, checks=checks)
    if sample and not sample.isdigit():
        shims.failure(f"reading {ENV_SAMPLE}", ValueError(
            f"{sample!r} is not a number of steps; the value check runs every {DEFAULT_VALUE_SAMPLE}th"))
    return shims
