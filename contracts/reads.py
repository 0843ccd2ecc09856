"""The reads pass: every ``holder.field`` (and ``holder.field.sub``, and ``alias.sub`` after
``alias = holder.field``) with its consumer, position, guards and path condition."""

from __future__ import annotations

import re
from dataclasses import replace

from spectrace.contracts import conditions as C
from spectrace.contracts.analysis import Analysis
from spectrace.contracts.arguments import bind
from spectrace.contracts.facts import ChainRead, FunctionFacts, Guard, path_conditions
from spectrace.contracts.holders import Holders
from spectrace.contracts.kinds import GuardKind, ReadKind
from spectrace.contracts.node_context import all_not_none
from spectrace.contracts.records import FieldRead, read_id
from spectrace.contracts.values import AttrOf, BoolOp, CallValue, Chain, IfExp, LambdaValue, Name, TupleValue, Value
from spectrace.sides import SCHEDULER


def field_reads(analysis: Analysis, rel: str, module: str, side: str, f: FunctionFacts, holders: Holders) -> list[FieldRead]:
    out = []
    # alias name -> [(field, the read it was bound from)]: a loop over (r.a, r.b) binds its variable to each
    aliases: dict[str, list[tuple[str, ChainRead]]] = {}
    tested = set(f.none_tested)
    # `logits = result.f` then `if logits.x is not None: result.f.x...`: the test speaks of result.f.x
    spelled = {v: f"{r.root}.{r.attrs[0]}" for r in f.reads if r.root in holders and len(r.attrs) == 1
               for v in r.bound_to}
    for r in f.reads:
        if r.root in holders and r.attrs and r.attrs[0] not in analysis.fields:
            prop = _field_property(analysis, r.attrs[0])
            if prop is not None:  # `result.draft`, a property returning `self.next_draft_input`
                r = replace(r, attrs=[prop, *r.attrs[1:]])
        if r.root not in holders or not r.attrs or r.attrs[0] not in analysis.fields:
            continue
        field_name = r.attrs[0]
        path = r.attrs[:2]
        if len(r.attrs) == 2 and r.called:
            path = r.attrs[:1]
        unsure = f.unsure_roots.get(r.root, "") or _kept_unsure(f, r.root, r.line)
        # a dict's item that may be changed between a test of it and the read: no test guards it
        guards = [] if unsure else _still_holding(f, r.root, r.guards2, r.line)
        for v in r.bound_to:
            aliases.setdefault(v, []).append((field_name, r))
            if v in tested:
                guards.append(Guard(GuardKind.ALIAS_CHECK, f"{v} tested for None/truthiness", r.line))
        deref = len(r.attrs) > 1 or r.operand or _stored_then_dereferenced(f, r) or \
            (side == SCHEDULER and f.cls != analysis.owner_name and _passed_to_dereferencing(analysis, module, f, r))
        # `if h.f.x is not None: h.f.x.to(...)`: `x` is checked, only `f` must be set
        chain = ".".join([r.root, *path])
        # ... and `if h.f.x is not None:` itself, a test of `x` that reaches into `f`
        asked = path[:1] if len(path) == 2 and (_narrowed(r, chain, spelled) or r.in_test and chain in tested) else None
        out.append(_make_read(analysis, rel, module, side, f, r, field_name, path, guards,
                              "getattr" if r.via_getattr else "direct", deref=deref, holder=holders.why[r.root],
                              asked=asked, unsure=unsure))
    out.extend(_writes_below_fields(analysis, rel, module, side, f, holders, {(x.field, x.line) for x in out}))
    # `alias.x = v` after `alias = holder.f` dereferences f as `alias.x` read would
    for w in f.writes:
        for field_name, origin in _bound_at(aliases, w.root, w.line) if w.root not in holders and w.attrs else []:
            # the conditions name a local bound once from a chain by that chain (aliases.py)
            spelled_as = (w.root, f"{origin.root}.{field_name}")
            checked = any(_narrowed(w, name) or _exits_on_none(w, name) for name in spelled_as)
            r = ChainRead(root=w.root, attrs=w.attrs[:1], line=w.line, col=0, shape=w.shape, conds=list(w.conds),
                          blocks=list(w.blocks), exits=list(w.exits), guards1=[], guards2=[], in_test=False,
                          called=False)
            guards = [Guard(GuardKind.NOT_NONE_CHECK, w.root, w.line)] if checked else []
            out.append(_make_read(analysis, rel, module, side, f, r, field_name, [field_name, w.attrs[0]], guards,
                                  f"alias {w.root}", deref=True, holder=holders.why[origin.root],
                                  asked=[field_name], root=origin.root))
    for r in f.reads:
        for field_name, origin in _bound_at(aliases, r.root, r.line) if r.root not in holders and r.attrs else []:
            path = [field_name] + ([r.attrs[0]] if not (len(r.attrs) == 1 and r.called) else [])
            # `if info.x is not None: ... info.x`: the alias itself is dereferenced, `x` is checked,
            # in the test as below it
            checked = r.guards2 or r.in_test and f"{r.root}.{r.attrs[0]}" in tested
            asked = [field_name] if checked and len(r.attrs) == 1 and not r.called else path
            unsure = f.unsure_roots.get(r.root, "")
            out.append(_make_read(analysis, rel, module, side, f, r, field_name, path,
                                  [] if unsure else _still_holding(f, r.root, r.guards1, r.line),
                                  f"alias {r.root}", deref=True, holder=holders.why[origin.root], asked=asked,
                                  root=origin.root, unsure=unsure))
    return out


