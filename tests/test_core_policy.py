"""The 0.5.17 and 0.5.23 dynamic-disable core's decision rule, run on the CPU: the module the core
adds (patches/dynamic-disable/src/<version>/, which the patches are generated from) imports no
torch and no SGLang at module level, so its SpecDisableController runs as in the server, on the
simulated clock of bench/core_sim.py. The rule is judged by behaviour: the time it takes against an
oracle that picks the better mode at every step, and bounds that follow from its documented
constants, never the index of a step."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
import threading
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "tests/scenarios").glob("*.json"))


def _load_sim():
    spec = importlib.util.spec_from_file_location("core_sim", ROOT / "bench/core_sim.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


sim = _load_sim()


@pytest.fixture(params=["0.5.17", "0.5.23"])
def core(request):
    return sim.load_core(request.param)


def scenario(phases, plain_ms=(4.9, 0.015), spec_ms=(6.5, 0.2), noise=0.05, seed=1, request_tokens=None):
    """The H200's step times by default (8B-shaped target, 3 draft steps: docs/results.md)."""
    return sim.Scenario.from_json({"plain_ms": plain_ms, "spec_ms": spec_ms, "noise": noise, "seed": seed,
                                   "request_tokens": request_tokens,
                                   "phases": [{"tokens": n, "bs": bs, "accept": a} for n, bs, a in phases]})


def test_speculation_comes_back_after_a_busy_hour_of_drafts_never_accepted(core):
    """2,000 steps at batch size 128 with drafts never accepted, then 20,000 at batch size 4 with
    accept length 3, where speculation wins about 1.7x: the second phase speculates."""
    s = scenario([(2000 * 128, 128, 1.0), (20000 * 4 * 3, 4, 3.0)], plain_ms=(4.8, 0.05), spec_ms=(7.0, 0.4))
    busy, quiet = sim.simulate(core, s)
    assert quiet.spec_steps / quiet.steps > 0.95
    assert busy.spec_steps / busy.steps < 0.02
    assert sim.ratio_to_oracle([busy, quiet]) > 0.97


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_the_scenarios_run_within_3_percent_of_the_oracle(core, path):
    results = sim.simulate(core, sim.Scenario.from_json(json.loads(path.read_text())))
    assert sim.ratio_to_oracle(results) > 0.97
    assert all(r.oracle_s / r.core_s > 0.95 for r in results)  # no phase left behind


def gap_bound(core, s, bs):
    """Steps of a bucket before its losing mode runs again, as the docstring's rule bounds them:
    r * (1 - 1 / loss) / BUDGET windows, at most (t_spec / t_plain - 1) / BUDGET (accept >= 1), plus the window in
    progress and the measuring window's own steps; x 1.25 for the noise of the estimates."""
    loss = max(s.step_ms(True, bs) / s.step_ms(False, bs), s.step_ms(False, bs) / s.step_ms(True, bs))
    return core.WINDOW * (2 + 1.25 * (loss - 1) / core.BUDGET)


@pytest.mark.parametrize("bs", [1, 8, 64, 128])
@pytest.mark.parametrize("accept", [1.0, 1.3])
def test_a_bucket_turned_off_measures_speculation_again_within_its_bound(core, bs, accept):
    """However long drafts went unaccepted, speculation is measured again within a bound set by the
    step times alone; once the drafts pay, it stays on (plain windows measure, at about BUDGET)."""
    s = scenario([(bs * 40000, bs, accept), (bs * 4 * 6000, bs, 4.0)])
    first, second = sim.simulate(core, s)
    assert second.first_spec_step is not None and second.first_spec_step <= gap_bound(core, s, bs)
    assert first.oracle_s / first.core_s > 0.97  # measuring the loser cost about BUDGET
    if s.step_ms(True, bs) < 4.0 * s.step_ms(False, bs) * 0.9:  # speculation wins in phase 2
        # on from then, but for the plain windows that measure it (about BUDGET of the time);
        # the phase's time also holds the wait for that first step, bounded above
        assert second.oracle_s / second.core_s > 0.95
        assert second.spec_steps > (second.steps - second.first_spec_step) / 2


@pytest.mark.parametrize("bs", [2, 16])
def test_speculation_stops_soon_after_the_drafts_stop_paying(core, bs):
    """On while drafts are accepted; when they no longer are, the bucket's accept length (its last
    WINDOW verify steps) turns it off, and measuring speculation again costs about BUDGET."""
    s = scenario([(bs * 4 * 3000, bs, 4.0), (bs * 20000, bs, 1.0)])
    on, off = sim.simulate(core, s)
    assert on.spec_steps / on.steps > 0.95
    # what the losing speculation costs after the change: about BUDGET of the time
    assert off.oracle_s / off.core_s > 1 - 2 * core.BUDGET


