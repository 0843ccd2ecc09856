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


@dataclass(frozen=True)
class MethodBefore:
    """A method (``source``, indented for the class) inserted in ``rel`` before the one named
    ``name``, above that method's decorators."""
    rel: str
    name: str
    source: str


def _apply(root: Path, edits: tuple) -> None:
    for e in edits:
        p = root / e.rel
        if isinstance(e, MethodBefore):
            text = p.read_text()
            pattern = re.compile(rf"^((?:    @.*\n)*)(    def {e.name}\()", re.M)
            assert len(pattern.findall(text)) == 1, f"no single method {e.name} in {e.rel}"
            p.write_text(pattern.sub(lambda m: e.source + "\n" + m.group(1) + m.group(2), text, count=1))
            continue
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
    assert _fails(check(root, strict=True)) == breaks


def _fails(report) -> bool:
    """Whether ``check --strict`` fails (a violation or an unknown counts), the first messages
    shown where it does not say what the edit expects."""
    failing = bool(report.violations or report.unknowns) or report.exit_code != 0
    print([v.message for v in [*report.violations, *report.unknowns]][:3])
    return failing


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


def _patched_gate(sglang_copy, edits: tuple):
    """The series' after-gate on 0.5.17 patched and then edited, against the release's baseline."""
    tree = sglang_copy("0.5.17", subdirs=("sglang/srt",))
    series = load_series("dynamic-disable", "0.5.17")
    _, baseline = engine.contract_gate(from_path(tree), series, "before")
    engine.apply(tree, "dynamic-disable")
    _apply(tree, edits)
    gate, _ = engine.contract_gate(from_path(tree), series, "after", baseline)
    return gate


@pytest.mark.parametrize("name", sorted(PATCHED_EDITS))
def test_patched_edit(sglang_copy, _no_series_override, name):
    breaks, edits = PATCHED_EDITS[name]
    gate = _patched_gate(sglang_copy, edits)
    assert gate.passed != breaks, gate.line()


# ------------------------------------------------------------ construct families
# Each edit below uses a construct the edits above do not: a field handed to a helper, a local bound
# by getattr/`or`/unpacking, an owner method calling another, a producer that is a staticmethod,
# a classmethod, a decorator's wrapper, dataclasses.replace, typing.cast, a closure, and in the
# series' disabled step an Optional helper, contextlib.suppress, try/except, loops and setattr.
# name -> (breaks?, releases, edits); a break runs on both releases, a harmless edit on 0.5.23.
BOTH, LATEST = ("0.5.17", "0.5.23"), ("0.5.23",)
OVERLAP_COPY = ("                        batch_result.copy_done = self.device_module.Event()\n"
                "                        if batch_result.delay_sample_func is None:\n")
STAMP = "                        self._stamp_draft(batch_result.next_draft_input, future_indices)\n"


def _before_overlap_copy(lines: str) -> Edit:
    """``lines`` in the overlap path of run_batch, right after the worker call, for every batch."""
    return Edit(SCHED, OVERLAP_COPY, lines + OVERLAP_COPY)


def _stamp_helper(checked: bool) -> "MethodBefore":
    body = ("        if draft is not None:\n            draft.future_indices = future_indices\n" if checked
            else "        draft.future_indices = future_indices\n")
    return MethodBefore(SCHED, "run_batch", "    def _stamp_draft(self, draft, future_indices):\n" + body)


def _standalone_step(body: str, before_class: str = "", decorator: str = "") -> Edit:
    """StandaloneWorkerV2 gets its own forward_batch_generation (``body``, indented for it)."""
    return Edit(STANDALONE, STANDALONE_CLASS, before_class + STANDALONE_CLASS + decorator
                + "    def forward_batch_generation(self, model_worker_batch, **kwargs):\n"
                + "        from sglang.srt.managers.utils import GenerationBatchResult\n\n" + body + "\n")


SUPER_STEP = "super().forward_batch_generation(model_worker_batch, **kwargs)"
IDLE = "model_worker_batch.forward_mode.is_idle()"
BARE = "GenerationBatchResult(can_run_cuda_graph=False)"


def _tuple_helper(idle_bare: bool) -> Edit:
    """The override's result is item 0 of ``self._run(...)``'s tuple (bare for idle batches)."""
    idle = (f"        if batch.forward_mode.is_idle():\n            return {BARE}, None\n" if idle_bare else "")
    return _standalone_step(
        "        out, _ = self._run(model_worker_batch, **kwargs)\n        return out\n\n"
        "    def _run(self, batch, **kwargs):\n        from sglang.srt.managers.utils import GenerationBatchResult\n\n"
        + idle + "        return super().forward_batch_generation(batch, **kwargs), None")
