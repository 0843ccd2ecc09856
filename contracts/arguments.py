"""What a call passes to the function it reaches: its arguments by parameter name, and the
attribute writes the callee (or the functions it passes the object on to, to a bounded depth)
makes on an object it was given (``self._fill(batch_output)`` setting
``batch_output.next_draft_input.topk_p``, directly or through a local alias of one of its
attributes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from spectrace.contracts.facts import FunctionFacts, path_conditions
from spectrace.contracts.symbols import Symbols
from spectrace.contracts.values import Chain, Name, Value

# calls followed below the one that receives the object (a helper calling a helper ...)
MAX_DEPTH = 3


@dataclass(frozen=True)
class Place:
    """Where an expression is evaluated: a function (its module and file) and a statement in it
    (its line and block ids, for dominance)."""
    module: str
    rel: str
    f: FunctionFacts
    line: int
    blocks: list

    def moved(self, line: int, blocks: list) -> "Place":
        """Another statement of the same function."""
        return Place(self.module, self.rel, self.f, line, blocks)

    def holding(self, value: Value) -> "Argument":
        """The expression ``value``, evaluated here."""
        return Argument(value, self.module, self.rel, self.f, self.line, self.blocks)


@dataclass
class Argument:
    """A parameter's value: an expression of the caller, evaluated where the call is."""
    value: Value
    module: str
    rel: str
    f: FunctionFacts
    line: int
    blocks: list

    @property
    def place(self) -> Place:
        return Place(self.module, self.rel, self.f, self.line, self.blocks)

    def but_value(self, value: Value) -> "Argument":
        """Another expression evaluated at the same place."""
        return self.place.holding(value)


@dataclass
class PassedWrite:
    """``<passed object>.<attrs> = value`` done by a callee, seen from the caller's call."""
    attrs: list[str]  # the path written, below the object the caller passed
    value: Value | None  # the value written, an expression of ``f`` (the callee's frame); None: ``opaque``
    module: str
    rel: str
    f: FunctionFacts
    write_line: int
    write_blocks: list
    shape: str
    line: int  # the caller's call (the order of the caller's events)
    blocks: list  # the call's blocks, plus one of its own when the callee does not always write
    conds: list  # the call's conditions and those of the write inside the callees
    arguments: list  # (function key, {param: Argument}) of each callee on the way, outermost first
    # why the write is not known: a call handed the object (``attrs``: the path below it that is
    # handed) that reaches no function of the tree with a body may set or clear anything below it
    opaque: str | None = None


# callees handed an object that write none of its attributes (a dataclass's repr, a logger's format),
# or whose writes the facts record (setattr, delattr)
_NO_ATTRIBUTE_WRITES = frozenset({
    "setattr", "object.__setattr__", "delattr", "object.__delattr__", "isinstance", "issubclass", "len", "id", "type",
    "repr", "str", "print", "hasattr", "getattr", "bool", "callable", "hash", "format", "dataclasses.is_dataclass",
    "dataclasses.replace", "dataclasses.asdict", "dataclasses.astuple", "dataclasses.fields", "copy.copy",
    "copy.deepcopy", "typing.cast",
})
_LOGGERS = frozenset({"logger", "logging", "log"})


def writes_nothing(callee: str) -> bool:
    """Does a call of ``callee`` write no attribute of what it is handed?"""
    return callee in _NO_ATTRIBUTE_WRITES or callee.split(".", 1)[0] in _LOGGERS


def function_key(module: str, f: FunctionFacts) -> str:
    return f"{module}.{f.qualname}"


def bind(g: FunctionFacts, args: list[Value], keywords: dict[str, Value]) -> dict[str, Value]:
    """The callee's parameters and the argument values a call gives them (``self``/``cls`` of a
    method are the receiver, not an argument)."""
    params = [p for p, _ in g.params if not (g.cls and p in ("self", "cls"))]
    out = dict(zip(params, args))
    out.update({k: v for k, v in keywords.items() if k in params})
    return out


