"""Runtime shims: check the scheduler<->worker contracts inside a live SGLang process.

The contract catalog (``contracts/catalog/*.toml``) names the reads the scheduler makes on a
worker's ``GenerationBatchResult`` without a None check. Static analysis says where they are; the
shims check, step by step, that the worker really honoured them, and name both code sites (the
scheduler's read and the worker's return) at the first step where one did not.

How it is wired (see docs/runtime.md):

* ``install()`` (or the ``boot/sitecustomize.py`` that ``spectrace run`` puts on PYTHONPATH, read
  by every Python process that inherits the environment, SGLang's spawned scheduler included)
  adds a ``sys.meta_path`` finder. When ``sglang.srt.managers.scheduler`` or a worker module is
  imported, the finder wraps ``Scheduler.run_batch`` and the workers' ``forward_batch_generation``.
* A ``producer-sets`` contract names its producer (``Class.method``, in a worker-side module such
  as a patch's ``sglang.srt.speculative.dynamic_disable``): the finder wraps that method when its
  module is imported, and its own return is checked (the named fields set, batch-sized fields
  with the batch's size, scalar fields equal to the catalog's values). A tree without the
  producer (an unpatched release) leaves the contract inactive.
* The checks read host-side metadata only (presence, identity, shapes, Python types). The one
  value-level check (``new_seq_lens == seq_lens + accept_lens``) is enqueued on the device at the
  producer's return and read back only once the step's own ``copy_done`` event has completed.
* Modes: ``warn`` (one message per contract, counts the rest), ``raise`` (``ContractViolation``
  stops the step), ``record`` (only the report). The report is JSON lines appended with
  ``O_APPEND`` (several processes and ranks share one file), flushed per event, with summaries.

This module imports only the standard library at load time, so that it can run in an SGLang
environment where spectrace's analysis dependencies (libcst, ...) are not installed; torch is
imported lazily, and only for the sampled value check.
"""

from __future__ import annotations

import ast
import atexit
import importlib.abc
import importlib.machinery
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

__all__ = ["install", "uninstall", "ContractViolation", "MODES", "load_runtime_catalog",
           "when_imported", "active_shims"]

MODES = ("warn", "raise", "record")

ENV_MODE = "SPECTRACE_SHIMS"              # warn | raise | record; unset/"0"/"off": no checks
ENV_REPORT = "SPECTRACE_SHIMS_REPORT"     # JSON-lines report path ("{pid}" expands)
ENV_CATALOG = "SPECTRACE_SHIMS_CATALOG"   # catalog dir or file (default: the packaged catalog)
ENV_SAMPLE = "SPECTRACE_SHIMS_VALUE_SAMPLE"  # value check every N-th eligible step; 0: off
ENV_POOL = "SPECTRACE_POOL_STATS"         # "1": add KV-pool counters to get_server_info()
ENV_TOGGLE = "SPECTRACE_SHIMS_TOGGLE_FILE"  # A/B measurement: a file whose words switch parts
TOGGLE_POLL_S = 0.2

HERE = Path(__file__).resolve().parent
BOOT_DIR = HERE / "boot"
from spectrace.contracts.catalog import CATALOG_DIR as DEFAULT_CATALOG  # noqa: E402

SCHEDULER_MODULE = "sglang.srt.managers.scheduler"
WORKER_MODULES = ("sglang.srt.managers.tp_worker",)
WORKER_PACKAGES = ("sglang.srt.speculative.",)
SUMMARY_INTERVAL_S = 1.0
MAX_VIOLATION_EVENTS = 20  # per contract and process; the rest are counted

_OFF_VALUES = ("", "0", "off", "false", "no")


class ContractViolation(RuntimeError):
    """A worker broke a catalog contract: raised in ``raise`` mode at the producer's return."""

    def __init__(self, contract: str, detail: str, consumer: dict | None, producer: dict | None):
        self.contract = contract
        self.detail = detail
        self.consumer = consumer or {}
        self.producer = producer or {}
        super().__init__(format_violation(contract, detail, self.consumer, self.producer))


def _site_text(site: dict) -> str:
    if not site:
        return "?"
    where = f"{site.get('file', '?')}:{site.get('line', '?')}"
    return f"{where} ({site['qualname']})" if site.get("qualname") else where


def format_violation(contract: str, detail: str, consumer: dict, producer: dict) -> str:
    text = f"contract {contract} broken: {detail}"
    if consumer:  # a producer-sets contract names no consumer statement
        text += f"; consumer {_site_text(consumer)}"
    if consumer.get("shape"):
        text += f" reads `{consumer['shape']}`"
    text += f"; producer {_site_text(producer)}"
    ret = producer.get("return_site")
    if ret:
        text += f" returned at {_site_text(ret)}"
    elif producer.get("return_sites"):
        text += " (return sites: " + ", ".join(str(r["line"]) for r in producer["return_sites"]) + ")"
    return text


# --------------------------------------------------------------------------------------------
# catalog
# --------------------------------------------------------------------------------------------

