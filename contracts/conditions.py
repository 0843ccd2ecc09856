"""Path conditions as propositional formulas, and whether two of them can hold together.

A condition's text (as the fact collectors write it, the way libcst printed it) is read back with the stdlib ``ast`` into and/or/not
over atoms. Atoms are compared *receiver-free*: ``self.enable_overlap`` in the scheduler,
``enable_overlap`` in ``SpeculativeAlgorithm.create_worker`` and ``batch.spec_algorithm.is_none()``
/ ``self.spec_algorithm.is_none()`` name the same server configuration (the batch's
``spec_algorithm`` and the create-worker flag are copied from the scheduler's server arguments), so
the root name of an attribute chain is dropped: ``spec_algorithm.is_none()``, ``enable_overlap``.
``x is None`` / ``x is not None`` become the atom ``x is None`` with a polarity.

A boolean property read as an atom (``batch.is_spec_v2``) is replaced by its returned expression
when the caller can resolve it (``expand``), which is how the analysis knows that
``is_spec_v2 == enable_overlap and not spec_algorithm.is_none()``.

Satisfiability is decided by a search over the atoms' values (a handful per question) that drops
a branch as soon as a partial assignment makes the formula false.
"""

from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass
from typing import Callable, Iterable, Union

from spectrace.contracts.expr_values import is_none, none_on_the_right


@dataclass(frozen=True)
class Atom:
    key: str  # receiver-free text


@dataclass(frozen=True)
class Not:
    operand: "Formula"


@dataclass(frozen=True)
class And:
    parts: tuple  # of Formula; the empty one is true


@dataclass(frozen=True)
class Or:
    parts: tuple  # of Formula; the empty one is false


Formula = Union[Atom, Not, And, Or]

MAX_ATOMS = 16


class _DropReceivers(ast.NodeTransformer):
    """``self.x.y()`` -> ``x.y()``, ``get_parallel().pp_size`` -> ``pp_size``: the receiver's root goes."""

    def visit_Attribute(self, node: ast.Attribute):
        base = node.value
        if isinstance(base, ast.Name) or (isinstance(base, ast.Call) and isinstance(base.func, (ast.Name, ast.Attribute))
                                          and not base.args and not base.keywords):
            return ast.copy_location(ast.Name(id=node.attr, ctx=ast.Load()), node)
        node.value = self.visit(node.value)
        return node


def _atom_key(node: ast.expr, drop_receivers: bool = True) -> str:
    """Receiver-free text of an atom (``drop_receivers=False``: the text is receiver-free already)."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)) \
            and is_none(none_on_the_right(node)[1]):
        return f"{_atom_key(none_on_the_right(node)[0], drop_receivers)} is None"
    if not drop_receivers:
        return ast.unparse(node)
    import copy

    return ast.unparse(_DropReceivers().visit(copy.deepcopy(node)))


# parsed formulas per expander (None: no expander), each a text -> formula memo: the same
# conditions recur across reads and return paths. Formulas are never changed once built.
_PARSED: "weakref.WeakKeyDictionary[Callable, dict]" = weakref.WeakKeyDictionary()
_PARSED_PLAIN: dict = {}


def parse(text: str, expand: Callable[[str, str], str | None] | None = None, _depth: int = 0) -> Formula:
    """Formula of a condition's text. ``expand(root, attr)`` may return the source of a property."""
    memo = _PARSED_PLAIN if expand is None else _PARSED.setdefault(expand, {})
    key = (text, _depth)
    if key not in memo:
        memo[key] = _parse(text, expand, _depth)
    return memo[key]


def parse_receiver_free(text: str) -> Formula:
    """Formula of a text whose atoms are receiver-free already (a catalog assumption's
    ``pp_group.is_last_rank`` is the atom of ``self.pp_group.is_last_rank``, not ``is_last_rank``)."""
    key = (text, "receiver-free")
    if key not in _PARSED_PLAIN:
        _PARSED_PLAIN[key] = _parse(text, None, 0, drop_receivers=False)
    return _PARSED_PLAIN[key]


