"""A local stand-in of SGLang's HTTP API for the bench tests (the real server needs a GPU):
``/generate`` with token ids, ``/flush_cache``, ``/get_server_info``, ``/metrics`` and ``/health``.

Run as a script (``python http_standin.py PORT``) it serves until killed, which is how the
``--server`` test's stand-in ``sglang.launch_server`` uses it."""

from __future__ import annotations

import json
import time
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StandInApi(BaseHTTPRequestHandler):
    """Greedy "model": each output token is (sum of the prompt + position) mod 1000."""

    calls = {"generate": 0, "flush": 0}
    # what /metrics serves (Prometheus' text format); tests set it
    metrics_text = ""

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
            body = StandInApi.metrics_text.encode()
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
        if self.path == "/generate":
            StandInApi.calls["generate"] += 1
            n = payload["sampling_params"]["max_new_tokens"]
            base = sum(payload["input_ids"])
            time.sleep(0.002)  # some server time, so that every run's wall time is above zero
            self._send({"output_ids": [(base + i) % 1000 for i in range(n)],
                        "meta_info": {"completion_tokens": n, "spec_verify_ct": n // 2}})
        else:
            StandInApi.calls["flush"] += 1
            self._send({})


def serve(port: int) -> None:
    ThreadingHTTPServer(("127.0.0.1", port), StandInApi).serve_forever()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
