"""Light summaries (``spectrace index``'s: no function bodies) and their completion: a light
summary completed from the whole one is the whole one, a lightened whole summary is the light one,
and a query on a tree indexed light gets the answers of a cold one, completing only the modules
whose bodies it needs."""

from __future__ import annotations

import pickle

import pytest

from spectrace.tracer.index import complete, is_light, light_summary, lighten, summarize_source

from conftest import OLD, RECENT

MODULES = (
    "sglang/srt/managers/scheduler.py",
    "sglang/srt/managers/schedule_batch.py",
    "sglang/srt/model_executor/model_runner.py",
    "sglang/srt/server_args.py",
    "sglang/srt/utils/common.py",
)

# what the light one keeps and leaves out, in one small module: nested functions and classes,
# lambdas in bodies and at module level, a property's setter, module-level calls
PROGRAM = b'''
import os
from . import sibling

def outer(x):
    import json
    def inner():
        return json.dumps(x)
    class Local:
        def m(self):
            return inner()
    return Local().m()

class C:
    key = staticmethod(lambda v: v)
    @property
    def p(self):
        return self._p
    @p.setter
    def p(self, value):
        self._p = sibling.check(value)
    def run(self, xs):
        return sorted(xs, key=lambda v: outer(v))

VALUE = outer(os.sep)
'''


def _same(a, b) -> bool:
    return pickle.dumps(a, protocol=pickle.HIGHEST_PROTOCOL) == pickle.dumps(b, protocol=pickle.HIGHEST_PROTOCOL)


def test_a_light_summary_leaves_out_bodies_and_what_is_defined_in_them():
    light = light_summary(PROGRAM, "pkg/mod.py")
    assert is_light(light)
    assert set(light.functions) == {"outer", "C.p", "C.run", "C.<lambda1>", "<module>"}
    assert set(light.classes) == {"C"}
    assert "calls" not in light.functions["outer"].__dict__ and light.functions["<module>"].calls
    assert [p for p, _a in light.functions["C.p"].params] == ["self", "value"]  # the setter's, merged
    whole = summarize_source(PROGRAM, "pkg/mod.py")
    assert {"outer.inner", "outer.Local.m", "C.run.<lambda1>"} <= set(whole.functions) - set(light.functions)
    assert _same(lighten(whole), light)
    complete(light, whole)
    assert not is_light(light) and _same(light, whole)


@pytest.mark.parametrize("relpath", MODULES)
def test_completing_a_light_summary_gives_the_whole_one(sglang_source, relpath):
    source = (sglang_source(RECENT).root / relpath).read_bytes()
    whole = summarize_source(source, relpath)
    light = light_summary(source, relpath)
    assert len(light.functions) < len(whole.functions) or all(f.parent is None for f in whole.functions.values())
    assert _same(lighten(whole), light)
    kept = light.functions[next(iter(light.functions))]
    complete(light, whole)
    assert _same(light, whole)
    assert light.functions[kept.qualname] is kept  # a function a caller holds is the one completed


def test_a_tree_indexed_light_answers_as_a_cold_one(sglang_copy, tmp_path, monkeypatch):
    from spectrace.source import from_path
    from spectrace.tracer.graph import call_graph
    from spectrace.tracer.project import Project

    from test_tracer import RUN_BATCH

    root = sglang_copy(OLD, subdirs=("sglang/srt/managers", "sglang/srt/speculative"))
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    cold = call_graph(Project(from_path(root), use_cache=False), [RUN_BATCH], depth=2)
    Project(from_path(root)).store.refresh(jobs=1)  # the pack: light summaries alone
    proj = Project(from_path(root))
    graph = call_graph(proj, [RUN_BATCH], depth=2)
    assert set(graph.edges(data="resolution")) == set(cold.edges(data="resolution"))
    loaded = list(proj.loaded_modules())
    light = [m.module for m in loaded if is_light(m)]
    assert light and len(light) < len(loaded)  # only the modules whose bodies were needed are complete
    proj.save()
    # what was completed is in the pack: the next process parses nothing
    monkeypatch.setattr("spectrace.tracer.summary_cache.summarize_source", None)
    monkeypatch.setattr("spectrace.tracer.summary_cache.light_summary", None)
    again = call_graph(Project(from_path(root)), [RUN_BATCH], depth=2)
    assert set(again.edges(data="resolution")) == set(cold.edges(data="resolution"))


def test_a_light_module_answers_signatures_without_its_bodies(sglang_copy, tmp_path, monkeypatch):
    from spectrace.source import from_path
    from spectrace.tracer.project import Project

    root = sglang_copy(OLD, subdirs=("sglang/srt/managers",))
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    Project(from_path(root)).store.refresh(jobs=1)
    proj = Project(from_path(root))
    monkeypatch.setattr("spectrace.tracer.summary_cache.summarize_source", None)  # no whole summary made
    mod = proj.module("sglang.srt.managers.scheduler")
    run_batch = mod.functions.get("Scheduler.run_batch")
    assert run_batch.kind == "method" and run_batch.params[0][0] == "self"
    assert mod.functions.get("Scheduler.no_such_method") is None and is_light(mod)
    with pytest.raises(TypeError):  # a body asked for: the module is completed (here: refused)
        run_batch.calls


def test_a_field_map_completes_only_the_modules_that_name_the_field(sglang_copy, tmp_path, monkeypatch):
    """After a light index, `map --field` needs the bodies of the modules whose text names the
    field, and gets the map a cold whole-tree reading gets."""
    from spectrace.source import from_path
    from spectrace.tracer.graph import field_graph
    from spectrace.tracer.project import Project

    root = sglang_copy(OLD, subdirs=("sglang/srt/managers", "sglang/srt/speculative"))
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    whole = Project(from_path(root), use_cache=False)
    whole.index_all(jobs=1)
    expected = field_graph(whole, "next_draft_input")
    Project(from_path(root)).store.refresh(jobs=1)  # the pack: light summaries alone
    proj = Project(from_path(root))
    graph = field_graph(proj, "next_draft_input")
    def edges(g):
        return {(a, b, tuple(sites)) for a, b, sites in g.edges(data="sites")}

    assert edges(graph) == edges(expected) and graph.number_of_edges() > 3
    naming = set(proj.texts.mentions("next_draft_input"))
    complete_modules = {m.module for m in proj.loaded_modules() if not is_light(m)}
    assert complete_modules and complete_modules <= naming
    assert len(naming) < len(proj.files) / 4
