"""The dynamic-disable series' own policy code, run on the CPU: the module the series adds (its
source, patches/dynamic-disable/src/<version>/, which the patches are generated from) with its
switching rule and its server-start refusals exercised; the edits of SGLang's own files read from
the shipped patches applied to real SGLang source.

The module needs torch and one SGLang enum at import time (everything else is imported inside the
functions that run on the GPU), so those two are stubbed.
"""

from __future__ import annotations

import collections
import importlib.util
import sys
import types
from pathlib import Path

import pytest


MODULE_FILE = "sglang/srt/speculative/dynamic_disable.py"
SRC = Path(__file__).resolve().parent.parent / "patches/dynamic-disable/src"


@pytest.fixture(params=["0.5.12", "0.5.9"])
def version(request):
    return request.param


@pytest.fixture
def patched_tree(version, patched_release):
    """A copy of the real SGLang tree with the shipped series applied (one per run, read-only)."""
    return patched_release(version)


def load_module(path: Path, monkeypatch, name="dynamic_disable_under_test"):
    """A dynamic_disable module imported with torch and one enum stubbed."""
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    spec_info = types.ModuleType("sglang.srt.speculative.spec_info")
    spec_info.SpeculativeAlgorithm = types.SimpleNamespace(NONE="NONE")
    monkeypatch.setitem(sys.modules, "sglang.srt.speculative.spec_info", spec_info)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def patched(version, monkeypatch):
    """The series' dynamic_disable module for ``version``, from its source (the patch adds these bytes)."""
    return load_module(SRC / version / MODULE_FILE.removeprefix("sglang/srt/"), monkeypatch)


def server_args(**overrides):
    """The ServerArgs fields the refusal reads, at the values of a verified EAGLE-3 spec-v2 server."""
    fields = dict(
        speculative_algorithm="EAGLE3", disable_overlap_schedule=False, speculative_eagle_topk=1,
        speculative_adaptive=False, enable_dp_attention=False, pp_size=1, enable_two_batch_overlap=False,
        enable_pdmux=False, disaggregation_mode="null", speculative_enable_below_bs=16,
        speculative_disable_above_bs=24, attention_backend="triton", page_size=1, tp_size=1,
    )
    fields.update(overrides)
    return types.SimpleNamespace(**fields)


def test_load_rule_switches_with_hysteresis_and_only_at_step_boundaries(patched):
    c = patched.SpecDisableController(disable_above_bs=24, enable_below_bs=16)
    decisions = [c.decide(bs) for bs in (1, 8, 30, 64, 20, 17, 16, 15, 20, 24, 25)]
    # on until the batch exceeds 24; off inside the band 16..24; on again only below 16
    assert decisions == [False, False, True, True, True, True, True, False, False, False, True]
    assert c.num_switches == 3
    assert (c.steps_on, c.steps_off) == (5, 6)
    assert c.reason.startswith("load: batch size 25 > 24")


def test_accept_rule_turns_speculation_off_and_probes_again(patched):
    c = patched.SpecDisableController(disable_above_bs=1000, enable_below_bs=900, min_accept_len=1.5,
                                      probe_interval=5, probe_steps=2, warmup_steps=3)
    for _ in range(3):  # three speculative steps whose drafts were all rejected (accept length 1.0)
        assert c.decide(4) is False
        c.observe([0, 0, 0, 0])
    assert c.decide(4) is True and c.reason.startswith("accept length 1.00 < 1.5")
    offs = [c.decide(4) for _ in range(3)]
    assert offs == [True, True, True]
    # the fifth disabled step starts a probe of probe_steps speculative steps, then off again
    assert [c.decide(4) for _ in range(3)] == [False, False, True]
    # a good accept length during the probe keeps speculation on
    c2 = patched.SpecDisableController(disable_above_bs=1000, enable_below_bs=900, min_accept_len=1.5,
                                       warmup_steps=3)
    for _ in range(4):
        assert c2.decide(2) is False
        c2.observe([3, 3])  # accept length 4.0
    assert c2.decide(2) is False


def test_observe_ignores_disabled_steps_and_resynchronises(patched):
    c = patched.SpecDisableController(disable_above_bs=2, enable_below_bs=2, min_accept_len=1.5, warmup_steps=1)
    c.decide(8)  # disabled by load
    c.observe([0] * 8)
    assert c.accept_obs == 0, "a disabled step has no draft to judge"
    c.decide(1)
    c.observe([0, 0, 0])  # wrong size: out of step, dropped
    assert c.accept_obs == 0 and not c.pending


