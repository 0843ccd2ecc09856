"""Realistic edits of 0.5.17 and 0.5.23, and of 0.5.17 with the dynamic-disable series applied, in
construct families that tests/test_edit_robustness.py does not use: dispatch tables and computed
method names, generators, `assert`, `isinstance` dispatch, NamedTuple helpers, `global` flags,
`functools.wraps` wrappers, mixin order, `for`/`else`, a `try` nested in `finally`,
`functools.cached_property` and `__post_init__` on the result, `all(...)` guards, `vars(...).get`,
`operator.attrgetter`, context managers of the tree. Each break (a crash on a configuration SGLang
accepts) must fail `check --strict` (on the patched tree: the series' after-gate), each harmless
edit must pass. Breaks run on both releases, harmless edits on 0.5.23."""

from __future__ import annotations

import pytest

from mutate import SCHED, SUBDIRS, UTILS, check
from test_edit_robustness import (  # noqa: F401  (_no_series_override is a fixture)
    BARE,
    BOTH,
    DISABLED,
    DRAFT,
    IDLE,
    LATEST,
    RECORD,
    STANDALONE,
    STANDALONE_CLASS,
    SUPER_STEP,
    Edit,
    MethodBefore,
    _apply,
    _before_overlap_copy,
    _fails,
    _indented,
    _no_series_override,
    _patched_gate,
    _standalone_step,
)

RESULT_IMPORT = "        from sglang.srt.managers.utils import GenerationBatchResult\n\n"
HELPERS = ("    def _idle_step(self, batch, **kwargs):\n" + RESULT_IMPORT + f"        return {BARE}\n\n"
           "    def _full_step(self, batch, **kwargs):\n        return super().forward_batch_generation(batch, **kwargs)")


def _generator(idle_bare: bool) -> Edit:
    idle = f"        if batch.forward_mode.is_idle():\n            yield {BARE}\n            return\n" if idle_bare else ""
    return _standalone_step("        return next(self._steps(model_worker_batch, **kwargs))\n\n"
                            "    def _steps(self, batch, **kwargs):\n" + RESULT_IMPORT + idle
                            + "        yield super().forward_batch_generation(batch, **kwargs)")


def _named_tuple(idle_bare: bool) -> Edit:
    idle = f"        if batch.forward_mode.is_idle():\n            return _Step({BARE}, True)\n" if idle_bare else ""
    return _standalone_step(
        "        return self._run(model_worker_batch, **kwargs).out\n\n"
        "    def _run(self, batch, **kwargs):\n" + RESULT_IMPORT + idle
        + "        return _Step(super().forward_batch_generation(batch, **kwargs), False)",
        before_class="class _Step(NamedTuple):\n    out: object\n    idle: bool\n\n\n")


def _with_typing_named_tuple() -> Edit:
    return Edit(STANDALONE, "from typing import Optional\n", "from typing import NamedTuple, Optional\n")


WRAPS = ("def {name}(fn):\n    import functools\n\n    @functools.wraps(fn)\n    def inner(self, batch, **kwargs):\n{shortcut}"
         "        return fn(self, batch, **kwargs)\n\n    return inner\n\n\n")
IDLE_MIXIN = ("class _IdleShortcut:\n    def forward_batch_generation(self, model_worker_batch, **kwargs):\n" + RESULT_IMPORT
              + f"        if {IDLE}:\n            return {BARE}\n"
              + "        return super().forward_batch_generation(model_worker_batch, **kwargs)\n\n\n")


def _mixin(first: bool) -> Edit:
    bases = "_IdleShortcut, EAGLEWorkerV2" if first else "EAGLEWorkerV2, _IdleShortcut"
    return Edit(STANDALONE, STANDALONE_CLASS, IDLE_MIXIN + f"class StandaloneWorkerV2({bases}):\n")


HAS_SAMPLED = "    @property\n    def has_sampled_token_ids(self) -> bool:\n"
# a property of the result for the draft input, with a setter writing it
DRAFT_INPUT_SETTER = Edit(UTILS, HAS_SAMPLED, "    @property\n    def draft_input(self):\n        return self.next_draft_input\n\n"
                          "    @draft_input.setter\n    def draft_input(self, value):\n        self.next_draft_input = value\n\n"
                          + HAS_SAMPLED)
STAMP_ALL = ("                        if all(d is not None for d in (batch_result.next_draft_input,)):\n"
             "                            batch_result.next_draft_input.future_indices = future_indices\n")