def test_a_request_of_another_kind_does_not_hold_its_buckets_verdict(core):
    """One 32-token request whose drafts are never accepted (a warm-up, a prose prompt), then
    requests whose drafts are always accepted, alone in the batch: they speculate at once."""
    s = scenario([(32, 1, 1.0), (2000, 1, 4.0)], plain_ms=(4.9, 0.035))
    _, code = sim.simulate(core, s)
    assert code.oracle_s / code.core_s > 0.95


def test_requests_of_two_kinds_in_turn_alone_in_the_batch_are_each_judged_by_their_own_drafts(core):
    """Quiet traffic, one request at a time, 128 tokens each, drafts never accepted and always
    accepted in turn: each speculates where its own drafts pay."""
    results = sim.simulate(core, scenario([(128, 1, accept) for accept in (1.0, 4.0) * 30]))
    code = [r for r in results if r.phase.accept == 4.0]
    assert sum(r.spec_steps for r in code) / sum(r.steps for r in code) > 0.9
    assert sim.ratio_to_oracle(results) > 0.97


@pytest.mark.parametrize("bs", [1, 2, 16])
def test_measuring_each_new_request_costs_little(core, bs):
    """Drafts never accepted, requests of 128 tokens that end and are replaced: at batch size 1
    each new request is measured once (about WINDOW steps of speculation); in larger buckets the
    loser is measured at BUDGET's pace whatever the requests."""
    results = sim.simulate(core, scenario([(bs * 128 * 200, bs, 1.0)], request_tokens=128))
    assert sim.ratio_to_oracle(results) > (0.97 if bs == 1 else 1 - 2 * core.BUDGET)


def test_each_bucket_keeps_its_own_acceptance(core):
    """Quiet traffic (batch 4) accepts drafts, busy traffic (batch 64) does not: the busy hours do
    not turn speculation off for the quiet ones, nor the quiet ones on for the busy."""
    phases = [(4 * 3 * 2000, 4, 3.0), (64 * 3000, 64, 1.1)] * 4
    results = sim.simulate(core, scenario(phases))
    quiet = [r for r in results if r.phase.bs == 4]
    busy = [r for r in results if r.phase.bs == 64]
    assert all(r.spec_steps / r.steps > 0.95 for r in quiet)
    assert all(r.spec_steps / r.steps < 0.05 for r in busy)
    assert sim.ratio_to_oracle(results) > 0.97


def test_a_close_call_costs_little_either_way(core):
    """Drafts accepted just enough to break even (1.3 x 4.93 ms ~ 6.52 ms at batch size 1), with 10 %
    step-time noise: whichever mode the rule picks, it loses under 3 % to the oracle."""
    s = scenario([(200000, 1, 1.32)], noise=0.1, seed=5)
    assert sim.ratio_to_oracle(sim.simulate(core, s)) > 0.97


