"""``spectrace bench`` on the CPU: configuration parsing, prompts, the HTTP driver end to end
against a local stand-in of SGLang's HTTP API (tests/http_standin.py: ``/generate`` with token
ids, ``/flush_cache``, ``/get_server_info``, ``/metrics``), the ``--server`` process handling, and the json /
markdown / plot outputs."""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import textwrap
import time
from pathlib import Path

import click
import jsonschema
import pytest
from click.testing import CliRunner

from spectrace.bench import config, drivers, gauges, lifecycle, models, prompts, steady, tables
from spectrace.cli import main
from spectrace.errors import SpectraceError

from bench_fakes import fake_sglang
from http_standin import StandInApi

ROOT = Path(__file__).resolve().parent.parent


def test_prompts_are_the_same_for_every_configuration():
    a = prompts.prompts_for(16, 16, 128, 32000, seed=1)
    assert a == prompts.prompts_for(16, 16, 128, 32000, seed=1)
    assert a != prompts.prompts_for(32, 16, 128, 32000, seed=1)
    assert all(len(p) == 128 and 10 <= min(p) and max(p) < 32000 - 10 for p in a)


def test_config_parsing(tmp_path):
    assert config.parse_config_option("eagle=--speculative-algorithm EAGLE3 --x=1") == {
        "name": "eagle", "args": "--speculative-algorithm EAGLE3 --x=1"}
    assert config.parse_config_option("baseline=") == {"name": "baseline", "args": ""}
    with pytest.raises(SpectraceError):
        config.parse_config_option("no-equals-sign")
    f = tmp_path / "c.toml"
    f.write_text('[defaults]\nargs = "--a 1"\n[[config]]\nname = "x"\nargs = "--b"\nshims = "warn"\n')
    configs, defaults = config.load_config_file(str(f))
    assert configs == [{"name": "x", "args": "--b", "shims": "warn"}] and defaults == {"args": "--a 1"}
    (tmp_path / "bad.json").write_text('{"configs": [{"args": "--b"}]}')
    with pytest.raises(SpectraceError, match="name"):
        config.load_config_file(str(tmp_path / "bad.json"))


def test_default_flags_follow_the_version_but_user_flags_do_not():
    known = {"--model-path", "--cuda-graph-max-bs-decode", "--tp-size"}
    argv = ["--model-path", "m", "--cuda-graph-max-bs", "8", "--disable-piecewise-cuda-graph", "--tp-size", "2"]
    out, dropped = drivers.known_flags_only(argv, known, user_flags=set())
    assert out == ["--model-path", "m", "--cuda-graph-max-bs-decode", "8", "--tp-size", "2"]
    assert dropped == ["--disable-piecewise-cuda-graph"]
    out, _ = drivers.known_flags_only(["--my-flag", "3"], known, user_flags={"--my-flag"})
    assert out == ["--my-flag", "3"]  # SGLang's own parser reports the user's unknown flag
    # argparse takes a unique prefix as the flag it starts: a default "--tp 2" is --tp-size 2
    both = known | {"--cuda-graph-bs"}
    out, dropped = drivers.known_flags_only(["--tp", "2", "--cuda-graph", "1"], both, user_flags=set())
    assert out == ["--tp", "2"] and dropped == ["--cuda-graph"]  # it starts two known flags


def test_the_configuration_table_names_the_default_flags_an_engine_ran_without():
    result = {"name": "core", "sglang": "0.5.17", "runs": [], "dropped_default_flags": ["--tp"]}
    lines = tables._configuration_table([result], "core")
    assert lines[-1].startswith("|  ↳ core ran without --tp (unknown to SGLang 0.5.17) |")


def test_bench_against_a_running_server(server, tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--url", server, "--config", "a=", "--config", "b=",
                                    "--concurrency", "1,4", "--input-len", "8", "--output-len", "5",
                                    "--seq-reps", "2", "--vocab-size", "500", "-o", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads((out / "bench.json").read_text())
    jsonschema.validate(data, json.loads((ROOT / "docs" / "schemas" / "bench.schema.json").read_text()))
    a, b = data["results"]
    runs = {r["concurrency"]: r for r in a["runs"]}
    assert runs[1]["requests"] == 2 and runs[4]["requests"] == 4
    assert runs[4]["output_tokens"] == 20 and runs[4]["accept_len"] == 2.5
    assert runs[4]["pool_before"]["token_free"] == runs[4]["pool_after"]["token_free"] == 1000
    # the same prompts in both configurations: the stand-in's greedy outputs agree
    assert a["runs"][1]["output_ids"] == b["runs"][1]["output_ids"]
    md = (out / "bench.md").read_text()
    assert "| 4 |" in md and "6/6" in md  # 2 + 4 requests equal to the reference
    assert (out / "bench.png").stat().st_size > 0


def record_engine_starts(monkeypatch, stop_at: int | None = None) -> list[str]:
    """The names each engine is started under, in order; with ``stop_at``, the bench is stopped
    (as by SIGTERM) when that engine starts."""
    real_run_config = lifecycle.run_config
    started: list[str] = []

    def recorded(cfg, common, out, log):
        started.append(cfg["name"])
        if len(started) == stop_at:
            raise SystemExit(128 + 15)
        return real_run_config(cfg, common, out, log)

    monkeypatch.setattr(lifecycle, "run_config", recorded)
    return started


def test_a_bench_stopped_between_configurations_keeps_the_finished_ones_table(server, tmp_path, monkeypatch):
    """The GPU scripts stop a bench at their time budget (`timeout` sends SIGTERM, which the bench
    turns into SystemExit): bench.json and bench.md must already hold every finished configuration,
    and say which did not run."""
    started = record_engine_starts(monkeypatch, stop_at=3)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--url", server, "--config", "baseline=", "--config", "patched=",
                                    "--config", "baseline2=", "--config", "patched2=", "--concurrency", "1",
                                    "--input-len", "8", "--output-len", "5", "--seq-reps", "2", "--vocab-size", "500",
                                    "--reps", "2", "--mean-of", "baseline,baseline2", "--no-plot", "-o", str(out)])
    assert res.exit_code == 143 and started == ["baseline", "patched", "baseline2"]
    data = json.loads((out / "bench.json").read_text())
    assert [r["name"] for r in data["results"]] == ["baseline", "patched"]
    assert data["pending"] == ["baseline2", "patched2"]
    assert [run["rep"] for run in data["results"][1]["runs"]] == [0, 1]
    md = (out / "bench.md").read_text()
    assert md.startswith("Partial: configurations not run yet: baseline2, patched2.")
    row = next(line for line in md.splitlines() if line.startswith("| 1 |"))
    assert row.count(" | ") == 2 and "-" not in row.split("|")[2]  # both finished engines have a median
    lines = md.splitlines()
    at = lines.index("Ratio to the mean of the medians of baseline and baseline2 at each C:")
    # no ratio without baseline2's median: the table has its header and no row
    assert lines[at + 2].startswith("| C | mean tok/s |") and lines[at + 4] == ""


