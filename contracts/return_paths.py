"""The return-paths pass: for a producer method, each ``return`` with the owner fields it leaves
set non-None, following helper calls (through the index), conditional expressions and local
bindings with the writes between them and the return.

A followed call binds the callee's parameters to its arguments: a parameter's value is its
argument where the call is, and a callable passed on and called there (a lambda, a bound method,
``functools.partial``) is followed as written by the caller. A call that passes a local to a helper
counts the writes the helper makes through that parameter (``arguments.py``).

Used for every ``model_worker`` class's scheduler-called method, and for the catalog's named
producers (``producer-sets`` contracts), which may track extra attribute names.
"""

from __future__ import annotations

import ast
import functools
import re
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from spectrace.contracts import conditions as C
from spectrace.contracts.analysis import Analysis
from spectrace.contracts.arguments import (Argument, PassedWrite, PassedWrites, Place, bind, function_key, handed,
                                          may_reach)
from spectrace.contracts.dataclasses_scan import find_dataclass
from spectrace.contracts.decorators import Undecided, Wrapper, wrapper_of
from spectrace.contracts.blocks import apart_by_exceptions
from spectrace.contracts.expr_values import none_on_the_right
from spectrace.contracts.facts import Binding, Cond, FunctionFacts, Return, path_conditions, runs_before
from spectrace.contracts.records import ProducerFunction, ReturnPath
from spectrace.contracts.spread_keys import spread_item, spread_keys, star_items
from spectrace.contracts.values import (AttrOf, BoolOp, CallValue, Chain, IfExp, ItemOf, LambdaValue, Name, NoneValue,
                                       Opaque, TupleValue, Value, is_name)

# builtins that look at what they are handed and change nothing of it
_ONLY_LOOKS = frozenset({"getattr", "hasattr", "isinstance", "len", "type", "id"})

MAX_HOPS = 6
MAX_FORKS = 64  # outcomes of one value before the remaining branches are reported as not followed


@dataclass(frozen=True)
class Walk:
    """How far one value's follow has gone, and what it looks for: the hops taken, the functions on
    the way (no recursion), the attributes followed below the value (``want``), and whether the
    value is the owner itself (then its constructor's own class is not looked into)."""
    depth: int
    seen: tuple
    want: dict
    owner: bool = False
    item: int | None = None  # the value looked for is this item of the tuple followed (`out, _ = f()`)
    yielded: bool = False  # the value looked for is what the generator the call makes yields (`next(f())`)
    attr: str | None = None  # the value looked for is this attribute of the value followed (`f().out`)

    def deeper(self, **kw) -> "Walk":
        """One hop further (``kw`` replaces want/owner)."""
        return replace(self, depth=self.depth + 1, **kw)

    def into(self, func_qn: str) -> "Walk":
        """One hop into a called function."""
        return replace(self, depth=self.depth + 1, seen=self.seen + (func_qn,))

    def wanting(self, want: dict, **kw) -> "Walk":
        return replace(self, want=want, item=None, **kw)


@dataclass
class Outcome:
    """One way a value turns out."""
    sets: set[str] | None  # dotted attribute paths set non-None ("f", "f.sub"); None: could not be followed
    via: list[str] = field(default_factory=list)  # helpers followed, "qualname:line", outermost first
    unresolved: str | None = None  # why ``sets`` is None
    conds: list = field(default_factory=list)  # conditions inside the helpers and of the branches taken
    not_a_result: bool = False  # the value is None
    unknown: dict = field(default_factory=dict)  # dotted path -> why it could not be decided
    cleared: dict = field(default_factory=dict)  # dotted path -> where it is left None
    branch: list = field(default_factory=list)  # conditions of the writes/bindings taken (part of ``conds``)
    undecided: bool = False  # ``sets`` is None because the analysis cannot tell, not for an opaque value

    def but(self, **kw) -> "Outcome":
        data = {k: getattr(self, k) for k in self.__dataclass_fields__}
        for k in ("via", "conds", "branch"):
            data[k] = list(data[k])
        for k in ("unknown", "cleared"):
            data[k] = dict(data[k])
        data["sets"] = None if data["sets"] is None else set(data["sets"])
        data.update(kw)
        return Outcome(**data)


def _same_value(a: Outcome, b: Outcome, relevant: set[str] | None = None) -> bool:
    """The same on the paths that matter (``relevant``: every path when None)."""
    if a.not_a_result != b.not_a_result or a.unresolved != b.unresolved or (a.sets is None) != (b.sets is None):
        return False

    def keep(paths):
        return set(paths) if relevant is None else {p for p in paths if p.split(".", 1)[0] in relevant}
    return (keep(a.sets or ()) == keep(b.sets or ()) and keep(a.unknown) == keep(b.unknown)
            and keep(a.cleared) == keep(b.cleared))


@dataclass(frozen=True)
class NestedBinding:
    """A call of a nested function that rebinds a local of its caller (``nonlocal``): the local
    holds ``value``, evaluated in the nested function (``place``), after the call."""
    line: int
    blocks: list
    conds: list
    place: Place
    value: Value


@dataclass(frozen=True)
class OpaqueCall:
    """A call handed the value followed that reaches no function of the tree (a callee nothing
    resolves, or one without source): what it does to the value's attributes is not known."""
    line: int
    blocks: list
    conds: list
    paths: tuple  # the attribute paths below the value it may set or clear
    why: str


def _opaque_paths(pw: PassedWrite, want: dict) -> tuple:
    """The wanted paths below what an opaque call is handed (the object itself: all of them; an
    attribute of it: those below that attribute, which the call cannot rebind)."""
    prefix = ".".join(pw.attrs)
    return tuple(p for p in _want_paths(want) if not prefix or p.startswith(prefix + "."))


def _concerns(pw: PassedWrite, want: dict) -> bool:
    return bool(_opaque_paths(pw, want)) if pw.opaque else pw.attrs[0] in want


def _opaque_or_write(pw: PassedWrite, want: dict):
    """A helper's write, or a call that may write anything below what it is handed as an event."""
    if pw.opaque is None:
        return pw
    return OpaqueCall(pw.line, pw.blocks, pw.conds, _opaque_paths(pw, want), pw.opaque)


def _callable_parts(v: Value) -> list[Value] | None:
    """The callables a value may be: a name or attribute chain, a lambda, each side of `or`/`and`
    or of a conditional expression, `getattr(obj, "m", default)` as `obj.m` or its default (None,
    not callable, drops out); None for anything else."""
    match v:
        case Name() | Chain() | LambdaValue():
            return [v]
        case NoneValue():
            return []
        case BoolOp(left=left, right=right) | IfExp(body=left, orelse=right):
            a, b = _callable_parts(left), _callable_parts(right)
            return None if a is None or b is None else a + b
        case CallValue(callee="getattr", args=args) if 2 <= len(args) <= 3 and not v.keywords \
                and isinstance(args[0], Name) and _string(args[1]) is not None:
            rest = _callable_parts(args[2]) if len(args) == 3 else []
            attr = _string(args[1])
            return None if rest is None else [Chain(args[0].name, (attr,), f"{args[0].name}.{attr}")] + rest
    return None


def _string(v: Value) -> str | None:
    """The text of a string literal's value (values.Opaque keeps it as written)."""
    text = v.text if isinstance(v, Opaque) else ""
    if text[:1] not in ("'", '"'):
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) and value.isidentifier() else None


def _undecided_with(f: FunctionFacts, fact_line: int, line: int) -> str | None:
    """Why a ``with`` whose body holds the fact at ``fact_line``, and not ``line``, may have cut
    the fact short (its manager may swallow what the body raises; managers.py), or None."""
    for w, why in f.undecided_withs:
        if w.body_line <= fact_line <= w.end_line and not w.body_line <= line <= w.end_line:
            return why
    return None


def _cut_short(state: "Outcome", e, why: str) -> "Outcome":
    """``state`` after an event that may not have run: a binding's value, or what a write wrote, undecided."""
    if isinstance(e, OpaqueCall):
        return state  # undecided already
    if isinstance(e, (Binding, NestedBinding)) or state.sets is None:
        return Outcome(None, unresolved=why, undecided=True)
    path = ".".join(e.attrs[:2])
    return state.but(sets={p for p in state.sets if not _under(p, path)}, unknown={**state.unknown, path: why})


def _capped(states: list["Outcome"], why: str) -> list["Outcome"]:
    """At most ``MAX_FORKS`` outcomes: past that, the ones left out are one outcome not followed,
    under the conditions all of them share (none is dropped silently)."""
    if len(states) <= MAX_FORKS:
        return states
    rest = states[MAX_FORKS - 1:]
    return states[:MAX_FORKS - 1] + [Outcome(None, unresolved=why, undecided=True, conds=_shared(o.conds for o in rest),
                                             branch=_shared(o.branch for o in rest))]


def _followed(states: list["Outcome"]) -> list["Outcome"]:
    """The states whose attributes are known (not the one standing for forks past the cap)."""
    return [s for s in states if s.sets is not None]


def _shared(lists) -> list:
    """The conditions that begin every one of ``lists`` (each is built by appending)."""
    lists = [list(x) for x in lists]
    out = []
    for items in zip(*lists):
        if any(x != items[0] for x in items):
            break
        out.append(items[0])
    return out


