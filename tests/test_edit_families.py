"""Realistic edits of 0.5.17 and 0.5.23 in construct families that test_edit_robustness.py and
test_edit_constructs.py do not use: a return inside a `with`, `match` on the forward mode by value,
a result built from a `**` dict, a result kept on `self`, a step rebound on the instance or aliased
in the class body, a method defined under a module flag, a subclass of the result, a write through
`x or fallback`, and on the scheduler's side `contextlib.suppress`, a `try` catching TypeError, a
predicate method as the guard, `getattr` of a sub-attribute with a default and a nested function
writing through its argument.
Each break (a crash on a configuration SGLang accepts) must fail `check --strict`, each harmless
edit must pass. Breaks run on both releases, harmless edits on 0.5.23."""

from __future__ import annotations

import pytest

from mutate import SCHED, SUBDIRS, check
from test_edit_robustness import (
    BARE,
    BOTH,
    IDLE,
    LATEST,
    STANDALONE,
    STANDALONE_CLASS,
    SUPER_STEP,
    Edit,
    _apply,
    _before_overlap_copy,
    _fails,
    _standalone_step,
)

RESULT_IMPORT = "        from sglang.srt.managers.utils import GenerationBatchResult\n\n"
MODE_IMPORT = "        from sglang.srt.model_executor.forward_batch_info import ForwardMode\n\n"
# a step of the Standalone worker under another name: a bare result for idle batches
IDLE_AWARE = ("    def _idle_aware_step(self, model_worker_batch, **kwargs):\n" + RESULT_IMPORT
              + f"        if {IDLE}:\n            return {BARE}\n        return {SUPER_STEP}\n\n")
INIT_TAIL = "        self.adaptive_controller: Optional[AdaptiveController] = None\n"
STAMP = "batch_result.next_draft_input.future_indices = future_indices\n"


def _class_body(text: str, before_class: str = "") -> Edit:
    """``text`` (indented for the class body) at the top of StandaloneWorkerV2."""
    return Edit(STANDALONE, STANDALONE_CLASS, before_class + STANDALONE_CLASS + text)


RELAY_DEF = "    def _relay_forward_payload(\n"  # an undecorated method of the scheduler


def _predicate(test: str) -> Edit:
    """A method of the scheduler that answers whether a result has its draft input, by ``test``."""
    return Edit(SCHED, RELAY_DEF, "    def _has_draft_input(self, batch_result) -> bool:\n"
                f"        return {test}\n\n" + RELAY_DEF)


