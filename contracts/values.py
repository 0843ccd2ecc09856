"""What the facts say a value is: one frozen record per kind of expression that the flow analysis
tells apart (``expr_values.describe`` makes them, the passes read them by attribute and ``match``
on the class). Anything else is an ``Opaque`` expression, known only by its text.

``text`` is the expression as written (cut to a few hundred characters); it is empty where there
is no expression (a bare ``return``) or none was kept (``ItemOf``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping


class _Described:
    """What every value record has: its kind's name and a way to show it."""
    kind: ClassVar[str]
    text: str

    @property
    def shown(self) -> str:
        """The expression as written, else the name of its kind (``none`` for a bare return)."""
        return self.text or self.kind


@dataclass(frozen=True)
class NoneValue(_Described):
    """``None`` written out, or no value at all (a bare ``return``)."""
    kind: ClassVar[str] = "none"
    text: str = ""


@dataclass(frozen=True)
class Name(_Described):
    """A bare name (or a singleton such as ``True``)."""
    kind: ClassVar[str] = "name"
    name: str
    text: str = ""


@dataclass(frozen=True)
class Chain(_Described):
    """An attribute chain ``root.a.b``."""
    kind: ClassVar[str] = "chain"
    root: str
    attrs: tuple[str, ...]
    text: str = ""


@dataclass(frozen=True)
class CallValue(_Described):
    """A call: its callee's text and the descriptors of the arguments it names."""
    kind: ClassVar[str] = "call"
    callee: str
    keywords: Mapping[str, Value]
    args: tuple[Value, ...]  # the positional arguments, starred ones left out
    spread: bool  # a *args or **kwargs among them: which parameters they fill is not known
    text: str = ""
    awaited: bool = False  # `await f(...)`: what the coroutine f returns, where f is an `async def`

    @property
    def npos(self) -> int:
        return len(self.args)


@dataclass(frozen=True)
class IfExp(_Described):
    """``body if test else orelse``."""
    kind: ClassVar[str] = "ifexp"
    test: str
    body: Value
    orelse: Value
    text: str = ""


@dataclass(frozen=True)
class TupleValue(_Described):
    """A tuple or list display, starred items taken as their value."""
    kind: ClassVar[str] = "tuple"
    items: tuple[Value, ...]
    text: str = ""
    starred: bool = False  # an item is starred: which position holds what is not known


@dataclass(frozen=True)
class LambdaValue(_Described):
    """A lambda passed on: the analysis follows its body where it is called."""
    kind: ClassVar[str] = "lambda"
    params: tuple[str, ...]
    body: Value
    text: str = ""


@dataclass(frozen=True)
class BoolOp(_Described):
    """``left and right`` / ``left or right``, binary as written left to right."""
    kind: ClassVar[str] = "boolop"
    op: str  # "and" or "or"
    left: Value
    right: Value
    text: str = ""


@dataclass(frozen=True)
class ItemOf(_Described):
    """Item ``index`` of an unpacked value: ``a, b = of``."""
    kind: ClassVar[str] = "item"
    index: int
    of: Value
    text: str = ""


@dataclass(frozen=True)
class AttrOf(_Described):
    """Attribute ``attr`` of a call's value: ``self._run(batch).out``."""
    kind: ClassVar[str] = "attr"
    attr: str
    of: CallValue
    text: str = ""


@dataclass(frozen=True)
class Opaque(_Described):
    """Any other expression."""
    kind: ClassVar[str] = "expr"
    text: str = ""


Value = NoneValue | Name | Chain | CallValue | IfExp | TupleValue | LambdaValue | BoolOp | ItemOf | AttrOf | Opaque


def is_name(value: Value | None, names) -> bool:
    """Is ``value`` a bare name among ``names`` (a container, or one name as a string)?"""
    if not isinstance(value, Name):
        return False
    return value.name == names if isinstance(names, str) else value.name in names
