"""Seeded breaks and harmless edits in copies of real SGLang source: the checker must flag each break,
naming the contract and the sites, and pass each harmless edit."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from spectrace.cli import main
from spectrace.contracts.catalog import load_catalog
from spectrace.contracts.report import check_text
from mutate import EAGLE2, SCHED, SUBDIRS, UTILS, check, edit, function_text, insert_after, line_of, result


@pytest.fixture
def copy_059(sglang_copy):
    return sglang_copy("0.5.9", subdirs=SUBDIRS)


def test_producer_path_stops_setting_next_draft_input(copy_059):
    edit(copy_059, EAGLE2, "batch_output.next_draft_input = (", "_dropped_draft_input = (")
    report = check(copy_059)
    assert not report.ok and report.exit_code == 1
    sites = {((v.read.file, v.read.line), (v.producer.file, v.producer.line))
             for v in report.violations}
    assert ((SCHED, 2347), (EAGLE2, 673)) in sites
    assert ((SCHED, 2357), (EAGLE2, 673)) in sites
    assert all(v.field == "next_draft_input" for v in report.violations)


def test_none_guard_added(copy_059):
    edit(copy_059, SCHED,
          "                    batch.spec_info = batch_result.next_draft_input\n",
          "                    if batch_result.next_draft_input is not None:\n"
          "                        batch.spec_info = batch_result.next_draft_input\n")
    report = check(copy_059)
    r = result(report, "SPEC2-NDI-SPECINFO")
    # a None check added by the consumer is drift to note, not a break of the gate
    assert r.status == "relaxed" and r.ok and report.exit_code == 0
    assert r.found.file == SCHED and r.found.line == 2348
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
    assert r.status == "unguarded" and r.found.line == 422


def test_seq_lens_update_moved_out_of_its_branch(copy_059):
    edit(copy_059, SCHED,
          "                    batch.seq_lens = batch_result.next_draft_input.new_seq_lens\n",
          "                    pass\n                batch.seq_lens = batch_result.next_draft_input.new_seq_lens\n")
    report = check(copy_059)
    r = result(report, "SPEC2-NDI-SEQLENS")
    assert r.status == "condition-changed" and r.found.line == 2358
    assert "batch.is_spec_v2" not in r.found.path_condition
    # and now the plain TpModelWorker (no next_draft_input) can reach it: a violation with both sites
    tp = [v for v in report.violations if v.producer.worker.endswith("TpModelWorker")]
    assert tp and tp[0].read.line == 2358 and tp[0].producer.file == "sglang/srt/managers/tp_worker.py"


def test_renamed_field(copy_059):
    edit(copy_059, "sglang/srt/managers/utils.py",
          "    next_draft_input: Optional[EagleDraftInput] = None",
          "    next_draft_state: Optional[EagleDraftInput] = None")
    report = check(copy_059)
    for cid in ("SPEC2-NDI-SPECINFO", "SPEC2-NDI-SEQLENS"):
        r = result(report, cid)
        assert r.status == "gone" and not r.ok
    assert report.exit_code == 1


# ---------------------------------------------------------------- the matrix on 0.5.9, 0.5.12 and 0.5.17
#
# Each class of break and harmless edit, on each release where its construct exists. Cells tested
# elsewhere: in test_gate.py (0.5.12) a None on a branch, a None in a conditional expression, an
# unresolved producer, a guard added, parentheses, a renamed local, a relay moved into a helper and
# a file that does not parse, and (0.5.9) a dropped new_seq_lens keyword; above (0.5.9) a guard
# added; in test_gate_nested.py (0.5.12) a nested field at its default; in test_gate_drift.py
# (0.5.12) a removed field and a typo, and (0.5.17) the on_publish relay dropped. The on_publish
# relay exists from 0.5.13 on only. 0.5.17's scheduler reads no new_seq_lens of the draft input:
# its cell drops the result's own new_seq_lens, which on_publish relays.

RELAY = "                    batch.spec_info = batch_result.next_draft_input"
DECODE_RETURN = "\n            return batch_output\n"  # EAGLEWorkerV2's decode return
COMMON = "sglang/srt/speculative/eagle_worker_common.py"


@dataclass(frozen=True)
class Release:
    relay_id: str  # the contract of the spec_info relay under the overlap scheduler
    relay_line: int
    decode_return: int  # EAGLEWorkerV2.forward_batch_generation's decode `return batch_output`
    prefill_return: int  # ... and its prefill one
    verify_file: str  # where the verify result is constructed
    tail: str  # the relay's statements after the first, moved with it into a helper


RELEASES = {
    "0.5.9": Release("SPEC2-NDI-SPECINFO", 2347, 698, 673, EAGLE2,
                     "                    batch.spec_info.future_indices = future_indices\n"),
    "0.5.12": Release("SPEC2-NDI-SPECINFO", 3061, 828, 782, EAGLE2,
                      "                    batch.spec_info.future_indices = future_indices\n"),
    "0.5.17": Release("SPEC2-NDI-SPECINFO-OVERLAP", 3648, 1198, 1141, COMMON,
                      "                    batch.spec_info.future_dsa_topk_indices_available = (\n"
                      "                        batch.spec_info.dsa_topk_indices is not None\n"
                      "                    )\n"
                      "                    batch.spec_info.future_indices = future_indices\n"),
}


@pytest.fixture
def release(request, sglang_copy):
    version = request.param
    return version, RELEASES[version], sglang_copy(version, subdirs=SUBDIRS)


def _before_decode_return(root, lines: str) -> None:
    edit(root, EAGLE2, DECODE_RETURN, "\n" + lines + "            return batch_output\n")


def _eagle(violations_or_unknowns, line: int) -> list:
    return [v for v in violations_or_unknowns
            if v.producer.file == EAGLE2 and v.producer.line == line
            and v.producer.worker.endswith(".EAGLEWorkerV2")]


@pytest.mark.parametrize("release", ["0.5.9", "0.5.17"], indirect=True)
def test_matrix_none_on_a_branch_before_the_return(release):
    _, rel, root = release
    _before_decode_return(root, "            if len(batch_output.next_token_ids) > 8:\n"
                                "                batch_output.next_draft_input = None\n")
    report = check(root)
    r = result(report, rel.relay_id)
    assert r.status == "violated" and not r.ok and report.exit_code == 1
    v = [x for x in _eagle(report.violations, rel.decode_return + 2) if x.read.line == rel.relay_line]
    assert v and v[0].read.file == SCHED and v[0].attribute_path[0] == "next_draft_input"
    assert "len(batch_output.next_token_ids) > 8" in v[0].producer.branch
    assert "batch_output.next_draft_input = None" in v[0].message


@pytest.mark.parametrize("release", ["0.5.12"], indirect=True)
def test_matrix_dropped_new_seq_lens_keyword(release):
    _, rel, root = release
    edit(root, EAGLE2, "            new_seq_lens=new_seq_lens,\n", "")
    report = check(root)
    assert report.exit_code == 1 and result(report, "SPEC2-NDI-SEQLENS").status == "violated"
    v = [x for x in _eagle(report.violations, rel.decode_return)
         if x.attribute_path == ["next_draft_input", "new_seq_lens"]]
    assert v and all(x.read.line == 3066 for x in v)
    assert "EagleDraftInput.new_seq_lens at its default None" in v[0].message
    assert result(report, rel.relay_id).ok  # the draft input itself is still set


@pytest.mark.parametrize("release", ["0.5.17"], indirect=True)
def test_matrix_dropped_new_seq_lens_keyword_of_the_relayed_result(release):
    _, rel, root = release
    edit(root, COMMON, "        new_seq_lens=new_seq_lens,\n        routed_experts_output", "        routed_experts_output")
    report = check(root)
    r = result(report, "SPEC2-SEQ-LENS-PUBLISH")
    assert r.status == "violated" and not r.ok and report.exit_code == 1
    assert (r.found.file, r.found.line) == (EAGLE2, rel.decode_return)
    assert r.found.consumer in ("EAGLEWorkerV2.forward_batch_generation", "StandaloneWorkerV2.forward_batch_generation")
    assert "with new_seq_lens unset, so on_publish(new_seq_lens) relays None" in r.message
    assert f"{SCHED}:3581" in r.message


@pytest.mark.parametrize("release", ["0.5.9", "0.5.17"], indirect=True)
def test_matrix_unresolved_producer_is_unknown(release):
    _, rel, root = release
    edit(root, EAGLE2, DECODE_RETURN, "\n            return dataclasses.replace(batch_output)\n")
    report = check(root)
    u = [x for x in _eagle(report.unknowns, rel.decode_return) if x.read.line == rel.relay_line]
    assert u and "dataclasses.replace" in u[0].why and not report.violations
    r = result(report, rel.relay_id)
    assert r.status == "unknown" and report.exit_code == 0
    assert check(root, strict=True).exit_code == 1


@pytest.mark.parametrize("release", ["0.5.9", "0.5.17"], indirect=True)
def test_matrix_none_in_a_conditional_expression(release):
    _, rel, root = release
    indent = "            " if rel.verify_file == EAGLE2 else "        "
    edit(root, rel.verify_file, f"\n{indent}next_draft_input=next_draft_input,\n",
         f"\n{indent}next_draft_input=None if len(predict) > 8 else next_draft_input,\n")
    report = check(root)
    assert report.exit_code == 1 and result(report, rel.relay_id).status == "violated"
    v = [x for x in _eagle(report.violations, rel.decode_return) if x.read.line == rel.relay_line]
    assert v and "len(predict) > 8" in v[0].producer.branch


# the attribute below next_draft_input that the prefill path leaves at its dataclass default
NESTED = {"0.5.9": "verify_done", "0.5.17": "kv_indptr"}


@pytest.mark.parametrize("release", ["0.5.9", "0.5.17"], indirect=True)
def test_matrix_nested_field_left_at_default(release):
    version, rel, root = release
    name = NESTED[version]
    line = insert_after(root, SCHED, RELAY, f"batch_result.next_draft_input.{name}.numel()")
    report = check(root)
    assert report.exit_code == 1
    v = [x for x in report.violations if x.read.line == line]
    assert v and all(x.attribute_path == ["next_draft_input", name] and x.read.file == SCHED for x in v)
    # the prefill path's draft input leaves it at its default
    [eagle] = _eagle(v, rel.prefill_return)
    assert f"EagleDraftInput.{name} at its default None" in eagle.message


@pytest.mark.parametrize("release", ["0.5.9", "0.5.17"], indirect=True)
def test_matrix_consumer_in_parentheses_holds(release):
    _, rel, root = release
    edit(root, SCHED, RELAY + "\n", RELAY.replace("= batch_result.next_draft_input", "= (batch_result.next_draft_input)\n"))
    report = check(root, strict=True)
    r = result(report, rel.relay_id)
    assert report.exit_code == 0 and r.status in ("present", "moved") and r.found.line == rel.relay_line


@pytest.mark.parametrize("release", ["0.5.9", "0.5.17"], indirect=True)
def test_matrix_renamed_local_keeps_identity(release):
    _, rel, root = release
    body = function_text(root, SCHED, "    def run_batch(")
    edit(root, SCHED, body, body.replace("batch_result", "worker_out"))
    report = check(root, strict=True)
    assert report.exit_code == 0, check_text(report)
    r = result(report, rel.relay_id)
    assert r.status in ("present", "moved") and r.found.line == rel.relay_line
    assert r.found.consumer == "Scheduler.run_batch" and "worker_out.next_draft_input" in r.found.shape


HELPER = "    def _install_draft_input(self, batch, batch_result, future_indices):\n"


@pytest.mark.parametrize("release", ["0.5.9", "0.5.17"], indirect=True)
def test_matrix_relay_moved_into_a_helper(release):
    _, rel, root = release
    relay = RELAY + "\n" + rel.tail
    edit(root, SCHED, relay, "                    self._install_draft_input(batch, batch_result, future_indices)\n")
    edit(root, SCHED, "    def run_batch(", HELPER + textwrap.indent(textwrap.dedent(relay), " " * 8) + "\n    def run_batch(")
    line = line_of(root, SCHED, "        batch.spec_info = batch_result.next_draft_input")
    report = check(root, strict=True)
    assert report.exit_code == 0, check_text(report)
    r = result(report, rel.relay_id)
    assert r.status == "moved" and r.found.consumer == "Scheduler._install_draft_input"
    assert (r.found.file, r.found.line) == (SCHED, line) and r.found.caller == "Scheduler.run_batch"
    assert r.old_site == f"{SCHED}:{rel.relay_line}"


@pytest.mark.parametrize("release", ["0.5.17"], indirect=True)
def test_matrix_guard_added_is_relaxed(release):
    _, rel, root = release
    edit(root, SCHED, RELAY + "\n", "                    assert batch_result.next_draft_input is not None\n" + RELAY + "\n")
    report = check(root, strict=True)
    r = result(report, rel.relay_id)
    assert r.status == "relaxed" and r.ok and report.exit_code == 0
    assert r.found.line == rel.relay_line + 1 and "drift" in r.message


@pytest.mark.parametrize("release", ["0.5.9", "0.5.17"], indirect=True)
def test_matrix_removed_field_says_it_is_gone(release):
    _, rel, root = release
    edit(root, UTILS, "    next_draft_input: Optional[EagleDraftInput] = None\n", "")
    report = check(root)
    r = result(report, rel.relay_id)
    assert r.status == "gone" and report.exit_code == 1
    assert r.message.startswith(f"field next_draft_input is gone from GenerationBatchResult ({UTILS}:")
    assert f"Scheduler.run_batch still reads it at {SCHED}:{rel.relay_line}" in r.message


@pytest.mark.parametrize("release", ["0.5.9", "0.5.17"], indirect=True)
def test_matrix_misspelt_attribute_is_undeclared(release):
    _, rel, root = release
    edit(root, SCHED, RELAY + "\n", RELAY.replace("next_draft_input", "next_draft_inptu") + "\n")
    report = check(root)
    assert report.exit_code == 1
    [u] = [u for u in report.undeclared if u.attribute == "next_draft_inptu"]
    assert (u.file, u.line, u.consumer, u.suggestion) == (SCHED, rel.relay_line, "Scheduler.run_batch",
                                                                      "next_draft_input")
    r = result(report, rel.relay_id)
    assert r.status == "gone" and "typo of next_draft_input" in r.message


@pytest.mark.parametrize("release", ["0.5.9", "0.5.17"], indirect=True)
def test_matrix_unparsable_file_exits_2_and_is_named(release):
    _, rel, root = release
    edit(root, SCHED, "\nimport signal\n", "\nimport signal (\n")
    out = CliRunner().invoke(main, ["contracts", "check", "--sglang", str(root)])
    assert out.exit_code == 2 and f"{SCHED}:" in out.output and "syntax error" in out.output


# ---------------------------------------------------------------- writes a helper makes on the result
#
# EAGLEWorkerV2's decode path returns verify's result after
# `self.draft_worker._draft_extend_for_decode(batch, batch_output)`, which sets
# `next_draft_input.topk_p` through its parameter (an alias of `batch_result.next_draft_input`);
# verify's EagleDraftInput leaves topk_p at its default.

TOPK_WRITE = "            next_draft_input.topk_p,\n"


def _last_return(root, cls: str, method: str) -> int:
    """The line of the last ``return`` of ``cls.method`` in EAGLE2 (the decode path's)."""
    tree = ast.parse((root / EAGLE2).read_text())
    [c] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    [f] = [n for n in c.body if isinstance(n, ast.FunctionDef) and n.name == method]
    return max(n.lineno for n in ast.walk(f) if isinstance(n, ast.Return))


@pytest.mark.parametrize("version", ["0.5.9", "0.5.12", "0.5.17", "0.5.23"])
def test_a_helper_write_through_a_parameter_counts(sglang_copy, version):
    root = sglang_copy(version, subdirs=SUBDIRS)
    line = insert_after(root, SCHED, RELAY, "batch_result.next_draft_input.topk_p.numel()")
    report = check(root)
    assert [v for v in report.violations if v.read.line == line and v.producer.file == EAGLE2] == [], \
        check_text(report)
    # NGRAMWorker's draft input is no dataclass (undecided); 0.5.23's UnoWorkerV2 returns its own
    # draft input class without topk_p (a real violation)
    assert all(u.producer.worker.endswith(".NGRAMWorker") for u in report.unknowns if u.read.line == line)
    assert all(v.producer.worker.endswith(".UnoWorkerV2") for v in report.violations if v.read.line == line)

    edit(root, EAGLE2, TOPK_WRITE, "            _dropped_topk_p,\n")
    report = check(root)
    decode = _last_return(root, "EAGLEWorkerV2", "forward_batch_generation")
    v = _eagle(report.violations, decode)
    assert v and all(x.read.line == line and x.attribute_path == ["next_draft_input", "topk_p"] for x in v)
    assert "EagleDraftInput.topk_p at its default None" in v[0].message
    assert report.exit_code == 1


STORE = ("        next_draft_input = batch_result.next_draft_input\n"
         "        (\n"
         "            next_draft_input.topk_p,\n"
         "            next_draft_input.topk_index,\n"
         "            next_draft_input.hidden_states,\n"
         "        ) = (\n"
         "            ret_topk_p,\n"
         "            ret_topk_index,\n"
         "            ret_hidden_states,\n"
         "        )\n")


def _store_in_a_helper(root, helper_body: str) -> int:
    """0.5.17: the decode extend's write of the draft input's top-k moved one call further down,
    into ``_store_topk(batch_result, ...)``; return the new read's line."""
    edit(root, EAGLE2, STORE, "        self._store_topk(batch_result, ret_topk_p, ret_topk_index, ret_hidden_states)\n"
                              "        next_draft_input = batch_result.next_draft_input\n")
    edit(root, EAGLE2, "    def _draft_extend_for_decode(\n",
         "    def _store_topk(self, result, topk_p, topk_index, hidden_states):\n" + helper_body
         + "\n    def _draft_extend_for_decode(\n")
    return insert_after(root, SCHED, RELAY, "batch_result.next_draft_input.topk_p.numel()")


def test_a_write_two_calls_down_counts(sglang_copy):
    root = sglang_copy("0.5.17", subdirs=SUBDIRS)
    line = _store_in_a_helper(root, "        draft_input = result.next_draft_input\n"
                                    "        draft_input.topk_p = topk_p\n"
                                    "        draft_input.topk_index = topk_index\n")
    report = check(root)
    assert [v for v in report.violations if v.read.line == line] == [], check_text(report)


def test_a_none_written_by_a_helper_on_a_branch_is_a_violation(sglang_copy):
    root = sglang_copy("0.5.17", subdirs=SUBDIRS)
    line = _store_in_a_helper(root, "        result.next_draft_input.topk_p = topk_p\n"
                                    "        if topk_p.shape[0] > 8:\n"
                                    "            result.next_draft_input.topk_p = None\n")
    report = check(root)
    decode = _last_return(root, "EAGLEWorkerV2", "forward_batch_generation")
    v = _eagle(report.violations, decode)
    assert v and all(x.read.line == line for x in v) and report.exit_code == 1
    assert "`result.next_draft_input.topk_p = None` sets it to None" in v[0].message
    assert "topk_p.shape[0] > 8" in v[0].producer.branch
