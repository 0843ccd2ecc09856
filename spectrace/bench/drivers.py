"""Two ways to send the bench's requests: an in-process ``sglang.Engine`` (EngineDriver) or a
running server over HTTP (HttpDriver). Both return SGLang's output dicts and read the KV-pool
counters that the shims' pool statistics add to ``get_server_info()``."""

from __future__ import annotations

import json
import os
import time
import urllib.request

from spectrace.bench.gauges import spec_gauges_from_multiprocess_dir, spec_gauges_from_text

# SGLang's profiler (ProfileReq) with device activity only: kernel timings, no Python stacks or shapes
PROFILE_OPTIONS = {"activities": ["GPU"], "with_stack": False, "record_shapes": False}

# flags renamed between SGLang versions, either way
FLAG_RENAMES = {"--cuda-graph-max-bs": "--cuda-graph-max-bs-decode",
                "--disable-piecewise-cuda-graph": "--disable-prefill-cuda-graph"}


def known_flags_only(argv: list[str], known: set[str], user_flags: set[str]) -> tuple[list[str], list[str]]:
    """``argv`` with renamed flags mapped to this version's names and unknown default flags
    dropped; returns (argv, dropped flags). The user's own flags are kept, so that SGLang's
    parser reports a mistyped one; so is a unique prefix of a known flag (``--tp`` for
    ``--tp-size``), which SGLang's parser takes as that flag."""
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
            abbreviates = len([k for k in known if k.startswith(flag)]) == 1
            if flag not in user_flags and not abbreviates:
                dropped.append(flag)
                i += 2 if nxt_is_value and "=" not in tok else 1
                continue
        out.append(tok)
        i += 1
    return out, dropped


def _single_pool(states) -> dict | None:
    pools = [s.get("spectrace_pool") for s in states or [] if isinstance(s, dict) and s.get("spectrace_pool")]
    return pools[0] if len(pools) == 1 else ({"ranks": pools} if pools else None)


class EngineDriver:
    def __init__(self, argv: list[str], user_flags: set[str]):
        import argparse

        import sglang
        from sglang.srt.server_args import ServerArgs

        parser = argparse.ArgumentParser()
        ServerArgs.add_cli_args(parser)
        argv, self.dropped = known_flags_only(argv, set(parser._option_string_actions), user_flags)
        self.server_args = ServerArgs.from_cli_args(parser.parse_args(argv))
        self.version = sglang.__version__
        t = time.time()
        self.engine = sglang.Engine(server_args=self.server_args)
        self.start_s = round(time.time() - t, 1)

    def generate(self, prompts, sampling):
        outs = self.engine.generate(input_ids=prompts, sampling_params=sampling)
        return outs if isinstance(outs, list) else [outs]

    def gauges(self) -> dict[str, float] | None:
        folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        if not getattr(self.server_args, "enable_metrics", False) or not folder:
            return None
        try:
            return spec_gauges_from_multiprocess_dir(folder)
        except Exception as e:  # a reader problem must not lose the timed runs
            print(f"[bench] gauges not read: {e!r}", flush=True)
            return None

    def start_profile(self, output_dir: str) -> None:
        self.engine.start_profile(**PROFILE_OPTIONS, output_dir=output_dir)

    def stop_profile(self) -> None:
        self.engine.stop_profile()

    def pool(self, flush: bool) -> dict | None:
        if flush:
            self.engine.flush_cache()
        try:
            return _single_pool(self.engine.get_server_info().get("internal_states"))
        except Exception:
            return None

    def close(self):
        try:
            self.engine.shutdown()
        except Exception:
            pass


class HttpDriver:
    def __init__(self, url: str):
        self.url = url.rstrip("/")
        self.start_s = None
        self.dropped = []
        self.version = (self._get("/get_server_info") or {}).get("version")

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
        try:
            with urllib.request.urlopen(self.url + "/metrics", timeout=60) as resp:
                return spec_gauges_from_text(resp.read().decode()) or None
        except Exception:
            return None

    def generate(self, prompts, sampling):
        from concurrent.futures import ThreadPoolExecutor

        params = sampling if isinstance(sampling, list) else [sampling] * len(prompts)  # one per request

        def one(p, s):
            return self._post("/generate", {"input_ids": p, "sampling_params": s})

        with ThreadPoolExecutor(max_workers=len(prompts)) as pool:
            return list(pool.map(one, prompts, params))

    def start_profile(self, output_dir: str) -> None:
        self._post("/start_profile", dict(PROFILE_OPTIONS, output_dir=output_dir))

    def stop_profile(self) -> None:
        self._post("/stop_profile", {})

    def pool(self, flush: bool) -> dict | None:
        if flush:
            try:
                self._post("/flush_cache", {})
            except Exception:
                pass
        return _single_pool((self._get("/get_server_info") or {}).get("internal_states"))

    def close(self):
        pass
