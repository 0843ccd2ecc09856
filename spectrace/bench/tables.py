"""bench.json's content and bench.md: tokens/s per concurrency (medians over repetitions), ratio
tables, steady decode speed from the engines' logs, output equality against the reference,
KV-pool counters, shim checks, gauges and GPU profiles."""

from __future__ import annotations

import statistics

from spectrace.bench.steady import median_rate
from spectrace.bench.worker import WARM_AFTER_FLUSH_TOKENS

BENCH_SCHEMA_VERSION = 1  # bench.json's layout (docs/schemas/bench.schema.json)


def timed_runs(result: dict) -> dict[int, dict[int, dict]]:
    """{concurrency: {rep: run}} of a configuration."""
    out: dict[int, dict[int, dict]] = {}
    for run in result.get("runs", []):
        out.setdefault(run["concurrency"], {})[run.get("rep", 0)] = run
    return out


def median_tok_per_s(runs: dict[int, dict]) -> float | None:
    values = [r["tok_per_s"] for r in runs.values() if r.get("tok_per_s")]
    return statistics.median(values) if values else None


def _match_rate(a: list | None, b: list | None) -> tuple[int, int] | None:
    if not a or not b or len(a) != len(b):
        return None
    return sum(1 for x, y in zip(a, b) if x == y), len(a)


def engine_label(r: dict) -> str:
    regime = r.get("drafts")
    return f"shims {r.get('shims', 'off')}" + (f", drafts {regime}" if regime and regime != "dummy" else "")


def _throughput_table(results: list[dict], timed: list[dict], concs: list[int]) -> list[str]:
    lines = ["| C | " + " | ".join(f"{r['name']} ({engine_label(r)})" for r in results) + " |",
             "|---" * (len(results) + 1) + "|"]
    for c in concs:
        cells = []
        for runs in timed:
            at_c = runs.get(c)
            med = median_tok_per_s(at_c) if at_c else None
            if med is None:
                cells.append("-")
                continue
            text = f"{med:,.1f}"
            if len(at_c) > 1:
                values = [r["tok_per_s"] for r in at_c.values() if r.get("tok_per_s")]
                text += f" ({min(values):,.0f}–{max(values):,.0f})"
            accepts = [r["accept_len"] for r in at_c.values() if r.get("accept_len")]
            if accepts:
                text += f" (acc {statistics.median(accepts):.2f})"
            cells.append(text)
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return lines + [""]


def render_better_of(results: list[dict], timed: list[dict], concs: list[int], better_of: list[str]) -> list[str]:
    """Each configuration's median as a ratio to the better of the named ones at each C."""
    by_name = dict(zip((r["name"] for r in results), timed))
    lines = [f"Ratio to the better of {' / '.join(better_of)} at each C (medians; lowest–highest of rep r "
             "against rep r of the better one):", "",
             "| C | better | " + " | ".join(r["name"] for r in results) + " |",
             "|---" * (len(results) + 2) + "|"]
    for c in concs:
        medians = {n: median_tok_per_s(by_name[n][c]) for n in better_of if c in by_name.get(n, {})}
        medians = {n: m for n, m in medians.items() if m}
        if not medians:
            continue
        best = max(medians, key=medians.get)
        cells = []
        for runs in timed:
            med = median_tok_per_s(runs[c]) if c in runs else None
            if med is None:
                cells.append("-")
                continue
            ratios = [run["tok_per_s"] / by_name[best][c][rep]["tok_per_s"] for rep, run in runs[c].items()
                      if run.get("tok_per_s") and by_name[best][c].get(rep, {}).get("tok_per_s")]
            text = f"{med / medians[best]:.3f}"
            if len(ratios) > 1:
                text += f" ({min(ratios):.3f}–{max(ratios):.3f})"
            cells.append(text)
        lines.append(f"| {c} | {best} | " + " | ".join(cells) + " |")
    return lines + [""]


def render_mean_of(results: list[dict], timed: list[dict], concs: list[int], mean_of: list[str]) -> list[str]:
    """Each configuration's median as a ratio to the mean of the named engines' medians: two
    engines of one configuration differ by 1-2 % at C=1, and the better of them is the luckier
    one, not the reference."""
    by_name = dict(zip((r["name"] for r in results), timed))
    lines = [f"Ratio to the mean of the medians of {' and '.join(mean_of)} at each C:", "",
             "| C | mean tok/s | " + " | ".join(r["name"] for r in results) + " |",
             "|---" * (len(results) + 2) + "|"]
    for c in concs:
        medians = [median_tok_per_s(by_name[n][c]) if c in by_name.get(n, {}) else None for n in mean_of]
        if not all(medians):
            continue
        mean = statistics.fmean(medians)
        cells = [f"{median_tok_per_s(runs[c]) / mean:.3f}" if c in runs and median_tok_per_s(runs[c]) else "-"
                 for runs in timed]
        lines.append(f"| {c} | {mean:,.1f} | " + " | ".join(cells) + " |")
    return lines + [""]


