"""Catalog kind "producer-sets" on real SGLang trees: the dynamic-disable series' added contracts.

SPEC2-DISABLED-NDI and SPEC2-DISABLED-STRIDE name a producer that only a patched tree has
(``SpecDisableRuntime.forward_disabled``, from the shipped series' new module): present after the
shipped series is applied, broken (naming the producer's return site) when the patched producer
stops setting a field, not-applicable on a release.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from spectrace.cli import main
from spectrace.contracts.catalog import load_catalog
from spectrace.contracts.check import check_catalog
from spectrace.errors import SpectraceError
from spectrace.patches import engine
from spectrace.patches.series import SERIES_DIR_ENV
from spectrace.source import from_path

ADDED = ("SPEC2-DISABLED-NDI", "SPEC2-DISABLED-STRIDE")
MODULE = "sglang/srt/speculative/dynamic_disable.py"
SHIPPED = Path(engine.__file__).resolve().parent / "dynamic-disable"
NDI_KEYWORD = "            next_draft_input=next_draft_input,\n"
STRIDE_MARK = "        result.spec_disabled = True\n"


def _results(tree: Path) -> tuple:
    report = check_catalog(from_path(tree))
    return report, {r.id: r for r in report.results}


def _results_without(tree: Path, line: str) -> tuple:
    """Drop one line (present exactly once) from the patched module, then check the catalog."""
    module = tree / MODULE
    text = module.read_text()
    assert text.count(line) == 1
    module.write_text(text.replace(line, ""))
    return _results(tree)


def _forward_disabled_returns(tree: Path) -> list[int]:
    """Lines of forward_disabled's return statements, read from the patched file itself."""
    module = ast.parse((tree / MODULE).read_text())
    func = next(n for n in ast.walk(module) if isinstance(n, ast.FunctionDef) and n.name == "forward_disabled")
    return [n.lineno for n in ast.walk(func) if isinstance(n, ast.Return)]


@pytest.fixture
def patched(sglang_copy, monkeypatch):
    """``patched(version) -> Path``: a copy of real SGLang with the shipped series applied by the engine."""
    monkeypatch.delenv(SERIES_DIR_ENV, raising=False)

    def make(version: str) -> Path:
        tree = sglang_copy(version, subdirs=("sglang/srt",))
        result = engine.apply(tree, "dynamic-disable")
        after = next(g for g in result.gates if g.name == "contracts (after)")
        assert after.passed, after.line()
        assert "not in the catalog" not in after.summary
        assert f"added and holding: {', '.join(ADDED)}" in after.summary
        return tree

    return make


@pytest.mark.parametrize("version", ["0.5.9", "0.5.12"])
def test_shipped_series_adds_contracts_that_hold(patched, version):
    tree = patched(version)
    report, results = _results(tree)
    assert report.ok, [(r.id, r.status, r.message) for r in report.results if not r.ok]
    returns = _forward_disabled_returns(tree)
    for cid in ADDED:
        r = results[cid]
        assert r.status == "present", r.message
        assert r.consumer == "SpecDisableRuntime.forward_disabled"
        assert (r.found.file, r.found.line) == (MODULE, returns[0])
    # the fields differ by version: 0.5.9's result has no speculative_num_draft_tokens, its output
    # processor takes stride 1 from the spec_disabled marker (patch 0004)
    wanted = {"0.5.9": "accept_lens, spec_disabled", "0.5.12": "accept_lens, speculative_num_draft_tokens"}[version]
    assert f"sets {wanted} (" in results["SPEC2-DISABLED-STRIDE"].message
    assert "sets next_draft_input (" in results["SPEC2-DISABLED-NDI"].message


