#!/usr/bin/env python3
"""Regenerate a dynamic-disable series directory from a pristine and an edited SGLang tree.

    python3 make_series.py VERSION PRISTINE_DIR EDITED_DIR OUT_DIR

PRISTINE_DIR and EDITED_DIR each hold ``sglang/`` (an unpacked release copied to /tmp, the
second one edited).  Every patch is ``diff -u`` output between the two (never hand-written),
prefixed with its DEP-3-like header; ``series`` and ``manifest.toml`` (patch sha256, original
file sha256) are written next to them.  Finally the series is dry-run with ``patch -p1`` on a
fresh copy of the pristine tree, then really applied there and compared with EDITED_DIR.
Run it where spectrace is installed: the manifest is written by spectrace's own
``render_manifest`` (as ``spectrace patch manifest`` writes one).
"""

from __future__ import annotations

import datetime
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from spectrace.patches.series import Series, load_patch, render_manifest

AUTHOR = "spectrace"
REQUIRES = "SPEC2-NDI-SPECINFO, SPEC2-NDI-SEQLENS"
MODULE = "sglang/srt/speculative/dynamic_disable.py"
# 0.5.12: the fused kernels of the disabled step and the future map, a module of their own
KERNELS = "sglang/srt/speculative/dynamic_disable_kernels.py"
# patch 0003 of both versions: the worker and the subclass with its own __init__
WORKER_V2_FILES = [
    "sglang/srt/speculative/eagle_worker_v2.py",
    "sglang/srt/speculative/standalone_worker_v2.py",
]
SUBCLASS_NOTE = [
    "spec_disable is a class default (None) and _init_spec_disable is called by",
    "StandaloneWorkerV2's own __init__ too, which never runs EAGLEWorkerV2.__init__.",
]

