"""Realistic edits of 0.5.17 and 0.5.23, and of 0.5.17 with the dynamic-disable series applied: each
break (a crash on a configuration SGLang accepts) must get a failing verdict, each harmless edit
(a refactor, a renamed parameter, an alias) must pass. On the patched tree the verdict is the
series' own after-gate (what `spectrace patch apply` runs) against the unpatched tree's baseline."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from mutate import SCHED, SUBDIRS, UTILS, check
from spectrace.patches import engine
from spectrace.patches.series import SERIES_DIR_ENV, load_series
from spectrace.source import from_path

DISABLED = "sglang/srt/speculative/dynamic_disable.py"
PP_MIXIN = "sglang/srt/managers/scheduler_pp_mixin.py"


@dataclass(frozen=True)
class Edit:
    rel: str
    old: str
    new: str


@dataclass(frozen=True)
class Rename:
    """Every match of the pattern ``old`` in ``rel`` (where the file exists), replaced by ``new``."""
    rel: str
    old: str
    new: str


def _apply(root: Path, edits: tuple) -> None:
    for e in edits:
        p = root / e.rel
        if isinstance(e, Rename):
            if p.is_file():
                p.write_text(re.sub(e.old, e.new, p.read_text()))
            continue
        text = p.read_text()
        assert text.count(e.old) == 1, f"anchor not unique or missing in {e.rel}: {e.old!r}"
        p.write_text(text.replace(e.old, e.new))


STANDALONE = "sglang/srt/speculative/standalone_worker_v2.py"
STANDALONE_CLASS = "class StandaloneWorkerV2(EAGLEWorkerV2):\n"
OVERRIDE = """
    def forward_batch_generation(self, model_worker_batch, **kwargs):
        from sglang.srt.managers.utils import GenerationBatchResult