def test_producer_that_stops_passing_next_draft_input_breaks_ndi(patched):
    tree = patched("0.5.12")
    report, results = _results_without(tree, NDI_KEYWORD)
    line = _forward_disabled_returns(tree)[0]
    ndi = results["SPEC2-DISABLED-NDI"]
    assert ndi.status == "broken" and not ndi.ok
    assert ndi.message.startswith(f"SpecDisableRuntime.forward_disabled returns at {MODULE}:{line} (`return result`)")
    assert ndi.message.endswith("without setting next_draft_input")
    assert (ndi.found.file, ndi.found.line) == (MODULE, line)
    assert results["SPEC2-DISABLED-STRIDE"].status == "present"
    assert report.exit_code == 1
    out = CliRunner().invoke(main, ["contracts", "check", "--sglang", str(tree)])
    assert out.exit_code == 1
    assert "SPEC2-DISABLED-NDI          broken" in out.output
    assert f"found:   {MODULE}:{line} `return result`" in out.output


def test_0_5_9_stride_needs_the_spec_disabled_marker(patched):
    """A non-field attribute a contract names (0.5.9's marker) is followed like a field."""
    tree = patched("0.5.9")
    _, results = _results_without(tree, STRIDE_MARK)
    stride = results["SPEC2-DISABLED-STRIDE"]
    assert stride.status == "broken"
    assert stride.message.endswith("without setting spec_disabled")
    assert results["SPEC2-DISABLED-NDI"].status == "present"


def test_release_without_the_producer_is_not_applicable(sglang_source):
    source = sglang_source("0.5.12")
    report = check_catalog(source)
    results = {r.id: r for r in report.results}
    for cid in ADDED:
        assert results[cid].status == "not-applicable", results[cid].message
        assert "SpecDisableRuntime.forward_disabled is not in this tree" in results[cid].message
    out = CliRunner().invoke(main, ["contracts", "check", "--sglang", str(source.root)])
    assert out.exit_code == 0, out.output


def test_check_catalog_follows_producers_an_extraction_was_made_without(patched):
    from spectrace.contracts.extract import extract

    tree = patched("0.5.12")
    plain = extract(from_path(tree))
    assert plain.producer_paths == {}
    report = check_catalog(plain)
    assert {r.id: r.status for r in report.results if r.id in ADDED} == dict.fromkeys(ADDED, "present")
    assert plain.producer_paths == {}  # the caller's extraction is left as it was


def test_after_gate_refuses_a_series_whose_added_contract_breaks(sglang_copy, tmp_path, monkeypatch):
    """End to end through the engine: the shipped 0.5.12 series with the keyword dropped from the
    new module's result; the after-gate names the scheduler's read that the disabled step now breaks
    and apply rolls back."""
    series_root = tmp_path / "series-root"
    directory = series_root / "dynamic-disable" / "0.5.12"
    shutil.copytree(SHIPPED / "0.5.12", directory)
    patch = directory / "0001-speculative-dynamic-disable-module.patch"
    text = patch.read_text()
    header = re.search(r"^@@ -0,0 \+1,(\d+) @@$", text, re.M)  # the new file's one hunk
    assert text.count("+" + NDI_KEYWORD) == 1 and header
    shorter = f"@@ -0,0 +1,{int(header.group(1)) - 1} @@"
    patch.write_text(text.replace("+" + NDI_KEYWORD, "").replace(header.group(0), shorter))
    monkeypatch.setenv(SERIES_DIR_ENV, str(series_root))
    tree = sglang_copy("0.5.12", subdirs=("sglang/srt",))
    out = CliRunner().invoke(main, ["patch", "manifest", "--sglang", str(tree)])
    assert out.exit_code == 0, out.output
    before = (tree / "sglang/srt/speculative/eagle_worker_v2.py").read_bytes()
    with pytest.raises(SpectraceError, match=r"gate contracts \(after\): unconditional read SPEC2-NDI-SEQLENS "
                                             r"is violated after patching \(\+\d+ more\)"):
        engine.apply(tree, "dynamic-disable")
    assert not (tree / MODULE).exists()
    assert (tree / "sglang/srt/speculative/eagle_worker_v2.py").read_bytes() == before


