"""The return statement that actually ran in a producer: a ``sys.monitoring`` (Python 3.12+)
``PY_RETURN`` callback on the watched code objects only. Without it the report lists the
candidate return sites instead."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable

from spectrace.shims.sites import relative_source_path

ENV_NO_MONITORING = "SPECTRACE_SHIMS_NO_MONITORING"
# tool ids PEP 669 reserves: debugger, coverage, profiler, optimizer
_RESERVED_TOOLS = (0, 1, 2, 5)


class ReturnTracker:
    def __init__(self, on_error: Callable[[str, BaseException], None]):
        self.tool = None
        self.on_error = on_error
        self.local = threading.local()
        self.codes: set = set()
        mon = getattr(sys, "monitoring", None)
        if mon is None or os.environ.get(ENV_NO_MONITORING):
            return
        for tool in range(6):
            if tool in _RESERVED_TOOLS:
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

    def close(self) -> None:
        if self.tool is None:
            return
        for code in self.codes:
            try:
                sys.monitoring.set_local_events(self.tool, code, 0)
            except ValueError as exc:  # the tool id was freed by someone else
                self.on_error(f"stopping return monitoring of {code.co_qualname}", exc)
        sys.monitoring.register_callback(self.tool, sys.monitoring.events.PY_RETURN, None)
        sys.monitoring.free_tool_id(self.tool)
        self.tool = None
