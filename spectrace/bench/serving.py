"""The serving run: a workload's schedule sent to an SGLang server over HTTP as it unfolds (open
loop: each conversation's first turn at its arrival time, each later turn after the earlier one's
output and a pause), every request streamed, so that its first token's and every later chunk's
arrival time are known; and the server's metrics sampled meanwhile. As ``sglang.bench_serving``
measures: TTFT is the first chunk's time after the request was sent, TPOT the time of the other
tokens over their count, ITL each chunk's gap spread over its tokens."""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass, field

from spectrace.bench.gauges import metric_values
from spectrace.bench.workload import Conversation

# the server's gauges sampled during the run (absent ones are left out)
SAMPLED = {"running": "sglang:num_running_reqs", "queued": "sglang:num_queue_reqs",
           "spec_disabled": "sglang:spec_disabled"}
SAMPLE_EVERY_S = 0.5


@dataclass
class RequestRecord:
    """One turn of one conversation as the client saw it; times in seconds from the run's start
    (``sent_s``) or from the request's send (``chunks``)."""

    conversation: int
    turn: int
    kind: str
    phase: str  # the phase the request was sent in
    sent_s: float
    prompt_len: int
    chunks: list[tuple[float, int]] = field(default_factory=list)  # (time after send, output tokens so far)
    output_ids: list[int] = field(default_factory=list)
    meta: dict = field(default_factory=dict)  # the last chunk's speculative and cache counters
    error: str | None = None


@dataclass
class MetricSample:
    t_s: float
    values: dict[str, float]


META_KEPT = ("completion_tokens", "cached_tokens", "spec_verify_ct", "spec_num_correct_drafts")


def stream_generate(base: str, payload: dict, record: RequestRecord, t0: float, timeout: float) -> None:
    """POST /generate with ``stream``; fills ``record`` chunk by chunk. Output ids may come
    cumulative (SGLang's default) or as deltas (``--incremental-streaming-output``): a chunk holding
    as many ids as completion tokens so far is the whole output."""
    url = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    try:
        sent = time.perf_counter()
        record.sent_s = round(sent - t0, 5)
        conn.request("POST", "/generate", body=json.dumps(dict(payload, stream=True)),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        if resp.status != 200:
            record.error = f"HTTP {resp.status}: {resp.read(200).decode(errors='replace')}"
            return
        for raw in resp:
            line = raw.strip()
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                break
            chunk = json.loads(data)
            if "error" in chunk:
                record.error = str(chunk["error"])[:200]
                break
            now = time.perf_counter()
            meta = chunk.get("meta_info") or {}
            ids = chunk.get("output_ids") or []
            total = int(meta.get("completion_tokens", len(record.output_ids) + len(ids)))
            record.output_ids = list(ids) if len(ids) == total else record.output_ids + list(ids)
            if not record.chunks or total > record.chunks[-1][1]:
                record.chunks.append((round(now - sent, 5), total))
            record.meta = {k: meta[k] for k in META_KEPT if k in meta}
    except (OSError, http.client.HTTPException, ValueError) as exc:
        record.error = f"{type(exc).__name__}: {exc}"[:200]
    finally:
        conn.close()


class ServingRun:
    """One configuration's run of a schedule: a thread per conversation in flight, one sampling
    the server's metrics."""

    def __init__(self, base: str, schedule: list[Conversation], phase_at, timeout: float = 3600):
        self.base = base.rstrip("/")
        self.schedule = schedule
        self.phase_at = phase_at
        self.timeout = timeout
        self.records: list[RequestRecord] = []
        self.samples: list[MetricSample] = []
        self._lock = threading.Lock()
        self._done = threading.Event()

    def _conversation(self, conv: Conversation, t0: float, sampling: dict) -> None:
        context: list[int] = []
        for i, turn in enumerate(conv.turns):
            if i:
                time.sleep(turn.think_s)
            context = context + list(turn.new_tokens)
            record = RequestRecord(conv.id, i, conv.kind, "", 0.0, len(context))
            payload = {"input_ids": context, "sampling_params": dict(sampling, max_new_tokens=turn.output_len)}
            stream_generate(self.base, payload, record, t0, self.timeout)
            record.phase = self.phase_at(record.sent_s)
            with self._lock:
                self.records.append(record)
            if record.error:
                return  # a later turn would resend an output the server did not give
            context = context + record.output_ids

    def _sample(self, t0: float) -> None:
        while not self._done.wait(SAMPLE_EVERY_S):
            try:
                with urllib.request.urlopen(self.base + "/metrics", timeout=5) as resp:
                    text = resp.read().decode(errors="replace")
            except OSError:
                continue
            values = metric_values(text, set(SAMPLED.values()))
            if values:
                self.samples.append(MetricSample(round(time.perf_counter() - t0, 3),
                                                 {k: values[n] for k, n in SAMPLED.items() if n in values}))

    def run(self, sampling: dict) -> float:
        """Send the whole schedule; returns the run's wall time (to the last request's end)."""
        t0 = time.perf_counter()
        sampler = threading.Thread(target=self._sample, args=(t0,), daemon=True)
        sampler.start()
        threads = []
        for conv in self.schedule:
            delay = conv.arrival_s - (time.perf_counter() - t0)
            if delay > 0:
                time.sleep(delay)
            th = threading.Thread(target=self._conversation, args=(conv, t0, sampling), daemon=True)
            th.start()
            threads.append(th)
        for th in threads:
            th.join()
        wall = time.perf_counter() - t0
        self._done.set()
        sampler.join()
        self.records.sort(key=lambda r: (r.conversation, r.turn))
        return wall

    def result(self) -> dict:
        return {"requests": [asdict(r) for r in self.records], "samples": [asdict(s) for s in self.samples]}
