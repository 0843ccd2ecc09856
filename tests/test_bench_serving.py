"""The serving benchmark (``spectrace bench --workload``) on the CPU: request kinds split by the
vocabulary (and the weight edit that gives each its own draft acceptance), the seeded arrival
schedule, streaming requests against the HTTP stand-in (tests/http_standin.py), and the
per-phase tables and the picture over time."""

from __future__ import annotations

import re

import pytest

from spectrace.bench import kinds


def test_the_kinds_split_the_vocabulary_into_disjoint_sets_inside_its_edges():
    split = kinds.split_vocabulary(1000, seed=3)
    assert split == kinds.split_vocabulary(1000, seed=3) != kinds.split_vocabulary(1000, seed=4)
    sets = [set(ids) for ids in split.sets.values()]
    assert list(split.sets) == ["accepted", "half", "never"]
    assert all(len(s) == len(sets[0]) and len(s) % 2 == 0 and len(s) > 300 for s in sets)
    assert not (sets[0] & sets[1]) and not (sets[1] & sets[2]) and not (sets[0] & sets[2])
    assert min(min(s) for s in sets) >= kinds.EDGE and max(max(s) for s in sets) < 1000 - kinds.EDGE
    with pytest.raises(ValueError, match="too small"):
        kinds.split_vocabulary(30)


def test_each_kinds_greedy_continuation_stays_in_its_set():
    split = kinds.split_vocabulary(1000, seed=0)
    source = kinds.target_rows(split, 1024)  # rows past the split (padding) keep their own
    assert sorted(source) == list(range(1024)) and source[1000:] == list(range(1000, 1024))
    for regime, ids in split.sets.items():
        for x in ids[:50]:
            walk = [x]
            for _ in range(6):
                walk.append(kinds.greedy_next(split, walk[-1]))
            assert all(source[y] == prev for prev, y in zip(walk, walk[1:]))  # the row that holds prev's embedding
            assert {split.regime_of(t) for t in walk} == {regime}
            if regime == "accepted":
                assert walk == [x] * 7
            elif regime == "half":
                assert walk[0::2] == [x] * 4 and walk[1] != x and walk[1::2] == [walk[1]] * 3
            else:  # no return within six steps: the draft's guess two positions on is always wrong
                assert len(set(walk)) == 7


def simulated_accept_length(target_head, draft_head, embed, prompt_token: int, steps: int = 3, verify_steps: int = 8):
    """Greedy decoding of the edited toy models as the dummy engine runs them (every layer adds
    nothing, so a position's hidden state is its token's embedding): the target's token is the
    argmax of its lm_head over the last token's embedding; the EAGLE-3 draft reads the hidden state
    of the position before the newest token and proposes the argmax of its lm_head over it at each
    of its steps. Tokens per verify step, bonus included."""
    import torch

    def argmax(head, token):
        return int(torch.argmax(head @ embed[token]))

    seq = [prompt_token, argmax(target_head, prompt_token)]
    accepted = 0
    for _ in range(verify_steps):
        proposal = [argmax(draft_head, seq[-2])] * steps
        truth = []
        for _ in range(steps + 1):
            truth.append(argmax(target_head, (seq + truth)[-1]))
        n = 0
        while n < steps and proposal[n] == truth[n]:
            n += 1
        seq += truth[:n + 1]
        accepted += n + 1
    return accepted / verify_steps, seq


