"""The dynamic-disable series' Prometheus gauges (``sglang:spec_disabled*``), read after each run of
a server with metrics on; and other named metrics, sampled during a serving run."""

from __future__ import annotations

SPEC_GAUGE_PREFIX = "sglang:spec_disabled"


def _largest_samples(text: str, wanted) -> dict[str, float]:
    """{name: value} of Prometheus' text format (``/metrics``) for the names ``wanted(name)``
    accepts. With several samples of one name (one per rank), the largest."""
    values: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if not wanted(name):
            continue
        try:
            value = float(line.rsplit(" ", 1)[1])
        except (IndexError, ValueError):
            continue
        values[name] = max(value, values.get(name, value))
    return values


def spec_gauges_from_text(text: str) -> dict[str, float]:
    """The dynamic-disable gauges of ``/metrics``."""
    return _largest_samples(text, lambda name: name.startswith(SPEC_GAUGE_PREFIX))


def metric_values(text: str, names: set[str]) -> dict[str, float]:
    """The named metrics of ``/metrics`` (e.g. ``sglang:num_running_reqs``)."""
    return _largest_samples(text, names.__contains__)


def spec_gauges_from_multiprocess_dir(folder: str) -> dict[str, float]:
    """The gauges from a Prometheus multiprocess folder, merged as SGLang's own /metrics merges it
    (an in-process engine has no /metrics; prometheus_client comes with SGLang)."""
    from prometheus_client import CollectorRegistry, generate_latest, multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=folder)
    return spec_gauges_from_text(generate_latest(registry).decode())