class FakeClock:
    """The host clock of the measured load rule: each step advances it by that step's cost."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def run_steps(c, clock, bs, steps, accept, step_ms):
    """Decide `steps` decode steps at batch size bs; each takes step_ms(disabled, bs) and,
    when speculative, accepts `accept` tokens per request (bonus included)."""
    decided = []
    for _ in range(steps):
        disabled = c.decide(bs)
        clock.now += step_ms(disabled, bs) / 1e3
        c.observe([0 if disabled else accept - 1] * bs)
        decided.append(disabled)
    return decided


def h200_like(disabled, bs):
    """Step costs shaped like the H200 measurements of the 0.5.12 draft modes (docs/patch-design.md
    section 5; 8B + EAGLE-3, 4 draft tokens): a speculative step costs 1.8 + 0.024 * bs plain steps."""
    return 10.0 if disabled else 10.0 * (1.8 + 0.024 * bs)


def test_measured_rule_speculates_under_load_while_it_pays(patched):
    clock = FakeClock()
    c = patched.SpecDisableController(disable_above_bs=24, enable_below_bs=16, min_accept_len=1.5,
                                      warmup_steps=2, probe_steps=6, explore_after=4,
                                      probe_interval=1000, rule="measured", clock=clock)
    # bs 1, accept 4: speculation on; after a short probe of plain steps both costs are known
    run_steps(c, clock, 1, 40, 4, h200_like)
    assert c.costs.cost(True, 1) == pytest.approx(0.010) and c.costs.cost(False, 1) == pytest.approx(0.01824)
    assert c.gain == pytest.approx(4 / 1.824) and not c.disabled
    # bs 64 (the static rule's threshold is 24): a probe shows speculation still pays (4 / 3.34)
    late = run_steps(c, clock, 64, 60, 4, h200_like)[-30:]
    assert late == [False] * 30 and c.reason.startswith("measured: speculation 1.20x plain")
    # bs 128: it no longer pays (4 / 4.87): plain decoding
    late = run_steps(c, clock, 128, 60, 4, h200_like)[-30:]
    assert late == [True] * 30 and c.reason.startswith("measured: speculation 0.82x plain")
    # back at bs 64, the drafts stop being accepted: speculation stops as soon as the accept
    # average no longer pays for the measured cost (it is not updated while off)
    late = run_steps(c, clock, 64, 60, 1, h200_like)[-20:]
    assert late == [True] * 20 and c.reason.startswith("measured:")
    assert c.gain < 0.97 and c.accept_ema < 1.8 + 0.024 * 64  # the measured cost ratio


def test_measured_rule_never_probes_speculation_where_a_smaller_batch_already_loses(patched):
    """Drafts that are rarely accepted (1.2 tokens per step, above the accept cap): once plain
    decoding wins at a small batch, larger batches are not probed (the cost ratio grows with
    the batch)."""
    clock = FakeClock()
    c = patched.SpecDisableController(disable_above_bs=24, enable_below_bs=16, min_accept_len=1.5,
                                      warmup_steps=2, probe_steps=6, explore_after=4,
                                      probe_interval=1000, rule="measured", clock=clock)
    run_steps(c, clock, 1, 40, 1.2, h200_like)
    assert c.costs.gain(1, c.accept_ema) == pytest.approx(1.2 / 1.824)
    before = c.steps_on
    assert run_steps(c, clock, 64, 50, 1.2, h200_like) == [True] * 50
    assert c.steps_on == before and c.reason.endswith("accept length 1.20")
    assert "(measured at bs<=1)" in c.reason


def test_measured_rule_spends_no_speculative_step_on_drafts_that_cannot_gain(patched):
    """Drafts that are never accepted (the dummy EAGLE-3 draft, accept length 1.0): a speculative
    step costs no less than a plain one, so speculation gains at most the accept length, inside
    the band. After the warm-up no bucket is explored; each bucket runs speculative steps only
    at its re-measurement, after probe_interval steps, which measures both costs."""
    clock = FakeClock()
    c = patched.SpecDisableController(disable_above_bs=24, enable_below_bs=16, min_accept_len=1.5,
                                      warmup_steps=2, probe_steps=6, explore_after=4,
                                      probe_interval=100, rule="measured", clock=clock)
    start = run_steps(c, clock, 1, 99, 1, h200_like)
    assert start[:2] == [False, False] and start[2:] == [True] * 97  # the warm-up, then plain only
    assert c.reason == "accept length 1.00: speculation gains at most that at batch size 1"
    assert c.costs.cost(False, 1) is None  # speculation's cost was never measured
    assert run_steps(c, clock, 64, 50, 1, h200_like) == [True] * 50  # nor at bs 64
    assert c.steps_on == 2
    # bs 1's 100th step (the warm-up's steps count): the re-measurement, 6 speculative steps,
    # measures both costs there, and the verdict comes from them from then on
    again = run_steps(c, clock, 1, 20, 1, h200_like)
    assert again == [False] * 6 + [True] * 14
    assert c.costs.gain(1, c.accept_ema) == pytest.approx(1 / 1.824)
    assert c.reason.startswith("measured: speculation 0.55x plain tokens/s at batch size 1")
    # the cap needs the mode to be off already: it never turns speculation off by itself
    on = patched.SpecDisableController(disable_above_bs=24, enable_below_bs=16, min_accept_len=0,
                                       warmup_steps=2, probe_steps=6, explore_after=4,
                                       probe_interval=100, rule="measured", clock=FakeClock())
    assert run_steps(on, on.clock, 1, 3, 1, h200_like) == [False] * 3


def test_measured_rule_does_not_probe_plain_steps_where_bounds_show_speculation_wins(patched):
    """Accepted drafts: once bs 1 has both costs, bs 4 and 16 need no plain-step probe (their
    speculative step costs at most 2.2 plain steps of bs 1, and a plain step costs no less at a
    larger batch); bs 64, where the bound (1.2x) is inside the slack, is still measured."""
    clock = FakeClock()
    c = patched.SpecDisableController(disable_above_bs=24, enable_below_bs=16, min_accept_len=1.5,
                                      warmup_steps=2, probe_steps=6, explore_after=4,
                                      probe_interval=1000, rule="measured", clock=clock)
    run_steps(c, clock, 1, 40, 4, h200_like)
    plain_steps = c.steps_off
    assert run_steps(c, clock, 4, 40, 4, h200_like) == [False] * 40
    assert run_steps(c, clock, 16, 40, 4, h200_like) == [False] * 40
    assert c.steps_off == plain_steps and c.costs.cost(True, 16) is None
    assert "(bounded by the step costs at other batch sizes)" in c.reason
    run_steps(c, clock, 64, 60, 4, h200_like)
    assert c.costs.cost(True, 64) is not None and c.costs.cost(False, 64) is not None


def bench_schedule(reps=3, out_len=128):
    """The decode steps of a run at C=1,4,16,64,128 with three repetitions, in order: its two
    warm-ups (2 and 128 requests, 16 tokens), then each repetition's concurrencies in turn, C=1 as
    three requests one after another. Yields (repetition, C, batch size, decode steps)."""
    yield "warm-up", 2, 2, 15
    yield "warm-up", 128, 128, 15
    for rep in range(reps):
        for conc in (1, 4, 16, 64, 128):
            for _ in range(3 if conc == 1 else 1):
                yield rep, conc, conc, out_len - 1


def test_dummy_drafts_in_the_benchs_schedule_pay_for_one_measurement_and_it_is_not_in_the_median(patched):
    """The server's defaults, drafts never accepted, the GPU A/B's phase: after the warm-up's
    speculative steps (which learn the accept length) the only speculative steps are one
    re-measurement at bs<=1, 512 steps in, in repetition 1's C=1 run. Repetitions 0 and 2 run
    plain only, so the median of the three C=1 runs holds no measurement (without the accept cap,
    repetition 0 also explored speculation's cost at bs<=1: 8 more speculative steps)."""
    clock = FakeClock()
    c = patched.SpecDisableController(disable_above_bs=24, enable_below_bs=16, min_accept_len=1.5,
                                      rule="measured", clock=clock)
    spec_steps = collections.Counter()
    for rep, conc, bs, steps in bench_schedule():
        c.note_other_step()  # the prefill before the decode steps
        spec_steps[rep, conc] += run_steps(c, clock, bs, steps, 1, h200_like).count(False)
    assert spec_steps["warm-up", 2] == 8 and spec_steps["warm-up", 128] == 0
    measured = {key: n for key, n in spec_steps.items() if key[0] != "warm-up" and n}
    assert measured == {(1, 1): 8}
    assert c.costs.gain(1, c.accept_ema) < 0.6 and c.disabled


def _runs_of(decisions, disabled):
    """How many runs of consecutive steps in this mode the decisions hold."""
    return sum(1 for i, d in enumerate(decisions) if d == disabled and (i == 0 or decisions[i - 1] != d))


def test_measured_rule_measures_a_steady_verdict_less_often_and_a_changed_one_soon(patched):
    """Re-measurement backs off: drafts never accepted at bs 1, plain decoding wins, and every
    re-measurement (probe_steps speculative steps) confirms it, so the interval doubles each
    time (50, 100, 200, 400, then the cap of 8 x 50).  When the drafts start to be accepted,
    the next probe flips the verdict, and the interval is back at 50 steps."""
    clock = FakeClock()
    c = patched.SpecDisableController(disable_above_bs=24, enable_below_bs=16, min_accept_len=1.5,
                                      warmup_steps=2, probe_steps=4, explore_after=4,
                                      probe_interval=50, rule="measured", clock=clock,
                                      max_probe_backoff=8)
    # the warm-up, the accept cap's verdict (plain wins) and, after 50 steps, the first
    # re-measurement, which confirms it and backs off already
    first = run_steps(c, clock, 1, 60, 1, h200_like)
    assert _runs_of(first, False) == 2 and c.bucket_interval[1] == 2 * 50
    assert c.disabled and c.costs.gain(1, c.accept_ema) < 0.6
    steady = run_steps(c, clock, 1, 2000, 1, h200_like)
    # without backoff: 2000 / 54 = 37 probes; with it: 100, 200, then 400s
    assert _runs_of(steady, False) == pytest.approx(6, abs=1)
    assert c.bucket_interval[1] == 8 * 50
    # the drafts are accepted now: the next probe (within the capped interval) sees it, and
    # speculation comes back on with the interval back at 50 steps
    for _ in range(8 * 50 + 20):
        run_steps(c, clock, 1, 1, 4, h200_like)
        if not c.disabled and not c.reason.startswith("probe"):
            break
    assert not c.disabled and c.bucket_interval[1] == 50
    # and the new verdict is measured again (a plain-step probe) after 50 steps, not 400
    assert True in run_steps(c, clock, 1, 50 + 10, 4, h200_like)


def test_step_cost_bounds_settle_a_bucket_only_outside_the_slack(patched):
    costs = patched.StepCosts(min_samples=1)

    def measured(disabled, bucket, seconds):
        costs.ema[(disabled, bucket)] = seconds
        costs.count[(disabled, bucket)] = 1

    measured(True, 1, 0.010)   # plain step at bs<=1
    measured(False, 8, 0.020)  # speculative step at bs<=8
    # bs<=4: plain costs >= 10 ms, speculative <= 20 ms: gain >= accept / 2
    assert costs.verdict(4, 4.0) == (pytest.approx(2.0), costs.BOUNDED)
    assert costs.verdict(4, 2.5) == (None, 0)  # 1.25: inside the band widened by the slack
    measured(True, 8, 0.011)   # bs<=8 has both costs now, but it neither loses below nor wins above
    measured(False, 2, 0.030)  # (a bucket with both costs that loses below 4 would be borrowed)
    # bs<=4 with drafts never accepted: plain <= 11 ms, speculative >= 30 ms: gain <= 0.37
    gain, at = costs.verdict(4, 1.0)
    assert at == costs.BOUNDED and gain == pytest.approx(0.011 / 0.030)


def test_step_cost_samples_skip_switches_prefills_and_idle_gaps(patched):
    costs = patched.StepCosts(min_samples=1)
    assert [costs.bucket(b) for b in (1, 2, 3, 4, 5, 64, 65)] == [1, 2, 4, 4, 8, 64, 128]

    def step(now, disabled, bs):
        costs.record(now, bs)
        costs.decided(now, disabled, bs)

    for i in range(4):  # three equal decisions before the fourth: one sample (10 ms)
        step(i * 0.010, False, 8)
    assert costs.count[(False, 8)] == 1 and costs.cost(False, 8) == pytest.approx(0.010)
    step(0.040, True, 8)  # a switch: it closes one more sample of the speculative steps
    assert costs.count[(False, 8)] == 2
    step(0.050, True, 8)  # and the plain ones wait for three equal decisions
    step(0.060, True, 8)
    assert costs.count[(True, 8)] == 0
    costs.history.clear()  # what note_other_step does after a prefill
    for t in (0.2, 0.21, 0.22):
        step(t, True, 8)
    assert costs.count[(True, 8)] == 0
    step(0.23, True, 8)
    step(0.24, True, 7)  # the batch changed (a request finished): no sample
    assert costs.count[(True, 8)] == 1
    for t in (0.30, 0.31, 0.32, 0.33):
        step(t, False, 8)
    step(0.50, False, 8)  # 170 ms after a 10 ms average: an idle gap, dropped
    assert costs.count[(False, 8)] == 3 and costs.cost(False, 8) == pytest.approx(0.010)


def test_load_rule_argument_and_its_tp_fallback(patched):
    assert patched.load_rule(server_args()) == "measured"
    assert patched.unsupported_reason(server_args(speculative_disable_load_rule="static")) is None
    reason = patched.unsupported_reason(server_args(speculative_disable_load_rule="fast"))
    assert "--speculative-disable-load-rule must be one of measured, static" in reason
    # ranks time their own steps: with tp > 1 they could disagree, so the static rule decides
    rule = patched.SpecDisableRuntime._load_rule
    assert rule(server_args(tp_size=2, speculative_disable_load_rule="measured")) == "static"
    assert rule(server_args(tp_size=1, speculative_disable_load_rule="measured")) == "measured"


@pytest.mark.parametrize("overrides, reason", [
    ({"speculative_algorithm": None}, "needs speculative decoding"),
    ({"disable_overlap_schedule": True}, "v1 worker"),
    ({"speculative_eagle_topk": 4}, "topk 1"),
    ({"speculative_adaptive": True}, "--speculative-adaptive"),
    ({"pp_size": 2}, "pipeline parallelism"),
    ({"speculative_enable_below_bs": 40}, "hysteresis"),
    ({"attention_backend": "fa3"}, "not verified with attention backend fa3"),
    ({"tp_size": 2}, "not verified with tp size 2"),
    ({"speculative_algorithm": "STANDALONE"}, "not verified with speculative algorithm STANDALONE"),
])
def test_server_start_refuses_what_was_not_verified(patched, monkeypatch, overrides, reason):
    monkeypatch.delenv(patched.ALLOW_UNVERIFIED_ENV, raising=False)
    assert patched.unsupported_reason(server_args()) is None
    found = patched.unsupported_reason(server_args(**overrides))
    assert found is not None and reason in found


def test_unverified_modes_can_be_allowed_but_unsupported_ones_cannot(patched, monkeypatch):
    monkeypatch.setenv(patched.ALLOW_UNVERIFIED_ENV, "1")
    assert patched.unsupported_reason(server_args(attention_backend="fa3", tp_size=2)) is None
    assert "v1 worker" in patched.unsupported_reason(server_args(disable_overlap_schedule=True))


def _init_of(project, class_qn):
    import ast

    module = project.module_of(class_qn)
    tree = ast.parse(project.file_bytes(module.module))
    name = class_qn.rsplit(".", 1)[-1]
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name)
    return cls, next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)