def test_the_kinds_edit_gives_each_set_its_own_draft_acceptance(monkeypatch):
    torch = pytest.importorskip("torch")
    from bench_fakes import toy_llama

    from spectrace.bench import drafts

    torch.manual_seed(0)
    vocab, h = 240, 64
    monkeypatch.setenv(drafts.ENV_VOCAB, str(vocab))
    target, draft = toy_llama(h, vocab, draft=False), toy_llama(h, vocab, draft=True)
    line = drafts.edit_model(target, "kinds", "target")
    assert "mapped per set of a split of 240 tokens (72 accepted, 72 half, 72 never; seed 0)" in line
    drafts.edit_model(draft, "kinds", "draft")
    embed = target.model.embed_tokens.weight.detach()
    split = kinds.split_vocabulary(vocab, 0)
    assert torch.equal(target.lm_head.weight, embed[torch.tensor(kinds.target_rows(split, vocab))])
    heads = target.lm_head.weight.detach(), draft.lm_head.weight.detach()
    for regime, expected in (("accepted", 4.0), ("half", 2.0), ("never", 1.0)):
        for token in split.sets[regime][:10]:
            accept, seq = simulated_accept_length(*heads, embed, token)
            assert accept == expected, (regime, token)
            assert {split.regime_of(t) for t in seq} == {regime}


# --- the workload and its schedule -------------------------------------------------------------

import json
import random
from pathlib import Path
import statistics
import textwrap

import jsonschema
from click.testing import CliRunner

from spectrace.bench import serving_metrics, workload as wl
from spectrace.cli import main
from spectrace.errors import SpectraceError

from http_standin import StandInApi

WORKLOAD_TOML = textwrap.dedent("""\
    [workload]
    input_len = 8
    output_len = 12
    output_spread = 0.5
    turn_input_len = 4
    tpot_limit_ms = 1000
    seed = 5

    [[workload.kind]]
    name = "code"
    drafts = "accepted"

    [[workload.kind]]
    name = "chat"
    drafts = "half"

    [[workload.kind]]
    name = "prose"
    drafts = "never"

    [[workload.phase]]
    name = "quiet"
    duration_s = 1.0
    rate = 4
    mix = { code = 1, chat = 1, prose = 1 }

    [[workload.phase]]
    name = "busy"
    duration_s = 1.0
    rate = 20
    mix = { chat = 3, prose = 1 }
    turns = 2
    think_s = 0.1

    [[workload.phase]]
    name = "bursty"
    duration_s = 1.0
    rate = 10
    burstiness = 0.3
    mix = { code = 1 }
    """)


def workload_of(text: str, tmp_path) -> wl.Workload:
    path = tmp_path / "w.toml"
    path.write_text(text)
    return wl.workload_from_file(str(path))


def test_a_workload_file_is_read_into_phases_and_kinds(tmp_path):
    w = workload_of(WORKLOAD_TOML, tmp_path)
    assert [p.name for p in w.phases] == ["quiet", "busy", "bursty"] and w.duration_s == 3.0
    assert w.phases[1] == wl.Phase("busy", 1.0, 20.0, {"chat": 3.0, "prose": 1.0}, 1.0, 2, 0.1)
    assert [k.drafts for k in w.kinds] == ["accepted", "half", "never"] and w.tpot_limit_ms == 1000.0
    assert (w.phase_at(0.5), w.phase_at(1.0), w.phase_at(2.99), w.phase_at(7.0)) == ("quiet", "busy", "bursty", "bursty")


@pytest.mark.parametrize("change, message", [
    (("rate = 20", "rate = -1"), "rate and think_s at least 0"),
    (("mix = { code = 1 }", "mix = { code = 1, poetry = 2 }"), "mix must give kinds"),
    (('drafts = "half"', 'drafts = "sometimes"'), "drafts = one of accepted, half, never"),
    (("seed = 5", "seed = 5\nrate = 3"), "unknown keys ['rate']"),
    (("turns = 2", "turns = 0"), "turns at least 1"),
    (("output_spread = 0.5", "output_spread = 1.5"), "output_spread in [0, 1)"),
])
def test_a_wrong_workload_is_one_line_naming_the_key(tmp_path, change, message):
    with pytest.raises(SpectraceError, match=re.escape(message)):
        workload_of(WORKLOAD_TOML.replace(*change), tmp_path)


