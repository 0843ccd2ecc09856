"""Where a node sits in its function: the conditions that hold there, its block path, its
statement, and the guards that establish a chain prefix is not None.

``ContextFinder`` walks the parent links of the snippet (``snippet.py``) from a node up to its
function; the fact collectors in ``facts_visitors.py`` ask it for every record they make.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterable

from spectrace.contracts.aliases import Alias, DictItem, binding_counts, dict_items, local_aliases, with_aliases
from spectrace.contracts.expr_values import call_args, chain_of, is_none, none_on_the_right
from spectrace.contracts.blocks import dominates
from spectrace.contracts.facts import Cond, Guard, LoopExit
from spectrace.contracts.kinds import GuardKind
from spectrace.contracts.snippet import COMPOUND, FUNCTIONS, Snippet

_EXIT_STMTS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# what a handler must catch to cover an attribute of None (which raises AttributeError; TypeError,
# of None's subscript or arithmetic, does not cover it)
_CATCHES_ATTRIBUTE = {"AttributeError", "Exception", "BaseException"}
_TRIES = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


@dataclass
class Context:
    conds: list[Cond]  # enclosing conditions as text, outermost first (if a and b: a, b)
    cond_nodes: list[tuple[ast.expr, bool]]  # the same, as whole test nodes
    blocks: list[str]  # enclosing block ids, outermost first, for dominance
    statement: list[ast.stmt] | ast.stmt | None  # the statement line, or the if/while whose test holds the node
    in_test: bool  # the node is (part of) a condition
    handlers: list[tuple[str, int]] = field(default_factory=list)  # enclosing try handlers that catch AttributeError
    exits_before: list[tuple[ast.expr, int]] = field(default_factory=list)  # earlier `if test: <exit>`
    asserts_before: list[tuple[ast.expr, int]] = field(default_factory=list)
    exits: list[str] = field(default_factory=list)  # the texts of exits_before
    loop_exit: LoopExit | None = None  # the outermost loop left only through breaks the node runs before
    # names and chains a class pattern of an enclosing case matched (`case Draft() as d:`,
    # `match result.draft: case Draft(...):`): an instance there, not None; with the case's line
    matched: list[tuple[str, int]] = field(default_factory=list)


# ------------------------------------------------------------- guard detection


def split_and(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [p for v in node.values for p in split_and(v)]
    return [node]


def split_or(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return [p for v in node.values for p in split_or(v)]
    return [node]


def _is_prefix(node: ast.expr, prefix: str, src: Snippet | None = None) -> bool:
    ch = chain_of(node)
    if ch is None and src is not None:  # a chain through a local container's item is rooted at its spelling (dict_items)
        base, attrs = node, []
        while isinstance(base, ast.Attribute):
            base, attrs = base.value, [base.attr, *attrs]
        item = src.item_of(base)
        ch = (item.spelled, attrs) if item is not None else None
    if ch is None:
        return False
    return ".".join([ch[0], *ch[1]]) == prefix


def _is_type_of(node: ast.expr, prefix: str, src: Snippet) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" \
        and len(node.args) == 1 and not node.keywords and _is_prefix(node.args[0], prefix, src)


def _is_none_type(node: ast.expr) -> bool:
    return is_none(node) or (isinstance(node, ast.Name) and node.id == "NoneType") \
        or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"
            and len(node.args) == 1 and is_none(node.args[0]))


def _chain_text(node: ast.expr) -> str | None:
    ch = chain_of(node)
    return ".".join([ch[0], *ch[1]]) if ch else None


def _stored(stmt: ast.stmt) -> set[str]:
    """What a statement binds or writes, nested statements included: names, and attribute chains
    (``self.draft``)."""
    out = set()
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            text = _chain_text(node)
            if text:
                out.add(text)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).split(".")[0])
    return out


def matched_instances(subject: ast.expr, pattern: ast.pattern) -> list[str]:
    """The subject's chain where the case's pattern is a class pattern (or an alternative of
    them), and the names a class pattern binds with `as`: instances of a class where the case
    runs, not None (`case Draft() as d:`; `match result.draft: case Draft(lens=n):`)."""
    out = []
    top = pattern.pattern if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None else pattern
    alternatives = top.patterns if isinstance(top, ast.MatchOr) else [top]
    subject_chain = _chain_text(subject)
    if subject_chain and all(_is_instance_pattern(p) for p in alternatives):
        out.append(subject_chain)
    for node in ast.walk(pattern):
        if isinstance(node, ast.MatchAs) and node.name and node.pattern is not None and _is_instance_pattern(node.pattern):
            out.append(node.name)
    return out


def _is_instance_pattern(pattern: ast.pattern) -> bool:
    """A class pattern of a class other than None's (`Draft()`, `Draft(lens=x)`)."""
    if not isinstance(pattern, ast.MatchClass):
        return False
    cls = pattern.cls
    return not (isinstance(cls, ast.Name) and cls.id == "NoneType")