def handed_prefix(value: Value, roots: dict) -> list[str] | None:
    """The path below one of ``roots`` (name -> its path) that an argument hands on: the root
    itself, or an attribute chain of it (``result.draft``: the root's path, then ``draft``)."""
    if isinstance(value, Name) and value.name in roots:
        return roots[value.name]
    if isinstance(value, Chain) and value.root in roots:
        return roots[value.root] + list(value.attrs)
    return None


def receiver_prefix(callee: str, roots: dict) -> list[str] | None:
    """The path below one of ``roots`` that a method call's receiver is (``result.draft.trim``:
    the root's path, then ``draft``), or None for a call on anything else."""
    parts = callee.split(".")
    # (the root may be a local container's item, spelled `held["r"]`)
    if len(parts) < 2 or parts[0] not in roots or not all(p.isidentifier() for p in parts[1:]):
        return None
    return roots[parts[0]] + parts[1:-1]


def handed(call, roots: dict) -> list[list[str]]:
    """The paths below ``roots`` that ``call`` hands on: one of them or an attribute chain of one,
    as an argument or as the receiver of the method it calls."""
    out = [p for p in (handed_prefix(a, roots) for a in [*call.args, *call.keywords.values()]) if p is not None]
    receiver = receiver_prefix(call.callee, roots)
    return out + ([receiver] if receiver is not None else [])


def _below(prefix: list[str], paths: tuple) -> tuple:
    """``paths`` (dotted) as seen from the object at ``prefix``: those below it, without it."""
    if not prefix:
        return paths
    head = ".".join(prefix) + "."
    return tuple(p[len(head):] for p in paths if p.startswith(head))


def may_reach(prefixes: list[list[str]], paths) -> bool:
    """Can a call handed the objects at ``prefixes`` change one of ``paths`` (dotted, below the
    same root)? Only what lies below what it is handed, or anything where it is handed the root."""
    return any(not p or any(q.startswith(".".join(p) + ".") for q in paths) for p in prefixes)