def test_the_schedule_is_seeded_and_the_same_for_every_configuration(tmp_path):
    w = workload_of(WORKLOAD_TOML, tmp_path)
    split = kinds.split_vocabulary(600)
    a, b = wl.build_schedule(w, split), wl.build_schedule(w, split)
    assert a == b and a != wl.build_schedule(workload_of(WORKLOAD_TOML.replace("seed = 5", "seed = 6"), tmp_path), split)
    assert [c.arrival_s for c in a] == sorted(c.arrival_s for c in a)
    for c in a:
        assert w.phase_at(c.arrival_s) == c.phase
        regime = {k.name: k.drafts for k in w.kinds}[c.kind]
        assert all(split.regime_of(t) == regime for turn in c.turns for t in turn.new_tokens)
        assert len(c.turns) == (2 if c.phase == "busy" else 1)
        assert all(6 <= t.output_len <= 18 for t in c.turns) and c.turns[0].think_s == 0
        assert [len(t.new_tokens) for t in c.turns] == [8, 4][:len(c.turns)]
    assert {c.kind for c in a if c.phase == "busy"} <= {"chat", "prose"}
    assert {c.kind for c in a if c.phase == "bursty"} == {"code"}


def test_arrivals_follow_each_phases_rate_and_burstiness():
    rng = random.Random(0)
    poisson = wl.arrival_times(wl.Phase("p", 2000.0, 5.0, {"a": 1}), 100.0, rng)
    bursty = wl.arrival_times(wl.Phase("b", 2000.0, 5.0, {"a": 1}, burstiness=0.25), 100.0, rng)
    assert 100.0 <= min(poisson) and max(poisson) < 2100.0
    for times in (poisson, bursty):
        assert len(times) / (5.0 * 2000) == pytest.approx(1.0, rel=0.05)
    def squared_cv(times):  # the gaps' squared coefficient of variation: 1 / burstiness for gamma gaps
        gaps = [b - a for a, b in zip(times, times[1:])]
        return statistics.pvariance(gaps) / statistics.fmean(gaps) ** 2
    assert squared_cv(poisson) == pytest.approx(1.0, rel=0.15)
    assert squared_cv(bursty) == pytest.approx(4.0, rel=0.15)
    assert wl.arrival_times(wl.Phase("pause", 10.0, 0.0, {}), 0.0, rng) == []


# --- what the records give ---------------------------------------------------------------------

def record(sent, chunks, phase="p", **meta):
    return {"conversation": 0, "turn": 0, "kind": "k", "phase": phase, "sent_s": sent, "prompt_len": 10,
            "chunks": chunks, "output_ids": [], "meta": meta, "error": None}


def test_a_requests_latencies_are_read_as_sglang_bench_serving_reads_them():
    # first token after 0.1 s, then a chunk of 3 tokens 0.3 s later and one of 1 token 0.1 s after that
    r = serving_metrics.request_times(record(1.0, [[0.1, 1], [0.4, 4], [0.5, 5]], completion_tokens=5,
                                             spec_verify_ct=2, spec_num_correct_drafts=2, cached_tokens=4))
    assert (r.ttft_s, r.e2e_s, r.tokens, r.end_s) == (0.1, 0.5, 5, 1.5)
    assert r.tpot_s == pytest.approx(0.1) and r.itls_s == pytest.approx((0.1, 0.1, 0.1, 0.1))
    assert (r.verify_steps, r.correct_drafts, r.plain_steps) == (2, 2, 0)
    plain = serving_metrics.request_times(record(0.0, [[0.1, 1], [0.2, 2], [0.3, 3]], completion_tokens=3))
    assert (plain.verify_steps, plain.plain_steps) == (0, 2)
    assert serving_metrics.request_times(dict(record(0.0, [[0.1, 1]]), error="HTTP 500")) is None
    assert serving_metrics.percentile([1, 2, 3, 4], 50) == 2.5 and serving_metrics.percentile([], 50) is None