def _parse(text: str, expand, _depth: int, drop_receivers: bool = True) -> Formula:
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:  # not an expression on its own: an opaque atom, free to be true or false
        return Atom(text.strip())
    return _convert(node, expand, _depth, drop_receivers)


def _convert(node: ast.expr, expand, depth: int, drop_receivers: bool = True) -> Formula:
    if isinstance(node, ast.BoolOp):
        parts = tuple(_convert(v, expand, depth, drop_receivers) for v in node.values)
        return And(parts) if isinstance(node.op, ast.And) else Or(parts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return Not(_convert(node.operand, expand, depth, drop_receivers))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.IsNot) \
            and is_none(none_on_the_right(node)[1]):
        return Not(Atom(_atom_key(node, drop_receivers)))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and len(node.args) in (2, 3) and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
        # getattr(batch, "return_logprob", False) tests the attribute batch.return_logprob tests
        node = ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load())
    member = _member_test(node, drop_receivers)
    if member is not None:
        return member
    if expand is not None and depth < 4 and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        body = expand(node.value.id, node.attr)
        if body:
            return parse(body, expand, depth + 1)
    return Atom(_atom_key(node, drop_receivers))


def _member_test(node: ast.expr, drop_receivers: bool) -> Formula | None:
    """``x == Cls.NAME`` (or ``!=``, its negation) of a capitalised class's attribute: the atom
    keeps the class (``disaggregation_mode == DisaggregationMode.PREFILL``), so that the tests of
    one value against members of one enum can be related (``satisfiable_under_modes``)."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq))):
        return None
    right = node.comparators[0]
    if not (isinstance(right, ast.Attribute) and isinstance(right.value, ast.Name) and right.value.id[:1].isupper()):
        return None
    atom = Atom(f"{_atom_key(node.left, drop_receivers)} == {right.value.id}.{right.attr}")
    return atom if isinstance(node.ops[0], ast.Eq) else Not(atom)


_CALL_ATOM = re.compile(r"^(.*?)(\w+)\(\)$")
_MEMBER_ATOM = re.compile(r"^(.+) == ([A-Z]\w*)\.(\w+)$")


def with_complements(f: Formula, complements: dict[str, str]) -> Formula:
    """``f`` with each atom ``x.m()`` whose method has a complement ``n`` written ``not x.n()``."""
    if not complements:
        return f
    if isinstance(f, Atom):
        m = _CALL_ATOM.match(f.key)
        if m and m.group(2) in complements:
            return Not(Atom(f"{m.group(1)}{complements[m.group(2)]}()"))
        return f
    if isinstance(f, Not):
        return Not(with_complements(f.operand, complements))
    return type(f)(tuple(with_complements(g, complements) for g in f.parts))


def satisfiable_under_modes(formulas: Iterable[Formula], predicates: dict[str, frozenset],
                            enums: Callable[[str], frozenset | None] | None = None) -> bool:
    """``satisfiable``, knowing what the predicates of one enum say of each other: the atoms
    ``x.m()`` of one receiver whose methods are sets of one enum's members (``is_decode()``,
    ``is_idle()``) take the values one member gives them, or those of a member none of them holds
    for, so two with no member in common never hold together and one within another implies it
    (a receiver that is a bare name, whose root the atoms drop, relates to nothing).
    ``predicates``: method -> the members (``Cls.NAME``) it is true for. Likewise the tests of one
    value against members of one enum (``x == Cls.A``, ``x == Cls.B``): at most one holds, where
    ``enums(Cls)`` gives the class's members (an enum of the tree whose members are distinct)."""
    formulas = tuple(formulas)
    by_receiver: dict[str, set[tuple[str, str]]] = {}
    by_value: dict[tuple[str, str], set[str]] = {}
    for f in formulas if predicates or enums else ():
        for key in atoms(f):
            m = _CALL_ATOM.match(key)
            if m and m.group(2) in predicates:
                by_receiver.setdefault(m.group(1), set()).add((key, m.group(2)))
            m = _MEMBER_ATOM.match(key) if enums else None
            if m and m.group(3) in (enums(m.group(2)) or ()):
                by_value.setdefault((m.group(1), m.group(2)), set()).add(key)
    groups = []  # per receiver: its atoms, and the values each member (or none of them) gives them
    for keys in by_value.values():
        if len(keys) > 1:  # one value equals one member at most (or none of those tested)
            ordered = sorted(keys)
            options = {tuple(i == j for j in range(len(ordered))) for i in range(len(ordered))}
            options.add(tuple(False for _ in ordered))
            groups.append((ordered, options))
    for receiver, found in by_receiver.items():
        if not receiver:
            continue  # `mode.is_idle()` of a bare local: which object it is, is not written
        if len(found) < 2 or len({x.split(".")[0] for _, meth in found for x in predicates[meth]}) != 1:
            continue  # one predicate alone is free; members of two classes: nothing follows
        members = set().union(*(predicates[meth] for _, meth in found))
        keys = sorted(found)
        options = {tuple(member in predicates[meth] for _, meth in keys) for member in members}
        options.add(tuple(False for _ in keys))  # a member none of them holds for
        groups.append(([key for key, _ in keys], options))
    if not groups:
        return satisfiable(*formulas)
    whole = And(formulas)
    counts = _occurrences(whole, {})
    grouped = {k for keys, _ in groups for k in keys}
    # the atoms written twice or more, most written first, then the enums' atoms written once
    names = sorted((a for a, n in counts.items() if n > 1 or a in grouped), key=lambda a: (-counts[a], a))

    def consistent(env: dict) -> bool:
        """Do the assigned atoms of each group agree with one member?"""
        for keys, options in groups:
            got = [(i, env[k]) for i, k in enumerate(keys) if k in env]
            if got and not any(all(o[i] == v for i, v in got) for o in options):
                return False
        return True

    kept = [a for a in names if a in grouped] + [a for a in names if a not in grouped][:MAX_ATOMS]
    order = sorted(kept, key=names.index)
    return _search(_searched(whole, set(order)), order, {}, 0, consistent)