def test_every_spec_v2_worker_subclass_gets_the_disable_runtime(patched_tree):
    """A subclass whose own __init__ never runs EAGLEWorkerV2.__init__ (0.5.9/0.5.12's
    StandaloneWorkerV2) must still read ``spec_disable`` (the patched forward_batch_generation
    does on every step) and must build the runtime when the flag is on.  The H200 run of
    2026-11-29 found the first version of the series raising AttributeError there."""
    import ast

    from spectrace.source import from_path
    from spectrace.tracer.project import Project

    project = Project(from_path(patched_tree))  # the index cache: summaries by file content
    base = "sglang.srt.speculative.eagle_worker_v2.EAGLEWorkerV2"
    base_cls, _ = _init_of(project, base)
    class_level = {t.id for n in base_cls.body if isinstance(n, ast.Assign) for t in n.targets
                   if isinstance(t, ast.Name)}
    assert "spec_disable" in class_level  # the default every subclass inherits
    subclasses = project.subclasses(base)
    assert "sglang.srt.speculative.standalone_worker_v2.StandaloneWorkerV2" in subclasses
    for qn in subclasses:
        _, init = _init_of(project, qn)
        if init is None:
            continue  # inherits EAGLEWorkerV2.__init__, which calls _init_spec_disable
        calls = {ast.unparse(c.func) for c in ast.walk(init) if isinstance(c, ast.Call)}
        if not any(c.endswith("__init__") for c in calls):
            assert "self._init_spec_disable" in calls, f"{qn}.__init__ never builds the disable runtime"


