"""Post-import hooks: run a callback right after a module's body has executed, so that the shims
can wrap ``Scheduler.run_batch`` and the workers' methods before anything calls them."""

from __future__ import annotations

import importlib.abc
import sys
import threading
from typing import Callable

_POST_IMPORT: dict[str, list[Callable]] = {}
# (predicate on the module name, callback): for a family of modules, such as the worker side
_POST_IMPORT_MATCHES: list[tuple[Callable[[str], bool], Callable]] = []


def when_imported(name: str, callback: Callable) -> None:
    """Call ``callback(module)`` once module ``name`` has been executed; at once if it already was.
    The finder is installed on first use."""
    _ensure_finder()
    _POST_IMPORT.setdefault(name, []).append(callback)
    if sys.modules.get(name) is not None:
        _run_callback(callback, sys.modules[name])


def when_matching_imported(match: Callable[[str], bool], callback: Callable) -> None:
    """Call ``callback(module)`` for every module whose name satisfies ``match``, those already
    imported at once, the others once executed."""
    _ensure_finder()
    _POST_IMPORT_MATCHES.append((match, callback))
    for name, mod in list(sys.modules.items()):
        if mod is not None and match(name):
            _run_callback(callback, mod)


def forget_hooks() -> None:
    """Drop every callback and the finder, so that a later registration starts clean instead of
    stacking a second set of wrappers."""
    _POST_IMPORT.clear()
    _POST_IMPORT_MATCHES.clear()
    if _FINDER is not None and _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)


def _callbacks_for(name: str) -> list[Callable]:
    return list(_POST_IMPORT.get(name, [])) + [cb for match, cb in _POST_IMPORT_MATCHES if match(name)]


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