def _kept_unsure(f: FunctionFacts, root: str, line: int) -> str:
    """Why ``root.a`` (a root ``self.last`` that the function assigns, facts_visitors) may hold
    another value at ``line`` than its last assignment before gave it: none before it, or a call
    in between (which may assign it too); "" where it holds that value."""
    if "." not in root or not root.split(".", 1)[0].isidentifier() or not root.split(".", 1)[1].isidentifier():
        return ""
    before = [b for b in f.bindings if b.target == root and b.line <= line]
    if not before:
        return f"`{root}` is read before this function assigns it"
    last = max(before, key=lambda b: b.line)
    between = [c for c in f.calls if last.line < c.line < line]
    if between:
        return (f"`{root}` may be another value than it was given at line {last.line} "
                f"(`{between[0].callee}(...)` at line {between[0].line} may assign it)")
    return ""


def _still_holding(f: FunctionFacts, root: str, guards: list[Guard], line: int) -> list[Guard]:
    """The guards of a read through ``root`` that test the value it holds at the read: a test
    before ``root`` was bound again (`result = self.worker.forward(batch)` under the test) was
    of another object."""
    rebound = [b.line for b in f.bindings if b.target == root and b.line < line]
    return [g for g in guards if not any(g.line < at for at in rebound)]


def _field_property(analysis: Analysis, name: str) -> str | None:
    """The field that the owner's property ``name`` returns as it is (``return self.f``), else None."""
    memo = analysis.field_properties
    if name not in memo:
        memo[name] = None
        symbols, owner = analysis.symbols, analysis.owner
        module = symbols.module_of_file(owner.file)
        qn = symbols.lookup_method(f"{module}.{owner.name}", name) if module else None
        got = symbols.function_facts(qn) if qn and symbols.is_property(qn) else None
        values = [r.value for r in got[1].returns] if got else []
        if len(values) == 1 and isinstance(values[0], Chain) and values[0].root == "self" \
                and len(values[0].attrs) == 1 and values[0].attrs[0] in analysis.fields:
            memo[name] = values[0].attrs[0]
    return memo[name]


def _bound_at(aliases: dict, name: str, line: int) -> list[tuple[str, ChainRead]]:
    """The fields local ``name`` is bound from where ``line`` reads it: its latest binding from a
    field up to that line (several for a loop over a tuple of fields)."""
    before = [(f, r) for f, r in aliases.get(name, []) if r.line <= line]
    latest = max((r.line for _, r in before), default=None)
    return [(f, r) for f, r in before if r.line == latest]


