"""bench/gpu/compare_outputs.py: the throughput and greedy-output summary of probe_dd.py results, and
its --logs fallback for a phase killed after its timed runs (2026-11-30: the 0.5.17 always-on phase
ran all 15 timed runs and was killed in its switch run, so results.jsonl never got it)."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def tool(bench_gpu_tool):
    return bench_gpu_tool("compare_outputs")


def run(c, tok_s, rep, outputs=None):
    r = {"concurrency": c, "requests": 1, "output_tokens": 128, "wall_s": 1.0, "tok_per_s": tok_s, "rep": rep}
    if outputs is not None:
        r["output_ids"] = outputs
    return r


def test_a_killed_phases_runs_come_from_its_log_and_join_the_ratio_table(tool, tmp_path, capsys):
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({"name": "adapt", "runs": [run(1, 450.0, 0, [[1, 2]]), run(1, 470.0, 1, [[1, 2]]),
                                                              run(64, 3600.0, 0), run(64, 3610.0, 1)]}) + "\n")
    log = tmp_path / "log-aon.txt"
    log.write_text(
        "[2026-11-30 02:41:27] Decode batch, #running-req: 64, accept len: 4.00\n"
        "[probe] RUN aon conc=1: {'concurrency': 1, 'requests': 3, 'output_tokens': 384, 'wall_s': 0.895, "
        "'tok_per_s': 429.0, 'spec_verify_ct': 96, 'accept_len': 4.0, 'rep': 0}\n"
        "[probe] RUN aon conc=1: {'concurrency': 1, 'requests': 3, 'output_tokens': 384, 'wall_s': 0.792, "
        "'tok_per_s': 500.0, 'spec_verify_ct': 96, 'accept_len': 4.0, 'rep': 1}\n"
        "[probe] RUN aon conc=64: {'concurrency': 64, 'requests': 64, 'output_tokens': 8192, 'wall_s': 0.8, "
        "'tok_per_s': 9000.0, 'spec_verify_ct': 2048, 'accept_len': 4.0, 'rep': 0}\n"
        "[probe] RUN aon conc=64: {'concurrency': 64, 'requests': 64, 'output_tokens': 8192, 'wall_s': 0.8, "
        "'tok_per_s': 10000.0, 'spec_verify_ct': 2048, 'accept_len': 4.0, 'rep': 1}\n"
        "[probe] RUN aon switch run: {'concurrency': 'switch64', 'requests': 64, 'output_tokens': 4160, "
        "'wall_s': 1.1, 'tok_per_s': 3800.2, 'spec_verify_ct': 1918, 'accept_len': 2.169}\n")
    assert {n: len(r["runs"]) for n, r in tool.runs_from_log(str(log)).items()} == {"aon": 5}

    tool.main([str(results), "adapt", "--better-of", "aon", "--logs", str(log)])
    out = capsys.readouterr().out
    assert f"(aon: tok/s from the RUN lines of {log}; its phase wrote no results)" in out
    assert "| 1 | 460.0 (450–470) | 464.5 (429–500) |" in out  # medians of adapt and aon
    # adapt / aon: 460 / 464.5 at C=1; 3605 / 9500 at C=64 (per rep 3600/9000 and 3610/10000)
    assert "| 1 | aon | 0.990 (0.940–1.049) | 1.000 (1.000–1.000) |" in out
    assert "| 64 | aon | 0.379 (0.361–0.400) | 1.000 (1.000–1.000) |" in out
    outputs_table = out.split("| config | concurrency | identical requests |")[1]
    assert "| aon |" not in outputs_table  # no output_ids in a log: nothing to compare


def test_a_reference_that_is_nowhere_is_a_one_line_error(tool, tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({"name": "adapt", "runs": [run(1, 450.0, 0)]}) + "\n")
    with pytest.raises(SystemExit, match="no configuration 'aon'"):
        tool.main([str(results), "aon"])


def test_mean_of_two_reference_engines(tool, tmp_path, capsys):
    results = tmp_path / "results.jsonl"
    rows = {"base": [200.0, 210.0, 205.0], "base2": [195.0, 196.0, 190.0], "dd": [198.0, 190.0, 199.0]}
    results.write_text("".join(json.dumps({"name": n, "runs": [run(1, v, r) for r, v in enumerate(vals)]}) + "\n"
                               for n, vals in rows.items()))
    tool.main([str(results), "base", "--mean-of", "base,base2"])
    out = capsys.readouterr().out
    # medians 205, 195 and 198; their reference mean 200
    assert "| 1 | 200.0 | 1.025 | 0.975 | 0.990 |" in out
    with pytest.raises(SystemExit, match="--mean-of: no configuration"):
        tool.main([str(results), "base", "--mean-of", "base,nope"])


def test_a_missing_results_file_or_log_is_a_one_line_error(tool, tmp_path):
    with pytest.raises(SystemExit, match="cannot read the results or a log"):
        tool.main([str(tmp_path / "nope.jsonl")])
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({"name": "base", "runs": [run(1, 450.0, 0)]}) + "\n")
    with pytest.raises(SystemExit, match="cannot read the results or a log"):
        tool.main([str(results), "--logs", str(tmp_path / "log-nope.txt")])


def test_c1_request_times_split_client_and_server(tool, tmp_path, capsys):
    results = tmp_path / "results.jsonl"
    base = dict(run(1, 200.0, 0), latency={"client_ms": [610.0, 640.0, 612.0], "server_e2e_ms": [600.0, 601.0, 602.0]})
    dd = dict(run(1, 195.0, 0), latency={"client_ms": [630.0, 631.0, 629.0], "server_e2e_ms": [620.0, 621.0, None]})
    old = run(1, 190.0, 0)  # a results file from before the request times: no row
    results.write_text("".join(json.dumps({"name": n, "runs": [r]}) + "\n"
                               for n, r in (("base", base), ("dd", dd), ("old", old))))
    tool.main([str(results), "base"])
    out = capsys.readouterr().out
    # base: the first request (610 / 600) apart; the others' medians 626 client, 601.5 server,
    # outside of (39, 10) = 24.5; slowest 640
    assert "| base | 3 | 626.0 | 601.5 | 24.5 | 610.0 | 600.0 | 640.0 |" in out
    # dd: a request without a server time (None) counts for the client only
    assert "| dd | 3 | 630.0 | 621.0 | 10.0 | 630.0 | 620.0 | 631.0 |" in out
    assert "| old |" not in out.split("C=1 per request")[1]