{idle}        return super().forward_batch_generation(model_worker_batch, **kwargs)
"""
NEXT_TOKEN_IDS_COPY = "        self.next_token_ids = _async_d2h(self.next_token_ids)\n"
LOGPROB_BRANCH = "        if return_logprob:\n            if self.logits_output.next_token_logprobs is not None:\n"

# name -> (breaks?, edits), on both releases
RELEASE_EDITS = {
    # the result's own method dereferences the draft input, which the plain worker never sets
    # (the overlap scheduler without speculation, SGLang's default, calls copy_to_cpu)
    "copy_to_cpu reads the draft input": (True, (
        Edit(UTILS, NEXT_TOKEN_IDS_COPY,
             NEXT_TOKEN_IDS_COPY + "        self.next_draft_input.verify_done = None\n"),)),
    # the logprob copy no longer asks whether the batch wants logprobs: DFlashWorkerV2's idle step
    # (an idle batch of DP attention) returns logits_output=None
    "copy_to_cpu's guard of the logits dropped": (True, (
        Edit(UTILS, LOGPROB_BRANCH, "        if True:\n            if self.logits_output.next_token_logprobs is not None:\n"),)),
    # a subclass overrides the step and returns a bare result for idle batches (DP attention's)
    "Standalone worker overrides its step": (True, (
        Edit(STANDALONE, STANDALONE_CLASS, STANDALONE_CLASS + OVERRIDE.format(
            idle="        if model_worker_batch.forward_mode.is_idle():\n"
                 "            return GenerationBatchResult(can_run_cuda_graph=False)\n")),)),
    # ... and one that only delegates to the base class
    "Standalone worker delegates its step": (False, (
        Edit(STANDALONE, STANDALONE_CLASS, STANDALONE_CLASS + OVERRIDE.format(idle="")),)),
    # a parameter renamed, its callers passing the new keyword
    "copy_to_cpu's parameter renamed": (False, (
        Edit(UTILS, "def copy_to_cpu(self, return_logprob: bool,", "def copy_to_cpu(self, want_logprob: bool,"),
        Edit(UTILS, LOGPROB_BRANCH, LOGPROB_BRANCH.replace("if return_logprob:", "if want_logprob:")),
        Rename(SCHED, r"(copy_to_cpu[(,]\s*)return_logprob=", r"\1want_logprob="),
        Rename(PP_MIXIN, r"(copy_to_cpu[(,]\s*)return_logprob=", r"\1want_logprob="),
    )),
    # the logits read through a local alias
    "copy_to_cpu reads the logits through an alias": (False, (
        Edit(UTILS, LOGPROB_BRANCH,
             "        if return_logprob:\n            logits = self.logits_output\n"
             "            if logits.next_token_logprobs is not None:\n"),)),
}

PP_TOKENS = '            "next_token_ids": result.next_token_ids,\n'
PP_BONUS = '            tensor_dict["spec_bonus_tokens"] = result.next_draft_input.bonus_tokens\n'
PP_RELAY_GUARD = "        if self._pp_spec_relay and result.accept_lens is not None:\n"
# 0.5.23's pipeline-parallel relay of the accepted tree (_pp_prepare_tensor_dict, last stage)
PP_EDITS = {
    # the bonus tokens read for every batch: pipeline parallelism without speculation has no draft input
    "pp relay reads the draft input outside its guard": (True, (
        Edit(PP_MIXIN, PP_TOKENS, PP_TOKENS + '            "spec_bonus_tokens": result.next_draft_input.bonus_tokens,\n'),)),
    # the draft input through a local alias
    "pp relay reads the draft input through an alias": (False, (
        Edit(PP_MIXIN, PP_BONUS, "            relayed = result.next_draft_input\n"
                                 '            tensor_dict["spec_bonus_tokens"] = relayed.bonus_tokens\n'),)),
    # the guard's field test through a walrus, and its operands swapped
    "pp relay's guard binds the accepted lengths": (False, (
        Edit(PP_MIXIN, PP_RELAY_GUARD, "        if self._pp_spec_relay and (accepted := result.accept_lens) is not None:\n"),)),
    "pp relay's guard swapped": (False, (
        Edit(PP_MIXIN, PP_RELAY_GUARD, "        if result.accept_lens is not None and self._pp_spec_relay:\n"),)),
}
COPY_DONE = "                    batch_result.copy_done = self.device_module.Event()\n"
SYNC_COPY = "                    if (\n                        batch_result.has_sampled_token_ids\n"
# 0.5.23's synchronous V2 path sets the copy's event before calling copy_to_cpu, which records it
SCHEDULER_EDITS = {
    # the event set on the overlap path only: the workers never set it, copy_to_cpu records on None
    "copy_done set on one path only": (True, (Edit(SCHED, COPY_DONE + SYNC_COPY, SYNC_COPY),)),
}
EDITS = {**RELEASE_EDITS, **PP_EDITS, **SCHEDULER_EDITS}

CASES = [(v, name) for v in ("0.5.17", "0.5.23") for name in RELEASE_EDITS] + \
    [("0.5.23", name) for name in {**PP_EDITS, **SCHEDULER_EDITS}]


@pytest.mark.parametrize("version,name", CASES, ids=[f"{v}-{n}" for v, n in CASES])
def test_release_edit(sglang_copy, version, name):
    breaks, edits = EDITS[name]
    root = sglang_copy(version, subdirs=SUBDIRS)
    _apply(root, edits)
    report = check(root, strict=True)
    failing = bool(report.violations or report.unknowns) or report.exit_code != 0
    assert failing == breaks, [v.message for v in [*report.violations, *report.unknowns]][:3]


NDI = "        out.next_draft_input = EagleDraftInput(\n"
PATCHED_EDITS = {
    # the disabled step returns before it sets the next draft input, for an empty batch
    "disabled step returns early": (True, (
        Edit(DISABLED, NDI, "        if not batch.reqs:\n            return out\n" + NDI),)),
    # the next draft input left None when the draft state has no top-k
    "disabled step's draft input may be None": (True, (
        Edit(DISABLED, NDI, "        out.next_draft_input = None if draft_input.topk_p is None else EagleDraftInput(\n"),)),
    # the worker aliased, and the publish guard rewritten
    "disabled step refactored": (False, (
        Edit(DISABLED, "        worker = self.worker\n        draft_input = batch.spec_info\n",
             "        w = self.worker\n        worker = w\n        draft_input = batch.spec_info\n"),
        Edit(DISABLED, "        if on_publish is not None:\n            on_publish(new_seq_lens)\n",
             "        if on_publish:\n            on_publish(new_seq_lens)\n"),
    )),
}


@pytest.fixture(scope="module")
def _no_series_override():
    mp = pytest.MonkeyPatch()
    mp.delenv(SERIES_DIR_ENV, raising=False)
    yield
    mp.undo()


@pytest.mark.parametrize("name", sorted(PATCHED_EDITS))
def test_patched_edit(sglang_copy, _no_series_override, name):
    breaks, edits = PATCHED_EDITS[name]
    tree = sglang_copy("0.5.17", subdirs=("sglang/srt",))
    series = load_series("dynamic-disable", "0.5.17")
    _, baseline = engine.contract_gate(from_path(tree), series, "before")
    engine.apply(tree, "dynamic-disable")
    _apply(tree, edits)
    gate, _ = engine.contract_gate(from_path(tree), series, "after", baseline)
    assert gate.passed != breaks, gate.line()