def test_tp_ranks_whose_inputs_differ_decide_alike(core):
    """Two ranks whose clocks and accept reports differ: each runs its own controller, and the
    share hook (a broadcast of rank 0's plan in the server) gives both rank 0's mode and whether
    the window measures (a plain measurement catches the draft KV up: a collective under TP);
    without it their decisions part."""
    barrier, slot = threading.Barrier(2), [None]

    def share(rank):
        def broadcast(speculate):
            if rank == 0:
                slot[0] = speculate
            barrier.wait()
            value = slot[0]
            barrier.wait()
            return value
        return broadcast

    s = scenario([(2 * 3 * 3000, 2, 3.0), (96 * 2000, 96, 1.4), (8 * 2000, 8, 1.45), (32 * 3000, 32, 1.9)])
    decisions = [None, None]

    def rank(r, shared):
        replay = sim.Replay(core, s, share=share(r) if shared else None, rng=random.Random(r + 10))
        steps = []
        for phase in s.phases:
            accept = phase.accept * (1.0 if r == 0 else 0.93)  # rank 1 hears other accept lengths
            for _ in range(phase.tokens // (phase.bs * 2)):
                steps.append((replay.step(phase.bs, accept), replay.controller.measuring))
        decisions[r] = steps

    for shared in (True, False):
        threads = [threading.Thread(target=rank, args=(r, shared)) for r in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads)
        assert (decisions[0] == decisions[1]) == shared


def test_the_bound_and_steps_that_need_verify(core):
    replay = sim.Replay(core, scenario([(1, 1, 4.0)]), bound=8)
    assert any(replay.step(4, 4.0) for _ in range(40))
    assert not any(replay.step(16, 4.0) for _ in range(40))
    assert replay.step(16, 4.0, needs_verify=True)  # logprobs, grammars, hidden states
    off = sim.Replay(core, scenario([(1, 1, 4.0)]), bound=0)
    assert not any(off.step(1, 4.0) for _ in range(50))


def test_step_times_leave_out_prefills_idle_gaps_and_mode_changes(core):
    replay = sim.Replay(core, scenario([(1, 1, 1.0)], noise=0.0))
    c = replay.controller
    for _ in range(40):
        replay.step(1, 1.0)
    bucket = c.buckets[1]
    times = {mode: list(bucket.times[(mode, False)]) for mode in (True, False)}
    assert times[True] and times[False]
    assert times[True] == pytest.approx([6.7e-3] * len(times[True]))  # no plain step among them
    assert times[False] == pytest.approx([4.915e-3] * len(times[False]))
    samples = bucket.times[(c.history[-1].speculate, False)]
    before = len(samples)
    c.history.clear()  # what a prefill does (SpecDisableRuntime.on_prefill)
    for _ in range(3):
        replay.step(1, 1.0)
    assert len(samples) == before  # three decisions after a prefill: none timed yet
    replay.now += 5.0  # an idle server: this gap is no step time
    replay.step(1, 1.0)
    assert len(samples) == before


def test_finish_work_in_a_shrinking_batch_counts_alike_in_both_modes(core):
    """A request's end costs 3 ms once (result processing, a batch of a new size). In a batch that
    loses a request every few tokens most speculative steps (2 tokens each) carry one, fewer plain
    steps do: by all their steps speculation would seem to lose at 9-16 requests, where it wins
    by 6 % (9.2 ms against 2 x 4.9 ms). The steps in which the batch kept its size time both."""
    s = scenario([(1, 1, 2.0)], plain_ms=(4.9, 0.0), spec_ms=(9.2, 0.0), noise=0.0)
    replay = sim.Replay(core, s)
    for _ in range(200):
        lengths = list(range(20, 340, 20))  # 16 requests, one ends every 20 tokens
        while lengths:
            speculate = replay.step(len(lengths), 2.0)
            lengths = [n - (2 if speculate else 1) for n in lengths]
            if any(n <= 0 for n in lengths):
                replay.now += 3e-3 * sum(n <= 0 for n in lengths)
            lengths = [n for n in lengths if n > 0]
    b = replay.controller.buckets[16]
    assert b.verdict is True and b.time(True) == pytest.approx(9.2e-3)


def test_an_empty_verify_report_changes_nothing(core):
    c = core.SpecDisableController()
    c.observe([])
    assert not c.buckets
    c.observe([3, 1])
    assert c.buckets[2].accept() == 3.0


def test_the_rule_has_at_most_four_tunable_constants(core):
    assert {core.WINDOW, core.BUDGET, core.MARGIN, core.IDLE} and core.WINDOW >= 4
    assert all(name in core.__doc__ for name in ("WINDOW", "BUDGET", "MARGIN", "IDLE"))


def resolved(**overrides):
    fields = dict(
        speculative_algorithm="EAGLE3", speculative_eagle_topk=1, enable_multi_layer_eagle=False,
        speculative_use_rejection_sampling=False, enable_dp_attention=False, pp_size=1,
        enable_two_batch_overlap=False, enable_pdmux=False, disaggregation_mode="null",
        speculative_draft_model_path="/draft", model_path="/target", attention_backend="triton",
        decode_attention_backend=None, page_size=1, disable_overlap_schedule=False, tp_size=1,
    )
    fields.update(overrides)
    return types.SimpleNamespace(**fields)


@pytest.mark.parametrize("overrides, reason", [
    ({}, None),
    ({"speculative_algorithm": "NGRAM"}, "--speculative-algorithm NGRAM (EAGLE, EAGLE3)"),
    ({"speculative_eagle_topk": 4}, "--speculative-eagle-topk > 1"),
    ({"enable_multi_layer_eagle": True}, "--enable-multi-layer-eagle"),
    ({"enable_dp_attention": True}, "--enable-dp-attention"),
    ({"pp_size": 2}, "--pp-size > 1"),
    ({"disaggregation_mode": "decode"}, "--disaggregation-mode"),
    ({"speculative_draft_model_path": None}, "MTP drafts"),
    ({"attention_backend": "fa3"}, "--attention-backend fa3 (triton only)"),
    ({"decode_attention_backend": "flashinfer"}, "--attention-backend flashinfer (triton only)"),
    ({"page_size": 16}, "--page-size > 1"),
    ({"disable_overlap_schedule": True}, "--disable-overlap-schedule"),
    ({"tp_size": 2}, "--tp-size > 1"),
])
def test_what_the_core_refuses_at_server_start(core, overrides, reason):
    assert core.unsupported_reason(resolved(**overrides)) == reason


def test_modes_no_gpu_run_covered_start_when_allowed_and_the_rest_never(core):
    assert core.unsupported_reason(resolved(tp_size=2, page_size=16), allow_unverified=True) is None
    refused = resolved(tp_size=2, enable_dp_attention=True)
    assert core.unsupported_reason(refused, allow_unverified=True) == "--enable-dp-attention"
