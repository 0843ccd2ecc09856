"""Realistic edits of 0.5.17 and 0.5.23, and of 0.5.17 with the dynamic-disable series applied, in
construct families that the other edit sets do not use: an instance's ``__dict__`` changed by
method (``vars(out).update``, ``out.__dict__.pop``), ``copy.copy`` of the result, a write in the
``finally`` of a ``return``, tuple targets, ``**kwargs`` forwarded to the constructor, positional
construction, a step rebound to a ``functools.partial`` or made a property, ``a and b or c`` as the
result; on the scheduler's side a handler of AttributeError that raises again, ``typing.cast`` of
the draft input, a lambda and a closure dereferencing it, ``isinstance`` and ``match case None``
guards, a guard split into nested ``if``s.

Each break (a crash on a configuration SGLang accepts: a Standalone worker with DP attention's
idle batches, the overlap scheduler without speculation, the disabled step of the series) must
fail ``check --strict`` with a violation or unknown at the edit's site; each harmless edit must
pass with none. Breaks run on both releases, harmless edits on 0.5.23."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutate import SCHED, SUBDIRS, UTILS, check
from spectrace.patches import engine
from spectrace.patches.series import load_series
from spectrace.source import from_path
from test_edit_robustness import (  # noqa: F401  (_no_series_override is a fixture)
    BARE,
    BOTH,
    DISABLED,
    DRAFT,
    IDLE,
    LATEST,
    PP_MIXIN,
    RECORD,
    STANDALONE,
    STANDALONE_CLASS,
    SUPER_STEP,
    Edit,
    _apply,
    _before_overlap_copy,
    _fails,
    _indented,
    _no_series_override,
    _standalone_step,
)

RESULT_IMPORT = "        from sglang.srt.managers.utils import GenerationBatchResult\n\n"
IN_STEP = "                        "  # the indentation of run_batch's overlap path
STAMP = "batch_result.next_draft_input.future_indices = future_indices"
INIT_TAIL = "        self.adaptive_controller: Optional[AdaptiveController] = None\n"
PP_RELAY_GUARD = "        if self._pp_spec_relay and result.accept_lens is not None:\n"


def _idle_then(lines: str) -> Edit:
    """The Standalone step delegates, then runs ``lines`` (indented for an ``if``) on idle batches."""
    return _standalone_step(f"        out = {SUPER_STEP}\n        if {IDLE}:\n{lines}        return out")


def _in_step(*lines: str) -> Edit:
    """``lines`` (indented from run_batch's overlap path) right after the worker call, for every batch."""
    return _before_overlap_copy("".join(IN_STEP + ln + "\n" if ln else "\n" for ln in lines))


def _split_pp_guard(root: Path) -> Edit:
    """0.5.23's relay guard `if a and b:` as `if a:` / `if b:`, its body indented once more."""
    text = (root / PP_MIXIN).read_text()
    start = text.index(PP_RELAY_GUARD)
    block = text[start:text.index("\n\n", start) + 1]
    body = block[len(PP_RELAY_GUARD):]
    return Edit(PP_MIXIN, block, "        if self._pp_spec_relay:\n            if result.accept_lens is not None:\n"
                + _indented(body))


# name -> (breaks?, releases, edits, site: (file, the stripped text of the line a finding names) or None)
EDITS = {
    # ---------------- the Standalone step (DP attention gives it idle batches)
    "Standalone updates its result's __dict__ for idle batches": (True, BOTH, (
        _idle_then("            vars(out).update(next_draft_input=None)\n"),),
        (STANDALONE, "vars(out).update(next_draft_input=None)")),
    "Standalone updates its result's __dict__ from a dict display": (True, BOTH, (
        _idle_then('            out.__dict__.update({"next_draft_input": None})\n'),),
        (STANDALONE, 'out.__dict__.update({"next_draft_input": None})')),
    "Standalone pops the draft input from its result's __dict__": (True, BOTH, (
        _idle_then('            out.__dict__.pop("next_draft_input", None)\n'),),
        (STANDALONE, 'out.__dict__.pop("next_draft_input", None)')),
    "Standalone updates a flag through __dict__": (False, LATEST, (_standalone_step(
        f"        out = {SUPER_STEP}\n        vars(out).update(can_run_cuda_graph=False)\n        return out"),), None),
    "Standalone returns a cleared copy for idle batches": (True, BOTH, (
        _idle_then("            import copy\n\n            out = copy.copy(out)\n            out.next_draft_input = None\n"),),
        (STANDALONE, "out.next_draft_input = None")),
    "Standalone returns a copy with a flag changed": (False, LATEST, (_standalone_step(
        f"        import copy\n\n        out = copy.copy({SUPER_STEP})\n        out.can_run_cuda_graph = False\n"
        "        return out"),), None),
    "Standalone clears the draft input in a finally after its return": (True, BOTH, (_standalone_step(
        f"        out = {SUPER_STEP}\n        try:\n            return out\n        finally:\n            if {IDLE}:\n"
        "                out.next_draft_input = None"),), (STANDALONE, "out.next_draft_input = None")),
    "Standalone keeps bookkeeping in a finally after its return": (False, LATEST, (_standalone_step(
        f"        out = {SUPER_STEP}\n        try:\n            return out\n        finally:\n"
        "            self.last_mode = model_worker_batch.forward_mode"),), None),
    "Standalone clears the draft input in a tuple assignment": (True, BOTH, (
        _idle_then("            out.next_draft_input, out.can_run_cuda_graph = None, False\n"),),
        (STANDALONE, "out.next_draft_input, out.can_run_cuda_graph = None, False")),
    "Standalone writes a flag and its draft input back in a tuple assignment": (False, LATEST, (_standalone_step(
        f"        out = {SUPER_STEP}\n        out.can_run_cuda_graph, out.next_draft_input = False, out.next_draft_input\n"
        "        return out"),), None),
    "Standalone forwards keyword arguments to the result's constructor": (True, BOTH, (_standalone_step(
        f"        if {IDLE}:\n            return self._result(can_run_cuda_graph=False)\n        return {SUPER_STEP}\n\n"
        "    def _result(self, **fields):\n" + RESULT_IMPORT + "        return GenerationBatchResult(**fields)"),),
        (STANDALONE, "return self._result(can_run_cuda_graph=False)")),
    "Standalone builds its idle result by position": (True, BOTH, (_standalone_step(
        f"        if {IDLE}:\n            return GenerationBatchResult(None, None, None)\n        return {SUPER_STEP}"),),
        (STANDALONE, "return GenerationBatchResult(None, None, None)")),
    "Standalone rebinds its step to a partial in __init__": (True, BOTH, (
        Edit(STANDALONE, INIT_TAIL, INIT_TAIL + "        import functools\n\n"
             "        self.forward_batch_generation = functools.partial(self._idle_aware_step, True)\n"),
        Edit(STANDALONE, STANDALONE_CLASS, STANDALONE_CLASS
             + "    def _idle_aware_step(self, shortcut, model_worker_batch, **kwargs):\n" + RESULT_IMPORT
             + f"        if shortcut and {IDLE}:\n            return {BARE}\n        return {SUPER_STEP}\n\n")),
        (STANDALONE, "self.forward_batch_generation = functools.partial(self._idle_aware_step, True)")),
    "Standalone's step is a property": (True, BOTH, (Edit(STANDALONE, STANDALONE_CLASS, STANDALONE_CLASS
        + "    @property\n    def forward_batch_generation(self):\n        return self._idle_aware_step\n\n"
        "    def _idle_aware_step(self, model_worker_batch, **kwargs):\n" + RESULT_IMPORT
        + f"        if {IDLE}:\n            return {BARE}\n"
        "        return super().forward_batch_generation(model_worker_batch, **kwargs)\n\n"),),
        (STANDALONE, "return self._idle_aware_step")),
    "Standalone returns `idle and bare or delegated`": (True, BOTH, (_standalone_step(
        f"        return {IDLE} and {BARE} or {SUPER_STEP}"),),
        (STANDALONE, f"return {IDLE} and {BARE} or {SUPER_STEP}")),
    "Standalone annotates its result": (False, LATEST, (_standalone_step(
        f"        out: GenerationBatchResult = {SUPER_STEP}\n        return out"),), None),
    # ---------------- run_batch's overlap path (without speculation the plain worker sets no draft input)
    "draft input written under an AttributeError handler that raises again": (True, BOTH, (_in_step(
        "try:", "    " + STAMP, "except AttributeError:", '    logger.error("no draft input")', "    raise"),),
        (SCHED, STAMP)),
    "draft input written under an AttributeError handler that raises another error": (True, BOTH, (_in_step(
        "try:", "    " + STAMP, "except AttributeError as e:", '    raise RuntimeError("no draft input") from e'),),
        (SCHED, STAMP)),
    "draft input cast, then written through": (True, BOTH, (_in_step(
        "from typing import cast", "", "draft = cast(object, batch_result.next_draft_input)",
        "draft.future_indices = future_indices"),), (SCHED, "draft.future_indices = future_indices")),
    "draft input stamped by a lambda applying setattr": (True, BOTH, (_in_step(
        'stamp = lambda d: setattr(d, "future_indices", future_indices)  # noqa: E731',
        "stamp(batch_result.next_draft_input)"),), (SCHED, "stamp(batch_result.next_draft_input)")),
    "draft input stamped by a closure": (True, BOTH, (_in_step(
        "def stamp():", "    " + STAMP, "", "stamp()"),), (SCHED, STAMP)),
    "draft input written under an isinstance test of a local": (False, LATEST, (_in_step(
        "from sglang.srt.speculative.eagle_info import EagleDraftInput", "",
        "draft = batch_result.next_draft_input", "if isinstance(draft, EagleDraftInput):",
        "    draft.future_indices = future_indices"),), None),
    "draft input written under a None test of a local": (False, LATEST, (_in_step(
        "draft = batch_result.next_draft_input", "if draft is not None:", "    draft.future_indices = future_indices"),), None),
    "draft input matched against None": (False, LATEST, (_in_step(
        "match batch_result.next_draft_input:", "    case None:", "        pass", "    case draft:",
        "        draft.future_indices = future_indices"),), None),
    "draft input written in a try catching BaseException": (False, LATEST, (_in_step(
        "try:", "    " + STAMP, "except BaseException:", "    pass"),), None),
}
CASES = [(v, name) for name, (_, versions, _, _) in EDITS.items() for v in versions]


def _sites(report) -> str:
    """Everything the check says fails, in one text (each finding names its sites as file:line)."""
    return "\n".join([*(x.message for x in [*report.violations, *report.unknowns]),
                      *(r.message for r in report.results if not r.ok and r.status != "not-applicable")])


def _site_named(root: Path, site: tuple[str, str], said: str) -> bool:
    rel, text = site
    lines = [i for i, ln in enumerate((root / rel).read_text().splitlines(), 1) if ln.strip() == text]
    assert lines, f"no line {text!r} in {rel}"
    return any(f"{rel}:{n}" in said for n in lines)


@pytest.mark.parametrize("version,name", CASES, ids=[f"{v}-{n}" for v, n in CASES])
def test_edit(sglang_copy, version, name):
    breaks, _, edits, site = EDITS[name]
    root = sglang_copy(version, subdirs=SUBDIRS)
    _apply(root, edits)
    report = check(root, strict=True)
    assert _fails(report) == breaks
    if breaks:
        assert _site_named(root, site, _sites(report)), _sites(report)[:2000]


def test_split_guard_of_the_pp_relay(sglang_copy):
    """0.5.23's pipeline relay guard split into two nested ifs: the same guard."""
    root = sglang_copy("0.5.23", subdirs=SUBDIRS)
    _apply(root, (_split_pp_guard(root),))
    assert not _fails(check(root, strict=True))


SET_FLAGS = "        out.speculative_num_draft_tokens = 1\n        out.new_seq_lens = new_seq_lens\n"
RETURN = "        out.spec_disabled = True\n        return out\n"
PATCHED_EDITS = {
    # the draft input reset for a full ring in a finally after the return (SPEC2-DISABLED-NDI)
    "disabled step resets its draft input in a finally": (True, (
        Edit(DISABLED, RETURN, "        out.spec_disabled = True\n        try:\n            return out\n        finally:\n"
             "            if ring_full:\n                out.next_draft_input = None\n"),),
        (DISABLED, "return out")),
    # ... or through the result's __dict__ when the ring is full and no catch-up runs
    "disabled step clears its draft input through __dict__": (True, (
        Edit(DISABLED, "        ring_full = self._record(batch, out)\n", "        ring_full = self._record(batch, out)\n"
             "        if ring_full and not self.full_catch_up:\n            vars(out).update(next_draft_input=None)\n"),),
        (DISABLED, "vars(out).update(next_draft_input=None)")),
    # the draft input in a tuple assignment, None without a top-k
    "disabled step's draft input in a tuple assignment": (True, (
        Edit(DISABLED, "        out.next_draft_input = EagleDraftInput(\n", "        out.speculative_num_draft_tokens, "
             "out.next_draft_input = 1, None if draft_input.topk_p is None else EagleDraftInput(\n"),),
        (DISABLED, "return out")),
    # harmless: a copy returned, the flags set through __dict__ or in a tuple assignment, an annotated local
    "disabled step returns a copy of its result": (False, (
        Edit(DISABLED, RETURN, "        out.spec_disabled = True\n        import copy\n\n        return copy.copy(out)\n"),), None),
    "disabled step sets its flags through __dict__": (False, (
        Edit(DISABLED, SET_FLAGS, "        vars(out).update(speculative_num_draft_tokens=1, new_seq_lens=new_seq_lens)\n"),), None),
    "disabled step sets its flags in a tuple assignment": (False, (
        Edit(DISABLED, SET_FLAGS, "        out.speculative_num_draft_tokens, out.new_seq_lens = 1, new_seq_lens\n"),), None),
    "disabled step annotates its draft input": (False, (
        Edit(DISABLED, DRAFT, DRAFT.replace("        out.next_draft_input = EagleDraftInput(",
                                            "        next_input: EagleDraftInput = EagleDraftInput(")
             + "        out.next_draft_input = next_input\n"),), None),
}


@pytest.mark.parametrize("name", sorted(PATCHED_EDITS))
def test_patched_edit(sglang_copy, _no_series_override, name):
    breaks, edits, site = PATCHED_EDITS[name]
    tree = sglang_copy("0.5.17", subdirs=("sglang/srt",))
    series = load_series("dynamic-disable", "0.5.17")
    _, baseline = engine.contract_gate(from_path(tree), series, "before")
    engine.apply(tree, "dynamic-disable")
    _apply(tree, edits)
    gate, _ = engine.contract_gate(from_path(tree), series, "after", baseline)
    assert gate.passed != breaks, gate.line()
    if breaks:
        said = _sites(check(tree, strict=True))
        assert _site_named(tree, site, said), said[:2000]
