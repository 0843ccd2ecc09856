"""For the GPU tests' start-up fixtures (tests/gpu/*/sitecustomize.py): a fixture's sitecustomize
shadows any later one on sys.path, so it runs the next one after its own folder itself."""

from __future__ import annotations

import os
import sys


def chain_shadowed_sitecustomize(here: str, tag: str) -> None:
    entries = [os.path.abspath(e) if e else "" for e in sys.path]
    after = entries.index(here) + 1 if here in entries else 0
    for entry in sys.path[after:]:
        candidate = os.path.join(entry, "sitecustomize.py") if entry else ""
        if entry and os.path.abspath(entry) != here and os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8") as fh:
                    exec(compile(fh.read(), candidate, "exec"), {"__name__": "sitecustomize", "__file__": candidate})
            except Exception as exc:  # never break interpreter start-up
                print(f"{tag} chained sitecustomize in {entry} failed: {exc!r}", file=sys.stderr)
            return



def boot(here: str, tag: str, module: str, patch) -> None:
    """Run ``patch(module)`` once ``module`` is imported, then the shadowed sitecustomize."""
    try:
        from spectrace.shims.post_import import when_imported

        when_imported(module, patch)
    except Exception as exc:
        print(f"{tag} not installed: {exc!r}", file=sys.stderr)
    chain_shadowed_sitecustomize(here, tag)