@pytest.mark.parametrize("version", ["0.5.12"])  # 0.5.9: the skip variable only
def test_draft_mode_is_a_server_argument_with_catchup_as_default(patched, patched_tree, monkeypatch):
    import ast

    for var in (patched.SKIP_DRAFT_ENV, patched.LAZY_DRAFT_LOGITS_ENV):
        monkeypatch.delenv(var, raising=False)
    # the patched ServerArgs: a dataclass field defaulting to catchup and a CLI flag with the module's choices
    source = (patched_tree / "sglang/srt/server_args.py").read_text()
    tree = ast.parse(source)
    field = next(n for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)
                 and getattr(n.target, "id", None) == "speculative_disable_draft")
    assert ast.literal_eval(field.value) == "catchup"
    flag = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.args
                and isinstance(n.args[0], ast.Constant) and n.args[0].value == "--speculative-disable-draft")
    choices = next(k.value for k in flag.keywords if k.arg == "choices")
    assert tuple(ast.literal_eval(choices)) == patched.DRAFT_MODES == ("exact", "lazy", "skip", "catchup")

    assert patched.draft_mode(server_args()) == "catchup"  # a ServerArgs without the field (older pickles)
    assert patched.draft_mode(server_args(speculative_disable_draft="skip")) == "skip"
    assert patched.unsupported_reason(server_args(speculative_disable_draft="exact")) is None
    reason = patched.unsupported_reason(server_args(speculative_disable_draft="fast"))
    assert "--speculative-disable-draft must be one of exact, lazy, skip, catchup" in reason
    # the variables of the recorded GPU commands still mean what they meant then
    monkeypatch.setenv(patched.LAZY_DRAFT_LOGITS_ENV, "0")
    assert patched.draft_mode(server_args(speculative_disable_draft="lazy")) == "exact"
    monkeypatch.setenv(patched.SKIP_DRAFT_ENV, "1")
    assert patched.draft_mode(server_args(speculative_disable_draft="lazy")) == "skip"


