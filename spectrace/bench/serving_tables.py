"""bench.md of a serving run (``--workload``): per phase and over the whole run each
configuration's throughput, latency percentiles, goodput and speculative share; ratios to the
better of fixed choices; acceptance per request kind and turn; outputs against the reference."""

from __future__ import annotations

from spectrace.bench.serving_metrics import WindowSummary, mean_sampled, run_end, summarize_requests
from spectrace.bench.tables import configuration_notes, shim_cells
from spectrace.bench.workload import Workload

WHOLE_RUN = "whole run"


def request_records(result: dict) -> list[dict]:
    return (result.get("serving") or {}).get("requests") or []


def windows(workload: Workload, results: list[dict]) -> list[tuple[str, float, float]]:
    """(name, start, end) of each phase and of the whole run (to the last token of any configuration)."""
    out = [(p.name, s, s + p.duration_s) for p, s in zip(workload.phases, workload.phase_starts())]
    end = max([run_end(request_records(r), workload.duration_s) for r in results] or [workload.duration_s])
    return out + [(WHOLE_RUN, 0.0, end)]


def window_summaries(workload: Workload, result: dict, spans) -> dict[str, WindowSummary]:
    """Each window's summary; the whole run's spans this configuration's own run (to its last token),
    so that its tokens/s is its own, not every configuration's tokens over the slowest one's time."""
    records = request_records(result)
    own_end = run_end(records, workload.duration_s) + 1e-6  # the half-open window keeps the last token
    return {name: summarize_requests([r for r in records if name == WHOLE_RUN or r["phase"] == name], records,
                                     start, own_end if name == WHOLE_RUN else end, workload.tpot_limit_ms)
            for name, start, end in spans}


def _ms(pair, digits: int = 1) -> str:
    return " / ".join("-" if v is None else f"{v:.{digits}f}" for v in pair)


def _share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f} %"


def _running(result: dict, start: float, end: float) -> str:
    """The server's running batch, the mean of its samples in the window."""
    mean = mean_sampled((result.get("serving") or {}).get("samples") or [], "running", start, end)
    return "-" if mean is None else f"{mean:.1f}"


