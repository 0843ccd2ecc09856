"""Call resolution: each call site of a function with the functions it can reach.

* ``self.m()`` through the class's whole MRO (mixins in other modules included), ``super().m()``
  from the class after the caller's in the MRO;
* ``self.x.m()`` and other receivers through the receiver's inferred types: an attribute with
  several possible types makes a polymorphic call, one target per type;
* calling a class is calling its ``__init__`` (or the class itself when it has none).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field

from spectrace.tracer.index import FuncInfo, ir_text
from spectrace.tracer.inference import TypeInference

BUILTINS = frozenset(dir(builtins))


@dataclass
class ResolvedCall:
    line: int
    col: int
    text: str
    targets: list[str]  # function/class qualnames (sglang) or external dotted names
    resolution: str  # self, super, local, import, attr-type, constructor, polymorphic, external, unresolved
    external: bool = False
    via: dict[str, list[str]] = field(default_factory=dict)  # target -> receiver classes (inherited methods)


class CallResolver:
    def __init__(self, types: TypeInference):
        self.types = types
        self.symbols = types.symbols

    def calls(self, func_qn: str) -> list[ResolvedCall]:
        """Every call site in ``func_qn``, in source order, resolved (not cached: each is asked once)."""
        mod, local = self.symbols.split(func_qn)
        f = mod.functions.get(local) if mod else None
        if f is None:
            return []
        return [self.resolve_call(mod.module, f, callee, line, col) for line, col, callee, _kw in f.calls]

    def resolve_call(self, module: str, f: FuncInfo, callee, line: int, col: int) -> ResolvedCall:
        text = ir_text(callee) + "()"
        if callee[0] == "a" and callee[1] == ("c", ("n", "super"), ()) and f.cls:
            return self._super_call(module, f, callee[2], line, col, text)
        via: dict = {}  # target method -> the receiver classes it is reached through
        if callee[0] == "a":
            types = set()
            for base in self.types.expr_types_in(module, f, callee[1]):
                found = self.types.member_types(base, callee[2], 0)
                types |= found
                if base[0] == "inst":
                    for t in found:
                        if t[0] == "func":
                            via.setdefault(t[1], set()).add(base[1])
        else:
            types = self.types.expr_types_in(module, f, callee)
        targets, external = [], []
        constructor = False
        for t in sorted(types):
            if t[0] == "func":
                targets.append(t[1])
            elif t[0] == "cls":
                constructor = True
                init = self.symbols.lookup_method(t[1], "__init__")
                targets.append(t[1] if init is None else init)
            elif t[0] == "ext":
                external.append(t[1])
        targets = list(dict.fromkeys(targets))
        if targets:
            how = self._how(callee, f, targets, constructor)
            return ResolvedCall(line, col, text, targets, how,
                                via={t: sorted(via[t]) for t in targets if t in via})
        if external:
            return ResolvedCall(line, col, text, sorted(set(external)), "external", external=True)
        if callee[0] == "n" and callee[1] in BUILTINS:
            return ResolvedCall(line, col, text, [f"builtins.{callee[1]}"], "external", external=True)
        return ResolvedCall(line, col, text, [], "unresolved")

    def _super_call(self, module: str, f: FuncInfo, method: str, line: int, col: int, text: str) -> ResolvedCall:
        cq = f"{module}.{f.cls}"
        target = self.symbols.lookup_method(cq, method, start_after=cq)
        if target:
            return ResolvedCall(line, col, text, [target], "super")
        return ResolvedCall(line, col, text, [], "unresolved")

    @staticmethod
    def _how(callee, f: FuncInfo, targets: list[str], constructor: bool) -> str:
        """How a resolved call was resolved (the edge's ``resolution``)."""
        if len(targets) > 1:
            return "polymorphic"
        if constructor:
            return "constructor"
        if callee[0] == "a" and callee[1] == ("n", "self"):
            return "self"
        if callee[0] == "a":
            return "attr-type"
        if callee[0] == "n" and callee[1] in f.nested:
            return "local"
        return "import"