def _get(obj: Any, key: str, default: Any = None) -> Any:
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _read_toml_catalog(path: Path) -> list[dict]:
    """A tolerant reader of the catalog schema in docs/design.md (one family per file)."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - python < 3.11
        import tomli as tomllib
    files = sorted(path.glob("*.toml")) if path.is_dir() else [path]
    out = []
    for f in files:
        with open(f, "rb") as fh:
            data = tomllib.load(fh)
        for c in data.get("contract", []) or []:
            c = dict(c)
            c.setdefault("family", data.get("family"))
            c["_source"] = str(f)
            out.append(c)
    return out


def load_runtime_catalog(path: str | os.PathLike | None = None) -> list[dict]:
    """The catalog as plain dicts (design.md schema), read with spectrace's own loader when it
    imports here, else with the tolerant TOML reader above (no third-party packages needed).
    ``path`` may list several catalogs separated by ``os.pathsep``; the first entry of an id wins."""
    if path and os.pathsep in str(path):
        merged, seen = [], set()
        for part in str(path).split(os.pathsep):
            if part:
                for c in load_runtime_catalog(part):
                    if c.get("id") not in seen:
                        seen.add(c.get("id"))
                        merged.append(c)
        return merged
    p = Path(path) if path else DEFAULT_CATALOG
    if not p.exists():
        raise FileNotFoundError(f"contract catalog not found: {p}")
    try:
        from spectrace.contracts.catalog import load_catalog  # the contracts issue's loader
    except Exception:  # not installed here, or needs packages this environment lacks
        load_catalog = None
    if load_catalog is not None:
        try:
            loaded = load_catalog(p)
            keys = ("id", "field", "owner", "consumer", "shape", "attribute_path", "kind",
                    "path_condition", "versions", "rationale", "family", "runtime",
                    "producer", "fields", "fields_by_version")
            return [{k: _get(c, k) for k in keys} for c in loaded]
        except Exception:
            pass  # fall back to reading the TOML ourselves
    return _read_toml_catalog(p)


def _runtime_plan(c: dict) -> dict | None:
    """What the shim does for one catalog contract; None when it has no runtime check.

    ``[contract.runtime]`` drives it (check, at, producer, and the optional keys ``mode``:
    decode|extend|any, ``when``: a Python expression replacing the path condition, ``fields``
    for "fields-present"). Without the table, an unconditional read of a result field is
    checked for presence after the step (never at the producer's return, where fields that the
    scheduler itself assigns later, such as ``copy_done``, are legitimately unset).
    """
    rt = _get(c, "runtime") or {}
    rt = {k: _get(rt, k) for k in ("check", "at", "producer", "mode", "when", "fields", "value_check",
                                   "batch_sized", "equals", "module")
          if _get(rt, k) is not None}
    kind = _get(c, "kind") or ""
    if kind == "producer-sets" or rt.get("check") == "producer-sets":
        return _producer_sets_plan(c, rt)
    path = list(_get(c, "attribute_path") or ([_get(c, "field")] if _get(c, "field") else []))
    check = rt.get("check")
    if check is None:
        if kind == "relation" and path and path[-1] == "new_seq_lens":
            check = "seq-lens-relation"
        elif kind == "unconditional-read" and path:
            check = "not-none"
            rt.setdefault("at", "step-return")
        else:
            return None
    if check not in ("not-none", "seq-lens-relation", "fields-present"):
        return None
    consumer = _get(c, "consumer") or ""
    mode = rt.get("mode")
    if mode is None:
        low = consumer.lower()
        mode = "decode" if "decode" in low else "extend" if ("prefill" in low or "extend" in low) else "any"
    return {
        "id": _get(c, "id"),
        "check": check,
        "at": rt.get("at", "producer-return"),
        "producer": rt.get("producer", "forward_batch_generation"),
        "mode": mode,
        "condition": rt.get("when", _get(c, "path_condition")),
        "fields": list(rt.get("fields") or []),
        "attribute_path": path,
        "owner": _get(c, "owner") or "GenerationBatchResult",
        "consumer": consumer,
        "shape": _get(c, "shape"),
        "versions": list(_get(c, "versions") or []),
        "value_check": rt.get("value_check", check == "seq-lens-relation"),
    }


def _producer_sets_plan(c: dict, rt: dict) -> dict | None:
    """A named producer (``Class.method``) that must set fields on its returned result:
    checked at that method's own return (host metadata and Python scalars only)."""
    producer = _get(c, "producer") or ""
    if producer.count(".") != 1:
        return None
    return {
        "id": _get(c, "id"),
        "check": "producer-sets",
        "at": "producer-return",
        "producer": producer,
        "module": rt.get("module"),  # where to wait for it besides the worker modules
        "fields": list(_get(c, "fields") or []),
        "fields_by_version": {k: list(v) for k, v in (_get(c, "fields_by_version") or {}).items()},
        "batch_sized": list(rt.get("batch_sized") or []),  # "a.b" paths whose shape must be (bs,)
        "equals": dict(rt.get("equals") or {}),  # field -> Python scalar it must equal
        "owner": _get(c, "owner") or "GenerationBatchResult",
        "consumer": producer,
        "shape": _get(c, "shape"),
        "versions": list(_get(c, "versions") or []),
        "mode": "any",
        "condition": None,
    }


# --------------------------------------------------------------------------------------------
# code sites, computed from the imported source (never hard-coded line numbers)
# --------------------------------------------------------------------------------------------

_PARSED: dict[str, ast.Module | None] = {}


def _parse_file(filename: str) -> ast.Module | None:
    if filename not in _PARSED:
        try:
            with open(filename, encoding="utf-8") as fh:
                _PARSED[filename] = ast.parse(fh.read(), filename)
        except (OSError, SyntaxError, ValueError):
            _PARSED[filename] = None
    return _PARSED[filename]


def relative_source_path(filename: str) -> str:
    """Path relative to the directory that holds ``sglang/`` (as the static reports print it)."""
    norm = filename.replace(os.sep, "/")
    i = norm.rfind("/sglang/")
    return norm[i + 1:] if i >= 0 else norm


def _unwrap(func: Any) -> Any:
    func = getattr(func, "__func__", func)
    while hasattr(func, "__spectrace_wrapped__"):
        func = func.__spectrace_wrapped__
    while hasattr(func, "__wrapped__"):
        func = func.__wrapped__
    return func


