"""The checks themselves: ``Shims`` wraps ``Scheduler.run_batch`` and the workers' producers once
their modules are imported, and checks each step's result against the active ``ContractPlan``s.

Host-side metadata only (presence, identity, shapes, Python types); the one value-level check
(``new_seq_lens == seq_lens + accept_lens``) is enqueued on the device at the producer's return
and read back only once the step's own ``copy_done`` event has completed. torch is imported
lazily, for that check only.
"""

from __future__ import annotations

import atexit
import re
import sys
import threading
import time
from dataclasses import replace
from typing import Callable

from spectrace.shims import pool_stats
from spectrace.shims.plans import DEFAULT_CATALOG, ContractPlan, load_runtime_catalog, plan_for
from spectrace.shims.post_import import when_imported, when_matching_imported
from spectrace.shims.report_writer import ReportWriter
from spectrace.shims.return_tracker import ReturnTracker
from spectrace.shims.sites import (function_node, function_site, relative_source_path,
                                   resolve_consumer, source_problem, statement_lines)
from spectrace.shims.violation import MODES, ContractViolation, format_violation
from spectrace.sides import SCHEDULER_MODULE, WORKER, side_of

SUMMARY_INTERVAL_S = 1.0
MAX_VIOLATION_EVENTS = 20  # per contract and process; the rest are counted


def is_worker_module(name: str) -> bool:
    """Where the producers (``forward_batch_generation``, a series' own) are defined."""
    return side_of(name) == WORKER


class StepContext:
    __slots__ = ("scheduler", "batch", "step", "in_producer", "conditions", "result", "mwb",
                 "checked", "entry_seq_lens", "entry_bs")

    def __init__(self, scheduler, batch, step):
        self.scheduler, self.batch, self.step = scheduler, batch, step
        self.in_producer = False
        self.conditions: dict = {}
        self.result = None
        self.mwb = None
        self.checked = False
        # the worker batch's seq_lens as the step began: workers rebind (not modify) it later
        # (EAGLE's draft extend sets batch.seq_lens = batch.seq_lens + num_draft_tokens)
        self.entry_seq_lens = None
        self.entry_bs = None