class Solver:
    """The satisfiability questions of one analysis, each decided once: the same read's, worker
    path's and selection's conditions meet again for every context of a read and every field of
    a path (on SGLang 0.5.23 half the questions are repeats). ``predicates`` and ``enums`` are
    those of ``satisfiable_under_modes``, fixed for the analysis; a question is its formulas."""

    def __init__(self, predicates: dict[str, frozenset], enums: Callable[[str], frozenset | None] | None = None):
        self.predicates = predicates
        self.enums = enums
        self._answers: dict[tuple, bool] = {}

    def satisfiable(self, *formulas: Formula) -> bool:
        key = (False, formulas)
        if key not in self._answers:
            self._answers[key] = satisfiable(*formulas)
        return self._answers[key]

    def satisfiable_under_modes(self, formulas: Iterable[Formula]) -> bool:
        formulas = tuple(formulas)
        key = (True, formulas)
        if key not in self._answers:
            self._answers[key] = satisfiable_under_modes(formulas, self.predicates, self.enums)
        return self._answers[key]


def conjunction(parts: Iterable[tuple[str, bool]], expand=None) -> Formula:
    items = []
    for text, positive in parts:
        f = parse(text, expand)
        items.append(f if positive else Not(f))
    return And(tuple(items))


def all_of(*formulas: Formula) -> Formula:
    return And(tuple(formulas))


def atoms(f: Formula) -> set:
    return set(_occurrences(f, {}))


def _occurrences(f: Formula, out: dict) -> dict:
    if isinstance(f, Atom):
        out[f.key] = out.get(f.key, 0) + 1
    elif isinstance(f, Not):
        _occurrences(f.operand, out)
    else:
        # identical siblings are one (And(a, a) is a): repeats would crowd MAX_ATOMS
        for g in dict.fromkeys(f.parts):
            _occurrences(g, out)
    return out


def satisfiable(*formulas: Formula) -> bool:
    """Can all formulas hold at once? (unknown atoms are free; too many atoms: assume yes)."""
    whole = And(formulas)
    counts = _occurrences(whole, {})
    # an atom written once can always take the value its one place asks for (the formula is
    # monotone in it): only atoms written twice or more can make a contradiction
    names = sorted((a for a, n in counts.items() if n > 1), key=lambda a: (-counts[a], a))
    # beyond MAX_ATOMS the rarest are left free too: an over-approximation
    return _search(_searched(whole, set(names[:MAX_ATOMS])), names[:MAX_ATOMS], {}, 0)


