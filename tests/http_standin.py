"""A local stand-in of SGLang's HTTP API for the bench tests (the real server needs a GPU):
``/generate`` with token ids (streamed as server-sent events where ``stream`` is set),
``/flush_cache``, ``/get_server_info``, ``/metrics`` and ``/health``.

Run as a script (``python http_standin.py PORT``) it serves until killed, which is how the
``--server`` test's stand-in ``sglang.launch_server`` uses it."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StandInApi(BaseHTTPRequestHandler):
    """Greedy "model": each output token is (sum of the prompt + position) mod 1000. A streamed
    request gets its tokens in chunks of ``accept(prompt)`` tokens (one "verify step" each, that
    many minus one correct drafts), ``STEP_S`` apart; ``cached_tokens`` is the longest earlier
    request's prompt and output that the prompt starts with (a radix cache of everything seen)."""

    calls = {"generate": 0, "flush": 0}
    # what /metrics serves (Prometheus' text format); tests set it
    metrics_text = ""
    accept = staticmethod(lambda prompt: 2)
    incremental = False  # SGLang's --incremental-streaming-output: each chunk's new ids only
    STEP_S = 0.002
    running = 0
    seen: list[tuple[int, ...]] = []
    lock = threading.Lock()

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
        if self.path == "/metrics":
            body = (StandInApi.metrics_text + f"\nsglang:num_running_reqs{{tp_rank=\"0\"}} {StandInApi.running}.0\n").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/get_server_info":
            self._send({"version": "stand-in", "internal_states": [
                {"spectrace_pool": {"token_free": 1000, "token_capacity": 1000, "token_used": 0}}]})
        else:
            self._send({})

    def do_POST(self):
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
        if self.path == "/generate" and payload.get("stream"):
            self._stream(payload)
        elif self.path == "/generate":
            StandInApi.calls["generate"] += 1
            n = payload["sampling_params"]["max_new_tokens"]
            base = sum(payload["input_ids"])
            time.sleep(0.002)  # some server time, so that every run's wall time is above zero
            self._send({"output_ids": [(base + i) % 1000 for i in range(n)],
                        "meta_info": {"completion_tokens": n, "spec_verify_ct": n // 2}})
        else:
            StandInApi.calls["flush"] += 1
            if self.path == "/flush_cache":
                StandInApi.seen.clear()
            self._send({})


    def _stream(self, payload):
        cls = StandInApi
        prompt = payload["input_ids"]
        n = payload["sampling_params"]["max_new_tokens"]
        ids = [(sum(prompt) + i) % 1000 for i in range(n)]
        with cls.lock:
            cls.calls["generate"] += 1
            cls.running += 1
            cached = max((len(s) for s in cls.seen if tuple(prompt[:len(s)]) == s), default=0)
        step = max(1, int(cls.accept(prompt)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        try:
            done, verify = 0, 0
            while done < n:
                time.sleep(cls.STEP_S)
                new = 1 if done == 0 else min(step, n - done)  # the prefill's token, then verify steps
                verify += done > 0
                done += new
                meta = {"completion_tokens": done, "cached_tokens": cached, "spec_verify_ct": verify,
                        "spec_num_correct_drafts": done - 1 - verify}
                chunk = {"output_ids": ids[done - new:done] if cls.incremental else ids[:done], "meta_info": meta}
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
        finally:
            with cls.lock:
                cls.running -= 1
                cls.seen.append(tuple(prompt) + tuple(ids))


class StandInServer(ThreadingHTTPServer):
    request_queue_size = 256  # a serving run's bursts and a warm-up of C=128 connect at once
    daemon_threads = True


def serve(port: int) -> None:
    StandInServer(("127.0.0.1", port), StandInApi).serve_forever()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