OPTIONAL_COPIES = ("        if self.accept_lens is not None:\n            self.accept_lens = _async_d2h(self.accept_lens)\n\n"
                   "        if self.block_accept_lens is not None:\n"
                   "            self.block_accept_lens = _async_d2h(self.block_accept_lens)\n\n"
                   "        if self.cap_lens is not None:\n            self.cap_lens = _async_d2h(self.cap_lens)\n")
FROM_PP_PROXY = "    @classmethod\n    def from_pp_proxy(\n"
COPY_HIDDEN = ("    def _copy_hidden(self):\n        if self.logits_output.hidden_states is not None:\n"
               "            self.logits_output.hidden_states = _async_d2h(self.logits_output.hidden_states)\n\n")
WRAPPER = ("def {name}(fn):\n    def inner(self, batch, **kwargs):\n{shortcut}        return fn(self, batch, **kwargs)\n\n"
           "    return inner\n\n\n")

COMMON = "sglang/srt/speculative/eagle_worker_common.py"
VERIFY_NDI = "    next_draft_input = EagleDraftInput(bonus_tokens=bonus_tokens)\n"


def _verify_draft_helper(may_be_none: bool) -> tuple:
    """run_eagle_verify takes its next draft input from a module helper (None for no bonus tokens)."""
    empty = "    if bonus_tokens.numel() == 0:\n        return None\n" if may_be_none else ""
    return (Edit(COMMON, VERIFY_NDI, "    next_draft_input = _draft_input_of(bonus_tokens)\n"),
            Edit(COMMON, "def run_eagle_verify(\n", "def _draft_input_of(bonus_tokens):\n" + empty
                 + "    return EagleDraftInput(bonus_tokens=bonus_tokens)\n\n\ndef run_eagle_verify(\n"))


