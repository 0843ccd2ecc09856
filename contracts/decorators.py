"""What a decorated function runs when it is called: a decorator of the tree that returns a
function it defines (``def deco(fn): def inner(...): ...; return inner``) puts that wrapper in
the function's place, and the wrapper reaches the original by calling the decorator's parameter.
A decorator from outside the tree (``torch.no_grad()``, ``functools.lru_cache``) and one that
returns what it got are taken to leave the function as it is."""

from __future__ import annotations

from dataclasses import dataclass

from spectrace.contracts.facts import FunctionFacts
from spectrace.contracts.values import Name


@dataclass(frozen=True)
class Wrapper:
    """The wrapper a decorator puts in place of the function it decorates."""
    qualname: str  # fully qualified: deco.<locals>.inner
    wrapped: str  # the decorator's parameter: calling it in the wrapper calls the original
    decorator: str  # as written after the @


@dataclass(frozen=True)
class Undecided:
    """A decorator of the tree whose result is not followed."""
    why: str


def wrapper_of(symbols, module: str, f: FunctionFacts) -> Wrapper | Undecided | None:
    """The wrapper that runs when ``f`` (of ``module``) is called, None when it runs itself."""
    found: Wrapper | None = None
    for text in reversed(f.decorators):  # the innermost decorator is applied first
        targets = symbols.resolve_callee(module, f, text) if "(" not in text else []
        got = symbols.function_facts(targets[0]) if len(targets) == 1 else None
        if got is None:
            continue
        deco = got[1]
        param = deco.params[0][0] if deco.params else None
        values = [r.value for r in deco.returns]
        if values and all(isinstance(v, Name) and v.name == param for v in values):
            continue  # it registers the function and returns it
        inner = [f"{targets[0]}.<locals>.{v.name}" for v in values if isinstance(v, Name)]
        if param is None or len(inner) != len(values) or len(set(inner)) != 1 \
                or symbols.function_facts(inner[0]) is None:
            shown = ", ".join(f"`{v.shown}`" for v in values) or "nothing"
            return Undecided(f"{f.qualname} is decorated by @{text}, which returns {shown}")
        if found is not None:
            return Undecided(f"{f.qualname} is wrapped by more than one decorator (@{found.decorator}, @{text})")
        found = Wrapper(inner[0], param, text)
    return found