def _search(f: Formula | bool, names: list[str], env: dict, i: int, consistent=None) -> bool:
    """Assign ``names`` from the ``i``-th one by one, ``f`` being what is left of the formula under
    ``env`` (``_simplified``: it shrinks as atoms get values, so each step looks at less of it),
    dropping a branch as soon as it is false whatever the rest are, or ``consistent`` says the
    values assigned cannot be together; atoms outside ``names`` and ``env`` satisfy whatever asks
    for them (an over-approximation)."""
    if f is True or f is False or i == len(names):
        return f is not False
    name = names[i]
    for choice in (True, False):
        env[name] = choice
        g = _simplified(f, {name: choice})
        found = (consistent is None or consistent(env)) and _search(g, names, env, i + 1, consistent)
        del env[name]
        if found:
            return True
        if g is f and consistent is None:
            return False  # the atom is gone from what is left: its other value finds the same
    return False


# stands for a part of a formula with no atom the search assigns: its value stays unknown whatever
# the search assigns, as that of one such atom does, so the whole part is that one atom
_FREE = Atom("\0free")


def _searched(f: Formula, names: set) -> Formula | bool:
    """The formula the search starts from: its constant parts decided and each part with no atom of
    ``names`` made ``_FREE`` (the search then looks at a few atoms, not at each free one)."""
    if _FREE.key in names:
        return _simplified(f, {})
    kind = type(f)
    if kind is Atom:
        return f if f.key in names else _FREE
    if kind is Not:
        g = _searched(f.operand, names)
        if g is True or g is False:
            return not g
        return _FREE if g is _FREE else Not(g)
    is_or = kind is Or
    kept = []
    free = False
    for part in f.parts:
        g = _searched(part, names)
        if g is True or g is False:
            if g is is_or:
                return g
        elif g is not _FREE:
            kept.append(g)
        elif not free:  # two unknown parts of an and (or an or) are as one
            free = True
            kept.append(g)
    if not kept:
        return not is_or
    return kept[0] if len(kept) == 1 else kind(tuple(kept))


def _simplified(f: Formula, env: dict) -> Formula | bool:
    """What is left of the formula under a partial assignment: True or False once its value no
    longer depends on the unassigned atoms, else the formula with the decided parts dropped
    (``f`` itself where nothing changed)."""
    kind = type(f)
    if kind is Atom:
        v = env.get(f.key)
        return f if v is None else v
    if kind is Not:
        g = _simplified(f.operand, env)
        if g is True or g is False:
            return not g
        return f if g is f.operand else Not(g)
    is_or = kind is Or
    kept = []
    changed = False
    for part in f.parts:
        g = _simplified(part, env)
        if g is True or g is False:
            if g is is_or:
                return g
            changed = True
        else:
            kept.append(g)
            changed = changed or g is not part
    if not kept:
        return not is_or
    if not changed:
        return f
    return kept[0] if len(kept) == 1 else kind(tuple(kept))


def implication(when: str, implies: str) -> Formula:
    """``when -> implies`` as a formula (assumptions, written with receiver-free atoms)."""
    return Or((Not(parse_receiver_free(when)), parse_receiver_free(implies)))


def equivalence(a: Formula, b: Formula) -> Formula:
    """``a == b`` as a formula."""
    return And((Or((Not(a), b)), Or((Not(b), a))))


def render(parts: Iterable[tuple[str, bool]]) -> str:
    """The path condition as people write it: ``a and not (b)``."""
    out = []
    for text, positive in parts:
        if positive:
            out.append(f"({text})" if " or " in text else text)
        else:
            out.append(f"not ({text})")
    return " and ".join(out)


def render_dnf(alternatives) -> str:
    """Alternatives (each a list of (text, positive)) as ``(a and b) or (c)``; "always" for an empty one."""
    if not alternatives:
        return "never traced"
    parts = [render(a) or "always" for a in alternatives]
    if "always" in parts:
        return "always"
    return " or ".join(f"({p})" if len(alternatives) > 1 else p for p in parts)
