"""The dynamic-disable series' Prometheus gauges (``sglang:spec_disabled*``), read after each run of
a server with metrics on."""

from __future__ import annotations

SPEC_GAUGE_PREFIX = "sglang:spec_disabled"


def spec_gauges_from_text(text: str) -> dict[str, float]:
    """The gauges from Prometheus' text format (``/metrics``): {name: value}. With several samples
    of one name (one per rank), the largest."""
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
    """The gauges from a Prometheus multiprocess folder, merged as SGLang's own /metrics merges it
    (an in-process engine has no /metrics; prometheus_client comes with SGLang)."""
    from prometheus_client import CollectorRegistry, generate_latest, multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=folder)
    return spec_gauges_from_text(generate_latest(registry).decode())
