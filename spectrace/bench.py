"""``spectrace bench``: the same requests at several concurrencies, one SGLang engine per
configuration, with the runtime shims on or off; json, a markdown table and a plot.

Each configuration runs in its own Python process (``python -m spectrace.bench --worker
SPEC.json``), so that the shims' environment reaches exactly that engine's scheduler and a crash
or hang ends only that configuration. ``--url`` drives an already running server over HTTP
instead, and ``--server`` starts ``sglang.launch_server`` per configuration and drives it over HTTP.

The engine driver and the dummy model configs follow ``shared/gpu/probe.py`` (the project's GPU
recipe): ``load_format=dummy``, ``skip_tokenizer_init`` with token-id prompts, greedy decoding with
``ignore_eos``; the Llama-3.1-8B-shaped target and EAGLE-3 draft ``config.json`` writers are
taken from it.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

try:
    import click
except ImportError:  # pragma: no cover - the worker path needs no click
    click = None

from spectrace.errors import SpectraceError

# --------------------------------------------------------------------------------------------
# dummy models (from shared/gpu/probe.py)
# --------------------------------------------------------------------------------------------

SHAPES = {
    # head_dim 128 and GQA group 4 as in the 8B shape, so JIT-compiled kernels are shared
    "small": dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=2, vocab_size=32000, aux_layer_ids=[0, 1, 2]),
    # Llama-3.1-8B shaped
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
               num_key_value_heads=8, vocab_size=128256, aux_layer_ids=[1, 15, 28]),
}


def write_dummy_models(shape: str, root: str | os.PathLike) -> dict:
    """``config.json`` for a Llama target and an EAGLE-3 draft (no weights: ``--load-format
    dummy``). The draft is shaped as sglang/srt/models/llama_eagle3.py reads it: one layer,
    ``draft_vocab_size == vocab_size`` (no hot-token map), explicit aux hidden-state layers."""
    s = SHAPES[shape]
    root = Path(root)
    target, draft = root / f"target-{shape}", root / f"draft-{shape}"
    common = dict(
        model_type="llama", hidden_act="silu", rms_norm_eps=1e-5, hidden_size=s["hidden_size"],
        intermediate_size=s["intermediate_size"], num_attention_heads=s["num_attention_heads"],
        num_key_value_heads=s["num_key_value_heads"], head_dim=s["hidden_size"] // s["num_attention_heads"],
        vocab_size=s["vocab_size"], max_position_embeddings=8192, rope_theta=500000.0, bos_token_id=1,
        eos_token_id=2, pad_token_id=0, torch_dtype="bfloat16", tie_word_embeddings=False,
        attention_bias=False, initializer_range=0.02)
    configs = {
        target: dict(common, architectures=["LlamaForCausalLM"], num_hidden_layers=s["num_hidden_layers"]),
        draft: dict(common, architectures=["LlamaForCausalLMEagle3"], num_hidden_layers=1,
                    draft_vocab_size=s["vocab_size"], target_hidden_size=s["hidden_size"],
                    eagle_config={"eagle_aux_hidden_state_layer_ids": s["aux_layer_ids"],
                                  "use_aux_hidden_state": True}),
    }
    for path, cfg in configs.items():
        path.mkdir(parents=True, exist_ok=True)
        (path / "config.json").write_text(json.dumps(cfg, indent=1))
    return {"target": str(target), "draft": str(draft), "vocab_size": s["vocab_size"]}


# the engine settings of the GPU recipe; flags a version does not know are dropped or renamed
DUMMY_DEFAULT_ARGS = ("--model-path {target} --load-format dummy --skip-tokenizer-init "
                      "--attention-backend triton --sampling-backend pytorch --grammar-backend none "
                      "--dtype bfloat16 --random-seed 0 --mem-fraction-static 0.55 --context-length 4096 "
                      "--disable-piecewise-cuda-graph")
FLAG_RENAMES = {"--cuda-graph-max-bs": "--cuda-graph-max-bs-decode",
                "--disable-piecewise-cuda-graph": "--disable-prefill-cuda-graph"}


def prompts_for(concurrency: int, count: int, input_len: int, vocab: int, seed: int) -> list[list[int]]:
    """The same token-id prompts for every configuration (seeded by concurrency)."""
    rng = random.Random(seed * 100003 + concurrency)
    return [[rng.randrange(10, vocab - 10) for _ in range(input_len)] for _ in range(count)]


# --------------------------------------------------------------------------------------------
# worker: one engine (or one server over HTTP), all concurrencies
# --------------------------------------------------------------------------------------------

def _known_flags_only(argv: list[str], known: set[str], user_flags: set[str]) -> tuple[list[str], list[str]]:
    out, dropped, i = [], [], 0
    while i < len(argv):
        tok = argv[i]
        flag = tok.split("=", 1)[0]
        nxt_is_value = i + 1 < len(argv) and not argv[i + 1].startswith("--")
        if flag.startswith("--") and flag not in known:
            alt = FLAG_RENAMES.get(flag) or {v: k for k, v in FLAG_RENAMES.items()}.get(flag)
            if alt in known:
                out.append(tok.replace(flag, alt, 1))
                i += 1
                continue
            if flag not in user_flags:  # our defaults adapt to the version; the user's args do not
                dropped.append(flag)
                i += 2 if nxt_is_value and "=" not in tok else 1
                continue
        out.append(tok)
        i += 1
    return out, dropped


# the dynamic-disable series' gauges (patch 0004): read after every run of a server with metrics on
SPEC_GAUGE_PREFIX = "sglang:spec_disabled"


def spec_gauges_from_text(text: str) -> dict[str, float]:
    """The series' gauges from Prometheus' text format (``/metrics``): {name: value}. With several
    samples of one name (labels of several ranks), the largest."""
    gauges: dict[str, float] = {}
    for line in text.splitlines():
        if not line.startswith(SPEC_GAUGE_PREFIX):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        try:
            value = float(line.rsplit(" ", 1)[1])
        except (IndexError, ValueError):
            continue
        gauges[name] = max(value, gauges.get(name, value))
    return gauges


def spec_gauges_from_multiprocess_dir(folder: str) -> dict[str, float]:
    """The series' gauges from a Prometheus multiprocess folder, as SGLang's own /metrics merges it
    (prometheus_client comes with SGLang)."""
    from prometheus_client import CollectorRegistry, generate_latest, multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=folder)
    return spec_gauges_from_text(generate_latest(registry).decode())


class EngineDriver:
    def __init__(self, argv: list[str], user_flags: set[str]):
        import argparse

        import sglang
        from sglang.srt.server_args import ServerArgs

        parser = argparse.ArgumentParser()
        ServerArgs.add_cli_args(parser)
        argv, self.dropped = _known_flags_only(argv, set(parser._option_string_actions), user_flags)
        self.server_args = ServerArgs.from_cli_args(parser.parse_args(argv))
        self.version = sglang.__version__
        t = time.time()
        self.engine = sglang.Engine(server_args=self.server_args)
        self.start_s = round(time.time() - t, 1)

    def generate(self, prompts, sampling):
        outs = self.engine.generate(input_ids=prompts, sampling_params=sampling)
        return outs if isinstance(outs, list) else [outs]

    def gauges(self) -> dict[str, float] | None:
        """The series' gauges, from the Prometheus multiprocess folder SGLang's scheduler writes
        when metrics are on (the engine runs in this process, so no /metrics endpoint)."""
        folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        if not getattr(self.server_args, "enable_metrics", False) or not folder:
            return None
        try:
            return spec_gauges_from_multiprocess_dir(folder)
        except Exception as e:  # a reader problem must not lose the timed runs
            print(f"[bench] gauges not read: {e!r}", flush=True)
            return None

    def pool(self, flush: bool) -> dict | None:
        if flush:
            self.engine.flush_cache()
        try:
            states = self.engine.get_server_info().get("internal_states") or []
        except Exception:
            return None
        pools = [s.get("spectrace_pool") for s in states if isinstance(s, dict) and s.get("spectrace_pool")]
        return pools[0] if len(pools) == 1 else ({"ranks": pools} if pools else None)

    def close(self):
        try:
            self.engine.shutdown()
        except Exception:
            pass


class HttpDriver:
    def __init__(self, url: str, version: str | None = None):
        self.url = url.rstrip("/")
        self.version = version
        self.start_s = None
        self.dropped = []
        info = self._get("/get_server_info") or {}
        self.version = info.get("version") or version

    def _post(self, path, payload, timeout=3600):
        req = urllib.request.Request(self.url + path, data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        try:
            return json.loads(body)
        except json.JSONDecodeError:
            return None

    def _get(self, path):
        try:
            with urllib.request.urlopen(self.url + path, timeout=60) as resp:
                return json.loads(resp.read())
        except Exception:
            return None

    def gauges(self) -> dict[str, float] | None:
        """The series' gauges from the server's /metrics (None: metrics off or no such gauges)."""
        try:
            with urllib.request.urlopen(self.url + "/metrics", timeout=60) as resp:
                return spec_gauges_from_text(resp.read().decode()) or None
        except Exception:
            return None

    def generate(self, prompts, sampling):
        from concurrent.futures import ThreadPoolExecutor

        def one(p):
            return self._post("/generate", {"input_ids": p, "sampling_params": sampling})

        with ThreadPoolExecutor(max_workers=len(prompts)) as pool:
            return list(pool.map(one, prompts))

    def pool(self, flush: bool) -> dict | None:
        if flush:
            try:
                self._post("/flush_cache", {})
            except Exception:
                pass
        info = self._get("/get_server_info") or {}
        pools = [s.get("spectrace_pool") for s in info.get("internal_states") or [] if isinstance(s, dict)]
        pools = [p for p in pools if p]
        return pools[0] if len(pools) == 1 else ({"ranks": pools} if pools else None)

    def close(self):
        pass


def _summarize(outs: list[dict]) -> tuple[int, int, int]:
    toks = sum(len(o.get("output_ids") or []) for o in outs)
    ver = sum((o.get("meta_info") or {}).get("spec_verify_ct", 0) or 0 for o in outs)
    ct = sum((o.get("meta_info") or {}).get("completion_tokens", 0) or 0 for o in outs)
    return toks, ct, ver


# more than the dynamic-disable series' 16-position catch-up window, so its flush runs once too
WARM_AFTER_FLUSH_TOKENS = 32


def request_latency(request_ms: list[float], outs: list[dict]) -> dict:
    """C=1's requests one by one: the client's wall time and SGLang's own e2e_latency (its
    tokenizer manager, from the request's arrival to its last output). The difference is what
    the request spent outside the server (the driver, HTTP or the engine's event loop)."""
    server = [(o.get("meta_info") or {}).get("e2e_latency") for o in outs]
    out = {"client_ms": [round(ms, 2) for ms in request_ms]}
    if len(server) == len(request_ms) and all(isinstance(s, (int, float)) for s in server):
        out["server_e2e_ms"] = [round(s * 1e3, 2) for s in server]
    return out


def run_worker(spec: dict) -> dict:
    """Run one configuration; returns (and the caller writes) its result dict."""
    sampling = {"max_new_tokens": spec["output_len"], "ignore_eos": True, "temperature": 0.0}
    vocab = spec.get("vocab_size") or 32000
    if spec.get("url"):
        driver = HttpDriver(spec["url"])
    else:
        driver = EngineDriver(spec["argv"], set(spec.get("user_flags", [])))
    res = {"name": spec["name"], "sglang": driver.version, "args": spec.get("args", ""),
           "shims": spec.get("shims") or "off", "engine_start_s": driver.start_s,
           "dropped_default_flags": driver.dropped, "runs": []}
    print(f"[bench] {spec['name']}: SGLang {driver.version} up in {driver.start_s}s", flush=True)
    try:
        if spec.get("warmup", True):
            driver.generate(prompts_for(0, 2, spec["input_len"], vocab, 7), dict(sampling, max_new_tokens=16))
            driver.generate(prompts_for(0, max(spec["concurrency"]), spec["input_len"], vocab, 8),
                            dict(sampling, max_new_tokens=16))
        # the concurrency list in turn, rep after rep: drift spreads over every level
        plan = [(c, None, rep) for rep in range(spec.get("reps", 1)) for c in spec["concurrency"]]
        if spec.get("ab_states"):
            # the same engine, the shims switched between runs through the toggle file;
            # the order alternates per repetition so that drift does not favour one state
            plan = []
            for c in spec["concurrency"]:
                for rep in range(spec.get("ab_reps", 2)):
                    states = spec["ab_states"] if rep % 2 == 0 else spec["ab_states"][::-1]
                    plan += [(c, st, rep) for st in states]
        for c, state, rep in plan:
            if state is not None:
                Path(spec["toggle_file"]).write_text(state.replace("+", " "))
                time.sleep(0.3)  # the scheduler re-reads the file at most every 0.2 s
            pool_before = driver.pool(flush=True)
            if spec.get("warm_after_flush", True):
                # SGLang's flush_cache also empties the CUDA caching allocator: without this untimed
                # request the run's first steps would allocate afresh, a cost no serving engine pays
                # (and one that grows with the eager work a configuration does)
                warm = prompts_for(c, c, spec["input_len"], vocab, spec["seed"] + 104729 + rep)
                driver.generate(warm, dict(sampling, max_new_tokens=WARM_AFTER_FLUSH_TOKENS))
            # new prompts per repetition (a repeated prompt would hit the prefix cache); rep 0 keeps
            # the prompts of a single-repetition run
            seed = spec["seed"] + (7919 * rep if state is None else 0)
            request_ms = []
            if c == 1:
                prompts = prompts_for(1, spec["seq_reps"], spec["input_len"], vocab, seed)
                outs = []
                for p in prompts:
                    t = time.perf_counter()
                    outs += driver.generate([p], sampling)
                    request_ms.append((time.perf_counter() - t) * 1e3)
                wall = sum(request_ms) / 1e3
            else:
                prompts = prompts_for(c, c, spec["input_len"], vocab, seed)
                t = time.perf_counter()
                outs = driver.generate(prompts, sampling)
                wall = time.perf_counter() - t
            pool_after_run = driver.pool(flush=False)
            gauges = driver.gauges()
            pool_after = driver.pool(flush=True)
            toks, ct, ver = _summarize(outs)
            run = {"concurrency": c, "requests": len(outs), "output_tokens": toks, "wall_s": round(wall, 3),
                   "tok_per_s": round(toks / wall, 1) if wall else None,
                   "accept_len": round(ct / ver, 3) if ver else None,
                   "pool_before": pool_before, "pool_after_run": pool_after_run, "pool_after": pool_after}
            if request_ms:
                run["latency"] = request_latency(request_ms, outs)
            if gauges:
                run["gauges"] = gauges
            if state is not None:
                run.update(shims_state=state, rep=rep)
            elif spec.get("reps", 1) > 1:
                run["rep"] = rep
            if spec.get("save_outputs", True):
                run["output_ids"] = [o.get("output_ids") for o in outs]
            res["runs"].append(run)
            shown = {k: v for k, v in run.items() if k != "output_ids"}
            print(f"[bench] {spec['name']} C={c}{' ' + state if state else ''}: {json.dumps(shown)}", flush=True)
    finally:
        driver.close()
    return res


# --------------------------------------------------------------------------------------------
# orchestration
# --------------------------------------------------------------------------------------------

def parse_config_option(text: str) -> dict:
    if "=" not in text:
        raise SpectraceError(f"--config wants name='server args', got {text!r}")
    name, args = text.split("=", 1)
    if not name.strip():
        raise SpectraceError(f"--config wants name='server args', got {text!r}")
    return {"name": name.strip(), "args": args.strip()}


def load_config_file(path: str) -> tuple[list[dict], dict]:
    p = Path(path)
    try:
        if p.suffix == ".json":
            data = json.loads(p.read_text())
        else:
            try:
                import tomllib
            except ImportError:  # python < 3.11
                import tomli as tomllib

            data = tomllib.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise SpectraceError(f"cannot read {path}: {exc}")
    configs = data.get("config") or data.get("configs") or []
    if not isinstance(configs, list) or not all(isinstance(c, dict) and c.get("name") for c in configs):
        raise SpectraceError(f"{path}: expected a list of configurations with a name each ([[config]])")
    return configs, data.get("defaults") or {}


def _user_flags(args: str) -> list[str]:
    return [t.split("=", 1)[0] for t in shlex.split(args) if t.startswith("--")]


def _wait_for_server(url: str, proc, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SpectraceError(f"the server exited with {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(url + "/health", timeout=5):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(2)
    raise SpectraceError(f"the server at {url} was not ready within {timeout:.0f}s")


def _kill_group(proc) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the engine's scheduler children of this group only
    except ProcessLookupError:
        pass


def run_config(cfg: dict, common: dict, out_dir: Path, log) -> dict:
    from spectrace.shims import runtime

    name = cfg["name"]
    shims = cfg.get("shims", common["shims"]) or "off"
    report = out_dir / f"shims-{name}.jsonl" if shims != "off" else None
    if report and report.exists():
        report.unlink()
    env = runtime.child_environment(shims if shims != "off" else None, str(report) if report else None,
                                    common.get("catalog"), common.get("value_sample"), pool_stats=True)
    if shims == "off":
        env[runtime.ENV_MODE] = "off"
    ab_states = cfg.get("ab") or common.get("ab_states")
    if isinstance(ab_states, str):
        ab_states = [x.strip() for x in ab_states.split(",") if x.strip()]
    toggle = None
    if ab_states and shims != "off":
        toggle = out_dir / f"toggle-{name}"
        toggle.write_text("on")
        env[runtime.ENV_TOGGLE] = str(toggle)
    else:
        ab_states = None
    for key, value in (cfg.get("env") or {}).items():
        if key == "PYTHONPATH":  # e.g. a patched SGLang tree: after the shims' boot dir
            rest = env.get("PYTHONPATH", "").split(os.pathsep)[1:]
            extra = [os.path.abspath(v) for v in str(value).split(os.pathsep) if v]
            env[key] = os.pathsep.join([str(runtime.BOOT_DIR)] + extra + rest)
        else:
            env[key] = str(value)
    python = cfg.get("python") or common.get("python") or sys.executable
    args = " ".join(x for x in (common.get("base_args", ""), cfg.get("args", "")) if x)
    models = common.get("models") or {}
    args_filled = args.format(**models) if models else args
    concurrency = cfg.get("concurrency") or common["concurrency"]
    if isinstance(concurrency, str):
        concurrency = _ints(concurrency)
    spec = {"name": name, "args": args_filled, "shims": shims, "concurrency": concurrency,
            "input_len": common["input_len"], "output_len": common["output_len"], "seq_reps": common["seq_reps"],
            "seed": common["seed"], "vocab_size": common.get("vocab_size"), "warmup": common["warmup"],
            "warm_after_flush": common.get("warm_after_flush", True),
            "save_outputs": common["save_outputs"], "user_flags": _user_flags(cfg.get("args", "")),
            "ab_states": ab_states, "ab_reps": int(cfg.get("ab_reps") or common.get("ab_reps") or 2),
            "reps": int(cfg.get("reps") or common.get("reps") or 1),
            "toggle_file": str(toggle) if toggle else None}
    server = None
    if common.get("url"):
        spec["url"] = common["url"]
    elif common.get("server"):
        port = int(cfg.get("port") or common.get("port") or 30000)
        cmd = [python, "-m", "sglang.launch_server"] + shlex.split(args_filled) + ["--port", str(port)]
        log(f"[bench] {name}: starting server: {' '.join(cmd)}")
        server = subprocess.Popen(cmd, env=env, start_new_session=True,
                                  stdout=open(out_dir / f"server-{name}.log", "w"), stderr=subprocess.STDOUT)
        spec["url"] = f"http://127.0.0.1:{port}"
        _wait_for_server(spec["url"], server, common["timeout"])
    else:
        spec["argv"] = shlex.split(args_filled)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(spec, fh)
        spec_path = fh.name
    result_path = out_dir / f"result-{name}.json"
    if result_path.exists():
        result_path.unlink()
    log_path = out_dir / f"log-{name}.txt"
    t0 = time.time()
    with open(log_path, "w") as logf:
        proc = subprocess.Popen([python, "-m", "spectrace.bench", "--worker", spec_path, "--result", str(result_path)],
                                env=env, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=common["timeout"])
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            _kill_group(proc)
            if server is not None:
                _kill_group(server)
    os.unlink(spec_path)
    if result_path.exists():
        result = json.loads(result_path.read_text())
    else:
        tail = log_path.read_text(errors="replace").splitlines()[-15:]
        result = {"name": name, "args": args_filled, "shims": shims, "runs": [],
                  "error": "timed out" if rc is None else f"exit code {rc}", "log_tail": tail}
        log(f"[bench] {name}: FAILED ({result['error']}); last lines of {log_path}:\n  " + "\n  ".join(tail))
    result["wall_s"] = round(time.time() - t0, 1)
    result["log"] = str(log_path)
    if report is not None:
        result["shims_report"] = str(report)
        if report.exists():
            from spectrace.shims.cli import load_reports

            try:
                rep = load_reports([report])
                result["shim_checks"] = {r.id: {"checks": r.checks, "violations": r.violations}
                                         for r in rep.rows.values()}
                result["shim_total"] = {"checks": rep.total_checks, "violations": rep.total_violations,
                                        "processes": len(rep.processes), "inactive": rep.inactive}
            except SpectraceError as exc:
                result["shim_total"] = {"error": str(exc)}
    return result


def _prompt_set(run: dict) -> int:
    """Runs with the same concurrency and prompt set got the same prompts: repetition r of --reps
    has its own; every run of a shims A/B has those of repetition 0."""
    return 0 if run.get("shims_state") else run.get("rep", 0)


def _match_rate(a: list | None, b: list | None) -> tuple[int, int] | None:
    if not a or not b or len(a) != len(b):
        return None
    same = sum(1 for x, y in zip(a, b) if x == y)
    return same, len(a)


def timed_runs(result: dict) -> dict[int, dict[int, dict]]:
    """{concurrency: {rep: run}} of a configuration's runs outside a shims A/B."""
    out: dict[int, dict[int, dict]] = {}
    for run in result.get("runs", []):
        if not run.get("shims_state"):
            out.setdefault(run["concurrency"], {})[run.get("rep", 0)] = run
    return out


def median_tok_per_s(runs: dict[int, dict]) -> float | None:
    values = [r["tok_per_s"] for r in runs.values() if r.get("tok_per_s")]
    return statistics.median(values) if values else None


def render_markdown(results: list[dict], common: dict, reference: str | None,
                    better_of: list[str] | None = None, mean_of: list[str] | None = None) -> str:
    concs = sorted({run["concurrency"] for r in results for run in r.get("runs", [])} | set(common["concurrency"]))
    reps = common.get("reps", 1)
    lines = [f"Output tokens/s, {common['input_len']} in / {common['output_len']} out, greedy, ignore_eos; "
             f"C=1: {common['seq_reps']} requests one after another, C>1: C requests at once"
             + (f"; median of {reps} repetitions (lowest–highest)." if reps > 1 else ".")
             + (f" Each run follows the pool check's cache flush and one untimed request of its concurrency "
                f"({WARM_AFTER_FLUSH_TOKENS} tokens) that warms the emptied CUDA allocator."
                if common.get("warm_after_flush", True) else
                " Each run follows the pool check's cache flush, which empties the CUDA allocator's cache "
                "(--no-warm-after-flush)."), ""]
    head = "| C | " + " | ".join(f"{r['name']} (shims {r.get('shims', 'off')})" for r in results) + " |"
    lines += [head, "|---" * (len(results) + 1) + "|"]
    timed = [timed_runs(r) for r in results]
    for c in concs:
        cells = []
        for runs in timed:
            at_c = runs.get(c)
            med = median_tok_per_s(at_c) if at_c else None
            if med is None:
                cells.append("-")
                continue
            text = f"{med:,.1f}"
            if len(at_c) > 1:
                values = [r["tok_per_s"] for r in at_c.values() if r.get("tok_per_s")]
                text += f" ({min(values):,.0f}–{max(values):,.0f})"
            accepts = [r["accept_len"] for r in at_c.values() if r.get("accept_len")]
            if accepts:
                text += f" (acc {statistics.median(accepts):.2f})"
            cells.append(text)
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    lines.append("")
    if better_of:
        lines += render_better_of(results, timed, concs, better_of)
    if mean_of:
        lines += render_mean_of(results, timed, concs, mean_of)
    ref = next((r for r in results if r["name"] == reference), results[0] if results else None)
    lines.append("| configuration | SGLang | engine start s | KV pool free before -> after (used after) | "
                 f"greedy outputs equal to `{ref['name'] if ref else '-'}` | shim checks | shim violations |")
    lines.append("|---|---|---|---|---|---|---|")
    for r in results:
        pools = []
        for run in r.get("runs", []):
            b, a = run.get("pool_before") or {}, run.get("pool_after") or {}
            if "token_free" in b and "token_free" in a:
                pools.append(f"C{run['concurrency']}: {b['token_free']}->{a['token_free']}"
                             + (f" ({a.get('token_used')})" if a.get("token_used") else ""))
        same = total = 0
        if ref is not None and ref is not r:
            for run in r.get("runs", []):
                other = next((x for x in ref.get("runs", []) if x["concurrency"] == run["concurrency"]
                              and _prompt_set(x) == _prompt_set(run)), None)
                m = _match_rate(run.get("output_ids"), (other or {}).get("output_ids"))
                if m:
                    same, total = same + m[0], total + m[1]
        match = f"{same}/{total}" if total else ("reference" if r is ref else "-")
        st = r.get("shim_total") or {}
        lines.append(f"| {r['name']} | {r.get('sglang', '?')} | {r.get('engine_start_s', '-')} | "
                     f"{'; '.join(pools) or '-'} | {match} | {st.get('checks', '-')} | {st.get('violations', '-')} |")
        if r.get("error"):
            lines.append(f"|  ↳ {r['name']} failed: {r['error']} | | | | | | |")
    lines += render_request_latency(results)
    gauged = [(r["name"], run) for r in results for run in r.get("runs", []) if run.get("gauges")]
    if gauged:
        names = sorted({k for _, run in gauged for k in run["gauges"]})
        lines += ["", "The dynamic-disable gauges after each run (the scheduler's last report):", "",
                  "| configuration | C | " + " | ".join(f"`{n}`" for n in names) + " |",
                  "|---|---|" + "---|" * len(names)]
        for name, run in gauged:
            c = f"{run['concurrency']}" + (f" rep {run['rep']}" if run.get("rep") else "")
            lines.append(f"| {name} | {c} | " + " | ".join(
                f"{run['gauges'][n]:g}" if n in run["gauges"] else "-" for n in names) + " |")
    for r in results:
        ab = [x for x in r.get("runs", []) if x.get("shims_state")]
        if not ab:
            continue
        states = list(dict.fromkeys(x["shims_state"] for x in ab))
        lines += ["", f"Shims A/B in one engine (`{r['name']}`), output tokens/s, mean of "
                  f"{max(x['rep'] for x in ab) + 1} runs each, alternating order:", "",
                  "| C | " + " | ".join(states) + " | " + " | ".join(f"{st} / {states[0]}" for st in states[1:]) + " |",
                  "|---" * (2 * len(states)) + "|"]
        for c in sorted({x["concurrency"] for x in ab}):
            means = {}
            for st in states:
                vals = [x["tok_per_s"] for x in ab if x["concurrency"] == c and x["shims_state"] == st and x.get("tok_per_s")]
                means[st] = sum(vals) / len(vals) if vals else None
            ratios = [f"{means[st] / means[states[0]]:.4f}" if means[st] and means[states[0]] else "-" for st in states[1:]]
            lines.append(f"| {c} | " + " | ".join(f"{means[st]:,.1f}" if means[st] else "-" for st in states)
                         + " | " + " | ".join(ratios) + " |")
    return "\n".join(lines) + "\n"


def render_request_latency(results: list[dict], between: str = "the pool check and cache flush") -> list[str]:
    """C=1 per request, over every repetition: where a slower configuration's time goes (inside
    SGLang's e2e_latency, or outside it, on the way to and from the server). A run's first request
    follows what ran ``between`` runs (bench/gpu/compare_outputs.py tables probe_dd.py's records
    with this too, where that is another concurrency's run), so it has columns of its own."""
    rows = []
    for r in results:
        later: dict[str, list[float]] = {"client": [], "server": [], "outside": []}
        first: dict[str, list[float]] = {"client": [], "server": []}
        for run in timed_runs(r).get(1, {}).values():
            lat = run.get("latency") or {}
            client, server = lat.get("client_ms", []), lat.get("server_e2e_ms")
            for i, c in enumerate(client):
                s = server[i] if server and i < len(server) else None
                if i == 0:
                    first["client"].append(c)
                    if s is not None:
                        first["server"].append(s)
                    continue
                later["client"].append(c)
                if s is not None:
                    later["server"].append(s)
                    later["outside"].append(c - s)
        if not first["client"]:
            continue
        cells = [later["client"], later["server"], later["outside"], first["client"], first["server"]]
        every = later["client"] + first["client"]
        rows.append(f"| {r['name']} | {len(every)} | " + " | ".join(
            f"{statistics.median(v):,.1f}" if v else "-" for v in cells) + f" | {max(every):,.1f} |")
    if not rows:
        return []
    return ["", "C=1 per request, every repetition (median ms): the client's wall time, SGLang's "
            "`e2e_latency`, and the difference (outside the server's tokenizer manager); a run's first "
            f"request apart (it follows {between}):", "",
            "| configuration | requests | client ms | server e2e ms | outside ms | first request: client ms "
            "| first request: server e2e ms | slowest client ms |",
            "|---|---|---|---|---|---|---|---|"] + rows


def render_mean_of(results: list[dict], timed: list[dict], concs: list[int], mean_of: list[str]) -> list[str]:
    """Each configuration's median as a ratio to the mean of the named engines' medians: two
    engines of one reference configuration differ by 1-2 % at C=1, and the better of them
    (--better-of) is the luckier one, not the reference."""
    by_name = dict(zip((r["name"] for r in results), timed))
    lines = [f"Ratio to the mean of the medians of {' and '.join(mean_of)} at each C:", "",
             "| C | mean tok/s | " + " | ".join(r["name"] for r in results) + " |",
             "|---" * (len(results) + 2) + "|"]
    for c in concs:
        medians = [median_tok_per_s(by_name[n][c]) if c in by_name.get(n, {}) else None for n in mean_of]
        if not all(medians):
            continue
        mean = statistics.fmean(medians)
        cells = [f"{median_tok_per_s(runs[c]) / mean:.3f}" if c in runs and median_tok_per_s(runs[c]) else "-"
                 for runs in timed]
        lines.append(f"| {c} | {mean:,.1f} | " + " | ".join(cells) + " |")
    return lines + [""]


def render_better_of(results: list[dict], timed: list[dict], concs: list[int], better_of: list[str]) -> list[str]:
    """Issue 5's goal: each configuration's median as a ratio to the better of the named ones."""
    by_name = dict(zip((r["name"] for r in results), timed))
    lines = [f"Ratio to the better of {' / '.join(better_of)} at each C (medians; lowest–highest of rep r "
             "against rep r of the better one):", "",
             "| C | better | " + " | ".join(r["name"] for r in results) + " |",
             "|---" * (len(results) + 2) + "|"]
    for c in concs:
        medians = {n: median_tok_per_s(by_name[n][c]) for n in better_of if c in by_name.get(n, {})}
        medians = {n: m for n, m in medians.items() if m}
        if not medians:
            continue
        best = max(medians, key=medians.get)
        cells = []
        for runs in timed:
            med = median_tok_per_s(runs[c]) if c in runs else None
            if med is None:
                cells.append("-")
                continue
            ratios = [run["tok_per_s"] / by_name[best][c][rep]["tok_per_s"] for rep, run in runs[c].items()
                      if run.get("tok_per_s") and by_name[best][c].get(rep, {}).get("tok_per_s")]
            text = f"{med / medians[best]:.3f}"
            if len(ratios) > 1:
                text += f" ({min(ratios):.3f}–{max(ratios):.3f})"
            cells.append(text)
        lines.append(f"| {c} | {best} | " + " | ".join(cells) + " |")
    return lines + [""]


def summarize(results: list[dict], common: dict, reference: str | None, better: list[str],
              mean: list[str], pending: list[str]) -> tuple[dict, str]:
    """bench.json's content and bench.md for the configurations run so far; ``pending`` names
    those still to run."""
    summary = {"common": {k: v for k, v in common.items() if k != "models"}, "results": results}
    md = render_markdown(results, common, reference, better, mean)
    if pending:
        summary["pending"] = pending
        md = f"Partial: configurations not run yet: {', '.join(pending)}.\n\n" + md
    return summary, md


def render_plot(results: list[dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in results:
        points = sorted((c, median_tok_per_s(runs)) for c, runs in timed_runs(r).items())
        points = [(c, m) for c, m in points if m]
        if points:
            label = r["name"] + ("" if r.get("shims", "off") == "off" else f" (shims {r['shims']})")
            ax.plot([c for c, _ in points], [m for _, m in points], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("concurrency")
    ax.set_ylabel("output tokens/s")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def threading_is_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _ints(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SpectraceError(f"expected comma-separated integers, got {text!r}")
    if not values or min(values) < 1:
        raise SpectraceError(f"expected positive integers, got {text!r}")
    return values


def bench(configs: list[dict], *, out_dir: str, concurrency: list[int], input_len: int = 128,
          output_len: int = 128, seq_reps: int = 3, shims: str = "off", catalog: str | None = None,
          value_sample: int | None = None, dummy_model: str | None = None, base_args: str = "",
          url: str | None = None, server: bool = False, port: int | None = None, timeout: float = 900,
          warmup: bool = True, save_outputs: bool = True, plot: bool = True, reference: str | None = None,
          seed: int = 1234, vocab_size: int | None = None, python: str | None = None,
          warm_after_flush: bool = True,
          ab_states: str | None = None, ab_reps: int = 2, reps: int = 1, better_of: str | None = None,
          mean_of: str | None = None, log=print) -> dict:
    if not configs:
        raise SpectraceError("no configuration: give --config name='server args' or --configs FILE")
    names = [c["name"] for c in configs]
    if len(set(names)) != len(names):
        raise SpectraceError(f"configuration names must be unique: {names}")
    if reps < 1:
        raise SpectraceError(f"--reps must be at least 1, got {reps}")
    better = [n.strip() for n in (better_of or "").split(",") if n.strip()]
    mean = [n.strip() for n in (mean_of or "").split(",") if n.strip()]
    for option, listed in (("--better-of", better), ("--mean-of", mean)):
        unknown = [n for n in listed if n not in names]
        if unknown:
            raise SpectraceError(f"{option} names no configuration {unknown} (configurations: {names})")
    if catalog:
        from spectrace.shims import runtime

        try:
            runtime.load_runtime_catalog(catalog)
        except Exception as exc:
            raise SpectraceError(f"cannot read the contract catalog: {exc}")
    if plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise SpectraceError("the plot needs matplotlib: pip install 'spectrace[bench]', or pass --no-plot")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # a SIGTERM (e.g. from `timeout`) unwinds through run_config, which ends the engine's group
    if threading_is_main():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    models = {}
    if dummy_model:
        models = write_dummy_models(dummy_model, out / "models")
        vocab_size = vocab_size or models["vocab_size"]
        base_args = " ".join(x for x in (DUMMY_DEFAULT_ARGS, base_args) if x)
    common = dict(concurrency=concurrency, input_len=input_len, output_len=output_len, seq_reps=seq_reps,
                  shims=shims, catalog=catalog, value_sample=value_sample, base_args=base_args, url=url,
                  server=server, port=port, timeout=timeout, warmup=warmup, warm_after_flush=warm_after_flush,
                  save_outputs=save_outputs, seed=seed, vocab_size=vocab_size or 32000, models=models, python=python,
                  ab_states=ab_states, ab_reps=ab_reps, reps=reps)
    results = []
    for i, cfg in enumerate(configs):
        log(f"[bench] configuration {cfg['name']}: {cfg.get('args', '')} (shims {cfg.get('shims', shims)})")
        r = run_config(cfg, common, out, log)
        results.append(r)
        for run in r.get("runs", []):
            log(f"[bench]   C={run['concurrency']}: {run.get('tok_per_s')} tok/s, accept {run.get('accept_len')}")
        if r.get("shim_total"):
            log(f"[bench]   shims: {r['shim_total']}")
        # after every configuration: a bench stopped by a time budget keeps the finished ones' table
        summary, md = summarize(results, common, reference, better, mean, pending=names[i + 1:])
        (out / "bench.json").write_text(json.dumps(summary, indent=1, default=str))
        (out / "bench.md").write_text(md)
    if plot:
        render_plot(results, out / "bench.png", f"{input_len} in / {output_len} out, greedy")
    log(md)
    return summary


if click is not None:
    @click.command("bench")
    @click.option("--config", "config_opts", multiple=True, metavar="NAME='SERVER ARGS'",
                  help="A configuration: a name and SGLang server arguments (repeatable).")
    @click.option("--configs", "config_file", type=click.Path(exists=True, dir_okay=False),
                  help="TOML ([[config]] name, args, shims, env, python) or JSON file of configurations.")
    @click.option("--concurrency", default="1,4,16,64,128", show_default=True)
    @click.option("--input-len", type=int, default=128, show_default=True)
    @click.option("--output-len", type=int, default=128, show_default=True)
    @click.option("--seq-reps", type=int, default=3, show_default=True,
                  help="Requests sent one after another at concurrency 1.")
    @click.option("--shims", type=click.Choice(("off", "warn", "raise", "record")), default="off", show_default=True,
                  help="Runtime shims in every configuration (a configuration's own `shims` wins).")
    @click.option("--catalog", default=None, help="Contract catalog(s) for the shims (as for spectrace run).")
    @click.option("--value-sample", type=int, default=None, help="Shims' device value check every N-th step.")
    @click.option("--dummy-model", type=click.Choice(sorted(SHAPES)), default=None,
                  help="Write dummy Llama target / EAGLE-3 draft configs; {target} and {draft} in args.")
    @click.option("--base-args", default="", help="Server arguments common to every configuration.")
    @click.option("--url", default=None, help="Attach to a running server instead of starting engines.")
    @click.option("--server", is_flag=True, help="Start sglang.launch_server per configuration (HTTP).")
    @click.option("--port", type=int, default=None)
    @click.option("--timeout", type=float, default=900, show_default=True, help="Seconds per configuration.")
    @click.option("--warmup/--no-warmup", default=True, show_default=True)
    @click.option("--warm-after-flush/--no-warm-after-flush", default=True, show_default=True,
                  help="Before each timed run, after the pool check's cache flush (which empties the CUDA "
                       "allocator's cache), one untimed request of the run's concurrency, so the run starts "
                       "from a warm allocator as a serving engine does.")
    @click.option("--save-outputs/--no-save-outputs", default=True, show_default=True,
                  help="Keep greedy output ids in the json (for output-equality comparisons).")
    @click.option("--plot/--no-plot", default=True, show_default=True)
    @click.option("--shims-ab", default=None, metavar="STATES",
                  help="Overhead A/B in one engine per configuration with shims: e.g. 'off,on' or "
                       "'off,on+nomonitoring+novalue,on' (switched between runs through a toggle file).")
    @click.option("--ab-reps", type=int, default=2, show_default=True, help="Repetitions of each A/B state.")
    @click.option("--reps", type=int, default=1, show_default=True,
                  help="Time the concurrency list this many times in turn per engine (new prompts each time); "
                       "the tables show medians.")
    @click.option("--better-of", default=None, metavar="A,B",
                  help="Also tabulate every configuration's median as a ratio to the better of these "
                       "configurations at each concurrency (e.g. baseline,always-on).")
    @click.option("--mean-of", default=None, metavar="A,B",
                  help="Also tabulate every configuration's median as a ratio to the mean of these "
                       "configurations' medians (e.g. two engines of the baseline: baseline,baseline2).")
    @click.option("--reference", default=None, help="Configuration the others' outputs are compared with.")
    @click.option("--seed", type=int, default=1234, show_default=True)
    @click.option("--vocab-size", type=int, default=None, help="Token-id range of the prompts (dummy: from the model).")
    @click.option("--python", default=None, help="Python executable for the engines (default: this one).")
    @click.option("-o", "--out", "out_dir", default="bench-out", show_default=True)
    def bench_command(config_opts, config_file, concurrency, input_len, output_len, seq_reps, shims, catalog,
                      value_sample, dummy_model, base_args, url, server, port, timeout, warmup,
                      warm_after_flush, save_outputs, plot, shims_ab, ab_reps, reps, better_of, mean_of,
                      reference, seed, vocab_size, python, out_dir):
        """Throughput vs concurrency, one SGLang engine per configuration, shims on or off.

        \b
          spectrace bench --dummy-model 8b --shims warn -o out \\
            --base-args '--max-running-requests 128 --cuda-graph-max-bs 128' \\
            --config baseline='' \\
            --config eagle3='--speculative-algorithm EAGLE3 --speculative-draft-model-path {draft}
                             --speculative-eagle-topk 1 --speculative-num-steps 3 --speculative-num-draft-tokens 4'
        """
        configs = [parse_config_option(c) for c in config_opts]
        defaults = {}
        if config_file:
            file_configs, defaults = load_config_file(config_file)
            configs = file_configs + configs
        if url and server:
            raise SpectraceError("--url and --server exclude each other")
        bench(configs, out_dir=out_dir, concurrency=_ints(concurrency), input_len=input_len, output_len=output_len,
              seq_reps=seq_reps, shims=defaults.get("shims", shims) if shims == "off" else shims, catalog=catalog,
              value_sample=value_sample, dummy_model=dummy_model or defaults.get("dummy_model"),
              base_args=" ".join(x for x in (defaults.get("args", ""), base_args) if x), url=url, server=server,
              port=port, timeout=timeout, warmup=warmup, warm_after_flush=warm_after_flush,
              save_outputs=save_outputs, plot=plot, reference=reference,
              seed=seed, vocab_size=vocab_size, python=python, ab_states=shims_ab, ab_reps=ab_reps,
              reps=reps, better_of=better_of, mean_of=mean_of, log=lambda m: click.echo(m, err=True))


def _worker_main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m spectrace.bench")
    ap.add_argument("--worker", required=True)
    ap.add_argument("--result", required=True)
    a = ap.parse_args(argv)
    spec = json.loads(Path(a.worker).read_text())
    result = run_worker(spec)
    Path(a.result).write_text(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(_worker_main(sys.argv[1:]))