EDITS = {
    # an idle batch (DP attention's) answered from inside a `with` block, before the delegation
    "Standalone returns a bare result inside a with block": (True, BOTH, (_standalone_step(
        f"        with torch.no_grad():\n            if {IDLE}:\n                return {BARE}\n"
        f"            return {SUPER_STEP}"),)),
    # `match` on the forward mode with a value pattern for idle batches
    "Standalone matches idle batches by value": (True, BOTH, (_standalone_step(
        MODE_IMPORT + "        match model_worker_batch.forward_mode:\n            case ForwardMode.IDLE:\n"
        f"                return {BARE}\n            case _:\n                return {SUPER_STEP}"),)),
    # ... and one whose every case delegates (the wildcard makes it exhaustive)
    "Standalone matches the mode and delegates in every case": (False, LATEST, (_standalone_step(
        MODE_IMPORT + "        match model_worker_batch.forward_mode:\n"
        "            case ForwardMode.IDLE | ForwardMode.DECODE:\n"
        f"                out = {SUPER_STEP}\n            case _:\n                out = {SUPER_STEP}\n"
        "        return out"),)),
    # the idle result's keywords spread from a dict that has no draft input
    "Standalone builds its idle result from a keyword dict": (True, BOTH, (_standalone_step(
        f"        if {IDLE}:\n            fields = {{\"can_run_cuda_graph\": False}}\n"
        f"            return GenerationBatchResult(**fields)\n        return {SUPER_STEP}"),)),
    # a bare idle result built once and kept on the worker
    "Standalone caches its idle result on self": (True, BOTH, (_standalone_step(
        f"        if {IDLE}:\n            if getattr(self, \"_idle_out\", None) is None:\n"
        f"                self._idle_out = {BARE}\n            return self._idle_out\n        return {SUPER_STEP}"),)),
    # the delegated result kept on the worker and returned from there
    "Standalone keeps its last result on self": (False, LATEST, (_standalone_step(
        f"        self.last_result = {SUPER_STEP}\n        return self.last_result"),)),
    # the step the scheduler calls rebound on the instance by __init__
    "Standalone rebinds its step in __init__": (True, BOTH, (
        Edit(STANDALONE, INIT_TAIL, INIT_TAIL + "        self.forward_batch_generation = self._idle_aware_step\n"),
        _class_body(IDLE_AWARE))),
    # the step the scheduler calls is an alias in the class body
    "Standalone aliases its step in the class body": (True, BOTH, (
        _class_body(IDLE_AWARE + "    forward_batch_generation = _idle_aware_step\n\n"),)),
    "Standalone aliases the base step in the class body": (False, LATEST, (
        _class_body("    forward_batch_generation = EAGLEWorkerV2.forward_batch_generation\n\n"),)),
    # the idle shortcut defined only when an environment flag is on at import
    "Standalone's idle shortcut defined under an environment flag": (True, BOTH, (_class_body(
        "    if _IDLE_SHORTCUT:\n\n" + "".join("    " + ln if ln.strip() else ln for ln in IDLE_AWARE.replace(
            "_idle_aware_step", "forward_batch_generation").splitlines(keepends=True)),
        before_class='_IDLE_SHORTCUT = get_bool_env_var("SGLANG_STANDALONE_IDLE_SHORTCUT")\n\n\n'),)),
    # an idle result of a subclass of the result class
    "Standalone's idle result is a subclass of the result": (True, BOTH, (_standalone_step(
        f"        if {IDLE}:\n            return _IdleResult(can_run_cuda_graph=False)\n        return {SUPER_STEP}",
        before_class="from sglang.srt.managers.utils import GenerationBatchResult\n\n\n"
                     "class _IdleResult(GenerationBatchResult):\n    \"\"\"An idle step's result.\"\"\"\n\n\n"),)),
    # the delegated draft input written back with the batch's draft state as a fallback
    "Standalone falls back to the batch's draft state": (False, LATEST, (_standalone_step(
        f"        out = {SUPER_STEP}\n"
        "        out.next_draft_input = out.next_draft_input or model_worker_batch.spec_info\n        return out"),)),
    # the scheduler's write through the draft input with an AttributeError suppressed (None's), and
    # with another error suppressed
    "draft input written under suppress(AttributeError)": (False, LATEST, (_before_overlap_copy(
        "                        import contextlib\n\n                        with contextlib.suppress(AttributeError):\n"
        "                            " + STAMP),)),
    "draft input written under suppress(KeyError)": (True, BOTH, (_before_overlap_copy(
        "                        import contextlib\n\n                        with contextlib.suppress(KeyError):\n"
        "                            " + STAMP),)),
    # ... and in a try whose handler catches TypeError, which writing through None does not raise
    "draft input written in a try catching TypeError": (True, BOTH, (_before_overlap_copy(
        "                        try:\n                            " + STAMP
        + "                        except TypeError:\n                            pass\n"),)),
    # the write guarded by a predicate method of the scheduler: of the draft input, or of another field
    "draft input written under a predicate method": (False, LATEST, (
        _before_overlap_copy("                        if self._has_draft_input(batch_result):\n                            " + STAMP),
        _predicate("batch_result.next_draft_input is not None"))),
    "draft input written under a predicate of another field": (True, BOTH, (
        _before_overlap_copy("                        if self._has_draft_input(batch_result):\n                            " + STAMP),
        _predicate("batch_result.next_token_ids is not None"))),
    # getattr of an attribute of the draft input with a default: None gives the default
    "draft input's attribute read by getattr with a default": (False, LATEST, (_before_overlap_copy(
        '                        stamped = getattr(batch_result.next_draft_input, "future_indices", None)\n'),)),
    # the draft input handed to a nested function that writes through it
    "draft input stamped by a nested function": (True, BOTH, (_before_overlap_copy(
        "                        def stamp(draft):\n                            draft.future_indices = future_indices\n\n"
        "                        stamp(batch_result.next_draft_input)\n"),)),
}
CASES = [(v, name) for name, (_, versions, _) in EDITS.items() for v in versions]


@pytest.mark.parametrize("version,name", CASES, ids=[f"{v}-{n}" for v, n in CASES])
def test_family_edit(sglang_copy, version, name):
    breaks, _, edits = EDITS[name]
    root = sglang_copy(version, subdirs=SUBDIRS)
    _apply(root, edits)
    assert _fails(check(root, strict=True)) == breaks