def test_a_windows_goodput_and_throughput():
    records = [record(0.0, [[0.1, 1], [1.1, 11]], spec_verify_ct=5, spec_num_correct_drafts=5),  # TPOT 100 ms
               record(0.5, [[0.1, 1], [2.6, 11]]),  # TPOT 250 ms, 10 plain steps; tokens until 3.1 s
               dict(record(1.0, []), error="refused")]
    s = serving_metrics.summarize_requests(records, records, 0.0, 2.0, tpot_limit_ms=150)
    assert (s.requests, s.failed, s.good) == (3, 1, 1)
    assert s.tok_per_s == pytest.approx((1 + 10 + 1) / 2.0)  # the second request's last 10 came at 3.1 s
    assert s.spec_step_share == pytest.approx(5 / 15) and s.accept_len == 2.0
    assert s.tpot_ms[0] == pytest.approx(175.0)
    assert s.in_flight == pytest.approx((1.1 + 1.5) / 2.0)
    assert s.in_flight_ends == (0, 1)  # at 2.0 s only the second request is still streaming
    samples = [{"t_s": 0.5, "values": {"running": 2.0}}, {"t_s": 1.0, "values": {"running": 4.0}},
               {"t_s": 2.5, "values": {"running": 9.0}}, {"t_s": 1.5, "values": {}}]
    assert serving_metrics.mean_sampled(samples, "running", 0.0, 2.0) == 3.0
    assert serving_metrics.mean_sampled(samples, "running", 3.0, 4.0) is None


# --- end to end against the HTTP stand-in ------------------------------------------------------

def served_results(out) -> list[dict]:
    """Each configuration's result: bench.json points to its result-NAME.json for the request records."""
    data = json.loads((out / "bench.json").read_text())
    jsonschema.validate(data, json.loads((Path(__file__).resolve().parent.parent / "docs" / "schemas"
                                          / "bench.schema.json").read_text()))
    results = data["results"]
    assert all("requests" not in r["serving"] for r in results)
    return [json.loads((out / r["serving"]["requests_in"]).read_text()) for r in results]


@pytest.fixture
def kinds_standin(monkeypatch):
    """The stand-in's verify steps pass 4, 2 or 1 tokens by the prompt's vocabulary set."""
    split = kinds.split_vocabulary(600)
    by_regime = {"accepted": 4, "half": 2, "never": 1}
    monkeypatch.setattr(StandInApi, "accept", staticmethod(lambda prompt: by_regime[split.regime_of(prompt[0])]))
    return split


@pytest.mark.parametrize("incremental", [False, True], ids=["cumulative", "incremental"])
def test_a_serving_run_against_the_standin(server, tmp_path, kinds_standin, monkeypatch, incremental):
    monkeypatch.setattr(StandInApi, "incremental", incremental)
    (tmp_path / "w.toml").write_text(WORKLOAD_TOML)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--url", server, "--workload", str(tmp_path / "w.toml"),
                                    "--config", "a=", "--config", "b=", "--vocab-size", "600",
                                    "--better-of", "a,b", "--concurrency", "2", "-o", str(out)])
    assert res.exit_code == 0, res.output
    a, b = served_results(out)
    keys = [(x["conversation"], x["turn"]) for x in a["serving"]["requests"]]
    assert keys == [(x["conversation"], x["turn"]) for x in b["serving"]["requests"]] and len(keys) > 20
    assert not any(x["error"] for x in a["serving"]["requests"])
    later = [x for x in a["serving"]["requests"] if x["turn"] == 1]
    assert later and all(x["meta"]["cached_tokens"] > 8 for x in later)  # the first turn's prompt and output
    assert all(len(x["output_ids"]) == x["chunks"][-1][1] for x in a["serving"]["requests"])
    assert a["serving"]["samples"] and "running" in a["serving"]["samples"][0]["values"]
    md = (out / "bench.md").read_text()
    for name in ("**quiet**", "**busy**", "**bursty**", "**whole run**", "Against the better of a / b"):
        assert name in md
    whole = md.split("**whole run**")[1].splitlines()
    row_a = next(line.split("|") for line in whole if line.startswith("| a |"))
    assert row_a[2].strip() == f"{len(keys)} (0)"
    in_flight, running = (float(x) for x in row_a[4].split("/"))  # the client's and the server's (sampled)
    assert in_flight > 0 and running >= 0
    rows = {tuple(c.strip() for c in line.strip("|").split("|")[:3]): line.split("|")
            for line in md.splitlines() if line.startswith("| a | ")}
    accept = {kind: float(rows[("a", kind, "first")][5]) for kind in ("code (accepted)", "chat (half)", "prose (never)")}
    # a request's last verify step passes only the tokens left: a little below the stand-in's 4 and 2
    assert 3 < accept["code (accepted)"] <= 4 and 1.5 < accept["chat (half)"] <= 2 and accept["prose (never)"] == 1
    assert rows[("a", "chat (half)", "later")][7].strip() != "0 %"  # cached prompt tokens
    assert rows[("a", "code (accepted)", "first")][7].strip() == "0 %"
    row_b = next(line for line in md.splitlines() if line.startswith("| b | stand-in |"))
    assert f"| {len(keys)}/{len(keys)} |" in row_b  # greedy outputs equal turn by turn
    assert (out / "bench.png").stat().st_size > 0


