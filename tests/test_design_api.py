"""Every API name docs/design.md mentions exists: the modules of its tables, the names its code
blocks import, the ``Project`` methods it lists and every dotted ``spectrace.`` name."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DESIGN = (Path(__file__).resolve().parents[1] / "docs" / "design.md").read_text()
CODE = "\n".join(re.findall(r"```python\n(.*?)```", DESIGN, flags=re.S))


def resolve(dotted: str):
    """Import the longest importable module prefix of ``dotted`` and walk the rest as attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(dotted)


def imported_names() -> list[str]:
    out = []
    for module, names in re.findall(r"^from ([\w.]+) import (.+)$", CODE, flags=re.M):
        out += [f"{module}.{n.strip()}" for n in names.split(",")]
    return out


def dotted_names() -> list[str]:
    found = set(re.findall(r"`(spectrace(?:\.\w+)+)", DESIGN))
    # the tables name modules relative to spectrace: `tracer.calls`, `contracts.scope`
    found |= {f"spectrace.{m}" for m in re.findall(r"`((?:tracer|contracts)\.\w+)`", DESIGN)}
    return sorted(found)


def project_methods() -> list[str]:
    return sorted(set(re.findall(r"^proj\.(\w+)\(", CODE, flags=re.M)))


def test_the_page_names_enough_to_check():
    assert len(imported_names()) >= 8
    assert len(dotted_names()) >= 20
    assert len(project_methods()) >= 10


@pytest.mark.parametrize("name", imported_names() + dotted_names())
def test_every_named_api_exists(name):
    assert resolve(name) is not None


@pytest.mark.parametrize("method", project_methods())
def test_every_listed_project_method_exists(method):
    from spectrace.tracer.project import Project

    assert callable(getattr(Project, method))