def _writes_below_fields(analysis: Analysis, rel: str, module: str, side: str, f: FunctionFacts, holders: Holders,
                         seen: set) -> list[FieldRead]:
    """``holder.f.x = v`` dereferences ``f`` as a read of ``holder.f.x`` would: one read of ``f`` per
    such write (none where the statement reads ``f`` already)."""
    out = []
    for w in f.writes:
        if w.root in holders and len(w.attrs) >= 2 and w.attrs[0] not in analysis.fields:
            prop = _field_property(analysis, w.attrs[0])
            if prop is not None:
                w = replace(w, attrs=[prop, *w.attrs[1:]])
        if w.root not in holders or len(w.attrs) < 2 or w.attrs[0] not in analysis.fields or (w.attrs[0], w.line) in seen:
            continue
        seen.add((w.attrs[0], w.line))
        chain = f"{w.root}.{w.attrs[0]}"
        inline = replace(w, conds=analysis.symbols.predicate_methods.expanded(module, f, w.conds))
        guards = [Guard(GuardKind.NOT_NONE_CHECK, chain, w.line)] if _narrowed(inline, chain) or _exits_on_none(w, chain) else []
        # a handler around the write catches what writing through None raises
        guards += [Guard(GuardKind.TRY_EXCEPT, text, line) for text, line in w.handlers]
        r = ChainRead(root=w.root, attrs=w.attrs[:1], line=w.line, col=0, shape=w.shape, conds=list(w.conds),
                      blocks=list(w.blocks), exits=list(w.exits), guards1=[], guards2=guards, in_test=False, called=False)
        out.append(_make_read(analysis, rel, module, side, f, r, w.attrs[0], w.attrs[:1], guards, "write below",
                              deref=True, holder=holders.why[w.root]))
    return out


def _passed_to_dereferencing(analysis: Analysis, module: str, f: FunctionFacts, r: ChainRead) -> bool:
    """``self.helper(holder.f)`` where the consumer's helper dereferences the parameter it gets
    (reads or writes an attribute of it without a None test of it first): the field is
    dereferenced at the call. Followed one call down, into the functions the call resolves to."""
    if len(r.attrs) != 1 or r.called:
        return False
    passed = Chain(r.root, tuple(r.attrs))
    symbols = analysis.symbols
    for call in f.calls:
        if call.line != r.line:
            continue
        values = [*call.args, *call.keywords.values()]
        if not any(isinstance(v, Chain) and (v.root, v.attrs) == (passed.root, passed.attrs) for v in values):
            continue
        lam = _local_lambda(f, call)
        if lam is not None:  # `keep = lambda d: d.lens` then `keep(result.f)`
            params = [p for p, v in zip(lam.params, call.args)
                      if isinstance(v, Chain) and (v.root, v.attrs) == (passed.root, passed.attrs)]
            if any(_dereferences(lam.body, p) for p in params):
                return True
            continue
        for target in symbols.resolve_callee(module, f, call.callee):
            got = symbols.function_facts(target)
            if got is None:
                continue
            g = got[1]
            params = [p for p, v in bind(g, list(call.args), call.keywords).items()
                      if isinstance(v, Chain) and (v.root, v.attrs) == (passed.root, passed.attrs)]
            for p in params:
                if any(x.root == p and x.attrs and not x.guards1 for x in g.reads):
                    return True
                if any(w.root == p and w.attrs and not (_narrowed(w, p) or _exits_on_none(w, p)) for w in g.writes):
                    return True
    return False


def _local_lambda(f: FunctionFacts, call) -> LambdaValue | None:
    """The lambda a bare name called in ``f`` holds: its binding before the call, when it is
    bound once and to a lambda."""
    if "." in call.callee:
        return None
    binds = [b for b in f.bindings if b.target == call.callee]
    if len(binds) != 1 or binds[0].line > call.line or not isinstance(binds[0].value, LambdaValue):
        return None
    return binds[0].value


