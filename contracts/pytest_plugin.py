"""pytest plugin (entry point ``pytest11``): each catalog contract becomes a test item.

    pytest --spectrace-sglang 0.5.9 --spectrace-catalog contracts/catalog

A project that vendors or patches SGLang runs the contracts with its own suite. The source tree is
extracted once per session; each contract is a ``ContractItem`` under a ``CatalogCollector``
(pytest's documented non-Python test pattern). The collector is added to the session's own
collection report, so its items exist whatever paths pytest was given and are collected, counted,
selected (``-k``) and reported once, like any other. A violation found by the extraction is an
item of its own. Failures print both code sites.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spectrace.contracts.kinds import Status
from spectrace.errors import SpectraceError


def pytest_addoption(parser):
    group = parser.getgroup("spectrace", "spectrace contract checks")
    group.addoption("--spectrace-sglang", default=None,
                    help="SGLang source (VERSION, PATH or 'installed') whose contracts to check")
    group.addoption("--spectrace-catalog", default=None,
                    help="contract catalog directory or TOML file (default: spectrace's packaged catalog)")
    group.addoption("--spectrace-no-strict", action="store_true", default=False,
                    help="an obligation the checker cannot decide (unknown) does not fail (it does by default)")


class ContractFailure(Exception):
    pass


class _Session:
    """One extraction per pytest session, shared by every item."""

    def __init__(self, spec: str, catalog: str | None, strict: bool = True):
        self.spec = spec
        self.catalog = catalog
        self.strict = strict
        self._report = None

    def report(self):
        if self._report is None:
            from spectrace.contracts.check import check_catalog
            from spectrace.source import resolve_source

            self._report = check_catalog(resolve_source(self.spec), self.catalog, strict=self.strict)
        return self._report


class ContractItem(pytest.Item):
    def __init__(self, *, contract=None, violation_index=None, unknown_index=None, state=None, **kwargs):
        super().__init__(**kwargs)
        self.contract = contract
        self.violation_index = violation_index
        self.unknown_index = unknown_index
        self.state = state
        if contract is not None:
            self.user_properties.append(("spectrace_contract", contract.id))

    def runtest(self):
        report = self.state.report()
        if self.contract is not None:
            result = next(r for r in report.results if r.id == self.contract.id)
            if result.status == Status.NOT_APPLICABLE:
                pytest.skip(result.message)
            if not result.ok:
                raise ContractFailure(result)
            return
        if self.unknown_index is not None:
            raise ContractFailure(report.unknowns[self.unknown_index])
        raise ContractFailure(report.violations[self.violation_index])

    def repr_failure(self, excinfo):
        if not isinstance(excinfo.value, ContractFailure):
            return super().repr_failure(excinfo)
        from spectrace.contracts.records import Unknown, Violation

        what = excinfo.value.args[0]
        if isinstance(what, Unknown):  # an obligation not decided
            return "\n".join([
                f"contract obligation unknown {what.id}: {what.message}",
                "  (pass --spectrace-no-strict to let undecided obligations pass)",
            ])
        if isinstance(what, Violation):
            v = what
            return "\n".join([
                f"contract violation {v.id}: {v.message}",
                f"  scheduler read:     {v.read.file}:{v.read.line}  {v.read.shape}",
                f"                      when {v.read.path_condition or 'always'}",
                f"  worker return path: {v.producer.file}:{v.producer.line}  {v.producer.shape}",
                f"                      worker chosen when {v.worker_selection}",
            ])
        r = what
        lines = [f"contract {r.id} {r.status}: {r.message}",
                 f"  catalog:  {r.consumer}: `{r.shape}` when {r.expected_condition or 'always'}"]
        if r.found:
            lines.append(f"  found:    {r.found.file}:{r.found.line}  `{r.found.shape}` when {r.found.path_condition or 'always'}")
        if r.old_site:
            lines.append(f"  recorded: {r.old_site}")
        if r.rationale:
            lines.append(f"  why it matters: {' '.join(r.rationale.split())}")
        return "\n".join(lines)

    def reportinfo(self):
        name = (self.contract.id if self.contract is not None else f"violation {self.violation_index}"
                if self.unknown_index is None else f"unknown {self.unknown_index}")
        return self.path, None, f"spectrace contract {name}"


class CatalogCollector(pytest.Collector):
    def __init__(self, *, state=None, **kwargs):
        super().__init__(**kwargs)
        self.state = state

    def collect(self):
        from spectrace.contracts.catalog import load_catalog

        for c in load_catalog(self.state.catalog):
            yield ContractItem.from_parent(self, name=c.id, path=Path(c.file), contract=c, state=self.state)
        # new violations: one item each (known after the extraction, which runs here once)
        for i, v in enumerate(self.state.report().violations):
            yield ContractItem.from_parent(self, name=f"violation[{v.id}]", violation_index=i, state=self.state)
        if self.state.strict:  # undecided obligations fail as violations do
            for i, u in enumerate(self.state.report().unknowns):
                yield ContractItem.from_parent(self, name=f"unknown[{u.id}]", unknown_index=i, state=self.state)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, SpectraceError):  # bad catalog or source: one line, not a traceback
            return f"spectrace: {excinfo.value}"
        return super().repr_failure(excinfo)


def pytest_report_header(config):
    spec = config.getoption("--spectrace-sglang")
    if spec:
        catalog = config.getoption("--spectrace-catalog") or "the packaged catalog"
        return f"spectrace: contracts of SGLang {spec} from {catalog}"
    return None


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    report = yield
    config = collector.config
    spec = config.getoption("--spectrace-sglang")
    if spec and isinstance(collector, pytest.Session) and report.passed:
        catalog = config.getoption("--spectrace-catalog")
        if catalog is None:
            from spectrace.contracts.catalog import CATALOG_DIR

            catalog_path = CATALOG_DIR
        else:
            catalog_path = Path(catalog).resolve()
        # a node id starts with a path relative to the rootdir, as pytest's own do (it is shown
        # relative to the working directory); the session collects these items after its paths
        name = "spectrace-contracts"  # the source is in the header: a path in a node id reads as one
        nodeid = f"{Path(os.path.relpath(catalog_path, config.rootpath)).as_posix()}::{name}"
        report.result.append(CatalogCollector.from_parent(
            collector, name=name, nodeid=nodeid, path=catalog_path, state=_Session(spec, catalog, strict=not config.getoption("--spectrace-no-strict"))))
    return report
