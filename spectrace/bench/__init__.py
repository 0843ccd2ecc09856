"""``spectrace bench``: the same requests at several concurrencies, or a serving workload's
open-loop traffic, one SGLang engine per configuration, with the runtime shims on or off; json, a
markdown table and a plot.

Modules, in the order a sweep uses them:

- ``command``: the click command (``bench_command``);
- ``config``: ``--config`` options and ``--configs`` TOML/JSON files;
- ``workload``: a ``--workload``'s phases, kinds and turns, and its seeded schedule;
- ``models``: dummy target / draft configs for weightless engines;
- ``drafts``: the draft regimes (``--drafts``), weight edits in the engine's scheduler;
  ``kinds``: the vocabulary split of ``--drafts kinds``;
- ``preflight``: the check that each configuration's Python finds SGLang;
- ``sweep``: every configuration in turn, the outputs after each, the exit status;
- ``lifecycle``: one configuration's processes (environment, server, worker) and their ends;
- ``worker``: the worker process (``python -m spectrace.bench --worker``), timing the runs;
- ``drivers``: an in-process ``sglang.Engine`` or a server over HTTP;
  ``serving``: a workload's streamed requests and the server's sampled metrics;
- ``prompts``: the token-id prompts; ``gauges``: the dynamic-disable gauges;
- ``tables``: bench.json and bench.md; ``plot``: bench.png; for a workload ``serving_metrics``
  (latencies, goodput), ``serving_tables`` and ``serving_plot``.
"""

from __future__ import annotations


def __getattr__(name):
    # the worker imports this package too: it loads click and the tables only for the command
    if name == "bench_command":
        from spectrace.bench.command import bench_command

        return bench_command
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