def _stale_name(name: str, rebound: set[str]) -> bool:
    parts = name.split(".")
    return any(".".join(parts[:i]) in rebound for i in range(1, len(parts) + 1))


def kept_attributes(fn: ast.AST) -> set[str]:
    """``root.a`` for each ``root.a = v`` in ``fn`` (root a name) that ``fn`` also reads below
    (``root.a.x``)."""
    assigned, read_below = set(), set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                    assigned.add(f"{t.value.id}.{t.attr}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name):
            read_below.add(f"{node.value.value.id}.{node.value.attr}")
    return assigned & read_below


def truthy_items(node: ast.expr) -> bool:
    """Is ``node`` ``filter(None, xs)`` or ``filter(lambda x: x, xs)`` (``x is not None``), whose
    items are each true (not None)?"""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "filter"
            and len(node.args) == 2 and not node.keywords):
        return False
    fn = node.args[0]
    if is_none(fn):
        return True
    if not (isinstance(fn, ast.Lambda) and len(fn.args.args) == 1 and not fn.args.vararg and not fn.args.kwonlyargs):
        return False
    param, body = fn.args.args[0].arg, fn.body
    if isinstance(body, ast.Compare) and len(body.ops) == 1 and isinstance(body.ops[0], ast.IsNot):
        body = none_on_the_right(body)[0] if is_none(none_on_the_right(body)[1]) else None
    return isinstance(body, ast.Name) and body.id == param