def _not_all(conds: list[Cond]) -> Cond:
    """The negation of a conjunction as one condition."""
    return Cond(C.render(conds), False)


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


def _prefixed(prefix: str, paths) -> set[str]:
    return {f"{prefix}.{p}" for p in paths}


def _aliases_of(f: FunctionFacts, name: str, start: int, line: int) -> dict[str, int]:
    """The locals bound to the object ``name`` holds (``alias = name``, a loop over a display
    holding it, and their own aliases) between ``start`` and ``line``, each with the line of its
    first such binding: what is written through them after that is written on the object."""
    found: dict[str, int] = {}
    held = {name}
    for _ in range(4):  # aliases of aliases
        grown = False
        for b in f.bindings:
            if start < b.line < line and b.target not in held and _names_of(b.value) & held:
                found[b.target] = min(found.get(b.target, b.line), b.line)
                held.add(b.target)
                grown = True
        if not grown:
            break
    return found


def _names_of(value: Value) -> set[str]:
    """The locals a value may be: a name, or a name in an arm of a conditional expression."""
    if isinstance(value, Name):
        return {value.name}
    if isinstance(value, IfExp):
        return _names_of(value.body) | _names_of(value.orelse)
    return set()


def _conds_at(at: Place) -> list[Cond]:
    """The conditions of the blocks around the statement at ``at``, from its return, binding or
    write: a local tested against None there cannot be None in it (a test of a local bound again
    inside the block is none of them; an early exit before it is an assertion, `_name`)."""
    for fact in (*at.f.returns, *at.f.bindings, *at.f.writes):
        if fact.line == at.line:
            return fact.conds
    return []


@functools.lru_cache(maxsize=4096)
def _none_second(text: str) -> str:
    """A comparison with None written None first (`None is not x`) as `x is not None`."""
    if not text.startswith("None "):
        return text
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return text
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return text
    left, right = none_on_the_right(node)
    return ast.unparse(ast.Compare(left=left, ops=node.ops, comparators=[right]))


def _known_not_none(name: str, conds) -> bool:
    """Whether the conditions a statement runs under say local ``name`` is not None
    (``if name is not None:``, ``if name:``, or the else of ``if name is None:``)."""
    for text, positive in conds or ():
        t = " ".join(text.split())
        if t.startswith("not (") and t.endswith(")"):  # `not (a is None)`: `a is None`, negated
            t, positive = t[5:-1], not positive
        walrus = re.match(rf"\(\s*{re.escape(name)}\s*:=.*\)(\s+is not None|\s+is None)?$", t)
        if walrus:  # `(name := value) is not None` tests name as `name is not None` would
            t = name + (walrus.group(1) or "")
        t = _none_second(t.strip("()"))
        if positive and t in (f"{name} is not None", name):
            return True
        if not positive and t in (f"{name} is None", f"not {name}"):
            return True
    return False


def _want_paths(want: dict, prefix: str = "") -> list[str]:
    out = []
    for k, sub in want.items():
        out.append(prefix + k)
        out.extend(_want_paths(sub, prefix + k + "."))
    return out