@pytest.mark.parametrize("version", ["0.5.12"])  # 0.5.9 has no catch-up mode
def test_catch_up_window_tracks_skipped_positions_per_request(patched):
    """Draft mode catchup: which draft KV positions each request skipped, where the device
    buffers keep them ((slot, k)), and when to catch up."""
    window = patched.CatchUpWindow(3, capacity=2)
    rows, rids = [5, 9], ["a", "b"]
    assert window.append(rows, rids, [100, 40]) == [(0, 0), (1, 0)]
    assert window.append(rows, rids, [101, 41]) == [(0, 1), (1, 1)]
    assert not window.full(rows)
    # the batch's requests with skipped positions: (index in the batch, row, first, count, slot)
    # (current lengths: the skipped positions end right before them)
    assert window.pending(rows, rids, [102, 42]) == [(0, 5, 100, 2, 0), (1, 9, 40, 2, 1)]
    assert window.append(rows, rids, [102, 42]) == [(0, 2), (1, 2)]
    assert window.full(rows)  # the disabled step catches the batch up now
    window.clear(rows)
    assert window.pending(rows, rids, [103, 43]) == [] and not window.full(rows)

    # a finished request's row reused by another request: its old positions are not caught up
    window.append([5], ["a"], [103])
    assert window.pending([5], ["c"], [8]) == [] and 5 not in window.rows  # dropped, slot freed
    window.append([5], ["a"], [103])
    assert window.append([5], ["c"], [7]) == [(window.rows[5][3], 0)]
    assert window.pending([5], ["c"], [8]) == [(0, 5, 7, 1, window.rows[5][3])]
    # a gap (a retracted request prefilled again) starts the row over, in the same slot
    slot = window.rows[5][3]
    assert window.append([5], ["c"], [20]) == [(slot, 0)]

    # two slots: a third request gets the slot of a row that left the batch, else none
    window.append([9], ["b"], [43])
    assert window.append([9, 11], ["b", "d"], [44, 60]) == [(window.rows[9][3], 1), (slot, 0)]
    assert 5 not in window.rows  # row 5 was not in this batch: its slot went to row 11
    assert window.append([9, 11, 12], ["b", "d", "e"], [45, 61, 3])[2] is None  # stays stale
    assert [p[1] for p in window.pending([9, 11, 12], ["b", "d", "e"], [46, 62, 4])] == [9, 11]
    # a retracted request prefilled again, now shorter: its old positions are not caught up
    assert window.pending([9], ["b"], [30]) == [] and 9 not in window.rows
    with pytest.raises(ValueError):
        patched.CatchUpWindow(0, capacity=4)

    # a full window whose KV was written for all but each request's last position: only that
    # last position is pending, and the window fills again from it
    window = patched.CatchUpWindow(3, capacity=2)
    for k in range(3):
        window.append([5], ["a"], [100 + k])
    assert window.full([5])
    window.keep_last([5])
    assert window.pending([5], ["a"], [103]) == [(0, 5, 102, 1, window.rows[5][3])]
    assert not window.full([5])
    assert window.append([5], ["a"], [103]) == [(window.rows[5][3], 1)]
    # what the KV-only flush writes: every pending position but each request's last (rows,
    # slots, ks, positions), and where each request's last one is (slots, ks)
    written, last = patched.CatchUpWindow.kv_only_plan([(0, 5, 100, 3, 0), (1, 9, 40, 2, 1)])
    assert written == [[5, 5, 9], [0, 0, 1], [0, 1, 0], [100, 101, 40]]
    assert last == [[0, 1], [2, 1]]

    # a prefill while speculation is off: each request's last prompt position pending, in a slot
    # of its own, all or nothing and from free slots only; decoding then continues the entry
    window = patched.CatchUpWindow(4, capacity=3)
    window.append([1], ["run"], [50])  # a running request holds one slot
    assert not window.reserve([2, 3, 4], ["x", "y", "z"], [9, 19, 29])  # needs 3, 2 are free
    assert set(window.rows) == {1}
    assert window.reserve([2, 3], ["x", "y"], [9, 19])
    assert window.pending([1, 2, 3], ["run", "x", "y"], [51, 10, 20]) == [
        (0, 1, 50, 1, window.rows[1][3]), (1, 2, 9, 1, window.rows[2][3]), (2, 3, 19, 1, window.rows[3][3])]
    assert window.append([2], ["x"], [10]) == [(window.rows[2][3], 1)]
    # the flat extend rows of requests with 3, 1 and 2 new tokens (prefixes 0, 5, 10): the KV of
    # rows 0, 1 and 4 (positions 0, 1, 10) is written; rows 2, 3 and 5 are each request's last
    assert patched.prefill_kv_only_plan([3, 1, 2], [0, 5, 10]) == ([0, 1, 4], [0, 1, 10], [2, 3, 5])


def _method(tree_root, rel_path, class_name, method):
    import ast

    tree = ast.parse((tree_root / rel_path).read_text())
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == class_name)
    return next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == method)


@pytest.mark.parametrize("version", ["0.5.12"])  # 0.5.9 has no catch-up mode
def test_the_kv_only_catch_up_computes_what_the_eagle3_draft_layer_computes(patched_tree):
    """_write_draft_kv re-states the part of the real EAGLE-3 draft forward that the KV depends
    on. Checked against that SGLang tree's source: the input layer's branch of
    LlamaDecoderLayer.forward (norms, then the concatenation), LlamaModel.forward's fc path,
    LlamaAttention.forward_prepare_native (qkv, split, rope), RadixAttention's view of k and v
    and the pool's set_kv_buffer. A change to any of them must show up here, not as a draft
    KV that silently differs."""
    import ast

    eagle3 = "sglang/srt/models/llama_eagle3.py"
    layer_fwd = _method(patched_tree, eagle3, "LlamaDecoderLayer", "forward")
    branch = next(n for n in ast.walk(layer_fwd) if isinstance(n, ast.If)
                  and ast.unparse(n.test) == "self.is_input_layer")
    assert [ast.unparse(stmt) for stmt in branch.body] == [
        "residual = hidden_states",
        "hidden_states = self.hidden_norm(hidden_states)",
        "embeds = self.input_layernorm(embeds)",
        "hidden_states = torch.cat([embeds, hidden_states], dim=-1)",
    ]
    model_fwd = ast.unparse(_method(patched_tree, eagle3, "LlamaModel", "forward"))
    assert "hidden_states = forward_batch.spec_info.hidden_states" in model_fwd
    assert ("chunks = hidden_states.chunk(self.num_aux_hidden_states, dim=-1)" in model_fwd
            and "hidden_states = self.fc(hidden_states)" in model_fwd)
    prepare = _method(patched_tree, "sglang/srt/models/llama.py", "LlamaAttention", "forward_prepare_native")
    assert [ast.unparse(stmt) for stmt in prepare.body] == [
        "qkv, _ = self.qkv_proj(hidden_states)",
        "q, k, v = qkv.split([self.q_size, self.kv_size, self.kv_size], dim=-1)",
        "q, k = self.rotary_emb(positions, q, k)",
        "return (q, k, v)",
    ]
    radix = ast.unparse(_method(patched_tree, "sglang/srt/layers/radix_attention.py", "RadixAttention", "forward"))
    assert "k = k.view(-1, self.tp_k_head_num, self.qk_head_dim)" in radix
    assert "v = v.view(-1, self.tp_v_head_num, self.v_head_dim)" in radix
    # the prefill extend's draft input at a position is the next token (prefill_kv_only_plan)
    prefill = ast.unparse(_method(patched_tree, "sglang/srt/speculative/eagle_worker_v2.py",
                                  "EagleDraftWorker", "_draft_extend_for_prefill"))
    assert "torch.cat((input_ids[1:], next_token_ids[i].reshape(1)))" in prefill
    assert "hidden_states=target_hidden_states" in prefill
    set_kv = _method(patched_tree, "sglang/srt/mem_cache/memory_pool.py", "MHATokenToKVPool", "set_kv_buffer")
    assert [a.arg for a in set_kv.args.args[:5]] == ["self", "layer", "loc", "cache_k", "cache_v"]
    # and the series' replica uses exactly those steps, in that order
    replica = ast.unparse(_method(patched_tree, MODULE_FILE, "SpecDisableRuntime", "_write_draft_kv"))
    steps = ["model.embed_tokens(input_ids)", "model.fc(hidden)", "layer.hidden_norm(hidden)",
             "layer.input_layernorm(embeds)", "torch.cat([embeds, hidden], dim=-1)",
             "forward_prepare_native(positions=positions, hidden_states=x)",
             "k.view(-1, attn.tp_k_head_num, attn.qk_head_dim)"]
    at = [replica.find(step) for step in steps]
    assert -1 not in at and at == sorted(at), dict(zip(steps, at))


