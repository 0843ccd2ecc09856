"""The catalog's contracts as runtime plans: what the shims check for each, where and when.

``spectrace.contracts.catalog.load_catalog`` reads the catalog (standard library only); this
module turns its ``CatalogContract`` records into ``ContractPlan`` records, and resolves nothing
against SGLang yet (``checks.Shims`` fills in the sites once the scheduler module is imported).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from spectrace.contracts.catalog import CATALOG_DIR, CatalogContract, load_catalog
from spectrace.errors import SpectraceError
from spectrace.shims.conditions import Condition, ConditionRefused, parse_condition

DEFAULT_CATALOG = CATALOG_DIR
READ_CHECKS = ("not-none", "seq-lens-relation", "fields-present")
FORWARD_MODES = ("decode", "extend", "any")


@dataclass
class ContractPlan:
    id: str
    check: str          # not-none | seq-lens-relation | fields-present | producer-sets
    at: str             # producer-return | step-return | consumer-return
    producer: str       # the worker method's name, or "Class.method" for producer-sets
    forward_mode: str   # decode | extend | any: the batch's ForwardMode the check applies to
    consumer: str
    owner: str
    shape: str | None = None
    condition: str | None = None
    fields: list = field(default_factory=list)
    attribute_path: list = field(default_factory=list)
    versions: list = field(default_factory=list)
    value_check: bool = False
    # producer-sets only
    module: str | None = None  # where to wait for the producer besides the worker side
    fields_by_version: dict = field(default_factory=dict)
    batch_sized: list = field(default_factory=list)  # "a.b" paths whose shape must be (bs,)
    batch_sized_by_version: dict = field(default_factory=dict)  # version -> paths (replaces batch_sized there)
    equals: dict = field(default_factory=dict)  # field -> Python scalar it must equal
    # filled in against the imported SGLang
    consumer_site: dict | None = None
    producer_site: dict | None = None
    self_attr: str | None = None  # the scheduler's component that is `self` in the condition
    condition_code: Condition | None = None  # the parsed condition; None: always true
    reason: str | None = None  # why the plan is not checked in this process


def load_runtime_catalog(path: str | os.PathLike | None = None) -> list[CatalogContract]:
    """The catalog's contracts (default: the packaged catalog). ``path`` may list several catalog
    directories or files joined with ``os.pathsep``; the first entry of an id wins."""
    if path is None or str(path) == "":
        return load_catalog(DEFAULT_CATALOG)  # its conditions are tested (tests/test_runtime.py)
    merged: list[CatalogContract] = []
    seen: set[str] = set()
    for part in str(path).split(os.pathsep):
        if part:
            for c in load_catalog(Path(part)):
                if c.id not in seen:
                    seen.add(c.id)
                    merged.append(c)
    for c in merged:
        plan_for(c, source=str(path))  # a path condition outside the whitelist is refused now
    return merged


def condition_of(c: CatalogContract, text: str | None, source: str | None = None) -> Condition | None:
    """The contract's path condition, parsed against the whitelist (None: always true);
    SpectraceError naming the contract when the condition is refused."""
    if text is None or str(text).strip() in ("", "True", "true"):
        return None
    try:
        return parse_condition(str(text))
    except ConditionRefused as exc:
        where = f"{source}: " if source else ""
        raise SpectraceError(f"{where}contract {c.id}: path condition {str(text)!r} refused: {exc}") from exc


def plan_for(c: CatalogContract, source: str | None = None) -> ContractPlan | None:
    """What the shims do for one catalog contract; None when it has no runtime check.

    ``[contract.runtime]`` drives it (check, at, producer, and the optional keys ``mode``:
    decode|extend|any, the batch's forward mode; ``when``: a Python expression replacing the path
    condition; ``fields`` for "fields-present"). Without the table, an unconditional read of a
    result field is checked for presence after the step (never at the producer's return, where
    fields that the scheduler itself assigns later, such as ``copy_done``, are legitimately unset).
    """
    rt = c.runtime
    if c.kind == "producer-sets" or rt.get("check") == "producer-sets":
        return producer_sets_plan(c)
    path = list(c.attribute_path or ([c.field] if c.field else []))
    check = rt.get("check")
    at = rt.get("at")
    if check is None:
        if c.kind == "relation" and path and path[-1] == "new_seq_lens":
            check = "seq-lens-relation"
        elif c.kind == "unconditional-read" and path:
            check = "not-none"
            at = at or "step-return"
        else:
            return None
    if check not in READ_CHECKS:
        return None
    condition = rt.get("when", c.path_condition)
    return ContractPlan(
        id=c.id, check=check, at=at or "producer-return",
        producer=rt.get("producer", "forward_batch_generation"),
        forward_mode=rt.get("mode") or _forward_mode_of(c.consumer),
        consumer=c.consumer, owner=c.owner or "GenerationBatchResult", shape=c.shape,
        condition=condition, fields=list(rt.get("fields") or []),
        attribute_path=path, versions=list(c.versions),
        value_check=bool(rt.get("value_check", check == "seq-lens-relation")),
        condition_code=condition_of(c, condition, source),
    )


def producer_sets_plan(c: CatalogContract) -> ContractPlan | None:
    """A named producer (``Class.method``) that must set fields on its returned result:
    checked at that method's own return (host metadata and Python scalars only)."""
    if c.producer.count(".") != 1:
        return None
    rt = c.runtime
    return ContractPlan(
        id=c.id, check="producer-sets", at="producer-return", producer=c.producer,
        forward_mode="any", consumer=c.producer, owner=c.owner or "GenerationBatchResult",
        shape=c.shape, fields=list(c.fields), versions=list(c.versions), module=rt.get("module"),
        fields_by_version={k: list(v) for k, v in c.fields_by_version.items()},
        batch_sized=list(rt.get("batch_sized") or []), equals=dict(rt.get("equals") or {}),
        batch_sized_by_version={k: list(v) for k, v in (rt.get("batch_sized_by_version") or {}).items()},
    )


def _forward_mode_of(consumer: str) -> str:
    """The forward mode a consumer's name implies (``process_batch_result_decode``)."""
    low = consumer.lower()
    return "decode" if "decode" in low else "extend" if ("prefill" in low or "extend" in low) else "any"