def render_steady(results: list[dict], concs: list[int], reference: str | None) -> list[str]:
    """Each configuration's steady decode tokens/s at batch size C (its engines' logs) and the ratio
    to the reference's: set against the throughput table, what a run's start and end cost."""
    ref = next((r for r in results if r["name"] == reference), results[0])
    caption = ("Steady decode tokens/s at batch size C (median of SGLang's 40-step decode log intervals, without "
               f"those that follow a prefill or end with the batch freed; ratio to `{ref['name']}`):")
    lines = [caption, "",
             "| C | " + " | ".join(r["name"] for r in results) + " |", "|---" * (len(results) + 1) + "|"]
    for c in concs:
        base = median_rate(ref.get("steady"), c)
        cells = []
        for r in results:
            rate = median_rate(r.get("steady"), c)
            cells.append("-" if rate is None else f"{rate:,.0f}" + (f" ({rate / base:.3f})" if base else ""))
        if any(cell != "-" for cell in cells):
            lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return lines + [""] if len(lines) > 4 else []


def _configuration_table(results: list[dict], reference: str | None) -> list[str]:
    ref = next((r for r in results if r["name"] == reference), results[0] if results else None)
    lines = ["| configuration | SGLang | drafts | engine start s | KV pool free before -> after (used after) | "
             f"greedy outputs equal to `{ref['name'] if ref else '-'}` | shim checks | shim violations |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        pools = []
        for run in r.get("runs", []):
            b, a = run.get("pool_before") or {}, run.get("pool_after") or {}
            if "token_free" in b and "token_free" in a:
                pools.append(f"C{run['concurrency']}: {b['token_free']}->{a['token_free']}"
                             + (f" ({a.get('token_used')})" if a.get("token_used") else ""))
        same = total = 0
        if ref is not None and ref is not r:
            # repetition r of one configuration got the prompts of repetition r of the other
            for run in r.get("runs", []):
                other = next((x for x in ref.get("runs", []) if x["concurrency"] == run["concurrency"]
                              and x.get("rep", 0) == run.get("rep", 0)), None)
                m = _match_rate(run.get("output_ids"), (other or {}).get("output_ids"))
                if m:
                    same, total = same + m[0], total + m[1]
        match = f"{same}/{total}" if total else ("reference" if r is ref else "-")
        lines.append(f"| {r['name']} | {r.get('sglang', '?')} | {r.get('drafts') or '-'} | "
                     f"{r.get('engine_start_s', '-')} | {'; '.join(pools) or '-'} | {match} | {shim_cells(r)} |")
        lines += configuration_notes(r)
    return lines


def shim_cells(r: dict) -> str:
    st = r.get("shim_total") or {}
    return f"{st.get('checks', '-')} | {st.get('violations', '-')}"


def configuration_notes(r: dict) -> list[str]:
    """The rows under a configuration's row of an 8-column table: why it failed, which default
    flags its SGLang did not know."""
    notes = []
    if r.get("error"):
        notes.append(f"|  ↳ {r['name']} failed: {r['error']} | | | | | | | |")
    if r.get("dropped_default_flags"):
        notes.append(f"|  ↳ {r['name']} ran without {', '.join(r['dropped_default_flags'])} "
                     f"(unknown to SGLang {r.get('sglang', '?')}) | | | | | | | |")
    return notes


def _gauges_table(results: list[dict]) -> list[str]:
    gauged = [(r["name"], run) for r in results for run in r.get("runs", []) if run.get("gauges")]
    if not gauged:
        return []
    names = sorted({k for _, run in gauged for k in run["gauges"]})
    lines = ["", "The dynamic-disable gauges after each run (the scheduler's last report):", "",
             "| configuration | C | " + " | ".join(f"`{n}`" for n in names) + " |",
             "|---|---|" + "---|" * len(names)]
    for name, run in gauged:
        c = f"{run['concurrency']}" + (f" rep {run['rep']}" if run.get("rep") else "")
        lines.append(f"| {name} | {c} | " + " | ".join(
            f"{run['gauges'][n]:g}" if n in run["gauges"] else "-" for n in names) + " |")
    return lines


def _profile_table(results: list[dict]) -> list[str]:
    """One row per profiled run and TP rank (``--profile``): where the GPU's time went."""
    rows = [(r["name"], prof) for r in results for prof in r.get("profiles") or []]
    if not rows:
        return []
    lines = ["", "GPU time of one untimed run per concurrency under SGLang's profiler (`--profile`; device "
             "activity only), per output token; idle is time between the first and last device event with no "
             "kernel or copy running:", "",
             "| configuration | C | rank | busy ms/token | idle ms/token | idle gaps >= 1 ms (total ms) | longest gaps ms |",
             "|---|---|---|---|---|---|---|"]
    for name, prof in rows:
        c = f"{prof['concurrency']}" + (f" engine {prof['engine'] + 1}" if "engine" in prof else "")
        if prof.get("error"):
            lines.append(f"| {name} | {c} | - | no profile: {prof['error']} | | | |")
            continue
        for rank in prof["ranks"]:
            gaps = ", ".join(f"{g:g}" for g in rank["longest_gaps_ms"]) or "-"
            lines.append(f"| {name} | {c} | {rank['rank']} | {rank['busy_ms_per_token']:.4f} | "
                         f"{rank['idle_ms_per_token']:.4f} | {rank['gaps_over_1ms']} ({rank['gaps_over_1ms_total']:g}) | "
                         f"{gaps} |")
    return lines


KERNEL_ROWS = 10  # the kernels whose time differs most from the reference's, per concurrency


def _kernels_at(results: list[dict], c: int) -> dict[str, dict[str, list[float]]]:
    """Each configuration's kernels at concurrency c on TP rank 0, µs and calls per output token,
    averaged over its engines."""
    out = {}
    for r in results:
        runs = [rank["kernels"] for prof in r.get("profiles") or [] if prof.get("concurrency") == c
                for rank in prof.get("ranks") or [] if rank.get("rank") == 0 and "kernels" in rank]
        if runs:
            names = {k for run in runs for k in run}
            out[r["name"]] = {k: [sum(run.get(k, [0, 0])[i] for run in runs) / len(runs) for i in (0, 1)]
                              for k in names}
    return out


def _kernel_table(results: list[dict], reference: str | None) -> list[str]:
    """Per profiled concurrency, the kernels whose device time per output token differs most from the
    reference configuration's: what a slower configuration runs more of, or runs that the other does not."""
    concs = sorted({prof["concurrency"] for r in results for prof in r.get("profiles") or [] if prof.get("ranks")})
    lines = []
    for c in concs:
        by_config = _kernels_at(results, c)
        if len(by_config) < 2:
            continue
        ref = reference if reference in by_config else next(iter(by_config))
        names = list(by_config)
        kernels = {k for kernels in by_config.values() for k in kernels}

        def spread(k):
            times = [by_config[n].get(k, [0, 0])[0] for n in names]
            return max(abs(t - by_config[ref].get(k, [0, 0])[0]) for t in times)

        rows = sorted(kernels, key=spread, reverse=True)[:KERNEL_ROWS]
        if not lines:
            lines = ["", f"The {KERNEL_ROWS} kernels whose device time differs most from `{ref}`'s (TP rank 0, "
                     "mean of the engines), µs per output token (calls per output token):"]
        lines += ["", f"C={c}:", "", "| kernel | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
        for k in rows:
            cells = [f"{by_config[n][k][0]:.3f} ({by_config[n][k][1]:.3g})" if k in by_config[n] else "-"
                     for n in names]
            lines.append(f"| `{k[:80]}` | " + " | ".join(cells) + " |")
    return lines


def render_markdown(results: list[dict], common: dict, reference: str | None,
                    better_of: list[str] | None = None, mean_of: list[str] | None = None) -> str:
    concs = sorted({run["concurrency"] for r in results for run in r.get("runs", [])} | set(common["concurrency"]))
    reps, engines = common.get("reps", 1), common.get("engines", 1)
    spread = f"{engines} engines x {reps} repetitions" if engines > 1 else f"{reps} repetitions"
    spread_out = common.get("output_spread") or 0
    out_len = f"{common['output_len']} out" + (f" (spread ±{spread_out:g})" if spread_out else "")
    runs = common.get("warmup_runs") or 0
    warm_runs = f" Before them each engine ran every concurrency's workload untimed, {runs} x." if runs else ""
    lines = [f"Output tokens/s, {common['input_len']} in / {out_len}, greedy, ignore_eos; "
             f"C=1: {common['seq_reps']} requests one after another, C>1: C requests at once"
             + (f"; median of {spread} (lowest–highest)." if reps * engines > 1 else ".")
             + " Each run follows the pool check's cache flush and one untimed request of its concurrency "
               f"({WARM_AFTER_FLUSH_TOKENS} tokens) that warms the emptied CUDA allocator." + warm_runs, ""]
    timed = [timed_runs(r) for r in results]
    lines += _throughput_table(results, timed, concs)
    if better_of:
        lines += render_better_of(results, timed, concs, better_of)
    if mean_of:
        lines += render_mean_of(results, timed, concs, mean_of)
    if results and not spread_out:  # a shrinking batch has few intervals at any one size
        lines += render_steady(results, concs, reference)
    lines += _configuration_table(results, reference)
    lines += _gauges_table(results)
    lines += _profile_table(results)
    lines += _kernel_table(results, reference)
    return "\n".join(lines) + "\n"


def summarize(results: list[dict], common: dict, reference: str | None, better: list[str],
              mean: list[str], pending: list[str], markdown: str | None = None) -> tuple[dict, str]:
    """bench.json's content and bench.md (``markdown``, else the concurrency sweep's tables) for the
    configurations run so far; ``pending`` names those still to run."""
    summary = {"schema": "spectrace-bench", "schema_version": BENCH_SCHEMA_VERSION,
               "common": {k: v for k, v in common.items() if k != "models"}, "results": results}
    md = markdown if markdown is not None else render_markdown(results, common, reference, better, mean)
    if pending:
        summary["pending"] = pending
        md = f"Partial: configurations not run yet: {', '.join(pending)}.\n\n" + md
    return summary, md
