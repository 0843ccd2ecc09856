#!/usr/bin/env python3
"""Check the program keys against what Python runs: import each program's main module and call
its main() under sys.setprofile, record caller -> callee between the program's own functions
(lambdas and comprehensions folded into their enclosing function, as in the keys), and report
edges run but missing from the key, and key edges not run (paths this one execution does not take).

    python bench/callgraph/check_keys.py
"""
from __future__ import annotations

import importlib
import inspect
import json
import sys
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent / "programs"
ARGS = {"dict_elements": ("remove",)}  # main() arguments where it takes some
FOLD = ("<lambda>", "<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def node(frame, construct):
    module = frame.f_globals.get("__name__", "")
    if not module.startswith(construct + ".") and module != construct:
        return None
    parts = [p for p in frame.f_code.co_qualname.split(".") if p != "<locals>"]
    if not frame.f_code.co_flags & inspect.CO_NEWLOCALS and parts != ["<module>"]:
        parts = parts[:-1] or ["<module>"]  # a class body counts as its enclosing scope
    for i, p in enumerate(parts):
        if p in FOLD:
            parts = parts[:i]
            break
    name = ".".join(parts) if parts and parts != ["<module>"] else "<module>"
    return f"{module[len(construct) + 1:] or '__init__'}.{name}"


def run(construct):
    edges = set()

    def profile(frame, event, arg):
        if event != "call":
            return
        callee, caller = node(frame, construct), frame.f_back and node(frame.f_back, construct)
        is_body = not frame.f_code.co_flags & inspect.CO_NEWLOCALS  # module or class body
        if callee and caller and callee != caller and not is_body:
            code = frame.f_code.co_qualname
            if not any(f in code.split(".")[-1] for f in FOLD):
                edges.add((caller, callee))

    sys.path.insert(0, str(PROGRAMS))
    sys.setprofile(profile)
    try:
        mod = importlib.import_module(f"{construct}.main")
        if hasattr(mod, "main"):
            mod.main(*ARGS.get(construct, ()))
        elif hasattr(mod, "run"):
            mod.run()
    except Exception as exc:  # the program raising at the end (raise_init) is expected
        print(f"  {construct}: main raised {type(exc).__name__}")
    finally:
        sys.setprofile(None)
    return edges


def main():
    bad = 0
    for d in sorted(p for p in PROGRAMS.iterdir() if (p / "key.json").exists()):
        key = {tuple(e) for e in json.loads((d / "key.json").read_text())["edges"]}
        ran = run(d.name)
        extra, unseen = ran - key, key - ran
        bad += bool(extra)
        print(f"{d.name}: ran {len(ran)}, key {len(key)}"
              + (f"; RUN BUT NOT IN KEY: {sorted(extra)}" if extra else "")
              + (f"; in key, not run: {sorted(unseen)}" if unseen else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
