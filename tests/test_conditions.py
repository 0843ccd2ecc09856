"""Path conditions: the satisfiability search agrees with enumerating every assignment."""

from __future__ import annotations

import itertools

from spectrace.contracts.conditions import atoms, conjunction, parse, satisfiable


def _brute(*formulas) -> bool:
    whole = ("and", list(formulas))
    names = sorted(atoms(whole))

    def ev(f, env):
        if f[0] == "atom":
            return env[f[1]]
        if f[0] == "not":
            return not ev(f[1], env)
        if f[0] == "and":
            return all(ev(g, env) for g in f[1])
        return any(ev(g, env) for g in f[1])

    return any(ev(whole, dict(zip(names, v))) for v in itertools.product((True, False), repeat=len(names)))


CASES = [
    ("self.enable_overlap and batch.is_spec_v2", "not enable_overlap"),
    ("a and (b or c)", "not b and not c"),
    ("a and (b or c)", "not b"),
    ("(a or b) and (not a or c) and (not b or c)", "not c"),
    ("x is None", "x is not None"),
    ("not (spec_algorithm.is_none())", "self.spec_algorithm.is_none() or d"),
]


def test_search_agrees_with_enumeration():
    for left, right in CASES:
        fa, fb = parse(left), parse(right)
        assert satisfiable(fa, fb) == _brute(fa, fb), (left, right)


def test_contradiction_through_receiver_free_atoms():
    read = conjunction([("self.enable_overlap", True), ("batch.spec_algorithm.is_none()", False)])
    selection = conjunction([("self.spec_algorithm.is_none()", True)])
    assert not satisfiable(read, selection)
    assert satisfiable(read, conjunction([("enable_overlap", True)]))