def test_catalog_rejects_a_producer_contract_without_class_and_method(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[contract]]\nid = "X"\nkind = "producer-sets"\nowner = "GenerationBatchResult"\n'
                   'producer = "forward_disabled"\nfields = ["next_draft_input"]\n')
    with pytest.raises(SpectraceError, match=r'producer must be "Class.method"'):
        load_catalog(bad)
    bad.write_text('[[contract]]\nid = "X"\nkind = "producer-sets"\nowner = "GenerationBatchResult"\n'
                   'producer = "A.b"\n')
    with pytest.raises(SpectraceError, match="contract X lacks fields"):
        load_catalog(bad)


# the series' debug path hands the whole draft extend to a helper as a lambda (`run_full`)
EAGLE2 = "sglang/srt/speculative/eagle_worker_v2.py"
SCHED = "sglang/srt/managers/scheduler.py"
LAMBDA_CALL = "            lambda: self.worker.draft_worker._draft_extend_for_prefill(\n"


def _prefill_shortcut_return(tree: Path) -> int:
    """The line of EAGLEWorkerV2's return right after it installs the series' prefill draft input."""
    lines = (tree / EAGLE2).read_text().splitlines()
    i = lines.index("                    batch_output.next_draft_input = next_draft_input")
    assert lines[i + 1].strip() == "return batch_output"
    return i + 2


def test_patched_0_5_12_decides_every_path(patched):
    """The callable passed as ``run_full`` is followed into its body: nothing is left unknown."""
    tree = patched("0.5.12")
    assert (tree / MODULE).read_text().count(LAMBDA_CALL) == 1
    report = check_catalog(from_path(tree), strict=True)
    assert report.ok and report.exit_code == 0, [(r.id, r.status, r.message) for r in report.results if not r.ok]
    assert report.unknowns == [] and report.violations == []
    assert {r.id: r.status for r in report.results if r.id in ("SPEC2-NDI-SPECINFO", "SPEC2-NDI-SEQLENS")} == \
        {"SPEC2-NDI-SPECINFO": "present", "SPEC2-NDI-SEQLENS": "present"}
    out = CliRunner().invoke(main, ["contracts", "check", "--strict", "--sglang", str(tree)])
    assert out.exit_code == 0 and "0 unknown" in out.output, out.output


def test_a_lambda_whose_body_cannot_be_followed_stays_unknown(patched):
    tree = patched("0.5.12")
    module = tree / MODULE
    module.write_text(module.read_text().replace(LAMBDA_CALL, "            lambda: self.unknown_hook(\n"))
    report = check_catalog(from_path(tree))
    line = _prefill_shortcut_return(tree)
    found = [u for u in report.unknowns if u.producer.file == EAGLE2 and u.producer.line == line]
    assert found and not report.violations
    assert {u.read.line for u in found} == {3066}
    assert all(u.read.file == SCHED and "unresolved call self.unknown_hook(...)" in u.why for u in found)
    assert next(r for r in report.results if r.id == "SPEC2-NDI-SEQLENS").status == "unknown"


def test_a_nested_function_passed_on_is_followed(patched):
    """The same debug path with the lambda written as a function defined in place."""
    tree = patched("0.5.12")
    module = tree / MODULE
    text = module.read_text()
    call = ("        return self._kv_against_full(\n"
            "            \"prefill\",\n"
            "            out_cache_loc,\n"
            "            lambda: self.worker.draft_worker._draft_extend_for_prefill(\n"
            "                batch,\n"
            "                logits_output.hidden_states,\n"
            "                batch_output.next_token_ids,\n"
            "                logits_output.mm_input_embeds,\n"
            "            ),\n"
            "        )\n")
    nested = ("        def run_full():\n"
              "            return self.worker.draft_worker._draft_extend_for_prefill(\n"
              "                batch,\n"
              "                logits_output.hidden_states,\n"
              "                batch_output.next_token_ids,\n"
              "                logits_output.mm_input_embeds,\n"
              "            )\n\n"
              "        return self._kv_against_full(\"prefill\", out_cache_loc, run_full)\n")
    assert text.count(call) == 1
    module.write_text(text.replace(call, nested))
    report = check_catalog(from_path(tree), strict=True)
    assert report.unknowns == [] and report.violations == [] and report.exit_code == 0
    assert next(r for r in report.results if r.id == "SPEC2-NDI-SEQLENS").status == "present"