def filtered_display(node: ast.expr) -> ast.expr:
    """The display that ``filter(fn, display)`` draws its items from, else ``node``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "filter" \
            and len(node.args) == 2 and not node.keywords and isinstance(node.args[1], (ast.Tuple, ast.List)):
        return node.args[1]
    return node


def _stale(test: ast.expr, rebound: set[str]) -> bool:
    """Whether ``test`` may no longer hold once ``rebound`` are bound or written: it reads a name
    bound again, or tests a chain written again for None or truth (`self.draft is not None`
    before `self.draft = None`). Other tests through a written chain keep holding: a field the
    code writes is mostly not the one it tested (`batch.forward_mode = DECODE` under `if not
    batch.forward_mode.is_extend()`)."""
    if not rebound:
        return False
    names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    if names & rebound:
        return True
    for chain in tested_names(test):
        parts = chain.split(".")
        if any(".".join(parts[:i]) in rebound for i in range(2, len(parts) + 1)):
            return True
    return False


def _is_not(node: ast.expr) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)


def _condition_of(text: str) -> tuple[Snippet, ast.expr] | None:
    try:
        src = Snippet(text.strip(), 0)
    except SyntaxError:
        return None
    body = src.tree.body
    return (src, body[0].value) if len(body) == 1 and isinstance(body[0], ast.Expr) else None


def all_not_none(text: str, positive: bool) -> list[str]:
    """The chains that ``all(v is not None for v in (a.f, b.g))`` (true), or ``any(v is None for
    ...)`` (false), says are not None: ``["a.f", "b.g"]``."""
    got = _condition_of(text)
    if got is None:
        return []
    src, test = got
    if _is_not(test):
        test, positive = test.operand, not positive
    if not (isinstance(test, ast.Call) and len(test.args) == 1 and isinstance(test.args[0], ast.GeneratorExp)):
        return []
    comp = test.args[0].generators[0]
    if not (isinstance(comp.iter, (ast.Tuple, ast.List))):
        # `(a.f)`: the condition texts drop the comma of a one-item tuple (snippet.normalise); an
        # iterated a.f is not None either way, since iterating None raises before any item is tested
        whole = chain_of(comp.iter)
        return [".".join([whole[0], *whole[1]])] if whole else []
    chains = [chain_of(e) for e in comp.iter.elts]
    return [".".join([c[0], *c[1]]) for c in chains if c and asserts_present(src, test, positive, ".".join([c[0], *c[1]]))]


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def asserts_present(src: Snippet, test: ast.expr, positive: bool, prefix: str) -> GuardKind | None:
    """Does ``test`` (taken as true when ``positive``, else as false) imply ``prefix`` is not None?

    Returns the guard kind or None.
    """
    if _is_not(test):
        return asserts_present(src, test.operand, not positive, prefix)
    parts = split_and(test) if positive else split_or(test)
    if len(parts) > 1:
        for p in parts:
            kind = asserts_present(src, p, positive, prefix)
            if kind:
                return kind
        return None
    if positive and _is_prefix(test, prefix, src):
        return GuardKind.TRUTHINESS
    # a chain deeper than the prefix being truthy/not None also implies the prefix exists
    if positive:
        ch = chain_of(test)
        if ch and ".".join([ch[0], *ch[1]]).startswith(prefix + "."):
            return GuardKind.TRUTHINESS
    if isinstance(test, ast.Compare) and len(test.comparators) == 1:
        op = test.ops[0]
        left, right = none_on_the_right(test)
        rhs_none = is_none(right)
        if rhs_none and _is_prefix(left, prefix, src):
            if isinstance(op, ast.IsNot) and positive:
                return GuardKind.NOT_NONE_CHECK
            if isinstance(op, ast.Is) and not positive:
                return GuardKind.NOT_NONE_CHECK
        if isinstance(op, ast.NotEq) and rhs_none and positive and _is_prefix(left, prefix, src):
            return GuardKind.NOT_NONE_CHECK
        # type(x) is C (or ==) for a class C other than None's: x is an instance of C
        if positive and isinstance(op, (ast.Is, ast.Eq)) and _is_type_of(left, prefix, src) and not _is_none_type(right):
            return GuardKind.ISINSTANCE
    # all(v is not None for v in (a, b)) true, or any(v is None for v in (a, b)) false: each of a, b
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in ("all", "any") \
            and positive == (test.func.id == "all") and len(test.args) == 1 and isinstance(test.args[0], ast.GeneratorExp):
        gen = test.args[0]
        comp = gen.generators[0] if len(gen.generators) == 1 else None
        if comp is not None and not comp.ifs and isinstance(comp.target, ast.Name) \
                and isinstance(comp.iter, (ast.Tuple, ast.List)) and any(_is_prefix(e, prefix, src) for e in comp.iter.elts):
            return asserts_present(src, gen.elt, positive, comp.target.id)
    if positive and isinstance(test, ast.Call):
        fn = src.code(test.func)
        args = call_args(test)
        if fn == "hasattr" and len(args) >= 2 and src.is_simple_string(args[1].value):
            root, _, attr = prefix.rpartition(".")
            if src.code(args[0].value) == root and args[1].value.value == attr:
                return GuardKind.HASATTR
            # hasattr(x, "name") for a name None has not: x is not None
            if _is_prefix(args[0].value, prefix, src) and not hasattr(None, args[1].value.value):
                return GuardKind.HASATTR
        if fn == "isinstance" and args and _is_prefix(args[0].value, prefix, src):
            return GuardKind.ISINSTANCE
    return None


def tested_names(test: ast.expr) -> Iterable[str]:
    """Names and chains a condition checks for None/truthiness (for alias guards)."""
    for p in split_and(test) + split_or(test):
        if _is_not(p):
            p = p.operand
        ch = chain_of(p)
        if ch:
            yield ".".join([ch[0], *ch[1]])
        if isinstance(p, ast.Compare) and len(p.comparators) == 1:
            left, right = none_on_the_right(p)
            if is_none(right):
                ch = chain_of(left)
                if ch:
                    yield ".".join([ch[0], *ch[1]])


def _handler_names(src: Snippet, h: ast.ExceptHandler) -> set[str]:
    if h.type is None:
        return set()
    if isinstance(h.type, ast.Tuple):
        return {src.code(e.value if isinstance(e, ast.Starred) else e).split(".")[-1] for e in h.type.elts}
    return {src.code(h.type).split(".")[-1]}


def _may_raise(h: ast.ExceptHandler) -> bool:
    """Whether a handler's body has a ``raise`` of its own (a bare one, or another error ``from``
    the caught one), outside the functions and classes it defines: what it caught may go on up."""
    todo = list(h.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Raise):
            return True
        if not isinstance(node, (*FUNCTIONS, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def _breaks_of(loop: ast.stmt) -> Iterable[ast.Break]:
    """The ``break`` statements that leave ``loop`` (not those of loops or functions inside it)."""
    todo = list(loop.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Break):
            yield node
        elif not isinstance(node, (ast.For, ast.AsyncFor, ast.While, *FUNCTIONS, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            todo.extend(node.orelse)  # a break in an inner loop's else leaves the outer one


def _holds(outer: ast.stmt, node: ast.AST) -> bool:
    return outer.lineno <= node.lineno and node.end_lineno <= outer.end_lineno


def exits(src: Snippet, block: list[ast.stmt]) -> bool:
    """The block's last statement line returns, raises, breaks or continues."""
    if isinstance(block[-1], COMPOUND):
        return False
    return any(isinstance(s, _EXIT_STMTS) for s in src.line_group(block, len(block) - 1))