class Shims:
    def __init__(self, mode: str, report: str | None, catalog: str | None, value_sample: int = 16,
                 pool_stats: bool = False, checks: bool = True):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.mode = mode
        self.checks_enabled = checks
        self.report = ReportWriter(report)
        self.catalog_path = str(catalog) if catalog else str(DEFAULT_CATALOG)
        self.value_sample = max(0, int(value_sample))
        self.pool_stats = pool_stats
        self.plans: list[ContractPlan] = []
        self.producer_plans: list[ContractPlan] = []  # producer-sets: checked at their producer's return
        if checks:
            for c in load_runtime_catalog(catalog):
                plan = plan_for(c)
                if plan is not None:
                    (self.producer_plans if plan.check == "producer-sets" else self.plans).append(plan)
        self.producer_active: dict[str, ContractPlan] = {}  # id -> plan, once its producer was imported
        self.producer_inactive: dict[str, str] = {}  # id -> why its producer is imported but not checked
        self.active: list[ContractPlan] = []    # plans whose consumer statement is in the imported source
        self.inactive: list[ContractPlan] = []  # with the reason
        self.checks: dict[str, int] = {}
        self.violations: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        self.failures: dict[str, int] = {}  # the shims' own failures, by what failed
        self.warned: set[str] = set()
        self.step = 0
        self.rank: dict = {}
        self.sglang_version = None
        self.local = threading.local()
        self.returns = ReturnTracker(on_error=self.failure)
        self.pending_values: list = []
        self.value_counter = 0
        self.value_checks_read = 0
        self.last_summary = 0.0
        self.dirty = False
        self.wrapped: list[str] = []
        self.started = False
        self.closed = False

    def failure(self, what: str, exc: BaseException) -> None:
        """A shim's own failure: one ``[spectrace]`` line on stderr and an ``error`` event in the
        report the first time, counted in the summaries after that."""
        self.failures[what] = self.failures.get(what, 0) + 1
        self.dirty = True
        if self.failures[what] > 1:
            return
        print(f"[spectrace] {what} failed: {exc!r} (further failures of this kind are counted in "
              "the report)", file=sys.stderr, flush=True)
        self.report.write({"event": "error", "what": what, "error": repr(exc), "step": self.step,
                           "rank": self.rank})

    # ---------------------------------------------------------------- install
    def hook(self) -> None:
        when_imported(SCHEDULER_MODULE, self._reporting_failures(self._on_scheduler_module))
        when_matching_imported(is_worker_module, self._reporting_failures(self._on_worker_module))
        extra = {p.module for p in self.producer_plans if p.module}
        for name in sorted(extra):
            if not is_worker_module(name):
                when_imported(name, self._reporting_failures(self._on_worker_module))
        atexit.register(self.close)

    def _reporting_failures(self, callback: Callable) -> Callable:
        def run(module):
            try:
                callback(module)
            except Exception as exc:  # the module imports fine; only its checks are lost
                self.failure(f"hooking {module.__name__}", exc)

        return run

    def _on_scheduler_module(self, module) -> None:
        scheduler_cls = getattr(module, "Scheduler", None)
        if scheduler_cls is None:
            return
        self.sglang_version = _imported_sglang_version()
        if self.checks_enabled:
            self._resolve_sites(scheduler_cls)
            self._wrap(scheduler_cls, "run_batch", self._wrap_run_batch)
        if self.pool_stats:
            self._wrap(scheduler_cls, "get_internal_state", self._wrap_internal_state)

    def _on_worker_module(self, module) -> None:
        if not self.checks_enabled:
            return
        for plan in self.producer_plans:
            cls_name, meth = plan.producer.split(".")
            obj = vars(module).get(cls_name)
            if isinstance(obj, type) and obj.__module__ == module.__name__ and meth in obj.__dict__:
                self._activate_producer_plan(plan, obj, meth)
        producers = {p.producer for p in self.plans}
        for obj in list(vars(module).values()):
            if isinstance(obj, type) and obj.__module__ == module.__name__:
                for meth in producers:
                    if meth in obj.__dict__:
                        self._wrap(obj, meth, self._wrap_producer)

    def _wrap(self, cls: type, name: str, factory: Callable) -> None:
        current = cls.__dict__.get(name)
        if current is None or getattr(current, "__spectrace_wrapped__", None) is not None:
            return
        wrapper = factory(current, cls)
        wrapper.__spectrace_wrapped__ = current
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            value = getattr(current, attr, None)
            if value is not None:
                setattr(wrapper, attr, value)
        setattr(cls, name, wrapper)
        self.wrapped.append(f"{cls.__module__}.{cls.__qualname__}.{name}")

    def _activate_producer_plan(self, plan: ContractPlan, cls: type, meth: str) -> None:
        if plan.id in self.producer_active:
            return
        version = _base_version(self.sglang_version or _imported_sglang_version())
        listed = {_base_version(v) for p in self.plans + self.producer_plans for v in p.versions}
        if version in listed and plan.versions and version not in {_base_version(v) for v in plan.versions}:
            self.producer_inactive[plan.id] = f"catalog expects it on {', '.join(plan.versions)}, not on {version}"
            return
        func = cls.__dict__[meth]
        plan = replace(plan, fields=list(plan.fields_by_version.get(version, plan.fields)),
                       batch_sized=list(plan.batch_sized_by_version.get(version, plan.batch_sized)),
                       producer_site=function_site(func, plan.producer))
        self.producer_active[plan.id] = plan
        self.checks.setdefault(plan.id, 0)
        self.violations.setdefault(plan.id, 0)
        name = plan.producer
        self._wrap(cls, meth, lambda original, owner: self._wrap_named_producer(original, owner, name))

    def _resolve_sites(self, scheduler_cls: type) -> None:
        self.active, self.inactive = [], []
        imported = _base_version(self.sglang_version)
        listed = {_base_version(v) for p in self.plans for v in p.versions}
        # the catalog's `versions` choose among contracts whose statements look alike across
        # versions under different conditions; a version the catalog never names falls back to
        # "the statement is present in the imported source"
        by_version = imported is not None and imported in listed
        for plan in self.plans:
            plan = replace(plan)
            if by_version and plan.versions and imported not in {_base_version(v) for v in plan.versions}:
                plan.reason = f"catalog expects it on {', '.join(plan.versions)}, not on {self.sglang_version}"
                self.inactive.append(plan)
                continue
            found = resolve_consumer(plan.consumer, scheduler_cls)
            if found is None:
                plan.reason = f"consumer {plan.consumer} not found in the imported SGLang"
                self.inactive.append(plan)
                continue
            func, qualname = found
            node = function_node(func)
            lines = statement_lines(node[1], plan.shape, plan.attribute_path) if node else []
            if not lines:
                plan.reason = f"`{plan.shape}` not found in {qualname} of the imported SGLang"
                if node is None:
                    plan.reason += f" ({source_problem(func) or 'definition not found in its source file'})"
                self.inactive.append(plan)
                continue
            plan.consumer_site = {"file": relative_source_path(node[0]), "line": lines[0],
                                  "qualname": qualname, "shape": plan.shape}
            # `self` in the path condition: the scheduler, or the scheduler's component of the
            # consumer's class (FutureMap.store_to_map -> scheduler.future_map)
            owner_cls = qualname.split(".")[0]
            plan.self_attr = None if any(c.__name__ == owner_cls for c in scheduler_cls.__mro__) else owner_cls
            self.active.append(plan)
            self.checks.setdefault(plan.id, 0)
            self.violations.setdefault(plan.id, 0)

    # ---------------------------------------------------------------- report
    def _start(self, scheduler) -> None:
        self.started = True
        for attr in ("tp_rank", "pp_rank", "dp_rank", "attn_tp_rank", "moe_ep_rank"):
            val = getattr(scheduler, attr, None)
            if isinstance(val, int):
                self.rank[attr] = val
        gpu = getattr(scheduler, "gpu_id", None)
        if isinstance(gpu, int):
            self.rank["gpu_id"] = gpu
        self.report.write({
            "event": "start", "mode": self.mode, "sglang": self.sglang_version, "rank": self.rank,
            "catalog": self.catalog_path, "value_sample": self.value_sample,
            "return_sites": "exact (sys.monitoring)" if self.returns.tool is not None else "candidates",
            "wrapped": self.wrapped,
            "contracts": [{"id": p.id, "check": p.check, "at": p.at, "forward_mode": p.forward_mode,
                           "condition": p.condition, "consumer": p.consumer_site}
                          for p in self.active]
                         + [{"id": p.id, "check": p.check, "at": p.at, "forward_mode": p.forward_mode,
                             "condition": None, "producer": p.producer_site, "fields": p.fields}
                            for p in self.producer_active.values()],
            "inactive": [{"id": p.id, "reason": p.reason} for p in self.inactive]
                        + [{"id": p.id, "reason": self.producer_inactive.get(
                               p.id, f"producer {p.producer} not imported (a tree without it, "
                                     "such as a release the series that adds it was not applied to)")}
                           for p in self.producer_plans if p.id not in self.producer_active],
        })

    def summary(self, final: bool = False) -> None:
        self.last_summary = time.monotonic()
        self.dirty = False
        self.report.write({"event": "summary", "final": final, "steps": self.step, "rank": self.rank,
                           "mode": self.mode, "sglang": self.sglang_version,
                           "checks": dict(self.checks), "violations": dict(self.violations),
                           "skipped": dict(self.skipped), "errors": dict(self.failures),
                           "value_checks_read": self.value_checks_read})

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.started:
            self._poll_values(final=True)
            self.summary(final=True)
        self.report.close()

    def stop(self) -> None:
        """Close the report and stop checking (wrapped methods stay wrapped but pass through)."""
        self.close()
        self.active = []
        self.producer_active = {}
        self.returns.close()

    # ---------------------------------------------------------------- checking
    def _condition(self, ctx: StepContext, plan: ContractPlan, result) -> bool | None:
        """The plan's path condition and forward mode on this step; None when not evaluable."""
        key = plan.id
        if key in ctx.conditions:
            return ctx.conditions[key]
        ok: bool | None = True
        if plan.condition_code is not None:
            owner = ctx.scheduler if not plan.self_attr else _component(ctx.scheduler, plan.self_attr)
            names = {"self": owner, "batch": ctx.batch, "batch_result": result,
                     "result": result, "model_worker_batch": ctx.mwb}
            try:
                ok = bool(plan.condition_code.evaluate(names))
            except Exception as exc:  # the expression is the catalog's: any error is possible
                self.failure(f"path condition of {plan.id} ({plan.condition})", exc)
                ok = None
        if ok and plan.forward_mode != "any":
            fm = getattr(ctx.batch, "forward_mode", None)
            try:
                ok = bool(fm.is_decode() if plan.forward_mode == "decode" else fm.is_extend())
            except Exception as exc:  # a batch without an SGLang ForwardMode
                self.failure(f"forward mode of the batch for {plan.id}", exc)
                ok = None
        ctx.conditions[key] = ok
        return ok

    @staticmethod
    def _root(plan: ContractPlan, result):
        if (plan.owner or "").endswith("DraftInput"):
            return getattr(result, "next_draft_input", None)
        return result

    def _violate(self, plan: ContractPlan, ctx: StepContext, detail: str, producer_func=None,
                 producer_qualname: str | None = None, return_site: dict | None = None) -> None:
        cid = plan.id
        self.violations[cid] = self.violations.get(cid, 0) + 1
        count = self.violations[cid]
        producer = function_site(producer_func, producer_qualname) if producer_func is not None else {}
        if return_site:
            producer["return_site"] = return_site
        consumer = plan.consumer_site or {}
        if count <= MAX_VIOLATION_EVENTS:
            mode_name = getattr(getattr(ctx.batch, "forward_mode", None), "name", None)
            self.report.write({"event": "violation", "contract": cid, "detail": detail,
                               "step": ctx.step, "rank": self.rank, "forward_mode": mode_name,
                               "batch_size": _batch_size(ctx.batch), "consumer": consumer,
                               "producer": producer, "mode": self.mode, "nth": count})
            self.summary()
        if self.mode == "warn" and cid not in self.warned:
            self.warned.add(cid)
            print("[spectrace] WARNING " + format_violation(cid, detail, consumer, producer)
                  + " (further violations of this contract are counted in the report)",
                  file=sys.stderr, flush=True)
        if self.mode == "raise":
            raise ContractViolation(cid, detail, consumer, producer)

    def check_producer_return(self, ctx: StepContext, worker, func, result) -> None:
        ctx.result = result
        ret_site = None
        for plan in self.active:
            if plan.at != "producer-return":
                continue
            cond = self._condition(ctx, plan, result)
            if cond is None:
                self.skipped[plan.id] = self.skipped.get(plan.id, 0) + 1
                continue
            if not cond:
                continue
            self.checks[plan.id] += 1
            self.dirty = True
            problem = self._presence_problem(plan, result)
            if problem is None and plan.check == "seq-lens-relation":
                problem = self._seq_lens_shape_problem(plan, ctx, result)
                if problem is None:
                    self._maybe_enqueue_value_check(plan, ctx, result, func, type(worker))
            if problem is not None:
                if ret_site is None:
                    ret_site = self.returns.last_site()
                qual = f"{type(worker).__name__}.{plan.producer}"
                self._violate(plan, ctx, problem, func, qual, ret_site)

    def check_named_producer_return(self, name: str, func, batch, bs: int | None, result) -> None:
        """The return of a producer-sets contract's own producer (``Class.method``)."""
        ctx = getattr(self.local, "ctx", None) or StepContext(None, batch, self.step)
        for plan in self.producer_active.values():
            if plan.producer != name:
                continue
            self.checks[plan.id] += 1
            self.dirty = True
            problem = self._producer_sets_problem(plan, result, bs)
            if problem is not None:
                self._violate(plan, ctx, problem, func, name, self.returns.last_site())

    @staticmethod
    def _producer_sets_problem(plan: ContractPlan, result, bs: int | None) -> str | None:
        fields = plan.fields
        missing = [f for f in fields if getattr(result, f, None) is None]
        if missing:
            return (f"{type(result).__name__} returned by {plan.producer} has "
                    + ", ".join(f"{m}=None" for m in missing))
        for path in plan.batch_sized:
            parts = path.split(".")
            if parts[0] not in fields:
                continue
            value = _chain(result, parts)
            if value is None:
                return f"{path} is None at the return of {plan.producer}"
            shape = getattr(value, "shape", None)
            if shape is None:
                return f"{path} has no shape ({type(value).__name__})"
            if bs is not None and (len(shape) != 1 or shape[0] != bs):
                return f"{path} has shape {tuple(shape)}, the batch has {bs} requests"
        for name, expected in plan.equals.items():
            if name not in fields:
                continue
            actual = getattr(result, name, None)
            # Python scalars only: comparing a device tensor would synchronise
            if not isinstance(actual, (bool, int, float, str)) or actual != expected:
                return f"{name} is {actual!r}, the catalog expects {expected!r}"
        return None

    def check_step_return(self, ctx: StepContext, result) -> None:
        if result is None:
            return
        for plan in self.active:
            at = plan.at
            relation_after = plan.check == "seq-lens-relation" and at == "producer-return"
            if at not in ("step-return", "consumer-return") and not relation_after:
                continue
            cond = self._condition(ctx, plan, result)
            if not cond:
                if cond is None and not relation_after:
                    self.skipped[plan.id] = self.skipped.get(plan.id, 0) + 1
                continue
            if getattr(result, "delay_sample_func", None) is not None:
                continue  # fields filled in by the delayed sampling, later in the same loop turn
            problem = None
            if relation_after:
                # after the step the scheduler's lengths ARE the worker's new_seq_lens (0.5.9-0.5.12)
                value = _chain(self._root(plan, result), plan.attribute_path)
                if value is not None and getattr(ctx.batch, "seq_lens", None) is not value:
                    problem = (f"after the step batch.seq_lens is not {'.'.join(plan.attribute_path)} "
                               f"from the worker")
                else:
                    continue  # counted at the producer's return
            else:
                self.checks[plan.id] += 1
                self.dirty = True
                problem = self._presence_problem(plan, result)
                if problem is None and plan.check == "seq-lens-relation":
                    problem = self._seq_lens_shape_problem(plan, ctx, result)
            if problem is not None:
                worker = getattr(ctx.scheduler, "model_worker", None)
                func = getattr(type(worker), plan.producer, None) if worker is not None else None
                qual = f"{type(worker).__name__}.{plan.producer}" if worker is not None else None
                self._violate(plan, ctx, problem, func, qual, self.returns.last_site())

    def _presence_problem(self, plan: ContractPlan, result) -> str | None:
        root = self._root(plan, result)
        if plan.check == "fields-present":
            missing = [f for f in (plan.fields or plan.attribute_path[:1]) if getattr(root, f, None) is None]
            if missing:
                return f"{type(result).__name__} from the worker has " + ", ".join(f"{m}=None" for m in missing)
            return None
        path = plan.attribute_path
        obj = root
        for i, name in enumerate(path):
            obj = getattr(obj, name, None)
            if obj is None:
                shown = ".".join(path[: i + 1])
                return f"{type(result).__name__}.{shown} is None (read unconditionally)"
        return None

    def _seq_lens_shape_problem(self, plan: ContractPlan, ctx: StepContext, result) -> str | None:
        value = _chain(self._root(plan, result), plan.attribute_path)
        shape = getattr(value, "shape", None)
        if shape is None:
            return f"{'.'.join(plan.attribute_path)} has no shape ({type(value).__name__})"
        expected = ctx.entry_bs if ctx.entry_bs is not None else _batch_size(ctx.batch)
        if expected is not None and (len(shape) != 1 or shape[0] != expected):
            return f"{'.'.join(plan.attribute_path)} has shape {tuple(shape)}, the batch has {expected} requests"
        return None

    # value-level check: enqueued on the current (forward) stream, read after copy_done
    def _maybe_enqueue_value_check(self, plan: ContractPlan, ctx, result, func, worker_cls) -> None:
        if not self.value_sample or not plan.value_check:
            return
        accept = getattr(result, "accept_lens", None)
        old = ctx.entry_seq_lens
        new = _chain(self._root(plan, result), plan.attribute_path)
        if accept is None or old is None or new is None:
            return
        self.value_counter += 1
        if self.value_counter % self.value_sample:
            return
        try:
            import torch

            if not (torch.is_tensor(new) and torch.is_tensor(old) and torch.is_tensor(accept)):
                return
            if new.shape != old.shape or accept.shape != old.shape:
                return
            # a worker may make accept_lens on the host (the dynamic-disable series does for its
            # plain steps): compare on new's device; a host-to-device copy waits for no GPU work
            old, accept = (t if t.device == new.device else t.to(new.device, non_blocking=True)
                           for t in (old, accept))
            bad = (new.to(torch.int64) != old.to(torch.int64) + accept.to(torch.int64)).sum()
            host = torch.empty((), dtype=torch.int64, pin_memory=new.is_cuda)
            host.copy_(bad, non_blocking=True)
            event = None
            if new.is_cuda:
                event = torch.cuda.Event()
                event.record()
            self.pending_values.append((result, event, host, plan, ctx.step, ctx.batch, func, worker_cls))
        except Exception as exc:  # no torch, or tensors it cannot compare: the step goes on unchecked
            self.skipped[plan.id + ":value"] = self.skipped.get(plan.id + ":value", 0) + 1
            self.failure(f"value check of {plan.id}", exc)

    def _poll_values(self, final: bool = False) -> None:
        if not self.pending_values:
            return
        keep = []
        for item in self.pending_values:
            result, event, host, plan, step, batch, func, worker_cls = item
            copy_done = getattr(result, "copy_done", None)
            try:
                ready = (copy_done.query() if copy_done is not None and hasattr(copy_done, "query")
                         else event.query() if event is not None else True)
                if ready and event is not None:
                    ready = event.query()
            except Exception as exc:  # a CUDA error surfaces here; the value is lost, not waited for
                self.failure(f"reading the value check of {plan.id}", exc)
                continue
            if not ready and not final:
                keep.append(item)
                continue
            if not ready:
                self.skipped[plan.id + ":value"] = self.skipped.get(plan.id + ":value", 0) + 1
                continue
            self.value_checks_read += 1
            bad = int(host.item())
            if bad:
                ctx = StepContext(None, batch, step)
                self._violate(plan, ctx, f"{bad} request(s) with new_seq_lens != seq_lens + accept_lens "
                              "(value check, read after copy_done)", func,
                              f"{worker_cls.__name__}.{plan.producer}")
        self.pending_values = keep

    # ---------------------------------------------------------------- wrappers
    def _wrap_run_batch(self, original: Callable, cls: type) -> Callable:
        shims = self

        def run_batch(scheduler, batch, *args, **kwargs):
            if not shims.started:
                shims._start(scheduler)
            shims._rewrap_producer(scheduler)
            shims.step += 1
            ctx = StepContext(scheduler, batch, shims.step)
            previous = getattr(shims.local, "ctx", None)
            shims.local.ctx = ctx
            try:
                result = original(scheduler, batch, *args, **kwargs)
            finally:
                shims.local.ctx = previous
            if shims.active:
                shims.check_step_return(ctx, result)
            if shims.pending_values:
                shims._poll_values()
            # the first step's summary shows the checks running even if the process is killed
            # early (SGLang ends its scheduler with a signal, atexit does not run)
            if shims.dirty and (shims.step == 1 or time.monotonic() - shims.last_summary > SUMMARY_INTERVAL_S):
                shims.summary()
            return result

        return run_batch

    def _rewrap_producer(self, scheduler) -> None:
        """Wrap the producer the scheduler really calls, if a plugin or patch replaced the
        method after import (one attribute lookup per step)."""
        worker = getattr(scheduler, "model_worker", None)
        if worker is None:
            return
        for meth in {p.producer for p in self.active}:
            cls = type(worker)
            func = getattr(cls, meth, None)
            if func is not None and getattr(func, "__spectrace_wrapped__", None) is None:
                owner = next((c for c in cls.__mro__ if meth in c.__dict__), cls)
                self._wrap(owner, meth, self._wrap_producer)

    def _wrap_producer(self, original: Callable, cls: type) -> Callable:
        shims = self
        self.returns.watch(original)

        def producer(worker, *args, **kwargs):
            ctx = getattr(shims.local, "ctx", None)
            if ctx is None or ctx.in_producer:  # not a scheduler step, or a nested call
                return original(worker, *args, **kwargs)
            ctx.in_producer = True
            ctx.mwb = args[0] if args else kwargs.get("model_worker_batch")
            ctx.entry_seq_lens = getattr(ctx.mwb, "seq_lens", None)
            ctx.entry_bs = _batch_size(ctx.mwb)
            shims.returns.clear()
            try:
                result = original(worker, *args, **kwargs)
            finally:
                ctx.in_producer = False
            shims.check_producer_return(ctx, worker, original, result)
            return result

        return producer

    def _wrap_named_producer(self, original: Callable, cls: type, name: str) -> Callable:
        shims = self
        self.returns.watch(original)

        def producer(obj, *args, **kwargs):
            if not shims.producer_active:  # uninstalled
                return original(obj, *args, **kwargs)
            batch = args[0] if args else next(iter(kwargs.values()), None)
            bs = _batch_size(batch)  # before the call: a producer may rebind the batch's tensors
            shims.returns.clear()
            result = original(obj, *args, **kwargs)
            shims.check_named_producer_return(name, original, batch, bs, result)
            return result

        return producer

    def _wrap_internal_state(self, original: Callable, cls: type) -> Callable:
        def write_summary_between_runs():
            # a client asking for server info is between runs: write the counts now, since
            # SGLang's shutdown SIGKILLs the scheduler before any exit hook
            if self.started and self.dirty:
                self.summary()

        return pool_stats.wrap_get_internal_state(original, write_summary_between_runs, self.failure)