RELAY_DRAFT = "        if batch_result.next_draft_input is not None:\n            payload = RelayPayload.from_draft_input("
STAMP_FUTURE = "self._stamp_future_indices(batch_result, future_indices)\n"
STAMP_FUTURE_HELPER = MethodBefore(SCHED, "run_batch", "    def _stamp_future_indices(self, batch_result, future_indices):\n"
                                  "        batch_result.next_draft_input.future_indices = future_indices\n")

RELEASE_EDITS = {
    # the result handed on by the function the scheduler passes it to (_relay_forward_payload) to a
    # helper of the scheduler that writes through the draft input: for every batch, and only under
    # the relay's own test that the draft input is set
    "the relay hands the result to a helper writing through the draft input": (True, BOTH, (
        Edit(SCHED, RELAY_DRAFT, "        " + STAMP_FUTURE + RELAY_DRAFT), STAMP_FUTURE_HELPER)),
    "the relay hands the result on under its test of the draft input": (False, LATEST, (
        Edit(SCHED, RELAY_DRAFT, RELAY_DRAFT.replace("\n", "\n            " + STAMP_FUTURE, 1)), STAMP_FUTURE_HELPER)),
    # a table of bound methods indexed by the batch's mode: the idle entry returns a bare result
    "Standalone dispatches on a table of steps": (True, BOTH, (_standalone_step(
        "        steps = {True: self._idle_step, False: self._full_step}\n"
        f"        return steps[{IDLE}](model_worker_batch, **kwargs)\n\n" + HELPERS),)),
    # the step found by a computed name: which one runs is not known
    "Standalone dispatches by a computed method name": (True, BOTH, (_standalone_step(
        f'        mode = "idle" if {IDLE} else "full"\n'
        '        return getattr(self, f"_{mode}_step")(model_worker_batch, **kwargs)\n\n' + HELPERS),)),
    # the result taken from a generator that yields a bare one for idle batches, and one that delegates
    "Standalone takes its result from a generator": (True, BOTH, (_generator(idle_bare=True),)),
    "Standalone takes its result from a generator as it comes": (False, LATEST, (_generator(idle_bare=False),)),
    # the delegated result's draft input asserted before it is returned
    "Standalone asserts its draft input": (False, LATEST, (_standalone_step(
        f"        out = {SUPER_STEP}\n        assert out.next_draft_input is not None\n        return out"),)),
    # a batch whose draft state is not an EAGLE one (the first prefill has none) gets a bare result
    "Standalone dispatches on the draft state's class": (True, BOTH, (_standalone_step(
        "        from sglang.srt.speculative.eagle_info import EagleDraftInput\n\n"
        "        if not isinstance(model_worker_batch.spec_info, EagleDraftInput):\n"
        f"            return {BARE}\n        return {SUPER_STEP}"),)),
    "Standalone logs a draft state of another class": (False, LATEST, (_standalone_step(
        "        from sglang.srt.speculative.eagle_info import EagleDraftInput\n\n"
        "        if not isinstance(model_worker_batch.spec_info, EagleDraftInput):\n"
        '            logger.debug("draft state %s", type(model_worker_batch.spec_info))\n'
        f"        return {SUPER_STEP}"),)),
    # the result as a field of a NamedTuple a helper returns, bare for idle batches, and as it comes
    "Standalone's result from a NamedTuple helper": (True, BOTH, (_with_typing_named_tuple(), _named_tuple(idle_bare=True))),
    "Standalone's result from a NamedTuple helper as it comes": (False, LATEST, (
        _with_typing_named_tuple(), _named_tuple(idle_bare=False))),
    # an idle shortcut behind a module flag that a function turns on through `global`
    "Standalone's idle shortcut behind a global flag": (True, BOTH, (_standalone_step(
        f"        if _IDLE_SHORTCUT and {IDLE}:\n            return {BARE}\n        return {SUPER_STEP}",
        before_class="_IDLE_SHORTCUT = False\n\n\ndef enable_idle_shortcut():\n    global _IDLE_SHORTCUT\n"
                     "    _IDLE_SHORTCUT = True\n\n\n"),)),
    # a decorator whose wrapper (functools.wraps) answers idle batches itself, and one that passes through
    "Standalone step wrapped by functools.wraps with an idle shortcut": (True, BOTH, (_standalone_step(
        f"        return {SUPER_STEP}", decorator="    @_skip_idle\n", before_class=WRAPS.format(
            name="_skip_idle", shortcut=RESULT_IMPORT + f"        if batch.forward_mode.is_idle():\n            return {BARE}\n")),)),
    "Standalone step wrapped by functools.wraps": (False, LATEST, (_standalone_step(
        f"        return {SUPER_STEP}", decorator="    @_traced\n", before_class=WRAPS.format(name="_traced", shortcut="")),)),
    # a mixin that answers idle batches placed before the base class (it runs), and after it (never reached)
    "a mixin before the base answers idle batches": (True, BOTH, (_mixin(first=True),)),
    "a mixin after the base": (False, LATEST, (_mixin(first=False),)),
    # a retry loop whose `else` raises: the only way past it is the `break` after a result
    "Standalone retries its step": (False, LATEST, (_standalone_step(
        f"        for _ in range(2):\n            try:\n                out = {SUPER_STEP}\n"
        "            except RuntimeError:\n                continue\n            break\n"
        '        else:\n            raise RuntimeError("the step failed twice")\n        return out'),)),
    # ... and one written `while True`
    "Standalone retries its step while true": (False, LATEST, (_standalone_step(
        f"        while True:\n            try:\n                out = {SUPER_STEP}\n"
        "            except RuntimeError:\n                continue\n            break\n        return out"),)),
    # the result handed to a hook nothing in the tree resolves (it may clear the draft input: not
    # decided, so --strict fails), and to a logger, which writes none of its attributes
    "Standalone hands its result to a hook from outside": (True, BOTH, (_standalone_step(
        f"        out = {SUPER_STEP}\n        self._step_hook.after_step(out)\n        return out"),)),
    "Standalone logs its result": (False, LATEST, (_standalone_step(
        f'        out = {SUPER_STEP}\n        logger.debug("step result %s", out)\n        return out'),)),
    # a try nested in `finally`, around bookkeeping only
    "Standalone counts its steps in a nested finally": (False, LATEST, (_standalone_step(
        f"        try:\n            return {SUPER_STEP}\n        finally:\n            try:\n"
        "                self.steps_run = getattr(self, \"steps_run\", 0) + 1\n"
        "            except AttributeError:\n                pass"),)),
    # the draft input through a cached_property of the result, dereferenced for every batch
    "draft input through a cached_property of the result": (True, BOTH, (
        _before_overlap_copy("                        batch_result.draft_input.future_indices = future_indices\n"),
        Edit(UTILS, "import dataclasses\nimport logging\n", "import dataclasses\nimport functools\nimport logging\n"),
        Edit(UTILS, HAS_SAMPLED, "    @functools.cached_property\n    def draft_input(self):\n"
                                 "        return self.next_draft_input\n\n" + HAS_SAMPLED))),
    # the draft input cleared for idle batches through a property setter of the result
    "Standalone clears the draft input through a setter of the result": (True, BOTH, (
        _standalone_step(f"        out = {SUPER_STEP}\n        if {IDLE}:\n            out.draft_input = None\n        return out"),
        DRAFT_INPUT_SETTER)),
    "Standalone re-sets the draft input through a setter of the result": (False, LATEST, (
        _standalone_step(f"        out = {SUPER_STEP}\n        out.draft_input = out.next_draft_input\n        return out"),
        DRAFT_INPUT_SETTER)),
    # __post_init__ of the result drops the draft input of results that ran without CUDA graphs
    # (EAGLE with --disable-cuda-graph), and one that only derives a non-field attribute
    "the result's __post_init__ drops the draft input": (True, BOTH, (Edit(UTILS, HAS_SAMPLED,
        "    def __post_init__(self):\n        if not self.can_run_cuda_graph:\n            self.next_draft_input = None\n\n"
        + HAS_SAMPLED),)),
    "the result's __post_init__ derives a flag": (False, LATEST, (Edit(UTILS, HAS_SAMPLED,
        "    def __post_init__(self):\n        self.graph_replayed = bool(self.can_run_cuda_graph)\n\n" + HAS_SAMPLED),)),
    # the draft input written through under an all(...) test that it is set
    "draft input written under an all() test": (False, LATEST, (_before_overlap_copy(STAMP_ALL),)),
    # the draft input fetched from the result's __dict__ (vars), then written through
    "draft input from vars(result).get": (True, BOTH, (_before_overlap_copy(
        '                        draft = vars(batch_result).get("next_draft_input")\n'
        "                        draft.future_indices = future_indices\n"),)),
    # operator.attrgetter of a dotted path dereferences the draft input
    "draft input through operator.attrgetter": (True, BOTH, (_before_overlap_copy(
        "                        import operator\n\n"
        '                        stamped = operator.attrgetter("next_draft_input.future_indices")(batch_result)\n'),)),
    # a module flag of the scheduler gating the write through: on by default
    "draft input written under a module flag": (True, BOTH, (
        _before_overlap_copy("                        if _STAMP_DRAFTS:\n"
                             "                            batch_result.next_draft_input.future_indices = future_indices\n"),
        Edit(SCHED, "\nclass Scheduler(\n", "\n_STAMP_DRAFTS = True\n\n\nclass Scheduler(\n"))),
}
CASES = [(v, name) for name, (_, versions, _) in RELEASE_EDITS.items() for v in versions]