@pytest.mark.parametrize("version", ["0.5.12"])  # 0.5.9 has no catch-up mode
def test_a_prefill_offers_the_draft_step_to_the_runtime_after_the_target_and_before_the_draft(patched_tree):
    """prefill_draft needs the target's hidden states and sampled tokens, and replaces the whole
    draft extend only when it returns a next_draft_input: in the patched worker it sits between
    the target prefill and _draft_extend_for_prefill, and returns the target's result."""
    import ast

    fbg = _method(patched_tree, "sglang/srt/speculative/eagle_worker_v2.py", "EAGLEWorkerV2",
                  "forward_batch_generation")
    extend_branch = fbg.body[0].body  # if <extend>: ...
    text = [ast.unparse(stmt) for stmt in extend_branch]
    target = next(i for i, t in enumerate(text) if "self.target_worker.forward_batch_generation(" in t)
    offer = next(i for i, t in enumerate(text) if "self.spec_disable.prefill_draft(" in t)
    draft = next(i for i, t in enumerate(text) if "_draft_extend_for_prefill(" in t)
    assert target < offer < draft
    assert "batch_output.next_draft_input = next_draft_input" in text[offer]
    assert "return batch_output" in text[offer]


def _dataclass_fields(tree_root, rel_path, class_name):
    import ast

    tree = ast.parse((tree_root / rel_path).read_text())
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == class_name)
    return {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}


def test_the_disabled_step_builds_sglang_objects_only_with_fields_they_have(patched_tree):
    """The GPU-only code of the series (the disabled step, lazy logits, the catch-up extend)
    constructs EagleDraftInput and GenerationBatchResult and copies ModelWorkerBatch with
    dataclasses.replace: every keyword must be a field of the real class in that SGLang tree,
    or the first disabled step on a GPU fails with a TypeError."""
    import ast

    module = ast.parse((patched_tree / MODULE_FILE).read_text())
    fields = {
        "EagleDraftInput": _dataclass_fields(patched_tree, "sglang/srt/speculative/eagle_info.py", "EagleDraftInput"),
        "GenerationBatchResult": _dataclass_fields(patched_tree, "sglang/srt/managers/utils.py", "GenerationBatchResult"),
        "replace": _dataclass_fields(patched_tree, "sglang/srt/managers/schedule_batch.py", "ModelWorkerBatch"),
    }
    checked = set()
    for call in (n for n in ast.walk(module) if isinstance(n, ast.Call)):
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in fields:
            continue
        unknown = {k.arg for k in call.keywords if k.arg} - fields[name]
        assert not unknown, f"line {call.lineno}: {name}() has no field(s) {sorted(unknown)}"
        checked.add(name)
    assert {"EagleDraftInput", "GenerationBatchResult"} <= checked
    if any(isinstance(n, ast.ClassDef) and n.name == "CatchUpWindow" for n in module.body):
        assert "replace" in checked  # the catch-up extend's ModelWorkerBatch copy


@pytest.mark.parametrize("version", ["0.5.12"])  # 0.5.9: the decode log only
def test_the_mode_reaches_sglangs_metrics(patched_tree):
    """--enable-metrics: the scheduler copies the worker's spec_disable_metrics() into two
    SchedulerStats fields, which the collector publishes as gauges (checked on the patched
    source: a field or a gauge missing there fails only on a GPU server with metrics on)."""
    import ast

    collector = ast.parse((patched_tree / "sglang/srt/observability/metrics_collector.py").read_text())
    stats_fields = _dataclass_fields(patched_tree, "sglang/srt/observability/metrics_collector.py", "SchedulerStats")
    assert {"spec_disabled", "spec_disabled_step_fraction"} <= stats_fields
    gauges = {ast.unparse(n.targets[0]): next(k.value.value for k in n.value.keywords if k.arg == "name")
              for n in ast.walk(collector) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
              and ast.unparse(n.value.func) == "Gauge"}
    assert gauges["self.spec_disabled"] == "sglang:spec_disabled"
    assert gauges["self.spec_disabled_step_fraction"] == "sglang:spec_disabled_step_fraction"
    logged = {ast.unparse(n) for n in ast.walk(collector) if isinstance(n, ast.Call)
              and ast.unparse(n.func) == "self._log_gauge"}
    for field in ("spec_disabled", "spec_disabled_step_fraction"):
        assert f"self._log_gauge(self.{field}, stats.{field})" in logged

    mixin = (patched_tree / "sglang/srt/observability/scheduler_metrics_mixin.py").read_text()
    assigned = {ast.unparse(t) for n in ast.walk(ast.parse(mixin)) if isinstance(n, ast.Assign)
                for t in (n.targets[0].elts if isinstance(n.targets[0], ast.Tuple) else n.targets)}
    assert {"self.stats.spec_disabled", "self.stats.spec_disabled_step_fraction"} <= assigned
    worker = ast.parse((patched_tree / "sglang/srt/speculative/eagle_worker_v2.py").read_text())
    assert any(isinstance(n, ast.FunctionDef) and n.name == "spec_disable_metrics" for n in ast.walk(worker))


@pytest.mark.parametrize("version", ["0.5.12"])
def test_metrics_report_the_share_of_plain_steps_since_the_last_report(patched):
    c = patched.SpecDisableController(disable_above_bs=24, enable_below_bs=16)
    assert c.metrics() == (0, 0.0)  # no decode step yet
    for bs in (1, 1, 30, 30):  # two speculative steps, two plain ones
        c.decide(bs)
    assert c.metrics() == (1, 0.5)
    for bs in (30, 30, 30, 10):  # three more plain ones, then speculation again
        c.decide(bs)
    assert c.metrics() == (0, 0.75)


