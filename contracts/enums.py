"""The members of an enum class of the tree, for the tests of one value against them
(``self.disaggregation_mode == DisaggregationMode.PREFILL`` and ``disaggregation_mode ==
DisaggregationMode.NULL`` never hold together: ``conditions.satisfiable_under_modes``).

Only a class the tree defines once under that name, deriving directly from ``Enum``, ``IntEnum`` or
``StrEnum``, whose members are written with ``auto()`` or with distinct literal values: two members
of one value are one member (an alias), and a ``Flag``'s members combine."""

from __future__ import annotations

import ast

from spectrace.contracts.symbols import Symbols
from spectrace.tracer.index import ir_text

_ENUM_BASES = {"Enum", "IntEnum", "StrEnum", "enum.Enum", "enum.IntEnum", "enum.StrEnum"}


class EnumMembers:
    def __init__(self, symbols: Symbols):
        self.symbols = symbols
        self._memo: dict[str, frozenset | None] = {}

    def __call__(self, cls_name: str) -> frozenset | None:
        if cls_name not in self._memo:
            self._memo[cls_name] = self._members(cls_name)
        return self._memo[cls_name]

    def _members(self, cls_name: str) -> frozenset | None:
        found = self.symbols.find_class(cls_name)
        info = self.symbols.project.cls(found[0]) if len(found) == 1 else None
        if info is None or not info.bases or not all(ir_text(b) in _ENUM_BASES for b in info.bases):
            return None
        values = {}
        for name, value in info.assigns.items():
            if name.startswith("_"):
                continue  # `_ignore_` and the like are no members
            text = value if isinstance(value, str) else ir_text(value)
            if text.startswith("auto("):
                values[name] = None
                continue
            try:
                values[name] = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return None  # a computed value may equal another member's
        literals = [v for v in values.values() if v is not None]
        if len(set(map(repr, literals))) != len(literals):
            return None
        return frozenset(values) or None
