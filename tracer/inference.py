"""Type inference, just far enough to resolve calls: attribute, return and expression types.

* ``self.x`` is typed by *every* assignment to ``x`` in the class and its MRO (``__init__``,
  helpers called from it, any method), by class-level and inline annotations, by properties'
  return annotations, and by constructor calls;
* a function returns what its ``return`` expressions are, else what its annotation says: a
  factory that returns class objects (``return EAGLEWorkerV2``) yields those classes, and
  calling its result yields their instances;
* inside a mixin, ``self.x`` is typed by the classes that mix it in;
* a property that returns ``self.x`` is the receiver class's ``x`` (its annotation where that is unknown);
* a field of a class without ``__init__`` (dataclass, NamedTuple) annotated vaguely (``object``,
  ``Any``) is typed by what its constructor's callers pass;
* ``partial(f, ...)`` is called like ``f``; ``**d`` binds the string keys of a local dict ``d``
  (a display, ``dict(key=...)`` or ``d["key"] = ...``); ``dict(key=...)`` is a display.

* where both are known, the concrete types of assigned values win over annotations (an
  attribute annotated with a base class and assigned a subclass is that subclass);
* containers keep their element types: ``List[Req]``, ``[A(), B()]``, comprehensions, dicts,
  tuples (unpacking), and the builtins that pass elements on (``enumerate``, ``zip``, ...);
  loops and comprehensions bind their variables to elements, ``__iter__``/``__next__`` included;
  what is appended, added, inserted or extended into a local list (in its function) or into
  ``self.x`` (in any method of the class) is among the elements; a literal index into a list or
  tuple display picks its item (``_literal_item``);
* an entry of a dict a name holds (``d["a"]``, ``d["a"]["b"]``, a key held by a global constant)
  is what the dict's writes leave there where it is read (``entries``): a later ``d["a"] = f`` or
  ``d.update(a=f)`` replaces the display's value on the paths after it; a key not known is any.

Types are the tags of ``symbols`` (``("inst", qn)``, ``("cls", qn)``, ...); a query answers the
set of every type its subject can hold. Internal tags, never returned by ``Project``:

* ``("decl", qn)``  an instance known only from an annotation (class-hierarchy expansion applies);
* ``("seq", elems)``, ``("map", keys, values)``, ``("tup", (items...))``  containers, each part a
  frozenset of types; ``("str",)`` a string;
* ``("lambda", targets, results)``  a lambda whose body is a call: what that call reaches and returns.

Parameters without a usable annotation (none, ``Any``, ``Callable``...) are typed by the arguments
their callers pass (context-insensitive: every caller's arguments together). The callers are the
call sites, in the modules whose text names the function (its class for ``__init__``, the outermost
enclosing function for nested ones), that resolve to it, and for ``__init__`` also the calls of a
local name assigned the result of a factory that returns the class (``cls = create(); cls(...)``);
beyond ``MAX_CALLER_MODULES`` such modules
the parameter stays untyped, which keeps the search cheap. Arguments bind by position (after
``self``/``cls`` where the call binds them) and by keyword; extra positional arguments make
``*args`` a sequence, extra keywords make ``**kwargs`` a dict; ``**kwargs`` handed on by a function
that was given it binds what that function's callers pass; other starred arguments bind nothing.

A parameter annotated with a class is that class or any subclass (class-hierarchy expansion). Where
a call would be expanded that way, its receiver is typed again by a refining inference: such a parameter
is then what its callers pass, when every call site passes a known instance of that class (or of a
subclass); one unknown site keeps the annotation.
"""

from __future__ import annotations

import ast
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

from spectrace.tracer.entries import EntryWrite, HeldValue, entry_path, entry_values
from spectrace.tracer.index import MODULE_FUNC, UNKNOWN, FuncInfo, body_pending, dict_displays, expr_ir, ir_text
from spectrace.tracer.symbols import SymbolTable, Type

TYPING_WRAPPERS = {"Optional", "Union", "Annotated", "Final", "ClassVar", "InitVar"}
TYPE_OF = {"Type", "type"}
SEQ_NAMES = {"List", "list", "Sequence", "MutableSequence", "Iterable", "Iterator", "Collection", "Set", "set",
             "FrozenSet", "frozenset", "AbstractSet", "MutableSet", "Deque", "deque", "Generator",
             "AsyncIterator", "AsyncIterable", "AsyncGenerator", "KeysView", "ValuesView"}
MAP_NAMES = {"Dict", "dict", "Mapping", "MutableMapping", "DefaultDict", "defaultdict", "OrderedDict"}
INSTANCE = ("inst", "decl")
CONTAINERS = ("seq", "map", "tup", "str")
STR = frozenset({("str",)})  # a string value (its methods are str's)
HIDDEN = CONTAINERS + ("lambda",)  # internal tags Project never answers
# Annotations that say nothing about a callable's target: such parameters are typed by their arguments.
VAGUE_ANNOTATIONS = {"Callable", "Any", "object", "Awaitable", "Coroutine"}
MAX_CALLER_MODULES = 32  # a parameter whose function's name is in more modules than this stays untyped
EMPTY = frozenset()


# A call of what a call or a subscript gives (``handlers[k](x)``, ``make()(x)``), a comment or a
# line's continuation allowed before its bracket: its callee has no name to search its text for.
_RESULT_CALL = re.compile(rb"[)\]](?:[ \t\r\n\\]|#[^\n]*\n)*\(")


def _names_word(name: str) -> Callable[[FuncInfo, bytes], bool]:
    """Whether a function's text names ``name`` (an identifier), as a relevance test of a walk."""
    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    return lambda _f, text: word.search(text) is not None


def _calls_a_param(f: FuncInfo, text: bytes) -> bool:
    """Whether ``f``'s text may call one of its parameters by name (``def g(cb): cb(x)``)."""
    return any(re.search(rb"\b" + re.escape(p.lstrip("*").encode()) + rb"(?:[ \t\r\n\\]|#[^\n]*\n)*\(", text)
               for p, _a in f.params if p.lstrip("*"))


def _last_name(ir) -> str | None:
    """``f`` of ``f`` or ``x.f``."""
    return ir[1] if ir[0] == "n" else (ir[2] if ir[0] == "a" else None)


def _value_names(values, names) -> dict:
    """name -> the last names of the values it is assigned (``c = pkg.func`` -> {"func"})."""
    table: dict = {}
    for name, value in zip(names, values):
        for v in (value[1] if value[0] == "t|" else (value,)):
            last = _last_name(v)
            if last is not None:
                table.setdefault(name, set()).add(last)
    return table


def seq_of(elems) -> set:
    return {("seq", frozenset(elems))} if elems else set()


def map_of(keys, values) -> set:
    return {("map", frozenset(keys), frozenset(values))} if keys or values else set()


def public(types: set) -> set:
    """Types as ``Project`` answers them: declared instances are instances, containers left out."""
    return {("inst", t[1]) if t[0] == "decl" else t for t in types if t[0] not in HIDDEN}


def prefer_concrete(types: set) -> set:
    """Where an assigned instance type is known, annotation-only instance types are dropped."""
    if any(t[0] == "inst" for t in types):
        return {t for t in types if t[0] != "decl"}
    return types