def test_a_workload_needs_the_kinds_regime_and_runs_once_per_engine(tmp_path):
    (tmp_path / "w.toml").write_text(WORKLOAD_TOML)
    res = CliRunner().invoke(main, ["bench", "--workload", str(tmp_path / "w.toml"), "--config", "a=",
                                    "--dummy-model", "small", "-o", str(tmp_path / "out")])
    assert res.exit_code == 2 and "needs --drafts kinds in every configuration (not in a)" in res.output
    res = CliRunner().invoke(main, ["bench", "--workload", str(tmp_path / "w.toml"), "--config", "a=",
                                    "--reps", "2", "--profile", "-o", str(tmp_path / "out")])
    assert res.exit_code == 2 and "once per engine: --reps, --profile belong to the concurrency sweep" in res.output


def test_a_configs_files_workload_table_is_the_default_workload(server, tmp_path, kinds_standin):
    path = tmp_path / "serving.toml"
    path.write_text('[defaults]\nvocab_size = 600\nconcurrency = 2\n\n[[config]]\nname = "a"\nargs = ""\n\n'
                    + WORKLOAD_TOML.replace("duration_s = 1.0", "duration_s = 0.4"))
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--url", server, "--configs", str(path), "--no-plot", "-o", str(out)])
    assert res.exit_code == 0, res.output
    (a,) = served_results(out)
    assert a["serving"]["requests"] and not a.get("runs")


def test_a_workload_starts_a_server_per_configuration(tmp_path, monkeypatch):
    """Without --url a workload runs against `sglang.launch_server` per configuration (here the
    stand-in's), as --server does."""
    import os
    import socket
    import sys

    from bench_fakes import fake_sglang

    record = tmp_path / "server-record.json"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(fake_sglang(tmp_path, record=record))] + sys.path))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (tmp_path / "w.toml").write_text(WORKLOAD_TOML.replace("duration_s = 1.0", "duration_s = 0.3"))
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--workload", str(tmp_path / "w.toml"), "--port", str(port),
                                    "--config", "a=--enable-metrics", "--vocab-size", "600", "--concurrency", "2",
                                    "--no-plot", "--timeout", "60", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads(record.read_text())["argv"] == ["--enable-metrics", "--port", str(port)]
    (a,) = served_results(out)
    assert a["serving"]["requests"] and not any(x["error"] for x in a["serving"]["requests"])
    assert (out / "server-a.log").exists()


