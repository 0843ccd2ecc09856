"""Call resolution: each call site of a function with the functions it can reach.

* ``self.m()`` through the class's whole MRO (mixins in other modules included), ``super().m()``
  from the class after the caller's in the MRO;
* ``self`` (``cls``) may be an instance of any subclass: ``self.m()`` also reaches the overrides of
  ``m`` below the caller's class, and ``super().m()`` the ``m`` after the caller's class in each
  subclass's MRO (a mixin's ``super()``: the class it is mixed in front of); resolution ``cha``;
* ``self.x.m()`` and other receivers through the receiver's inferred types: an attribute with
  several possible types makes a polymorphic call, one target per type;
* a receiver known only from an annotation (a base class) may be any subclass: its call also
  reaches every override below that class (class-hierarchy expansion, resolution ``cha``);
* calling a class is calling its ``__init__`` (or the class itself when it has none); ``raise E``
  calls ``E`` (``raise E`` and a bare ``@decorator`` of an outside name are no call: nothing of the
  tree runs);
* a method missing from every in-tree class of the receiver's MRO, when that MRO has a base from
  outside the tree, is that base's method (an external call);
* methods of lists, dicts, tuples and strings are external calls of the builtin type;
* a function handed to a builtin that calls it (``map(f, xs)``, ``filter``, ``sorted(key=f)``,
  ``min``/``max``, ``functools.reduce``) is called there: resolution ``callback``, one call per argument;
* a callee that is a parameter (or a receiver that is one) is typed by the arguments the callers
  pass (``inference``): resolution ``argument``;
* calling a function by its name, when its decorators replace it with a wrapper they define, calls
  the wrapper (resolution ``decorator``); the wrapper reaches the original through the argument
  flow into the decorator's parameter (to every function the decorator decorates: the flow is
  context-insensitive). A call through a parameter is never rerouted to a wrapper, since what the
  decorator received is the original;
* a variable, attribute or parameter holding ``lambda ...: g(...)`` called is a call of ``g``
  (resolution ``lambda``, whenever every value called is a lambda); the lambda's own calls are also
  the defining function's, where it is written;
* reading or writing ``x.p`` (``x`` a name) where ``x``'s class defines property ``p`` runs its getter
  or setter, one node for both (resolution ``property``);
* ``for x in obj`` and ``with obj`` call ``__iter__``/``__next__`` and ``__enter__``/``__exit__``
  (their async forms likewise) of obj's classes when the tree defines them (resolution ``protocol``,
  ``protocol_calls``); nothing is recorded when it does not.
"""

from __future__ import annotations

import builtins
import collections
from dataclasses import dataclass, field

from spectrace.tracer.index import MODULE_FUNC, FuncInfo, ir_text
from spectrace.tracer.inference import CONTAINERS, INSTANCE, TypeInference

BUILTINS = frozenset(dir(builtins))
# Which builtin type a container's method belongs to, by the container tag; the first that has it.
CONTAINER_TYPES = {"seq": (list, set, collections.deque), "map": (dict,), "tup": (tuple,), "str": (str,)}
# Builtins that call the functions they are given: every positional argument (None), or the keywords named.
CALLBACKS = {"builtins.map": None, "builtins.filter": None, "functools.reduce": None,
             "builtins.sorted": ("key",), "builtins.min": ("key",), "builtins.max": ("key",),
             "builtins.list.sort": ("key",)}
PROTOCOLS = {"iter": ("__iter__", "__next__"), "aiter": ("__aiter__", "__anext__"),
             "with": ("__enter__", "__exit__"), "awith": ("__aenter__", "__aexit__")}