_COMPONENT_ATTR: dict[tuple[type, str], str | None] = {}


def _component(scheduler, class_name: str):
    """The scheduler's attribute holding an instance of ``class_name`` (looked up once)."""
    key = (type(scheduler), class_name)
    if key not in _COMPONENT_ATTR:
        _COMPONENT_ATTR[key] = next(
            (name for name, value in vars(scheduler).items()
             if any(c.__name__ == class_name for c in type(value).__mro__)), None)
    name = _COMPONENT_ATTR[key]
    return getattr(scheduler, name, None) if name else None


def _base_version(version: str | None) -> str | None:
    if not version:
        return None
    m = re.match(r"\d+(\.\d+)*", str(version))
    return m.group(0) if m else None


def _imported_sglang_version() -> str | None:
    mod = sys.modules.get("sglang")
    return getattr(mod, "__version__", None) if mod is not None else None


def _chain(obj, path):
    for name in path:
        obj = getattr(obj, name, None)
        if obj is None:
            return None
    return obj


def _batch_size(batch) -> int | None:
    if batch is None:
        return None
    reqs = getattr(batch, "reqs", None)
    if reqs is not None:
        return len(reqs)
    seq_lens = getattr(batch, "seq_lens", None)
    shape = getattr(seq_lens, "shape", None)
    if shape:
        return int(shape[0])
    try:
        return len(seq_lens)
    except TypeError:  # no seq_lens, or a scalar: the batch's size is unknown
        return None
