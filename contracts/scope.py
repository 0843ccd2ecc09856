"""What the extraction looks at: the owner dataclass, the Scheduler class, and the files scanned."""

from __future__ import annotations

import re

from spectrace.contracts.analysis import in_package
from spectrace.contracts.dataclasses_scan import DataclassInfo, find_dataclass
from spectrace.contracts.roles import Roles
from spectrace.contracts.symbols import Symbols
from spectrace.errors import SpectraceError


def find_owner(symbols: Symbols, owner_name: str, describe_source: str) -> DataclassInfo:
    """The owner dataclass, found by class name (its module moved between releases)."""
    rels = [symbols.file_of_module(qn.rsplit(".", 1)[0]) for qn in symbols.find_class(owner_name)]
    if not rels:
        pattern = re.compile(rf"^class\s+{re.escape(owner_name)}\b", re.M)
        rels = [r for r in symbols.files() if pattern.search(symbols.facts.text(r))]
    for rel in rels:
        if rel is None:
            continue
        info = find_dataclass(symbols.facts.text(rel), owner_name, rel)
        if info is not None:
            return info
    raise SpectraceError(f"no dataclass {owner_name} in {describe_source}")


def scheduler_class(symbols: Symbols, roles: Roles) -> str | None:
    """The consumer class, qualified (its preferred module first when several share the name)."""
    found = symbols.find_class(roles.consumer)
    preferred = [c for c in found if c == f"{roles.consumer_module}.{roles.consumer}"]
    return preferred[0] if preferred else (found or [None])[0]


def scope_files(symbols: Symbols, owner_name: str, classes: list[str], packages: tuple[str, ...]) -> list[str]:
    """The files of ``packages``, those that name the owner, and those of ``classes`` and their bases."""
    word = owner_name.encode()
    pattern = re.compile(rb"\b" + re.escape(word) + rb"\b")
    project = symbols.project

    def mentioning():
        return [rel for mod, rel in sorted(project.files.items(), key=lambda kv: kv[1])
                if word in (data := project.file_bytes(mod)) and pattern.search(data)]

    files = set(project.cached_scan(f"files-naming-{owner_name}", mentioning))
    for mod, rel in project.files.items():
        if in_package(mod, packages):
            files.add(rel)
    for cls in classes:
        for c in symbols.mro(cls):
            rel = symbols.file_of_module(c.rsplit(".", 1)[0])
            if rel:
                files.add(rel)
    return sorted(files)