def _dereferences(v: Value, name: str) -> bool:
    """Does evaluating ``v`` reach into an attribute of the local ``name`` on every way through it
    (``name.x``, ``name.m()``, ``setattr(name, ...)``; a conditional part only where both of its
    sides do, the right side of ``and``/``or`` not at all)?"""
    match v:
        case Chain(root=root):
            return root == name
        case CallValue(callee=callee, args=args, keywords=keywords):
            if callee.split(".")[0] == name and "." in callee:
                return True
            if callee in _REACHES_ATTRIBUTES and args and isinstance(args[0], Name) and args[0].name == name:
                return callee != "getattr" or (len(args) == 2 and not keywords)
            return any(_dereferences(a, name) for a in (*args, *keywords.values()))
        case AttrOf(of=of):
            return _dereferences(of, name)
        case TupleValue(items=items):
            return any(_dereferences(i, name) for i in items)
        case IfExp(body=body, orelse=orelse):
            return _dereferences(body, name) and _dereferences(orelse, name)
        case BoolOp(left=left):
            return _dereferences(left, name)
    return False


# calls that get, set or delete an attribute of their first argument, or read its __dict__
_REACHES_ATTRIBUTES = {"setattr", "delattr", "getattr", "object.__setattr__", "object.__delattr__", "vars"}


def _exits_on_none(w, chain: str) -> bool:
    """Does an earlier early exit leave when ``chain`` is None (``if chain is None or ...: return``)?"""
    tight = chain.replace(" ", "")
    for e in w.exits:
        for d in _disjuncts(e):
            if d.replace(" ", "").strip("()") in (f"{tight}isNone", f"not{tight}"):
                return True
            inner = _unwrapped(d.strip())
            if inner.startswith("not ") and _isinstance_test(inner[4:], tight):
                return True
    return False


def _isinstance_test(text: str, tight: str) -> bool:
    """Is the condition ``isinstance(chain, C)`` (``tight``: the chain without spaces), with
    classes that do not take None (``type(None)``, ``NoneType`` or ``Optional`` among them would)?"""
    t = _unwrapped(text.replace(" ", ""))
    head = f"isinstance({tight},"
    return t.startswith(head) and _unwrapped(t[len("isinstance"):]) != t[len("isinstance"):] \
        and "None" not in t[len(head):]


def _unwrapped(text: str) -> str:
    """``text`` without the parentheses that wrap all of it."""
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(text) - 1:
                return text
        text = text[1:-1]
    return text


def _disjuncts(text: str) -> list[str]:
    return _split_top(text, "or")


def _split_top(text: str, op: str) -> list[str]:
    """The operands of a condition's top-level ``and``/``or`` (the whole text when it has none)."""
    parts, depth, start, sep = [], 0, 0, f" {op} "
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
    return [p.strip() for p in (*parts, text[start:])]


def _narrowed(r, chain: str, aliases: dict[str, str] | None = None) -> bool:
    """Does the read (or write) run under a condition that says ``chain`` is not None (or truthy)?
    ``aliases``: local names bound to a holder's field, {name: "holder.field"}."""
    tight = chain.replace(" ", "")
    for text, positive in r.conds:
        t = text.replace(" ", "").strip("()")
        head, dot, rest = t.partition(".")
        if dot and aliases and head in aliases:
            t = f"{aliases[head]}.{rest}"
        if (positive and t in (f"{tight}isnotNone", tight)) or (not positive and t == f"{tight}isNone"):
            return True
        if positive and _isinstance_test(text, tight):
            return True
        # all(v is not None for v in (holder.f, ...)) and the like
        if ("all(" in t or "any(" in t) and tight in t and chain in all_not_none(text, positive):
            return True
    return False


def _stored_then_dereferenced(f: FunctionFacts, r: ChainRead) -> bool:
    """`batch.spec_info = result.f` followed by `batch.spec_info.x` in the same function."""
    if not r.stored_to:
        return False
    prefix = r.stored_to + "."
    later = [".".join([x.root, *x.attrs]) for x in f.reads if x.line > r.line] + \
        [".".join([w.root, *w.attrs]) for w in f.writes if w.line > r.line]
    return any(t.startswith(prefix) for t in later)