class ReturnPathFinder:
    def __init__(self, analysis: Analysis, tracked: set[str], deep: dict[str, set[str]] | None = None,
                 relevant: set[str] | None = None, witnessed: set[str] = frozenset()):
        self.symbols = analysis.symbols
        self.owner_name = analysis.owner_name
        self.fields = analysis.fields
        owner = self.analysis_owner = analysis.owner
        self.owner_qn = f"{self.symbols.module_of_file(owner.file)}.{owner.name}"
        self.tracked = tracked  # attribute names whose writes on a result count as "set"
        # what is followed on the owner: every tracked name, and below a field the attributes that
        # the scheduler dereferences (``next_draft_input.new_seq_lens``)
        self.want = {name: {sub: {} for sub in sorted((deep or {}).get(name, ()))} for name in sorted(tracked)}
        self._dataclasses: dict[str, dict | None] = {}
        self._named_tuples: dict[str, list[str] | None] = {}
        self._setters: dict[str, list[str] | str | None] = {}
        # the names whose value a branch may fork on (the rest follows the paths that dominate)
        self.relevant = relevant
        # names whose being left at a None default is noted (``cleared``) without forking on their value
        self.witnessed = witnessed
        # the arguments of the calls being followed, per callee, innermost call last: a parameter
        # holds its argument, evaluated where the call is
        self._arguments: dict[str, list[dict[str, Argument]]] = {}
        self._indexed_calls: dict[str, list] = {}
        # the class ``self`` is an instance of in the method being followed, innermost call last
        # (None: a call on another object, resolved by the class that defines the method): a
        # ``self.m()`` in a base class runs the receiver's override, ``super().m()`` the next class
        # of the receiver's MRO
        self._receivers: list[str | None] = []
        # the parameters of the lambdas being followed (they shadow the names of their function)
        self._lambda_args: dict[str, list[dict[str, Argument]]] = {}
        self.passed = PassedWrites(self.symbols, self._targets)
        # the originals the wrappers being followed call through their decorator's parameter:
        # wrapper -> [{parameter: original}], innermost call last
        self._wrapped: dict[str, list[dict[str, str]]] = {}

    @contextmanager
    def _wrapping(self, wrapper: Wrapper, original: str):
        self._wrapped.setdefault(wrapper.qualname, []).append({wrapper.wrapped: original})
        try:
            yield
        finally:
            self._wrapped[wrapper.qualname].pop()

    def _original(self, module: str, f: FunctionFacts) -> dict[str, str]:
        """In a wrapper being followed: its decorator's parameter -> the function it decorates."""
        stack = self._wrapped.get(function_key(module, f))
        return stack[-1] if stack else {}

    def _runs(self, func_qn: str) -> tuple[str, Wrapper | Undecided | None]:
        """The function whose body runs when ``func_qn`` is called (its decorator's wrapper, or
        itself), and that wrapper (an ``Undecided`` one: the call is not followed)."""
        got = self.symbols.function_facts(func_qn)
        if got is None or not got[1].decorators:
            return func_qn, None
        w = wrapper_of(self.symbols, self.symbols.module_of_file(got[0]), got[1])
        return (w.qualname if isinstance(w, Wrapper) else func_qn), w

    @contextmanager
    def _calling(self, func_qn: str, wrapper: Wrapper | Undecided | None):
        if isinstance(wrapper, Wrapper):
            with self._wrapping(wrapper, func_qn):
                yield
        else:
            yield

    @contextmanager
    def _receiver(self, class_qn: str | None):
        self._receivers.append(class_qn)
        try:
            yield
        finally:
            self._receivers.pop()

    def paths_of(self, worker_qn: str, func_qn: str) -> list[ReturnPath]:
        with self._receiver(worker_qn):
            return self._paths_of(worker_qn, func_qn)

    def _paths_of(self, worker_qn: str, func_qn: str) -> list[ReturnPath]:
        runs, wrapper = self._runs(func_qn)
        got = self.symbols.function_facts(func_qn)
        if got is None:  # a method of the tree without facts: what it returns is not known
            mod, local = self.symbols.project.split(func_qn)
            info = self.symbols.project.func(func_qn)
            return [ReturnPath(worker=worker_qn, method=local or func_qn, file=mod.path if mod else "",
                               line=info.line if info else 0, shape=f"def {func_qn.rpartition('.')[2]}(...)",
                               path_condition="", conditions=[], sets=None, via=[], unresolved=f"no source for {func_qn}")]
        method = got[1].qualname
        if isinstance(wrapper, Undecided):
            rel, f = got
            return [ReturnPath(worker=worker_qn, method=method, file=rel, line=f.line, shape=f"def {f.name}(...)",
                               path_condition="", conditions=[], sets=None, via=[], unresolved=wrapper.why)]
        rel, f = self.symbols.function_facts(runs)
        module = self.symbols.module_of_file(rel)
        out = []
        with self._calling(func_qn, wrapper):
            for ret, own in effective_returns(f):
                start = Place(module, rel, f, ret.line, ret.blocks)
                out.extend(self._return_paths(worker_qn, method, start, ret, own, runs))
        return out

    def _return_paths(self, worker_qn: str, method: str, start: Place, ret: Return, own: list,
                      runs: str) -> list[ReturnPath]:
        """The ways one ``return`` of the method (or of the wrapper that ``runs`` in its place)
        turns out, as return paths."""
        rel, out = start.rel, []
        kept: list[Outcome] = []
        walk = Walk(0, (runs,), self.want, owner=True)
        for o in self._finally_after(start, ret, walk, self._value(start, ret.value, walk)):
            if o.not_a_result:  # None itself: every field read through it dereferences None
                why = f"{rel}:{ret.line} `{ret.shape}` returns None, no {self.owner_name}"
                o = o.but(sets=set(), not_a_result=False, cleared={name: why for name in self.want})
            if any(_same_value(o, k) and o.conds == k.conds and o.via == k.via for k in kept):
                continue
            kept.append(o)
            conds = own + o.conds
            sets = None if o.sets is None else o.sets
            out.append(ReturnPath(
                worker=worker_qn, method=method, file=rel, line=ret.line, shape=ret.shape,
                path_condition=C.render(conds), conditions=[list(c) for c in conds],
                sets=None if sets is None else sorted(p for p in sets if "." not in p), via=o.via,
                unresolved=o.unresolved,
                deep_sets=[] if sets is None else sorted(p for p in sets if "." in p),
                unknown=dict(sorted(o.unknown.items())), cleared=dict(sorted(o.cleared.items())),
                branch=C.render(o.branch),
            ))
        return out

    def _finally_after(self, start: Place, ret: Return, walk: Walk, states: list[Outcome]) -> list[Outcome]:
        """The returned local's ``states`` after the ``finally`` bodies of the tries the ``return``
        stands in, innermost first: they run once its value is taken, so what they write through
        the local is on the object returned (a name they bind again is not)."""
        if not isinstance(ret.value, Name):
            return states
        f = start.f
        finals = {b for fact in (*f.writes, *f.computed_writes, *f.calls) for b in fact.blocks if b.endswith("y")}
        for i in range(len(ret.blocks) - 1, -1, -1):
            m = _TRY_PART.match(ret.blocks[i])
            final = f"{m.group(1)}y" if m else None
            if final in finals:
                at = start.moved(f.end_line + 1, [*ret.blocks[:i], final])
                states = self._after(at, ret.value.name, walk, ret.line, states, [], [], within=final)
        return states

    # ------------------------------------------------------------ values

    def _value(self, at: Place, desc: Value, walk: Walk) -> list[Outcome]:
        """The ways the expression ``desc``, evaluated ``at`` a place, turns out."""
        if walk.depth > MAX_HOPS:
            return [Outcome(None, unresolved="too many hops")]
        if walk.attr is not None and not isinstance(desc, (CallValue, IfExp)):
            return [Outcome(None, unresolved=f"`{walk.attr}` of `{desc.shown}`")]
        match desc:
            case NoneValue():
                return [Outcome(None, not_a_result=True)]
            case IfExp(test=test, body=body, orelse=orelse):
                out = []
                for sub, pos in ((body, True), (orelse, False)):
                    for o in self._value(at, sub, walk):
                        c = Cond(test, pos)
                        out.append(o.but(conds=[c] + o.conds, branch=[c] + o.branch))
                return out
            case BoolOp(op=op, left=left, right=right) if walk.item is None:
                return self._short_circuit(at, op, left, right, walk)
            case AttrOf(attr=attr, of=of) if walk.item is None:
                return self._value(at, of, replace(walk, attr=attr))
            case ItemOf(index=index, of=of) if walk.item is None:
                return self._value(at, of, replace(walk, item=index))
            case TupleValue(items=items, starred=False) if walk.item is not None:
                if walk.item < len(items):
                    return self._value(at, items[walk.item], replace(walk, item=None))
                return [Outcome(None, unresolved=f"`{desc.shown}` has no item {walk.item}")]
            case CallValue():
                return self._call(at, desc, walk)
            case Name(name=name):
                return self._name(at, name, walk)
            case Chain():
                kept = self._kept_on_self(at, desc)
                if kept is not None:  # `self.a = v` earlier in the function, nothing between: v
                    return self._value(kept[0], kept[1], walk)
        if walk.item is not None:
            return [Outcome(None, unresolved=f"item {walk.item} of `{desc.shown}`")]
        return [Outcome(None, unresolved=f"returns {desc.shown}")]

    def _short_circuit(self, at: Place, op: str, left: Value, right: Value, walk: Walk) -> list[Outcome]:
        """``left or right``: ``left`` where it is true (so not None), else ``right``; ``left and
        right``: ``left`` where it is false (None, False, an empty value: no result), else ``right``."""
        test = left.text or left.shown
        first, other = (Cond(test, True), Cond(test, False)) if op == "and" else (Cond(test, False), Cond(test, True))
        if op == "or":
            out = [o.but(conds=[other] + o.conds, branch=[other] + o.branch)
                   for o in self._value(at, left, walk) if not o.not_a_result]
        else:
            out = [Outcome(None, not_a_result=True, conds=[other], branch=[other])]
        out.extend(o.but(conds=[first] + o.conds, branch=[first] + o.branch) for o in self._value(at, right, walk))
        return out

    def _matters(self, name: str, cls_name: str) -> bool:
        """Is an owner's attribute one whose value is followed path by path (a sub-object's always is)?"""
        return cls_name != self.owner_name or self.relevant is None or name in self.relevant

    def _class_called(self, module: str, f: FunctionFacts, callee: str) -> str | None:
        """The class a call constructs (``Cls(...)``, ``mod.Cls(...)``, ``cls(...)`` in a classmethod)."""
        parts = callee.split(".")
        if callee == "cls" and f.cls:
            return f"{module}.{f.cls}"
        project = self.symbols.project
        info = project.func(f"{module}.{f.qualname}")
        local = info.imports.get(parts[0]) if info is not None else None
        # a name imported inside the function shadows the module's
        t = project.resolve_import(local) if local is not None else project.resolve_symbol(module, parts[0])
        if t and t[0] == "cls" and len(parts) == 1:
            return t[1]
        if t and t[0] == "mod" and len(parts) == 2:
            t2 = self.symbols.project.resolve_symbol(t[1], parts[1])
            if t2 and t2[0] == "cls":
                return t2[1]
        return None

    def _dataclass_fields(self, cls_qn: str) -> dict | None:
        """Fields (name -> FieldInfo, in __init__ order) of a dataclass and its dataclass bases; None otherwise."""
        if cls_qn not in self._dataclasses:
            merged, own = {}, None
            for c in reversed(self.symbols.mro(cls_qn)):
                mod, _, name = c.rpartition(".")
                rel = self.symbols.file_of_module(mod)
                info = find_dataclass(self.symbols.facts.text(rel), name, rel) if rel else None
                if info is not None:
                    merged.update(info.fields)
                    if c == cls_qn:
                        own = info
            self._dataclasses[cls_qn] = merged if own is not None else None
        return self._dataclasses[cls_qn]

    def _external(self, module: str, f: FunctionFacts, callee: str) -> str | None:
        """The dotted name of a callee from outside the tree (``replace`` imported from
        ``dataclasses``: ``dataclasses.replace``), None for one of the tree or a local."""
        parts = callee.split(".")
        project = self.symbols.project
        info = project.func(f"{module}.{f.qualname}".replace(".<locals>.", "."))
        local = info.imports.get(parts[0]) if info is not None else None
        t = project.resolve_import(local) if local is not None else project.resolve_symbol(module, parts[0])
        return ".".join([t[1], *parts[1:]]) if t and t[0] == "ext" else None

    def _replaced(self, at: Place, desc: CallValue, walk: Walk) -> list[Outcome]:
        """``dataclasses.replace(obj, f=v, ...)``: ``obj``'s fields with the keywords written over them."""
        if desc.spread:
            return [Outcome(None, unresolved=f"`{desc.text}` replaces fields spread from a mapping")]
        site = f"{at.rel}:{at.line} `{desc.text}`"
        states = self._value(at, desc.args[0], walk)
        for name, value in desc.keywords.items():
            if name not in walk.want:
                continue
            nxt = []
            for s in states:
                if s.sets is None or s.not_a_result:
                    nxt.append(s)
                    continue
                nxt.extend(self._assign(at, s, name, value, walk.wanting(walk.want[name]), site,
                                        not walk.owner or self._matters(name, self.owner_name)))
            states = _capped(nxt, f"more than {MAX_FORKS} ways `{desc.text}` replaces fields")
        return states

    def _call(self, at: Place, desc: CallValue, walk: Walk) -> list[Outcome]:
        module, f = at.module, at.f
        callee = desc.callee
        cls_qn = self._class_called(module, f, callee)
        if walk.item is not None and cls_qn is not None:
            return [Outcome(None, unresolved=f"item {walk.item} of `{desc.text or callee}`")]
        if walk.attr is not None and cls_qn is not None:
            return self._field_of(at, desc, cls_qn, walk)
        if callee.split(".")[-1] == self.owner_name or (cls_qn and cls_qn.rsplit(".", 1)[-1] == self.owner_name):
            # the owner built by name, or as ``cls(...)`` in one of its classmethods
            return self._construct(at, desc, walk, self.fields, self.owner_name, self.owner_qn)
        if callee == "next" and desc.args and isinstance(desc.args[0], CallValue) and not desc.keywords \
                and not walk.yielded and not self._targets(module, f, callee):
            # next(g(...)): a value g yields, or the default when it yields none
            out = self._call(at, desc.args[0], replace(walk, yielded=True))
            return out + (self._value(at, desc.args[1], walk) if len(desc.args) > 1 else [])
        defaulted = self._with_default(at, desc, walk)
        if defaulted is not None:
            return defaulted
        external = self._external(module, f, callee) if "(" not in callee else None
        if external == "dataclasses.replace" and desc.args:
            return self._replaced(at, desc, walk)
        if external in ("typing.cast", "typing_extensions.cast") and len(desc.args) == 2:
            return self._value(at, desc.args[1], walk)  # no conversion: the value itself
        copied = self._copy_of(at, desc)
        if copied is not None:
            # a copy holds the original's attributes as they are where it is made (later writes
            # through either name are the other's no more)
            return self._value(at, copied, walk)
        if not walk.owner:
            if cls_qn is not None:
                fields = self._dataclass_fields(cls_qn)
                name = cls_qn.rsplit(".", 1)[-1]
                if fields is None:
                    return [Outcome(set(), unknown={p: f"{name} is not a dataclass" for p in _want_paths(walk.want)})]
                return self._construct(at, desc, walk, fields, name, cls_qn)
        if walk.attr is not None and (external or ("." not in callee and self._callable(at, callee) is not None)):
            return [Outcome(None, unresolved=f"`{walk.attr}` of `{desc.text or callee}`")]
        if "." not in callee:
            passed = self._callable(at, callee)
            if passed is not None:
                return self._call_passed(passed, callee, walk, at.holding(desc))
            chosen = self._bound_callables(at, callee)
            if chosen:  # `step = getattr(self, "_fast_step", None) or self._full_step; step(batch)`
                return [o for arg in chosen for o in self._call_passed(arg, callee, walk, at.holding(desc))]
        explicit = re.fullmatch(r"super\((\w+),\s*self\)\.(\w+)", callee)  # super(Cls, self).m
        if callee.startswith("super().") and f.cls and callee.count(".") == 1:
            cls_qn = f"{module}.{f.cls}"
            t = self.symbols.project.lookup_method(self._self_class(module, f), callee.split(".")[1], cls_qn)
            targets = [t] if t else []
        elif explicit and f.cls:
            after = self._class_called(module, f, explicit.group(1))
            t = (self.symbols.project.lookup_method(self._self_class(module, f), explicit.group(2), after)
                 if after else None)
            targets = [t] if t else []
        elif callee in self._original(module, f):
            targets = [self._original(module, f)[callee]]  # the decorated function, from its wrapper
        else:
            targets = self._targets(module, f, callee)
        if not targets and walk.item is None and walk.attr is None and not walk.yielded:
            got = self._dict_get(at, desc, walk)
            if got is not None:
                return got
        if not targets:
            kept = self._kept_lambdas(module, f, callee)
            if kept:  # `self.make = lambda b: ...` where the worker is built, called by the step
                return [o for arg in kept for o in self._call_passed(arg, callee, walk, at.holding(desc))]
            return [Outcome(None, unresolved=f"unresolved call {callee}(...)")]
        # ``self`` stays the receiver in a method called on it and in a function nested in this one
        nested = function_key(module, f) + ".<locals>."
        on_self = bool(re.fullmatch(r"(?:self|super\(\))\.\w+", callee)) or bool(explicit) or \
            all(t.startswith(nested) for t in targets) or callee in self._original(module, f)
        out = []
        for t in targets:
            if t in walk.seen:
                continue
            original, wrapper = t, None
            if callee not in self._original(module, f):  # a wrapper's call of the original runs it as written
                t, wrapper = self._runs(t)
            if isinstance(wrapper, Undecided):
                out.append(Outcome(None, [t], wrapper.why))
                continue
            got = self.symbols.function_facts(t)
            if got is None:
                out.append(Outcome(None, [t], f"no source for {t}"))
                continue
            rel2, f2 = got
            if desc.awaited != f2.is_async:  # what the awaited object gives, or a coroutine not awaited
                out.append(Outcome(None, [t], f"`{desc.text or callee}` awaits {t}, no coroutine function" if desc.awaited
                                   else f"`{desc.text or callee}` calls the coroutine function {t} without await"))
                continue
            mod2 = self.symbols.module_of_file(rel2)
            bound = bind(f2, list(desc.args), desc.keywords)
            arguments = {p: at.holding(v) for p, v in bound.items()}
            constants = constant_parameters(f2, bound, spread=desc.spread)
            with self._passing([(function_key(mod2, f2), arguments)]), self._calling(original, wrapper), \
                    self._receiver(self._self_class(module, f) if on_self else None):
                if walk.yielded and not f2.yields:
                    out.append(Outcome(None, [t], f"next() of {callee}(...), which yields nothing"))
                    continue
                values = [(y, path_conditions(y)) for y in f2.yields] if walk.yielded else effective_returns(f2)
                for ret, own in values:
                    own = decided(own, constants)
                    if own is None:  # the call's constant arguments rule this return out
                        continue
                    inner = replace(walk.into(t), yielded=False)
                    for o in self._value(Place(mod2, rel2, f2, ret.line, ret.blocks), ret.value, inner):
                        out.append(o.but(via=[f"{f2.qualname}:{ret.line}"] + o.via, conds=own + o.conds))
        return out or [Outcome(None, unresolved=f"recursive call {callee}")]

    def _with_default(self, at: Place, desc: CallValue, walk: Walk) -> list[Outcome] | None:
        """A builtin that gives its default where it finds nothing: ``getattr(obj, "a", d)`` (``obj.a``
        where obj has it, else d), ``next(it, d)`` and ``min``/``max(xs, default=d)`` (an item, not
        followed, else d); None for another call (or one of these names bound in the tree)."""
        callee, args, kws = desc.callee, desc.args, desc.keywords
        if desc.spread or desc.awaited or callee not in ("getattr", "next", "min", "max") \
                or self._targets(at.module, at.f, callee):
            return None
        if callee == "getattr" and len(args) == 3 and not kws and isinstance(args[0], (Name, Chain)) \
                and (attr := _string(args[1])) is not None:
            obj = args[0]
            root, attrs = (obj.name, ()) if isinstance(obj, Name) else (obj.root, obj.attrs)
            has = f"hasattr({obj.text or obj.shown}, {args[1].text})"
            chain = Chain(root, (*attrs, attr), f"{obj.text or obj.shown}.{attr}")
            found = self._value(at, chain, walk)
            if self._kept_on_self(at, chain) is not None:
                return found  # written just before: it has the attribute
            default = self._value(at, args[2], walk)
            return [*(o.but(conds=[Cond(has, True)] + o.conds, branch=[Cond(has, True)] + o.branch) for o in found),
                    *(o.but(conds=[Cond(has, False)] + o.conds, branch=[Cond(has, False)] + o.branch) for o in default)]
        if callee == "next" and len(args) == 2 and not kws and not isinstance(args[0], CallValue):
            items, default = args[0], args[1]
        elif callee in ("min", "max") and len(args) == 1 and set(kws) == {"default"}:
            items, default = args[0], kws["default"]
        else:
            return None
        return [Outcome(None, unresolved=f"an item of `{items.shown}` (`{desc.text}`)"), *self._value(at, default, walk)]

    def _copy_of(self, at: Place, value: Value) -> Value | None:
        """What ``copy.copy(v)`` or ``copy.deepcopy(v)`` copies: ``v`` (None for another value)."""
        if not (isinstance(value, CallValue) and len(value.args) == 1 and not value.keywords and not value.spread
                and "(" not in value.callee):
            return None
        external = self._external(at.module, at.f, value.callee)
        return value.args[0] if external in ("copy.copy", "copy.deepcopy") else None

    def _same_object(self, at: Place, value: Value, name: str) -> bool:
        """Does binding ``name`` to ``value`` keep its attributes as they are (``x = copy.copy(x)``,
        ``x = cast(T, x)``, ``x = x``)? Then the value after it is the one before, path by path."""
        for _ in range(4):
            if is_name(value, name):
                return True
            inner = self._copy_of(at, value)
            if inner is None and isinstance(value, CallValue) and len(value.args) == 2 and "(" not in value.callee \
                    and self._external(at.module, at.f, value.callee) in ("typing.cast", "typing_extensions.cast"):
                inner = value.args[1]
            if inner is None:
                return False
            value = inner
        return False

    def _kept_on_self(self, at: Place, value: Value) -> tuple[Place, Value] | None:
        """``self.a`` read where the function itself wrote ``self.a = v`` before, on every way
        there, with no later write of it and no call in between (a call may write it too; on
        the read's own line only a class's construction): ``v``, at that write."""
        if not (isinstance(value, Chain) and value.root == "self" and len(value.attrs) == 1):
            return None
        f, line = at.f, at.line
        if any(b.target == "self" for b in f.bindings) or any(w.root == "self" for w in f.computed_writes):
            return None
        attr = value.attrs[0]
        earlier = [w for w in f.writes if w.root == "self" and w.attrs and w.attrs[0] == attr and w.line < line]
        if not earlier:
            return None
        last = max(earlier, key=lambda w: w.line)
        if last.attrs != [attr] or not runs_before(last, line, at.blocks):
            return None
        for c in f.calls:
            if last.line < c.line < line or (c.line == line and self._class_called(at.module, f, c.callee) is None
                                             and not (c.callee in _ONLY_LOOKS and not self._targets(at.module, f, c.callee))):
                return None
        return at.moved(last.line, last.blocks), last.value

    def _dict_get(self, at: Place, desc: CallValue, walk: Walk) -> list[Outcome] | None:
        """``d.get(key)`` of a receiver no function of the tree answers (a mapping): None where the
        key is missing, the default where one is given; an item it holds is not followed."""
        receiver, _, meth = desc.callee.rpartition(".")
        if meth != "get" or not receiver or desc.awaited or desc.spread or desc.keywords or not 1 <= len(desc.args) <= 2:
            return None
        key = desc.args[0].text or desc.args[0].shown
        missing, held = Cond(f"{key} in {receiver}", False), Cond(f"{key} in {receiver}", True)
        default = desc.args[1] if len(desc.args) == 2 else NoneValue()
        out = [o.but(conds=[missing] + o.conds, branch=[missing] + o.branch) for o in self._value(at, default, walk)]
        out.append(Outcome(None, unresolved=f"an item of `{receiver}` (`{desc.text}`)", conds=[held], branch=[held]))
        return out

    # ------------------------------------------------------------ arguments

    @contextmanager
    def _passing(self, arguments: list):
        """Bind the parameters of the callees ``arguments`` names while their bodies are followed."""
        for key, bound in arguments:
            self._arguments.setdefault(key, []).append(bound)
        try:
            yield
        finally:
            for key, _ in arguments:
                self._arguments[key].pop()

    @contextmanager
    def _lambda_bound(self, key: str, bound: dict[str, Argument]):
        """A lambda's parameters, bound to a call's arguments while its body is followed."""
        self._lambda_args.setdefault(key, []).append(bound)
        try:
            yield
        finally:
            self._lambda_args[key].pop()

    def _argument(self, module: str, f: FunctionFacts, name: str) -> Argument | None:
        """The argument of the innermost call being followed that gave ``f`` its parameter ``name``."""
        stack = self._arguments.get(function_key(module, f))
        return stack[-1].get(name) if stack else None

    def _callable(self, at: Place, name: str) -> Argument | None:
        """What a bare name called at ``at`` stands for when it is no function: the argument of a
        parameter (``run_full()``), or a lambda bound to a local before the call."""
        if any(p == name for p, _ in at.f.params):
            return self._argument(at.module, at.f, name)
        binds = [b for b in at.f.bindings if b.target == name and b.line < at.line]
        if binds:
            b = max(binds, key=lambda b: b.line)
            if isinstance(b.value, LambdaValue):
                return at.moved(b.line, b.blocks).holding(b.value)
        return None

    def _bound_callables(self, at: Place, name: str) -> list[Argument]:
        """What a local called as a function may be, from its last binding before the call, where
        that value chooses between callables: each method or function that `getattr(obj, "m",
        default)`, `a or b` or `a if c else b` may give (none where a part is anything else)."""
        binds = [b for b in at.f.bindings if b.target == name and b.line < at.line]
        if not binds:
            return []
        b = max(binds, key=lambda b: b.line)
        parts = _callable_parts(b.value)
        if not parts or (len(parts) < 2 and not isinstance(b.value, CallValue)):
            return []  # one callable as it is: the index's resolution of the call stands
        place = at.moved(b.line, b.blocks)
        return [place.holding(v) for v in parts]

    def _kept_lambdas(self, module: str, f: FunctionFacts, callee: str) -> list[Argument]:
        """For ``self.attr(...)``: the lambdas the class assigns to ``self.attr``, where each is
        written, when every assignment to it is one (any other value: none)."""
        m = re.fullmatch(r"self\.(\w+)", callee)
        if not m or not f.cls:
            return []
        writes = list(self.symbols.attr_writes(self._self_class(module, f), m.group(1)))
        if not writes or not all(isinstance(w.value, LambdaValue) for _, _, w in writes):
            return []
        return [Argument(w.value, wmod, self.symbols.file_of_module(wmod), wf, w.line, w.blocks)
                for wmod, wf, w in writes]

    def _call_passed(self, arg: Argument, callee: str, walk: Walk, called: Argument) -> list[Outcome]:
        """``callee(...)`` (the call ``called``) where ``callee`` is ``arg``: a lambda's body with its
        parameters bound to the call's arguments, or the function it names (``self._catch_up``,
        ``functools.partial(f, ...)``), followed where the argument was written."""
        v = arg.value
        if isinstance(v, LambdaValue):
            args = called.value.args if isinstance(called.value, CallValue) else ()
            if len(args) != len(v.params) or (isinstance(called.value, CallValue) and called.value.keywords):
                return [Outcome(None, unresolved=f"{callee}(...) is `{v.text}`, called with other arguments "
                                                 "than its parameters")]
            bound = {p: called.but_value(a) for p, a in zip(v.params, args)}
            with self._lambda_bound(function_key(arg.module, arg.f), bound):
                return self._value(arg.place, v.body, walk.deeper())
        if isinstance(v, CallValue) and v.callee.split(".")[-1] == "partial" and v.args:
            v = v.args[0]
        if isinstance(v, (Name, Chain)):
            ref = v.name if isinstance(v, Name) else v.text
            # the function it names, called with no arguments known (``spread``: any of its
            # parameters may be filled)
            call = CallValue(ref, {}, (), spread=True, text=f"{ref}()")
            # one hop, as any call: _call counts it when it follows the function's returns
            return self._call(arg.place, call, walk)
        return [Outcome(None, unresolved=f"{callee}(...) calls `{v.shown}`")]

    def _self_class(self, module: str, f: FunctionFacts) -> str:
        """The class of ``self`` in ``f``: the receiver being followed, else ``f``'s own class."""
        own = f"{module}.{f.cls}" if f.cls else ""
        receiver = self._receivers[-1] if self._receivers else None
        return receiver if receiver and own in self.symbols.mro(receiver) else own

    def _targets(self, module: str, f: FunctionFacts, callee: str) -> list[str]:
        """The functions a call reaches: the contracts' own resolution (``self.m`` on the receiver's
        class, ``self.a.m``, module names), else the index's for a call of the same text in that
        function (longer receiver chains, properties, attributes typed by their callers' arguments)."""
        method = re.fullmatch(r"self\.(\w+)", callee)
        if method and f.cls and self.symbols.lookup_method(self._self_class(module, f), method.group(1)):
            # a method of the class: what the name is bound to where it is called (an attribute
            # only assigned on the instance is the index's to resolve, below)
            bound = self.symbols.method_bindings(self._self_class(module, f), method.group(1))
            if bound and all(b.target for b in bound):
                return [b.target for b in bound]
            if bound:  # one of them not known: the call is not resolved
                return []
        targets = self.symbols.resolve_callee(module, f, callee)
        if targets:
            return targets
        func_qn = function_key(module, f)
        nested = f"{func_qn}.<locals>.{callee}"  # a function defined in this one (parsed with it)
        if self.symbols.indexed(nested) is not None:
            return [nested]
        if func_qn not in self._indexed_calls:
            project = self.symbols.project
            # the index names a nested function outer.inner
            self._indexed_calls[func_qn] = [c for c in project.calls(func_qn.replace(".<locals>.", "."))
                                            if not c.external and c.resolution != "unresolved"]
        text = callee + "()"
        project = self.symbols.project
        return sorted({t for c in self._indexed_calls[func_qn] if c.text == text for t in c.targets
                       if project.func(t) is not None})

    def _construct(self, at: Place, desc: CallValue, walk: Walk, fields: dict, cls_name: str,
                   cls_qn: str) -> list[Outcome]:
        """A constructor call: keywords, positionals (in field order) and the dataclass defaults,
        then what the class's ``__post_init__`` writes on ``self``."""
        want, site = walk.want, f"{at.rel}:{at.line} `{desc.text or cls_name}`"
        passed = dict(desc.keywords)
        places: dict[str, Place] = {}  # fields given by a `*name` display: evaluated where it is built
        star = self._star_items(at, desc)
        for name, (given, arg) in zip(fields, star[1] if star else [(False, a) for a in desc.args]):
            passed.setdefault(name, arg)
            if given:
                places[name] = at.moved(star[0].line, star[0].blocks)
        spread = set() if star else self._spread_keys(at, desc)
        states = [Outcome(set())]
        for name in want:
            if name not in passed and (spread is None or name in spread):
                item = self._spread_item(at, desc, name)
                if item is not None:  # `Cls(**fields)` with `fields = {"f": v, ...}`: v, where the dict is built
                    nxt = [s for s in states if s.sets is None]  # past the forks followed: as it is
                    for s in _followed(states):
                        nxt.extend(self._assign(item[0], s, name, item[1], walk.wanting(want[name]), site,
                                                self._matters(name, cls_name)))
                    states = _capped(nxt, f"more than {MAX_FORKS} ways {site} sets {cls_name}.{name}")
                    continue
                # a key of the dict may give the field, with a value not followed
                why = f"{site} may set {cls_name}.{name} through its {self._stars(at, desc)} arguments"
                for s in _followed(states):
                    s.unknown[name] = why
                continue
            if name not in passed:
                fi = fields.get(name)
                if fi is not None and fi.default_set:
                    for s in _followed(states):
                        s.sets.add(name)
                        s.unknown.update({p: f"the default of {cls_name}.{name}" for p in _want_paths(want[name], name + ".")})
                elif self._matters(name, cls_name) or name in self.witnessed:
                    for s in _followed(states):
                        s.cleared[name] = f"{site} leaves {cls_name}.{name} at its default None"
                continue
            nxt = [s for s in states if s.sets is None]
            for s in _followed(states):
                nxt.extend(self._assign(places.get(name, at), s, name, passed[name], walk.wanting(want[name]), site,
                                        self._matters(name, cls_name), write_conds=_conds_at(at)))
            states = _capped(nxt, f"more than {MAX_FORKS} ways {site} sets {cls_name}.{name}")
        return self._post_init(states, walk, cls_name, cls_qn)

    def _spread_keys(self, at: Place, desc: CallValue) -> set[str] | None:
        """The keys a constructor call's ``**`` arguments may give (none without them; None: any)."""
        if not desc.spread:
            return set()
        calls = [c for c in at.f.calls if c.line == at.line and c.callee == desc.callee and c.spread]
        return spread_keys(at.f, calls[0]) if len(calls) == 1 else None

    @staticmethod
    def _stars(at: Place, desc: CallValue) -> str:
        """How a call spreads its arguments, as written: ``*``, ``**`` or ``* and **``."""
        calls = [c for c in at.f.calls if c.line == at.line and c.callee == desc.callee and c.spread]
        kinds = {"**" if s.startswith("**") else "*" for c in calls[:1] for s in c.spread}
        return " and ".join(sorted(kinds)) or "**"

    def _star_items(self, at: Place, desc: CallValue):
        """(binding, [(given by it, value)]) of a constructor call's one ``*name`` spread of a local
        display (spread_keys.star_items), None otherwise."""
        if not desc.spread or not desc.text or len(desc.text) >= 200:  # (a text cut short does not parse)
            return None
        calls = [c for c in at.f.calls if c.line == at.line and c.callee == desc.callee and c.spread]
        got = star_items(at.f, calls[0], desc.text) if len(calls) == 1 else None
        return got if got is not None and runs_before(got[0], at.line, at.blocks) else None

    def _spread_item(self, at: Place, desc: CallValue, key: str) -> tuple[Place, Value] | None:
        """Where the one dict a constructor call spreads gives ``key``, and the value it gives."""
        calls = [c for c in at.f.calls if c.line == at.line and c.callee == desc.callee and c.spread]
        got = spread_item(at.f, calls[0], key) if len(calls) == 1 else None
        return None if got is None else (at.moved(got[0].line, got[0].blocks), got[1])

    def _through_setter(self, w) -> list | str:
        """``result.p = v`` where ``p`` is a property of the owner with a setter: the writes that
        setter makes (``self.f = value`` as written, unconditionally: ``result.f = v``); a setter
        that writes a field in another way is not followed (the reason, as a string)."""
        prop = w.attrs[0]
        if prop not in self._setters:
            self._setters[prop] = self._setter_writes(prop)
        got = self._setters[prop]
        if got is None:
            return []
        if isinstance(got, str):
            return f"`{w.shape}` at {w.line} {got}"
        return [replace(w, attrs=[field_name]) for field_name in got]

    def _setter_writes(self, prop: str) -> list[str] | str | None:
        owner = self.analysis_owner
        rel = owner.file
        spans = [sp for sp in self.symbols.facts.spans(rel) if sp.cls == owner.name and sp.name == prop]
        setters = [g for g in self.symbols.facts.facts(rel, spans) if any(d == f"{prop}.setter" for d in g.decorators)]
        if not setters:
            return None
        g = setters[0]
        param = g.params[1][0] if len(g.params) > 1 else None
        fields = []
        for x in g.writes:
            if x.root != "self" or not x.attrs or x.attrs[0] not in self.fields:
                continue
            if len(x.attrs) > 1 or x.conds or x.blocks or x.exits or not is_name(x.value, param or ""):
                return f"writes {x.attrs[0]} through the setter of {owner.name}.{prop} (`{x.shape}`), not followed"
            fields.append(x.attrs[0])
        return fields

    def _field_of(self, at: Place, desc: CallValue, cls_qn: str, walk: Walk) -> list[Outcome]:
        """Field ``walk.attr`` of an instance the call builds: of a NamedTuple or a dataclass, the
        argument given for it (by keyword or position) or its default."""
        fields = self._dataclass_fields(cls_qn)
        if fields is None and cls_qn not in self._named_tuples:
            self._named_tuples[cls_qn] = named_tuple_fields(self.symbols, cls_qn)
        names = list(fields) if fields is not None else self._named_tuples[cls_qn]
        name, rest = walk.attr, replace(walk, attr=None)
        shown = desc.text or desc.callee
        if names is None or name not in names:
            return [Outcome(None, unresolved=f"`{name}` of `{shown}`")]
        if name in desc.keywords:
            return self._value(at, desc.keywords[name], rest)
        i = names.index(name)
        if i < len(desc.args) and not desc.spread:
            return self._value(at, desc.args[i], rest)
        return [Outcome(None, unresolved=f"`{name}` of `{shown}` (a default or spread arguments)")]

    def _post_init(self, states: list[Outcome], walk: Walk, cls_name: str, cls_qn: str) -> list[Outcome]:
        """The states after ``__post_init__`` (through the MRO) writes the fields looked for: each
        write under its own conditions, skipped under their negation."""
        t = self.symbols.lookup_method(cls_qn, "__post_init__")
        got = self.symbols.function_facts(t) if t else None
        if got is None:
            return states
        rel, f = got
        module = self.symbols.module_of_file(rel)
        for w in f.writes:
            name = w.attrs[0] if w.root == "self" and len(w.attrs) == 1 else None
            if name not in walk.want:
                continue
            conds = path_conditions(w)
            at = Place(module, rel, f, w.line, w.blocks)
            nxt = [s for s in states if s.sets is None]
            for s in _followed(states):
                if conds:
                    skipped = _not_all(conds)
                    nxt.append(s.but(conds=s.conds + [skipped], branch=s.branch + [skipped]))
                for o in self._assign(at, s, name, w.value, walk.wanting(walk.want[name]), f"{rel}:{w.line} `{w.shape}`",
                                      self._matters(name, cls_name), write_conds=w.conds):
                    nxt.append(o.but(conds=o.conds + conds, branch=o.branch + conds))
            states = _capped(nxt, f"more than {MAX_FORKS} ways __post_init__ of {cls_name} sets {name}")
        return states

    def _assign(self, at: Place, state: Outcome, name: str, value: Value, walk: Walk, site: str, matters: bool = True,
                write_conds=()) -> list[Outcome]:
        """``state`` with attribute ``name`` given ``value`` (evaluated ``at``): set, left None, or
        its attributes below it (``walk.want``). ``write_conds``: the conditions the write runs under
        (they may rule a None value out)."""
        want_sub = walk.want
        base = state.sets - {p for p in state.sets if _under(p, name)}
        unknown = {p: w for p, w in state.unknown.items() if not _under(p, name)}
        cleared = {p: w for p, w in state.cleared.items() if not _under(p, name)}
        kept = self._kept_on_self(at, value)
        if kept is not None:  # `self.a = helper(...)` earlier in the function: that value
            at, value = kept
        if isinstance(value, NoneValue):
            cleared[name] = f"{site} sets it to None"
            return [state.but(sets=base, unknown=unknown, cleared=cleared)]
        # a call is followed to its every return: a helper returning None on some path leaves the field None
        follow = (matters and isinstance(value, (IfExp, Name, CallValue, BoolOp))) or \
            (isinstance(value, CallValue) and want_sub)
        if not follow:
            sub = {p: f"`{value.shown}` not followed" for p in _want_paths(want_sub, name + ".")}
            return [state.but(sets=base | {name}, unknown={**unknown, **sub}, cleared=cleared)]
        out = []
        # a local tested against None around this write cannot be None here
        narrowed = isinstance(value, Name) and _known_not_none(value.name, write_conds)
        for o in self._value(at, value, walk.deeper(owner=False)):
            conds, branch = state.conds + o.conds, state.branch + o.branch
            if o.not_a_result and narrowed:
                continue
            if o.not_a_result:
                out.append(state.but(sets=base, unknown=unknown, conds=conds, branch=branch,
                                     cleared={**cleared, name: f"{site} leaves it None" + (f" when {C.render(o.branch)}" if o.branch else "")}))
            elif o.sets is None and o.undecided:  # what the field holds is not known: it is no obligation met
                out.append(state.but(sets=base, unknown={**unknown, name: o.unresolved}, cleared=cleared,
                                     conds=conds, branch=branch))
            elif o.sets is None:
                sub = {p: o.unresolved or "not followed" for p in _want_paths(want_sub, name + ".")}
                out.append(state.but(sets=base | {name}, unknown={**unknown, **sub}, cleared=cleared, conds=conds, branch=branch))
            else:
                out.append(state.but(sets=base | {name} | _prefixed(name, o.sets), conds=conds, branch=branch,
                                     unknown={**unknown, **{f"{name}.{p}": w for p, w in o.unknown.items()}},
                                     cleared={**cleared, **{f"{name}.{p}": w for p, w in o.cleared.items()}}))
        return out

    def _name(self, at: Place, name: str, walk: Walk) -> list[Outcome]:
        """The value a local holds ``at`` a place, as ``_bound_value`` finds it, less the ways that
        an ``assert`` or an early exit (``if name is None: raise``) since its binding rules out: a
        None there, or a field of it left None."""
        outcomes = self._bound_value(at, name, walk)
        f = at.f
        # `if (d := make()) is None: d = other`: where the binding under the test is skipped, the
        # test said d is not None, so a None of the value tested does not come through
        tests = {c.text for b in f.bindings if b.target == name for c in b.conds}
        outcomes = [o for o in outcomes
                    if not (o.not_a_result and _known_not_none(name, [c for c in o.branch if c.text in tests]))]
        if not f.asserts or name in f.rebound_inside:
            return outcomes
        last = max((b.line for b in f.bindings if b.target == name and b.line < at.line), default=f.line)
        held = self._held_at(at, last)
        if not held:
            return outcomes
        # a field's test also needs the object untouched since: no write through it, no call
        touched = [w.line for w in f.writes if w.root == name] + [c.line for c in f.calls]
        fields_held = [c for c, line in held if not any(line < t < at.line for t in touched)]
        held = [c for c, _ in held]
        kept = []
        for o in outcomes:
            if o.not_a_result and _known_not_none(name, held):
                continue
            if any(_known_not_none(f"{name}.{p}", fields_held) for p in o.cleared):
                continue
            kept.append(o)
        return kept

    @staticmethod
    def _held_at(at: Place, since: int) -> list[tuple[Cond, int]]:
        """The asserts, and the tests of early exits (``if test: raise``: ``not test`` holds after
        it), that every way to the statement ``at`` passed after line ``since``, each with its line."""
        return [(Cond(a.test, True), a.line) for a in at.f.asserts
                if since < a.line < at.line and runs_before(a, at.line, at.blocks)]

    def _bound_value(self, at: Place, name: str, walk: Walk) -> list[Outcome]:
        """The value a local holds ``at`` a place: its last dominating binding (a parameter without
        one: its argument at the call being followed), then every later binding and attribute write
        before it, its own or a helper's it is passed to; one not on every path forks (taken under
        its condition, skipped under its negation), so a ``None`` written on any branch is seen."""
        module, rel, f, line, want = at.module, at.rel, at.f, at.line, walk.want
        if name in f.unsure_roots:  # a local container's item that something may change
            return [Outcome(None, unresolved=f.unsure_roots[name], undecided=True)]
        lam = self._lambda_args.get(function_key(module, f))
        if lam and name in lam[-1]:
            a = lam[-1][name]
            return self._value(a.place, a.value, walk)
        nested = self._nested_bindings(module, rel, f, name) if name in f.rebound_inside else []
        if nested is None:
            return [Outcome(None, unresolved=f"{name} is rebound by a function nested in {f.qualname} (nonlocal) "
                                             "that is not only called there", undecided=True)]
        binds = [b for b in f.bindings if b.target == name and b.line < line]
        dom = [b for b in binds if runs_before(b, line, at.blocks)]
        arg = self._argument(module, f, name) if not dom and any(p == name for p, _ in f.params) else None
        if dom:
            b = max(dom, key=lambda b: b.line)
            skipped = _undecided_with(f, b.line, line)
            if skipped:  # the binding may have been cut short by an error the manager swallows
                return [Outcome(None, unresolved=skipped, undecided=True)]
            return self._after(at, name, walk, b.line, self._value(at.moved(b.line, b.blocks), b.value, walk),
                               binds, nested)
        if arg is not None:  # a parameter: its argument at the call being followed (outwards, no hop)
            return self._after(at, name, walk, f.line, self._value(arg.place, arg.value, walk), binds, nested)
        arms = covering_bindings(f, binds, line, at.blocks)
        if arms is None:
            return [Outcome(None, unresolved=f"{name} not bound before the return")]
        out = []  # bound in every arm of an if/match before the return: each arm's value in turn
        for b in arms:
            skipped = _undecided_with(f, b.line, line)
            if skipped:
                return [Outcome(None, unresolved=skipped, undecided=True)]
            taken = [o.but(conds=list(b.conds) + o.conds, branch=list(b.conds) + o.branch)
                     for o in self._value(at.moved(b.line, b.blocks), b.value, walk)]
            out.extend(self._after(at, name, walk, b.line, taken, binds, nested, arm=b.blocks))
        return out

    def _after(self, at: Place, name: str, walk: Walk, start: int, states: list[Outcome], binds: list,
               nested: list, arm: list[str] | None = None, within: str | None = None) -> list[Outcome]:
        """``states`` of local ``name`` bound at ``start``, through the bindings, writes and calls
        between there and ``at`` (``arm``: the blocks of a binding in one arm of an if/match; what
        the other arms do never runs after it; ``within``: only those inside that block)."""
        module, rel, f, line, want = at.module, at.rel, at.f, at.line, walk.want
        computed = [w for w in f.computed_writes if w.root == name and (not w.attrs or w.attrs[0] in want)
                    and start < w.line < line and (within is None or within in w.blocks)]
        if computed:  # which attribute it writes is not known: no path through it is decided
            w = computed[0]
            why = f"`{w.shape}` at {rel}:{w.line} writes an attribute whose name is computed"
            return [s.but(sets=None, unresolved=why) for s in states[:1]]
        through_setters = []
        for w in f.writes if walk.owner else ():
            if w.root == name and len(w.attrs) == 1 and w.attrs[0] not in want and start < w.line < line:
                mapped = self._through_setter(w)
                if isinstance(mapped, str):
                    return [s.but(sets=None, unresolved=mapped) for s in states[:1]]
                through_setters.extend(x for x in mapped if x.attrs[0] in want)
        wanted = _want_paths(want)
        # the object's other names: a write or a helper's write through one is a write of it
        holding = {name: start, **_aliases_of(f, name, start, line)}
        events = [x for x in binds if x.line > start] + [x for x in nested if start < x.line < line] + \
            [w for w in f.writes if w.root in holding and w.attrs and w.attrs[0] in want
             and holding[w.root] < w.line < line and start < w.line] + \
            through_setters + \
            [_opaque_or_write(pw, want) for held, since in holding.items() for c in f.calls
             if want and start < c.line < line and since < c.line and may_reach(handed(c, {held: []}), wanted)
             for pw in self.passed.of_call(module, rel, f, c, held, wanted) if _concerns(pw, want)] + \
            self._closure_writes(module, rel, f, holding, line, want)
        if arm is not None:
            events = [e for e in events if not other_arm(e.blocks, arm)]
        if within is not None:
            events = [e for e in events if within in e.blocks]
        for e in sorted(events, key=lambda e: e.line):
            every = runs_before(e, line, at.blocks)
            nxt = []
            for s in states:
                taken = s if every else s.but(conds=s.conds + list(e.conds), branch=s.branch + list(e.conds))
                if isinstance(e, Binding) and self._same_object(at.moved(e.line, e.blocks), e.value, name):
                    after = [taken]  # `x = copy.copy(x)`: this path's value, not every way x may be
                else:
                    after = self._event(at, taken, e, walk)
                skipped = _undecided_with(f, e.line, line)
                if skipped:
                    after = [_cut_short(o, e, skipped) for o in after]
                if not every and all(_same_value(o, s, self.relevant) for o in after):
                    nxt.append(s)  # taken or not, the value is the same: no fork
                    continue
                nxt.extend(after)
                if not every:
                    # skipped by an error inside the conditions the return stands under too, or
                    # under the negation of the event's own
                    skip = [_not_all(e.conds)] if e.conds and not apart_by_exceptions(e.blocks, at.blocks) else []
                    nxt.append(s.but(conds=s.conds + skip, branch=s.branch + skip))
            if len(nxt) > MAX_FORKS:  # not followed, under what every branch shares
                return [Outcome(None, unresolved=f"more than {MAX_FORKS} branches assign {name}", undecided=True,
                                conds=_shared(o.conds for o in nxt), branch=_shared(o.branch for o in nxt))]
            states = nxt
        return states

    def _closure_writes(self, module: str, rel: str, f: FunctionFacts, holding: dict[str, int], line: int,
                        want: dict) -> list[PassedWrite]:
        """The writes through a free variable that functions nested in ``f`` make where ``f`` calls
        them (``def clear(): result.draft = None`` ... ``clear()``), of the names ``holding`` the
        object since a line, before ``line``."""
        out = []
        prefix = f"{function_key(module, f)}.<locals>."
        for c in f.calls:
            got = self.symbols.indexed(prefix + c.callee) if "." not in c.callee and c.line < line else None
            if got is None:
                continue
            g = got[1]
            own = {b.target for b in g.bindings} | {p for p, _ in g.params}
            for w in g.writes:
                if w.root in holding and w.root not in own and holding[w.root] < c.line and w.attrs \
                        and w.attrs[0] in want:
                    out.append(PassedWrite(attrs=list(w.attrs), value=w.value, module=module, rel=rel, f=g,
                                           write_line=w.line, write_blocks=list(w.blocks), shape=w.shape, line=c.line,
                                           blocks=list(c.blocks) + list(w.blocks), conds=list(c.conds) + list(w.conds),
                                           arguments=[]))
        return out

    def _nested_bindings(self, module: str, rel: str, f: FunctionFacts, name: str) -> list["NestedBinding"] | None:
        """Each call in ``f`` of a function nested in it that rebinds ``name`` (``nonlocal``), as a
        binding of ``name`` at the call to the value the nested function gives it; None when a
        nested function binds it other than once at its top level, or is not only called."""
        out = []
        prefix = f"{function_key(module, f)}.<locals>."
        for c in f.calls:
            got = self.symbols.indexed(prefix + c.callee) if "." not in c.callee else None
            if got is None:
                continue
            g = got[1]
            binds = [b for b in g.bindings if b.target == name]
            if len(binds) != 1 or binds[0].blocks or binds[0].conds:
                return None
            b = binds[0]
            out.append(NestedBinding(c.line, c.blocks, c.conds, Place(module, rel, g, b.line, b.blocks), b.value))
        # a nested function named other than as a callee (passed on, stored, returned) may run anywhere
        names = {x.place.f.name for x in out}
        values = [*(v for c in f.calls for v in (*c.args, *c.keywords.values())),
                  *(b.value for b in f.bindings), *(r.value for r in f.returns), *(w.value for w in f.writes)]
        if not out or any(is_name(v, names) for v in values):
            return None
        return out

    def _event(self, at: Place, state: Outcome, e, walk: Walk) -> list[Outcome]:
        """``state`` after the event ``e`` of the function ``at`` is in: a binding, a write, a
        write that a helper makes through a parameter, or a call that may write anything."""
        if isinstance(e, OpaqueCall):
            if state.sets is None or state.not_a_result:
                return [state]
            return [state.but(sets={p for p in state.sets if not any(_under(p, w) for w in e.paths)},
                              unknown={**state.unknown, **{p: e.why for p in e.paths}})]
        if isinstance(e, NestedBinding):
            return [o.but(conds=state.conds + o.conds, branch=state.branch + o.branch)
                    for o in self._value(e.place, e.value, walk)]
        if isinstance(e, Binding):
            return [o.but(conds=state.conds + o.conds, branch=state.branch + o.branch)
                    for o in self._value(at.moved(e.line, e.blocks), e.value, walk)]
        if state.sets is None or state.not_a_result:
            return [state]
        if isinstance(e, PassedWrite):  # a callee's write: its value is the callee's expression
            with self._passing(e.arguments):
                return self._write(Place(e.module, e.rel, e.f, e.write_line, e.write_blocks), state, e.attrs, e.value,
                                   e.shape, e.conds, walk)
        return self._write(at.moved(e.line, e.blocks), state, e.attrs, e.value, e.shape, e.conds, walk)

    def _write(self, at: Place, state: Outcome, attrs: list[str], value: Value, shape: str, conds: list,
               walk: Walk) -> list[Outcome]:
        """``<value followed>.<attrs> = value`` written ``at`` a place."""
        site = f"{at.rel}:{at.line} `{shape}`"
        first, want = attrs[0], walk.want
        if len(attrs) == 1:
            return self._assign(at, state, first, value, walk.wanting(want[first]), site,
                                self._matters(first, self.owner_name if walk.owner else ""), write_conds=conds)
        if len(attrs) == 2 and attrs[1] in want[first]:
            return self._assign(at, state, f"{first}.{attrs[1]}", value, walk.wanting({}), site, write_conds=conds)
        return [state]

