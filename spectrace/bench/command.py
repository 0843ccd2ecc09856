"""``spectrace bench``: the click command; options of a --configs file's [defaults] table apply
where the command line leaves an option at its default."""

from __future__ import annotations

import click
from click.core import ParameterSource

from spectrace.bench.config import (DRAFT_REGIMES, OPTION_KEYS, SHIMS_MODES, check_names, load_config_file,
                                    parse_config_option, parse_ints, read_table_file, split_names)
from spectrace.bench.models import SHAPES
from spectrace.bench.sweep import bench
from spectrace.errors import SpectraceError


def _apply_file_defaults(ctx: click.Context, params: dict, defaults: dict, path: str) -> None:
    by_name = {p.name: p for p in ctx.command.params}
    for key in OPTION_KEYS:
        if key not in defaults or ctx.get_parameter_source(key) is not ParameterSource.DEFAULT:
            continue
        value = defaults[key]
        if key == "concurrency":
            params[key] = ",".join(str(c) for c in parse_ints(value, f"{path}: [defaults] concurrency"))
            continue
        try:
            params[key] = by_name[key].type_cast_value(ctx, value)
        except click.BadParameter as exc:
            raise SpectraceError(f"{path}: [defaults] {key}: {exc.message}")


def _narrow_file_names(ctx: click.Context, params: dict, selected: list[str]) -> None:
    """The [defaults] table's --better-of, --mean-of and --reference keep only what --only selected,
    so a file written for the whole sweep also serves a part of it; the same options given on the
    command line stay as given and must name selected configurations."""
    for key in ("better_of", "mean_of", "reference"):
        if ctx.get_parameter_source(key) is not ParameterSource.DEFAULT or not params.get(key):
            continue
        kept = [n for n in split_names(params[key]) if n in selected]
        params[key] = ",".join(kept) or None


@click.command("bench")
@click.option("--config", "config_opts", multiple=True, metavar="NAME='SERVER ARGS'",
              help="A configuration: a name and SGLang server arguments (repeatable).")
@click.option("--configs", "config_file", type=click.Path(exists=True, dir_okay=False),
              help="TOML or JSON file: [[config]] name, args, shims, env, ...; [defaults] args and options.")
@click.option("--concurrency", default="1,4,16,64,128", show_default=True, metavar="C,C,...",
              help="Concurrencies, each timed in turn: C requests sent at once (C=1: --seq-reps requests one "
                   "after another).")
@click.option("--input-len", type=int, default=128, show_default=True,
              help="Prompt tokens per request (random token ids of the --vocab-size range).")
@click.option("--output-len", type=int, default=128, show_default=True,
              help="Output tokens per request (greedy, ignore_eos), the mean where --output-spread is given.")
@click.option("--output-spread", type=click.FloatRange(0, 1, max_open=True), default=0.0, show_default=True,
              help="Output lengths evenly spread over (1 - S) to (1 + S) times --output-len, so that the "
                   "batch shrinks during a run.")
@click.option("--seq-reps", type=int, default=3, show_default=True,
              help="Requests sent one after another at concurrency 1.")
@click.option("--shims", type=click.Choice(SHIMS_MODES), default="off", show_default=True,
              help="Runtime shims in every configuration (a configuration's own `shims` wins).")
@click.option("--catalog", default=None, help="Contract catalog(s) for the shims.")
@click.option("--value-sample", type=int, default=None, help="Shims' device value check every N-th step.")
@click.option("--dummy-model", type=click.Choice(sorted(SHAPES)), default=None,
              help="Dummy Llama target / EAGLE-3 draft; {target} and {draft} in args.")
@click.option("--drafts", type=click.Choice(DRAFT_REGIMES), default="dummy", show_default=True,
              help="With --dummy-model: dummy weights as loaded (drafts never accepted), edited so that "
                   "EAGLE-3 drafts are always accepted, or about half, or per request kind: always, about half "
                   "or never by the prompt's tokens (a --workload's kinds; a configuration's own `drafts` wins).")
@click.option("--base-args", default="", help="Server arguments common to every configuration.")
@click.option("--url", default=None, help="Drive a running server instead of starting engines.")
@click.option("--server", is_flag=True, help="Start sglang.launch_server per configuration (HTTP).")
@click.option("--port", type=int, default=None,
              help="With --server: the port each server listens on (a configuration's own `port` wins; "
                   "default 30000).")
