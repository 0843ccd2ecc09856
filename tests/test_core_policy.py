"""The 0.5.17 and 0.5.23 dynamic-disable core's policy code, run on the CPU: the module the core adds
(its source, patches/dynamic-disable/src/<version>/, which the patches are generated from) imports
no torch and no SGLang at module level, so its measured rule and its start-up refusals run as they
would in the server, on a simulated clock."""

from __future__ import annotations

import importlib.util
import threading
import types
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "patches/dynamic-disable/src"


@pytest.fixture(params=["0.5.17", "0.5.23"])
def core(request):
    path = SRC / request.param / "speculative/dynamic_disable.py"
    spec = importlib.util.spec_from_file_location(f"core_{request.param.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Server:
    """Decode steps of a simulated server: each step's wall time by mode and batch size, and the
    accepted drafts that a verify step reports back (as the result processor does)."""

    def __init__(self, core, accept, spec_ms, plain_ms, bound=None, reduce_max=None, finish_ms=0.0, shift_ms=0.0):
        self.now, self.bs = 0.0, None
        self.accept, self.spec_ms, self.plain_ms, self.finish_ms = accept, spec_ms, plain_ms, finish_ms
        self.shift_ms = shift_ms  # what a request's end moves from the next step into its own
        self.controller = core.SpecDisableController(bound, reduce_max, clock=lambda: self.now)

    def step(self, bs, needs_verify=False):
        shift = 0.0
        if self.bs is not None and bs != self.bs:  # requests ended: their result processing, a new size
            shift = self.shift_ms
            self.now += (self.finish_ms + shift) / 1e3
        self.bs = bs
        speculate = self.controller.decide(bs, needs_verify)
        if speculate:
            self.controller.observe([self.accept - 1] * bs)
        self.now += ((self.spec_ms(bs) if speculate else self.plain_ms(bs)) - shift) / 1e3
        return speculate

    def run(self, sizes):
        return "".join("S" if self.step(bs) else "p" for bs in sizes)

    def decode(self, lengths):
        """Requests decoded to their lengths (a verify step gives each `accept` tokens, a plain step
        1), so that the batch shrinks as they end; (batch size, "S" or "p") of every step."""
        left, steps = list(lengths), []
        while left:
            speculate = self.step(len(left))
            steps.append((len(left), "S" if speculate else "p"))
            left = [n - (self.accept if speculate else 1) for n in left]
            left = [n for n in left if n > 0]
        return steps


def spec_ms(bs):  # verify over num_draft_tokens x bs tokens: its relative cost grows with the batch
    return 7.0 + 0.4 * bs


def plain_ms(bs):
    return 4.8 + 0.05 * bs


def test_drafts_that_are_never_accepted_are_measured_once_then_plain_decoding_runs(core):
    server = Server(core, accept=1.0, spec_ms=spec_ms, plain_ms=plain_ms)
    steps = server.run([1] * 2200)
    # one probe of each mode (8 steps), then plain; speculation, 34 % behind (1 x 4.85 / 7.4 ms), is
    # measured again after CLEAR x INTERVAL = 2048 steps
    assert steps[:16] == "S" * 8 + "p" * 8
    assert steps[16:2063] == "p" * 2047 and steps[2063:2071] == "S" * 8
    c = server.controller
    assert c.accept == 1.0 and c.verdict == {1: False}
    assert c.cost(True, 1) == pytest.approx(0.0074) and c.cost(False, 1) == pytest.approx(0.00485)
    # a larger batch never probes speculation: a smaller one already loses
    assert set(server.run([64] * 300)) == {"p"}


def test_accepted_drafts_speculate_where_they_pay_and_stop_where_the_batch_is_too_large(core):
    server = Server(core, accept=4.0, spec_ms=spec_ms, plain_ms=plain_ms)
    assert server.run([1] * 40).endswith("S" * 20)
    # bs 4: the plain time of bs 1 bounds the gain (4 x 4.85 / 8.6 > 1.25): no plain probe there
    assert set(server.run([4] * 40)) == {"S"}
    assert server.controller.cost(False, 4) is None
    # bs 128: 4 x 11.2 ms < 58.2 ms, plain decoding wins once both are measured
    assert server.run([128] * 60).endswith("p" * 30)
    assert server.controller.verdict[128] is False and server.controller.verdict[1] is True


def test_a_verdict_that_holds_is_measured_again_less_often(core):
    server = Server(core, accept=1.0, spec_ms=spec_ms, plain_ms=plain_ms)
    steps = server.run([1] * 16000)
    probes = [i for i in range(1, len(steps)) if steps[i] == "S" and steps[i - 1] == "p"]
    gaps = [b - a for a, b in zip(probes, probes[1:])]
    assert len(gaps) == 2 and gaps[1] > 1.9 * gaps[0]  # 2048 steps, then 4096, then 8192
    assert steps.count("S") < 40  # 8 steps per measurement, a handful of measurements


@pytest.mark.parametrize("accept, first_plain_probe", [(1.7, 527), (4.0, 2063)])
def test_a_close_verdict_is_measured_again_sooner_than_a_clear_one(core, accept, first_plain_probe):
    # speculation wins at bs 1 by 11 % (1.7 x 4.85 / 7.4 ms): plain decoding measured again after 512
    # steps; by 162 % (accept 4): after 2048, as plain decoding is then no close call
    steps = Server(core, accept=accept, spec_ms=spec_ms, plain_ms=plain_ms).run([1] * 2100)
    assert steps[:16] == "S" * 8 + "p" * 8
    assert steps[16:first_plain_probe] == "S" * (first_plain_probe - 16)
    assert steps[first_plain_probe:first_plain_probe + 8] == "p" * 8


def test_step_times_skip_prefills_idle_gaps_and_mode_changes(core):
    server = Server(core, accept=1.0, spec_ms=spec_ms, plain_ms=plain_ms)
    c = server.controller
    server.run([1] * 16)
    times = c.local[(False, 1)]
    times.clear()
    c.history.clear()  # what a prefill does (SpecDisableRuntime.on_prefill)
    server.run([1] * 3)
    assert len(times) == 0  # three decisions after a prefill: none timed yet
    server.run([1])
    assert len(times) == 1
    server.now += 5.0  # an idle server: this gap is no step time
    server.run([1])
    assert len(times) == 1
    server.run([1, 2])
    assert len(times) == 2  # a changed batch size ends the run of samples
    server.run([2] * 3)
    assert len(times) == 2 and list(times) == pytest.approx([0.00485] * 2)


def test_a_slow_step_or_bucket_does_not_decide(core):
    """A shrinking batch: plain decoding's step time measured in a smaller bucket during a slow
    stretch (requests ending, prefills nearby) is bounded by the larger bucket's; and one slow step
    among five is not the bucket's time."""
    c = core.SpecDisableController()

    def samples(key, seconds):  # as decide() keeps them
        c.local[key].extend(seconds)
        c.clean[key].extend(seconds)
        c.time_bucket(key[1])

    samples((False, 128), (0.0071, 0.0072, 0.0071))
    samples((False, 64), (0.0207, 0.0210, 0.0205))
    assert c.cost(False, 64) == pytest.approx((0.0071 + 0.0072 + 0.0071) / 3)
    assert c.cost(False, 32) is None  # a bound, not a measurement: the bucket is still probed
    samples((True, 8), (0.0060, 0.0061, 0.0300, 0.0059))
    assert c.cost(True, 8) == pytest.approx(0.0060)  # the mean of the other three


def test_a_shrinking_batch_keeps_plain_decoding_where_it_wins(core):
    """The batch shrinks from 128 to 64 requests while the plain steps of the bucket 64 run slow
    (as when requests end and others are prefilled): plain decoding stays, as the larger bucket
    shows it wins."""
    def plain_slow_at_64(bs):
        return plain_ms(bs) * (4 if 32 < bs <= 64 else 1)

    server = Server(core, accept=2.0, spec_ms=spec_ms, plain_ms=plain_slow_at_64)
    server.run([128] * 40)  # both modes measured at 128: plain wins
    steps = server.run([64] * 30)
    assert steps.endswith("p" * 10)


def test_a_batch_that_shrinks_every_step_measures_each_bucket_once(core):
    """Requests end one per step, so no three decisions see one batch size: the steps of one bucket
    still give its cost, and speculation, which loses in the bucket 32 (2 x 6.4 ms < 19.8 ms), is
    probed there once, not again on every pass."""
    server = Server(core, accept=2.0, spec_ms=spec_ms, plain_ms=plain_ms)
    server.run([4] * 40)  # speculation wins at 4 (8.6 ms < 2 x 5.0 ms): the rule is on
    passes = [server.run(range(32, 16, -1)) for _ in range(4)]
    assert passes[0].count("S") <= core.SpecDisableController.PROBE
    assert server.controller.verdict[32] is False
    assert set("".join(passes[1:])) == {"p"}


def test_finish_work_in_a_fast_shrinking_batch_counts_alike_in_both_modes(core):
    """Each request's end costs 3 ms once, before the next step (result processing, a batch of a new
    size). In a batch that loses a request every 3 tokens, most speculative steps (2 tokens each)
    carry that cost and a third of the plain ones: by their medians speculation would lose at batch
    sizes 9-16, where it wins by 6 % (9.2 ms against 2 x 4.9 ms a step), and the next, slower run
    would decode plainly there on that verdict. Per token the cost is the same in both modes."""
    def spec(bs):  # the H200's step times with half-accepted drafts (docs/results.md)
        return 9.2 if bs <= 16 else 19.0 if bs <= 64 else 33.0

    def plain(bs):
        return 4.9 if bs <= 16 else 5.5 if bs <= 64 else 6.8

    server = Server(core, accept=2.0, spec_ms=spec, plain_ms=plain, finish_ms=3.0)
    server.run([4] * 40)  # speculation wins at 4
    # a sweep's runs: 16 requests (one ends every 15 tokens), 64 (every 3) and 128 (every 2), each
    # after the bench's untimed request at its batch size; then the 16 again
    for lengths in (range(15, 241, 15), range(3, 193, 3), range(2, 258, 2), range(15, 241, 15)):
        server.run([len(lengths)] * 16)
        steps = server.decode(lengths)
    at_9_to_16 = [mode for bs, mode in steps if bs > 8]
    assert at_9_to_16 == ["S"] * len(at_9_to_16) and server.controller.verdict[16] is True


def test_a_bucket_passed_in_a_few_steps_is_timed_by_its_steps_in_which_no_request_ended(core):
    """Output lengths from 13 to 243 tokens: at C=64 a request ends every 3.6 tokens while the batch
    passes the bucket 9-16, so about every second speculative step carries a request's finish work
    (3 ms). The mean of those steps (10.4 ms against 9.2) once turned speculation off there on the
    H200 (`spec/plain 10.7/5.0`), and the next C=16 run decoded plainly from 16 to 9 requests at
    0.875 of EAGLE-3 always on. The steps without an end give the step time."""
    def spec(bs):  # the H200's step times with half-accepted drafts (docs/results.md)
        return 9.2 if bs <= 16 else 19.0 if bs <= 64 else 33.0

    def plain(bs):
        return 4.9 if bs <= 16 else 5.5 if bs <= 64 else 6.8

    def spread(c):  # the bench's --output-spread 0.9 around 128 tokens
        return [13 + round(i * 230 / (c - 1)) for i in range(c)]

    server = Server(core, accept=2.0, spec_ms=spec, plain_ms=plain, finish_ms=3.0)
    server.run([4] * 40)  # speculation wins at 4
    for c in (16, 64):
        server.run([c] * 32)  # the bench's untimed request at its batch size
        steps = server.decode(spread(c))
    assert [mode for bs, mode in steps if 8 < bs <= 16] == ["S"] * sum(1 for bs, _ in steps if 8 < bs <= 16)
    assert server.controller.times[(True, 16)] == pytest.approx(9.2e-3)
    assert server.controller.times[(False, 16)] == pytest.approx(4.9e-3)


def test_the_step_after_a_request_end_is_not_taken_for_a_step_without_one(core):
    """The overlap scheduler moves part of the next step's time into the step in which a request
    ended: on the H200 (half-accepted drafts, 9-16 requests) plain steps took 5.9 ms when one ended,
    4.5 ms the step after and 5.2 ms otherwise. Taking the 4.5 ms steps as steps without an end put
    plain decoding at 4.5 ms against speculation's 9.4 (`OFF at batch size <= 16 ... 9.4/4.5`), and
    the next C=16 run decoded plainly from 16 to 9 requests at 0.887 of EAGLE-3 always on."""
    server = Server(core, accept=2.0, spec_ms=lambda bs: 9.2, plain_ms=lambda bs: 5.2, bound=8, shift_ms=0.7)
    sizes = [bs for bs in range(16, 8, -1) for _ in range(3)]  # a request ends every third step
    assert server.run(sizes) == "p" * len(sizes)  # the bound: plain decoding above 8 requests
    assert server.controller.times[(False, 16)] == pytest.approx(5.2e-3)


def test_a_pass_in_which_every_step_had_a_request_end_keeps_the_steps_without_one(core):
    """A batch that loses a request at every step (128 requests ending every 2 tokens) passes the
    bucket 9-16 with speculation on: its steps there carry finish work. The bucket's steps without
    an end, from a slower run, still give its step time."""
    c = core.SpecDisableController()
    c.local[(True, 16)].extend([0.0092] * 3)
    c.clean[(True, 16)].extend([0.0092] * 3)
    c.local[(False, 16)].extend([0.0049] * 3)
    c.clean[(False, 16)].extend([0.0049] * 3)
    c.local[(True, 16)].extend([0.0122] * 5)
    c.time_bucket(16)
    assert c.times[(True, 16)] == pytest.approx(0.0092)


def test_both_modes_of_a_bucket_are_timed_alike_with_or_without_request_ends(core):
    """One mode's steps without an end are not compared with the other's steps with ends: speculation
    timed only in a fast-shrinking batch (every step had an end, 11.2 ms) against plain steps
    without one (4.9 ms) would lose where it wins. Until both modes have three steps without an end,
    both are timed by all their steps."""
    c = core.SpecDisableController()
    c.local[(True, 16)].extend([0.0112] * 5)
    c.local[(False, 16)].extend([0.0049, 0.0079, 0.0049, 0.0049, 0.0079])
    c.clean[(False, 16)].extend([0.0049] * 3)
    c.time_bucket(16)
    assert c.times[(False, 16)] == pytest.approx((0.0049 * 3 + 0.0079 * 2) / 5)
    assert 2.0 * c.cost(False, 16) / c.cost(True, 16) > 1.0
    c.local[(True, 16)].extend([0.0092] * 3)
    c.clean[(True, 16)].extend([0.0092] * 3)
    c.time_bucket(16)
    assert c.times[(True, 16)] == pytest.approx(0.0092) and c.times[(False, 16)] == pytest.approx(0.0049)


def test_a_clear_lead_at_a_larger_bucket_spares_the_plain_probes_of_a_shrinking_batch(core):
    """Drafts always accepted, output lengths spread: each run's batch shrinks from C to 1 and meets
    small buckets whose plain step time is not measured yet; the old rule probed each of them for 8
    plain steps, run after run one more (8 and 16 plain steps in a C=16 run of about 60 steps: 0.92
    of EAGLE-3 always on, H200). Speculation's lead at the bucket 64 (4 x 5.5 / 14.6 ms = 1.5)
    bounds the smaller buckets' from below: they speculate without a plain probe."""
    def spec(bs):  # the H200's step times with accepted drafts (docs/results.md)
        return 33.0 if bs > 64 else 14.6 if bs > 16 else 8.5 if bs > 4 else 6.0

    def plain(bs):
        return 5.8 if bs > 64 else 5.5 if bs > 16 else 5.0

    server = Server(core, accept=4.0, spec_ms=spec, plain_ms=plain)
    server.run([128] * 16)  # the bench's untimed request at its batch size: both modes measured there
    first = server.decode(range(2, 258, 2))
    assert server.controller.verdict[128] is False and server.controller.verdict[64] is True
    assert [mode for bs, mode in first if bs <= 32] == ["S"] * sum(1 for bs, _ in first if bs <= 32)
    server.run([16] * 16)
    steps = server.decode(range(15, 241, 15))
    assert {mode for _, mode in steps} == {"S"}
    assert all(server.controller.cost(False, b) is None for b in (1, 2, 4, 8, 16, 32))


def test_the_bound_turns_speculation_off_but_not_for_steps_that_need_verify(core):
    server = Server(core, accept=4.0, spec_ms=spec_ms, plain_ms=plain_ms, bound=8)
    assert server.run([4] * 20).endswith("S" * 4)
    assert set(server.run([16] * 20)) == {"p"}
    assert server.step(16, needs_verify=True) is True  # logprobs, grammars, hidden states
    off = Server(core, accept=4.0, spec_ms=spec_ms, plain_ms=plain_ms, bound=0)
    assert set(off.run([1] * 50)) == {"p"}


def test_tp_ranks_with_different_step_times_decide_alike(core):
    """Two ranks time their steps differently (one is slower, and noisy); the rule reads only the
    maximum over ranks, exchanged every SYNC decisions through reduce_max (an all-reduce in the
    server), so both take the same decision at every step."""
    barrier, deposits = threading.Barrier(2), [None, None]

    def reduce_max(rank):
        def exchange(values):
            deposits[rank] = list(values)
            barrier.wait()
            result = [max(a, b) for a, b in zip(*deposits)]
            barrier.wait()
            return result
        return exchange

    sizes = [1] * 300 + [16] * 300 + [128] * 300 + [64] * 300
    decisions = [None, None]

    def rank(r):
        jitter = iter([1.0, 1.3, 0.9, 1.1] * 1000)
        server = Server(core, accept=2.5, reduce_max=reduce_max(r),
                        spec_ms=lambda bs: spec_ms(bs) * (1.0 if r == 0 else 1.1 * next(jitter)),
                        plain_ms=lambda bs: plain_ms(bs) * (1.0 if r == 0 else 1.05 * next(jitter)))
        decisions[r] = server.run(sizes)

    threads = [threading.Thread(target=rank, args=(r,)) for r in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert decisions[0] == decisions[1]
    assert "S" * 100 in decisions[0][:300] and decisions[0].endswith("p" * 100)


def test_an_empty_verify_report_changes_nothing(core):
    c = core.SpecDisableController()
    c.observe([])
    assert c.accept is None
    c.observe([3, 1])
    assert c.accept == 3.0


def server_args(**overrides):
    fields = dict(
        speculative_algorithm="EAGLE3", speculative_eagle_topk=1, enable_multi_layer_eagle=False,
        speculative_adaptive=False, speculative_use_rejection_sampling=False, enable_dp_attention=False,
        pp_size=1, enable_two_batch_overlap=False, enable_pdmux=False, disaggregation_mode="null",
        speculative_disable_above_bs=None,
    )
    fields.update(overrides)
    return types.SimpleNamespace(**fields)


@pytest.mark.parametrize("overrides, reason", [
    ({}, None),
    ({"speculative_disable_above_bs": 0}, None),
    ({"speculative_algorithm": "NGRAM"}, "speculative algorithm NGRAM (EAGLE and EAGLE3 only)"),
    ({"speculative_eagle_topk": 4}, "--speculative-eagle-topk > 1"),
    ({"speculative_adaptive": True}, "--speculative-adaptive (this replaces its steps-0 tier)"),
    ({"enable_dp_attention": True}, "DP attention"),
    ({"pp_size": 2}, "pipeline parallelism"),
    ({"disaggregation_mode": "decode"}, "PD disaggregation"),
])
def test_server_start_refuses_what_the_core_does_not_support(core, overrides, reason):
    assert core.unsupported_reason(server_args(**overrides)) == reason