def test_the_gpu_serving_workload_has_every_phase_and_kind_it_names():
    from pathlib import Path

    from spectrace.bench import config

    path = Path(__file__).parent.parent / "bench" / "gpu" / "serving-0.5.17.toml"
    configs, defaults = config.load_config_file(str(path))
    assert defaults["drafts"] == "kinds" and defaults["dummy_model"] == "8b"
    names = {"baseline", "always-on", "adaptive", "core", "core-plain", "core-full", "tiers"}
    assert {c["name"] for c in configs} == names
    w = wl.workload_from_file(str(path))
    schedule = wl.build_schedule(w, kinds.split_vocabulary(128256))
    by_phase = {p.name: [c for c in schedule if c.phase == p.name] for p in w.phases}
    assert all(by_phase.values()) and {c.kind for c in schedule} == {k.name for k in w.kinds}
    conversations = [p for p in w.phases if p.turns > 1]  # the busy phase: its second turns hit the cache
    assert conversations and all(len(c.turns) == p.turns for p in conversations for c in by_phase[p.name])
    longest = max(sum(len(t.new_tokens) + t.output_len for t in c.turns) for c in schedule)
    assert longest < 4096  # the dummy engines' --context-length


def test_the_kinds_regime_tells_the_engine_the_range_the_bench_splits(monkeypatch):
    from spectrace.bench import drafts, lifecycle

    monkeypatch.setenv(drafts.ENV_VOCAB, "99")  # inherited from a parent: must not leak
    common = {"drafts": "kinds", "catalog": None, "value_sample": None, "vocab_size": 128256}
    env = lifecycle.engine_environment({"name": "x"}, "off", None, common)
    assert env[drafts.ENV_DRAFTS] == "kinds" and env[drafts.ENV_VOCAB] == "128256"
    env = lifecycle.engine_environment({"name": "y", "drafts": "accepted"}, "off", None, common)
    assert drafts.ENV_VOCAB not in env


def test_the_whole_runs_throughput_spans_each_configurations_own_run(tmp_path):
    from spectrace.bench import serving_tables

    w = workload_of(WORKLOAD_TOML, tmp_path)
    fast = {"name": "fast", "serving": {"requests": [record(0.5, [[0.1, 1], [1.5, 31]], phase="quiet")]}}
    slow = {"name": "slow", "serving": {"requests": [record(0.5, [[0.1, 1], [5.5, 31]], phase="quiet")]}}
    spans = serving_tables.windows(w, [fast, slow])
    assert spans[-1] == ("whole run", 0.0, 6.0)
    tok = {r["name"]: serving_tables.window_summaries(w, r, spans)["whole run"].tok_per_s for r in (fast, slow)}
    assert tok == {"fast": pytest.approx(31 / 3.0), "slow": pytest.approx(31 / 6.0)}  # the schedule's 3 s, or the last token's time


def test_a_phase_whose_arrivals_outrun_the_server_is_named_with_its_queue(tmp_path):
    from spectrace.bench import serving_tables

    w = workload_of(WORKLOAD_TOML, tmp_path)
    quiet = w.phases[0]
    # 20 requests sent in the first phase: one server finishes each within 30 ms, the other only
    # after the phase has ended
    keeps_up = [record(0.04 * i, [[0.02, 1], [0.03, 2]], phase=quiet.name) for i in range(20)]
    falls_behind = [record(0.04 * i, [[0.05, 1], [quiet.duration_s + 5.0, 2]], phase=quiet.name) for i in range(20)]
    results = [{"name": "keeps-up", "serving": {"requests": keeps_up}},
               {"name": "falls-behind", "serving": {"requests": falls_behind}}]
    md = serving_tables.render_serving(results, w, reference="keeps-up", better=[])
    queued = [line for line in md.splitlines() if line.startswith("Requests in flight at this phase's start")]
    assert queued == ["Requests in flight at this phase's start -> end: falls-behind 0 -> 20: its arrivals "
                      "outran the server, and the next phases inherit the queue."]
