"""`spectrace contracts check` derives obligations from the tree itself: a new nested read that no
catalog entry names is still checked against every worker return path.

The read is `batch_result.next_draft_input.verify_done.synchronize()` added to Scheduler.run_batch
right after `batch.spec_info = batch_result.next_draft_input` (0.5.12, spec v2 overlap block).
EAGLEWorkerV2's prefill path returns `_draft_extend_for_prefill`'s
`EagleDraftInput(hidden_states=..., bonus_tokens=..., new_seq_lens=..., ...)`, which leaves
`verify_done` at its dataclass default None (only the verify path sets it); SGLang's own reader,
ScheduleBatch.maybe_wait_verify_done, checks it for None. `topk_p` is not used: on 0.5.12 every
worker path sets it before the return (the decode path through `_draft_extend_for_decode`'s
`batch_result` parameter), so a violation there would not be a real one.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from spectrace.contracts.cli import contracts_group

SCHED = "sglang/srt/managers/scheduler.py"
ANCHOR = "batch.spec_info = batch_result.next_draft_input\n"
NEW_READ = "batch_result.next_draft_input.verify_done.synchronize()"


def _check(root, out):
    res = CliRunner().invoke(contracts_group, ["check", "--sglang", str(root), "--format", "json", "-o", str(out)])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(out.read_text())


def _add_read(root) -> int:
    """Insert NEW_READ after the anchor with the anchor's indentation; return its 1-based line."""
    path = root / SCHED
    lines = path.read_text().splitlines(keepends=True)
    hits = [i for i, ln in enumerate(lines) if ln.strip() + "\n" == ANCHOR]
    assert len(hits) == 1, hits
    i = hits[0]
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    lines.insert(i + 1, indent + NEW_READ + "\n")
    path.write_text("".join(lines))
    return i + 2


def test_uncatalogued_nested_read_is_checked(sglang_copy, tmp_path):
    root = sglang_copy("0.5.12", subdirs=("sglang/srt",))
    rc, before = _check(root, tmp_path / "before.json")
    assert rc == 0 and not before["violations"] and not before["unknowns"]

    line = _add_read(root)
    rc, after = _check(root, tmp_path / "after.json")
    assert rc == 1 and not after["ok"]
    found = [f for f in after["violations"] + after["unknowns"]
             if f["read"]["file"] == SCHED and f["read"]["line"] == line]
    assert found, after["violations"] + after["unknowns"]
    assert all(f["read"]["shape"] == NEW_READ for f in found)
    assert all(f"scheduler.py:{line}" in f["message"] for f in found)
    eagle = [f for f in found if f["producer"]["file"] == "sglang/srt/speculative/eagle_worker_v2.py"]
    assert eagle and any("verify_done" in f["message"] and "default None" in f["message"] for f in eagle)