_TRY_PART = re.compile(r"^(\d+)[tTh]")


def named_tuple_fields(symbols, cls_qn: str) -> list[str] | None:
    """The fields of a ``typing.NamedTuple`` class of the tree, in order (None for another class)."""
    mod, _, name = cls_qn.rpartition(".")
    rel = symbols.file_of_module(mod)
    if rel is None:
        return None
    for node in ast.parse(symbols.facts.text(rel)).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            if not any((b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")) == "NamedTuple" for b in node.bases):
                return None
            return [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    return None


_ARM = re.compile(r"^(\d+)(?:[be]|c\d+)$")


def other_arm(blocks: list[str], arm: list[str]) -> bool:
    """Whether blocks lie in another arm than ``arm`` of an if or match both stand in."""
    for x, y in zip(blocks, arm):
        if x != y:
            mx, my = _ARM.match(x), _ARM.match(y)
            return bool(mx and my and mx.group(1) == my.group(1))
    return False


def covering_bindings(f: FunctionFacts, binds: list, line: int, blocks: list[str]) -> list | None:
    """Bindings of a local (``binds``, before ``line``) that together run on every way to the
    statement at ``line`` in ``blocks`` though none alone does: one per arm of an ``if``/``match``
    before it (the last at the arm's top level, or those of a split inside the arm that cover it),
    an arm that returns or raises needing none; None when some way has none."""
    splits = [sp for sp in f.splits if sp.line < line]

    def through(sp, prefix: list[str]) -> list | None:
        """The bindings that cover every arm of ``sp``, standing at ``prefix``."""
        got = []
        for arm, leaves in zip(sp.arms, sp.leaves):
            sub = [] if leaves else (cover(prefix + [arm]) if arm else None)
            if sub is None:
                return None
            got.extend(sub)
        return got

    def cover(prefix: list[str]) -> list | None:
        top = [b for b in binds if b.blocks == prefix]
        if top:
            return [max(top, key=lambda b: b.line)]
        return next((got for sp in sorted(splits, key=lambda sp: -sp.line) if sp.blocks == prefix
                     and (got := through(sp, prefix)) is not None), None)

    # the latest split before the statement, in the statement's blocks or one enclosing them,
    # that the statement does not stand in itself
    for k in range(len(blocks), -1, -1):
        prefix, inside = blocks[:k], (blocks[k] if k < len(blocks) else None)
        for sp in sorted(splits, key=lambda sp: -sp.line):
            if sp.blocks == prefix and inside not in sp.arms:
                got = through(sp, prefix)
                if got:
                    return got
    return None


def effective_returns(f: FunctionFacts) -> list[tuple[Return, list]]:
    """Each ``return`` of ``f`` with the conditions under which its value is what the call returns:
    a ``return`` in a ``finally`` replaces what the try's body, ``else`` or handlers returned, so
    those run under ``not`` that return's own conditions, and not at all when it is unconditional."""
    finals: dict[str, list[Return]] = {}
    for ret in f.returns:
        for b in ret.blocks:
            if b.endswith("y"):
                finals.setdefault(b[:-1], []).append(ret)
    out = []
    for ret in f.returns:
        own = path_conditions(ret)
        cancelled = False
        for b in ret.blocks:
            m = _TRY_PART.match(b)
            for final in finals.get(m.group(1), []) if m else []:
                extra = [c for c in path_conditions(final) if c not in own]
                if not extra:
                    cancelled = True
                else:
                    own.append(_not_all(extra))
        if not cancelled:
            out.append((ret, own))
    return out


_CONSTANTS = {"True": True, "False": False, "None": None}


def constant_parameters(g: FunctionFacts, bound: dict[str, Value], spread: bool) -> dict[str, object]:
    """{parameter: True/False/None} for the parameters a call gives a literal constant, or leaves at
    a literal default (unless a ``*args``/``**kwargs`` may fill them)."""
    out: dict[str, object] = {}
    for p, _ann in g.params:
        value = bound.get(p)
        if value is None and not spread:
            value = g.defaults.get(p)
        if isinstance(value, NoneValue):
            out[p] = None
        elif is_name(value, _CONSTANTS):
            out[p] = _CONSTANTS[value.name]
    return out


def decided(conds: list, constants: dict[str, object]) -> list | None:
    """``conds`` without those that the constant parameters make true; None when one is false.
    Only a condition that is the bare parameter (``is_verify``, ``x is None``) is decided."""
    if not constants:
        return conds
    out = []
    for text, positive in conds:
        t = text.strip()
        if t.endswith(" is None") or t.endswith(" is not None"):
            name, _, rest = t.partition(" is ")
            if name in constants:
                holds = (constants[name] is None) == (rest == "None")
                if holds != positive:
                    return None
                continue
        elif t in constants:
            if bool(constants[t]) != positive:
                return None
            continue
        out.append(Cond(text, positive))
    return out


def worker_return_paths(analysis: Analysis, targets: list[str], methods: list[str],
                        deep: dict[str, set[str]] | None = None, relevant: set[str] | None = None,
                        witnessed: set[str] = frozenset()) -> list[ReturnPath]:
    """Return paths of each method in ``methods`` of each ``model_worker`` class; ``deep``: {field:
    attributes below it that the scheduler dereferences}, followed into the field's value;
    ``witnessed``: fields whose None default a path keeps is noted in its ``cleared`` too."""
    finder = ReturnPathFinder(analysis, set(analysis.fields), deep, relevant, witnessed)
    paths: list[ReturnPath] = []
    for t in targets:
        for meth in methods:
            for b in analysis.symbols.method_bindings(t, meth):
                if b.target is None:  # bound to what the analysis does not follow
                    paths.append(ReturnPath(worker=t, method=f"{t.rpartition('.')[2]}.{meth}", file=b.rel, line=b.line,
                                            shape=b.shape, path_condition="", conditions=[], sets=None, via=[],
                                            unresolved=b.why))
                else:
                    paths.extend(finder.paths_of(t, b.target))
    return paths


def named_producer_paths(analysis: Analysis, producers: dict[str, list[str]]) -> dict[str, list[ProducerFunction]]:
    """``{"Class.method": [ProducerFunction]}``, one entry per class of that name that has the
    method; ``producers`` maps each to the extra attribute names it may set."""
    extra = {name for names in producers.values() for name in names}
    finder = ReturnPathFinder(analysis, set(analysis.fields) | extra, relevant=extra)
    symbols = analysis.symbols
    out = {}
    for name in sorted(producers):
        cls_name, meth = name.rsplit(".", 1)
        found = []
        for cls_qn in symbols.find_class(cls_name):
            func_qn = symbols.lookup_method(cls_qn, meth) or f"{cls_qn}.{meth}"
            got = symbols.function_facts(func_qn)
            if got is None:
                continue
            rel, f = got
            found.append(ProducerFunction(function=func_qn, file=rel, line=f.line,
                                          paths=list(finder.paths_of(cls_qn, func_qn))))
        out[name] = found
    return out