FAMILY_EDITS = {
    # the verify step's draft input from a module helper that returns None for some inputs, and one that does not
    "verify's draft input from a helper that may give None": (True, BOTH, _verify_draft_helper(may_be_none=True)),
    "verify's draft input from a helper": (False, LATEST, _verify_draft_helper(may_be_none=False)),
    # the draft input handed to a scheduler method that dereferences its parameter: the overlap
    # scheduler without speculation (SGLang's default) has none
    "draft input passed to a dereferencing helper": (True, BOTH, (
        _before_overlap_copy(STAMP), _stamp_helper(checked=False))),
    "draft input passed to a checking helper": (False, LATEST, (
        _before_overlap_copy(STAMP), _stamp_helper(checked=True))),
    # a local bound with getattr(..., None), then written through without a test
    "getattr with a default, then written through": (True, BOTH, (_before_overlap_copy(
        '                        draft = getattr(batch_result, "next_draft_input", None)\n'
        "                        draft.future_indices = future_indices\n"),)),
    "getattr with a default, then tested": (False, LATEST, (_before_overlap_copy(
        '                        draft = getattr(batch_result, "next_draft_input", None)\n'
        "                        if draft is not None:\n                            draft.future_indices = future_indices\n"),)),
    # `a or b` where the fallback (the batch's own draft input) is None as well for a plain batch
    "or-fallback written through": (True, BOTH, (_before_overlap_copy(
        "                        draft = batch_result.next_draft_input or batch.spec_info\n"
        "                        draft.future_indices = future_indices\n"),)),
    # tuple unpacking of two fields
    "unpacked draft input written through": (True, BOTH, (_before_overlap_copy(
        "                        draft, lens = batch_result.next_draft_input, batch_result.new_seq_lens\n"
        "                        draft.future_indices = future_indices\n"),)),
    # copy_to_cpu's hidden-state copy moved into a method of the result, called for every batch:
    # DFlash's and DSpark's idle steps return logits_output=None
    "copy_to_cpu calls a copy of the logits unconditionally": (True, BOTH, (
        Edit(UTILS, LOGPROB_BRANCH, "        self._copy_hidden()\n" + LOGPROB_BRANCH),
        Edit(UTILS, FROM_PP_PROXY, COPY_HIDDEN + FROM_PP_PROXY))),
    "copy_to_cpu calls a copy of the logits under its test": (False, LATEST, (
        Edit(UTILS, LOGPROB_BRANCH, "        if return_logprob:\n            self._copy_hidden()\n" + LOGPROB_BRANCH),
        Edit(UTILS, FROM_PP_PROXY, COPY_HIDDEN + FROM_PP_PROXY))),
    # the optional copies written as a loop over their names
    "copy_to_cpu copies the optional tensors by name": (False, LATEST, (Edit(
        UTILS, OPTIONAL_COPIES,
        '        for name in ("accept_lens", "block_accept_lens", "cap_lens"):\n            value = getattr(self, name)\n'
        "            if value is not None:\n                setattr(self, name, _async_d2h(value))\n"),)),
    # the idle result built by a staticmethod of the worker
    "Standalone idle result from a staticmethod": (True, BOTH, (_standalone_step(
        f"        if {IDLE}:\n            return self._idle_result()\n        return {SUPER_STEP}\n\n"
        "    @staticmethod\n    def _idle_result():\n        from sglang.srt.managers.utils import GenerationBatchResult\n\n"
        f"        return {BARE}"),)),
    # ... by a classmethod of the result (`cls(...)`)
    "Standalone idle result from a classmethod of the result": (True, BOTH, (
        _standalone_step(f"        if {IDLE}:\n            return GenerationBatchResult.empty()\n        return {SUPER_STEP}"),
        Edit(UTILS, "    @property\n    def has_sampled_token_ids(self) -> bool:\n",
             "    @classmethod\n    def empty(cls):\n        return cls(can_run_cuda_graph=False)\n\n"
             "    @property\n    def has_sampled_token_ids(self) -> bool:\n"))),
    # dataclasses.replace dropping the draft input for idle batches, and one replacing a flag
    "Standalone replaces the draft input with None": (True, BOTH, (_standalone_step(
        f"        import dataclasses\n\n        out = {SUPER_STEP}\n        if {IDLE}:\n"
        "            return dataclasses.replace(out, next_draft_input=None)\n        return out"),)),
    "Standalone replaces a flag": (False, LATEST, (_standalone_step(
        f"        import dataclasses\n\n        out = {SUPER_STEP}\n        return dataclasses.replace(out, can_run_cuda_graph=False)"),)),
    # a decorator of the tree whose wrapper answers idle batches itself, and one that passes through
    "Standalone step decorated with an idle shortcut": (True, BOTH, (_standalone_step(
        f"        return {SUPER_STEP}", decorator="    @_skip_idle\n",
        before_class=WRAPPER.format(name="_skip_idle", shortcut=(
            "        from sglang.srt.managers.utils import GenerationBatchResult\n\n"
            f"        if batch.forward_mode.is_idle():\n            return {BARE}\n"))),)),
    "Standalone step decorated with a pass-through": (False, LATEST, (_standalone_step(
        f"        return {SUPER_STEP}", decorator="    @_traced\n", before_class=WRAPPER.format(name="_traced", shortcut="")),)),
    # the override picks one of two results in a helper
    "Standalone picks its result in a helper": (True, BOTH, (_standalone_step(
        f"        out = {SUPER_STEP}\n        return self._pick(model_worker_batch, out)\n\n"
        "    def _pick(self, batch, out):\n        from sglang.srt.managers.utils import GenerationBatchResult\n\n"
        "        if batch.forward_mode.is_idle():\n"
        "            return GenerationBatchResult(can_run_cuda_graph=out.can_run_cuda_graph)\n        return out"),)),
    # the override delegates through a closure with super(Cls, self), or through typing.cast
    "Standalone delegates through a closure": (False, LATEST, (_standalone_step(
        "        def run():\n            return super(StandaloneWorkerV2, self).forward_batch_generation(\n"
        "                model_worker_batch, **kwargs\n            )\n\n        return run()"),)),
    "Standalone casts its result": (False, LATEST, (_standalone_step(
        f"        from typing import cast\n\n        return cast(GenerationBatchResult, {SUPER_STEP})"),)),
    # the draft input dereferenced in a comprehension over a tuple holding it
    "draft input dereferenced in a comprehension": (True, BOTH, (_before_overlap_copy(
        "                        stamped = [d.future_indices for d in (batch_result.next_draft_input,)]\n"),)),
    # a local bound by a conditional expression, then written through
    "draft input bound by a conditional expression": (True, BOTH, (_before_overlap_copy(
        "                        draft = batch_result.next_draft_input if self.enable_overlap else None\n"
        "                        draft.future_indices = future_indices\n"),)),
    # the accepted lengths subscripted for every batch (a plain batch has none), and under their test
    "accepted lengths subscripted": (True, BOTH, (_before_overlap_copy(
        "                        self.first_accept_len = batch_result.accept_lens[0]\n"),)),
    "accepted lengths subscripted under their test": (False, LATEST, (_before_overlap_copy(
        "                        if batch_result.accept_lens is not None:\n"
        "                            self.first_accept_len = batch_result.accept_lens[0]\n"),)),
    # the draft input read through a property of the result that returns it
    "draft input through a property of the result": (True, BOTH, (
        _before_overlap_copy("                        batch_result.draft_input.future_indices = future_indices\n"),
        Edit(UTILS, "    @property\n    def has_sampled_token_ids(self) -> bool:\n",
             "    @property\n    def draft_input(self):\n        return self.next_draft_input\n\n"
             "    @property\n    def has_sampled_token_ids(self) -> bool:\n"))),
    # the override's result as item 0 of a helper's tuple, bare for idle batches, and as it comes
    "Standalone takes its result from a helper's tuple": (True, BOTH, (_tuple_helper(idle_bare=True),)),
    "Standalone takes its result from a helper's tuple as it comes": (False, LATEST, (_tuple_helper(idle_bare=False),)),
    # a fallback result for an error of the step
    "Standalone falls back to a bare result on an error": (True, BOTH, (_standalone_step(
        f"        try:\n            return {SUPER_STEP}\n        except RuntimeError:\n            return {BARE}"),)),
    # the result bound by a nested function through `nonlocal`
    "Standalone binds its result in a nested function": (False, LATEST, (_standalone_step(
        f"        out = None\n\n        def run():\n            nonlocal out\n            out = {SUPER_STEP}\n\n"
        "        run()\n        return out"),)),
    # a helper that raises for a batch it refuses: no return path there
    "Standalone refuses empty batches": (False, LATEST, (_standalone_step(
        f"        self._refuse_empty(model_worker_batch)\n        return {SUPER_STEP}\n\n"
        '    def _refuse_empty(self, batch):\n        if batch.seq_lens is None:\n            raise ValueError("empty batch")'),)),
}
FAMILY_CASES = [(v, name) for name, (_, versions, _) in FAMILY_EDITS.items() for v in versions]