def _draft_tp_withs(node):
    """The with-statements under ``node`` that enter draft_tp_context(...) as a plain with-item
    (not under an if-expression that can choose another context)."""
    import ast

    return [w for w in ast.walk(node) if isinstance(w, (ast.With, ast.AsyncWith)) and any(
        isinstance(i.context_expr, ast.Call) and ast.unparse(i.context_expr.func).endswith("draft_tp_context")
        for i in w.items)]


def test_nothing_run_inside_the_draft_tp_context_enters_it_again(patched_tree):
    """SGLang's patch_tensor_parallel_group asserts that it is not entered twice.  Every call the
    patched EAGLEWorkerV2 makes inside ``with draft_tp_context(...)`` is followed through the
    tracer's call graph (within sglang.srt.speculative); none of the functions it reaches may
    enter draft_tp_context unconditionally.  The first version of the catch-up mode did, from
    before_speculative_step."""
    import ast

    from spectrace.source import from_path
    from spectrace.tracer.graph import call_graph
    from spectrace.tracer.project import Project

    project = Project(from_path(patched_tree))  # the index cache: summaries by file content
    worker_module = "sglang.srt.speculative.eagle_worker_v2"
    caller = f"{worker_module}.EAGLEWorkerV2.forward_batch_generation"
    functions = {}  # module -> {first line: FunctionDef}, each module parsed once

    def function_at(module, line):
        if module not in functions:
            functions[module] = {n.lineno: n for n in ast.walk(ast.parse(project.file_bytes(module)))
                                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return functions[module].get(line)

    fbg = function_at(worker_module, project.func(caller).line)
    inside = {n.lineno for w in _draft_tp_withs(fbg) for stmt in w.body for n in ast.walk(stmt)
              if isinstance(n, ast.Call)}
    roots = sorted({t for call in project.calls(caller) if call.line in inside and not call.external
                    for t in call.targets})
    assert "sglang.srt.speculative.eagle_worker_v2.EagleDraftWorker.draft" in roots
    if "def before_speculative_step" in (patched_tree / MODULE_FILE).read_text():  # 0.5.12
        assert "sglang.srt.speculative.dynamic_disable.SpecDisableRuntime.before_speculative_step" in roots
    reached = call_graph(project, roots, depth=3, include=("sglang.srt.speculative.*",))
    assert len(reached) > len(roots)  # the graph is followed, not only its roots
    offenders = {}
    for qualname in reached.nodes:
        if reached.nodes[qualname].get("kind") in ("external", "unresolved"):
            continue
        module = project.module_of(qualname)
        info = project.func(qualname)
        if module is None or info is None:
            continue
        fn = function_at(module.module, info.line)
        if fn is not None and _draft_tp_withs(fn):
            offenders[qualname] = [w.lineno for w in _draft_tp_withs(fn)]
    assert not offenders, f"entered again inside draft_tp_context: {offenders}"


@pytest.mark.parametrize("version", ["0.5.12"])  # 0.5.9 has no KV-only prefill
def test_every_whole_prefill_extend_captures_each_requests_last_hidden_state(patched_tree):
    """_draft_extend_for_prefill returns the batch's captured hidden states as the draft input's:
    EAGLEWorkerV2 sets the capture mode to LAST before calling it, and so must the series' KV
    check, which calls it on the target's batch (capture mode FULL there: a hidden state for every
    prompt position, which the future map cannot store; it failed on the GPU so, 2026-11-30)."""
    import ast

    def assignments_before_the_extend(func):
        calls = [n for n in ast.walk(func) if isinstance(n, ast.Call)
                 and ast.unparse(n.func).endswith("._draft_extend_for_prefill")]
        assert calls, ast.unparse(func)[:200]
        first = min(c.lineno for c in calls)
        return [ast.unparse(n) for n in ast.walk(func) if isinstance(n, ast.Assign)
                and n.lineno < first and ast.unparse(n.targets[0]).endswith(".capture_hidden_mode")]

    upstream = _method(patched_tree, "sglang/srt/speculative/eagle_worker_v2.py", "EAGLEWorkerV2",
                       "forward_batch_generation")
    assert "model_worker_batch.capture_hidden_mode = draft_capture_mode" in assignments_before_the_extend(upstream)
    check = _method(patched_tree, MODULE_FILE, "SpecDisableRuntime", "_check_prefill_kv_only")
    assert assignments_before_the_extend(check) == ["batch.capture_hidden_mode = CaptureHiddenMode.LAST"]


# -- SpecDisableRuntime (0.5.12) on the CPU: its decisions, with fakes for the worker and for the
# SGLang modules it imports.  Paths that allocate or launch (the disabled step itself, catch-up
# buffers, the deferred top-k) need torch and a GPU and are left to the GPU tests.

class _Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, *args):
        self.calls.append(args)


@pytest.fixture
def runtime_env(patched, monkeypatch):
    """The 0.5.12 module plus stubs of what SpecDisableRuntime imports; returns (module, make)."""
    fbi = types.ModuleType("sglang.srt.model_executor.forward_batch_info")
    fbi.CaptureHiddenMode = types.SimpleNamespace(NULL="NULL", FULL="FULL", LAST="LAST")
    kernels = types.ModuleType("sglang.srt.speculative.dynamic_disable_kernels")
    kernels.warm_up = _Recorder()
    eagle_info = types.ModuleType("sglang.srt.speculative.eagle_info")
    eagle_info.EagleDraftInput = types.SimpleNamespace(hidden_size_for=lambda dw: 4096, dtype_for=lambda dw: "bf16")
    logits = types.ModuleType("sglang.srt.layers.logits_processor")
    logits.LogitsProcessor = type("LogitsProcessor", (), {})
    for module in (fbi, kernels, eagle_info, logits):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    for var in (patched.SKIP_DRAFT_ENV, patched.LAZY_DRAFT_LOGITS_ENV, "SGLANG_SPEC_DISABLE_DECODE_GRAPH"):
        monkeypatch.delenv(var, raising=False)

    def make(standalone=False, draft_model=None, **overrides):
        runner = types.SimpleNamespace(init_new_workspace="original", attn_backend="spec-backend", graph_runner="spec-graphs")

        def backend(init_new_workspace):
            runner.init_new_workspace = init_new_workspace  # SGLang's does this; the runtime restores it
            return "decode-backend"

        runner._get_attention_backend = backend
        worker = types.SimpleNamespace(
            device="cpu",
            speculative_algorithm=types.SimpleNamespace(is_standalone=lambda: standalone),
            target_worker=types.SimpleNamespace(model_runner=runner),
            draft_worker=types.SimpleNamespace(draft_runner=types.SimpleNamespace(model=draft_model or object())),
            req_to_token_pool=types.SimpleNamespace(req_to_token="req_to_token"),
        )
        fields = dict(speculative_disable_below_accept_len=1.5, disable_cuda_graph=True,
                      speculative_disable_draft="exact", speculative_disable_load_rule="static")
        fields.update(overrides)
        return patched.SpecDisableRuntime(worker, server_args(**fields)), worker, kernels.warm_up

    return patched, make, logits.LogitsProcessor


