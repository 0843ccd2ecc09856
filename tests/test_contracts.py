"""Contract extraction, catalog check and drift on real SGLang source."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from spectrace.cli import main
from spectrace.contracts.catalog import load_catalog
from spectrace.contracts.check import check_catalog
from spectrace.contracts.diff import diff_extractions
from spectrace.contracts.extract import extract

RELEASES = ["0.5.9", "0.5.12", "0.5.17", "0.5.23"]


@pytest.fixture(scope="module")
def extractions(sglang_source):
    cache = {}

    def get(version):
        if version not in cache:
            cache[version] = extract(sglang_source(version))
        return cache[version]

    return get


def _read(x, line, file="sglang/srt/managers/scheduler.py"):
    found = [r for r in x.reads if r.file == file and r.line == line]
    assert found, f"no read at {file}:{line}"
    return found[0]


def test_seed_reads_on_0_5_9(extractions):
    x = extractions("0.5.9")
    assert x.owner_file == "sglang/srt/managers/utils.py" and len(x.owner_fields) == 14
    spec = _read(x, 2347)
    assert spec.field == "next_draft_input" and spec.owner == "GenerationBatchResult"
    assert spec.consumer == "Scheduler.run_batch"
    assert spec.guarded is False and spec.kind == "unconditional-read"
    assert spec.path_condition.endswith("self.enable_overlap and batch.is_spec_v2")
    assert spec.shape == "batch.spec_info = batch_result.next_draft_input"
    seq = _read(x, 2357)
    assert seq.attribute_path == ["next_draft_input", "new_seq_lens"]
    assert seq.guarded is False
    # a guarded read is classified with its guard
    copy_done = [r for r in x.reads if r.consumer.endswith("process_batch_result_decode") and r.field == "copy_done"
                 and r.shape == "result.copy_done.synchronize()"]
    assert copy_done and copy_done[0].guarded and copy_done[0].guards[0].kind == "not-none-check"


def test_worker_side_producers_and_return_paths(extractions):
    x = extractions("0.5.9")
    assigns = [p for p in x.producers if p.kind == "assign" and "next_draft_input" in p.fields]
    assert any(p.function == "EAGLEWorkerV2.forward_batch_generation" for p in assigns)
    paths = [p for p in x.return_paths if p.worker.endswith(".EAGLEWorkerV2")]
    assert {p.line for p in paths} == {673, 698}
    assert all("next_draft_input" in p.sets for p in paths)
    tp = [p for p in x.return_paths if p.worker.endswith(".TpModelWorker")]
    assert tp and all("next_draft_input" not in p.sets for p in tp)
    # ...but TpModelWorker is chosen only when spec_algorithm is none, which is_spec_v2 excludes
    assert x.polymorphic["model_worker"].selection["sglang.srt.managers.tp_worker.TpModelWorker"] == \
        "self.spec_algorithm.is_none()"


@pytest.mark.parametrize("version", RELEASES)
def test_no_false_violations_on_releases(extractions, version):
    x = extractions(version)
    assert x.violations == []
    assert any(r.field == "next_draft_input" and r.consumer == "Scheduler.run_batch" and not r.guarded
               for r in x.reads)


@pytest.mark.parametrize("version", RELEASES)
def test_catalog_holds_on_releases(extractions, version):
    report = check_catalog(extractions(version), load_catalog())
    assert report.ok, [(r.id, r.status, r.message) for r in report.results if not r.ok]
    present = {r.id for r in report.results if r.status in ("present", "moved")}
    if version in ("0.5.9", "0.5.12"):
        assert {"SPEC2-NDI-SPECINFO", "SPEC2-NDI-SEQLENS"} <= present
    else:
        assert "SPEC2-NDI-SPECINFO-OVERLAP" in present


def test_ids_are_stable_across_versions(extractions):
    a = {r.id for r in extractions("0.5.9").reads}
    b = {r.id for r in extractions("0.5.12").reads}
    seed = _read(extractions("0.5.9"), 2347).id
    assert seed in a and seed in b  # the line moved 2347 -> 3061, the id did not


def test_drift_0_5_9_to_0_5_23(extractions):
    d = diff_extractions(extractions("0.5.9"), extractions("0.5.23"))
    assert (d.a_fields, d.b_fields) == (14, 40)
    kinds = {c.change for c in d.changes}
    assert {"field-added", "moved", "removed", "added"} <= kinds
    seqlens = [c for c in d.changes if c.change == "removed" and "new_seq_lens" in c.detail]
    assert seqlens, "the next_draft_input.new_seq_lens read of 0.5.9 is gone by 0.5.23"
    d12 = diff_extractions(extractions("0.5.9"), extractions("0.5.12"))
    assert any(c.change == "field-renamed" and c.field == "num_accepted_tokens -> num_correct_drafts" for c in d12.changes)


@pytest.mark.slow  # fetches 0.5.9 through the CLI, not the fixture
def test_cli_extract_json_and_check(tmp_path):
    runner = CliRunner()
    out = tmp_path / "x.json"
    res = runner.invoke(main, ["contracts", "extract", "--sglang", "0.5.9", "--format", "json", "-o", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert set(data) >= {"reads", "producers", "violations"}
    for key in ("id", "field", "owner", "file", "line", "consumer", "guarded", "guards", "path_condition"):
        assert key in data["reads"][0]
    res = runner.invoke(main, ["contracts", "check", "--sglang", "0.5.9"])
    assert res.exit_code == 0 and "contracts hold" in res.output
    res = runner.invoke(main, ["contracts", "check", "--sglang", "0.5.9", "--catalog", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "no contract catalog" in res.output
    res = runner.invoke(main, ["contracts", "extract", "--sglang", str(tmp_path)])
    assert res.exit_code == 2 and "no sglang package" in res.output


def test_vanished_contract_names_where_its_job_went(extractions):
    """0.5.17: batch.seq_lens no longer comes from next_draft_input; the check says from where."""
    report = check_catalog(extractions("0.5.17"))
    seq = next(r for r in report.results if r.id == "SPEC2-NDI-SEQLENS")
    assert seq.status == "not-applicable" and "out of reach of field reads" in seq.message
    kinds = {(s.kind, s.file, s.function) for s in seq.successors}
    # the overlap path: the future map's buffer, filled by the worker through a callback
    assert ("store", "sglang/srt/managers/overlap_utils.py", "FutureMap.resolve_seq_lens_cpu") in kinds
    assert ("field", "sglang/srt/managers/scheduler.py", "Scheduler.run_batch") in kinds
    callbacks = [s for s in seq.successors if s.kind == "callback"]
    assert any(s.file == "sglang/srt/speculative/eagle_worker_v2.py" and s.text.startswith("on_publish(")
               for s in callbacks)
    # where the contract still holds there is nothing to name
    old = next(r for r in check_catalog(extractions("0.5.9")).results if r.id == "SPEC2-NDI-SEQLENS")
    assert old.status == "present" and old.successors == []
