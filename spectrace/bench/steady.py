"""Steady decode speed read from an engine's log: SGLang's scheduler logs a decode line every
40 decode steps (``--decode-log-interval``) with the batch size and the tokens/s since the line
before. An interval that follows a prefill spans the run's start (the prefill, the gap between
runs); one that ends with the batch's tokens freed (``#token: 0``) spans its end. The others
are steady decoding at that batch size: the run's time less its boundaries. Two engines compare
interval by interval when their runs take the same decode steps (plain against plain): the rate
falls as the sequences grow, and an engine whose verify steps passed several tokens each reaches
its intervals at longer sequences."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

DECODE_LINE = re.compile(
    r"Decode batch(?: \[\d+\])?, #running-req: (?P<bs>\d+), (?P<usage>.*?)"
    r"gen throughput \(token/s\): (?P<rate>[\d.]+)"
)
PREFILL_LINE = "Prefill batch"
FREED = re.compile(r"#token: 0,")


def steady_rates(lines) -> dict[int, list[float]]:
    """{batch size: tokens/s of each steady decode interval} of one engine's log lines."""
    rates: dict[int, list[float]] = {}
    after_prefill = False
    for line in lines:
        if PREFILL_LINE in line:
            after_prefill = True
            continue
        m = DECODE_LINE.search(line)
        if m is None:
            continue
        boundary = after_prefill or FREED.search(m.group("usage"))
        after_prefill = False
        if not boundary:
            rates.setdefault(int(m.group("bs")), []).append(float(m.group("rate")))
    return rates


def steady_from_log(path: str | Path | None) -> dict[str, list[float]]:
    """The same for a log file, keyed by batch size as text (bench.json's keys); {} without one."""
    if not path or not Path(path).is_file():
        return {}
    with open(path, errors="replace") as fh:
        return {str(bs): values for bs, values in steady_rates(fh).items()}


def median_rate(steady: dict[str, list[float]] | None, batch_size: int) -> float | None:
    values = (steady or {}).get(str(batch_size))
    return statistics.median(values) if values else None