def _make_read(analysis: Analysis, rel: str, module: str, side: str, f: FunctionFacts, r: ChainRead, field_name: str,
               path: list, guards: list[Guard], via: str, deref: bool, holder: str,
               asked: list | None = None, root: str | None = None, unsure: str = "") -> FieldRead:
    """``asked``: the attribute path the read needs set (default ``path``, which names the read);
    ``root``: the name holding the result (an alias read's is the name it was bound from);
    ``unsure``: why that name may hold another value there (a dict's item, ``FieldRead.unsure``)."""
    tested: list = []
    if r.conds or r.exits:
        aliases = {v: f"{x.root}.{x.attrs[0]}" for x in f.reads if x.bound_to and len(x.attrs) == 1 and x.line <= r.line
                   for v in x.bound_to}
        # a test through a predicate method of the consumer says what the expression it returns says
        inline = replace(r, conds=analysis.symbols.predicate_methods.expanded(module, f, r.conds))
        tested = sorted(_tested_set(inline, root or r.root, analysis.fields, aliases) - {field_name})
        chain = f"{root or r.root}.{field_name}"
        if not guards and not unsure and inline.conds != list(r.conds) and _narrowed(inline, chain, aliases):
            guards = [Guard(GuardKind.NOT_NONE_CHECK, chain, r.line)]
    # a test of the field is a check; a test of what lies below it (`if result.f.x:`) reaches into it
    checks = r.in_test and not deref
    if checks:
        kind = ReadKind.CHECK
    elif guards:
        kind = ReadKind.GUARDED
    else:
        kind = ReadKind.UNCONDITIONAL
    return FieldRead(
        id=read_id(field_name, f.qualname, r.shape, path),
        field=field_name,
        owner=analysis.owner_name,
        attribute_path=list(path if asked is None else asked),
        file=rel,
        line=r.line,
        col=r.col,
        consumer=f.qualname,
        module=module,
        side=side,
        guarded=bool(guards) or checks,
        guards=guards,
        path_condition=C.render(r.conds),
        conditions=[list(c) for c in r.conds],
        early_exits=list(r.exits),
        shape=r.shape,
        via=via,
        deref=deref,
        in_test=r.in_test,
        kind=kind,
        holder=holder,
        tested_set=[] if unsure else tested,
        unsure=unsure,
    )


_FIELD_TEST = re.compile(r"\(*\s*(not\s+)?([\w.]+)(\s+is\s+(not\s+)?None)?\s*\)*")
_WALRUS = re.compile(r"\(\s*(\w+)\s*:=\s*([\w.]+)\s*\)")


def tested_fields(conds, root: str, fields, aliases: dict[str, str] | None = None) -> set[str]:
    """The fields of ``root`` that hold non-None under ``conds`` (``Cond``s: text, positive)."""
    return _tested_set(ChainRead(root=root, attrs=[], line=0, col=0, shape="", conds=list(conds), blocks=[], exits=[],
                                 guards1=[], guards2=[], in_test=False, called=False), root, fields, aliases or {})


def _tested_set(r: ChainRead, root: str, fields, aliases: dict[str, str]) -> set[str]:
    """The fields of ``root`` that hold non-None where the read runs: ``root.g is not None`` or
    ``root.g`` true, ``root.g is None`` or ``not root.g`` false, among its conditions and the early
    exits before it (which hold false there); ``aliases``: {local: "root.g"} bound from a field
    (``v = root.g`` before, or ``(v := root.g) is not None`` in the test itself)."""
    out = set()
    # `a and b` true: each holds; `a or b` false: each is false
    atoms = [(part, positive) for text, positive in path_conditions(r)
             for part in (_split_top(text, "and") if positive else _split_top(text, "or"))]
    for text, positive in atoms:
        if "all(" in text or "any(" in text:
            for chain in all_not_none(text, positive):
                head, _, name = aliases.get(chain, chain).partition(".")
                if head == root and name in fields:
                    out.add(name)
        m = _FIELD_TEST.fullmatch(_WALRUS.sub(r"\2", text))
        if m is None:
            continue
        head, _, name = aliases.get(m.group(2), m.group(2)).partition(".")
        if head != root or name not in fields:
            continue
        negated = bool(m.group(1))
        if m.group(3) is None:
            # truthiness: a true value is not None (a false one may be either)
            says_set = positive != negated
        elif negated:
            continue  # `not x.g is None`: rare enough to leave alone
        else:
            says_set = positive == bool(m.group(4))
        if says_set:
            out.add(name)
    return out