def bench_counting_requests(server, out, *options):
    """A small bench (C=1, 4) against the stand-in: the generate requests it sent, bench.json, bench.md."""
    from http_standin import StandInApi

    before = StandInApi.calls["generate"]
    res = CliRunner().invoke(main, ["bench", "--url", server, "--config", "a=", "--concurrency", "1,4",
                                    "--input-len", "8", "--output-len", "5", "--seq-reps", "2",
                                    "--vocab-size", "500", "--no-plot", *options, "-o", str(out)])
    assert res.exit_code == 0, res.output
    return (StandInApi.calls["generate"] - before, json.loads((out / "bench.json").read_text()),
            (out / "bench.md").read_text())


def test_each_run_is_warmed_after_the_pool_checks_flush_without_changing_its_prompts(server, tmp_path):
    warm_calls, warm, warm_md = bench_counting_requests(server, tmp_path / "warm", "--warmup")
    cold_calls, cold, _ = bench_counting_requests(server, tmp_path / "cold", "--no-warmup")
    # timed: 2 + 4 requests; after each flush one untimed request per slot: 1 + 4
    assert cold_calls == 2 + 4 + 1 + 4
    # the engine's warm-up on top: 2 requests, then max(concurrency) = 4
    assert warm_calls - cold_calls == 2 + 4
    # the timed runs got the same prompts, so the same outputs and counts
    assert [r["output_ids"] for r in warm["results"][0]["runs"]] == [r["output_ids"] for r in cold["results"][0]["runs"]]
    assert "one untimed request of its concurrency (32 tokens)" in warm_md


def test_repetitions_get_new_prompts_and_the_tables_show_medians(server, tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--url", server, "--config", "base=", "--config", "spec=",
                                    "--concurrency", "1,4", "--input-len", "8", "--output-len", "5",
                                    "--seq-reps", "2", "--vocab-size", "500", "--reps", "3",
                                    "--better-of", "base,spec", "--reference", "base", "-o", str(out)])
    assert res.exit_code == 0, res.output
    base, spec = json.loads((out / "bench.json").read_text())["results"]
    # the concurrency list in turn, three times; each repetition its own prompts, so its own
    # outputs (the stand-in's output depends on the prompt)
    assert [(r["concurrency"], r["rep"]) for r in base["runs"]] == [(1, 0), (4, 0), (1, 1), (4, 1), (1, 2), (4, 2)]
    at4 = [r["output_ids"] for r in base["runs"] if r["concurrency"] == 4]
    assert at4[0] != at4[1] != at4[2]
    # repetition 0 keeps the prompts of a single-repetition run
    single = tmp_path / "single"
    CliRunner().invoke(main, ["bench", "--url", server, "--config", "base=", "--concurrency", "1,4",
                              "--input-len", "8", "--output-len", "5", "--seq-reps", "2",
                              "--vocab-size", "500", "--no-plot", "-o", str(single)])
    one = json.loads((single / "bench.json").read_text())["results"][0]["runs"]
    assert one[1]["output_ids"] == at4[0]
    md = (out / "bench.md").read_text()
    assert "median of 3 repetitions" in md
    # greedy pairs repetition r with repetition r: all 18 requests equal
    assert "18/18" in md
    table = md.split("Ratio to the better of base / spec")[1]
    row4 = next(line for line in table.splitlines() if line.startswith("| 4 |"))
    cells = [c.strip() for c in row4.strip("|").split("|")]
    best = cells[1]
    assert best in ("base", "spec")
    assert cells[2 + ["base", "spec"].index(best)].startswith("1.000")
    tok = {r["name"]: sorted(x["tok_per_s"] for x in r["runs"] if x["concurrency"] == 4) for r in (base, spec)}
    other = "spec" if best == "base" else "base"
    assert float(cells[2 + ["base", "spec"].index(other)].split()[0]) == pytest.approx(
        tok[other][1] / tok[best][1], abs=1e-3)


def test_the_dynamic_disable_gauges_are_read_after_each_run(server, tmp_path, monkeypatch):
    """A server with --enable-metrics and the series applied publishes sglang:spec_disabled and
    sglang:spec_disabled_step_fraction (patch 0004): the bench reads them after every run and
    tables them; other metrics and comment lines are ignored."""
    monkeypatch.setattr(StandInApi, "metrics_text", "\n".join([
        "# HELP sglang:spec_disabled Dynamic speculation disable: 1 while decode steps run without speculation.",
        "# TYPE sglang:spec_disabled gauge",
        'sglang:spec_disabled{model_name="m",engine_type="unified",tp_rank="0"} 1.0',
        'sglang:spec_disabled_step_fraction{model_name="m",engine_type="unified",tp_rank="0"} 0.975',
        'sglang:num_running_reqs{model_name="m"} 0.0',
        ""]))
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--url", server, "--config", "patched=", "--concurrency", "1,4",
                                    "--input-len", "8", "--output-len", "5", "--seq-reps", "1",
                                    "--vocab-size", "500", "--no-plot", "-o", str(out)])
    assert res.exit_code == 0, res.output
    runs = json.loads((out / "bench.json").read_text())["results"][0]["runs"]
    assert [r["gauges"] for r in runs] == [{"sglang:spec_disabled": 1.0, "sglang:spec_disabled_step_fraction": 0.975}] * 2
    md = (out / "bench.md").read_text()
    assert "| patched | 4 | 1 | 0.975 |" in md
    # a server without the gauges (metrics off, or no series): no column, no table
    monkeypatch.setattr(StandInApi, "metrics_text", "")
    plain = tmp_path / "plain"
    CliRunner().invoke(main, ["bench", "--url", server, "--config", "base=", "--concurrency", "4",
                              "--input-len", "8", "--output-len", "5", "--vocab-size", "500", "--no-plot",
                              "-o", str(plain)])
    assert "gauges" not in json.loads((plain / "bench.json").read_text())["results"][0]["runs"][0]
    assert "dynamic-disable gauges" not in (plain / "bench.md").read_text()


