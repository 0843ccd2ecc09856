"""Call resolution: each call site of a function with the functions it can reach.

* ``self.m()`` through the class's whole MRO (mixins in other modules included), ``super().m()``
  from the class after the caller's in the MRO;
* ``self.x.m()`` and other receivers through the receiver's inferred types: an attribute with
  several possible types makes a polymorphic call, one target per type;
* a receiver known only from an annotation (a base class) may be any subclass: its call also
  reaches every override below that class (class-hierarchy expansion, resolution ``cha``);
* calling a class is calling its ``__init__`` (or the class itself when it has none); ``raise E``
  calls ``E``;
* a method missing from every in-tree class of the receiver's MRO, when that MRO has a base from
  outside the tree, is that base's method (an external call);
* methods of lists, dicts and tuples are external calls of the builtin type.
"""

from __future__ import annotations

import builtins
import collections
from dataclasses import dataclass, field

from spectrace.tracer.index import MODULE_FUNC, FuncInfo, ir_text
from spectrace.tracer.inference import CONTAINERS, INSTANCE, TypeInference

BUILTINS = frozenset(dir(builtins))
# Which builtin type a container's method belongs to, by the container tag; the first that has it.
CONTAINER_TYPES = {"seq": (list, set, collections.deque), "map": (dict,), "tup": (tuple,)}


@dataclass
class ResolvedCall:
    line: int
    col: int
    text: str
    targets: list[str]  # function/class qualnames (in the tree) or external dotted names
    # self, super, local, import, attr-type, constructor, polymorphic, cha, external, unresolved
    resolution: str
    external: bool = False
    via: dict[str, list[str]] = field(default_factory=dict)  # target -> receiver classes (inherited methods)
    closure: str | None = None  # the nested function the call is written in (closure_calls)

    @property
    def polymorphic(self) -> bool:
        return self.resolution in ("polymorphic", "cha")


class CallResolver:
    def __init__(self, types: TypeInference):
        self.types = types
        self.symbols = types.symbols

    def calls(self, func_qn: str, cha: bool = True) -> list[ResolvedCall]:
        """Every call site in ``func_qn``, in source order, resolved (not cached: each is asked once)."""
        mod, local = self.symbols.split(func_qn)
        f = mod.functions.get(local) if mod else None
        if f is None:
            return []
        return [self.resolve_call(mod.module, f, callee, line, col, cha) for line, col, callee, _kw in f.calls]

    def closure_calls(self, func_qn: str, cha: bool = True) -> list[ResolvedCall]:
        """The call sites of every function nested in ``func_qn`` (closures, local helpers), deepest last."""
        mod, local = self.symbols.split(func_qn)
        f = mod.functions.get(local) if mod else None
        out = []
        for name in (f.nested if f is not None and local != MODULE_FUNC else ()):
            inner = f"{func_qn}.{name}"
            for call in self.calls(inner, cha):
                call.closure = inner
                out.append(call)
            out.extend(self.closure_calls(inner, cha))
        return out

    def resolve_call(self, module: str, f: FuncInfo, callee, line: int, col: int, cha: bool = True) -> ResolvedCall:
        text = ir_text(callee) + "()"
        if callee[0] == "a" and callee[1] == ("c", ("n", "super"), ()) and f.cls:
            return self._super_call(module, f, callee[2], line, col, text)
        via: dict = {}  # target method -> the receiver classes it is reached through
        expanded: list[str] = []  # targets only class-hierarchy expansion reaches
        external = []
        if callee[0] == "a":
            types = set()
            meth = callee[2]
            for base in self.types.expr_types_in(module, f, callee[1]):
                if base[0] in CONTAINERS:
                    owner = next((c for c in CONTAINER_TYPES[base[0]] if hasattr(c, meth)), None)
                    if owner is not None:
                        external.append(f"{owner.__module__}.{owner.__qualname__}.{meth}")
                    continue
                found = self.types.member_types(base, meth, 0)
                types |= found
                if base[0] in INSTANCE:
                    if not found:
                        external += [f"{ext}.{meth}" for ext in self.symbols.external_bases(base[1])]
                    for t in found:
                        if t[0] == "func":
                            via.setdefault(t[1], set()).add(base[1])
                    if cha and base[0] == "decl":
                        expanded += self._overrides(base[1], meth, via)
        else:
            types = self.types.expr_types_in(module, f, callee)
        targets = []
        constructor = False
        for t in sorted(types, key=repr):
            if t[0] == "func":
                targets.append(t[1])
            elif t[0] == "cls":
                constructor = True
                init = self.symbols.lookup_method(t[1], "__init__")
                targets.append(t[1] if init is None else init)
            elif t[0] == "ext":
                external.append(t[1])
        exact = list(dict.fromkeys(targets))
        targets = list(dict.fromkeys(exact + expanded))
        if targets:
            how = "cha" if len(targets) > len(exact) else self._how(callee, f, targets, constructor)
            return ResolvedCall(line, col, text, targets, how,
                                via={t: sorted(via[t]) for t in targets if t in via})
        if external:
            return ResolvedCall(line, col, text, sorted(set(external)), "external", external=True)
        if callee[0] == "n" and callee[1] in BUILTINS:
            return ResolvedCall(line, col, text, [f"builtins.{callee[1]}"], "external", external=True)
        return ResolvedCall(line, col, text, [], "unresolved")

    def _overrides(self, class_qn: str, meth: str, via: dict) -> list[str]:
        """The ``meth`` each subclass of ``class_qn`` resolves to, where that differs from ``class_qn``'s."""
        base = self.symbols.lookup_method(class_qn, meth)
        out = []
        for sub in self.symbols.subclasses(class_qn):
            m = self.symbols.lookup_method(sub, meth)
            if m and m != base:
                out.append(m)
                via.setdefault(m, set()).add(sub)
        return sorted(set(out))

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