@dataclass
class ResolvedCall:
    line: int
    col: int
    text: str
    targets: list[str]  # function/class qualnames (in the tree) or external dotted names
    # self, super, local, import, attr-type, constructor, polymorphic, cha, argument, decorator,
    # lambda, protocol, callback, external, unresolved
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
        self._refined: TypeInference | None = None  # made when a receiver first needs it

    def calls(self, func_qn: str, cha: bool = True) -> list[ResolvedCall]:
        """Every call site in ``func_qn``, in source order, resolved (not cached: each is asked once)."""
        mod, local = self.symbols.split(func_qn)
        f = mod.functions.get(local) if mod else None
        if f is None:
            return []
        self.symbols.store.expect_calls(mod, f)
        out = []
        lambda_nodes = self.types.lambda_nodes
        for line, col, callee, _kw in f.calls:
            if lambda_nodes and (line, col) in f.lambda_sites:
                continue  # the lambda's call, not its scope's
            with self.types.reading_at(f, line):  # a dict's entry as the call finds it there
                call = self.resolve_call(mod.module, f, callee, line, col, cha)
            if (line, col) in f.deco_sites:  # `@factory(...)` applied: kept only when it reaches the tree
                if call.external or call.resolution == "unresolved":
                    continue
                call.text = ir_text(callee) + "(<decorated>)"
                call.resolution = "decorator" if len(call.targets) == 1 else call.resolution
            elif call.external and (line, col) in f.implicit_sites:
                continue  # `raise ValueError`, `@staticmethod`: no call written, none into the tree
            out.append(call)
            with self.types.reading_at(f, line):
                out += self.callback_calls(mod.module, f, call, line, col)
        return out + self.protocol_calls(mod.module, f) + self.property_calls(mod.module, f)

    def callback_calls(self, module: str, f: FuncInfo, call: ResolvedCall, line: int, col: int) -> list[ResolvedCall]:
        """The functions a builtin given them calls (``map(f, xs)``, ``sorted(xs, key=f)``): one call
        per callable argument, resolution ``callback``."""
        if not call.external or len(call.targets) != 1 or call.targets[0] not in CALLBACKS:
            return []
        pos, kws = f.args.get((line, col), ((), ()))
        takes = CALLBACKS[call.targets[0]]
        args = [a for a in pos if a[0] != "*"] if takes is None else [a for k, a in kws if k in takes]
        out = []
        for arg in args:
            targets = []
            for t in sorted(self.types.expr_types_in(module, f, arg), key=repr):
                if t[0] == "func":
                    targets.append(t[1])
                elif t[0] == "cls":
                    init = self.symbols.lookup_method(t[1], "__init__")
                    targets += [init] if init else []
                elif t[0] == "lambda":
                    targets += sorted(x[1] for x in t[1] if x[0] == "func")
            if targets:
                out.append(ResolvedCall(line, col, f"{call.text[:-2]}({ir_text(arg)})", list(dict.fromkeys(targets)),
                                        "callback"))
        return out

    def property_calls(self, module: str, f: FuncInfo) -> list[ResolvedCall]:
        """``x.p`` read or written, where ``x``'s class defines property ``p``: its getter or setter
        runs (both are the property's node); once per name, attribute and direction."""
        out = []
        names = self.symbols.texts.property_names() if f.uses else frozenset()
        for (name, attr, store), (line, col) in f.uses.items():
            if attr not in names:
                continue
            targets: list[str] = []
            via: dict = {}
            for t in sorted(self.types.expr_types_in(module, f, ("n", name)), key=repr):
                if t[0] not in INSTANCE:
                    continue
                found = self.symbols.lookup_method(t[1], attr)
                info = self.symbols.func(found) if found else None
                if info is not None and info.kind == "property":
                    targets.append(found)
                    via.setdefault(found, set()).add(t[1])
            if targets:
                text = f"{name}.{attr}" + (" = ..." if store else "")
                targets = list(dict.fromkeys(targets))
                out.append(ResolvedCall(line, col, text, targets, "property",
                                        via={t: sorted(v) for t, v in via.items()}))
        return out

    def protocol_calls(self, module: str, f: FuncInfo) -> list[ResolvedCall]:
        """``for``/``with`` over objects whose classes define the protocol's methods in the tree."""
        out = []
        for line, col, kind, ir in f.protocols:
            targets = []
            for t in sorted(self.types.expr_types_in(module, f, ir), key=repr):
                if t[0] not in INSTANCE:
                    continue
                for m in PROTOCOLS[kind]:
                    found = self.symbols.lookup_method(t[1], m)
                    if found:
                        targets.append(found)
                if kind in ("iter", "aiter"):  # __next__ of what __iter__ returns
                    it = self.symbols.lookup_method(t[1], PROTOCOLS[kind][0])
                    for r in (self.types.return_types(it) if it else ()):
                        nxt = self.symbols.lookup_method(r[1], PROTOCOLS[kind][1]) if r[0] in INSTANCE else None
                        if nxt:
                            targets.append(nxt)
            targets = list(dict.fromkeys(targets))
            if targets:
                out.append(ResolvedCall(line, col, f"{kind.lstrip('a')} {ir_text(ir)}", targets, "protocol"))
        return out

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
            return self._super_call(module, f, callee[2], line, col, text, cha)
        via: dict = {}  # target method -> the receiver classes it is reached through
        expanded: list[str] = []  # targets only class-hierarchy expansion reaches
        external = []
        if callee[0] == "a":
            types = set()
            meth = callee[2]
            for base in self._receiver_types(module, f, callee[1], meth, cha):
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
                    if cha and (base[0] == "decl" or self._own_receiver(module, f, callee[1], base)):
                        expanded += self._overrides(base[1], meth, via)
                elif cha and base[0] == "cls" and self._own_receiver(module, f, callee[1], base):
                    expanded += self._overrides(base[1], meth, via)
        else:
            types = self.types.expr_types_in(module, f, callee)
        targets = []
        constructor = decorated = False
        # a call of a lambda reaches what its body calls: said so (`lambda`), even where the lambda
        # came through a parameter, since those calls are also the lambda's defining function's
        through_lambda = bool(types) and all(t[0] == "lambda" for t in types)
        argument = self._through_parameter(module, f, callee)
        for t in sorted(types, key=repr):
            inner = t[1] if t[0] == "lambda" else (t,)
            for t in sorted(inner, key=repr):
                if t[0] == "func":
                    wrappers = None if argument else self.types.decorated(t[1])
                    decorated |= bool(wrappers)
                    targets += sorted(w[1] for w in wrappers) if wrappers else [t[1]]
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
            if through_lambda or self.types.lambda_nodes and all(".<lambda" in t for t in targets):
                how = "lambda"
            elif len(targets) == 1 and how != "cha":
                how = "argument" if argument else "decorator" if decorated else how
            return ResolvedCall(line, col, text, targets, how,
                                via={t: sorted(via[t]) for t in targets if t in via})
        if external:
            return ResolvedCall(line, col, text, sorted(set(external)), "external", external=True)
        if callee[0] == "n" and callee[1] in BUILTINS:
            return ResolvedCall(line, col, text, [f"builtins.{callee[1]}"], "external", external=True)
        return ResolvedCall(line, col, text, [], "unresolved")

    def _receiver_types(self, module: str, f: FuncInfo, receiver, meth: str, cha: bool) -> set:
        """The receiver's types; where an annotation-only class would be expanded to overrides,
        first what the callers pass in its place (``TypeInference.refined_param``)."""
        types = self.types.expr_types_in(module, f, receiver)
        if cha and any(t[0] == "decl" and t[1] in self.types.param_decls and self._overrides(t[1], meth, {})
                       for t in types):
            if self._refined is None:
                self._refined = TypeInference(self.symbols, refining=self.types)
            types = self._refined.expr_types_in(module, f, receiver) or types
        return types

    def _through_parameter(self, module: str, f: FuncInfo, callee, hops: int = 0) -> bool:
        """The callee, or its receiver's root name, is a parameter typed by its arguments."""
        root = callee
        while root[0] in ("a", "s", "it", "ix"):
            root = root[1]
        if root[0] != "n" or root[1] in ("self", "cls") or hops > 4:
            return False
        scope = f
        summary = self.symbols.store.module(module)
        while scope is not None:
            for pname, pann in scope.params:
                if pname.lstrip("*") == root[1]:
                    return pann is None or (self.types._vague(pann) and not
                                            self.types.annotation_types(module, pann, scope))
            values = [v for t, v, *_ in scope.assigns if t == root]
            if values:  # a local: from a parameter when every value it is assigned comes from one
                return all(self._through_parameter(module, scope, v, hops + 1) for v in values)
            if root[1] in scope.nested:
                return False
            scope = summary.functions.get(scope.parent) if scope.parent else None
        return False

    @staticmethod
    def _own_receiver(module: str, f: FuncInfo, receiver, base) -> bool:
        """``self`` (or ``cls``) of the caller's own class: at run time it may be any subclass."""
        return (f.cls is not None and receiver[0] == "n" and receiver[1] in ("self", "cls")
                and base[1] == f"{module}.{f.cls}")

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

    def _super_call(self, module: str, f: FuncInfo, method: str, line: int, col: int, text: str,
                    cha: bool = True) -> ResolvedCall:
        """``super().m()``: the next ``m`` after the caller's class in the MRO of the instance, which
        may be a subclass whose MRO puts another class next (a mixin's super() reaching a sibling)."""
        cq = f"{module}.{f.cls}"
        target = self.symbols.lookup_method(cq, method, start_after=cq)
        exact = [target] if target else []
        via: dict = {}
        for sub in (self.symbols.subclasses(cq) if cha else ()):
            t = self.symbols.lookup_method(sub, method, start_after=cq)
            if t and t not in exact:
                via.setdefault(t, set()).add(sub)
        targets = exact + sorted(via)
        if not targets:
            return ResolvedCall(line, col, text, [], "unresolved")
        return ResolvedCall(line, col, text, targets, "cha" if via else "super",
                            via={t: sorted(v) for t, v in via.items()})

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
