"""``spectrace bench`` on the CPU: configuration parsing, prompts, the HTTP driver end to end
against a local stand-in of SGLang's HTTP API (``/generate`` with token ids, ``/flush_cache``,
``/get_server_info``), and the json / markdown / plot outputs."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from spectrace import bench
from spectrace.cli import main
from spectrace.errors import SpectraceError


class _Api(BaseHTTPRequestHandler):
    """Greedy "model": each output token is (sum of the prompt + position) mod 1000."""

    calls = {"generate": 0, "flush": 0}

    def log_message(self, *args):
        pass

    def _send(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/get_server_info":
            self._send({"version": "stand-in", "internal_states": [
                {"spectrace_pool": {"token_free": 1000, "token_capacity": 1000, "token_used": 0}}]})
        else:
            self._send({})

    def do_POST(self):
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
        if self.path == "/generate":
            _Api.calls["generate"] += 1
            n = payload["sampling_params"]["max_new_tokens"]
            base = sum(payload["input_ids"])
            self._send({"output_ids": [(base + i) % 1000 for i in range(n)],
                        "meta_info": {"completion_tokens": n, "spec_verify_ct": n // 2}})
        else:
            _Api.calls["flush"] += 1
            self._send({})


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_prompts_are_the_same_for_every_configuration():
    a = bench.prompts_for(16, 16, 128, 32000, seed=1)
    assert a == bench.prompts_for(16, 16, 128, 32000, seed=1)
    assert a != bench.prompts_for(32, 16, 128, 32000, seed=1)
    assert all(len(p) == 128 and 10 <= min(p) and max(p) < 32000 - 10 for p in a)


def test_config_parsing(tmp_path):
    assert bench.parse_config_option("eagle=--speculative-algorithm EAGLE3 --x=1") == {
        "name": "eagle", "args": "--speculative-algorithm EAGLE3 --x=1"}
    assert bench.parse_config_option("baseline=") == {"name": "baseline", "args": ""}
    with pytest.raises(SpectraceError):
        bench.parse_config_option("no-equals-sign")
    f = tmp_path / "c.toml"
    f.write_text('[defaults]\nargs = "--a 1"\n[[config]]\nname = "x"\nargs = "--b"\nshims = "warn"\n')
    configs, defaults = bench.load_config_file(str(f))
    assert configs == [{"name": "x", "args": "--b", "shims": "warn"}] and defaults == {"args": "--a 1"}
    (tmp_path / "bad.json").write_text('{"configs": [{"args": "--b"}]}')
    with pytest.raises(SpectraceError, match="name"):
        bench.load_config_file(str(tmp_path / "bad.json"))


def test_default_flags_follow_the_version_but_user_flags_do_not():
    known = {"--model-path", "--cuda-graph-max-bs-decode", "--tp-size"}
    argv = ["--model-path", "m", "--cuda-graph-max-bs", "8", "--disable-piecewise-cuda-graph", "--tp-size", "2"]
    out, dropped = bench._known_flags_only(argv, known, user_flags=set())
    assert out == ["--model-path", "m", "--cuda-graph-max-bs-decode", "8", "--tp-size", "2"]
    assert dropped == ["--disable-piecewise-cuda-graph"]
    out, _ = bench._known_flags_only(["--my-flag", "3"], known, user_flags={"--my-flag"})
    assert out == ["--my-flag", "3"]  # SGLang's own parser reports the user's unknown flag


def test_bench_against_a_running_server(server, tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--url", server, "--config", "a=", "--config", "b=",
                                    "--concurrency", "1,4", "--input-len", "8", "--output-len", "5",
                                    "--seq-reps", "2", "--vocab-size", "500", "-o", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads((out / "bench.json").read_text())
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


def test_bench_usage_errors(tmp_path):
    res = CliRunner().invoke(main, ["bench", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "no configuration" in res.output
    res = CliRunner().invoke(main, ["bench", "--config", "a=", "--config", "a=", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "unique" in res.output
    res = CliRunner().invoke(main, ["bench", "--config", "a=", "--concurrency", "0", "-o", str(tmp_path)])
    assert res.exit_code == 2


def test_failed_configuration_is_reported_not_raised(tmp_path, monkeypatch):
    # an engine that cannot start (no SGLang on this machine) fails its configuration only
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--config", "broken=--model-path /nonexistent", "--concurrency", "1",
                                    "--no-plot", "--timeout", "120", "-o", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads((out / "bench.json").read_text())
    assert data["results"][0]["error"].startswith("exit code")
    assert "broken failed" in (out / "bench.md").read_text()


def test_dummy_models_are_written(tmp_path):
    m = bench.write_dummy_models("small", tmp_path)
    target = json.loads(Path(m["target"], "config.json").read_text())
    draft = json.loads(Path(m["draft"], "config.json").read_text())
    assert target["architectures"] == ["LlamaForCausalLM"] and draft["architectures"] == ["LlamaForCausalLMEagle3"]
    assert draft["draft_vocab_size"] == target["vocab_size"] == m["vocab_size"]
