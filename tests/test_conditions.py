"""Path conditions: the satisfiability search agrees with enumerating every assignment."""

from __future__ import annotations

import itertools
import random

from spectrace.contracts import conditions as C
from spectrace.contracts.conditions import And, Atom, Not, Or, atoms, conjunction, parse, satisfiable


def _brute(*formulas) -> bool:
    whole = And(tuple(formulas))
    names = sorted(atoms(whole))

    def ev(f, env):
        if isinstance(f, Atom):
            return env[f.key]
        if isinstance(f, Not):
            return not ev(f.operand, env)
        if isinstance(f, And):
            return all(ev(g, env) for g in f.parts)
        return any(ev(g, env) for g in f.parts)

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


def _random_formula(rng: random.Random, depth: int):
    if depth == 0 or rng.random() < 0.3:
        return Atom(f"x{rng.randrange(6)}")
    kind = rng.choice((And, Or, Not))
    if kind is Not:
        return Not(_random_formula(rng, depth - 1))
    return kind(tuple(_random_formula(rng, depth - 1) for _ in range(rng.randint(2, 3))))


def test_search_agrees_with_enumeration_on_random_formulas():
    rng = random.Random(7)
    for _ in range(300):
        fs = [_random_formula(rng, 3) for _ in range(rng.randint(1, 3))]
        assert satisfiable(*fs) == _brute(*fs), fs


def test_contradiction_inside_one_formula_among_many_atoms():
    """Atoms written once are free; the two written twice still contradict, however many others."""
    noise = " and ".join(f"flag_{i}" for i in range(30))
    path = conjunction([(noise, True), ("not (a and c)", True), ("not (a and not c)", True)])
    assert not satisfiable(path, conjunction([("a", True)]))
    assert satisfiable(path, conjunction([("not a", True)]))


def test_assumption_atoms_are_receiver_free_already():
    # the catalog writes `pp_group.is_last_rank` for the code's `self.pp_group.is_last_rank`
    from spectrace.contracts.conditions import implication

    stage = conjunction([("self.pp_group.is_last_rank", False), ("self.enable_overlap", True)])
    pp = implication("not pp_group.is_last_rank", "pp_size > 1")
    overlap = implication("pp_size > 1", "not enable_overlap")
    assert satisfiable(stage, pp)
    assert not satisfiable(stage, pp, overlap)


def test_getattr_with_a_literal_name_is_the_attribute():
    assert not satisfiable(parse('getattr(batch, "return_logprob", False)'), parse("not self.return_logprob"))


def test_assumptions_named_for_releases_apply_to_those_only():
    from spectrace.contracts.violations import applicable

    everywhere, some = {"id": "A"}, {"id": "B", "releases": ["0.5.17"]}
    assert applicable([everywhere, some], "0.5.17") == [everywhere, some]
    assert applicable([everywhere, some], "0.5.23") == [everywhere]
    assert applicable([everywhere, some], None) == [everywhere]


def test_enum_predicates_exclude_and_imply_each_other():
    preds = {"is_decode": frozenset({"Mode.DECODE"}), "is_idle": frozenset({"Mode.IDLE"}),
             "is_extend": frozenset({"Mode.EXTEND", "Mode.MIXED"}), "is_mixed": frozenset({"Mode.MIXED"})}

    def sat(*texts):
        return C.satisfiable_under_modes([C.parse(t) for t in texts], preds)

    assert not sat("batch.forward_mode.is_decode()", "self.forward_mode.is_idle()")  # one receiver, receiver-free
    assert not sat("batch.forward_mode.is_mixed()", "not batch.forward_mode.is_extend()")
    assert sat("batch.forward_mode.is_extend()", "not batch.forward_mode.is_mixed()")
    assert sat("not b.forward_mode.is_decode()", "not b.forward_mode.is_idle()", "not b.forward_mode.is_extend()")
    assert sat("batch.forward_mode.is_decode()", "batch.draft_mode.is_idle()")  # two receivers: nothing follows
    assert sat("mode.is_decode()", "other.is_idle()")  # bare locals: which objects, is not written
    assert C.satisfiable(C.parse("b.forward_mode.is_decode()"), C.parse("b.forward_mode.is_idle()"))  # without them


def test_tests_of_one_value_against_one_enums_members_exclude_each_other():
    members = {"Mode": frozenset({"NULL", "PREFILL", "DECODE"})}.get

    def sat(*texts, enums=members):
        return C.satisfiable_under_modes([C.parse(t) for t in texts], {}, enums)

    assert not sat("self.mode == Mode.PREFILL", "mode == Mode.NULL")  # receiver-free, one value
    assert sat("self.mode != Mode.PREFILL", "mode != Mode.NULL")  # `!=` is not `==`: DECODE, or no member
    assert not sat("self.mode != Mode.PREFILL", "mode == Mode.PREFILL")
    assert sat("self.mode == Mode.PREFILL", "self.other == Mode.NULL")  # two values
    assert sat("self.mode == Mode.PREFILL", "mode == Mode.NULL", enums=lambda _: None)  # not an enum of the tree
    assert sat("self.mode == Kind.PREFILL", "mode == Mode.NULL")  # members of two classes



def test_repeated_alternatives_leave_the_search_the_atoms_that_contradict():
    """An alternative repeated over and over (one per call that decides a return path alike) counts
    once: its atoms do not crowd the two that contradict out of the MAX_ATOMS searched."""
    others = And(tuple(Atom(f"o{i}") for i in range(2 * C.MAX_ATOMS)))
    assert satisfiable(Atom("x"), Not(Atom("x")), Or((others,) * 5)) is False
    assert satisfiable(Atom("x"), Not(Atom("y")), Or((others,) * 5)) is True


def test_a_solver_answers_as_the_search_and_asks_each_question_once(monkeypatch):
    preds = {"is_decode": frozenset({"Mode.DECODE"}), "is_idle": frozenset({"Mode.IDLE"})}
    solver = C.Solver(preds)
    rng = random.Random(11)
    questions = [[_random_formula(rng, 3) for _ in range(rng.randint(1, 3))] for _ in range(100)]
    modes = [[C.parse("b.forward_mode.is_decode()"), C.parse(t)] for t in ("b.forward_mode.is_idle()", "x")]
    for fs in questions:
        assert solver.satisfiable(*fs) == satisfiable(*fs)
    for fs in modes:
        assert solver.satisfiable_under_modes(fs) == C.satisfiable_under_modes(fs, preds)
    asked = []
    monkeypatch.setattr(C, "satisfiable", lambda *fs: asked.append(fs))
    monkeypatch.setattr(C, "satisfiable_under_modes", lambda *a: asked.append(a))
    for fs in questions:
        solver.satisfiable(*fs)
    for fs in modes:
        solver.satisfiable_under_modes(iter(fs))
    assert asked == []
