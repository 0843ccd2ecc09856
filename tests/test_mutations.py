"""Seeded breaks in copies of real SGLang 0.5.9 source: the checker must flag each one, naming the sites."""

from __future__ import annotations


import pytest

from spectrace.contracts.catalog import load_catalog
from mutate import EAGLE2, SCHED, SUBDIRS, check, edit, result






@pytest.fixture
def copy_059(sglang_copy):
    return sglang_copy("0.5.9", subdirs=SUBDIRS)


def test_producer_path_stops_setting_next_draft_input(copy_059):
    edit(copy_059, EAGLE2, "batch_output.next_draft_input = (", "_dropped_draft_input = (")
    report = check(copy_059)
    assert not report.ok and report.exit_code == 1
    sites = {((v["read"]["file"], v["read"]["line"]), (v["producer"]["file"], v["producer"]["line"]))
             for v in report.violations}
    assert ((SCHED, 2347), (EAGLE2, 673)) in sites
    assert ((SCHED, 2357), (EAGLE2, 673)) in sites
    assert all(v["field"] == "next_draft_input" for v in report.violations)


def test_none_guard_added(copy_059):
    edit(copy_059, SCHED,
          "                    batch.spec_info = batch_result.next_draft_input\n",
          "                    if batch_result.next_draft_input is not None:\n"
          "                        batch.spec_info = batch_result.next_draft_input\n")
    report = check(copy_059)
    r = result(report, "SPEC2-NDI-SPECINFO")
    # a None check added by the consumer is drift to note, not a break of the gate
    assert r.status == "relaxed" and r.ok and report.exit_code == 0
    assert r.found["file"] == SCHED and r.found["line"] == 2348
    assert "is not None" in r.message


def test_none_guard_removed(copy_059, tmp_path):
    catalog = tmp_path / "guarded.toml"
    catalog.write_text('''
family = "test"
[[contract]]
id = "OUT-COPY-DONE-GUARDED"
field = "copy_done"
owner = "GenerationBatchResult"
consumer = "SchedulerOutputProcessorMixin.process_batch_result_decode"
shape = "result.copy_done.synchronize()"
attribute_path = ["copy_done"]
kind = "guarded-read"
''')
    assert check(copy_059, load_catalog(catalog)).ok
    edit(copy_059, "sglang/srt/managers/scheduler_output_processor_mixin.py",
          "        if result.copy_done is not None:\n            result.copy_done.synchronize()\n\n        logits_output, next_token_ids, can_run_cuda_graph",
          "        result.copy_done.synchronize()\n\n        logits_output, next_token_ids, can_run_cuda_graph")
    report = check(copy_059, load_catalog(catalog))
    r = result(report, "OUT-COPY-DONE-GUARDED")
    assert r.status == "unguarded" and r.found["line"] == 422


def test_seq_lens_update_moved_out_of_its_branch(copy_059):
    edit(copy_059, SCHED,
          "                    batch.seq_lens = batch_result.next_draft_input.new_seq_lens\n",
          "                    pass\n                batch.seq_lens = batch_result.next_draft_input.new_seq_lens\n")
    report = check(copy_059)
    r = result(report, "SPEC2-NDI-SEQLENS")
    assert r.status == "condition-changed" and r.found["line"] == 2358
    assert "batch.is_spec_v2" not in r.found["path_condition"]
    # and now the plain TpModelWorker (no next_draft_input) can reach it: a violation with both sites
    tp = [v for v in report.violations if v["producer"]["worker"].endswith("TpModelWorker")]
    assert tp and tp[0]["read"]["line"] == 2358 and tp[0]["producer"]["file"] == "sglang/srt/managers/tp_worker.py"


def test_renamed_field(copy_059):
    edit(copy_059, "sglang/srt/managers/utils.py",
          "    next_draft_input: Optional[EagleDraftInput] = None",
          "    next_draft_state: Optional[EagleDraftInput] = None")
    report = check(copy_059)
    for cid in ("SPEC2-NDI-SPECINFO", "SPEC2-NDI-SEQLENS"):
        r = result(report, cid)
        assert r.status == "gone" and not r.ok
    assert report.exit_code == 1