@pytest.mark.parametrize("version,name", FAMILY_CASES, ids=[f"{v}-{n}" for v, n in FAMILY_CASES])
def test_family_edit(sglang_copy, version, name):
    breaks, _, edits = FAMILY_EDITS[name]
    root = sglang_copy(version, subdirs=SUBDIRS)
    _apply(root, edits)
    assert _fails(check(root, strict=True)) == breaks


DRAFT = """        out.next_draft_input = EagleDraftInput(
            bonus_tokens=out.next_token_ids,
            topk_p=draft_input.topk_p,
            topk_index=draft_input.topk_index,
            hidden_states=draft_input.hidden_states,
            num_tokens_per_req=1,
            num_tokens_for_logprob_per_req=1,
        )
"""
RECORD = "    def _record(self, batch, out) -> bool:\n"


def _indented(text: str) -> str:
    return "".join("    " + ln if ln.strip() else ln for ln in text.splitlines(keepends=True))


NEXT_INPUT = ("    def _next_input(self, out, draft_input):\n"
              "        from sglang.srt.speculative.eagle_info import EagleDraftInput\n\n"
              "        if draft_input.topk_p is None:\n            return None\n"
              + DRAFT.replace("        out.next_draft_input = EagleDraftInput(", "        return EagleDraftInput(") + "\n")