def test_the_gauges_are_read_from_the_multiprocess_folder_the_scheduler_writes(tmp_path):
    """An in-process engine has no /metrics: its scheduler subprocess writes the gauges, declared
    as patch 0004 declares them (mostrecent), into PROMETHEUS_MULTIPROC_DIR; the bench reads that
    folder with prometheus_client, as SGLang's /metrics would."""
    import subprocess

    folder = tmp_path / "prom"
    folder.mkdir()
    writer = textwrap.dedent("""
        from prometheus_client import Gauge
        labels = {"model_name": "m", "engine_type": "unified"}
        for name, value in (("sglang:spec_disabled", 1), ("sglang:spec_disabled_step_fraction", 0.25)):
            g = Gauge(name=name, documentation="d", labelnames=labels.keys(), multiprocess_mode="mostrecent")
            g.labels(**labels).set(value)
        Gauge(name="sglang:num_running_reqs", documentation="d", multiprocess_mode="mostrecent").set(3)
    """)
    subprocess.run([sys.executable, "-c", writer], check=True, env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(folder)})
    assert gauges.spec_gauges_from_multiprocess_dir(str(folder)) == {
        "sglang:spec_disabled": 1.0, "sglang:spec_disabled_step_fraction": 0.25}


def test_bench_usage_errors(tmp_path):
    res = CliRunner().invoke(main, ["bench", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "no configuration" in res.output
    res = CliRunner().invoke(main, ["bench", "--config", "a=", "--config", "a=", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "unique" in res.output
    res = CliRunner().invoke(main, ["bench", "--config", "a=", "--concurrency", "0", "-o", str(tmp_path)])
    assert res.exit_code == 2
    res = CliRunner().invoke(main, ["bench", "--config", "a=", "--better-of", "a,b", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "--better-of names no configuration ['b']" in res.output
    res = CliRunner().invoke(main, ["bench", "--config", "a=", "--reps", "0", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "--reps must be at least 1" in res.output
    res = CliRunner().invoke(main, ["bench", "--config", "a=", "--mean-of", "a,c", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "--mean-of names no configuration ['c']" in res.output


def test_mean_of_two_reference_engines_is_a_ratio_table():
    def result(name, per_c):
        return {"name": name, "runs": [{"concurrency": c, "rep": r, "tok_per_s": v}
                                       for c, values in per_c.items() for r, v in enumerate(values)]}

    results = [result("baseline", {1: [209.0, 208.0, 209.5], 4: [800.0, 810.0, 805.0]}),
               result("patched", {1: [199.5, 203.3, 197.7]}),
               result("baseline2", {1: [204.3, 204.1, 208.1], 4: [790.0, 795.0, 800.0]})]
    common = {"concurrency": [1, 4], "input_len": 128, "output_len": 128, "seq_reps": 4, "reps": 3}
    md = tables.render_markdown(results, common, "baseline", ["baseline", "baseline2"], ["baseline", "baseline2"])
    table = md.split("Ratio to the mean of the medians of baseline and baseline2")[1]
    row1 = next(line for line in table.splitlines() if line.startswith("| 1 |"))
    # medians 209.0 and 204.3: mean 206.65; patched's median 199.5
    assert row1 == "| 1 | 206.7 | 1.011 | 0.965 | 0.989 |"
    row4 = next(line for line in table.splitlines() if line.startswith("| 4 |"))
    assert row4 == "| 4 | 800.0 | 1.006 | - | 0.994 |"


def test_without_sglang_the_bench_says_so_in_one_line_before_starting_anything(tmp_path, monkeypatch):
    started = record_engine_starts(monkeypatch)
    monkeypatch.setenv("PYTHONPATH", "")
    res = CliRunner().invoke(main, ["bench", "--config", "base=", "-o", str(tmp_path / "out")])
    assert res.exit_code == 2 and started == [] and not (tmp_path / "out").exists()
    assert res.output.strip().splitlines() == [
        f"spectrace: configuration base: sglang is not importable by {sys.executable}: install SGLang there, "
        "give --python, or drive a running server with --url"]
    res = CliRunner().invoke(main, ["bench", "--config", "base=", "--python", str(tmp_path / "no-python"),
                                    "-o", str(tmp_path / "out")])
    assert res.exit_code == 2 and started == [] and "configuration base: cannot run" in res.output


def test_a_resumed_sweep_whose_engines_all_finished_needs_no_sglang(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(fake_sglang(tmp_path))] + sys.path))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sweep = ["bench", "--server", "--port", str(port), "--config", "a=", "--concurrency", "2", "--input-len", "8",
             "--output-len", "4", "--vocab-size", "500", "--no-plot", "--timeout", "60", "-o", str(tmp_path / "out")]
    assert CliRunner().invoke(main, sweep).exit_code == 0
    monkeypatch.setenv("PYTHONPATH", "")
    started = record_engine_starts(monkeypatch)
    res = CliRunner().invoke(main, sweep + ["--resume"])
    assert res.exit_code == 0 and started == [] and "kept from the earlier sweep" in res.output
    res = CliRunner().invoke(main, sweep + ["--resume", "--config", "b="])  # b would have to start
    assert res.exit_code == 2 and started == [] and "configuration b: sglang is not importable" in res.output


def test_every_bench_option_has_help_text():
    from spectrace.bench.command import bench_command

    assert [p.name for p in bench_command.params if isinstance(p, click.Option) and not p.help] == []
    text = CliRunner().invoke(main, ["bench", "--help"]).output
    for option in ("--concurrency", "--input-len", "--output-len", "--port", "--workload"):
        line = next(line for line in text.splitlines() if line.strip().startswith(option))
        assert len(line.split(None, 2)) == 3  # the option, its value, its text


def test_a_failed_configuration_fails_the_bench_in_one_line(tmp_path, monkeypatch):
    # an engine that cannot start (here SGLang's import fails) fails its configuration: the others
    # still run, the outputs are written, and the exit status and one line say which failed
    monkeypatch.setenv("PYTHONPATH", str(fake_sglang(tmp_path, "raise ImportError('no GPU here')\n")))
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--config", "broken=--model-path /nonexistent", "--concurrency", "1",
                                    "--timeout", "120", "-o", str(out)])
    assert res.exit_code == 1, res.output
    data = json.loads((out / "bench.json").read_text())
    assert data["results"][0]["error"].startswith("exit code")
    assert "broken failed" in (out / "bench.md").read_text()
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("spectrace: 1 of 1 configurations failed: broken (exit code")
    assert str(out / "log-broken.txt") in last
    assert isinstance(res.exception, SystemExit)  # an exit status, not an uncaught exception
    assert not (out / "bench.png").exists()  # no empty plot


def test_dummy_models_are_written(tmp_path):
    m = models.write_dummy_models("small", tmp_path)
    target = json.loads(Path(m["target"], "config.json").read_text())
    draft = json.loads(Path(m["draft"], "config.json").read_text())
    assert target["architectures"] == ["LlamaForCausalLM"] and draft["architectures"] == ["LlamaForCausalLMEagle3"]
    assert draft["draft_vocab_size"] == target["vocab_size"] == m["vocab_size"]


def test_bench_starts_and_stops_a_server_per_configuration(tmp_path, monkeypatch):
    """--server: `python -m sglang.launch_server ARGS --port P` per configuration, with the
    shims' environment, driven over HTTP once /health answers, and its process group ended after.
    sglang.launch_server is the HTTP stand-in here (the real one needs a GPU)."""
    record = tmp_path / "server-record.json"
    fake = fake_sglang(tmp_path, record=record)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(fake)] + sys.path))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--server", "--port", str(port), "--shims", "record",
                                    "--config", "eagle=--speculative-algorithm EAGLE3 --mem-fraction-static 0.5",
                                    "--concurrency", "1,2", "--input-len", "8", "--output-len", "4",
                                    "--seq-reps", "1", "--vocab-size", "500", "--no-plot", "--timeout", "60",
                                    "-o", str(out)])
    assert res.exit_code == 0, res.output
    started = json.loads(record.read_text())
    assert started["argv"] == ["--speculative-algorithm", "EAGLE3", "--mem-fraction-static", "0.5",
                               "--port", str(port)]
    assert started["shims"] == "record"  # the activation variable reached the server process
    (result,) = json.loads((out / "bench.json").read_text())["results"]
    assert [r["concurrency"] for r in result["runs"]] == [1, 2]
    assert result["runs"][1]["output_tokens"] == 8 and "error" not in result
    assert (out / "server-eagle.log").exists()
    for _ in range(50):  # the server's process group is ended with the configuration
        try:
            os.kill(started["pid"], 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"server pid {started['pid']} still running after the bench")


class ClockedProcess:
    """A server process that runs until ``exits_at`` on a clock the test advances."""

    def __init__(self, clock: list[float], exits_at: float = float("inf")):
        self.clock, self.exits_at, self.returncode = clock, exits_at, None

    def poll(self):
        if self.clock[0] >= self.exits_at:
            self.returncode = 3
        return self.returncode


def fake_clock(monkeypatch) -> tuple[list[float], list[float]]:
    """lifecycle's clock as a list the test reads: time.sleep advances it and records each pause."""
    clock, pauses = [0.0], []

    def sleep(seconds):
        pauses.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(lifecycle.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(lifecycle.time, "sleep", sleep)
    return clock, pauses


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_a_server_that_answers_at_once_is_polled_once(server, monkeypatch):
    clock, pauses = fake_clock(monkeypatch)
    lifecycle.wait_for_server(server, ClockedProcess(clock), timeout=60)
    assert pauses == []


def test_health_polls_back_off_from_a_short_first_pause_to_two_seconds(monkeypatch):
    clock, pauses = fake_clock(monkeypatch)
    with pytest.raises(SpectraceError, match=r"was not ready within 20s"):
        lifecycle.wait_for_server(closed_port_url(), ClockedProcess(clock), timeout=20)
    assert pauses[:6] == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.8, 1.6])
    assert set(pauses[6:-1]) == {2.0} and 0 < pauses[-1] <= 2.0  # the last pause ends at the deadline
    assert sum(pauses) == pytest.approx(20)