def _phase_table(span: tuple[str, float, float], results: list[dict],
                 summaries: list[dict[str, WindowSummary]]) -> list[str]:
    name = span[0]
    lines = [f"**{name}**", "",
             "| configuration | requests (failed) | output tok/s | in flight / running | TTFT ms p50 / p99 "
             "| TPOT ms p50 / p99 | ITL ms p50 / p99 | E2E s p50 / p99 | goodput | spec steps | accept |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r, by_window in zip(results, summaries):
        s = by_window.get(name)
        if s is None or not s.requests:
            lines.append(f"| {r['name']} | - | | | | | | | | | |")
            continue
        good = f"{s.good}/{s.requests} ({100 * s.good / s.requests:.0f} %)"
        lines.append(f"| {r['name']} | {s.requests} ({s.failed}) | {s.tok_per_s or 0:,.0f} | "
                     f"{s.in_flight:.1f} / {_running(r, *span[1:])} | "
                     f"{_ms(s.ttft_ms)} | {_ms(s.tpot_ms, 2)} | {_ms(s.itl_ms, 2)} | {_ms(s.e2e_s, 2)} | {good} | "
                     f"{_share(s.spec_step_share)} | {'-' if s.accept_len is None else f'{s.accept_len:.2f}'} |")
    return lines + [""] + _backlog_note(name, results, summaries)


def _backlog_note(name: str, results: list[dict], summaries: list[dict[str, WindowSummary]]) -> list[str]:
    """Where the requests in flight at a phase's end outnumber those at its start by half its
    requests or more, arrivals outran the server: the phases after it inherit that queue."""
    grew = []
    for r, by_window in zip(results, summaries):
        s = by_window.get(name)
        if s is None or name == WHOLE_RUN or not s.requests:
            continue
        first, last = s.in_flight_ends
        if last - first >= max(8, s.requests / 2):
            grew.append(f"{r['name']} {first} -> {last}")
    if not grew:
        return []
    return [f"Requests in flight at this phase's start -> end: {', '.join(grew)}: its arrivals outran the "
            "server, and the next phases inherit the queue.", ""]


def _ratio(value, best, lower_is_better: bool = False) -> str:
    if value is None or not best:
        return "-"
    return f"{(best / value if lower_is_better else value / best):.3f}" if value else "-"


def _better_of_table(spans, results, summaries, better: list[str]) -> list[str]:
    """Per window: output tok/s over the better one's, the better one's TPOT p50 over its own (both
    above 1 where it does better) and good requests over the better one's."""
    by_name = dict(zip((r["name"] for r in results), summaries))
    if not all(n in by_name for n in better):
        return []
    lines = [f"Against the better of {' / '.join(better)} in each window: output tok/s ratio, TPOT p50 ratio "
             "(the lower TPOT over this one's), goodput ratio (good requests over the most); 1 or above is at "
             "least as good:", "",
             "| window | " + " | ".join(r["name"] for r in results) + " |", "|---" * (len(results) + 1) + "|"]
    for name, _, _ in spans:
        fixed = [by_name[n][name] for n in better]
        best_tok = max((s.tok_per_s or 0 for s in fixed), default=0)
        best_tpot = min((s.tpot_ms[0] for s in fixed if s.tpot_ms[0] is not None), default=None)
        best_good = max((s.good for s in fixed), default=0)
        cells = []
        for by_window in summaries:
            s = by_window[name]
            cells.append(f"{_ratio(s.tok_per_s, best_tok)} / {_ratio(s.tpot_ms[0], best_tpot, True)} / "
                         f"{_ratio(s.good, best_good)}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines + [""]


def _kinds_table(workload: Workload, results: list[dict]) -> list[str]:
    """Per configuration, kind and turn (first turns, later ones resending an earlier prefix)."""
    blind = any(r.get("drafts") == "kinds" for r in results)
    lines = ["Per request kind, first turns and later turns (which resend an earlier turn's prompt and output: "
             "the radix cache serves that prefix, its KV written in whatever mode the earlier turn ran"
             + ("; with `--drafts kinds` neither model reads its KV, so stale draft KV cannot lower these accept "
                "lengths" if blind else "") + "):", "",
             "| configuration | kind (drafts) | turns | requests | accept | spec steps | cached prompt tokens | "
             "TPOT ms p50 / p99 |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        records = request_records(r)
        for kind in workload.kinds:
            for label, later in (("first", False), ("later", True)):
                chosen = [x for x in records if x["kind"] == kind.name and (x["turn"] > 0) == later]
                if not chosen:
                    continue
                s = summarize_requests(chosen, [], 0.0, 0.0, workload.tpot_limit_ms)
                lines.append(f"| {r['name']} | {kind.name} ({kind.drafts}) | {label} | {s.requests} | "
                             f"{'-' if s.accept_len is None else f'{s.accept_len:.2f}'} | {_share(s.spec_step_share)} | "
                             f"{_share(s.cached_share)} | {_ms(s.tpot_ms, 2)} |")
    return lines + [""]


def _outputs_match(result: dict, ref: dict | None) -> str:
    if ref is None or ref is result:
        return "reference" if ref is result else "-"
    theirs = {(x["conversation"], x["turn"]): x.get("output_ids") for x in request_records(ref) if not x.get("error")}
    pairs = [(x.get("output_ids"), theirs[(x["conversation"], x["turn"])]) for x in request_records(result)
             if not x.get("error") and (x["conversation"], x["turn"]) in theirs]
    return f"{sum(1 for a, b in pairs if a == b)}/{len(pairs)}" if pairs else "-"


def _configuration_table(results: list[dict], reference: str | None) -> list[str]:
    ref = next((r for r in results if r["name"] == reference), results[0] if results else None)
    lines = ["| configuration | SGLang | shims | drafts | KV pool free before -> after (used after the run) | "
             f"greedy outputs equal to `{ref['name'] if ref else '-'}` | shim checks | shim violations |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        sv = r.get("serving") or {}
        b, a, run = sv.get("pool_before") or {}, sv.get("pool_after") or {}, sv.get("pool_after_run") or {}
        pool = f"{b['token_free']} -> {a['token_free']} ({run.get('token_used', '-')})" \
            if "token_free" in b and "token_free" in a else "-"
        lines.append(f"| {r['name']} | {r.get('sglang', '?')} | {r.get('shims', 'off')} | {r.get('drafts') or '-'} | "
                     f"{pool} | {_outputs_match(r, ref)} | {shim_cells(r)} |")
        lines += configuration_notes(r)
    return lines


def describe_workload(workload: Workload) -> str:
    phases = "; ".join(
        f"{p.name} {p.duration_s:g} s at {p.rate:g}/s" + (f" (burstiness {p.burstiness:g})" if p.burstiness != 1 else "")
        + " of " + ", ".join(f"{k} {w:g}" for k, w in p.mix.items() if w)
        + (f", {p.turns} turns {p.think_s:g} s apart" if p.turns > 1 else "")
        for p in workload.phases)
    spread = f" ±{workload.output_spread:g}" if workload.output_spread else ""
    return (f"Serving workload, open-loop arrivals of conversations: {phases}. First turns {workload.input_len} "
            f"prompt tokens, later turns the conversation so far plus {workload.turn_input_len}; "
            f"{workload.output_len}{spread} output tokens, greedy, ignore_eos; every request streamed. Goodput: "
            f"requests whose TPOT is within {workload.tpot_limit_ms:g} ms. A window's requests are those sent in "
            "it; its output tok/s counts the tokens that arrived in it; in flight: the client's requests between "
            "send and last token, running: the server's batch (sglang:num_running_reqs, sampled every 0.5 s with "
            "--enable-metrics), both means over the window. Spec steps: verify steps over decode steps of the "
            "window's requests (their meta_info counters).")


def render_serving(results: list[dict], workload: Workload, reference: str | None, better: list[str]) -> str:
    spans = windows(workload, results)
    summaries = [window_summaries(workload, r, spans) for r in results]
    lines = [describe_workload(workload), ""]
    for span in spans:
        lines += _phase_table(span, results, summaries)
    if better:
        lines += _better_of_table(spans, results, summaries, better)
    lines += _kinds_table(workload, results)
    lines += _configuration_table(results, reference)
    return "\n".join(lines) + "\n"
