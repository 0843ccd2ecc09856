"""The catalog's path conditions: evaluated over a whitelisted syntax tree, with Python's meaning,
and anything outside the whitelist refused when the catalog is loaded, before a server starts."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from spectrace.contracts.catalog import load_catalog
from spectrace.errors import SpectraceError
from spectrace.shims import plans
from spectrace.shims.conditions import ConditionRefused, parse_condition

from test_runtime_activation import CATALOG


class Algorithm:
    def __init__(self, none: bool):
        self.none = none

    def is_none(self):
        return self.none


def names(overlap=True, spec_v2=True, algorithm_none=False, draft=None):
    return {"self": types.SimpleNamespace(enable_overlap=overlap, draft_worker=draft),
            "batch": types.SimpleNamespace(is_spec_v2=spec_v2, spec_algorithm=Algorithm(algorithm_none)),
            "batch_result": None, "result": None, "model_worker_batch": None}


@pytest.mark.parametrize("text, env, expected", [
    ("self.enable_overlap and batch.is_spec_v2", {}, True),
    ("self.enable_overlap and batch.is_spec_v2", {"spec_v2": False}, False),
    ("not (self.enable_overlap)", {"overlap": False}, True),
    ("self.enable_overlap and not batch.spec_algorithm.is_none()", {"algorithm_none": True}, False),
    ("not batch.spec_algorithm.is_none()", {}, True),
    ("self.draft_worker is None or batch.is_spec_v2 == False", {}, True),
    ("self.draft_worker is not None", {}, False),
    ("1 < 2 <= 2", {}, True),
])
def test_conditions_mean_what_python_means(text, env, expected):
    values = names(**env)
    assert bool(parse_condition(text).evaluate(values)) is expected
    assert bool(eval(text, {}, values)) is expected  # the reference meaning


def test_and_or_short_circuit_like_python():
    values = names(overlap=False)
    values["batch"] = None  # `batch.is_spec_v2` would raise: `and` must not get there
    assert parse_condition("self.enable_overlap and batch.is_spec_v2").evaluate(values) is False


@pytest.mark.parametrize("text, reason", [
    ("().__class__.__base__.__subclasses__()", "only SGLang's predicate methods may be called"),
    ("(1, 2)", "Tuple is not allowed"),
    ("self.__class__", "attribute '__class__' is not allowed"),
    ("__import__('os').system('true')", "only SGLang's predicate methods may be called"),
    ("open('/etc/passwd')", "only SGLang's predicate methods may be called"),
    ("batch.spec_algorithm.is_none(1)", "is_none() takes no arguments"),
    ("os.system", "name 'os' is none of"),
    ("[x for x in ()]", "ListComp is not allowed"),
    ("lambda: 1", "Lambda is not allowed"),
    ("self.enable_overlap if batch else 1", "IfExp is not allowed"),
    ("-batch.x", "operator USub is not allowed"),
    ("batch.x in batch.y", "comparison In is not allowed"),
    ("self.enable_overlap and", "not a Python expression"),
    ("b'x'", "constant b'x' is not allowed"),
])
def test_anything_else_is_refused(text, reason):
    with pytest.raises(ConditionRefused) as info:
        parse_condition(text)
    assert reason in str(info.value)


def test_the_packaged_catalog_is_within_the_whitelist():
    contracts = plans.load_runtime_catalog()
    conditions = [plans.plan_for(c) for c in contracts]
    assert [p.id for p in conditions if p is not None and p.condition_code is not None]  # some are conditional


def bad_catalog(tmp_path, condition: str):
    path = tmp_path / "catalog.toml"
    path.write_text(CATALOG.replace('path_condition = "self.enable_overlap and batch.is_spec_v2"',
                                    f"path_condition = {condition!r}"))
    return path


def test_a_catalog_with_a_refused_condition_fails_to_load(tmp_path):
    path = bad_catalog(tmp_path, "().__class__.__base__.__subclasses__()")
    assert load_catalog(path)  # the catalog's own syntax is fine: only the shims refuse the condition
    with pytest.raises(SpectraceError, match=r"catalog.toml: contract T-NDI: path condition .* refused: only SGLang's predicate methods"):
        plans.load_runtime_catalog(str(path))


def test_spectrace_run_refuses_it_before_the_command_starts(tmp_path):
    path = bad_catalog(tmp_path, "__import__('os').system('touch ran')")
    out = subprocess.run([sys.executable, "-m", "spectrace", "run", "--catalog", str(path), "--report",
                          str(tmp_path / "r.jsonl"), "--", sys.executable, "-c", "open('ran2', 'w')"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 2
    assert len(out.stderr.splitlines()) == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith("spectrace: cannot read the contract catalog: ")
    assert "only SGLang's predicate methods may be called" in out.stderr
    assert not (tmp_path / "ran").exists() and not (tmp_path / "ran2").exists()
