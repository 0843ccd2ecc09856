"""Drift the gate must explain in its own words, on copies of real SGLang source: a field removed
from the result dataclass, a consumer reading an attribute nobody declares, an obligation derived
from the tree without a catalog entry."""

from __future__ import annotations

import json

import pytest

from spectrace.contracts.catalog import load_catalog
from spectrace.contracts.check import check_catalog
from spectrace.contracts.report import check_text, sarif
from mutate import EAGLE2, SCHED, SUBDIRS, UTILS, check, edit, result






@pytest.fixture
def copy_0512(sglang_copy):
    return sglang_copy("0.5.12", subdirs=SUBDIRS)


def test_field_removed_from_the_dataclass(copy_0512):
    edit(copy_0512, UTILS, "    next_draft_input: Optional[EagleDraftInput] = None\n", "")
    report = check(copy_0512)
    assert report.exit_code == 1
    for cid in ("SPEC2-NDI-SPECINFO", "SPEC2-NDI-SEQLENS"):
        r = result(report, cid)
        assert r.status == "gone" and not r.ok
        assert r.message.startswith("field next_draft_input is gone from GenerationBatchResult (sglang/srt/managers/utils.py:")
        assert f"Scheduler.run_batch still reads it at {SCHED}:3061" in r.message
        assert "no longer has" not in r.message
    # the reads left behind are named too, each with its site (the worker still writes the attribute)
    sites = {(u.file, u.line) for u in report.extraction.undeclared if u.attribute == "next_draft_input"}
    assert (SCHED, 3061) in sites and (SCHED, 3066) in sites


def test_consumer_reads_a_misspelt_attribute(copy_0512):
    edit(copy_0512, SCHED, "                    batch.spec_info = batch_result.next_draft_input\n",
          "                    batch.spec_info = batch_result.next_draft_inptu\n")
    report = check(copy_0512)
    assert report.exit_code == 1 and not report.ok
    [u] = [u for u in report.undeclared if u.attribute == "next_draft_inptu"]
    assert (u.file, u.line, u.consumer) == (SCHED, 3061, "Scheduler.run_batch")
    assert u.suggestion == "next_draft_input"
    assert "batch_result.next_draft_inptu" in u.message and "no class on its path declares" in u.message
    r = result(report, "SPEC2-NDI-SPECINFO")
    assert r.status == "gone" and r.message.startswith("Scheduler.run_batch reads `batch_result.next_draft_inptu`")
    assert f"{SCHED}:3061" in r.message and "typo of next_draft_input" in r.message
    text = check_text(report)
    assert "FAIL UNDECLARED" in text and "1 undeclared attribute reads" in text
    results = sarif(report.extraction, report)["runs"][0]["results"]
    hit = [x for x in results if x["ruleId"] == "spectrace/undeclared-attribute"]
    assert hit and hit[0]["level"] == "error"
    assert hit[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 3061
    assert json.loads(json.dumps(report.to_json()))["counts"]["undeclared"] == 1


def test_releases_declare_every_attribute_they_read(sglang_source):
    for version in ("0.5.9", "0.5.12", "0.5.17", "0.5.23"):
        report = check_catalog(sglang_source(version), load_catalog(), strict=True)
        assert report.undeclared == [], (version, report.undeclared)


# ---------------------------------------------------------------- the new_seq_lens relay (0.5.13+)

DECODE_PUBLISH = ("            # Publish before draft_extend so the fence is at verify-end.\n"
                  "            if on_publish is not None:\n"
                  "                on_publish(batch_output.new_seq_lens)\n")


@pytest.fixture
def copy_0517(sglang_copy):
    return sglang_copy("0.5.17", subdirs=SUBDIRS)


def test_relay_holds_on_0517(copy_0517):
    report = check(copy_0517, strict=True)
    r = result(report, "SPEC2-SEQ-LENS-PUBLISH")
    assert r.status == "present" and r.ok and report.exit_code == 0
    assert (r.found.file, r.found.line) == (SCHED, 3581) and "on_publish" in r.found.shape


def test_dropped_relay_on_the_decode_path_is_a_violation(copy_0517):
    edit(copy_0517, EAGLE2, DECODE_PUBLISH, "")
    report = check(copy_0517)
    r = result(report, "SPEC2-SEQ-LENS-PUBLISH")
    assert r.status == "violated" and not r.ok and report.exit_code == 1
    assert r.found.file == EAGLE2 and r.found.shape == "return batch_output"
    assert r.found.consumer in ("EAGLEWorkerV2.forward_batch_generation", "StandaloneWorkerV2.forward_batch_generation")
    assert "without calling on_publish(new_seq_lens)" in r.message and f"{SCHED}:3581" in r.message
    assert f"{EAGLE2}:1195 (`return batch_output`) when not (batch.forward_mode.is_extend()) and not (batch.is_extend_in_batch)" in r.message  # the decode branch


def test_relay_under_a_helper_and_a_guard_still_holds(copy_0517):
    # the publish moved into a helper that the decode path calls: the relay holds through it
    edit(copy_0517, EAGLE2, DECODE_PUBLISH, "            self._publish(batch_output, on_publish)\n")
    edit(copy_0517, EAGLE2, "    def forward_batch_generation(\n",
          "    def _publish(self, batch_output, on_publish):\n"
          "        if on_publish is not None:\n"
          "            on_publish(batch_output.new_seq_lens)\n\n"
          "    def forward_batch_generation(\n")
    report = check(copy_0517, strict=True)
    assert result(report, "SPEC2-SEQ-LENS-PUBLISH").status == "present" and report.exit_code == 0


def test_relay_contract_has_no_runtime_plan():
    from spectrace.shims.plans import plan_for

    [c] = [c for c in load_catalog() if c.id == "SPEC2-SEQ-LENS-PUBLISH"]
    assert c.versions == ["0.5.17", "0.5.23"] and plan_for(c) is None