class PassedWrites:
    """The writes each call makes through an object passed to it, per (callee, parameter), cached."""

    def __init__(self, symbols: Symbols, targets: Callable[[str, FunctionFacts, str], list[str]]):
        self.symbols = symbols
        self.targets = targets  # (module, facts, callee text) -> fully qualified functions
        self._cache: dict[tuple[str, str, int], list] = {}

    def of_call(self, module: str, rel: str, f: FunctionFacts, call, name: str,
                wanted: tuple = ()) -> list[PassedWrite]:
        """The writes below ``name`` that ``call`` (a CallSite of ``f`` passing the local ``name``)
        makes; ``wanted``: the dotted paths below it that matter (calls inside the callee that can
        reach none of them are not followed)."""
        return self._of_call(module, rel, f, call, {name: []}, 0, tuple(wanted))

    def _of_call(self, module: str, rel: str, f: FunctionFacts, call, roots: dict, depth: int,
                 wanted: tuple) -> list[PassedWrite]:
        out: list[PassedWrite] = []
        targets = self.targets(module, f, call.callee)
        if not any(self.symbols.function_facts(t) is not None for t in targets):
            return self._opaque(rel, f, call, roots, bool(targets))
        for target in targets:
            got = self.symbols.function_facts(target)
            if got is None:
                continue
            rel2, g = got
            mod2 = self.symbols.module_of_file(rel2)
            bound = bind(g, call.args, call.keywords)
            arguments = {p: Argument(v, module, rel, f, call.line, call.blocks) for p, v in bound.items()}
            handed = [(param, handed_prefix(desc, roots)) for param, desc in bound.items()]
            receiver = receiver_prefix(call.callee, roots)
            if receiver is not None and g.cls and g.params and g.params[0][0] == "self":
                handed.append(("self", receiver))  # a method of the object (or of an attribute of it)
            for param, prefix in handed:
                if prefix is None:
                    continue
                for pw in self._through(mod2, rel2, g, param, depth, _below(prefix, wanted)):
                    out.append(PassedWrite(
                        attrs=prefix + pw.attrs, value=pw.value, module=pw.module, rel=pw.rel, f=pw.f,
                        write_line=pw.write_line, write_blocks=pw.write_blocks, shape=pw.shape, line=call.line,
                        blocks=list(call.blocks) + pw.blocks, conds=list(call.conds) + pw.conds,
                        arguments=[(function_key(mod2, g), arguments)] + pw.arguments, opaque=pw.opaque))
        return out

    def _opaque(self, rel: str, f: FunctionFacts, call, roots: dict, resolved: bool) -> list[PassedWrite]:
        """``call`` as writes of unknown values below each object of ``roots`` it is handed (as an
        argument or as the receiver of a method), where no body of the tree says what it does."""
        if writes_nothing(call.callee):
            return []
        handed: dict[tuple, str] = {}  # the path below a root -> the handed expression, as written
        for a in [*call.args, *call.keywords.values()]:
            p = handed_prefix(a, roots)
            if p is not None:
                handed.setdefault(tuple(p), a.name if isinstance(a, Name) else ".".join([a.root, *a.attrs]))
        receiver = receiver_prefix(call.callee, roots)
        if receiver is not None:
            handed.setdefault(tuple(receiver), call.callee.rsplit(".", 1)[0])
        if not handed:
            return []
        how = "reaches no source" if resolved else "resolves to no function of the tree"
        why = f"`{call.callee}(...)` at {rel}:{call.line} is handed {', '.join(sorted(set(handed.values())))} and {how}"
        return [PassedWrite(attrs=list(p), value=None, module="", rel=rel, f=f, write_line=call.line,
                            write_blocks=list(call.blocks), shape=call.callee, line=call.line,
                            blocks=list(call.blocks), conds=list(call.conds), arguments=[], opaque=why)
                for p in handed]

    def _through(self, module: str, rel: str, g: FunctionFacts, param: str, depth: int,
                 wanted: tuple) -> list[PassedWrite]:
        """The writes ``g`` makes below its parameter ``param``, in the callee's terms (``line`` and
        ``blocks`` of the write itself, a block of its own when it is conditional); its calls
        handed the parameter are followed where they may reach a path of ``wanted`` (below it)."""
        key = (function_key(module, g), param, depth, wanted)
        if key in self._cache:
            return self._cache[key]
        self._cache[key] = []  # a recursive call adds nothing
        if any(b.target == param for b in g.bindings):
            return []  # the parameter is rebound: later writes are not on the passed object
        roots = {param: []}
        for b in g.bindings:  # ``d = param.a`` then ``d.x = ...`` writes ``param.a.x``
            v = b.value
            if (isinstance(v, Chain) and v.root in roots and b.target not in roots
                    and sum(x.target == b.target for x in g.bindings) == 1):
                roots[b.target] = roots[v.root] + list(v.attrs)
        out: list[PassedWrite] = []
        for w in g.writes:
            if w.root not in roots:
                continue
            conds = path_conditions(w)
            out.append(PassedWrite(
                attrs=roots[w.root] + list(w.attrs), value=w.value, module=module, rel=rel, f=g,
                write_line=w.line, write_blocks=w.blocks, shape=w.shape, line=w.line,
                blocks=[f"{function_key(module, g)}:{w.line}"] if (w.blocks or conds) else [],
                conds=conds, arguments=[]))
        if depth < MAX_DEPTH:
            for c in g.calls:
                if may_reach(handed(c, roots), wanted):
                    # an earlier return may skip the call (calls carry no early exits of their own)
                    skippable = any(r.line < c.line for r in g.returns)
                    for pw in self._of_call(module, rel, g, c, roots, depth + 1, wanted):
                        own = skippable or bool(pw.blocks) or bool(pw.conds)
                        out.append(PassedWrite(
                            attrs=pw.attrs, value=pw.value, module=pw.module, rel=pw.rel, f=pw.f,
                            write_line=pw.write_line, write_blocks=pw.write_blocks, shape=pw.shape, line=c.line,
                            blocks=[f"{function_key(module, g)}:{c.line}:{pw.write_line}"] if own else [],
                            conds=pw.conds, arguments=pw.arguments, opaque=pw.opaque))
        out.sort(key=lambda pw: pw.line)
        self._cache[key] = out
        return out
