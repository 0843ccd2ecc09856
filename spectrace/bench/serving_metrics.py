"""What a serving run's request records give (serving.RequestRecord, as bench.json holds them):
per request its latencies and decode steps, per window of time (a phase, the whole run, a plot's
bin) the figures ``sglang.bench_serving`` reports, and goodput against a TPOT limit."""

from __future__ import annotations

from dataclasses import dataclass


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile with linear interpolation between ranks (numpy's default)."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass(frozen=True)
class RequestTimes:
    """One finished request: seconds, from its record."""

    sent_s: float
    ttft_s: float
    e2e_s: float
    tokens: int
    itls_s: tuple[float, ...]  # one per token after the first: a chunk's gap spread over its tokens
    verify_steps: int
    plain_steps: int
    correct_drafts: int
    cached_tokens: int
    prompt_len: int

    @property
    def tpot_s(self) -> float | None:
        return (self.e2e_s - self.ttft_s) / (self.tokens - 1) if self.tokens > 1 else None

    @property
    def end_s(self) -> float:
        return self.sent_s + self.e2e_s


def request_times(record: dict) -> RequestTimes | None:
    """None for a request that failed or produced nothing."""
    chunks = record.get("chunks") or []
    if record.get("error") or not chunks:
        return None
    itls = []
    for (t0, n0), (t1, n1) in zip(chunks, chunks[1:]):
        itls += [(t1 - t0) / (n1 - n0)] * (n1 - n0)
    meta = record.get("meta") or {}
    tokens = chunks[-1][1]
    verify = int(meta.get("spec_verify_ct") or 0)
    correct = meta.get("spec_num_correct_drafts")
    if correct is None:  # a release without the counter: every decode step of a speculative request verified
        correct = max(0, tokens - 1 - verify) if verify else 0
    plain = max(0, tokens - 1 - verify - int(correct))
    return RequestTimes(sent_s=record["sent_s"], ttft_s=chunks[0][0], e2e_s=chunks[-1][0], tokens=tokens,
                        itls_s=tuple(itls), verify_steps=verify, plain_steps=plain, correct_drafts=int(correct),
                        cached_tokens=int(meta.get("cached_tokens") or 0), prompt_len=int(record.get("prompt_len") or 0))


def tokens_in_window(records: list[dict], start: float, end: float) -> int:
    """Output tokens whose chunk arrived within [start, end) seconds of the run."""
    total = 0
    for r in records:
        last = 0
        for t, n in r.get("chunks") or []:
            if start <= r["sent_s"] + t < end:
                total += n - last
            last = n
    return total


def _last_chunk_s(record: dict) -> float:
    """When the request's last chunk arrived (its send time where none did)."""
    chunks = record.get("chunks") or []
    return record["sent_s"] + (chunks[-1][0] if chunks else 0.0)


def mean_in_flight(records: list[dict], start: float, end: float) -> float:
    """Requests between send and last chunk, averaged over [start, end)."""
    busy = sum(max(0.0, min(_last_chunk_s(r), end) - max(r["sent_s"], start)) for r in records)
    return busy / (end - start) if end > start else 0.0


def in_flight_at(records: list[dict], t: float) -> int:
    """Requests sent before ``t`` whose last chunk had not arrived by ``t``."""
    return sum(1 for r in records if r["sent_s"] < t < _last_chunk_s(r))


@dataclass(frozen=True)
class WindowSummary:
    requests: int
    failed: int
    tok_per_s: float | None
    in_flight: float
    in_flight_ends: tuple[int, int]  # at the window's start and at its end: a growing queue
    ttft_ms: tuple[float | None, float | None]  # p50, p99
    tpot_ms: tuple[float | None, float | None]
    itl_ms: tuple[float | None, float | None]
    e2e_s: tuple[float | None, float | None]
    good: int  # finished with TPOT within the limit
    spec_step_share: float | None  # verify steps over decode steps
    accept_len: float | None  # tokens per verify step, bonus included
    cached_share: float | None  # prompt tokens the radix cache served


def _p50_p99(values: list[float], scale: float) -> tuple[float | None, float | None]:
    p50, p99 = percentile(values, 50), percentile(values, 99)
    return (None if p50 is None else p50 * scale, None if p99 is None else p99 * scale)


def summarize_requests(selected: list[dict], all_records: list[dict], start: float, end: float,
                       tpot_limit_ms: float) -> WindowSummary:
    """``selected``: the records sent in the window (latencies, goodput, steps); tokens per second
    and requests in flight count every record's activity inside [start, end)."""
    times = [t for t in map(request_times, selected) if t is not None]
    tpots = [t.tpot_s for t in times if t.tpot_s is not None]
    verify = sum(t.verify_steps for t in times)
    steps = verify + sum(t.plain_steps for t in times)
    prompt = sum(t.prompt_len for t in times)
    good = sum(1 for t in times if t.tpot_s is None or t.tpot_s * 1000 <= tpot_limit_ms)
    return WindowSummary(
        requests=len(selected), failed=len(selected) - len(times),
        tok_per_s=tokens_in_window(all_records, start, end) / (end - start) if end > start else None,
        in_flight=mean_in_flight(all_records, start, end),
        in_flight_ends=(in_flight_at(all_records, start), in_flight_at(all_records, end)),
        ttft_ms=_p50_p99([t.ttft_s for t in times], 1000), tpot_ms=_p50_p99(tpots, 1000),
        itl_ms=_p50_p99([x for t in times for x in t.itls_s], 1000), e2e_s=_p50_p99([t.e2e_s for t in times], 1),
        good=good, spec_step_share=verify / steps if steps else None,
        accept_len=(verify + sum(t.correct_drafts for t in times)) / verify if verify else None,
        cached_share=sum(t.cached_tokens for t in times) / prompt if prompt else None)


def run_end(records: list[dict], schedule_end: float) -> float:
    """The run's end: the schedule's or the last token's, whichever is later."""
    ends = [r["sent_s"] + r["chunks"][-1][0] for r in records if r.get("chunks")]
    return max([schedule_end] + ends)


def mean_sampled(samples: list[dict], key: str, start: float, end: float) -> float | None:
    """The mean of a sampled server metric (serving.MetricSample, as bench.json holds them) in
    [start, end); None where none was sampled there."""
    values = [x["values"][key] for x in samples if start <= x["t_s"] < end and key in x["values"]]
    return sum(values) / len(values) if values else None
