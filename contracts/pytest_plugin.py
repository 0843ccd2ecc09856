"""pytest plugin (entry point ``pytest11``): each catalog contract becomes a test item.

    pytest --spectrace-sglang 0.5.9 --spectrace-catalog contracts/catalog

A project that vendors or patches SGLang runs the contracts with its own suite. The source tree is
extracted once per session; each contract is a ``ContractItem`` under a ``CatalogFile`` collector
(pytest's documented non-Python test pattern, added through ``pytest_collection_modifyitems`` so the
items exist whatever paths pytest was given). A violation found by the extraction is an item of
its own. Failures print both code sites.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("spectrace", "spectrace contract checks")
    group.addoption("--spectrace-sglang", default=None,
                    help="SGLang source (VERSION, PATH or 'installed') whose contracts to check")
    group.addoption("--spectrace-catalog", default=None,
                    help="contract catalog directory or TOML file (default: spectrace's packaged catalog)")


class ContractFailure(Exception):
    pass


class _Session:
    """One extraction per pytest session, shared by every item."""

    def __init__(self, spec: str, catalog: str | None):
        self.spec = spec
        self.catalog = catalog
        self._report = None

    def report(self):
        if self._report is None:
            from spectrace.contracts.check import check_catalog
            from spectrace.source import resolve_source

            self._report = check_catalog(resolve_source(self.spec), self.catalog)
        return self._report


class ContractItem(pytest.Item):
    def __init__(self, *, contract=None, violation_index=None, state=None, **kwargs):
        super().__init__(**kwargs)
        self.contract = contract
        self.violation_index = violation_index
        self.state = state
        if contract is not None:
            self.user_properties.append(("spectrace_contract", contract.id))

    def runtest(self):
        report = self.state.report()
        if self.contract is not None:
            result = next(r for r in report.results if r.id == self.contract.id)
            if result.status == "not-applicable":
                pytest.skip(result.message)
            if not result.ok:
                raise ContractFailure(result)
            return
        raise ContractFailure(report.violations[self.violation_index])

    def repr_failure(self, excinfo):
        if not isinstance(excinfo.value, ContractFailure):
            return super().repr_failure(excinfo)
        what = excinfo.value.args[0]
        if isinstance(what, dict):  # a violation
            v = what
            return "\n".join([
                f"contract violation {v['id']}: {v['message']}",
                f"  scheduler read:     {v['read']['file']}:{v['read']['line']}  {v['read']['shape']}",
                f"                      when {v['read']['path_condition'] or 'always'}",
                f"  worker return path: {v['producer']['file']}:{v['producer']['line']}  {v['producer']['shape']}",
                f"                      worker chosen when {v['worker_selection']}",
            ])
        r = what
        lines = [f"contract {r.id} {r.status}: {r.message}",
                 f"  catalog:  {r.consumer}: `{r.shape}` when {r.expected_condition or 'always'}"]
        if r.found:
            lines.append(f"  found:    {r.found['file']}:{r.found['line']}  `{r.found['shape']}` when {r.found['path_condition'] or 'always'}")
        if r.old_site:
            lines.append(f"  recorded: {r.old_site}")
        if r.rationale:
            lines.append(f"  why it matters: {' '.join(r.rationale.split())}")
        return "\n".join(lines)

    def reportinfo(self):
        name = self.contract.id if self.contract is not None else f"violation {self.violation_index}"
        return self.path, None, f"spectrace contract {name}"


class CatalogCollector(pytest.Collector):
    def __init__(self, *, state=None, **kwargs):
        super().__init__(**kwargs)
        self.state = state

    def collect(self):
        from spectrace.contracts.catalog import load_catalog

        for c in load_catalog(self.state.catalog):
            yield ContractItem.from_parent(self, name=c.id, contract=c, state=self.state)
        # new violations: one item each (known after the extraction, which runs here once)
        for i, v in enumerate(self.state.report().violations):
            yield ContractItem.from_parent(self, name=f"violation[{v['id']}]", violation_index=i, state=self.state)


def pytest_collection_modifyitems(session, config, items):
    spec = config.getoption("--spectrace-sglang")
    if not spec:
        return
    state = _Session(spec, config.getoption("--spectrace-catalog"))
    collector = CatalogCollector.from_parent(session, name=f"spectrace-contracts[{spec}]", state=state)
    try:
        new = list(collector.collect())
    except Exception as exc:  # bad catalog or source: one clear error, not a traceback per item
        raise pytest.UsageError(f"spectrace: {exc}")
    items.extend(new)
