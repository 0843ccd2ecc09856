"""The state the extraction passes share: the symbol table, the owner dataclass, the scheduler
and worker classes, the sides, and the notes for the user."""

from __future__ import annotations

from dataclasses import dataclass, field

from spectrace.contracts.dataclasses_scan import DataclassInfo, FieldInfo
from spectrace.contracts.roles import Roles
from spectrace.contracts.symbols import Symbols
from spectrace.sides import SCHEDULER, WORKER


def in_package(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


@dataclass
class Analysis:
    symbols: Symbols
    owner: DataclassInfo
    roles: Roles
    scheduler_qn: str | None = None  # the consumer class (roles.consumer), qualified
    worker_modules: set[str] = field(default_factory=set)  # modules of the worker classes and their bases
    notes: list[str] = field(default_factory=list)
    complements: dict[str, str] = field(default_factory=dict)  # method -> its complement (complements.py)
    predicates: dict[str, frozenset] = field(default_factory=dict)  # method -> the enum members it holds for
    field_properties: dict[str, str | None] = field(default_factory=dict)  # property -> the field it returns (reads.py)

    @property
    def owner_name(self) -> str:
        return self.owner.name

    @property
    def worker_attr(self) -> str:
        return self.roles.worker_attr

    @property
    def fields(self) -> dict[str, FieldInfo]:
        return self.owner.fields

    def side_of(self, module: str) -> str:
        """The contract's two sides: the worker classes' modules and the worker packages are the
        worker; every other module that touches the owner counts as the scheduler's. Unlike
        ``spectrace.sides.side_of`` there is no third side, and the worker side follows the
        classes the scheduler can really hold rather than module patterns."""
        if module in self.worker_modules or in_package(module, self.roles.worker_packages):
            return WORKER
        return SCHEDULER