# Methods that put their last argument (``extend``: its elements) into a list, set or deque.
ADDERS = frozenset({"append", "appendleft", "add", "insert", "extend"})
ADDER_WORDS = ("append", "add", "insert", "extend")  # what the text of a call of one of ADDERS holds
# List methods that move items to other positions, and those that add items at the end.
REORDERS = frozenset({"insert", "pop", "remove", "sort", "reverse", "clear", "__setitem__", "__delitem__"})
GROWS = frozenset({"append", "extend", "__iadd__"})
MAX_DEPTH = 48  # semantic hops (attribute and return lookups); cycles are caught by _memo
# Dict methods that may write an entry without replacing it: (key, value) are their first two arguments.
# (`update` is read as its entry writes, the index's ``stores``; the others write none, or take some away.)
ENTRY_ADDERS = frozenset({"setdefault", "__setitem__"})
_IN_PROGRESS = object()
UNKNOWN_KEY = UNKNOWN  # `{**other}` in a dict display: no key expression


@dataclass
class ReadSite:
    """Where the expression being typed is read: its scope and line (None: anywhere in it)."""
    scope: FuncInfo | None = None
    line: int | None = None


class TypeInference:
    def __init__(self, symbols: SymbolTable, refining: TypeInference | None = None, lambda_nodes: bool = False):
        self.symbols = symbols
        # a lambda is a function of its own (``<lambdaN>``), not the calls its body makes
        self.lambda_nodes = refining.lambda_nodes if refining is not None else lambda_nodes
        self.store = symbols.store
        # With ``refining`` (the plain inference), a parameter annotated with a class takes the
        # concrete classes its callers pass, when every call site is known to pass one
        # (``refined_param``, which asks the plain inference for the sites and the arguments'
        # types); costlier, so asked only where it matters.
        self.plain = refining
        self._attr: dict = {}  # (class_qn, attr) -> types
        self._returns: dict = {}  # func_qn -> types
        self._names: dict = {}  # (module, func qualname, name) -> types of a name in that function
        # id(FuncInfo) -> name -> [(value_ir, annotation_ir)]: structure alone, shared
        self._locals: dict = refining._locals if refining is not None else {}
        # id(FuncInfo) -> ``_additions``, (class qualname, attribute) -> ``_adders_of``
        self._adds: dict = refining._adds if refining is not None else {}
        self._params: dict = {}  # (func_qn, param) -> types of the arguments passed to it
        self._entries: dict = {}  # (module, function, name IR, constant keys, line) -> ``_entry_at``
        # the read being typed, shared with the refining inference (``reading_at``)
        self.site = refining.site if refining is not None else ReadSite()
        # id(FuncInfo) (its locals) or a module (its globals) -> name -> the names of the values it is assigned
        self._aliases: dict = {}
        # a function's text -> whether it calls what a call or a subscript gives (``_RESULT_CALL``),
        # shared with the refining inference: every search for callers tests the texts again
        self._result_calls: dict = refining._result_calls if refining is not None else {}
        self.param_decls: set = set()  # classes some parameter's annotation names (worth refining)
        self._sites: dict = {}  # func_qn -> the call sites that reach it, with their arguments
        self._decorated: dict = {}  # func_qn -> what its decorators turn it into
        # Shared by the three memoised queries above, which recurse into one another.
        self._cycle_hits = 0
        self._active = 0

    # -- memoised queries
    def attr_types(self, class_qn: str, attr: str, depth: int = 0) -> set:
        """Every type ``self.<attr>`` can hold, from all assignments across the class's MRO."""
        return self._memo(self._attr, (class_qn, attr), lambda: self._attr_types(class_qn, attr, depth))

    def return_types(self, func_qn: str, depth: int = 0) -> set:
        """What calling ``func_qn`` returns: its returned expressions, else its annotation."""
        return self._memo(self._returns, func_qn, lambda: self._return_types(func_qn, depth))

    def _memo(self, cache: dict, key, compute: Callable[[], set]) -> set:
        """Memoise a recursive query; a result that met a cycle is cached only at the outermost level.

        Inside a cycle the inner query sees an empty answer; caching that partial answer would make
        it permanent (e.g. ``self.model_worker`` typed without the draft workers).
        """
        hit = cache.get(key, None)
        if hit is _IN_PROGRESS:
            self._cycle_hits += 1
            return set()
        if hit is not None:
            return hit
        cache[key] = _IN_PROGRESS
        self._active += 1
        before = self._cycle_hits
        site = self.site
        saved = site.scope, site.line
        site.scope = site.line = None  # a memoised answer holds anywhere in its scope
        try:
            result = compute()
        finally:
            self._active -= 1
            site.scope, site.line = saved
        if self._cycle_hits == before or self._active == 0:
            cache[key] = result
        else:
            del cache[key]
        return result

    @contextmanager
    def reading_at(self, f: FuncInfo | None, line: int | None):
        """Type what is read at ``line`` of ``f``: a dict's entry is then what its writes before it
        leave there (``entries``)."""
        site = self.site
        saved = site.scope, site.line
        site.scope, site.line = f, line
        try:
            yield
        finally:
            site.scope, site.line = saved

    # -- attributes
    def _attr_types(self, class_qn: str, attr: str, depth: int) -> set:
        types: set = set()
        if depth > MAX_DEPTH:
            return types
        sym = self.symbols
        for c in sym.mro(class_qn):
            info = sym.cls(c)
            if info is None:
                continue
            mod = sym.module_of(c)
            if attr in info.methods:
                f = mod.functions[info.methods[attr]]
                fq = f"{mod.module}.{f.qualname}"
                if f.kind == "property":
                    types |= self._property_types(class_qn, f, fq, mod.module, depth + 1)
                else:
                    types.add(("func", fq))
                break
            if attr in info.annotations:
                declared = self.annotation_types(mod.module, info.annotations[attr])
                if (not declared and self._vague(info.annotations[attr]) and attr in info.field_order
                        and sym.lookup_method(c, "__init__") is None):
                    declared = self.field_args(c, attr, depth + 1)
                types |= declared
            if attr in info.assigns:
                types |= self.expr_types_in(mod.module, None, info.assigns[attr], depth + 1)
            for f in self._adders_of(c, mod, info, attr):
                types |= self._added(mod.module, f, ("a", ("n", "self"), attr), depth)
            for fqn in info.methods.values():
                f = mod.functions.get(fqn)
                if f is None or (body_pending(f) and not self.store.may_name(mod, f, attr)):
                    continue
                for target, value, annot, _line in f.assigns:
                    if target[0] == "a" and target[1] == ("n", "self") and target[2] == attr:
                        if annot is not None:
                            types |= self.annotation_types(mod.module, annot, f)
                        types |= self.expr_types_in(mod.module, f, value, depth + 1)
        types.discard(("none",))
        types = prefer_concrete(types)
        if not types and self._is_mixin(class_qn):
            # `self` inside a mixin is whatever class mixes it in: ask those classes.
            for sub in sym.subclasses(class_qn):
                types |= self.attr_types(sub, attr, depth + 1)
        return types

    def _property_types(self, class_qn: str, f: FuncInfo, fq: str, module: str, depth: int) -> set:
        """A property read on an instance of ``class_qn``: ``return self.x`` is that class's ``x``;
        the annotation only where the returns say nothing."""
        inferred: set = set()
        for r in f.return_exprs:
            if r[0] == "a" and r[1] == ("n", "self"):
                inferred |= self.attr_types(class_qn, r[2], depth + 1)
            else:
                inferred |= self.expr_types_in(module, f, r, depth + 1)
        inferred.discard(("none",))
        return inferred or self.return_types(fq, depth)

    def field_args(self, class_qn: str, attr: str, depth: int = 0) -> set:
        """A field of a class without ``__init__`` (dataclass, NamedTuple): what its constructor's
        callers pass for it, by keyword or by position (fields in MRO order, bases first)."""
        order: list = []
        for c in reversed(self.symbols.mro(class_qn)):
            info = self.symbols.cls(c)
            order += [n for n in (info.field_order if info else ()) if n not in order]
        index = order.index(attr) if attr in order else -1
        out: set = set()
        for module, caller, pos, kws in self.constructor_sites(class_qn, depth):
            for i, a in enumerate(pos):
                if a[0] == "*":
                    break
                if i == index:
                    out |= self.expr_types_in(module, caller, a, depth + 1)
            for key, a in kws:
                if key == attr:
                    out |= self.expr_types_in(module, caller, a, depth + 1)
        out.discard(("none",))
        return out

    def constructor_sites(self, class_qn: str, depth: int = 0) -> list:
        """(module, caller FuncInfo, positional IRs, keyword IRs) for each call of ``class_qn`` with arguments."""
        key = ("ctor", class_qn)
        hit = self._sites.get(key)
        if hit is not None:
            return hit
        self._sites[key] = []
        word = class_qn.rsplit(".", 1)[-1]
        found = [(m, caller, args[0], args[1])
                 for m, caller, callee, last, args in self._calls_with_args(word, relevant=lambda _m: _names_word(word))
                 if last == word and ("cls", class_qn) in self.expr_types_in(m, caller, callee, depth + 1)]
        self._sites[key] = found
        return found

    def _is_mixin(self, class_qn: str) -> bool:
        """A class that defines no __init__ of its own anywhere in its MRO (e.g. Scheduler*Mixin)."""
        return self.symbols.lookup_method(class_qn, "__init__") is None

    # -- annotations
    def annotation_types(self, module: str, ir, func: FuncInfo | None = None) -> set:
        """The instances an annotation admits (``Optional[X]`` -> X; ``Type[X]`` -> the class X)."""
        tag = ir[0]
        if tag == "k":
            if isinstance(ir[1], str):  # a string annotation: parse it and read it as one
                try:
                    parsed = ast.parse(ir[1], mode="eval").body
                except SyntaxError:
                    return set()  # not an expression (free text): it names no type
                return self.annotation_types(module, expr_ir(parsed), func)
            return set()
        if tag == "|":
            return self.annotation_types(module, ir[1], func) | self.annotation_types(module, ir[2], func)
        if tag == "s":
            head = ir[1]
            head_name = head[1] if head[0] == "n" else (head[2] if head[0] == "a" else None)
            if head_name in TYPING_WRAPPERS:
                items = ir[2] if head_name != "Annotated" else ir[2][:1]
                out = set()
                for i in items:
                    out |= self.annotation_types(module, i, func)
                return out
            if head_name in TYPE_OF:
                return {("cls", t[1]) for i in ir[2] for t in self.annotation_types(module, i, func)
                        if t[0] in INSTANCE}
            items = [self.annotation_types(module, i, func) for i in ir[2]]
            if head_name in SEQ_NAMES:
                return seq_of(items[0])
            if head_name in MAP_NAMES and len(items) == 2:
                return map_of(items[0], items[1])
            if head_name in ("Tuple", "tuple"):
                if len(ir[2]) == 2 and ir[2][1] == ("k", None):  # Tuple[X, ...]
                    return seq_of(items[0])
                return {("tup", tuple(frozenset(i) for i in items))} if any(items) else set()
            return set()
        t = self._resolve_name_in(module, func, ir) if func else self.symbols.type_of_expr_static(module, ir)
        if t is None:
            return set()
        if t[0] == "cls":
            return {("decl", t[1])}
        return set()

    def _resolve_name_in(self, module: str, func: FuncInfo, ir) -> Type | None:
        """A name in an annotation inside ``func``: its local imports first, then the module's."""
        if ir[0] == "n":
            f = func
            while f is not None:
                if ir[1] in f.imports:
                    return self.symbols.resolve_import(f.imports[ir[1]])
                f = self.store.module(module).functions.get(f.parent) if f.parent else None
        return self.symbols.type_of_expr_static(module, ir)

    # -- returns
    def _return_types(self, func_qn: str, depth: int) -> set:
        mod, local = self.symbols.split(func_qn)
        f = mod.functions.get(local) if mod else None
        if f is None or depth > MAX_DEPTH:
            return set()
        inferred: set = set()
        returns = f.return_exprs if not body_pending(f) or self.store.may_name(mod, f, "", ("return", "yield")) else ()
        for r in returns:
            inferred |= self.expr_types_in(mod.module, f, r, depth + 1)
        inferred.discard(("none",))
        annotated = self.annotation_types(mod.module, f.returns, f) if f.returns is not None else set()
        # A factory annotated with a base class (Type[BaseSpecWorker]) returns its concrete
        # subclasses: prefer what the returns say whenever they say something.
        result = inferred if inferred else annotated
        if f.name == "__init__":
            result = set()
        return result

    # -- expressions
    def expr_types(self, func_qn: str, ir) -> set:
        """The types of expression ``ir`` as written inside function ``func_qn``."""
        mod, local = self.symbols.split(func_qn)
        f = mod.functions.get(local) if mod else None
        return self.expr_types_in(mod.module, f, ir) if mod else set()

    def expr_types_in(self, module: str, f: FuncInfo | None, ir, depth: int = 0) -> set:
        """The types of expression ``ir`` inside ``f`` of ``module`` (``f`` None: at module level)."""
        if depth > MAX_DEPTH:
            return set()
        tag = ir[0]
        if tag == "k":
            return {("none",)} if ir[1] is None else STR if type(ir[1]) is str else set()
        if tag == "t|":
            out = set()
            for i in ir[1]:
                out |= self.expr_types_in(module, f, i, depth + 1)
            return out
        if tag == "n":
            return self._name_types(module, f, ir[1], depth)
        if tag == "a":
            out = set()
            for base in self.expr_types_in(module, f, ir[1], depth + 1):
                out |= self.member_types(base, ir[2], depth + 1)
            return out
        if tag == "c":
            out = set()
            callee = ir[1]
            if callee == ("n", "super"):
                return set()
            if callee[0] == "a":
                bases = self.expr_types_in(module, f, callee[1], depth + 1)
                for b in bases:
                    if b[0] in CONTAINERS:
                        out |= self._container_method(b, callee[2])
                    else:
                        for t in self.member_types(b, callee[2], depth + 1):
                            out |= self._call_result(t, depth + 1)
                return out
            for t in self.expr_types_in(module, f, callee, depth + 1):
                out |= self._call_result(t, depth + 1)
            return out
        if tag in ("t", "l", "d", "lc", "dc", "it", "ix", "s", "bi"):
            return self._element_expr(module, f, ir, depth)
        if tag == "pa":  # partial(f, ...) is called like f
            callee = self.expr_types_in(module, f, ir[1], depth + 1)
            if ("ext", "functools.partial") in callee:
                return {t for t in self.expr_types_in(module, f, ir[2], depth + 1) if t[0] in ("func", "cls", "lambda")}
            out = set()
            for t in callee:
                out |= self._call_result(t, depth + 1)
            return out
        if tag == "def":  # the function (or class) a decorator is applied to
            summary = self.store.module(module)
            return {("cls" if ir[1] in summary.classes else "func", f"{module}.{ir[1]}")}
        if tag == "lam":
            if self.lambda_nodes:
                qualname = self.store.module(module).lambdas.get(ir[3])
                return {("func", f"{module}.{qualname}")} if qualname else set()
            return self._lambda_types(module, f, ir, depth)
        return set()

    def _lambda_types(self, module: str, f: FuncInfo | None, ir, depth: int) -> set:
        """A lambda whose body is a call: the call's targets and results (its own parameters unknown)."""
        body, params = ir[1], ir[2]
        if body[0] != "c":
            return set()
        root = body[1]
        while root[0] in ("a", "c"):
            root = root[1]
        if root[0] == "n" and root[1] in params:
            return set()
        targets = self.expr_types_in(module, f, body[1], depth + 1)
        targets = frozenset(t for t in targets if t[0] in ("func", "cls"))
        if not targets:
            return set()
        results = frozenset(self.expr_types_in(module, f, body, depth + 1))
        return {("lambda", targets, results)}

    # -- containers and their elements
    def _element_expr(self, module: str, f: FuncInfo | None, ir, depth: int) -> set:
        tag = ir[0]

        def types(x):
            return self.expr_types_in(module, f, x, depth + 1)

        if tag == "t":
            items = [frozenset(types(i)) for i in ir[1]]
            return {("tup", tuple(items))} if any(items) else set()
        if tag == "l":  # a display is a list (or set) even with no element of a known type
            return {("seq", frozenset(set().union(*(types(i) for i in ir[1]))))}
        if tag == "d":
            return {("map", frozenset(set().union(*(types(k) for k in ir[1] if k != UNKNOWN_KEY))),
                     frozenset(set().union(*(types(v) for v in ir[2]))))}
        if tag == "lc":
            return seq_of(types(ir[1]))
        if tag == "dc":
            return map_of(types(ir[1]), types(ir[2]))
        if tag == "it":
            return self.elements(types(ir[1]), depth)
        if tag == "ix":
            return self.item(types(ir[1]), ir[2], depth)
        if tag == "s":
            out = set()
            index = self._constant(module, f, ir[2][0]) if len(ir[2]) == 1 else None
            if index is not None and index[0] == "k" and type(index[1]) is int:
                picked = self._literal_item(module, f, ir[1], index[1])
                if picked is not None:  # `[f, g][0]`, `HANDLERS[0]`: that item alone
                    return set().union(*(types(i) for i in picked))
            picked = self._entry_at(module, f, ir)
            if picked is not None:  # `d["a"]`, `d["a"][k]` of a dict a name holds: what its writes leave there
                return set().union(*(self.expr_types_in(h.module, h.scope, h.ir, depth + 1) for h in picked))
            for t in types(ir[1]):
                if t[0] == "cls":  # Generic[...] alias of a class: the class itself
                    out.add(t)
                elif t[0] == "tup" and index is not None and index[0] == "k" and type(index[1]) is int:
                    out |= self.item({t}, index[1], depth)
                elif t[0] == "map":
                    out |= t[2]
                elif t[0] in INSTANCE:
                    m = self.symbols.lookup_method(t[1], "__getitem__")
                    out |= self.return_types(m, depth + 1) if m else set()
                else:
                    out |= self.elements({t}, depth)
            return out
        # ("bi", name, args): builtins that pass their arguments' elements on
        name, args = ir[1], ir[2]
        if not args:
            return set()
        if name == "zip":
            cols = [frozenset(self.elements(types(a), depth)) for a in args]
            return seq_of({("tup", tuple(cols))}) if any(cols) else set()
        first = self.elements(types(args[-1] if name == "filter" else args[0]), depth)
        if name == "enumerate":
            return seq_of({("tup", (EMPTY, frozenset(first)))}) if first else set()
        if name == "next":
            return first
        if name == "map":  # what the function (or functions: the first callable) returns for each element
            out = set()
            for a in args:
                for t in types(a):
                    out |= self._call_result(t, depth + 1)
            return seq_of(out)
        return seq_of(first)

    def _held_values(self, module: str, f: FuncInfo | None, ir, displays: tuple) -> tuple | None:
        """(values, scopes) of a display written there (a tag of ``displays``; no scope) or of a name:
        a local's values and its function, a global's value and its module's functions; else None."""
        if ir[0] in displays:
            return [ir], []
        if ir[0] == "n" and f is not None and self._local_assigns(f, ir[1]):
            return [v for v, _a, _l in self._local_assigns(f, ir[1])], [f]
        if ir[0] == "n":
            t = self.symbols.resolve_symbol(module, ir[1])
            if t is None or t[0] != "global":
                return None
            summary = self.store.module(t[1])
            return [summary.globals[t[2]]], list(summary.functions.values())
        return None

    def _literal_item(self, module: str, f: FuncInfo | None, ir, i: int) -> list | None:
        """The ``i``-th item of a list or tuple display, written there or held by a name every value
        of which is one and on which no method that reorders it (nor, for a negative ``i``, one that
        grows it) is called in its scope (a local's function, a global's module); else None."""
        held = self._held_values(module, f, ir, ("l", "t"))
        if held is None:
            return None
        values, scopes = held
        changes = REORDERS | (GROWS if i < 0 else frozenset())
        for scope in scopes:
            if any(c[0] == "a" and c[1] == ir and c[2] in changes for _l, _c, c, _k in scope.calls):
                return None
        picked = []
        for v in values:
            if v[0] not in ("l", "t") or not -len(v[1]) <= i < len(v[1]) or any(x[0] == "*" for x in v[1]):
                return None
            picked.append(v[1][i])
        return picked

    def _constant(self, module: str, f: FuncInfo | None, ir):
        """A constant index as written, or held by a global (of this module or imported) assigned
        only that constant; else the index as it is."""
        if ir[0] != "n":
            return ir
        scope = f
        while scope is not None:  # a parameter or local of that name shadows any global
            if any(p.lstrip("*") == ir[1] for p, _a in scope.params) or self._local_assigns(scope, ir[1]):
                return ir
            scope = self.store.module(module).functions.get(scope.parent) if scope.parent else None
        t = self.symbols.resolve_symbol(module, ir[1])
        if t is not None and t[0] == "global":
            value = self.store.module(t[1]).globals[t[2]]
            return value if value[0] == "k" else ir
        return ir

    def _entry_at(self, module: str, f: FuncInfo | None, ir) -> list[HeldValue] | None:
        """What ``d[k1]...[kn]`` may hold where it is read (a key not constant: any), or None where
        the name may hold something else than a dict display or its writes are not known
        (``_entry_writes``)."""
        got = entry_path(ir)
        if got is None:
            return None
        root, keys = got
        path = tuple(self._key(module, f, k) for k in keys)
        line = self.site.line if f is not None and self.site.scope is f else None
        site = (module, f.qualname if f is not None else None, root, path, line)
        picked = self._entries.get(site, _IN_PROGRESS)
        if picked is _IN_PROGRESS:  # asked for every call through the subscript: once each
            writes = self._entry_writes(module, f, root[1])
            branches = f.branches if f is not None else []
            picked = None if writes is None else entry_values(writes, path, line, branches)
            self._entries[site] = picked
        return picked

    def _entry_writes(self, module: str, f: FuncInfo | None, name: str, hops: int = 0) -> list[EntryWrite] | None:
        """The writes to the dict ``name`` holds where ``f`` reads it: a local's in ``f`` (ordered)
        and in the functions nested in it; a global's at module level (ordered where ``f`` is the
        module's code) and in the module's functions. None for a parameter or an enclosing
        function's local, and where the name may hold something else than a dict display (a list,
        a call's result...: typed as a whole) or an entry of such a dict (``inner = d["x"]``)."""
        summary = self.store.module(module)
        local = self._local_assigns(f, name) if f is not None and f.qualname != MODULE_FUNC else ()
        if f is not None and any(p.lstrip("*") == name for p, _a in f.params):
            return None
        scope = summary.functions.get(f.parent) if f is not None and f.parent else None
        while scope is not None:  # a closure's variable: its writes are not followed
            if any(p.lstrip("*") == name for p, _a in scope.params) or self._local_assigns(scope, name):
                return None
            scope = summary.functions.get(scope.parent) if scope.parent else None
        if local:
            if not all(dict_displays(v) or self._an_entry(module, f, v, name, hops) for v, _a, _l in local):
                return None
            inner = self._nested_scopes(summary, f)
            writes = [EntryWrite(line, (), value, module, f, True) for value, _a, line in local]
            writes += self._stores_of(module, f, name, f, True)
            for g in inner:
                if not self._local_assigns(g, name):
                    writes += self._stores_of(module, g, name, g, False)
            return writes
        t = self.symbols.resolve_symbol(module, name)
        if t is None or t[0] != "global":
            return None
        held = self.store.module(t[1])
        if not dict_displays(held.globals[t[2]]):
            return None
        top = held.functions.get(MODULE_FUNC)
        scopes = [g for _qn, g in self.store.functions_naming(held, t[2])]
        here = top is not None and f is top
        own = self._stores_of(t[1], top, t[2], f, True) if here else []
        # a global bound once and given no entry at module level has no ordered bind: its one value
        bind = EntryWrite(0, (), held.globals[t[2]], t[1], f if here else None, here)
        writes = own if any(not w.path for w in own) else [bind] + own
        for g in scopes:
            if g is not top and not self._local_assigns(g, t[2]) and all(p.lstrip("*") != t[2] for p, _a in g.params):
                writes += self._stores_of(t[1], g, t[2], g, False)
        return writes

    def _an_entry(self, module: str, f: FuncInfo, ir, name: str, hops: int) -> bool:
        """``ir`` is an entry of another dict of ``f``'s that a display holds (the same object: what
        is written through either name is read through both)."""
        got = entry_path(ir)
        return (got is not None and got[0][1] != name and hops < 4
                and self._entry_writes(module, f, got[0][1], hops + 1) is not None)

    def _stores_of(self, module: str, g: FuncInfo, name: str, scope: FuncInfo | None,
                   ordered: bool) -> list[EntryWrite]:
        """``g``'s writes to the dict ``name`` holds (their keys constant, or held by a global constant)."""
        out = []
        for line, target, value in g.stores:
            got = entry_path(target) if target[0] == "s" else ((target, ()) if target[0] == "n" else None)
            if got is None or got[0][1] != name:
                continue
            out.append(EntryWrite(line, tuple(self._key(module, g, k) for k in got[1]), value, module, scope, ordered))
        for line, col, callee, _kw in g.calls:  # `d.setdefault(k, v)`: v where k held nothing
            got = entry_path(("s", callee[1], (UNKNOWN,))) if callee[0] == "a" and callee[2] in ENTRY_ADDERS else None
            pos = g.args.get((line, col), ((), ()))[0]
            if got is not None and got[0][1] == name and len(pos) == 2 and all(a[0] != "*" for a in pos):
                keys = tuple(self._key(module, g, k) for k in got[1][:-1]) + (self._key(module, g, pos[0]),)
                out.append(EntryWrite(line, keys, pos[1], module, scope, False))
        return out

    def _key(self, module: str, f: FuncInfo | None, ir):
        """A subscript's key as a constant (written, or held by a global), else UNKNOWN."""
        k = self._constant(module, f, ir)
        return k if k[0] == "k" and type(k[1]) in (str, int) else UNKNOWN

    def _nested_scopes(self, summary, f: FuncInfo) -> list[FuncInfo]:
        out = []
        for n in f.nested:
            g = summary.functions.get(f"{f.qualname}.{n}")
            if g is not None:
                out += [g] + self._nested_scopes(summary, g)
        return out

    def elements(self, types: set, depth: int = 0) -> set:
        """What iterating over a value of ``types`` yields (``__iter__``/``__next__`` for classes)."""
        out = set()
        for t in types:
            if t[0] == "seq":
                out |= t[1]
            elif t[0] == "map":
                out |= t[1]
            elif t[0] == "tup":
                out = out.union(*t[1])
            elif t[0] in INSTANCE and depth <= MAX_DEPTH:
                it = self.symbols.lookup_method(t[1], "__iter__")
                for r in (self.return_types(it, depth + 1) if it else ()):
                    if r[0] in CONTAINERS:
                        out |= self.elements({r}, depth + 1)
                    elif r[0] in INSTANCE:
                        nxt = self.symbols.lookup_method(r[1], "__next__")
                        out |= self.return_types(nxt, depth + 1) if nxt else set()
        return out

    def item(self, types: set, i: int, depth: int = 0) -> set:
        """The ``i``-th item of a value of ``types`` (tuple unpacking)."""
        out = set()
        for t in types:
            if t[0] == "tup":
                out |= t[1][i] if i < len(t[1]) else set()
            else:
                out |= self.elements({t}, depth)
        return out

    @staticmethod
    def _container_method(t, name: str) -> set:
        """What a method of a container returns, for the methods that hand out its elements."""
        if t[0] == "map":
            if name == "keys":
                return seq_of(t[1])
            if name == "values":
                return seq_of(t[2])
            if name == "items":
                return seq_of({("tup", (t[1], t[2]))})
            if name in ("get", "pop", "setdefault", "__getitem__"):
                return set(t[2])
            if name == "copy":
                return {t}
        if t[0] == "seq":
            if name in ("pop", "popleft", "__getitem__"):
                return set(t[1])
            if name == "copy":
                return {t}
        return set()

    def _name_types(self, module: str, f: FuncInfo | None, name: str, depth: int) -> set:
        if f is None:
            return self._scope_name_types(module, f, name, depth)
        # locals are re-asked for every call site that mentions them: memoise per function
        return self._memo(self._names, (module, f.qualname, name),
                          lambda: self._scope_name_types(module, f, name, depth))

    def _scope_name_types(self, module: str, f: FuncInfo | None, name: str, depth: int) -> set:
        """A name looked up the way Python does: enclosing functions' scopes, then the module."""
        summary = self.store.module(module)
        scope = f
        while scope is not None:
            if name == "self" and scope.cls is not None and scope.kind != "staticmethod":
                cq = f"{module}.{scope.cls}"
                return {("cls", cq)} if scope.kind == "classmethod" else {("inst", cq)}
            if name == "cls" and scope.cls is not None:
                return {("cls", f"{module}.{scope.cls}")}
            for pname, pann in scope.params:
                if pname.lstrip("*") == name:
                    declared = self.annotation_types(module, pann, scope) if pann is not None else set()
                    self.param_decls.update(t[1] for t in declared if t[0] == "decl")
                    if declared and self.plain is not None:
                        return self.refined_param(f"{module}.{scope.qualname}", pname, declared, depth + 1)
                    if declared or not self._vague(pann):
                        return declared
                    return self.param_types(f"{module}.{scope.qualname}", pname, depth + 1)
            local = self._local_assigns(scope, name)
            if local:
                out = set()
                for value, annot, line in local:
                    if annot is not None:
                        out |= self.annotation_types(module, annot, scope)
                    with self.reading_at(scope, line):  # a dict's entry as it is where it is read
                        out |= self.expr_types_in(module, scope, value, depth + 1)
                out |= self._added(module, scope, ("n", name), depth)
                return prefer_concrete(out)
            if name in scope.nested:
                return {("func", f"{module}.{scope.qualname}.{name}")}
            if name in scope.imports:
                t = self.symbols.resolve_import(scope.imports[name])
                return {t} if t else set()
            scope = summary.functions.get(scope.parent) if scope.parent else None
        t = self.symbols.resolve_symbol(module, name)
        if t is None:
            return set()
        if t[0] == "global":
            return self._global_types(t, depth)
        return {t}

    @staticmethod
    def _vague(ann) -> bool:
        """No annotation, or one naming no class a call could reach (``Callable[..]``, ``Any``)."""
        if ann is None:
            return True
        head = ann[1] if ann[0] == "s" else ann
        while head[0] == "s":
            head = head[1]
        name = head[1] if head[0] == "n" else (head[2] if head[0] == "a" else None)
        if name in ("Optional",) and ann[0] == "s":
            return all(TypeInference._vague(i) for i in ann[2])
        return name in VAGUE_ANNOTATIONS

    # -- argument flow
    def param_types(self, func_qn: str, param: str, depth: int = 0) -> set:
        """The types of the arguments every caller passes to ``param`` of ``func_qn``
        (``*args``: a sequence of the extra positional ones, ``**kwargs``: a dict of the extra keywords)."""
        return self._memo(self._params, (func_qn, param), lambda: self._param_types(func_qn, param, depth))

    def _param_types(self, func_qn: str, param: str, depth: int) -> set:
        if depth > MAX_DEPTH:
            return set()
        f = self.symbols.func(func_qn)
        if f is None:
            return set()
        names = [p for p, _a in f.params]
        npos = f.npos if f.npos >= 0 else len([p for p in names if not p.startswith("*")])
        positional = names[:npos]
        named = {p for p in names if not p.startswith("*")}
        out: set = set()
        extra_pos: set = set()
        extra_kw: set = set()
        for module, caller, pos, kws, offset in self.call_sites(func_qn, depth):
            def types(x, module=module, caller=caller):
                return self.expr_types_in(module, caller, x, depth + 1)

            starred = False
            for i, a in enumerate(pos):
                if a[0] == "*":
                    starred = True  # positions after a *args are unknown
                if starred:
                    break
                j = i + offset
                if j < len(positional):
                    if positional[j] == param:
                        out |= types(a)
                elif param.startswith("*") and not param.startswith("**"):
                    extra_pos |= types(a)
            for key, a in kws:
                if key == "**" and a[0] == "n" and param in named:  # `**d`: the entries d is given
                    for k, v in self._dict_entries(caller, a[1]):
                        if k == param:
                            out |= types(v)
                    if caller is not None and ("**" + a[1]) in (p for p, _a in caller.params):
                        out |= self._forwarded(module, caller, param, depth)
                elif key == param and key in named:
                    out |= types(a)
                elif key != "**" and key not in named and param.startswith("**"):
                    extra_kw |= types(a)
        if param.startswith("**"):
            return map_of(set(), extra_kw)
        if param.startswith("*"):
            return seq_of(extra_pos)
        out.discard(("none",))
        return out

    def _added(self, module: str, f: FuncInfo, holder, depth: int) -> set:
        """A sequence of what ``f`` adds to ``holder`` (``x.append(v)``, ``x.extend(vs)``, ...)."""
        elems: set = set()
        for line, col, callee, _kw in self._additions(f).get(holder, ()):
            pos = f.args.get((line, col), ((), ()))[0]
            if not pos or pos[-1][0] == "*":
                continue
            found = self.expr_types_in(module, f, pos[-1], depth + 1)
            elems |= self.elements(found, depth + 1) if callee[2] == "extend" else found
        return seq_of(elems)

    def _adders_of(self, class_qn: str, mod, info, attr: str) -> list:
        """The methods of the class that add to ``self.<attr>``, in their order (a method whose
        text does not name ``attr`` is not asked: its body may not be parsed yet)."""
        key = (class_qn, attr)
        found = self._adds.get(key)
        if found is None:
            holder = ("a", ("n", "self"), attr)
            found = self._adds[key] = [
                f for f in (mod.functions.get(q) for q in info.methods.values())
                if f is not None and (not body_pending(f) or self.store.may_name(mod, f, attr, ADDER_WORDS))
                and holder in self._additions(f)]
        return found

    def _additions(self, f: FuncInfo) -> dict:
        """The calls in ``f`` that add to a name or an attribute, by what they add to."""
        table = self._adds.get(id(f))
        if table is None:
            table = {}
            for call in f.calls:
                callee = call[2]
                if callee[0] == "a" and callee[2] in ADDERS and callee[1][0] in ("n", "a"):
                    table.setdefault(callee[1], []).append(call)
            self._adds[id(f)] = table
        return table

    def _forwarded(self, module: str, caller: FuncInfo, param: str, depth: int) -> set:
        """``f(**kwargs)`` in ``caller``, whose ``**kwargs`` it was given: what ``caller``'s own
        callers pass as the keyword ``param`` (one it has no parameter of its own for)."""
        own = {p for p, _a in caller.params if not p.startswith("*")}
        out: set = set()
        if param in own:
            return out
        for m, site, _pos, kws, _offset in self.call_sites(f"{module}.{caller.qualname}", depth + 1):
            for key, a in kws:
                if key == param:
                    out |= self.expr_types_in(m, site, a, depth + 1)
        return out

    def refined_param(self, func_qn: str, param: str, declared: set, depth: int) -> set:
        """``declared`` with its annotation-only classes replaced by the instances every caller
        passes, when each call site passes instances of those classes (or subclasses); else as is."""
        decls = {t[1] for t in declared if t[0] == "decl"}
        passed = self._passed_per_site(func_qn, param, depth) if decls else None
        if not passed:
            return declared
        out = {t for t in declared if t[0] != "decl"}
        for types in passed:
            types = types - {("none",)}
            if not types or any(t[0] != "inst" or not decls & set(self.symbols.mro(t[1])) for t in types):
                return declared
            out |= types
        return out

    def _passed_per_site(self, func_qn: str, param: str, depth: int) -> list[set] | None:
        """The types each call site of ``func_qn`` passes to named parameter ``param``; None when a
        site's value is unknown (a starred argument, an unknown ``**`` dict, the default left)."""
        f = self.symbols.func(func_qn)
        if f is None:
            return None
        names = [p for p, _a in f.params]
        npos = f.npos if f.npos >= 0 else len([p for p in names if not p.startswith("*")])
        positional = names[:npos]
        out = []
        plain = self.plain or self
        for module, caller, pos, kws, offset in plain.call_sites(func_qn, depth):
            irs = []
            for i, a in enumerate(pos):
                if a[0] == "*":
                    return None
                if i + offset < len(positional) and positional[i + offset] == param:
                    irs.append(a)
            for key, a in kws:
                if key == "**":
                    entries = self._dict_entries(caller, a[1]) if a[0] == "n" else []
                    if not entries:
                        return None
                    irs += [v for k, v in entries if k == param]
                elif key == param:
                    irs.append(a)
            if not irs:
                return None
            out.append(set().union(*(plain.expr_types_in(module, caller, a, depth + 1) for a in irs)))
        return out

    @staticmethod
    def _dict_entries(f: FuncInfo | None, name: str) -> list:
        """(key, value IR) of local dict ``name``: string keys of its displays (``dict(key=v)``
        included) and of `name["key"] = v`."""
        out = []
        for target, value, _annot, _line in (f.assigns if f is not None else ()):
            if target[0] == "s" and target[1] == ("n", name) and target[2][0][0] == "k":
                out.append((target[2][0][1], value))
            elif target == ("n", name) and value[0] == "d":
                out += [(k[1], v) for k, v in zip(value[1], value[2]) if k[0] == "k" and type(k[1]) is str]
        return out

    def call_sites(self, func_qn: str, depth: int = 0) -> list:
        """(module, caller FuncInfo, positional IRs, keyword IRs, how many params the call binds
        itself) for each call with arguments that resolves to ``func_qn``."""
        hit = self._sites.get(func_qn)
        if hit is not None:
            return hit
        self._sites[func_qn] = []  # a search that reaches itself finds nothing more
        mod, local = self.symbols.split(func_qn)
        f = mod.functions.get(local) if mod else None
        if f is None:
            return []
        top = f
        while top.parent:
            top = mod.functions[top.parent]
        word = f.cls.rsplit(".", 1)[-1] if f.name == "__init__" and f.cls else top.name
        # a lambda has no name to call it by: any call in its module (or its enclosing function's
        # callers' modules) may reach it
        anonymous = f.name.startswith("<lambda")
        found = []
        callers = None if anonymous else (lambda m: self._may_call(m, word, f.name))
        for m, caller, callee, last, args in self._calls_with_args(word, mod.module if anonymous else None, callers):
            if (not anonymous and last is not None and last != f.name and not (f.name == "__init__" and last == word)
                    and not (callee[0] == "n" and self._alias_of(m, caller, callee[1], f.name))):
                continue
            offset = self._binds(m, caller, callee, func_qn, f, depth)
            if offset is not None:
                found.append((m, caller, args[0], args[1], offset))
        if not found and not anonymous and f.name != "__init__":
            # called by no name it is given: maybe through a parameter it is passed to (`def g(cb):
            # cb(x)`), asked only then, and never of the function's own parameters
            for m, caller, callee, last, args in self._calls_with_args(word, relevant=lambda _m: _calls_a_param):
                if (callee[0] == "n" and caller is not f and last != f.name
                        and any(p.lstrip("*") == last for p, _a in caller.params)):
                    offset = self._binds(m, caller, callee, func_qn, f, depth)
                    if offset is not None:
                        found.append((m, caller, args[0], args[1], offset))
        if f.name == "__init__" and f.cls:  # classes handed out by factories, called where they land
            for factory in self._factories(f"{mod.module}.{f.cls}", word, depth):
                for m, caller, callee, args in self._calls_of_results(factory):
                    offset = self._binds(m, caller, callee, func_qn, f, depth)
                    if offset is not None:
                        found.append((m, caller, args[0], args[1], offset))
        self._sites[func_qn] = found
        return found

    def _factories(self, class_qn: str, word: str, depth: int) -> list[str]:
        """Names of the functions that return the class ``class_qn`` itself (``return EAGLEWorker``),
        found in the modules that name it."""
        modules = self.symbols.texts.mentions(word)
        out: list[str] = []
        for m in (modules if len(modules) <= MAX_CALLER_MODULES else ()):
            summary = self.store.module(m)
            for _qn, g in (self.store.functions_where(summary, _names_word(word)) if summary else ()):
                if g.name not in out and any(_last_name(r) == word for r in g.return_exprs) and \
                        ("cls", class_qn) in self.return_types(f"{m}.{g.qualname}", depth + 1):
                    out.append(g.name)
        return out

    def _calls_of_results(self, factory: str):
        """(module, caller, callee IR, (positional, keyword) IRs) of the calls with arguments of a
        local name assigned a call of ``factory`` (``cls = make_cls(...); cls(...)``)."""
        modules = self.symbols.texts.mentions(factory)
        for m in (modules if len(modules) <= MAX_CALLER_MODULES else ()):
            summary = self.store.module(m)
            for _qn, caller in (self.store.functions_where(summary, _names_word(factory)) if summary else ()):
                made = {t[1] for t, v, _a, _l in caller.assigns
                        if t[0] == "n" and v[0] == "c" and _last_name(v[1]) == factory}
                for line, col, callee, _kw in (caller.calls if made else ()):
                    args = caller.args.get((line, col))
                    if args is not None and callee[0] == "n" and callee[1] in made:
                        yield m, caller, callee, args

    def _may_call(self, module: str, word: str, func_name: str) -> Callable[[FuncInfo, bytes], bool]:
        """The test of a function's text for a caller ``call_sites`` can use in ``module``: it names
        ``word`` or ``func_name``, or a global that holds the function (``_alias_of``), or calls
        what a call or a subscript gives (a callee with no name)."""
        names = {word, func_name} | {n for n, held in self._global_aliases(module).items() if func_name in held}
        rx = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")\b")
        result_calls = self._result_calls

        def may_call(_f, text: bytes) -> bool:
            if rx.search(text) is not None:
                return True
            found = result_calls.get(text)
            if found is None:
                found = result_calls[text] = _RESULT_CALL.search(text) is not None
            return found

        return may_call

    def _global_aliases(self, module: str) -> dict:
        held = self._aliases.get(module)
        if held is None:
            globs = self.store.module(module).globals
            held = self._aliases[module] = _value_names(globs.values(), globs.keys())
        return held

    def _alias_of(self, module: str, caller: FuncInfo, name: str, func_name: str) -> bool:
        """``name`` is assigned the function by its own name where ``caller`` calls it (a local of
        ``caller`` or a global: ``c = func; c(x)``), so the call may reach it under another name."""
        local = self._aliases.get(id(caller))
        if local is None:
            local = self._aliases[id(caller)] = _value_names((v for t, v, _a, _l in caller.assigns if t[0] == "n"),
                                                             (t[1] for t, v, _a, _l in caller.assigns if t[0] == "n"))
        if name in local:
            return func_name in local[name]
        return func_name in self._global_aliases(module).get(name, ())

    def _calls_with_args(self, word: str, also: str | None = None, relevant=None):
        """(module, caller, callee IR, the callee's last name, (positional, keyword) IRs) of every
        call with arguments in the modules that mention ``word`` (and module ``also``); none when
        too many modules do (the answer must not depend on which modules happen to be loaded).
        ``relevant(module)``: a test of a function's text that the callers the search can use pass
        (``ModuleStore.functions_where``: the others' bodies may stay unparsed); None: every one."""
        modules = [] if word.startswith("<") else list(self.symbols.texts.mentions(word))
        if len(modules) > MAX_CALLER_MODULES:
            return
        modules += [also] if also is not None and also not in modules else []
        self.store.expect(modules, walked=relevant is None)
        for m in modules:
            summary = self.store.module(m)
            if summary is None:
                continue
            walk = summary.functions.values() if relevant is None else \
                (f for _qn, f in self.store.functions_where(summary, relevant(m)))
            for caller in walk:
                for line, col, callee, _kw in caller.calls:
                    args = caller.args.get((line, col))
                    if args is not None:
                        last = callee[1] if callee[0] == "n" else (callee[2] if callee[0] == "a" else None)
                        yield m, caller, callee, last, args

    def _binds(self, module: str, caller: FuncInfo, callee, func_qn: str, f: FuncInfo, depth: int) -> int | None:
        """None when the call does not reach ``func_qn``, else how many of its params the call binds
        before the arguments (``self`` of a bound method, ``cls``)."""
        method = f.cls is not None and f.kind != "staticmethod"
        if callee[0] == "a":
            for base in self.expr_types_in(module, caller, callee[1], depth + 1):
                if base[0] in INSTANCE:
                    cq = func_qn.rsplit(".", 1)[0]
                    if (self.symbols.lookup_method(base[1], f.name) == func_qn
                            or (base[1] in self.symbols.mro(cq) and self.symbols.lookup_method(cq, f.name) == func_qn)):
                        return 1 if method else 0  # the receiver's method, or an override of it
                elif base[0] == "cls" and ("func", func_qn) in self.member_types(base, callee[2], depth + 1):
                    return 1 if f.kind == "classmethod" else 0
                elif base[0] == "mod" and ("func", func_qn) in self.member_types(base, callee[2], depth + 1):
                    return 0
            return None
        for t in self.expr_types_in(module, caller, callee, depth + 1):
            if t == ("func", func_qn):  # a method held by a name is bound (`m = obj.m; m(x)`)
                return 1 if f.kind == "classmethod" or method else 0
            if t[0] == "cls" and f.name == "__init__" and self.symbols.lookup_method(t[1], "__init__") == func_qn:
                return 1
        return None

    # -- decorators
    def decorated(self, func_qn: str) -> set | None:
        """What calling ``func_qn`` by its name calls when its decorators replace it with a wrapper
        (a function they define and return); None when they leave it as it is."""
        if func_qn in self._decorated:
            return self._decorated[func_qn]
        self._decorated[func_qn] = None  # a decorator that decorates itself: leave it
        mod, local = self.symbols.split(func_qn)
        f = mod.functions.get(local) if mod else None
        result = None
        if f is not None and f.decorators:
            where = mod.functions.get(f.parent) if f.parent else None
            current = {("func", func_qn)}
            for d in reversed(f.decorators):
                for dt in self.expr_types_in(mod.module, where, d):
                    wrappers = self._wrappers(dt[1]) if dt[0] == "func" else None
                    if wrappers:
                        current = wrappers
                        break
            if current != {("func", func_qn)}:
                result = current
        self._decorated[func_qn] = result
        return result

    def _wrappers(self, deco_qn: str) -> set | None:
        """The functions decorator ``deco_qn`` returns that it defines itself (its wrappers)."""
        mod, local = self.symbols.split(deco_qn)
        d = mod.functions.get(local) if mod else None
        if d is None:
            return None
        out = set()
        for r in d.return_exprs:
            if r[0] == "n" and r[1] in d.nested:
                out.add(("func", f"{deco_qn}.{r[1]}"))
        return out or None

    def _local_assigns(self, f: FuncInfo, name: str):
        table = self._locals.get(id(f))
        if table is None:
            table = {}
            for target, value, annot, line in f.assigns:
                if target[0] == "n":
                    table.setdefault(target[1], []).append((value, annot, line))
            self._locals[id(f)] = table
        return table.get(name, ())

    def _global_types(self, t: Type, depth: int) -> set:
        """A module-level variable: typed by the value assigned to it."""
        _, module, name = t
        return self.expr_types_in(module, None, self.store.module(module).globals[name], depth + 1)

    def member_types(self, base: Type, attr: str, depth: int) -> set:
        """The types of ``<base>.<attr>``."""
        kind = base[0]
        sym = self.symbols
        if kind in INSTANCE:
            return self.attr_types(base[1], attr, depth)
        if kind == "cls":
            m = sym.lookup_method(base[1], attr)
            if m:
                return {("func", m)}
            inner = f"{base[1]}.{attr}"
            if sym.cls(inner):
                return {("cls", inner)}
            for c in sym.mro(base[1]):
                ci = sym.cls(c)
                if ci and attr in ci.assigns:
                    if ci.bases and any(b[0] in ("n", "a") and ir_text(b).endswith("Enum") for b in ci.bases):
                        return {("inst", c)}  # an Enum member is an instance of its class
                    return self.expr_types_in(sym.module_of(c).module, None, ci.assigns[attr], depth + 1)
            return set()
        if kind == "mod":
            if base[1] in self.store.files:
                t = sym.resolve_symbol(base[1], attr)
            else:
                t = ("ext", f"{base[1]}.{attr}")
            if t and t[0] == "global":
                return self._global_types(t, depth)
            return {t} if t else set()
        if kind == "ext":
            return {("ext", f"{base[1]}.{attr}")}
        return set()

    def _call_result(self, t: Type, depth: int) -> set:
        if t[0] == "cls":
            return {("inst", t[1])}
        if t[0] == "func":
            return self.return_types(t[1], depth)
        if t[0] == "ext":  # an object made outside the tree: its methods are external calls too, named
            return {t}    # as the methods of the class that made it (`ext.Cls().fun` is `ext.Cls.fun`)
        if t[0] == "lambda":
            return set(t[2])
        return set()