def none_exit(src: Snippet, stmt: ast.Match) -> ast.expr | None:
    """``subject is None`` (``Snippet.none_test``) for ``match subject:`` whose ``case None:`` (or
    ``case None | ...:``, no guard) exits, no case before it taking None on to the code after the
    statement (each exits too, or has a pattern None never matches): that code runs where the test
    failed, as after ``if subject is None: return``. None for any other match."""
    for case in stmt.cases:
        leaves = exits(src, case.body)
        if leaves and case.guard is None and _matches_none(case.pattern):
            return src.none_test(stmt.subject)
        if not leaves and _may_match_none(case.pattern):
            return None
    return None


def _matches_none(p: ast.pattern) -> bool:
    """Does the pattern match None whatever else it asks (``None``, ``None | x``, ``(None) as d``)?"""
    if isinstance(p, ast.MatchSingleton):
        return p.value is None
    if isinstance(p, ast.MatchOr):
        return any(_matches_none(q) for q in p.patterns)
    if isinstance(p, ast.MatchAs):
        return p.pattern is None or _matches_none(p.pattern)
    return False


def _may_match_none(p: ast.pattern) -> bool:
    """Can the pattern match None? Not a literal other than None, a sequence, a mapping, nor a
    class pattern (``isinstance(None, C)``) unless of ``object`` or ``NoneType``; a dotted value
    (``Mode.A``) compares with ``==``, which its class may define to take None."""
    if isinstance(p, ast.MatchSingleton):
        return p.value is None
    if isinstance(p, ast.MatchValue):
        return not isinstance(p.value, ast.Constant)
    if isinstance(p, (ast.MatchSequence, ast.MatchMapping)):
        return False
    if isinstance(p, ast.MatchClass):
        cls = p.cls.attr if isinstance(p.cls, ast.Attribute) else getattr(p.cls, "id", "")
        return cls in ("object", "NoneType")
    if isinstance(p, ast.MatchOr):
        return any(_may_match_none(q) for q in p.patterns)
    if isinstance(p, ast.MatchAs):
        return p.pattern is None or _may_match_none(p.pattern)
    return True


def suppresses(src: Snippet, node: ast.With | ast.AsyncWith) -> bool:
    """Whether a with statement enters ``contextlib.suppress(...)`` (any other context manager is
    taken not to swallow what its body raises)."""
    return any(isinstance(item.context_expr, ast.Call)
               and src.code(item.context_expr.func).split(".")[-1] == "suppress" for item in node.items)