def function_node(func: Any) -> tuple[str, ast.AST] | None:
    """The ``FunctionDef`` of ``func`` in its source file, found through its code object."""
    code = getattr(_unwrap(func), "__code__", None)
    if code is None:
        return None
    tree = _parse_file(code.co_filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first == code.co_firstlineno or node.lineno == code.co_firstlineno:
                return code.co_filename, node
    return None


def _normalise(code_text: str) -> str | None:
    try:
        return ast.unparse(ast.parse(code_text.strip()))
    except SyntaxError:
        return None


def _own_nodes(fn: ast.AST):
    """Nodes of a function, not descending into nested functions or classes."""
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _attribute_chain(node: ast.AST) -> list[str]:
    chain = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    return chain[::-1]


def statement_lines(fn: ast.AST, shape: str | None, attribute_path: list[str] | None = None) -> list[int]:
    """Lines in ``fn`` of the statement (or expression) whose normalised text is ``shape``;
    failing that, of the reads of ``attribute_path`` (``x.next_draft_input.new_seq_lens``)."""
    lines: list[int] = []
    wanted = _normalise(shape) if shape else None
    if wanted:
        for node in _own_nodes(fn):
            if isinstance(node, (ast.stmt, ast.expr)) and ast.unparse(node) == wanted:
                lines.append(node.lineno)
    if not lines and attribute_path:
        for node in _own_nodes(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                # `<name>.a.b` exactly: the read of the catalog's path on a local (the result)
                base = node
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and _attribute_chain(node) == list(attribute_path):
                    lines.append(node.lineno)
    return sorted(set(lines))


def return_sites(fn: ast.AST, filename: str) -> list[dict]:
    rel = relative_source_path(filename)
    return [{"file": rel, "line": n.lineno, "text": ast.unparse(n)[:120]}
            for n in sorted((n for n in _own_nodes(fn) if isinstance(n, ast.Return)), key=lambda n: n.lineno)]


def function_site(func: Any, qualname: str | None = None) -> dict:
    code = getattr(_unwrap(func), "__code__", None)
    if code is None:
        return {"qualname": qualname}
    real_name = getattr(_unwrap(func), "__qualname__", code.co_name)
    site = {"file": relative_source_path(code.co_filename), "line": code.co_firstlineno,
            "qualname": qualname or real_name}
    if qualname and real_name.split(".")[-1] != qualname.split(".")[-1]:
        site["function"] = real_name  # the method was replaced by another function
    found = function_node(func)
    if found:
        site["return_sites"] = return_sites(found[1], found[0])
    return site


def _resolve_consumer(consumer: str, scheduler_cls: type | None) -> tuple[Any, str] | None:
    """``Class.method`` (module-free, as the catalog writes it) -> the function object."""
    if "." not in consumer:
        return None
    cls_name, meth = consumer.rsplit(".", 1)
    cls_name = cls_name.rsplit(".", 1)[-1]
    candidates: list[type] = []
    if scheduler_cls is not None:
        candidates += [c for c in scheduler_cls.__mro__ if c.__name__ == cls_name]
    if not candidates:
        for modname, mod in list(sys.modules.items()):
            if modname.startswith("sglang.") and mod is not None:
                obj = getattr(mod, cls_name, None)
                if isinstance(obj, type):
                    candidates.append(obj)
                    break
    for cls in candidates:
        func = cls.__dict__.get(meth)
        if func is not None:
            return func, f"{cls.__name__}.{meth}"
    return None


# --------------------------------------------------------------------------------------------
# the return site that actually ran (sys.monitoring, Python 3.12+: one callback per return of
# the producer's code object only; elsewhere the report lists the candidate return sites)
# --------------------------------------------------------------------------------------------

class _ReturnTracker:
    def __init__(self):
        self.tool = None
        self.local = threading.local()
        self.codes: set = set()
        mon = getattr(sys, "monitoring", None)
        if mon is None or os.environ.get("SPECTRACE_SHIMS_NO_MONITORING"):
            return
        for tool in range(6):
            if tool in (0, 1, 2, 5):  # debugger, coverage, profiler, optimizer (PEP 669)
                continue
            if mon.get_tool(tool) is None:
                mon.use_tool_id(tool, "spectrace")
                mon.register_callback(tool, mon.events.PY_RETURN, self._on_return)
                self.tool = tool
                break

    def _on_return(self, code, offset, retval):
        self.local.last = (code, offset)

    def watch(self, func: Any) -> None:
        code = getattr(func, "__code__", None)
        if self.tool is None or code is None or code in self.codes:
            return
        sys.monitoring.set_local_events(self.tool, code, sys.monitoring.events.PY_RETURN)
        self.codes.add(code)

    def clear(self) -> None:
        self.local.last = None

    def enable(self, on: bool) -> None:
        """Switch the PY_RETURN events of the watched code objects (A/B measurements)."""
        if self.tool is None:
            return
        events = sys.monitoring.events.PY_RETURN if on else 0
        for code in self.codes:
            sys.monitoring.set_local_events(self.tool, code, events)
        self.local.last = None

    def last_site(self) -> dict | None:
        last = getattr(self.local, "last", None)
        if not last:
            return None
        code, offset = last
        line = None
        for start, end, lineno in code.co_lines():
            if start <= offset < end:
                line = lineno
        return {"file": relative_source_path(code.co_filename), "line": line, "qualname": code.co_qualname}

    def close(self):
        if self.tool is not None:
            for code in self.codes:
                try:
                    sys.monitoring.set_local_events(self.tool, code, 0)
                except Exception:
                    pass
            sys.monitoring.register_callback(self.tool, sys.monitoring.events.PY_RETURN, None)
            sys.monitoring.free_tool_id(self.tool)
            self.tool = None


# --------------------------------------------------------------------------------------------
# post-import hook
# --------------------------------------------------------------------------------------------

_POST_IMPORT: dict[str, list[Callable]] = {}
_POST_IMPORT_PREFIXES: list[tuple[str, Callable]] = []


def when_imported(name: str, callback: Callable, prefix: bool = False) -> None:
    """Call ``callback(module)`` once ``name`` (or, with ``prefix``, any module under it) has been
    executed; at once for a module already imported. The finder is installed on first use."""
    _ensure_finder()
    if prefix:
        _POST_IMPORT_PREFIXES.append((name, callback))
        done = [m for n, m in list(sys.modules.items()) if n.startswith(name) and m is not None]
    else:
        _POST_IMPORT.setdefault(name, []).append(callback)
        done = [sys.modules[name]] if sys.modules.get(name) is not None else []
    for mod in done:
        _run_callback(callback, mod)


def _callbacks_for(name: str) -> list[Callable]:
    return list(_POST_IMPORT.get(name, [])) + [cb for p, cb in _POST_IMPORT_PREFIXES if name.startswith(p)]


def _run_callback(cb: Callable, module) -> None:
    try:
        cb(module)
    except Exception as exc:  # a shim must never break the program it watches
        print(f"[spectrace] post-import hook for {module.__name__} failed: {exc!r}", file=sys.stderr)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: asks the other finders, then runs our callbacks after the module's
    ``exec_module`` (the approach of wrapt's post-import hooks and coverage's subprocess hook)."""

    _busy = threading.local()

    def find_spec(self, fullname, path, target=None):
        if not _callbacks_for(fullname) or getattr(self._busy, "name", None) == fullname:
            return None
        self._busy.name = fullname
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._busy.name = None
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        original_exec = loader.exec_module

        def exec_module(module, _orig=original_exec):
            _orig(module)
            for cb in _callbacks_for(fullname):
                _run_callback(cb, module)

        loader.exec_module = exec_module
        return spec


_FINDER: _PostImportFinder | None = None


def _ensure_finder() -> None:
    global _FINDER
    if _FINDER is None or _FINDER not in sys.meta_path:
        _FINDER = _PostImportFinder()
        sys.meta_path.insert(0, _FINDER)


# --------------------------------------------------------------------------------------------
# the shims
# --------------------------------------------------------------------------------------------

class _Report:
    """JSON lines, one ``os.write`` per event on an ``O_APPEND`` descriptor: lines from several
    processes (TP ranks, restarts) interleave whole, and nothing is lost if a process is killed."""

    def __init__(self, path: str | None):
        self.path = path.replace("{pid}", str(os.getpid())) if path else None
        self.fd = None
        if self.path:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, event: dict) -> None:
        if self.fd is None:
            return
        event.setdefault("pid", os.getpid())
        event.setdefault("time", round(time.time(), 3))
        try:
            os.write(self.fd, (json.dumps(event, default=str) + "\n").encode())
        except OSError:
            pass

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class _StepContext:
    __slots__ = ("scheduler", "batch", "step", "in_producer", "conditions", "result", "mwb",
                 "checked", "entry_seq_lens", "entry_bs")

    def __init__(self, scheduler, batch, step):
        self.scheduler, self.batch, self.step = scheduler, batch, step
        self.in_producer = False
        self.conditions: dict = {}
        self.result = None
        self.mwb = None
        self.checked = False
        # the worker batch's seq_lens as the step began: workers rebind (not modify) it later
        # (EAGLE's draft extend sets batch.seq_lens = batch.seq_lens + num_draft_tokens)
        self.entry_seq_lens = None
        self.entry_bs = None


class Shims:
    def __init__(self, mode: str, report: str | None, catalog: str | None, value_sample: int = 16,
                 pool_stats: bool = False, checks: bool = True):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.mode = mode
        self.checks_enabled = checks
        self.report = _Report(report)
        self.catalog_path = str(catalog) if catalog else str(DEFAULT_CATALOG)
        self.value_sample = max(0, int(value_sample))
        self.pool_stats = pool_stats
        self.plans: list[dict] = []
        self.producer_plans: list[dict] = []  # kind producer-sets: checked at their own producer's return
        if checks:
            for c in load_runtime_catalog(catalog):
                plan = _runtime_plan(c)
                if plan is not None and plan.get("id"):
                    (self.producer_plans if plan["check"] == "producer-sets" else self.plans).append(plan)
        self.producer_active: dict[str, dict] = {}  # id -> plan, once its producer was imported
        self.producer_inactive: dict[str, str] = {}  # id -> why its producer is imported but not checked
        self.active: list[dict] = []     # plans whose consumer statement is in the imported source
        self.inactive: list[dict] = []   # with the reason
        self.checks: dict[str, int] = {}
        self.violations: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        self.warned: set[str] = set()
        self.step = 0
        self.rank: dict = {}
        self.sglang_version = None
        self.local = threading.local()
        self.returns = _ReturnTracker()
        self.pending_values: list = []
        self.value_counter = 0
        self.value_checks_read = 0
        self.last_summary = 0.0
        self.dirty = False
        self.wrapped: list[str] = []
        self.started = False
        self.closed = False
        # overhead A/B in one engine (spectrace bench --shims-ab): the file's words are "off" or
        # "on" plus optional "nomonitoring" / "novalue"; read at most every TOGGLE_POLL_S
        self.toggle_file = os.environ.get(ENV_TOGGLE) or None
        self.toggle_seen = None
        self.toggle_next = 0.0
        self.enabled = True
        self.base_value_sample = self.value_sample

    # ---------------------------------------------------------------- install
    def hook(self) -> None:
        when_imported(SCHEDULER_MODULE, self._on_scheduler_module)
        for name in WORKER_MODULES:
            when_imported(name, self._on_worker_module)
        for prefix in WORKER_PACKAGES:
            when_imported(prefix, self._on_worker_module, prefix=True)
        extra = {p["module"] for p in self.producer_plans if p.get("module")}
        for name in sorted(extra - set(WORKER_MODULES)):
            if not name.startswith(WORKER_PACKAGES):
                when_imported(name, self._on_worker_module)
        atexit.register(self.close)

    def _on_scheduler_module(self, module) -> None:
        scheduler_cls = getattr(module, "Scheduler", None)
        if scheduler_cls is None:
            return
        try:
            import sglang
            self.sglang_version = getattr(sglang, "__version__", None)
        except Exception:
            pass
        if self.checks_enabled:
            self._resolve_sites(scheduler_cls)
            self._wrap(scheduler_cls, "run_batch", self._wrap_run_batch)
        if self.pool_stats:
            self._wrap(scheduler_cls, "get_internal_state", self._wrap_internal_state)

    def _on_worker_module(self, module) -> None:
        if not self.checks_enabled:
            return
        for plan in self.producer_plans:
            cls_name, meth = plan["producer"].split(".")
            obj = vars(module).get(cls_name)
            if isinstance(obj, type) and obj.__module__ == module.__name__ and meth in obj.__dict__:
                self._activate_producer_plan(plan, obj, meth)
        producers = {p["producer"] for p in self.plans}
        for obj in list(vars(module).values()):
            if isinstance(obj, type) and obj.__module__ == module.__name__:
                for meth in producers:
                    if meth in obj.__dict__:
                        self._wrap(obj, meth, self._wrap_producer)

    def _wrap(self, cls: type, name: str, factory: Callable) -> None:
        current = cls.__dict__.get(name)
        if current is None or getattr(current, "__spectrace_wrapped__", None) is not None:
            return
        wrapper = factory(current, cls)
        wrapper.__spectrace_wrapped__ = current
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            try:
                setattr(wrapper, attr, getattr(current, attr))
            except (AttributeError, TypeError):
                pass
        setattr(cls, name, wrapper)
        self.wrapped.append(f"{cls.__module__}.{cls.__qualname__}.{name}")

    def _activate_producer_plan(self, plan: dict, cls: type, meth: str) -> None:
        if plan["id"] in self.producer_active:
            return
        version = _base_version(self.sglang_version or _imported_sglang_version())
        listed = {_base_version(v) for p in self.plans + self.producer_plans for v in p["versions"]}
        if version in listed and plan["versions"] and version not in {_base_version(v) for v in plan["versions"]}:
            self.producer_inactive[plan["id"]] = (f"catalog expects it on {', '.join(plan['versions'])}, "
                                                  f"not on {version}")
            return
        plan = dict(plan, fields=list(plan["fields_by_version"].get(version, plan["fields"])))
        func = cls.__dict__[meth]
        plan["producer_site"] = function_site(func, plan["producer"])
        self.producer_active[plan["id"]] = plan
        self.checks.setdefault(plan["id"], 0)
        self.violations.setdefault(plan["id"], 0)
        name = plan["producer"]
        self._wrap(cls, meth, lambda original, owner: self._wrap_named_producer(original, owner, name))

    def _resolve_sites(self, scheduler_cls: type) -> None:
        self.active, self.inactive = [], []
        imported = _base_version(self.sglang_version)
        listed = {_base_version(v) for p in self.plans for v in p["versions"]}
        # the catalog's `versions` choose among contracts whose statements look alike across
        # versions under different conditions; a version the catalog never names falls back to
        # "the statement is present in the imported source"
        by_version = imported is not None and imported in listed
        for plan in self.plans:
            plan = dict(plan)
            if by_version and plan["versions"] and imported not in {_base_version(v) for v in plan["versions"]}:
                plan["reason"] = f"catalog expects it on {', '.join(plan['versions'])}, not on {self.sglang_version}"
                self.inactive.append(plan)
                continue
            found = _resolve_consumer(plan["consumer"], scheduler_cls)
            if found is None:
                plan["reason"] = f"consumer {plan['consumer']} not found in the imported SGLang"
                self.inactive.append(plan)
                continue
            func, qualname = found
            node = function_node(func)
            lines = statement_lines(node[1], plan["shape"], plan["attribute_path"]) if node else []
            if not lines:
                plan["reason"] = f"`{plan['shape']}` not found in {qualname} of the imported SGLang"
                self.inactive.append(plan)
                continue
            plan["consumer_site"] = {"file": relative_source_path(node[0]), "line": lines[0],
                                     "qualname": qualname, "shape": plan["shape"]}
            # `self` in the path condition: the scheduler, or the scheduler's component of the
            # consumer's class (FutureMap.store_to_map -> scheduler.future_map)
            owner_cls = qualname.split(".")[0]
            plan["self_attr"] = None if any(c.__name__ == owner_cls for c in scheduler_cls.__mro__) else owner_cls
            cond = plan.get("condition")
            plan["condition_code"] = None
            if cond and str(cond).strip() not in ("", "True", "true"):
                try:
                    plan["condition_code"] = compile(str(cond), f"<catalog {plan['id']}>", "eval")
                except SyntaxError:
                    plan["reason"] = f"path condition not evaluable here: {cond!r}"
                    self.inactive.append(plan)
                    continue
            self.active.append(plan)
            self.checks.setdefault(plan["id"], 0)
            self.violations.setdefault(plan["id"], 0)

    def _poll_toggle(self) -> None:
        now = time.monotonic()
        if now < self.toggle_next:
            return
        self.toggle_next = now + TOGGLE_POLL_S
        try:
            with open(self.toggle_file) as fh:
                words = fh.read().split()
        except OSError:
            words = ["on"]
        if words == self.toggle_seen:
            return
        self.toggle_seen = words
        self.enabled = "off" not in words
        self.value_sample = 0 if "novalue" in words else self.base_value_sample
        self.returns.enable("nomonitoring" not in words)
        self.report.write({"event": "toggle", "state": words, "step": self.step})

    # ---------------------------------------------------------------- report
    def _start(self, scheduler) -> None:
        self.started = True
        for attr in ("tp_rank", "pp_rank", "dp_rank", "attn_tp_rank", "moe_ep_rank"):
            val = getattr(scheduler, attr, None)
            if isinstance(val, int):
                self.rank[attr] = val
        gpu = getattr(scheduler, "gpu_id", None)
        if isinstance(gpu, int):
            self.rank["gpu_id"] = gpu
        self.report.write({
            "event": "start", "mode": self.mode, "sglang": self.sglang_version, "rank": self.rank,
            "catalog": self.catalog_path, "value_sample": self.value_sample,
            "return_sites": "exact (sys.monitoring)" if self.returns.tool is not None else "candidates",
            "wrapped": self.wrapped,
            "contracts": [{"id": p["id"], "check": p["check"], "at": p["at"], "mode": p["mode"],
                           "condition": p.get("condition"), "consumer": p["consumer_site"]}
                          for p in self.active]
                         + [{"id": p["id"], "check": p["check"], "at": p["at"], "mode": p["mode"],
                             "condition": None, "producer": p["producer_site"], "fields": p["fields"]}
                            for p in self.producer_active.values()],
            "inactive": [{"id": p["id"], "reason": p["reason"]} for p in self.inactive]
                        + [{"id": p["id"], "reason": self.producer_inactive.get(
                               p["id"], f"producer {p['producer']} not imported (a tree without it, "
                                        "e.g. a release the series that adds it was not applied to)")}
                           for p in self.producer_plans if p["id"] not in self.producer_active],
        })

    def summary(self, final: bool = False) -> None:
        self.last_summary = time.monotonic()
        self.dirty = False
        self.report.write({"event": "summary", "final": final, "steps": self.step, "rank": self.rank,
                           "mode": self.mode, "sglang": self.sglang_version,
                           "checks": dict(self.checks), "violations": dict(self.violations),
                           "skipped": dict(self.skipped), "value_checks_read": self.value_checks_read})

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.started:
            self._poll_values(final=True)
            self.summary(final=True)
        self.report.close()

    # ---------------------------------------------------------------- checking
    def _condition(self, ctx: _StepContext, plan: dict, result) -> bool | None:
        code = plan.get("condition_code")
        key = plan["id"]
        if key in ctx.conditions:
            return ctx.conditions[key]
        ok: bool | None = True
        if code is not None:
            owner = ctx.scheduler if not plan.get("self_attr") else _component(ctx.scheduler, plan["self_attr"])
            names = {"self": owner, "batch": ctx.batch, "batch_result": result,
                     "result": result, "model_worker_batch": ctx.mwb}
            try:
                ok = bool(eval(code, {"__builtins__": {}}, names))
            except Exception:
                ok = None
        if ok and plan["mode"] != "any":
            fm = getattr(ctx.batch, "forward_mode", None)
            try:
                ok = bool(fm.is_decode() if plan["mode"] == "decode" else fm.is_extend())
            except Exception:
                ok = None
        ctx.conditions[key] = ok
        return ok

    def _root(self, plan: dict, result):
        owner = plan["owner"] or ""
        if owner.endswith("DraftInput"):
            return getattr(result, "next_draft_input", None)
        return result

    def _violate(self, plan: dict, ctx: _StepContext, detail: str, producer_func=None,
                 producer_qualname: str | None = None, return_site: dict | None = None) -> None:
        cid = plan["id"]
        self.violations[cid] = self.violations.get(cid, 0) + 1
        count = self.violations[cid]
        producer = function_site(producer_func, producer_qualname) if producer_func is not None else {}
        if return_site:
            producer["return_site"] = return_site
        consumer = plan.get("consumer_site", {})
        if count <= MAX_VIOLATION_EVENTS:
            mode_name = getattr(getattr(ctx.batch, "forward_mode", None), "name", None)
            self.report.write({"event": "violation", "contract": cid, "detail": detail,
                               "step": ctx.step, "rank": self.rank, "forward_mode": mode_name,
                               "batch_size": _batch_size(ctx.batch), "consumer": consumer,
                               "producer": producer, "mode": self.mode, "nth": count})
            self.summary()
        if self.mode == "warn" and cid not in self.warned:
            self.warned.add(cid)
            print("[spectrace] WARNING " + format_violation(cid, detail, consumer, producer)
                  + " (further violations of this contract are counted in the report)",
                  file=sys.stderr, flush=True)
        if self.mode == "raise":
            raise ContractViolation(cid, detail, consumer, producer)

    def check_producer_return(self, ctx: _StepContext, worker, func, result) -> None:
        ctx.result = result
        ret_site = None
        for plan in self.active:
            if plan["at"] != "producer-return":
                continue
            cond = self._condition(ctx, plan, result)
            if cond is None:
                self.skipped[plan["id"]] = self.skipped.get(plan["id"], 0) + 1
                continue
            if not cond:
                continue
            self.checks[plan["id"]] += 1
            self.dirty = True
            problem = self._presence_problem(plan, result)
            if problem is None and plan["check"] == "seq-lens-relation":
                problem = self._seq_lens_shape_problem(plan, ctx, result)
                if problem is None:
                    self._maybe_enqueue_value_check(plan, ctx, result, func, type(worker))
            if problem is not None:
                if ret_site is None:
                    ret_site = self.returns.last_site()
                qual = f"{type(worker).__name__}.{plan['producer']}"
                self._violate(plan, ctx, problem, func, qual, ret_site)

    def check_named_producer_return(self, name: str, func, batch, bs: int | None, result) -> None:
        """The return of a producer-sets contract's own producer (``Class.method``)."""
        ctx = getattr(self.local, "ctx", None) or _StepContext(None, batch, self.step)
        for plan in self.producer_active.values():
            if plan["producer"] != name:
                continue
            self.checks[plan["id"]] += 1
            self.dirty = True
            problem = self._producer_sets_problem(plan, result, bs)
            if problem is not None:
                self._violate(plan, ctx, problem, func, name, self.returns.last_site())

    @staticmethod
    def _producer_sets_problem(plan: dict, result, bs: int | None) -> str | None:
        fields = plan["fields"]
        missing = [f for f in fields if getattr(result, f, None) is None]
        if missing:
            return (f"{type(result).__name__} returned by {plan['producer']} has "
                    + ", ".join(f"{m}=None" for m in missing))
        for path in plan["batch_sized"]:
            parts = path.split(".")
            if parts[0] not in fields:
                continue
            value = _chain(result, parts)
            if value is None:
                return f"{path} is None at the return of {plan['producer']}"
            shape = getattr(value, "shape", None)
            if shape is None:
                return f"{path} has no shape ({type(value).__name__})"
            if bs is not None and (len(shape) != 1 or shape[0] != bs):
                return f"{path} has shape {tuple(shape)}, the batch has {bs} requests"
        for name, expected in plan["equals"].items():
            if name not in fields:
                continue
            actual = getattr(result, name, None)
            # Python scalars only: comparing a device tensor would synchronise
            if not isinstance(actual, (bool, int, float, str)) or actual != expected:
                return f"{name} is {actual!r}, the catalog expects {expected!r}"
        return None

    def check_step_return(self, ctx: _StepContext, result) -> None:
        if result is None:
            return
        for plan in self.active:
            at = plan["at"]
            relation_after = plan["check"] == "seq-lens-relation" and at == "producer-return"
            if at not in ("step-return", "consumer-return") and not relation_after:
                continue
            cond = self._condition(ctx, plan, result)
            if not cond:
                if cond is None and not relation_after:
                    self.skipped[plan["id"]] = self.skipped.get(plan["id"], 0) + 1
                continue
            if getattr(result, "delay_sample_func", None) is not None:
                continue  # fields filled in by the delayed sampling, later in the same loop turn
            problem = None
            if relation_after:
                # after the step the scheduler's lengths ARE the worker's new_seq_lens (0.5.9-0.5.12)
                value = _chain(self._root(plan, result), plan["attribute_path"])
                if value is not None and getattr(ctx.batch, "seq_lens", None) is not value:
                    problem = (f"after the step batch.seq_lens is not {'.'.join(plan['attribute_path'])} "
                               f"from the worker")
                else:
                    continue  # counted at the producer's return
            else:
                self.checks[plan["id"]] += 1
                self.dirty = True
                problem = self._presence_problem(plan, result)
                if problem is None and plan["check"] == "seq-lens-relation":
                    problem = self._seq_lens_shape_problem(plan, ctx, result)
            if problem is not None:
                worker = getattr(ctx.scheduler, "model_worker", None)
                func = getattr(type(worker), plan["producer"], None) if worker is not None else None
                qual = f"{type(worker).__name__}.{plan['producer']}" if worker is not None else None
                self._violate(plan, ctx, problem, func, qual, self.returns.last_site())

    def _presence_problem(self, plan: dict, result) -> str | None:
        root = self._root(plan, result)
        if plan["check"] == "fields-present":
            missing = [f for f in (plan["fields"] or plan["attribute_path"][:1]) if getattr(root, f, None) is None]
            if missing:
                return f"{type(result).__name__} from the worker has " + ", ".join(f"{m}=None" for m in missing)
            return None
        path = plan["attribute_path"]
        obj = root
        for i, name in enumerate(path):
            obj = getattr(obj, name, None)
            if obj is None:
                shown = ".".join(path[: i + 1])
                return f"{type(result).__name__}.{shown} is None (read unconditionally)"
        return None

    def _seq_lens_shape_problem(self, plan: dict, ctx: _StepContext, result) -> str | None:
        value = _chain(self._root(plan, result), plan["attribute_path"])
        shape = getattr(value, "shape", None)
        if shape is None:
            return f"{'.'.join(plan['attribute_path'])} has no shape ({type(value).__name__})"
        expected = ctx.entry_bs if ctx.entry_bs is not None else _batch_size(ctx.batch)
        if expected is not None and (len(shape) != 1 or shape[0] != expected):
            return f"{'.'.join(plan['attribute_path'])} has shape {tuple(shape)}, the batch has {expected} requests"
        return None

    # value-level check: enqueued on the current (forward) stream, read after copy_done
    def _maybe_enqueue_value_check(self, plan, ctx, result, func, worker_cls) -> None:
        if not self.value_sample or not plan.get("value_check"):
            return
        accept = getattr(result, "accept_lens", None)
        old = ctx.entry_seq_lens
        new = _chain(self._root(plan, result), plan["attribute_path"])
        if accept is None or old is None or new is None:
            return
        self.value_counter += 1
        if self.value_counter % self.value_sample:
            return
        try:
            import torch

            if not (torch.is_tensor(new) and torch.is_tensor(old) and torch.is_tensor(accept)):
                return
            if new.shape != old.shape or accept.shape != old.shape:
                return
            # a worker may make accept_lens on the host (the dynamic-disable series does for its
            # plain steps): compare on new's device; a host-to-device copy waits for no GPU work
            old, accept = (t if t.device == new.device else t.to(new.device, non_blocking=True)
                           for t in (old, accept))
            bad = (new.to(torch.int64) != old.to(torch.int64) + accept.to(torch.int64)).sum()
            host = torch.empty((), dtype=torch.int64, pin_memory=new.is_cuda)
            host.copy_(bad, non_blocking=True)
            event = None
            if new.is_cuda:
                event = torch.cuda.Event()
                event.record()
            self.pending_values.append((result, event, host, plan, ctx.step, ctx.batch, func, worker_cls))
        except Exception as exc:
            self.skipped[plan["id"] + ":value"] = self.skipped.get(plan["id"] + ":value", 0) + 1
            if self.skipped[plan["id"] + ":value"] == 1:
                print(f"[spectrace] value check unavailable: {exc!r}", file=sys.stderr)

    def _poll_values(self, final: bool = False) -> None:
        if not self.pending_values:
            return
        keep = []
        for item in self.pending_values:
            result, event, host, plan, step, batch, func, worker_cls = item
            copy_done = getattr(result, "copy_done", None)
            try:
                ready = (copy_done.query() if copy_done is not None and hasattr(copy_done, "query")
                         else event.query() if event is not None else True)
                if ready and event is not None:
                    ready = event.query()
            except Exception:
                ready = False
            if not ready and not final:
                keep.append(item)
                continue
            if not ready:
                continue
            self.value_checks_read += 1
            bad = int(host.item())
            if bad:
                ctx = _StepContext(None, batch, step)
                self._violate(plan, ctx, f"{bad} request(s) with new_seq_lens != seq_lens + accept_lens "
                              "(value check, read after copy_done)", func,
                              f"{worker_cls.__name__}.{plan['producer']}")
        self.pending_values = keep

    # ---------------------------------------------------------------- wrappers
    def _wrap_run_batch(self, original: Callable, cls: type) -> Callable:
        shims = self

        def run_batch(scheduler, batch, *args, **kwargs):
            if shims.toggle_file is not None:
                shims._poll_toggle()
                if not shims.enabled:
                    return original(scheduler, batch, *args, **kwargs)
            if not shims.started:
                shims._start(scheduler)
            shims._rewrap_producer(scheduler)
            shims.step += 1
            ctx = _StepContext(scheduler, batch, shims.step)
            previous = getattr(shims.local, "ctx", None)
            shims.local.ctx = ctx
            try:
                result = original(scheduler, batch, *args, **kwargs)
            finally:
                shims.local.ctx = previous
            if shims.active:
                shims.check_step_return(ctx, result)
            if shims.pending_values:
                shims._poll_values()
            # the first step's summary shows the checks running even if the process is killed
            # early (SGLang ends its scheduler with a signal, atexit does not run)
            if shims.dirty and (shims.step == 1 or time.monotonic() - shims.last_summary > SUMMARY_INTERVAL_S):
                shims.summary()
            return result

        return run_batch

    def _rewrap_producer(self, scheduler) -> None:
        """Wrap the producer the scheduler really calls, if a plugin or patch replaced the
        method after import (one attribute lookup per step)."""
        worker = getattr(scheduler, "model_worker", None)
        if worker is None:
            return
        for meth in {p["producer"] for p in self.active}:
            cls = type(worker)
            func = getattr(cls, meth, None)
            if func is not None and getattr(func, "__spectrace_wrapped__", None) is None:
                owner = next((c for c in cls.__mro__ if meth in c.__dict__), cls)
                self._wrap(owner, meth, self._wrap_producer)

    def _wrap_producer(self, original: Callable, cls: type) -> Callable:
        shims = self
        self.returns.watch(original)

        def producer(worker, *args, **kwargs):
            ctx = getattr(shims.local, "ctx", None)
            if ctx is None or ctx.in_producer:  # not a scheduler step, or a nested call
                return original(worker, *args, **kwargs)
            ctx.in_producer = True
            ctx.mwb = args[0] if args else kwargs.get("model_worker_batch")
            ctx.entry_seq_lens = getattr(ctx.mwb, "seq_lens", None)
            ctx.entry_bs = _batch_size(ctx.mwb)
            shims.returns.clear()
            try:
                result = original(worker, *args, **kwargs)
            finally:
                ctx.in_producer = False
            shims.check_producer_return(ctx, worker, original, result)
            return result

        return producer

    def _wrap_named_producer(self, original: Callable, cls: type, name: str) -> Callable:
        shims = self
        self.returns.watch(original)

        def producer(obj, *args, **kwargs):
            if not shims.enabled or not shims.producer_active:
                return original(obj, *args, **kwargs)
            batch = args[0] if args else next(iter(kwargs.values()), None)
            bs = _batch_size(batch)  # before the call: a producer may rebind the batch's tensors
            shims.returns.clear()
            result = original(obj, *args, **kwargs)
            shims.check_named_producer_return(name, original, batch, bs, result)
            return result

        return producer

    def _wrap_internal_state(self, original: Callable, cls: type) -> Callable:
        shims = self

        def get_internal_state(scheduler, *args, **kwargs):
            out = original(scheduler, *args, **kwargs)
            if shims.enabled and shims.started and shims.dirty:
                # a client asking for server info is between runs: write the counts now,
                # since SGLang's shutdown SIGKILLs the scheduler before any exit hook
                shims.summary()
            try:
                state = getattr(out, "internal_state", None)
                if isinstance(state, dict):
                    state["spectrace_pool"] = pool_counters(scheduler)
            except Exception:
                pass
            return out

        return get_internal_state


def pool_counters(scheduler) -> dict:
    """KV-pool counters of one scheduler: free + evictable == capacity when nothing leaked."""
    out = {}
    alloc = getattr(scheduler, "token_to_kv_pool_allocator", None)
    cache = getattr(scheduler, "tree_cache", None)
    req_pool = getattr(scheduler, "req_to_token_pool", None)
    for key, fn in (("token_free", getattr(alloc, "available_size", None)),
                    ("token_evictable", getattr(cache, "evictable_size", None)),
                    ("token_protected", getattr(cache, "protected_size", None)),
                    ("req_free", getattr(req_pool, "available_size", None))):
        if fn is not None:
            try:
                out[key] = int(fn())
            except Exception:
                pass
    total = getattr(scheduler, "max_total_num_tokens", None)
    if isinstance(total, int):
        out["token_capacity"] = total
        if "token_free" in out:
            out["token_used"] = total - out["token_free"] - out.get("token_evictable", 0)
    out["running"] = len(getattr(getattr(scheduler, "running_batch", None), "reqs", []) or [])
    out["waiting"] = len(getattr(scheduler, "waiting_queue", []) or [])
    return out


_COMPONENT_ATTR: dict[tuple[type, str], str | None] = {}


def _component(scheduler, class_name: str):
    """The scheduler's attribute holding an instance of ``class_name`` (looked up once)."""
    key = (type(scheduler), class_name)
    if key not in _COMPONENT_ATTR:
        _COMPONENT_ATTR[key] = next(
            (name for name, value in vars(scheduler).items()
             if any(c.__name__ == class_name for c in type(value).__mro__)), None)
    name = _COMPONENT_ATTR[key]
    return getattr(scheduler, name, None) if name else None


def _base_version(version: str | None) -> str | None:
    if not version:
        return None
    import re

    m = re.match(r"\d+(\.\d+)*", str(version))
    return m.group(0) if m else None


def _imported_sglang_version() -> str | None:
    mod = sys.modules.get("sglang")
    return getattr(mod, "__version__", None) if mod is not None else None


def _chain(obj, path):
    for name in path:
        obj = getattr(obj, name, None)
        if obj is None:
            return None
    return obj


def _batch_size(batch) -> int | None:
    if batch is None:
        return None
    reqs = getattr(batch, "reqs", None)
    if reqs is not None:
        return len(reqs)
    seq_lens = getattr(batch, "seq_lens", None)
    shape = getattr(seq_lens, "shape", None)
    if shape:
        return int(shape[0])
    try:
        return len(seq_lens)
    except TypeError:
        return None


# --------------------------------------------------------------------------------------------
# public entry points
# --------------------------------------------------------------------------------------------

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
            value_sample: int = 16, pool_stats: bool = False, propagate: bool = True,
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
        _ACTIVE.close()
        _ACTIVE.active = []
        _ACTIVE.producer_active = {}
        _ACTIVE.returns.close()
        _ACTIVE = None
    # forget the post-import callbacks and the finder too, so that a later install() starts
    # clean instead of stacking a second set of wrappers on modules imported after this point
    _POST_IMPORT.clear()
    _POST_IMPORT_PREFIXES.clear()
    if _FINDER is not None and _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for var in (ENV_MODE, ENV_REPORT, ENV_CATALOG, ENV_SAMPLE, ENV_POOL):
        os.environ.pop(var, None)


def install_from_environment() -> Shims | None:
    """Called by boot/sitecustomize.py: install when SPECTRACE_SHIMS or SPECTRACE_POOL_STATS
    asks for it; nothing at all otherwise."""
    mode = os.environ.get(ENV_MODE, "").strip().lower()
    pool = os.environ.get(ENV_POOL, "").strip().lower() not in _OFF_VALUES
    checks = mode not in _OFF_VALUES
    if not checks and not pool:
        return None
    if checks and mode not in MODES:
        print(f"[spectrace] {ENV_MODE}={mode!r} is not one of {MODES}: shims not installed", file=sys.stderr)
        return None
    sample = os.environ.get(ENV_SAMPLE, "16")
    return install(mode if checks else "record", report=os.environ.get(ENV_REPORT) or None,
                   catalog=os.environ.get(ENV_CATALOG) or None,
                   value_sample=int(sample) if sample.isdigit() else 16, pool_stats=pool,
                   propagate=False, checks=checks)