@click.option("--timeout", type=float, default=900, show_default=True, help="Seconds per configuration.")
@click.option("--warmup/--no-warmup", default=True, show_default=True,
              help="Per engine, before the timed runs: 2 requests, then as many as the largest concurrency, "
                   "16 tokens each, untimed.")
@click.option("--warmup-runs", type=click.IntRange(0), default=0, show_default=True,
              help="Untimed runs of each concurrency's whole workload per engine before the timed ones: a "
                   "batch that shrinks passes batch sizes that a short warm-up never runs, and SGLang's "
                   "first decode steps at a new batch size stall (up to 144 ms on 0.5.17), once in a "
                   "server's life.")
@click.option("--profile", is_flag=True,
              help="After each engine's timed runs, one more untimed run per concurrency under SGLang's "
                   "profiler (GPU activity): bench.md gets the GPU's busy and idle time per output token "
                   "and its longest idle gaps; the traces stay under profiles/.")
@click.option("--workload", type=click.Path(exists=True, dir_okay=False), default=None,
              help="TOML or JSON file with a [workload] table (default: the --configs file's, if it has one): "
                   "open-loop arrivals in phases, request kinds, multi-turn conversations, streamed over HTTP "
                   "(a server per configuration, as --server, unless --url) in place of the concurrency list; per-phase "
                   "tables and a plot over time.")
@click.option("--plot/--no-plot", default=True, show_default=True,
              help="Write bench.png (needs matplotlib).")
@click.option("--reps", type=int, default=1, show_default=True,
              help="Time the concurrency list this many times per engine; tables show medians.")
@click.option("--engines", type=int, default=1, show_default=True,
              help="Engines per configuration, started in rounds over the configurations; tables show "
                   "medians over every engine's repetitions.")
@click.option("--resume", is_flag=True,
              help="Keep the engines that an earlier sweep into the same -o folder finished with the same "
                   "settings, and run the rest: a sweep longer than a machine's time limit runs in parts.")
@click.option("--only", default=None, metavar="A,B",
              help="Run only these configurations (of --configs and --config), e.g. to tabulate what a "
                   "--resume folder holds without running its unfinished ones. A --configs file's better_of, "
                   "mean_of and reference keep only the configurations named here.")
@click.option("--better-of", default=None, metavar="A,B",
              help="Add a table of ratios to the better of these configurations.")
@click.option("--mean-of", default=None, metavar="A,B",
              help="Add a table of ratios to the mean of these configurations' medians.")
@click.option("--reference", default=None, help="Configuration the others' outputs are compared with.")
@click.option("--seed", type=int, default=1234, show_default=True,
              help="Seed of the prompts (the same for every configuration).")
@click.option("--vocab-size", type=int, default=None, help="Token-id range of the prompts.")
@click.option("--python", default=None, help="Python executable for the engines.")
@click.option("-o", "--out", "out_dir", default="bench-out", show_default=True,
              help="Folder for bench.json, bench.md, bench.png and each engine's log and result.")
@click.pass_context
def bench_command(ctx, config_opts, config_file, out_dir, base_args, url, server, port, only, workload, **params):
    """Throughput vs concurrency, one SGLang engine per configuration, shims on or off.

    \b
      spectrace bench --dummy-model 8b --shims warn -o out \\
        --base-args '--max-running-requests 128 --cuda-graph-max-bs 128' \\
        --config baseline='' \\
        --config eagle3='--speculative-algorithm EAGLE3 --speculative-draft-model-path {draft}
                         --speculative-eagle-topk 1 --speculative-num-steps 3 --speculative-num-draft-tokens 4'
    """
    if url and server:
        raise SpectraceError("--url and --server exclude each other")
    configs = [parse_config_option(c) for c in config_opts]
    if config_file:
        file_configs, defaults = load_config_file(config_file)
        configs = file_configs + configs
        _apply_file_defaults(ctx, params, defaults, config_file)
        base_args = " ".join(x for x in (defaults.get("args", ""), base_args) if x)
    if only is not None:
        names = split_names(only)
        check_names("--only", names, configs)
        configs = [c for c in configs if c["name"] in names]
        if config_file:
            _narrow_file_names(ctx, params, names)
    params["concurrency"] = parse_ints(params["concurrency"], "--concurrency")
    if workload is None and config_file and "workload" in read_table_file(config_file):
        workload = config_file
    params["workload"] = workload
    bench(configs, out_dir=out_dir, base_args=base_args, url=url, server=server, port=port,
          log=lambda m: click.echo(m, err=True), **params)