def test_a_server_that_exits_while_starting_is_reported_at_the_next_poll(monkeypatch):
    clock, pauses = fake_clock(monkeypatch)
    with pytest.raises(SpectraceError, match=r"the server exited with 3 before it was ready"):
        lifecycle.wait_for_server(closed_port_url(), ClockedProcess(clock, exits_at=1.0), timeout=60)
    assert sum(pauses) < 2.0


GPU_CONFIGS = sorted((Path(__file__).parent.parent / "bench" / "gpu").glob("*.toml"))


@pytest.mark.parametrize("path", GPU_CONFIGS, ids=lambda p: p.name)
def test_the_gpu_configuration_files_load_with_the_bench_loader(path):
    from spectrace.bench.command import bench_command

    configs, defaults = config.load_config_file(str(path))  # unknown keys raise
    assert configs and len({c["name"] for c in configs}) == len(configs)
    options = {p.name for p in bench_command.params}
    assert set(defaults) - {"args"} <= options
    names = {c["name"] for c in configs}
    for key in ("better_of", "mean_of"):
        assert set(config.split_names(defaults.get(key))) <= names
    assert defaults.get("reference", next(iter(names))) in names


def test_gpu_configuration_files_exist():
    assert len(GPU_CONFIGS) >= 4


def test_a_configuration_file_sets_options_the_command_line_overrides(server, tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[defaults]\nconcurrency = "1,2"\nseq_reps = 1\nreps = 2\nplot = false\nvocab_size = 500\n'
                 'input_len = 8\noutput_len = 3\n[[config]]\nname = "a"\n')
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--url", server, "--configs", str(f), "--reps", "1", "-o", str(out)])
    assert res.exit_code == 0, res.output
    common = json.loads((out / "bench.json").read_text())["common"]
    assert (common["concurrency"], common["seq_reps"], common["reps"], common["input_len"]) == ([1, 2], 1, 1, 8)
    assert not (out / "bench.png").exists()