@pytest.mark.parametrize("version,name", CASES, ids=[f"{v}-{n}" for v, n in CASES])
def test_release_edit(sglang_copy, version, name):
    breaks, _, edits = RELEASE_EDITS[name]
    root = sglang_copy(version, subdirs=SUBDIRS)
    _apply(root, edits)
    assert _fails(check(root, strict=True)) == breaks


MANAGER = ("class _{name}:\n    def __enter__(self):\n        return self\n\n"
           "    def __exit__(self, kind, value, tb):\n{exit}\n\n\n")
TOLERANT = MANAGER.format(name="Tolerant", exit="        return kind is not None and issubclass(kind, RuntimeError)")
TIMED = MANAGER.format(name="Timed", exit="        self.done = True")
CLASS_RUNTIME = "class SpecDisableRuntime"
PATCHED_EDITS = {
    # the draft input built under a context manager of the tree whose __exit__ swallows runtime errors
    "disabled step builds its draft input under a tolerant manager": (True, (
        Edit(DISABLED, DRAFT, "        with _Tolerant():\n" + _indented(DRAFT)),
        Edit(DISABLED, CLASS_RUNTIME, TOLERANT + CLASS_RUNTIME))),
    # ... and under one that only records that it ran
    "disabled step builds its draft input under a recording manager": (False, (
        Edit(DISABLED, DRAFT, "        with _Timed():\n" + _indented(DRAFT)),
        Edit(DISABLED, CLASS_RUNTIME, TIMED + CLASS_RUNTIME))),
    # its draft state asserted first
    "disabled step asserts its draft state": (False, (
        Edit(DISABLED, DRAFT, "        assert draft_input is not None\n" + DRAFT),)),
    # a batch whose requests are all finished returns from the loop's `else` before the draft input
    "disabled step returns from a for-else": (True, (
        Edit(DISABLED, DRAFT, "        for req in batch.reqs:\n            if not req.finished():\n                break\n"
                              "        else:\n            return out\n" + DRAFT),)),
    # the result handed to a hook nothing in the tree resolves, after its draft input is set: not
    # decided in code the series touches, so the gate fails
    "disabled step hands its result to a hook from outside": (True, (
        Edit(DISABLED, DRAFT, DRAFT + "        self._result_hook.after_step(out)\n"),)),
    # the draft input built in a retry loop left only by the break after it
    "disabled step builds its draft input in a retry loop": (False, (
        Edit(DISABLED, DRAFT, "        while True:\n            try:\n" + _indented(_indented(DRAFT))
             + "                break\n            except RuntimeError:\n                continue\n"),)),
    # the draft input built by a generator helper: `next(...)` of what it yields
    "disabled step's draft input from a generator": (True, (
        Edit(DISABLED, DRAFT, "        out.next_draft_input = next(self._inputs(out, draft_input))\n"),
        Edit(DISABLED, RECORD, "    def _inputs(self, out, draft_input):\n        from sglang.srt.speculative.eagle_info import EagleDraftInput\n\n"
             "        if draft_input.topk_p is None:\n            yield None\n            return\n"
             + DRAFT.replace("        out.next_draft_input = EagleDraftInput(", "        yield EagleDraftInput(") + "\n" + RECORD))),
}


@pytest.mark.parametrize("name", sorted(PATCHED_EDITS))
def test_patched_edit(sglang_copy, _no_series_override, name):
    breaks, edits = PATCHED_EDITS[name]
    gate = _patched_gate(sglang_copy, edits)
    assert gate.passed != breaks, gate.line()