def _suppressed_names(src: Snippet, node: ast.With | ast.AsyncWith) -> set[str]:
    """The exception names the ``suppress(...)`` items of a with statement swallow."""
    return {src.code(a).split(".")[-1] for item in node.items if isinstance(item.context_expr, ast.Call)
            and src.code(item.context_expr.func).split(".")[-1] == "suppress" for a in item.context_expr.args}


def try_block(src: Snippet, node: ast.Try, child: ast.AST, where: str | None) -> str:
    """The block id of ``child`` (the body, a handler, ``else`` or ``finally``) of a try statement.

    An exception can leave the body at any statement, so nothing in the body dominates a handler:
    body and ``else`` are ``<line>t``, each handler ``<line>h<its line>``. Code after the statement
    follows the body (and ``else``) only when every handler exits: the body is then ``<line>T``,
    which dominates what comes after the statement (``blocks.dominates``). ``finally`` always runs:
    ``<line>y``, dominating what follows as well.
    """
    at = src.line(node)
    if where == "handlers":
        return f"{at}h{src.line(child)}"
    if where == "finalbody":
        return f"{at}y"
    return f"{at}T" if all(exits(src, h.body) for h in node.handlers) else f"{at}t"


# ------------------------------------------------------------------ the finder


class ContextFinder:
    """Positions and contexts of the nodes of one function snippet."""

    def __init__(self, src: Snippet):
        self.src = src
        self._aliases: dict[int, dict[str, Alias]] = {}  # per function node
        self._befores: dict[tuple[int, int], tuple] = {}  # (block, index) -> it, the exits and asserts before
        self._bound: dict[int, tuple] = {}  # block -> it, the names bound before each of its statements
        self._texts: dict[tuple[int, int], tuple] = {}  # (test, function) -> them, the test's text with the aliases' chains
        self._dicts: dict[int, tuple] = {}  # per function node: it, its local dicts' lookups
        self._counts: dict[int, tuple] = {}  # per function node: it, how often each name is bound in it
        self._kept: dict[int, tuple] = {}  # per function node: it, the attributes it assigns and reads through
        src.item_of = self.dict_item

    def aliases(self, fn: ast.AST | None) -> dict[str, Alias]:
        if fn is None:
            return {}
        if id(fn) not in self._aliases:
            self._aliases[id(fn)] = local_aliases(self.src, fn)
        return self._aliases[id(fn)]

    def dict_item(self, node: ast.AST) -> DictItem | None:
        """The item of a local container that ``node`` looks up (``dict_items``), else None."""
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                or isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)):
            return None  # (no lookup of a name: spares the walk up to the function)
        return self.dict_items_around(node).get(id(node))

    def item_chain(self, node: ast.AST) -> tuple[DictItem, list[str]] | None:
        """``held["k"].a.b`` (``held.get("k").a.b``, ``items[0].a.b``) of a local container's item:
        the item, and the attributes read or written below it."""
        attrs = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        item = self.dict_item(node) if attrs and isinstance(node, (ast.Subscript, ast.Call)) else None
        return (item, attrs[::-1]) if item is not None else None

    def dict_items_around(self, node: ast.AST) -> dict[int, DictItem]:
        """The local dicts' lookups of the function ``node`` is in, once per function."""
        fn = self._function_of(node)
        if fn is None:
            return {}
        if id(fn) not in self._dicts:  # (the memo holds the function, so that no other takes its id)
            self._dicts[id(fn)] = (fn, dict_items(self.src, fn))
        return self._dicts[id(fn)][1]

    def kept_attributes(self, node: ast.AST) -> set[str]:
        """The attributes ``root.a`` (root a name) that the function ``node`` is in assigns and reads
        through (``self.last = result`` ... ``self.last.draft``), once per function: a root of the
        chains read below them, which the assignment binds."""
        fn = self._function_of(node)
        if fn is None:
            return set()
        if id(fn) not in self._kept:
            self._kept[id(fn)] = (fn, kept_attributes(fn))
        return self._kept[id(fn)][1]

    def binding_counts(self, node: ast.AST) -> dict[str, int]:
        """How often each name is bound in the function ``node`` is in (``aliases``' count)."""
        fn = self._function_of(node)
        if fn is None:
            return {}
        if id(fn) not in self._counts:
            self._counts[id(fn)] = (fn, binding_counts(fn))
        return self._counts[id(fn)][1]

    def _function_of(self, node: ast.AST) -> ast.AST | None:
        fn = self.src.parent(node)
        while fn is not None and not isinstance(fn, FUNCTIONS):
            fn = self.src.parent(fn)
        return fn

    def line(self, node: ast.AST) -> int:
        return self.src.line(node)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.src.parent(node)

    def of(self, node: ast.AST, loops: bool = True) -> Context:
        """Walk up to the function: conditions, block ids, the statement, in-test flag, try handlers
        (``loops``: and the loops left only through breaks that the node runs before)."""
        src = self.src
        enclosing: list[ast.stmt] = []  # the loops and with statements around the node, innermost first
        cond_nodes: list[tuple[ast.expr, bool]] = []
        case_conds: list[Cond] = []  # `case "v":` of `match x`: x == "v"
        blocks: list[str] = []
        statement = None
        in_test = False
        handlers: list[tuple[str, int]] = []
        exits_before: list[tuple[ast.expr, int]] = []
        asserts_before: list[tuple[ast.expr, int]] = []
        rebound: set[str] = set()  # names and chains bound again between the tests walked up to and the node
        matched: list[tuple[str, int]] = []
        child, cur = node, src.parent(node)
        while True:
            if isinstance(child, ast.stmt):
                block, index = src.block_of(child)
                rebound |= self._bound_before(block, index)
                if not src.is_suite(block):
                    if statement is None and not isinstance(child, COMPOUND):
                        statement = src.line_group(block, index)
                    # statements before `child` in this block: early exits and asserts
                    exits_here, asserts_here = self._before(block, index)
                    exits_before.extend(exits_here)
                    asserts_before.extend(asserts_here)
            if cur is None or isinstance(cur, FUNCTIONS):
                break
            where = src.field(child)
            if isinstance(cur, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)) and where == "body":
                enclosing.append(cur)
            if isinstance(cur, (ast.If, ast.While)) and where != "test" and _stale(cur.test, rebound):
                # a test of a value bound again before the node tells nothing of the value there;
                # the parts of `a and b` (an else: of `a or b`) that test others still hold
                positive = where == "body"
                parts = split_and(cur.test) if positive else split_or(cur.test)
                if len(parts) > 1:
                    cond_nodes.extend((p, positive) for p in reversed(parts) if not _stale(p, rebound))
                blocks.append(f"{src.line(cur)}{'b' if positive else 'e'}")
            elif isinstance(cur, (ast.If, ast.While)):
                if where == "test":
                    in_test = True
                    if statement is None:
                        statement = cur
                elif where == "body":
                    cond_nodes.append((cur.test, True))
                    blocks.append(f"{src.line(cur)}b")
                else:  # orelse: else or elif
                    cond_nodes.append((cur.test, False))
                    blocks.append(f"{src.line(cur)}e")
            elif isinstance(cur, ast.IfExp):
                if where == "body":
                    cond_nodes.append((cur.test, True))
                elif where == "orelse":
                    cond_nodes.append((cur.test, False))
                else:
                    in_test = True
            elif isinstance(cur, _COMPREHENSIONS) and where in ("elt", "key", "value"):
                # the element is evaluated only for the items every filter lets through
                for generator in cur.generators:
                    cond_nodes.extend((test, True) for test in generator.ifs)
                    if truthy_items(generator.iter) and isinstance(generator.target, ast.Name):
                        cond_nodes.append((generator.target, True))
            elif isinstance(cur, ast.BoolOp):
                i = next(k for k, v in enumerate(cur.values) if v is child)
                if i:
                    cond_nodes.append((src.prefix(cur, i), isinstance(cur.op, ast.And)))
                in_test = in_test or self._is_test_position(cur)
            elif isinstance(cur, _TRIES):
                blocks.append(try_block(src, cur, child, where))
                if where == "body":
                    for h in cur.handlers:
                        names = _handler_names(src, h)
                        # a handler that raises again (or raises another error) lets the crash go on
                        if (not names or names & _CATCHES_ATTRIBUTE) and not _may_raise(h):
                            handlers.append((f"except {', '.join(sorted(names)) or '(bare)'}", src.line(h)))
            elif isinstance(cur, ast.match_case) and where == "body":
                # one case's body runs only when its pattern matches: a block of its own
                match = src.parent(cur)
                blocks.append(f"{src.line(match)}c{src.line(cur)}")
                matched.extend((name, src.line(cur)) for name in matched_instances(match.subject, cur.pattern)
                               if not _stale_name(name, rebound))
                if isinstance(cur.pattern, ast.MatchValue) and cur.guard is None:
                    case_conds.append(Cond(f"{src.code(match.subject)} == {src.code(cur.pattern.value)}", True))
                elif cur.guard is not None:
                    cond_nodes.append((cur.guard, True))
            elif isinstance(cur, (ast.With, ast.AsyncWith)) and where == "body" and suppresses(src, cur):
                # `with suppress(E):` swallows E raised at any statement of its body and goes on
                # after the statement, as a try whose one handler passes
                blocks.append(f"{src.line(cur)}t")
                names = _suppressed_names(src, cur)
                if names & _CATCHES_ATTRIBUTE:
                    handlers.append((f"suppress({', '.join(sorted(names))})", src.line(cur)))
            elif isinstance(cur, (ast.For, ast.AsyncFor)) and where == "body":
                blocks.append(f"{src.line(cur)}f")  # a with-body always runs: no block of its own
                # `for d in filter(None, xs):` runs its body for the true items only
                if truthy_items(cur.iter) and isinstance(cur.target, ast.Name) and not _stale(cur.target, rebound):
                    cond_nodes.append((cur.target, True))
            elif isinstance(cur, (ast.For, ast.AsyncFor)) and where == "orelse":
                blocks.append(f"{src.line(cur)}F")  # skipped when the loop breaks
            child, cur = cur, src.parent(cur)
        cond_nodes.reverse()
        blocks.reverse()
        conds = []  # (`mode = batch.forward_mode` in the function: the condition tests the chain)
        for t, pos in cond_nodes:  # `if a and b` contributes a, b; `else` of `a or b`: not a, not b
            parts = split_and(t) if pos else split_or(t)
            conds.extend(Cond(self._with_aliases(p, cur), pos) for p in parts)
        conds.extend(reversed(case_conds))
        loop_exit = self._loop_exit(node, blocks, enclosing) if loops and enclosing else None
        return Context(conds=conds, cond_nodes=cond_nodes, blocks=blocks, statement=statement, in_test=in_test,
                       handlers=handlers, exits_before=exits_before, asserts_before=asserts_before,
                       exits=[self._with_aliases(t, cur) for t, _ in exits_before], loop_exit=loop_exit,
                       matched=matched)

    def _bound_before(self, block: list, index: int) -> set[str]:
        """The names and attribute chains that the statements of ``block`` before ``block[index]``
        bind or write."""
        key = id(block)
        if key not in self._bound:  # (the memo holds the block, so that no other takes its id)
            cumulative, names = [], set()
            for stmt in block:
                cumulative.append(frozenset(names))
                names |= _stored(stmt)
            self._bound[key] = (block, cumulative)
        return self._bound[key][1][index]

    def _before(self, block: list, index: int) -> tuple[list, list]:
        """The early exits (``if test: <exit>``, a match's ``case None: <exit>``) and asserts of the
        statement lines of ``block`` before ``block[index]``'s, as (test, line) each: asked for every
        node under that statement."""
        key = (id(block), index)
        if key not in self._befores:  # (the memo holds the block, so that no other takes its id)
            src = self.src
            exits_here, asserts_here = [], []
            for group in src.groups_before(block, index):
                stmt = group[0]
                if isinstance(stmt, ast.If) and exits(src, stmt.body) and not stmt.orelse:
                    exits_here.append((stmt.test, src.line(stmt)))
                elif isinstance(stmt, ast.Match) and (test := none_exit(src, stmt)) is not None:
                    exits_here.append((test, src.line(stmt)))  # `case None: return`
                for small in group:
                    if isinstance(small, ast.Assert):
                        asserts_here.append((small.test, src.line(stmt)))
            self._befores[key] = (block, exits_here, asserts_here)
        return self._befores[key][1:]

    def _with_aliases(self, node: ast.expr, fn: ast.AST | None) -> str:
        """``with_aliases`` of a test with the aliases of the function ``fn`` it is in, once per
        test: every node under it asks."""
        key = (id(node), id(fn))
        if key not in self._texts:  # (the memo holds the nodes, so that no other takes their ids)
            self._texts[key] = (node, fn, with_aliases(self.src, node, self.aliases(fn)))
        return self._texts[key][2]

    def _loop_exit(self, node: ast.AST, blocks: list[str], enclosing: list[ast.stmt]) -> LoopExit | None:
        """The outermost of the loops around ``node`` that it has run before leaving: a loop whose
        only way out is a ``break`` (``while True``, or an ``else`` that raises or returns), each
        break after the node in a block it dominates and inside every ``with`` around the node in
        the loop (a manager may swallow what the node raises and go on to another break). Inner
        loops first: leaving one puts the node at that loop's statement for the next."""
        src = self.src
        line, at, found = src.line(node), blocks, None
        withs: list[ast.stmt] = []
        for stmt in enclosing:
            if isinstance(stmt, (ast.With, ast.AsyncWith)):
                withs.append(stmt)
                continue
            body_id = f"{src.line(stmt)}{'b' if isinstance(stmt, ast.While) else 'f'}"
            if body_id not in at or not self._left_by_breaks_only(stmt):
                break
            breaks = list(_breaks_of(stmt))
            if not breaks or not all(
                    line < src.line(b) and all(_holds(w, b) for w in withs)
                    and dominates(at, self.of(b, loops=False).blocks) for b in breaks):
                break
            line, at = src.end_line(stmt), at[: at.index(body_id)]
            found, withs = LoopExit(line, at), []
        return found

    def _left_by_breaks_only(self, loop: ast.stmt) -> bool:
        if isinstance(loop, ast.While) and isinstance(loop.test, ast.Constant) and loop.test.value:
            return True
        return bool(loop.orelse) and exits(self.src, loop.orelse)

    def _is_test_position(self, node: ast.AST) -> bool:
        parent = self.src.parent(node)
        while isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
            node, parent = parent, self.src.parent(parent)
        return isinstance(parent, (ast.If, ast.While, ast.IfExp)) and self.src.field(node) == "test"

    def guards_for(self, prefix: str, ctx: Context) -> list[Guard]:
        src = self.src
        guards: list[Guard] = []
        for test, positive in ctx.cond_nodes:
            kind = asserts_present(src, test, positive, prefix)
            if kind:
                guards.append(Guard(kind, src.code(test) if positive else f"not ({src.code(test)})", src.line(test)))
        for test, line in ctx.exits_before:
            if asserts_present(src, test, False, prefix):
                guards.append(Guard(GuardKind.EARLY_EXIT, f"if {src.code(test)}: <exit>", line))
        for test, line in ctx.asserts_before:
            if asserts_present(src, test, True, prefix):
                guards.append(Guard(GuardKind.ASSERT, f"assert {src.code(test)}", line))
        for text, line in ctx.handlers:
            guards.append(Guard(GuardKind.TRY_EXCEPT, text, line))
        for name, line in ctx.matched:
            if name == prefix:
                guards.append(Guard(GuardKind.ISINSTANCE, f"a class pattern matched {name}", line))
        return guards

    def statement_shape(self, node: ast.AST, ctx: Context) -> str:
        stmt = ctx.statement
        src = self.src
        if stmt is None:
            return src.code(node) if isinstance(node, ast.expr) else ""
        if isinstance(stmt, list):
            return "; ".join(src.code(s) for s in stmt)
        return f"{'if' if isinstance(stmt, ast.If) else 'while'} {src.code(stmt.test)}:"