def test_unknown_keys_in_a_configuration_file_are_errors(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[[config]]\nname = "x"\nab = "off,on"\n')
    with pytest.raises(SpectraceError, match=r"unknown keys \['ab'\]"):
        config.load_config_file(str(f))
    f.write_text('[defaults]\nwarm_after_flush = false\n[[config]]\nname = "x"\n')
    with pytest.raises(SpectraceError, match="unknown \\[defaults\\] keys \\['warm_after_flush'\\]"):
        config.load_config_file(str(f))
    f.write_text('[defaults]\nshims = "loud"\n[[config]]\nname = "x"\n')
    res = CliRunner().invoke(main, ["bench", "--configs", str(f), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "[defaults] shims" in res.output


def test_draft_regimes_need_the_dummy_model_and_are_checked_in_files(server, tmp_path):
    res = CliRunner().invoke(main, ["bench", "--config", "a=", "--drafts", "accepted", "-o", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert res.output.strip().splitlines()[-1] == (
        "spectrace: --drafts accepted needs --dummy-model and an engine the bench starts (no --url)")
    res = CliRunner().invoke(main, ["bench", "--url", server, "--dummy-model", "small", "--config", "a=",
                                    "--drafts", "half", "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--drafts half needs --dummy-model" in res.output
    res = CliRunner().invoke(main, ["bench", "--config", "a=", "--drafts", "all", "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "'all' is not one of 'dummy', 'accepted', 'half'" in res.output
    f = tmp_path / "c.toml"
    f.write_text('[defaults]\ndrafts = "half"\n[[config]]\nname = "x"\ndrafts = "accepted"\n')
    configs, defaults = config.load_config_file(str(f))
    assert configs[0]["drafts"] == "accepted" and defaults["drafts"] == "half"
    # a configuration's own regime needs the dummy model too
    res = CliRunner().invoke(main, ["bench", "--configs", str(f), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--drafts accepted needs --dummy-model" in res.output
    f.write_text('[[config]]\nname = "x"\ndrafts = "most"\n')
    with pytest.raises(SpectraceError, match="drafts must be one of dummy, accepted, half"):
        config.load_config_file(str(f))


def test_an_edited_regime_puts_the_drafts_boot_folder_after_the_shims_one(monkeypatch, tmp_path):
    from spectrace.bench import drafts
    from spectrace.shims import runtime

    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    monkeypatch.setenv(drafts.ENV_DRAFTS, "half")  # inherited from a parent: must not leak
    common = {"drafts": "dummy", "catalog": None, "value_sample": None}
    cfg = {"name": "x", "drafts": "accepted", "env": {"PYTHONPATH": "tests/gpu/fault", "A": 1}}
    env = lifecycle.engine_environment(cfg, "warn", None, common)
    assert drafts.BOOT_DIR == runtime.BOOT_DIR  # one start-up hook for the shims and the regimes
    assert env["PYTHONPATH"].split(os.pathsep) == [
        str(runtime.BOOT_DIR), os.path.abspath("tests/gpu/fault"), "/somewhere"]
    assert env[drafts.ENV_DRAFTS] == "accepted" and env["A"] == "1"
    env = lifecycle.engine_environment({"name": "y"}, "off", None, common)
    assert env["PYTHONPATH"].split(os.pathsep) == [str(runtime.BOOT_DIR), "/somewhere"]
    assert drafts.ENV_DRAFTS not in env
    assert (drafts.BOOT_DIR / "sitecustomize.py").is_file()


FAKE_MODEL_RUNNER = '''
import sys

class T:
    """a weight that records what was done to it"""
    def __init__(self, name, shape=(8, 4)):
        self.name, self.shape = name, shape
    def zero_(self): OPS.append(("zero", self.name))
    def fill_(self, v): OPS.append(("fill", self.name, v))
    def copy_(self, src): OPS.append(("copy", self.name, src.name))

class M:
    def __init__(self, name): self.weight = T(name)

class Inner:
    embed_tokens = M("embed")

class Model:
    model, lm_head = Inner(), M("head")
    def named_modules(self):
        return [("model.layers.0.self_attn.o_proj", M("o0")), ("model.layers.0.mlp.down_proj", M("d0")),
                ("model.layers.0.mlp.gate_up_proj", M("g0"))]
    def named_parameters(self):
        return [("model.layers.0.input_layernorm.weight", T("n0")), ("model.norm.weight", T("n1")),
                ("model.layers.0.mlp.gate_up_proj.weight", T("g0"))]

OPS = []

class ModelRunner:
    is_draft_worker = False
    def load_model(self):
        self.model = Model()
'''


def test_the_boot_chain_edits_the_loaded_model_in_a_fresh_interpreter(tmp_path):
    """The bench's engine PYTHONPATH: spectrace's boot folder (shims and drafts), a test's hook
    folder and a tree with a fake ModelRunner. Every sitecustomize runs once, in path order, and
    load_model is wrapped through spectrace's post-import hook (no torch needed for the fake)."""
    from spectrace.bench import drafts
    from spectrace.shims import runtime

    tree = tmp_path / "tree"
    pkg = tree / "sglang" / "srt" / "model_executor"
    pkg.mkdir(parents=True)
    for d in (tree / "sglang", tree / "sglang" / "srt", pkg):
        (d / "__init__.py").write_text("")
    (pkg / "model_runner.py").write_text(FAKE_MODEL_RUNNER)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text("import sys\nprint('[hook] ran', file=sys.stderr)\n")
    script = ("import sglang.srt.model_executor.model_runner as m\n"
              "m.ModelRunner().load_model()\n"
              "print(m.OPS)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECTRACE_")}
    env.update(PYTHONPATH=os.pathsep.join([str(runtime.BOOT_DIR), str(hook), str(tree)]),
               SPECTRACE_BENCH_DRAFTS="accepted", SPECTRACE_POOL_STATS="1")
    import subprocess

    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert eval(proc.stdout.strip()) == [("zero", "o0"), ("zero", "d0"), ("fill", "n0", 1.0), ("fill", "n1", 1.0),
                                         ("copy", "head", "embed")]
    lines = proc.stderr.splitlines()
    assert lines.count("[hook] ran") == 1
    (edit,) = [line for line in lines if line.startswith("[spectrace bench] drafts accepted: target Model")]
    assert edit.endswith("zeroed 1 o_proj and 1 down_proj, 2 norm weights set to 1, lm_head = embed_tokens")
    # dummy drafts: the hook stays out of the way, the chain still runs
    env["SPECTRACE_BENCH_DRAFTS"] = "dummy"
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]" and "[hook] ran" in proc.stderr


def test_the_tables_show_each_engines_draft_regime():
    results = [{"name": "base", "drafts": "accepted", "shims": "warn", "runs": [{"concurrency": 1, "tok_per_s": 9.0}]},
               {"name": "plain", "drafts": None, "runs": []}]
    md = tables.render_markdown(results, {"concurrency": [1], "input_len": 8, "output_len": 8, "seq_reps": 1}, None)
    assert "| C | base (shims warn, drafts accepted) | plain (shims off) |" in md
    assert "| configuration | SGLang | drafts |" in md and "| base | ? | accepted |" in md and "| plain | ? | - |" in md


def test_the_weight_edit_makes_the_target_repeat_and_the_draft_agree():
    """A two-layer toy Llama and EAGLE-3 draft in torch (skipped without torch)."""
    torch = pytest.importorskip("torch")

    from spectrace.bench import drafts

    from bench_fakes import toy_llama

    h, vocab = 8, 32
    target, draft = toy_llama(h, vocab, draft=False), toy_llama(h, vocab, draft=True)
    assert "lm_head = embed_tokens" in drafts.edit_model(target, "accepted", "target")
    line = drafts.edit_model(draft, "accepted", "draft")
    assert "zeroed 2 o_proj and 2 down_proj, 3 norm weights set to 1" in line
    assert line.endswith("fc passes aux hidden state 1 of 3, lm_head = the target's embed_tokens")
    assert all(float(l.self_attn.o_proj.weight.detach().abs().sum()) == 0 for l in target.model.layers)
    e = target.model.embed_tokens.weight
    assert torch.equal(target.lm_head.weight, e) and torch.equal(draft.lm_head.weight, e)
    x = torch.randn(2, 3 * h)
    assert torch.equal(draft.model.fc(x), x[:, :h] + draft.model.fc.bias)
    drafts.edit_model(target, "half", "target")
    f = drafts.vocabulary_pairing(vocab, 0)
    assert torch.equal(f[f], torch.arange(vocab)) and bool((f != torch.arange(vocab)).all())
    assert torch.equal(target.lm_head.weight, e[f])


def test_the_accept_length_counts_verify_steps_only():
    """Plain steps of a dynamic-disable server add completion tokens but no verify step: the accept
    length comes from the correct drafts where SGLang reports them, else from the completion tokens."""
    from spectrace.bench.worker import _count

    def out(ids, **meta):
        return {"output_ids": list(range(ids)), "meta_info": meta}

    # 32 verify steps with 2 correct drafts each (accept 3), and 32 tokens of plain steps
    mixed = [out(128, completion_tokens=128, spec_verify_ct=32, spec_num_correct_drafts=64)]
    assert _count(mixed) == (128, 3.0)
    assert _count([out(128, completion_tokens=128, spec_verify_ct=32)]) == (128, 4.0)  # older releases
    assert _count([out(16, completion_tokens=16)]) == (16, None)  # no speculation


def test_each_requests_speculative_counters_are_kept_for_checks():
    from spectrace.bench.worker import _spec_meta

    verified = {"meta_info": {"spec_verify_ct": 8, "spec_num_correct_drafts": 24, "spec_accept_length": 4.0,
                              "completion_tokens": 128, "e2e_latency": 1.5}}
    plain = {"meta_info": {"completion_tokens": 16}}
    assert _spec_meta([verified, plain]) == [
        {"completion_tokens": 128, "spec_verify_ct": 8, "spec_num_correct_drafts": 24, "spec_accept_length": 4.0},
        {"completion_tokens": 16}]
    assert _spec_meta([plain, {"output_ids": [1]}]) is None  # no verify step: nothing to keep


def test_engines_run_in_rounds_and_tables_take_medians_over_every_engine(server, tmp_path, monkeypatch):
    started = record_engine_starts(monkeypatch)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--url", server, "--config", "a=", "--config", "b=",
                                    "--concurrency", "1,4", "--input-len", "8", "--output-len", "5",
                                    "--seq-reps", "1", "--vocab-size", "500", "--reps", "2", "--engines", "2",
                                    "--better-of", "a,b", "--reference", "a", "--no-plot", "-o", str(out)])
    assert res.exit_code == 0, res.output
    # every configuration's first engine before any second one, each with files of its own
    assert started == ["a.1", "b.1", "a.2", "b.2"]
    assert {p.name for p in out.glob("log-*.txt")} == {"log-a.1.txt", "log-b.1.txt", "log-a.2.txt", "log-b.2.txt"}
    data = json.loads((out / "bench.json").read_text())
    assert [r["name"] for r in data["results"]] == ["a", "b"]
    a = data["results"][0]
    assert sorted((run["concurrency"], run["engine"], run["rep"]) for run in a["runs"]) == [
        (c, e, r) for c in (1, 4) for e, r in ((0, 0), (0, 1), (1, 2), (1, 3))]
    assert [Path(e["log"]).name for e in a["engines"]] == ["log-a.1.txt", "log-a.2.txt"]
    md = (out / "bench.md").read_text()
    assert "median of 2 engines x 2 repetitions" in md
    # b's repetitions are compared with a's of the same engine and repetition: 4 runs of 1 or 4 requests
    row = next(line for line in md.splitlines() if line.startswith("| b |"))
    assert "| 20/20 |" in row


def test_engines_below_one_are_refused(tmp_path):
    res = CliRunner().invoke(main, ["bench", "--config", "a=", "--engines", "0", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "--engines must be at least 1" in res.output


def test_output_lengths_spread_evenly_around_the_mean():
    assert prompts.output_lengths(4, 8, 0.0) == [8, 8, 8, 8]
    assert prompts.output_lengths(4, 8, 0.5) == [4, 7, 9, 12]
    assert prompts.output_lengths(1, 8, 0.5) == [8]
    assert min(prompts.output_lengths(64, 128, 0.99)) == 1


def test_output_spread_gives_each_request_its_own_length(server, tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--url", server, "--config", "a=", "--concurrency", "1,4",
                                    "--input-len", "8", "--output-len", "8", "--output-spread", "0.5",
                                    "--seq-reps", "2", "--vocab-size", "500", "--no-plot", "-o", str(out)])
    assert res.exit_code == 0, res.output
    runs = {run["concurrency"]: run for run in json.loads((out / "bench.json").read_text())["results"][0]["runs"]}
    assert [len(ids) for ids in runs[4]["output_ids"]] == [4, 7, 9, 12]
    assert [len(ids) for ids in runs[1]["output_ids"]] == [4, 12]
    assert "8 out (spread ±0.5)" in (out / "bench.md").read_text()


def test_warmup_runs_time_nothing_and_leave_the_timed_prompts_alone(server, tmp_path):
    plain_calls, plain, plain_md = bench_counting_requests(server, tmp_path / "0", "--output-spread", "0.5")
    warm_calls, warm, warm_md = bench_counting_requests(server, tmp_path / "2", "--output-spread", "0.5",
                                                        "--warmup-runs", "2")
    # each warm-up run: C=1's 2 requests one after another, then C=4's 4 at once
    assert warm_calls - plain_calls == 2 * (2 + 4)
    assert [r["output_ids"] for r in warm["results"][0]["runs"]] == [r["output_ids"] for r in plain["results"][0]["runs"]]
    assert len(warm["results"][0]["runs"]) == 2
    assert "workload untimed, 2 x." in warm_md and "untimed, " not in plain_md


def small_sweep(server, out, *options):
    return CliRunner().invoke(main, ["bench", "--url", server, "--config", "a=", "--config", "b=", "--config", "c=",
                                     "--concurrency", "1,4", "--input-len", "8", "--output-len", "5", "--seq-reps", "2",
                                     "--vocab-size", "500", "--no-plot", "-o", str(out), *options])


def test_resume_keeps_the_engines_a_stopped_sweep_finished_and_runs_the_rest(server, tmp_path, monkeypatch):
    out = tmp_path / "out"
    started = record_engine_starts(monkeypatch, stop_at=3)
    assert small_sweep(server, out).exit_code == 143 and started == ["a", "b", "c"]
    first = {r["name"]: r for r in json.loads((out / "bench.json").read_text())["results"]}
    started = record_engine_starts(monkeypatch)
    res = small_sweep(server, out, "--resume")
    assert res.exit_code == 0, res.output
    assert started == ["c"]
    assert "configuration a: kept from the earlier sweep" in res.output
    data = json.loads((out / "bench.json").read_text())
    assert "pending" not in data or not data["pending"]
    results = {r["name"]: r for r in data["results"]}
    assert list(results) == ["a", "b", "c"] and all(r["runs"] for r in results.values())
    assert results["a"]["runs"] == first["a"]["runs"] and results["b"]["runs"] == first["b"]["runs"]
    # without --resume every engine runs again
    started = record_engine_starts(monkeypatch)
    assert small_sweep(server, out).exit_code == 0 and started == ["a", "b", "c"]


def test_resume_refuses_engines_that_ran_with_other_settings(server, tmp_path):
    out = tmp_path / "out"
    assert small_sweep(server, out).exit_code == 0
    res = small_sweep(server, out, "--resume", "--output-len", "6")
    assert res.exit_code == 2
    assert "ran with other settings (settings.output_len: 5 then, 6 now)" in res.output
    assert len(res.output.strip().splitlines()) == 1
    # a configuration whose arguments changed is refused the same way
    res = CliRunner().invoke(main, ["bench", "--url", server, "--config", "a=--x", "--concurrency", "1,4",
                                    "--input-len", "8", "--output-len", "5", "--seq-reps", "2", "--vocab-size", "500",
                                    "--no-plot", "-o", str(out), "--resume"])
    assert res.exit_code == 2 and 'config.args: "" then, "--x" now' in res.output


def test_a_refused_resume_runs_nothing_and_leaves_the_tables_alone(server, tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert small_sweep(server, out).exit_code == 0
    tables = (out / "bench.json").read_text(), (out / "bench.md").read_text()
    changed = json.loads((out / "result-c.json").read_text())
    changed["sweep"]["settings"]["seed"] = 1  # the last engine ran with another seed
    (out / "result-c.json").write_text(json.dumps(changed))
    started = record_engine_starts(monkeypatch)
    res = small_sweep(server, out, "--resume")
    assert res.exit_code == 2 and "settings.seed: 1 then, 1234 now" in res.output
    assert started == [] and ((out / "bench.json").read_text(), (out / "bench.md").read_text()) == tables


def test_resume_runs_again_an_engine_whose_result_is_unfinished_or_failed(server, tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert small_sweep(server, out).exit_code == 0
    raw = json.loads((out / "result-b.json").read_text())
    raw.pop("sweep")  # as the worker leaves it when the sweep stops before the engine's bookkeeping
    (out / "result-b.json").write_text(json.dumps(raw))
    failed = json.loads((out / "result-c.json").read_text())
    (out / "result-c.json").write_text(json.dumps(dict(failed, error="exit code 1")))
    started = record_engine_starts(monkeypatch)
    assert small_sweep(server, out, "--resume").exit_code == 0
    assert started == ["b", "c"]


# SGLang 0.5.17's scheduler log on the H200 (8B-shaped dummy weights, 128 in / 128 out): a plain
# engine's C=16 run, then the dynamic-disable core's C=4 and C=16 runs
STEADY_LOG = """\
[2026-12-01 08:04:57] Prefill batch, #new-seq: 16, #new-token: 2048, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 3002.61
[2026-12-01 08:04:58] Prefill batch, #new-seq: 16, #new-token: 2048, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 9619.75
[2026-12-01 08:04:58] Decode batch, #running-req: 16, #token: 2192, token usage: 0.00, cuda graph: True, gen throughput (token/s): 1981.80, #queue-req: 0
[2026-12-01 08:04:58] Decode batch, #running-req: 16, #token: 2832, token usage: 0.01, cuda graph: True, gen throughput (token/s): 3135.53, #queue-req: 0
[2026-12-01 08:04:58] Decode batch, #running-req: 16, #token: 3472, token usage: 0.01, cuda graph: True, gen throughput (token/s): 3101.34, #queue-req: 0
[2026-12-01 08:04:58] Decode batch, #running-req: 16, #token: 0, token usage: 0.00, cuda graph: True, gen throughput (token/s): 3088.00, #queue-req: 0
"""
STEADY_LOG_CORE = """\
[2026-12-01 08:06:02] Prefill batch, #new-seq: 4, #new-token: 512, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 781.33
[2026-12-01 08:06:02] Prefill batch, #new-seq: 4, #new-token: 512, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 2733.55
[2026-12-01 08:06:02] Decode batch, #running-req: 4, #token: 572, token usage: 0.00, accept len: 0.00, accept rate: 0.00, spec steps on/off: 0/56, cuda graph: True, gen throughput (token/s): 465.18, #queue-req: 0
[2026-12-01 08:06:02] Decode batch, #running-req: 4, #token: 732, token usage: 0.00, accept len: 0.00, accept rate: 0.00, spec steps on/off: 0/40, cuda graph: True, gen throughput (token/s): 828.65, #queue-req: 0
[2026-12-01 08:06:03] Decode batch, #running-req: 4, #token: 892, token usage: 0.00, accept len: 0.00, accept rate: 0.00, spec steps on/off: 0/40, cuda graph: True, gen throughput (token/s): 826.10, #queue-req: 0
[2026-12-01 08:06:03] Decode batch, #running-req: 4, #token: 0, token usage: 0.00, accept len: 0.00, accept rate: 0.00, spec steps on/off: 0/40, cuda graph: True, gen throughput (token/s): 824.68, #queue-req: 0
[2026-12-01 08:06:03] Prefill batch, #new-seq: 16, #new-token: 2048, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 2994.40
[2026-12-01 08:06:03] Decode batch, #running-req: 16, #token: 2288, token usage: 0.00, accept len: 0.00, accept rate: 0.00, spec steps on/off: 0/40, cuda graph: True, gen throughput (token/s): 2000.20, #queue-req: 0
[2026-12-01 08:06:03] Decode batch, #running-req: 16, #token: 2928, token usage: 0.01, accept len: 0.00, accept rate: 0.00, spec steps on/off: 0/40, cuda graph: True, gen throughput (token/s): 3103.31, #queue-req: 0
[2026-12-01 08:06:04] Decode batch, #running-req: 16, #token: 3568, token usage: 0.01, accept len: 0.00, accept rate: 0.00, spec steps on/off: 0/40, cuda graph: True, gen throughput (token/s): 3070.79, #queue-req: 0
[2026-12-01 08:06:04] Decode batch, #running-req: 16, #token: 0, token usage: 0.00, accept len: 0.00, accept rate: 0.00, spec steps on/off: 0/40, cuda graph: True, gen throughput (token/s): 3057.60, #queue-req: 0
"""


def test_steady_decode_leaves_out_the_intervals_that_span_a_runs_start_or_end():
    assert steady.steady_rates(STEADY_LOG.splitlines()) == {16: [3135.53, 3101.34]}
    assert steady.steady_rates(STEADY_LOG_CORE.splitlines()) == {4: [828.65, 826.10], 16: [3103.31, 3070.79]}


def test_the_steady_table_sets_each_engine_against_the_reference(tmp_path):
    base_log, core_log = tmp_path / "log-baseline.txt", tmp_path / "log-core.txt"
    base_log.write_text(STEADY_LOG)
    core_log.write_text(STEADY_LOG_CORE)
    results = [{"name": "baseline", "runs": [{"concurrency": 16, "tok_per_s": 2904.0}],
                "steady": steady.steady_from_log(base_log)},
               {"name": "core", "runs": [{"concurrency": 16, "tok_per_s": 2867.0}],
                "steady": steady.steady_from_log(core_log)}]
    common = {"concurrency": [4, 16], "input_len": 128, "output_len": 128, "seq_reps": 3}
    md = tables.render_markdown(results, common, "baseline")
    table = md.split("Steady decode tokens/s at batch size C")[1]
    # medians 3,118.4 and 3,087.1; C=4 has no reference interval (median 827.4)
    assert "| 16 | 3,118 (1.000) | 3,087 (0.990) |" in table
    assert "| 4 | - | 827 |" in table
    # bench.json keeps the intervals: keys are batch sizes as text
    assert json.loads(json.dumps(results[1]["steady"])) == {"4": [828.65, 826.10], "16": [3103.31, 3070.79]}
    # with output lengths spread the batch shrinks through every size: no table
    assert "Steady decode" not in tables.render_markdown(results, dict(common, output_spread=0.9), "baseline")
    assert steady.steady_from_log(tmp_path / "none.txt") == {}


def test_engines_pool_their_steady_intervals():
    from spectrace.bench.sweep import merge_engine

    merged = merge_engine(None, {"name": "core", "runs": [], "steady": {"16": [3103.31]}}, 0, 1)
    merged = merge_engine(merged, {"name": "core", "runs": [], "steady": {"16": [3070.79], "4": [826.1]}}, 1, 1)
    assert merged["steady"] == {"16": [3103.31, 3070.79], "4": [826.1]}


@pytest.mark.parametrize("version", ["0.5.9", "0.5.12", "0.5.17", "0.5.23"])
def test_the_log_lines_the_steady_parser_reads_are_the_ones_sglang_writes(sglang_source, version):
    sources = {p: p.read_text() for p in (sglang_source(version).package_dir / "srt").rglob("*.py")}
    # the scheduler's metrics module (its place moves between releases) writes both lines
    reporter = next(text for text in sources.values() if 'gen throughput (token/s): {' in text)
    assert 'f"Decode batch{iter_msg}, #running-req: {num_running_reqs}, {token_usage_msg}"' in reporter
    assert 'f"Prefill batch{iter_msg}, "' in reporter
    assert any(re.search(r'f"#token: \{[\w.]+\}, token usage: ', text) for text in sources.values())


def test_a_resumed_result_from_before_the_steady_table_reads_its_engines_log(tmp_path):
    from spectrace.bench import resume

    sweep = resume.fingerprint({"name": "baseline", "args": ""}, {"concurrency": [16], "url": None})
    (tmp_path / "result-baseline.json").write_text(json.dumps({"name": "baseline", "runs": [], "sweep": sweep}))
    (tmp_path / "log-baseline.txt").write_text(STEADY_LOG)
    assert resume.kept(tmp_path, "baseline", sweep)["steady"] == {"16": [3135.53, 3101.34]}


def test_only_runs_the_named_configurations(server, tmp_path, monkeypatch):
    started = record_engine_starts(monkeypatch)
    out = tmp_path / "out"
    args = ["bench", "--url", server, "--config", "a=", "--config", "b=", "--concurrency", "1", "--input-len", "8",
            "--output-len", "5", "--seq-reps", "1", "--vocab-size", "500", "--no-plot", "-o", str(out)]
    res = CliRunner().invoke(main, args + ["--only", "b"])
    assert res.exit_code == 0, res.output
    assert started == ["b"]
    assert [r["name"] for r in json.loads((out / "bench.json").read_text())["results"]] == ["b"]
    res = CliRunner().invoke(main, args + ["--only", "c"])
    assert res.exit_code == 2 and "--only names no configuration ['c']" in res.output
    assert started == ["b"]


def test_only_narrows_the_files_ratio_and_reference_names_to_the_ones_it_runs(server, tmp_path, monkeypatch):
    record_engine_starts(monkeypatch)
    configs = tmp_path / "sweep.toml"
    configs.write_text('[defaults]\nbetter_of = "a,c"\nreference = "c"\n'
                       '[[config]]\nname = "a"\n[[config]]\nname = "b"\n[[config]]\nname = "c"\n')
    out = tmp_path / "out"
    args = ["bench", "--url", server, "--configs", str(configs), "--concurrency", "1", "--input-len", "8",
            "--output-len", "5", "--seq-reps", "1", "--vocab-size", "500", "--no-plot", "-o", str(out)]
    res = CliRunner().invoke(main, args + ["--only", "a,b"])
    assert res.exit_code == 0, res.output
    md = (out / "bench.md").read_text()
    assert "Ratio to the better of a at each C" in md
    assert "| a |" in md and "reference" in md.split("| a |")[-1].splitlines()[0]
    # the same names on the command line stay strict
    res = CliRunner().invoke(main, args + ["--only", "a,b", "--better-of", "a,c"])
    assert res.exit_code == 2 and "--better-of names no configuration ['c']" in res.output
