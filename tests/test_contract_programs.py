"""The contract check on small programs, one construct each (tests/programs/contracts/): each has its
own scheduler, worker and result class and a catalog naming them ([roles]); the test states the
exact verdict and, for a violation, the worker's return that breaks the scheduler's read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from spectrace.contracts.check import check_catalog
from spectrace.contracts.diff import diff_extractions, drift_table
from spectrace.source import package_source

PROGRAMS = Path(__file__).parent / "programs" / "contracts"
DEFAULT = "scheduler.py:25"  # `batch.lens = result.draft.lens` in Scheduler.run_batch
# program -> (status of its contract, the scheduler's read and the worker's return that breaks it
# as "file:line", or None where it holds; what the violation says the return leaves None)
EXPECTED = {
    # `None is not x` tests x as `x is not None` does; `hasattr(x, "lens")` is false for None, which
    # has no `lens`; `type(x) is Draft` holds for a Draft only
    "guard_none_first": ("present", None, None, ""),
    "guard_hasattr_below": ("present", None, None, ""),
    "guard_type_is": ("present", None, None, ""),
    "dict_held_type_is": ("present", None, None, ""),
    "exit_none_first": ("present", None, None, ""),
    # a test of a local tells nothing of the value it holds once bound again under the test
    "guard_rebound_write": ("violated", DEFAULT, "worker.py:12", "worker.py:11 `result.draft = draft` leaves it None"),
    # a write through another name of the result (an alias, a loop's target over a display holding
    # it) or by a nested function through its free variable, where it is called, writes the result
    "alias_clears": ("violated", DEFAULT, "worker.py:11", "worker.py:10 `alias.draft = None` sets it to None"),
    "loop_display_clears": ("violated", DEFAULT, "worker.py:11", "worker.py:10 `r.draft = None` sets it to None"),
    "closure_clears": ("violated", DEFAULT, "worker.py:14", "worker.py:10 `result.draft = None` sets it to None"),
    # a class pattern's keyword capture is bound to the subject's attribute (`case Result(draft=d):`);
    # a class pattern matched is an instance there (`Draft() as d`, `match result.draft: case Draft(...)`)
    "match_class_capture": ("violated", "scheduler.py:14", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "match_class_as": ("present", None, None, ""),
    "match_class_subject": ("present", None, None, ""),
    # a loop over a display binds its target to each item: the worker's result read through it in
    # the scheduler; in the worker, whichever item the loop stops at
    "loop_display_read": ("violated", "scheduler.py:13", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "loop_display_last": ("violated", DEFAULT, "worker.py:10", "worker.py:7 `Result(tokens=[2])` leaves Result.draft at its default None"),
    "loop_display_all_set": ("present", None, None, ""),
    # a return of None is no result at all: a field read through it dereferences None
    "return_none": ("violated", DEFAULT, "worker.py:8", "worker.py:8 `return None` returns None, no Result"),
    # a result built with a local under the local's own None test has it set, unless bound again there
    "construct_under_guard": ("present", None, None, ""),
    "construct_under_guard_rebound": ("violated", DEFAULT, "worker.py:10", "`Result(tokens=[1], draft=draft)` leaves it None"),
    # `if draft is None: draft = Draft(...)` (or `(draft := make()) is None`): where the binding is
    # skipped the test said draft is set, so the helper's None does not reach the result; a binding
    # under a test of something else leaves it
    "none_filled": ("present", None, None, ""),
    "walrus_filled": ("present", None, None, ""),
    "none_filled_other": ("violated", DEFAULT, "worker.py:12", "`Result(tokens=[1], draft=draft)` leaves it None when batch.idle and not (batch.retry)"),
    # a write inside `try` does not reach the `except` path that returns early
    "try_except": ("violated", DEFAULT, "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a loop left only through its breaks (an `else` that raises, `while True`) has run what
    # stands before every break by the code after it; a loop body may run zero times, and a
    # break before the write leaves it out
    "loop_retry": ("present", None, None, ""),
    "loop_while_true": ("violated", DEFAULT, "worker.py:11", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "loop_zero_runs": ("violated", DEFAULT, "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "loop_break_first": ("violated", DEFAULT, "worker.py:15", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # ... also under an `if` that the return stands in too
    "try_under_if": ("violated", DEFAULT, "worker.py:14", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a handler that re-raises: the code after the statement follows the body only
    "try_reraise": ("present", None, None, ""),
    # a test of what lies below the field (`if result.draft.lens:`) reaches into the field: no check of it
    "test_below_field": ("violated", "scheduler.py:12", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # ... as does an attribute of `getattr(result, "draft")` without a default
    "getattr_below_field": ("violated", "scheduler.py:12", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a test of the field guards the read only while the name holds the object tested: bound again
    # under the test, it holds another
    "guard_then_rebound": ("violated", "scheduler.py:14", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a comprehension's element runs only for the items its filters let through: `if d` guards `d.lens`
    # over `[result.draft]`, a filter on something else does not
    "comp_filter": ("present", None, None, ""),
    "comp_filter_other": ("violated", "scheduler.py:12", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a function that calls the worker and hands the result to a helper that reads it receives it,
    # reads of its own or none: the helper's read is an obligation
    "helper_reads_only": ("violated", "scheduler.py:15", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # ... also through `functools.partial(self._use, result)`, called where it is made or bound and
    # called later: the helper's parameter is the result (a test of it there guards the read)
    "partial_call_read": ("violated", "scheduler.py:17", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "partial_bound_read": ("violated", "scheduler.py:18", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "partial_bound_guarded": ("present", None, None, ""),
    # ... and through `map(fn, [result])` over a list or tuple display: a lambda's parameter, or the
    # helper's, holds each item
    "map_lambda_read": ("violated", "scheduler.py:12", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "map_method_read": ("violated", "scheduler.py:15", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "map_lambda_guarded": ("present", None, None, ""),
    # ... and through an item of a local dict display that nothing changes (`held["r"]`,
    # `held.get("r")`), a test of the item guarding it; a dict handed on, or given the item by a
    # store, may hold anything there: not decided
    "dict_held": ("violated", "scheduler.py:13", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "dict_held_get": ("violated", "scheduler.py:13", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "dict_held_guarded": ("present", None, None, ""),
    "dict_held_changed": ("unknown", "scheduler.py:14", "worker.py:11", "`held[\"r\"]` may be another value than one given it "
                          "(`self.refresh(held)` at line 13 may change what held holds)"),
    "dict_held_stored": ("unknown", "scheduler.py:14", "worker.py:11", "`held[\"r\"]` may be another value than one given it "
                         "(`held[\"r\"]` at line 13 may change what held holds)"),
    # ... also a local bound from such an item (unsure as the item is), and an item of a local list
    # or tuple display by literal index, counted from the start (`items[-1]` of two is `items[1]`)
    "dict_held_alias": ("violated", "scheduler.py:14", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "dict_held_alias_changed": ("unknown", "scheduler.py:15", "worker.py:11", "`held[\"r\"]` may be another value than one given it "
                                "(`self.refresh(held)` at line 13 may change what held holds)"),
    "list_held": ("violated", "scheduler.py:13", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "list_held_guarded": ("present", None, None, ""),
    # ... and an attribute the consumer's method assigns the result to and reads through
    # (`self.last = result` ... `self.last.draft.lens`); a call in between may assign it again
    "self_attr_read": ("violated", "scheduler.py:13", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "self_attr_read_call_between": ("unknown", "scheduler.py:14", "worker.py:11", "`self.last` may be another value than it "
                                    "was given at line 12 (`self.log_step(...)` at line 13 may assign it)"),
    # a loop over `filter(None, [result.draft])` runs its body for a true draft only; over a filter
    # with a predicate not followed, what it lets through is not decided
    "filter_none_read": ("present", None, None, ""),
    "filter_predicate": ("unknown", "scheduler.py:13", "worker.py:11", "`filter(self.keep, [result.draft])` gives d only "
                         "the items `self.keep` is true of, which is not followed"),
    # ... and in the worker: the item returned is the display's, a write or method call through it is
    # on that object
    "list_result": ("violated", DEFAULT, "worker.py:8", "worker.py:7 `Result(tokens=[2])` leaves Result.draft at its default None"),
    "dict_result": ("violated", DEFAULT, "worker.py:9", "worker.py:7 `Result(tokens=[2])` leaves Result.draft at its default None"),
    "list_item_write": ("violated", DEFAULT, "worker.py:9", "worker.py:8 `outs[0].draft = None` sets it to None"),
    "dict_item_method": ("unknown", DEFAULT, "worker.py:9", "`outs[\"r\"].reset(...)` at dict_item_method/worker.py:8 "
                         "is handed outs[\"r\"] and resolves to no function of the tree"),
    # an `assert` and an early exit (`if draft is None: raise`, `continue` in a loop) on the way to
    # the return rule out the ways they fail, for a local and for a field of one; not for a
    # statement inside the exit's own body, a value bound or written again after the test (or passed
    # to a call), an assert under its own `if`, or one inside a try whose handler goes on
    "assert_narrows": ("present", None, None, ""),
    "exit_narrows": ("present", None, None, ""),
    "assert_narrows_field": ("present", None, None, ""),
    "exit_in_loop_narrows": ("present", None, None, ""),
    "exit_body_not_narrowed": ("violated", DEFAULT, "worker.py:9", "`Result(tokens=[1], draft=draft)` leaves it None"),
    "assert_then_rebound": ("violated", DEFAULT, "worker.py:10", "`Result(tokens=[1], draft=draft)` leaves it None"),
    "assert_in_branch": ("violated", DEFAULT, "worker.py:10", "`Result(tokens=[1], draft=draft)` leaves it None"),
    "assert_in_try": ("violated", DEFAULT, "worker.py:12", "`Result(tokens=[1], draft=draft)` leaves it None"),
    "assert_field_then_write": ("violated", DEFAULT, "worker.py:11", "worker.py:10 `result.draft = None` sets it to None"),
    "assert_field_then_call": ("violated", DEFAULT, "worker.py:10", "worker.py:14 `result.draft = None` sets it to None"),
    # ... and a `match` whose `case None:` (or `case None | ...:`) exits, no case before it taking
    # None on without exiting (a guarded capture does): the code after it runs with the subject set,
    # in the scheduler as in the worker; a `case None:` that goes on narrows nothing
    "match_none_exit": ("present", None, None, ""),
    "match_none_or_exit": ("present", None, None, ""),
    "match_none_raises": ("present", None, None, ""),
    "match_none_stays": ("violated", "scheduler.py:15", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "match_none_after_capture": ("violated", "scheduler.py:17", "worker.py:11", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "match_none_worker_stays": ("violated", DEFAULT, "worker.py:11", "`Result(tokens=[1], draft=draft)` leaves it None"),
    # a `return` in `finally` is a return path of its own
    "try_finally": ("violated", DEFAULT, "worker.py:11", "worker.py:11 `Result(tokens=[])` leaves Result.draft at its default None"),
    # ... and one that always runs cancels the body's returns
    "try_finally_cancels": ("present", None, None, ""),
    # the field's value is a call's result, followed to its every return
    "optional_helper": ("violated", DEFAULT, "worker.py:9", "leaves it None"),
    # ... also where it is written on the result (`result.draft = self.make_draft(batch)`) and the
    # scheduler dereferences it only after keeping it elsewhere
    "write_helper": ("violated", "scheduler.py:13", "worker.py:11", "worker.py:10 `result.draft = self.make_draft(batch)` leaves it None"),
    # `with contextlib.suppress(E):` is a try whose handler passes: its write does not dominate the return
    "with_suppress": ("violated", DEFAULT, "worker.py:13", "worker.py:10 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # ... as is a `with` of a class of the tree whose `__exit__` may return true, or of a
    # `@contextmanager` of the tree that catches at its `yield`; an `__exit__` returning nothing lets it go up
    "with_exit_true": ("violated", DEFAULT, "worker.py:19", "worker.py:16 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "with_contextmanager": ("violated", DEFAULT, "worker.py:24", "worker.py:21 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "with_exit_none": ("present", None, None, ""),
    # a class of the tree taking `__exit__` from outside it: contextlib's are decided
    # (ContextDecorator lets go, a subclass of suppress swallows), any other is not
    "with_exit_outside": ("unknown", DEFAULT, "worker.py:17", "`with Guarded(...)`: its __exit__ comes from "
                          "outside_lib.Tolerant, outside the tree, which may swallow what the body raises"),
    "with_exit_contextlib": ("violated", DEFAULT, "worker.py:23", "worker.py:20 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "partial_helper": ("violated", DEFAULT, "worker.py:16", "leaves it None"),
    # ... a partial of a partial, and a partial kept on `self` by __init__ and called by the step
    "partial_of_partial": ("violated", DEFAULT, "worker.py:17", "`Result(tokens=[1], draft=make(batch))` leaves it None"),
    "partial_on_self": ("violated", DEFAULT, "worker.py:18", "`Result(tokens=[1], draft=self.make(batch))` leaves it None"),
    # `next(g(...))` is a value the generator g yields
    "generator_next": ("violated", DEFAULT, "worker.py:7", "worker.py:11 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "generator_field": ("violated", DEFAULT, "worker.py:9", "worker.py:8 `result.draft = next(self.drafts(batch))` leaves it None"),
    # a local chosen between methods (`getattr(self, "m", None) or self.other`): each may run
    "getattr_dispatch": ("violated", DEFAULT, "worker.py:9", "worker.py:15 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # ... and a lambda kept on `self` by __init__, called by the step
    "lambda_on_self": ("violated", DEFAULT, "worker.py:11", "`Result(tokens=[1], draft=self.make(batch))` leaves it None when b.idle"),
    "lambda_idle": ("violated", DEFAULT, "worker.py:8", "leaves it None when not (not b.idle)"),
    # the result's `__post_init__` runs after the constructor: a write there under its condition
    "post_init_clears": ("violated", "scheduler.py:13", "worker.py:8", "results.py:18 `self.draft = None` sets it to None"),
    "post_init_flag": ("present", None, None, ""),
    # `dataclasses.replace(obj, f=v)` is obj's fields with the keywords written over them
    "replace_field": ("violated", DEFAULT, "worker.py:11", "worker.py:11 `dataclasses.replace(out, draft=None)` sets it to None"),
    "replace_flag": ("present", None, None, ""),
    # `typing.cast(T, x)` is x
    "cast_result": ("violated", DEFAULT, "worker.py:9", "worker.py:13 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `cls(...)` in a classmethod of the result builds the result
    "owner_classmethod": ("violated", "scheduler.py:29", "worker.py:8", "scheduler.py:20 `cls(tokens=[])` leaves Result.draft at its default None"),
    # `super(Cls, self).m()` in a function nested in the method: the next class of the receiver's MRO
    "super_explicit": ("violated", DEFAULT, "worker.py:18", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a decorator of the tree that returns a function it defines: that wrapper runs, reaching the
    # step through the decorator's parameter; one returning anything else is not followed
    "decorator_shortcut": ("violated", DEFAULT, "worker.py:9", "worker.py:9 `Result(tokens=[])` leaves Result.draft at its default None"),
    "decorator_passthrough": ("present", None, None, ""),
    "decorator_opaque": ("unknown", DEFAULT, "worker.py:20", "DraftWorker.forward is decorated by @registered, which returns `REGISTRY.wrap(fn)`"),
    # dispatch on the receiver's class: the subclass's override of self.prefill() runs
    "override": ("violated", DEFAULT, "worker.py:7", "worker.py:15 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "mixin_super": ("violated", DEFAULT, "worker.py:13", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "match_mode": ("violated", DEFAULT, "worker.py:11", "worker.py:11 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a write in one case's body does not reach the code after the `match`
    "match_write": ("violated", DEFAULT, "worker.py:13", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `await f(...)` of an `async def` of the tree is what f returns; of a plain function, what
    # awaiting its value gives is not followed
    "await_helper": ("violated", DEFAULT, "worker.py:9", "worker.py:9 `Result(tokens=[1], draft=await self.make_draft(batch))` leaves it None"),
    "await_not_coroutine": ("unknown", DEFAULT, "worker.py:8", "`await self.make_draft(batch)` awaits "
                            "await_not_coroutine.worker.DraftWorker.make_draft, no coroutine function"),
    # `d.get(k, default)` of a mapping: the default where the key is missing (a value here); an
    # item it holds is not known
    "dict_get_default": ("unknown", DEFAULT, "worker.py:10", "an item of `self.drafts` (`self.drafts.get(batch.rid, Draft(lens=[]))`)"),
    # `self.a = helper(...)` then `Result(draft=self.a)` in the same function: the helper's value;
    # a call in between may write the attribute again: not followed
    "self_attr_kept": ("violated", DEFAULT, "worker.py:10", "worker.py:10 `Result(tokens=[1], draft=self.last_draft)` leaves it None"),
    "self_attr_call_between": ("unknown", DEFAULT, "worker.py:10", "`self.last_draft` not followed"),
    "walrus": ("violated", DEFAULT, "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `(draft := helper()) is not None` binds the helper's result and narrows it under the test
    "walrus_helper": ("violated", DEFAULT, "worker.py:12", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # setattr/getattr with literal names are writes and reads of those fields
    "setattr_literal": ("violated", DEFAULT, "worker.py:11", "worker.py:10 `setattr(result, name, None)` sets it to None"),
    # ... as are `object.__setattr__`, `delattr` and a write through the result's `__dict__`
    "object_setattr": ("violated", DEFAULT, "worker.py:10", "worker.py:9 `object.__setattr__(result, \"draft\", None)` sets it to None"),
    "delattr_literal": ("violated", DEFAULT, "worker.py:10", "worker.py:9 `delattr(result, \"draft\")` sets it to None"),
    "dict_write": ("violated", DEFAULT, "worker.py:10", "worker.py:9 `result.__dict__[\"draft\"] = None` sets it to None"),
    "getattr_literal": ("violated", "scheduler.py:26", "worker.py:8", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # the result's own method that the scheduler calls reads the field (roles: owner_methods)
    "owner_method": ("violated", "scheduler.py:20", "worker.py:8", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # ... and in the owner's methods that method calls on `self`, under the calls' conditions and
    # the early exits before them (`if self.draft is None or ...: return`)
    "owner_method_nested": ("violated", "scheduler.py:23", "worker.py:8", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "owner_method_nested_checked": ("present", None, None, ""),
    # a nested function that rebinds the step's local (`nonlocal`) is a binding where it is called;
    # one passed on may run anywhere: not decided
    "nonlocal_build": ("violated", DEFAULT, "worker.py:16", "worker.py:16 `Result(tokens=[1], draft=draft)` leaves it None when not (not batch.idle)"),
    "nonlocal_passed": ("unknown", DEFAULT, "worker.py:14", "draft is rebound by a function nested in DraftWorker.forward (nonlocal)"),
    # `del result.draft` leaves the field at its dataclass default
    "del_field": ("violated", DEFAULT, "worker.py:10", "worker.py:9 `del result.draft` sets it to None"),
    # `result.draft_input = None` through the result's property setter writing `self.draft = value`
    "property_setter": ("violated", "scheduler.py:33", "worker.py:10", "worker.py:9 `result.draft_input = None` sets it to None"),
    # a field of the NamedTuple a helper returns: the argument given for it at each return
    "named_tuple_helper": ("violated", DEFAULT, "worker.py:14", "worker.py:18 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # item 0 of a helper's returned tuple
    "tuple_helper": ("violated", DEFAULT, "worker.py:8", "worker.py:12 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `for part in (result.draft, result.tokens): part.copy()` dereferences each
    "loop_alias": ("violated", "scheduler.py:13", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a field subscripted (or iterated, or an operand of arithmetic) is used as a dereference is
    "operand_use": ("violated", "scheduler.py:21", "worker.py:8", "worker.py:8 `Result(tokens=[1], steps=0)` leaves Result.accepted at its default None"),
    # a property of the result that returns a field is a read of that field
    "property_field": ("violated", "scheduler.py:29", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `v = result.draft if c else other` binds v to the field where c holds
    "ternary_alias": ("violated", "scheduler.py:13", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `a and b` is `a` where a is false (no result there); `a or b` is b where a is not true
    "short_circuit_and": ("violated", DEFAULT, "worker.py:9", "leaves it None when not (batch.ready)"),
    "short_circuit_or": ("present", None, None, ""),
    # a parameter the scheduler's call leaves at its default decides the worker's condition on it
    "param_default": ("present", None, None, ""),
    "param_passed": ("violated", "scheduler.py:20", "worker.py:8", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `self.draft.lens = []` dereferences the draft
    "owner_method_write_below": ("violated", "scheduler.py:20", "worker.py:8", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `**kwargs` of a local dict whose keys are all written as literals: the others keep their
    # defaults; a computed key leaves every parameter free
    "param_spread": ("present", None, None, ""),
    "param_spread_computed": ("violated", "scheduler.py:20", "worker.py:8", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # the worker's fast path, which leaves the draft unset, is built only under `fast`: the read
    # under `not self.fast` never meets it
    "constructed_under": ("present", None, None, ""),
    # a field the scheduler sets on one branch only before calling the result's method is still
    # the workers' to set on the other; set on every way there, it is not
    "scheduler_write_one_path": ("violated", "scheduler.py:20", "worker.py:8", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "scheduler_write_dominates": ("present", None, None, ""),
    # the call runs under a property of the result that is true only with the draft set
    "owner_method_property_test": ("present", None, None, ""),
    # the method's parameter is the call's argument in its conditions (`with_draft=self.spec.is_some()`)
    "owner_method_argument": ("present", None, None, ""),
    # `if self.draft.lens is not None: ... self.draft.lens`: only the draft must be set
    "owner_method_checked_sub": ("present", None, None, ""),
    # the call runs under `result.delay is None`: a worker path that sets `delay` never reaches it
    "owner_method_field_test": ("present", None, None, ""),
    # an attribute the consumer assigns once from a boolean expression is that expression; one it
    # assigns again is free
    "attribute_definition": ("present", None, None, ""),
    "attribute_reassigned": ("violated", "scheduler.py:37", "worker.py:7", "worker.py:7 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # the result (or an attribute of it) handed to a call that reaches no function of the tree
    # may have any attribute below it set or cleared: not decided; calls that write no attribute
    # (a logger, isinstance) and a local nothing is read below do not count
    "opaque_argument": ("unknown", DEFAULT, "worker.py:13", "`self.hook.adjust(...)` at opaque_argument/worker.py:12 "
                        "is handed result and resolves to no function of the tree"),
    "opaque_below": ("unknown", DEFAULT, "worker.py:10", "`self.pool.release(...)` at opaque_below/worker.py:9 "
                     "is handed result.draft and resolves to no function of the tree"),
    "opaque_harmless": ("present", None, None, ""),
    # ... also where a helper the result is handed to hands it to such a call
    "opaque_in_helper": ("unknown", DEFAULT, "worker.py:10", "`self.hook.adjust(...)` at opaque_in_helper/worker.py:14 "
                         "is handed result and resolves to no function of the tree"),
    # a helper handed an attribute chain of the result writes below it; the result's own method
    # called by the worker writes on it
    "helper_writes_below": ("violated", DEFAULT, "worker.py:10", "worker.py:14 `draft.lens = None` sets it to None"),
    "owner_method_clears": ("violated", "scheduler.py:28", "worker.py:10", "scheduler.py:19 `self.draft = None` sets it to None"),
    # a name the worker computes: which field it writes is not known, so nothing passes silently
    "setattr_computed": ("unknown", DEFAULT, "worker.py:10", "`setattr(result, name, None)` at setattr_computed/worker.py:9 "
                         "writes an attribute whose name is computed"),
    # predicates of an enum (roles: mode_enums) are sets of its members: `is_decode()` excludes
    # `is_idle()`, `is_mixed()` implies `is_extend()`; `is_decode_or_idle()` overlaps `is_idle()`
    "mode_exclusive": ("present", None, None, ""),
    "mode_within": ("present", None, None, ""),
    "mode_overlap": ("violated", "scheduler.py:26", "worker.py:8", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # ... also tested through a local bound once from the mode (`mode = batch.forward_mode`); one
    # bound again on some path is not the batch's mode
    "mode_alias": ("present", None, None, ""),
    "mode_alias_rebound": ("violated", "scheduler.py:30", "worker.py:8", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `is_some()` returns `not self.is_none()`: the plain worker's selection excludes the read
    "complement": ("present", None, None, ""),
    # a local bound from the field and written through, bound by `getattr(..., None)`, or by `or`
    # with a fallback that may be None too, dereferences the field; a fallback that is a value does not
    "alias_write": ("violated", "scheduler.py:13", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "getattr_alias": ("violated", "scheduler.py:13", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "or_alias": ("violated", "scheduler.py:13", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "or_default": ("present", None, None, ""),
    # `vars(result).get("draft")` is getattr with a default; `operator.attrgetter("draft.lens")(result)`
    # reads result.draft.lens
    "vars_get": ("violated", "scheduler.py:13", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "attrgetter_read": ("violated", "scheduler.py:14", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # the field passed to a method of the consumer that dereferences its parameter is dereferenced
    # at the call; one that tests it first is not
    "passed_deref": ("violated", "scheduler.py:12", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "passed_checked": ("present", None, None, ""),
    # the result handed on by the method it is passed to, to a mixin's method using the draft in
    # arithmetic: a read of the draft there, under the calls' conditions (`if not batch.idle:` rules
    # the idle worker path out); a receiver that only hands it on counts where the catalog says so
    "passed_on": ("violated", "counters.py:7", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "passed_on_guarded": ("present", None, None, ""),
    # ... and to an object the scheduler holds in an attribute (its output processor), whose method
    # hands it to another of its methods
    "composed_processor": ("violated", "processor.py:20", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # the owner's method bound by functools.partial in a helper the result is handed to, called
    # later or handed to a call that runs it (`pool.submit(copy)`): a context of its reads; a
    # helper that sets the field before it calls the method rules the worker's idle path out
    "owner_method_partial": ("violated", "results.py:20", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "owner_method_partial_submit": ("violated", "results.py:20", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "helper_sets_before": ("present", None, None, ""),
    "hand_on": ("violated", "counters.py:7", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a method the result is handed to sets the field itself before its read: no worker's
    # obligation there; a write after the read is none
    "reader_sets_before": ("present", None, None, ""),
    "reader_sets_after": ("violated", "scheduler.py:15", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a loop gets the result from run_batch, a relay: the relay's calls of the worker decide its
    # parameters (`verify` left False; one call passing it on leaves it free), and a field the relay
    # sets on its overlapped way is set where the loop runs only with overlap (the dispatcher)
    "relay_worker_call": ("present", None, None, ""),
    "relay_worker_call_passed": ("violated", "scheduler.py:21", "worker.py:8", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "relay_sets_field": ("present", None, None, ""),
    "relay_sets_field_unentered": ("violated", "scheduler.py:25", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # the dispatcher's `disagg == Disagg.NULL` and the read's `self.disagg == Disagg.PREFILL` test one
    # value against two members of an enum of the tree: never both; an alias (one value) can be
    "enum_exclusive": ("present", None, None, ""),
    "enum_alias": ("violated", "scheduler.py:29", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a loop entered only under the dispatcher's `else` of `if scheduler.staged:`: the worker's stage
    # return (under `self.staged`) never reaches its read; with no `else`, or with the loop also
    # taken as a value, nothing is assumed of its entry
    "entry_condition": ("present", None, None, ""),
    "entry_unguarded": ("violated", "loops.py:23", "worker.py:12", "worker.py:12 `Result(tokens=[])` leaves Result.draft at its default None"),
    "entry_referenced": ("violated", "loops.py:23", "worker.py:12", "worker.py:12 `Result(tokens=[])` leaves Result.draft at its default None"),
    # `all(v is not None for v in (result.draft, ...))` says the draft is set; `any(...)` does not
    "all_guard": ("present", None, None, ""),
    "any_guard": ("violated", "scheduler.py:13", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `info = result.draft; if info.lens is not None`: only the draft must be set
    "alias": ("present", None, None, ""),
    # a loop in a mixin gets the worker's result from run_batch (`ret = out; return ret`) and as
    # item 0 of its own helper's tuple (`result, _ = self.launch(batch)`)
    "relay_loop": ("violated", "scheduler.py:26", "worker.py:8", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `if result.accepted is not None:` before the read: a worker path that leaves `accepted` None never reaches it
    "relay_field_test": ("present", None, None, ""),
    # `ret = Embedding(...); ret.copy_to_cpu()` after `ret = out` on the other branch: that copy
    # runs on the embedding, not on the worker's result
    "relay_rebound": ("present", None, None, ""),
    # what the step name is bound to in the class, as Python binds it: an alias in the class body
    # of another method (or of a base's step), a `def` under an `if` of the class body (it may or
    # may not run), `self.forward = self.m` in __init__; an alias to a value not followed is not decided
    "method_alias": ("violated", DEFAULT, "worker.py:14", "worker.py:14 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "method_alias_base": ("present", None, None, ""),
    "method_alias_opaque": ("unknown", DEFAULT, "worker.py:15", "`forward = make_step()` in the body of DraftWorker binds it to a value not followed"),
    "method_conditional": ("violated", DEFAULT, "worker.py:18", "worker.py:18 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "method_rebound": ("violated", DEFAULT, "worker.py:14", "worker.py:14 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a local bound in every arm of an if/elif/else or match before the return (an arm that
    # raises needs none) holds each arm's value; a match no case of which is sure to match may
    # leave it unbound: not decided
    "bound_in_arms": ("present", None, None, ""),
    "bound_in_cases": ("violated", DEFAULT, "worker.py:12", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "bound_in_cases_partial": ("unknown", DEFAULT, "worker.py:12", "out not bound before the return"),
    # `Result(**fields)` of a local dict display: a field no key of it names keeps its default, one
    # it names has the value the display gives; a dict from elsewhere may give any field: not decided
    "spread_missing": ("violated", DEFAULT, "worker.py:9", "worker.py:9 `Result(**fields)` leaves Result.draft at its default None"),
    "spread_given": ("present", None, None, ""),
    "spread_given_none": ("violated", DEFAULT, "worker.py:10", "worker.py:10 `Result(**fields)` leaves it None"),
    "spread_opaque": ("unknown", DEFAULT, "worker.py:8", "`Result(**fields)` may set Result.draft through its ** arguments"),
    # ... and `Result(*args)` of a local tuple display nothing else uses: its items in their places;
    # one bound again (`args += ...`, which binds what `__iadd__` gives) is not followed
    "star_args": ("violated", DEFAULT, "worker.py:8", "worker.py:8 `Result(*args)` leaves Result.draft at its default None"),
    "star_args_set": ("present", None, None, ""),
    "star_args_extended": ("unknown", DEFAULT, "worker.py:9", "`Result(*args)` may set Result.draft through its * arguments"),
    "aug_rebound": ("unknown", DEFAULT, "worker.py:9", "returns out + batch.extra"),
    # `getattr(self, "a", None)` right after `self.a = v` is v (see also test_a_builtins_default_may_be_none)
    "getattr_written": ("present", None, None, ""),
    # `self.a = v; return self.a` with nothing in between returns v
    "self_attr_returned": ("violated", DEFAULT, "worker.py:12", "worker.py:8 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a write through the draft under `contextlib.suppress(AttributeError)` or in a try whose
    # handler catches AttributeError does not crash on None; catching TypeError or suppressing
    # another error does
    "suppress_write": ("present", None, None, ""),
    "except_write": ("present", None, None, ""),
    "except_type_error": ("violated", "scheduler.py:13", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    "suppress_other": ("violated", "scheduler.py:15", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a test through a predicate method of the consumer (one `return <expr>` of its parameters) is
    # that expression: of the draft, a guard; of another field, none
    "predicate_guard": ("present", None, None, ""),
    "predicate_other": ("violated", "scheduler.py:13", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a function nested in the consumer's method that dereferences its parameter, called with the draft
    "nested_deref": ("violated", "scheduler.py:16", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a handler of AttributeError that raises again (or raises another error) lets the crash go on
    "except_reraise": ("violated", "scheduler.py:17", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `setattr(result.draft, "lens", v)` reaches into the draft as `result.draft.lens = v` does
    "setattr_deref": ("violated", "scheduler.py:12", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # `draft = typing.cast(Draft, result.draft)` binds the field itself
    "cast_alias": ("violated", "scheduler.py:15", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a local bound from the field, written through under a None or isinstance test of it
    "alias_checked_write": ("present", None, None, ""),
    "isinstance_alias": ("present", None, None, ""),
    # the field passed to a lambda of the consumer's method that dereferences its parameter
    "lambda_deref": ("violated", "scheduler.py:13", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # a function nested in the consumer's method reading the result it closes over, called there
    "closure_read": ("violated", "scheduler.py:15", "worker.py:9", "worker.py:9 `Result(tokens=[1])` leaves Result.draft at its default None"),
    # the result's __dict__ changed by method: `update` writes each key it names, `pop("f")` leaves
    # f at its default; a mapping from elsewhere may write any attribute: not decided
    "dict_update": ("violated", DEFAULT, "worker.py:10", "worker.py:9 `vars(result).update(draft=None)` sets it to None"),
    "dict_update_other": ("present", None, None, ""),
    "dict_update_computed": ("unknown", DEFAULT, "worker.py:9", "`vars(result).update(batch.changes)` at "
                             "dict_update_computed/worker.py:8 writes an attribute whose name is computed"),
    "dict_pop": ("violated", DEFAULT, "worker.py:10", "worker.py:9 `result.__dict__.pop(\"draft\", None)` sets it to None"),
    # `copy.copy(x)` / `copy.deepcopy(x)` has x's attributes where it is made; writes after it are
    # on one object only
    "copy_cleared": ("violated", DEFAULT, "worker.py:13", "worker.py:12 `result.draft = None` sets it to None"),
    "copy_kept": ("present", None, None, ""),
    # a write in `finally` runs after the `return` took its value, on the object returned
    "finally_clears": ("violated", DEFAULT, "worker.py:9", "worker.py:12 `result.draft = None` sets it to None"),
    # more ways than are followed one by one: those past the cap are one way not followed
    "forks_capped": ("unknown", DEFAULT, "worker.py:8", "more than 64 ways forks_capped/worker.py:8 "
                     "`Result(tokens=[1], draft=self.make(batch))` sets Result.draft"),
}


def check(name: str, strict: bool = True):
    program = PROGRAMS / name
    return check_catalog(package_source(program), program / "catalog.toml", strict=strict)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_program_verdict_and_site(name):
    status, read, breaking, why = EXPECTED[name]
    report = check(name)
    (result,) = report.results
    assert result.status == status, result.message
    assert report.exit_code == (0 if status == "present" else 1)  # strict: an unknown fails too
    if breaking is None:
        assert not report.violations and not report.unknowns
        return
    found = report.unknowns if status == "unknown" else report.violations
    assert not (report.violations if status == "unknown" else report.unknowns)
    sites = {(f"{v.read.file}:{v.read.line}", f"{v.producer.file}:{v.producer.line}") for v in found}
    assert sites == {(f"{name}/{read}", f"{name}/{breaking}")}
    assert all(why in v.producer.left_none or why in v.message for v in found)


def test_dict_get_without_default_may_be_none():
    """`d.get(k)`: None where the key is missing (a violation under that condition), an unknown
    for the item it holds where it is there."""
    report = check("dict_get")
    assert [r.status for r in report.results] == ["violated"]
    site = ("dict_get/scheduler.py:25", "dict_get/worker.py:10")
    (v,) = report.violations
    assert (f"{v.read.file}:{v.read.line}", f"{v.producer.file}:{v.producer.line}") == site
    assert v.producer.left_none.endswith("`Result(tokens=[1], draft=self.drafts.get(batch.rid))` leaves it None "
                                         "when not (batch.rid in self.drafts)")
    (u,) = report.unknowns
    assert (f"{u.read.file}:{u.read.line}", f"{u.producer.file}:{u.producer.line}") == site
    assert "when batch.rid in self.drafts is unknown: an item of `self.drafts`" in u.message


@pytest.mark.parametrize("name, given, when, item", [
    ("getattr_default", 'getattr(self, "cached", None)', ' when not (hasattr(self, "cached"))', "returns self.cached"),
    ("next_default", "next(batch.pending, None)", "", "an item of `batch.pending`"),
    ("min_default", "min(batch.drafts, default=None)", "", "an item of `batch.drafts`"),
])
def test_a_builtins_default_may_be_none(name, given, when, item):
    """`getattr(obj, "a", None)`, `next(it, None)` and `min(xs, default=None)` give their default
    where there is nothing to give (a violation under that condition); what they find otherwise
    is not followed (an unknown)."""
    report = check(name)
    assert [r.status for r in report.results] == ["violated"]
    site = (f"{name}/scheduler.py:25", f"{name}/worker.py:7")
    (v,) = report.violations
    assert (f"{v.read.file}:{v.read.line}", f"{v.producer.file}:{v.producer.line}") == site
    assert v.producer.left_none.endswith(f"`Result(tokens=[1], draft={given})` leaves it None{when}")
    (u,) = report.unknowns
    assert (f"{u.read.file}:{u.read.line}", f"{u.producer.file}:{u.producer.line}") == site
    assert item in u.message


def test_entry_condition_is_the_dispatchers_branch():
    """The condition a loop is entered under is read from its calls; a use that is no call leaves it unknown."""
    from spectrace.contracts.entries import entry_condition, name_uses
    from spectrace.contracts.extract import extract
    from spectrace.contracts.roles import load_roles

    def symbols_of(name):
        return extract(package_source(PROGRAMS / name), load_roles(PROGRAMS / name / "catalog.toml"))._analysis.symbols

    symbols = symbols_of("entry_condition")
    uses = name_uses(symbols, {"event_loop_normal", "event_loop_staged", "process_result"})
    assert entry_condition(symbols, "event_loop_normal", uses).render() == "(not (scheduler.staged))"
    assert entry_condition(symbols, "event_loop_staged", uses).render() == "(scheduler.staged)"
    assert entry_condition(symbols, "process_result", uses).render() == "(True)"
    symbols = symbols_of("entry_referenced")
    uses = name_uses(symbols, {"event_loop_normal"})
    assert uses["event_loop_normal"].other
    assert entry_condition(symbols, "event_loop_normal", uses) is None


def test_every_program_has_an_expectation():
    programs = {p.name for p in PROGRAMS.iterdir() if (p / "catalog.toml").is_file()}
    assert programs == set(EXPECTED) | {"dict_get", "getattr_default", "next_default", "min_default"}


def test_roles_come_from_the_catalog_not_from_code():
    report = check("override")
    x = report.extraction
    assert x.owner == "Result" and list(x.polymorphic) == ["worker"]
    assert x.polymorphic["worker"].targets == ["override.worker.DraftWorker"]
    assert x.polymorphic["worker"].methods == ["forward"]


SCHEMAS = Path(__file__).parent.parent / "docs" / "schemas"


def _validate(data: dict, name: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / f"contracts-{name}.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(json.loads(json.dumps(data)))


@pytest.mark.parametrize("name", ["try_except", "complement", "lambda_idle"])
def test_json_outputs_follow_their_schemas(name):
    report = check(name)
    _validate(report.to_json(), "check")
    _validate(report.extraction.to_json(), "extract")
    _validate(diff_extractions(check("alias").extraction, report.extraction).to_json(), "diff")


def test_json_names_the_tree_portably_and_leaves_cache_counters_out():
    report = check("try_except")
    data, x = report.to_json(), report.extraction.to_json()
    assert data["schema_version"] == x["schema_version"] == 1
    # a tree given by path: relative to the working directory, never absolute
    assert data["root"] == x["root"] == os.path.relpath(PROGRAMS)
    assert str(PROGRAMS) not in data["source"] and str(PROGRAMS) not in x["source"]
    assert set(x["stats"]) == {"files"}
    assert {"functions_parsed", "functions_reused"} <= set(report.extraction.to_json(cache_stats=True)["stats"])


def test_diff_of_two_trees_of_one_version_names_the_trees():
    a, b = check("alias").extraction, check("try_except").extraction
    d = diff_extractions(a, b)
    assert (d.a, d.b) == ("unknown", "unknown")
    head = drift_table(d).splitlines()[0]
    assert head.startswith(f"{a.portable_source} -> {b.portable_source}: Result fields")
    assert "alias" in a.portable_source and "try_except" in b.portable_source


@pytest.mark.parametrize("command", ["check", "extract", "diff"])
def test_a_catalog_path_that_does_not_exist_is_one_line(tmp_path, command):
    from click.testing import CliRunner

    from spectrace.cli import main

    missing = tmp_path / "nonexistent"
    args = ["contracts", command, "--catalog", str(missing)] + (["0.5.9", "0.5.12"] if command == "diff" else ["--sglang", "0.5.9"])
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines == [f"spectrace: no contract catalog at {missing}: no such file or directory"]


def test_a_repeated_check_reads_the_cached_report_and_an_edit_invalidates_it(tmp_path, monkeypatch):
    import shutil

    from spectrace.contracts import check as check_module

    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    program = shutil.copytree(PROGRAMS / "walrus", tmp_path / "walrus")
    analysed = []
    real = check_module._check_catalog
    monkeypatch.setattr(check_module, "_check_catalog", lambda *a: analysed.append(1) or real(*a))

    def status():
        return check_catalog(package_source(program), program / "catalog.toml").results[0].status

    assert status() == "violated" and len(analysed) == 1
    assert status() == "violated" and len(analysed) == 1  # read back, not analysed
    worker = program / "worker.py"
    worker.write_text(worker.read_text().replace("return Result(tokens=[1])\n", "return Result(tokens=[1], draft=Draft(lens=[]))\n"))
    assert status() == "present" and len(analysed) == 2
    assert check_catalog(package_source(program), program / "catalog.toml", use_cache=False).results[0].status == "present"
    assert len(analysed) == 3


def test_an_exclusion_takes_its_consumers_reads_out_and_says_so(tmp_path):
    """A catalog's ``[[assumption]]`` with ``excludes``: the consumers' reads are no obligation of
    the workers (on the releases it names; none named: everywhere), and the notes list them."""
    import shutil

    program = shutil.copytree(PROGRAMS / "relay_loop", tmp_path / "relay_loop", symlinks=True)
    roles, contract = (program / "catalog.toml").read_text().split("[[contract]]")
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "roles.toml").write_text(roles)
    (catalog / "loop.toml").write_text("[[contract]]" + contract)
    (catalog / "assumptions.toml").write_text(
        '[[assumption]]\nid = "LOOP-OUT"\nexcludes = ["LoopMixin.*"]\nrationale = "no worker of these contracts runs the loop"\n')
    report = check_catalog(package_source(program), catalog, strict=True, use_cache=False)
    assert [r.status for r in report.results] == ["present"] and not report.violations and not report.unknowns
    (note,) = [n for n in report.extraction.notes if "LOOP-OUT" in n]
    assert note.endswith("relay_loop/scheduler.py:26")
    # without the exclusion the same read is violated (relay_loop's expectation)
    (catalog / "assumptions.toml").write_text("")
    assert check_catalog(package_source(program), catalog, use_cache=False).results[0].status == "violated"
