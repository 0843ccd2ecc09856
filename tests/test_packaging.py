"""What an install ships: every package folder of the checkout is listed in pyproject.toml under
the import name the checkout gives it (a folder left out imports from a checkout and is missing
from a wheel)."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_installed():
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folder_of = {name: ROOT / path for name, path in setup["package-dir"].items()}
    on_disk = set()
    for top_name, top in folder_of.items():
        for init in top.rglob("__init__.py"):
            rel = init.parent.relative_to(top)
            # a series' src/ tree is SGLang code that patches add, not a spectrace package
            if "dynamic-disable" in rel.parts:
                continue
            on_disk.add(".".join((top_name, *rel.parts)) if rel.parts else top_name)
    assert on_disk == set(setup["packages"])