def _batch(bs, mode="decode", **fields):
    forward_mode = types.SimpleNamespace(is_idle=lambda: mode == "idle", is_decode=lambda: mode == "decode")
    values = dict(seq_lens=[7] * bs, forward_mode=forward_mode, return_logprob=False, has_grammar=False, reqs=None)
    values.update(fields)
    return types.SimpleNamespace(**values)


@pytest.mark.parametrize("version", ["0.5.12"])
def test_the_runtime_starts_with_a_second_attention_backend_and_warms_its_kernels(runtime_env):
    module, make, _ = runtime_env
    runtime, worker, warm_up = make()
    runner = worker.target_worker.model_runner
    assert runtime.decode_attn_backend == "decode-backend" and runner.init_new_workspace == "original"
    assert runtime.decode_graph_runner is None  # --disable-cuda-graph: eager plain decode
    assert (runtime.draft_mode, runtime.catch_up, runtime.skip_draft, runtime.lazy_draft_logits) == ("exact", None, False, False)
    assert runtime.target_hidden_mode == "FULL"
    assert warm_up.calls == [("cpu", 1, 4096, "bf16", "req_to_token", None)]
    c = runtime.controller
    assert (c.rule, c.disable_above_bs, c.enable_below_bs, c.min_accept_len) == ("static", 24, 16, 1.5)
    assert make(speculative_disable_load_rule="measured")[0].controller.rule == "measured"
    assert make(speculative_disable_load_rule="measured", tp_size=2)[0].controller.rule == "static"


@pytest.mark.parametrize("version", ["0.5.12"])
def test_the_runtime_falls_back_to_draft_modes_the_draft_model_can_run(runtime_env):
    module, make, logits_processor = runtime_env
    runtime, _, warm_up = make(standalone=True, speculative_disable_draft="catchup")
    # catch-up feeds target hidden states to an EAGLE draft; a standalone draft gets lazy, and a
    # draft model without a LogitsProcessor to defer then gets exact
    assert (runtime.draft_mode, runtime.catch_up, runtime.lazy_draft_logits) == ("lazy", None, False)
    assert runtime.target_hidden_mode == "NULL" and warm_up.calls[0][2:4] == (None, None)
    model = types.SimpleNamespace(logits_processor=logits_processor())
    assert make(draft_model=model, speculative_disable_draft="lazy")[0].lazy_draft_logits is True
    assert make(draft_model=model, speculative_disable_draft="skip")[0].skip_draft is True


@pytest.mark.parametrize("version", ["0.5.12"])
def test_the_runtime_speculates_where_the_output_path_needs_verify_results(runtime_env):
    module, make, _ = runtime_env
    runtime, _, _ = make()
    others = _Recorder()
    runtime.controller.note_other_step = others
    assert runtime.should_disable(_batch(0, mode="idle")) is False
    assert len(others.calls) == 1 and not runtime.controller.pending  # an idle step is not a decode step
    for fields in (dict(return_logprob=True), dict(has_grammar=True),
                   dict(reqs=[types.SimpleNamespace(), types.SimpleNamespace(return_hidden_states=True)])):
        assert runtime.should_disable(_batch(40, **fields)) is False  # above disable_above_bs, still speculative
    assert list(runtime.controller.pending) == [(False, 40)] * 3 and len(others.calls) == 4
    assert runtime.controller.steps_on == runtime.controller.steps_off == 0  # forced steps are not decisions
    assert [runtime.should_disable(_batch(bs)) for bs in (30, 20, 15)] == [True, True, False]
    assert runtime.metrics() == (0, 2 / 3)
    assert runtime.status().startswith("spec: on (batch size 15 < 16), spec steps on/off: 1/2")


@pytest.mark.parametrize("version", ["0.5.12"])
def test_the_runtime_feeds_verify_results_to_the_accept_length_rule(runtime_env, monkeypatch):
    module, make, _ = runtime_env
    monkeypatch.setenv("SGLANG_SPEC_DISABLE_WARMUP_STEPS", "3")
    runtime, _, _ = make()
    assert runtime.controller.warmup_steps == 3
    for _ in range(3):
        assert runtime.should_disable(_batch(2)) is False
        runtime.on_verify_complete_cpu([0, 0])  # accept length 1.0 < 1.5
    assert runtime.controller.accept_ema == 1.0 and runtime.controller.accept_obs == 3
    assert runtime.should_disable(_batch(2)) is True and "accept length 1.00 < 1.5" in runtime.status()
    runtime.on_verify_complete_cpu([0, 0])  # a disabled step's result says nothing about drafts
    assert runtime.controller.accept_obs == 3


@pytest.mark.parametrize("version", ["0.5.12"])
def test_the_plain_decode_target_swaps_backend_and_graphs_and_always_restores_them(runtime_env):
    module, make, _ = runtime_env
    runtime, worker, _ = make()
    runner = worker.target_worker.model_runner
    with runtime._plain_decode_target():
        assert (runner.attn_backend, runner.graph_runner) == ("decode-backend", None)
    with pytest.raises(RuntimeError), runtime._plain_decode_target():
        raise RuntimeError("step failed")
    assert (runner.attn_backend, runner.graph_runner) == ("spec-backend", "spec-graphs")


@pytest.mark.parametrize("version", ["0.5.12"])
def test_before_a_speculative_step_nothing_runs_unless_a_lazy_top_k_is_outstanding(runtime_env):
    module, make, _ = runtime_env
    runtime, _, _ = make()
    batch = _batch(3, spec_info=None)  # spec_info None: any read of the draft input would fail
    assert runtime.before_speculative_step(batch) is None
    runtime._lazy_outstanding = True
    runtime.before_speculative_step(_batch(3, mode="extend", spec_info=None))  # only a decode step resolves it
    assert runtime._lazy_outstanding is True
