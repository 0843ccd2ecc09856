"""The contract check as a CI gate, on copies of real SGLang source: honest counts, parse failures,
unknown producer paths, obligations along the whole dereferenced path, harmless edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spectrace.contracts.catalog import load_catalog
from spectrace.contracts.check import check_catalog
from spectrace.contracts.report import check_text, sarif
from spectrace.errors import SpectraceError
from mutate import EAGLE2, SCHED, SUBDIRS, check, edit, result






# the decode path's return of EAGLEWorkerV2.forward_batch_generation (the prefill one is deeper)
DECODE_RETURN = "\n            return batch_output\n"


def _decode_anchor(root: Path) -> str:
    text = (root / EAGLE2).read_text()
    start = text.index("    def forward_batch_generation(self, model_worker_batch")
    end = text.index("\n    def ", start + 10)
    body = text[start:end]
    assert body.count(DECODE_RETURN) == 1
    return body


@pytest.fixture
def copy_0512(sglang_copy):
    return sglang_copy("0.5.12", subdirs=SUBDIRS)


@pytest.fixture
def copy_059(sglang_copy):
    return sglang_copy("0.5.9", subdirs=SUBDIRS)


def _insert_before_decode_return(root: Path, lines: str) -> None:
    body = _decode_anchor(root)
    new_body = body.replace(DECODE_RETURN, "\n" + lines + "            return batch_output\n")
    edit(root, EAGLE2, body, new_body)


# ---------------------------------------------------------------- A: honest summaries

def test_summary_counts_not_applicable_apart(sglang_source):
    report = check_catalog(sglang_source("0.5.23"), load_catalog())
    n = report.counts
    assert report.ok and n["not_applicable"] >= 1
    assert n["hold"] + n["not_applicable"] + n["broken"] + n["unknown"] == len(report.results)
    assert n["hold"] == sum(r.status in ("present", "moved", "relaxed") for r in report.results)
    text = check_text(report)
    assert f"{n['hold']} contracts hold" in text and f"{n['not_applicable']} not applicable" in text
    assert f"{len(report.results)}/{len(report.results)}" not in text
    assert "not applicable to 0.5.23:" in text
    body = text.split("not applicable to 0.5.23:")[0]
    assert "SPEC2-NDI-SEQLENS" not in body  # not-applicable rows are listed apart
    data = report.to_json()
    assert data["counts"] == n and {"version", "source", "ok", "results", "violations"} <= set(data)


# ---------------------------------------------------------------- B: files that do not parse

def test_syntax_error_in_scheduler_names_the_file(copy_0512):
    edit(copy_0512, SCHED, "import signal\n", "import signal (\n")
    with pytest.raises(SpectraceError) as info:
        check(copy_0512)
    assert info.value.exit_code == 2
    assert f"{SCHED}:" in str(info.value) and "syntax error" in str(info.value)


def test_syntax_error_in_a_worker_module_names_the_file(copy_0512):
    (copy_0512 / "sglang/srt/managers/tp_worker.py").write_text(
        (copy_0512 / "sglang/srt/managers/tp_worker.py").read_text() + "\ndef broken(:\n")
    with pytest.raises(SpectraceError) as info:
        check(copy_0512)
    assert info.value.exit_code == 2 and "sglang/srt/managers/tp_worker.py:" in str(info.value)


# ---------------------------------------------------------------- C: unknown is not "holds"

def test_unresolved_producer_call_is_unknown(copy_0512):
    body = _decode_anchor(copy_0512)
    edit(copy_0512, EAGLE2, body, body.replace(DECODE_RETURN, "\n            return dataclasses.replace(batch_output)\n"))
    report = check(copy_0512)
    assert report.unknowns and not report.violations
    u = report.unknowns[0]
    assert u.producer.file == EAGLE2 and "dataclasses.replace" in u.why
    assert u.read.file == SCHED
    r = result(report, "SPEC2-NDI-SPECINFO")
    assert r.status == "unknown" and r.ok and report.exit_code == 0
    assert "unknown" in check_text(report) and f"{EAGLE2}:" in check_text(report)
    assert any(x["ruleId"] == "spectrace/unknown" for x in sarif(report.extraction, report)["runs"][0]["results"])
    assert json.dumps(report.to_json())  # serialisable, unknowns included
    strict = check(copy_0512, strict=True)
    assert not strict.ok and strict.exit_code == 1
    assert result(strict, "SPEC2-NDI-SPECINFO").ok is False


# ---------------------------------------------------------------- D: the whole dereferenced path

def test_none_written_on_a_branch_before_the_return(copy_0512):
    _insert_before_decode_return(copy_0512, "            if len(model_worker_batch.seq_lens) > 8:\n"
                                            "                batch_output.next_draft_input = None\n")
    report = check(copy_0512)
    assert report.exit_code == 1
    for cid in ("SPEC2-NDI-SPECINFO", "SPEC2-NDI-SEQLENS"):
        r = result(report, cid)
        assert r.status == "violated" and not r.ok
    v = [v for v in report.violations if v.producer.worker.endswith(".EAGLEWorkerV2")]
    assert {v.read.line for v in v} == {3061, 3066}
    assert all(x.producer.file == EAGLE2 and "len(model_worker_batch.seq_lens) > 8" in x.producer.branch
               for x in v)
    assert all("batch_output.next_draft_input = None" in x.message for x in v)


def test_dropped_new_seq_lens_keyword(copy_059):
    edit(copy_059, EAGLE2, "            verified_id=verified_id,\n            new_seq_lens=new_seq_lens,\n",
          "            verified_id=verified_id,\n")
    report = check(copy_059)
    assert report.exit_code == 1
    v = [v for v in report.violations if v.attribute_path == ["next_draft_input", "new_seq_lens"]]
    assert v and all(x.read.line == 2357 and x.producer.file == EAGLE2 for x in v)
    assert "EagleDraftInput.new_seq_lens at its default None" in v[0].message
    assert result(report, "SPEC2-NDI-SEQLENS").status == "violated"
    assert result(report, "SPEC2-NDI-SPECINFO").ok  # the draft input itself is still set


def test_none_in_a_conditional_expression(copy_0512):
    edit(copy_0512, EAGLE2, "            next_draft_input=next_draft_input,\n",
          "            next_draft_input=None if len(batch.seq_lens) > 8 else next_draft_input,\n")
    report = check(copy_0512)
    assert report.exit_code == 1
    v = [v for v in report.violations if v.read.line == 3061]
    assert v and "len(batch.seq_lens) > 8" in v[0].producer.branch


def test_releases_have_no_violation_and_no_unknown(sglang_source):
    for version in ("0.5.9", "0.5.12", "0.5.17", "0.5.23"):
        report = check_catalog(sglang_source(version), load_catalog(), strict=True)
        assert report.ok, (version, report.violations, report.unknowns)


# ---------------------------------------------------------------- E: harmless edits

def test_consumer_in_parentheses_holds(copy_0512):
    edit(copy_0512, SCHED, "                    batch.spec_info = batch_result.next_draft_input\n",
          "                    batch.spec_info = (batch_result.next_draft_input)\n")
    report = check(copy_0512)
    assert report.exit_code == 0 and result(report, "SPEC2-NDI-SPECINFO").status in ("present", "moved")


def test_guard_added_is_relaxed_not_broken(copy_0512):
    edit(copy_0512, SCHED, "                    batch.spec_info = batch_result.next_draft_input\n",
          "                    assert batch_result.next_draft_input is not None\n"
          "                    batch.spec_info = batch_result.next_draft_input\n")
    report = check(copy_0512)
    r = result(report, "SPEC2-NDI-SPECINFO")
    assert r.status == "relaxed" and r.ok and report.exit_code == 0
    assert "drift" in r.message


def _function_text(root: Path, rel: str, header: str) -> str:
    text = (root / rel).read_text()
    start = text.index(header)
    end = text.index("\n    def ", start + len(header))
    return text[start:end]


def test_renamed_local_keeps_identity(copy_0512):
    body = _function_text(copy_0512, SCHED, "    def run_batch(")
    assert body.count("batch_result") > 5
    edit(copy_0512, SCHED, body, body.replace("batch_result", "worker_out"))
    report = check(copy_0512, strict=True)
    assert report.exit_code == 0, check_text(report)
    for cid, line in (("SPEC2-NDI-SPECINFO", 3061), ("SPEC2-NDI-SEQLENS", 3066)):
        r = result(report, cid)
        assert r.status in ("present", "moved") and r.ok
        assert r.found.consumer == "Scheduler.run_batch" and r.found.line == line
        assert "worker_out.next_draft_input" in r.found.shape


RELAY = ("                    batch.spec_info = batch_result.next_draft_input\n"
         "                    batch.spec_info.future_indices = future_indices\n")
HELPER = ("    def _install_draft_input(self, batch, batch_result, future_indices):\n"
          "        batch.spec_info = batch_result.next_draft_input\n"
          "        batch.spec_info.future_indices = future_indices\n\n")


def _move_relay_into_helper(root: Path) -> int:
    edit(root, SCHED, RELAY, "                    self._install_draft_input(batch, batch_result, future_indices)\n")
    edit(root, SCHED, "    def run_batch(", HELPER + "    def run_batch(")
    lines = (root / SCHED).read_text().splitlines()
    return lines.index("        batch.spec_info = batch_result.next_draft_input") + 1


def test_relay_moved_into_a_helper_is_moved(copy_0512):
    line = _move_relay_into_helper(copy_0512)
    report = check(copy_0512, strict=True)
    assert report.exit_code == 0, check_text(report)
    r = result(report, "SPEC2-NDI-SPECINFO")
    assert r.status == "moved" and r.ok
    assert r.found.consumer == "Scheduler._install_draft_input" and (r.found.file, r.found.line) == (SCHED, line)
    assert r.found.caller == "Scheduler.run_batch" and r.found.caller_site.startswith(f"{SCHED}:")
    # the call's condition is part of the read's identity
    assert "batch.is_spec_v2" in r.found.path_condition and "Scheduler.run_batch" in r.message
    assert r.old_site == f"{SCHED}:3061"


def test_relay_in_a_helper_still_checks_the_workers(copy_0512):
    line = _move_relay_into_helper(copy_0512)
    _insert_before_decode_return(copy_0512, "            batch_output.next_draft_input = None\n")
    report = check(copy_0512)
    r = result(report, "SPEC2-NDI-SPECINFO")
    assert r.status == "violated" and report.exit_code == 1
    v = [v for v in report.violations if v.read.line == line]
    assert v and v[0].producer.file == EAGLE2 and v[0].read.consumer == "Scheduler._install_draft_input"
    assert "called from Scheduler.run_batch" in v[0].read.context


def test_relay_in_a_helper_called_elsewhere_is_condition_changed(copy_0512):
    _move_relay_into_helper(copy_0512)
    edit(copy_0512, SCHED, "                    self._install_draft_input(batch, batch_result, future_indices)\n",
          "                    pass\n")
    edit(copy_0512, SCHED, "                future_indices_or_next_token_ids = -future_indices.indices\n",
          "                future_indices_or_next_token_ids = -future_indices.indices\n"
          "                self._install_draft_input(batch, batch_result, future_indices)\n")
    report = check(copy_0512)
    r = result(report, "SPEC2-NDI-SPECINFO")
    assert r.status == "condition-changed" and not r.ok and "batch.is_spec_v2" not in r.found.path_condition


# ---------------------------------------------------------------- the patch gate and unknowns

def _gate_after(monkeypatch, unknown_file: str) -> "object":
    """The patch engine's after-gate over a check that reports one unknown obligation whose worker
    return lies in ``unknown_file``, for a series that touches the worker module."""
    from types import SimpleNamespace

    from spectrace.contracts.check import CheckReport, ContractResult
    from spectrace.contracts.kinds import Status
    from spectrace.contracts.records import Unknown, ViolatingPath, ViolatingRead
    from spectrace.patches import engine

    unknown = Unknown(id="U-1", field="f", owner="R", attribute_path=["f"],
                      read=ViolatingRead(id="R-1", file=SCHED, line=5, consumer="Scheduler.run_batch", shape="r.f.x",
                                         path_condition="", context="direct"),
                      producer=ViolatingPath(worker="W", method="W.forward", file=unknown_file, line=9, shape="return r",
                                             path_condition="", via=[]),
                      why="item", message=f"whether W.forward sets f on its return at {unknown_file}:9 is unknown: item")
    result = ContractResult(id="C-1", status=Status.PRESENT, ok=True, message="", field="f", consumer="Scheduler.run_batch",
                            shape="r.f.x", expected_condition="")
    report = CheckReport(version="0.5.12", source="", results=[result], unknowns=[unknown])
    monkeypatch.setattr(engine, "run_contract_catalog", lambda source: (report, {"C-1": "unconditional-read"}))
    series = SimpleNamespace(patches=[], touched_files=[EAGLE2])
    baseline = engine.ContractSnapshot(holding={"C-1"}, kinds={"C-1": "unconditional-read"})
    gate, _ = engine.contract_gate(None, series, "after", baseline)
    return gate


def test_gate_fails_on_an_unknown_in_code_the_series_touches(monkeypatch):
    gate = _gate_after(monkeypatch, EAGLE2)
    assert gate.status == "fail"
    assert gate.summary.startswith("not decided in code the series touches: whether W.forward sets f")


def test_gate_passes_an_unknown_elsewhere(monkeypatch):
    assert _gate_after(monkeypatch, "sglang/srt/speculative/other_worker.py").status == "ok"