# (file name stem, touched files, Description (first line, then body lines), Requires, Adds)
PATCHES = {
    "0.5.12": [
        (
            "0001-speculative-dynamic-disable-module",
            [MODULE, KERNELS],
            [
                "Spec v2: policy and plain-decode step for dynamic speculation disable",
                "New module sglang/srt/speculative/dynamic_disable.py: the per-step controller",
                "(running batch size with hysteresis, optional accept-length floor with",
                "periodic probes; load rule measured: per batch-size bucket, speculate while",
                "accept length x plain step time > speculative step time, both timed on the",
                "host clock), the server-start refusal of unverified modes, target",
                "DECODE CUDA graphs on a second attention backend, and the disabled step:",
                "one plain target decode token whose GenerationBatchResult still carries",
                "next_draft_input (bonus_tokens, new_seq_lens = seq_lens + 1, verify_done,",
                "topk_p/topk_index/hidden_states), accept_lens of ones and stride 1, plus",
                "draft KV kept consistent.  Draft modes (--speculative-disable-draft):",
                "catchup (default) runs no draft work per step and one draft extend over",
                "the skipped positions (CatchUpWindow) when a window fills or speculation",
                "resumes; exact runs one draft decode token per step; lazy runs it without",
                "the draft lm_head/top-k (marker topk_p = -1, lm_head input kept per",
                "req_pool_idx; the first speculative step after it computes the top-k",
                "once); skip runs no draft work (stale draft KV).",
                "New module sglang/srt/speculative/dynamic_disable_kernels.py: Triton",
                "kernels that do in one launch each what the disabled step did in several",
                "small ones (its prologue: seq_lens + 1, the KV slot, int64 inputs; the",
                "catch-up record) and the future map's five-field store and gather (patch",
                "0005), with the torch code as the fallback for other devices and layouts.",
            ],
            REQUIRES,
            "SPEC2-DISABLED-NDI, SPEC2-DISABLED-STRIDE",
        ),
        (
            "0002-server-args-dynamic-disable",
            ["sglang/srt/server_args.py"],
            [
                "Server arguments for dynamic speculation disable; refuse unverified modes",
                "--speculative-dynamic-disable, --speculative-disable-above-bs (24),",
                "--speculative-enable-below-bs (16), --speculative-disable-below-accept-len",
                "(1.5), --speculative-disable-draft exact|lazy|skip|catchup (catchup),",
                "--speculative-disable-load-rule measured|static (measured).  At the end of",
                "_handle_speculative_decoding the server refuses to",
                "start with the v1 worker (overlap off), topk > 1, --speculative-adaptive,",
                "DP attention, PP, TBO, PD disaggregation, or (unless",
                "SGLANG_SPEC_DISABLE_ALLOW_UNVERIFIED=1) a mode not verified on the GPU.",
            ],
            "",
            "",
        ),
        (
            "0003-eagle-worker-v2-disabled-step",
            WORKER_V2_FILES,
            [
                "EAGLEWorkerV2: run the disabled step when the controller says so",
                "forward_batch_generation decides once per decode step, before drafting;",
                "a disabled step returns SpecDisableRuntime.forward_disabled's result;",
                "a speculative one first calls before_speculative_step (a no-op unless",
                "lazy draft logits deferred a top-k or catchup has skipped positions); a",
                "prefill step calls note_other_step (no step-cost sample across it) and,",
                "after the target prefill, prefill_draft (while speculation is off, the",
                "prompt's draft KV only; SGLANG_SPEC_DISABLE_PREFILL_KV_ONLY=0 runs the whole",
                "draft extend).",
                "on_verify_complete_cpu feeds the accept-length rule; spec_disable_status",
                "reports the mode for the decode log line, spec_disable_metrics for the",
                "sglang:spec_disabled* gauges.",
                *SUBCLASS_NOTE,
            ],
            REQUIRES,
            "SPEC2-DISABLED-NDI",
        ),
        (
            "0004-decode-log-and-metrics-spec-mode",
            [
                "sglang/srt/observability/metrics_collector.py",
                "sglang/srt/observability/scheduler_metrics_mixin.py",
            ],
            [
                "Decode log line and metrics: which speculation mode ran and why",
                "Appends the worker's spec_disable_status() (mode, reason, steps on/off,",
                "accept-length average, measured step costs) after 'accept len' in the",
                "periodic decode log.  With --enable-metrics, two gauges from the worker's",
                "spec_disable_metrics(): sglang:spec_disabled (the last decode step ran",
                "without speculation) and sglang:spec_disabled_step_fraction (share of",
                "decode steps since the previous report that did).",
            ],
            "",
            "",
        ),
        (
            "0005-overlap-utils-fused-future-map",
            ["sglang/srt/managers/overlap_utils.py"],
            [
                "FutureMap: the draft-input fields in one launch each way, with dynamic disable",
                "Spec v2's future map stores five fields of next_draft_input per decode step",
                "(topk_p, topk_index, bonus_tokens, new_seq_lens, hidden_states) and gathers",
                "them back in the next step: five copies and five index kernels, where the",
                "non-speculative map has one of each.  In a server started with",
                "--speculative-dynamic-disable (and SGLANG_SPEC_DISABLE_FUSED_FUTURE_MAP not",
                "\"0\") each side is one Triton launch (dynamic_disable_kernels), with the same",
                "values; the original copies run for any layout the kernels do not take.",
            ],
            "FUTUREMAP-NDI",
            "",
        ),
    ],
    "0.5.9": [
        (
            "0001-speculative-dynamic-disable-module",
            [MODULE],
            [
                "Spec v2: policy and plain-decode step for dynamic speculation disable",
                "New module sglang/srt/speculative/dynamic_disable.py (the 0.5.12 design on",
                "0.5.9's API: verified_id instead of bonus_tokens, CudaGraphRunner without an",
                "attn_backend argument, no speculative_num_draft_tokens on the result): the",
                "per-step controller (its load rule measured: speculate per batch-size bucket",
                "while accept length x plain step time > speculative step time, timed on the",
                "host), the server-start refusal of unsupported modes, target",
                "DECODE CUDA graphs on a second attention backend, and the disabled step whose",
                "GenerationBatchResult still carries next_draft_input (verified_id,",
                "new_seq_lens = seq_lens + 1, verify_done, topk_p/topk_index/hidden_states),",
                "accept_lens of ones and spec_disabled = True, plus one draft decode token.",
            ],
            REQUIRES,
            "SPEC2-DISABLED-NDI",
        ),
        (
            "0002-server-args-dynamic-disable",
            ["sglang/srt/server_args.py"],
            [
                "Server arguments for dynamic speculation disable; refuse unsupported modes",
                "--speculative-dynamic-disable, --speculative-disable-above-bs (24),",
                "--speculative-enable-below-bs (16), --speculative-disable-below-accept-len",
                "(1.5), --speculative-disable-load-rule measured|static (measured).  At the",
                "end of _handle_speculative_decoding the server refuses to",
                "start with the v1 worker (overlap off), topk > 1, DP attention, PP, TBO,",
                "PD disaggregation, or (unless SGLANG_SPEC_DISABLE_ALLOW_UNVERIFIED=1) a",
                "mode outside EAGLE/EAGLE3, triton attention, page size 1, tp 1.",
            ],
            "",
            "",
        ),
        (
            "0003-eagle-worker-v2-disabled-step",
            WORKER_V2_FILES,
            [
                "EAGLEWorkerV2: run the disabled step when the controller says so",
                "forward_batch_generation decides once per decode step, before drafting;",
                "a disabled step returns SpecDisableRuntime.forward_disabled's result; a",
                "prefill step calls note_other_step (no step-cost sample across it).",
                "on_spec_step_done_cpu feeds the accept-length rule; spec_disable_status",
                "reports the mode for the decode log line.",
                *SUBCLASS_NOTE,
            ],
            REQUIRES,
            "SPEC2-DISABLED-NDI",
        ),
        (
            "0004-output-processor-disabled-stride",
            ["sglang/srt/managers/scheduler_output_processor_mixin.py"],
            [
                "Output processor: stride 1 for a disabled step's tokens; accept statistics",
                "0.5.9 slices next_token_ids with the worker's speculative_num_draft_tokens;",
                "a result marked spec_disabled holds one token per request.  The per-request",
                "accept lengths are handed to the worker (on_spec_step_done_cpu).",
            ],
            REQUIRES,
            "SPEC2-DISABLED-STRIDE",
        ),
        (
            "0005-decode-log-spec-mode",
            ["sglang/srt/managers/scheduler_metrics_mixin.py"],
            [
                "Decode log line: which speculation mode ran and why",
                "Appends the worker's spec_disable_status() after 'accept len'.",
            ],
            "",
            "",
        ),
    ],
}