PATCHED_FAMILY_EDITS = {
    # the draft input written from a helper that returns None when the draft state has no top-k
    "disabled step's draft input from an Optional helper": (True, (
        Edit(DISABLED, DRAFT, "        out.next_draft_input = self._next_input(out, draft_input)\n"),
        Edit(DISABLED, RECORD, NEXT_INPUT + RECORD))),
    # an error while building it swallowed by contextlib.suppress, or logged by an except
    "disabled step suppresses an error of its draft input": (True, (
        Edit(DISABLED, DRAFT, "        import contextlib\n\n        with contextlib.suppress(RuntimeError):\n" + _indented(DRAFT)),)),
    "disabled step logs an error of its draft input": (True, (
        Edit(DISABLED, DRAFT, "        try:\n" + _indented(DRAFT)
             + '        except RuntimeError:\n            logger.warning("no draft input")\n'),)),
    "disabled step builds its draft input under no_grad": (False, (
        Edit(DISABLED, DRAFT, "        with torch.no_grad():\n" + _indented(DRAFT)),)),
    # a return from inside a loop over the requests, before the draft input is set
    "disabled step returns from its request loop": (True, (
        Edit(DISABLED, DRAFT, "        for req in batch.reqs:\n            if req.finished():\n                return out\n" + DRAFT),)),
    # set in a while loop's body, or by a nested function called under a condition
    "disabled step sets its draft input in a while loop": (True, (
        Edit(DISABLED, DRAFT, "        while draft_input.topk_p is not None:\n" + _indented(DRAFT) + "            break\n"),)),
    "disabled step seeds in a nested function under a condition": (True, (
        Edit(DISABLED, DRAFT, "        def seed():\n" + _indented(DRAFT)
             + "\n        if draft_input.topk_p is not None:\n            seed()\n"),)),
    "disabled step sets its draft input with setattr": (False, (
        Edit(DISABLED, DRAFT, DRAFT.replace("        out.next_draft_input = EagleDraftInput(",
                                            '        setattr(out, "next_draft_input", EagleDraftInput(')
             .replace("        )\n", "        ))\n")),)),
    # its flags set by dataclasses.replace, its draft input by a chained assignment
    "disabled step replaces its flags": (False, (
        Edit(DISABLED, "        out.speculative_num_draft_tokens = 1\n        out.new_seq_lens = new_seq_lens\n",
             "        out = dataclasses.replace(out, speculative_num_draft_tokens=1, new_seq_lens=new_seq_lens)\n"),
        Edit(DISABLED, "        import torch\n\n        from sglang.srt.model_executor.forward_batch_info import (\n",
             "        import dataclasses\n\n        import torch\n\n        from sglang.srt.model_executor.forward_batch_info import (\n"))),
    # `del` of the draft input for draft states without top-k: the field's default None again
    "disabled step deletes its draft input": (True, (
        Edit(DISABLED, DRAFT, DRAFT + "        if draft_input.topk_p is None:\n            del out.next_draft_input\n"),)),
    # the draft input built by a nested function (`nonlocal`) called under a condition
    "disabled step builds its draft input in a nested function": (True, (
        Edit(DISABLED, DRAFT, "        made = None\n\n        def build():\n            nonlocal made\n"
             + _indented(DRAFT).replace("            out.next_draft_input = EagleDraftInput(", "            made = EagleDraftInput(")
             + "\n        if draft_input.topk_p is not None:\n            build()\n        out.next_draft_input = made\n"),)),
    # a `match` whose guarded case returns before the draft input is set
    "disabled step matches idle batches first": (True, (
        Edit(DISABLED, DRAFT, "        match batch.forward_mode:\n            case mode if mode.is_idle():\n                return out\n" + DRAFT),)),
    # set inside a loop over the requests (an empty batch never sets it)
    "disabled step sets its draft input in a request loop": (True, (
        Edit(DISABLED, DRAFT, "        for _ in batch.reqs:\n" + _indented(DRAFT) + "            break\n"),)),
    # a loop with `continue` before the draft input, and a helper that raises
    "disabled step marks its requests first": (False, (
        Edit(DISABLED, DRAFT, "        for req in batch.reqs:\n            if req.finished():\n                continue\n"
             "            req.spec_disabled = True\n" + DRAFT),)),
    "disabled step checks its draft state in a helper that raises": (False, (
        Edit(DISABLED, DRAFT, "        self._check_draft(draft_input)\n" + DRAFT),
        Edit(DISABLED, RECORD, '    def _check_draft(self, draft_input):\n        if draft_input is None:\n'
             '            raise RuntimeError("no draft state")\n\n' + RECORD))),
    # `a and b` / `a or b` as the draft input: the false `a` of `and`, the None after `or`
    "disabled step's draft input behind `and`": (True, (
        Edit(DISABLED, DRAFT, DRAFT.replace("        out.next_draft_input = EagleDraftInput(",
                                            "        out.next_draft_input = draft_input.topk_p is not None and EagleDraftInput(")),)),
    "disabled step's draft input from a cache or None": (True, (
        Edit(DISABLED, DRAFT, "        out.next_draft_input = self._cached_input or None\n"),)),
    "disabled step chains its assignment": (False, (
        Edit(DISABLED, "        out.next_draft_input = EagleDraftInput(\n", "        out.next_draft_input = next_input = EagleDraftInput(\n"),)),
}


@pytest.mark.parametrize("name", sorted(PATCHED_FAMILY_EDITS))
def test_patched_family_edit(sglang_copy, _no_series_override, name):
    breaks, edits = PATCHED_FAMILY_EDITS[name]
    gate = _patched_gate(sglang_copy, edits)
    assert gate.passed != breaks, gate.line()