VERIFIED = {
    "0.5.12": [
        "spec-v2 overlap, EAGLE3, topk=1, triton attention, page_size 1, tp 1 (GPU: H200, see "
        "docs/results/patch-0.5.12.md)",
        "spec-v2 overlap, EAGLE, topk=1 (same code path as EAGLE3; not run on the GPU)",
    ],
    "0.5.9": [
        "spec-v2 overlap, EAGLE/EAGLE3, topk=1, triton attention, page_size 1, tp 1: NOT run on a GPU "
        "(0.5.9 needs an older torch than the lent H200 has); applies cleanly, byte-compiles, read against "
        "0.5.9; same design as the GPU-verified 0.5.12 series",
    ],
}


def environment(patch_texts: list[str]) -> list[str]:
    """The variables the patches read, in order of first appearance (the manifest's list: derived,
    so that a new switch cannot be missing from it)."""
    added = (line for text in patch_texts for line in text.splitlines() if line.startswith("+"))
    return list(dict.fromkeys(n for line in added for n in re.findall(r"[\"'](SGLANG_SPEC_DISABLE_[A-Z_]+)[\"']", line)))


def file_diff(pristine: Path, edited: Path, rel: str) -> str:
    old = pristine / rel
    new = edited / rel
    old_arg = str(old) if old.exists() else "/dev/null"
    old_label = f"a/{rel}" if old.exists() else "/dev/null"
    proc = subprocess.run(
        ["diff", "-u", "--label", old_label, "--label", f"b/{rel}", old_arg, str(new)],
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"diff failed for {rel}: {proc.stderr}")
    if proc.returncode == 0:
        raise SystemExit(f"{rel}: no change between the trees")
    return proc.stdout


def header(desc: list[str], requires: str, adds: str, today: str) -> str:
    lines = [f"Description: {desc[0]}"] + [f" {line}" for line in desc[1:]]
    lines.append(f"Author: {AUTHOR}")
    lines.append(f"Requires-Contracts: {requires}")
    lines.append(f"Adds-Contracts: {adds}")
    lines.append("Forwarded: no")
    lines.append(f"Last-Update: {today}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def main() -> None:
    version = sys.argv[1]
    pristine, edited, out = (Path(a).resolve() for a in sys.argv[2:5])
    spec = PATCHES[version]
    out.mkdir(parents=True, exist_ok=True)
    today = datetime.date.today().isoformat()
    names = []
    touched = []
    for stem, files, desc, requires, adds in spec:
        body = "".join(file_diff(pristine, edited, rel) for rel in files)
        name = f"{stem}.patch"
        (out / name).write_text(header(desc, requires, adds, today) + body)
        names.append(name)
        touched += files
    (out / "series").write_text(
        "# dynamic-disable for SGLang " + version + ": apply in this order (patch -p1 from the dir holding sglang/)\n"
        + "".join(n + "\n" for n in names)
    )

    # the informational keys; spectrace's own manifest writer adds the patch and pristine-file hashes
    info = {
        "description": "Spec v2 (EAGLEWorkerV2, overlap scheduler): per decode step, run a plain one-token "
        "target decode instead of draft/verify/draft-extend while the running batch is large (hysteresis) "
        "or drafts are rarely accepted; next_draft_input (new_seq_lens) is returned on every path.",
        "verified_modes": VERIFIED[version],
        "server_args": ["--speculative-dynamic-disable", "--speculative-disable-above-bs",
                        "--speculative-enable-below-bs", "--speculative-disable-below-accept-len"],
        "environment": environment([(out / n).read_text() for n in names]),
        "adds_files": [rel for rel in touched if not (pristine / rel).exists()],
    }
    series = Series(name="dynamic-disable", version=version, directory=out,
                    patches=[load_patch(out / n) for n in names], manifest=info)
    (out / "manifest.toml").write_text(render_manifest(series, pristine))

    # check: dry run and real apply on a fresh copy of the pristine tree
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "tree"
        shutil.copytree(pristine / "sglang", fresh / "sglang")
        for n in names:
            for dry in (True, False):
                cmd = ["patch", "-p1", "--forward", "--batch", "-d", str(fresh), "-i", str(out / n)]
                if dry:
                    cmd.insert(1, "--dry-run")
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    raise SystemExit(f"{n} does not apply (dry_run={dry}):\n{proc.stdout}{proc.stderr}")
        for rel in touched:
            if (fresh / rel).read_bytes() != (edited / rel).read_bytes():
                raise SystemExit(f"{rel}: patched result differs from the edited tree")
    print(f"{out}: {len(names)} patches, apply cleanly, result equals the edited tree")


if __name__ == "__main__":
    main()
