"""The source index and call resolution, on real SGLang source (0.5.9 and 0.5.23)."""

from __future__ import annotations

import pytest

from spectrace.tracer.graph import call_graph
from spectrace.tracer.project import Project

from conftest import OLD, RECENT

SCHED = "sglang.srt.managers.scheduler.Scheduler"
RUN_BATCH = f"{SCHED}.run_batch"


@pytest.fixture(scope="module")
def old_project(sglang_source):
    return Project(sglang_source(OLD))


@pytest.fixture(scope="module")
def recent_project(sglang_source):
    return Project(sglang_source(RECENT))


def _edge(graph, caller_suffix, callee_suffix):
    for u, v, data in graph.edges(data=True):
        if u.endswith(caller_suffix) and v.endswith(callee_suffix):
            return data
    raise AssertionError(f"no edge {caller_suffix} -> {callee_suffix}")


def test_roots_are_found_by_class_and_method(old_project):
    assert old_project.find_functions("Scheduler.run_batch") == [RUN_BATCH]
    assert old_project.find_functions("sglang.srt.managers.scheduler:Scheduler.run_batch") == [RUN_BATCH]
    assert old_project.find_functions(RUN_BATCH) == [RUN_BATCH]


def test_model_worker_dispatch_is_polymorphic_on_both_versions(old_project, recent_project):
    for proj, expected in (
        (old_project, {"TpModelWorker", "EAGLEWorker", "EAGLEWorkerV2", "MultiLayerEagleWorker",
                       "MultiLayerEagleWorkerV2", "NGRAMWorker"}),
        (recent_project, {"TpModelWorker", "EAGLEWorkerV2", "MultiLayerEagleWorkerV2", "NGRAMWorker",
                          "DFlashWorkerV2"}),
    ):
        g = call_graph(proj, [RUN_BATCH], depth=1)
        targets = {
            v.split(".")[-2]
            for u, v, d in g.edges(data=True)
            if u == RUN_BATCH and v.endswith(".forward_batch_generation") and d["polymorphic"]
        }
        assert expected <= targets, (proj.source.version, targets)
        edge = _edge(g, "Scheduler.run_batch", "eagle_worker_v2.EAGLEWorkerV2.forward_batch_generation")
        assert edge["polymorphic"] and edge["resolution"] == "polymorphic"
        assert edge["cross"], "scheduler -> speculative worker crosses the boundary"
        assert edge["file"] == "sglang/srt/managers/scheduler.py"
        # the standalone worker inherits the method: the edge names both receiver classes
        assert any(v.endswith("StandaloneWorkerV2") for v in edge["via"])


def test_model_worker_types_come_from_every_assignment_and_the_factory(old_project):
    types = old_project.attr_types(SCHED, "model_worker")
    names = {t[1].rsplit(".", 1)[-1] for t in types if t[0] == "inst"}
    # self.model_worker = self.tp_worker | self.draft_worker; draft_worker = create_worker(...)(...)
    assert {"TpModelWorker", "EAGLEWorkerV2", "StandaloneWorkerV2", "NGRAMWorker"} <= names
    returned = old_project.return_types("sglang.srt.speculative.spec_info.SpeculativeAlgorithm.create_worker")
    assert ("cls", "sglang.srt.speculative.eagle_worker_v2.EAGLEWorkerV2") in returned


def test_attribute_typed_by_constructor_and_plain_method_edges(old_project):
    g = call_graph(old_project, [RUN_BATCH], depth=1)
    edge = _edge(g, "Scheduler.run_batch", "ScheduleBatch.get_model_worker_batch")
    assert edge["resolution"] == "attr-type" and not edge["polymorphic"]
    # self.future_map = FutureMap(...): typed by its constructor call
    edge = _edge(g, "Scheduler.run_batch", "overlap_utils.FutureMap.resolve_future")
    assert edge["resolution"] == "attr-type"
    assert edge["line"] == 2326


def test_self_calls_walk_the_mro_into_mixins_of_other_modules(old_project):
    mro = old_project.mro(SCHED)
    assert "sglang.srt.managers.scheduler_output_processor_mixin.SchedulerOutputProcessorMixin" in mro
    assert "sglang.srt.managers.scheduler_pp_mixin.SchedulerPPMixin" in mro
    g = call_graph(old_project, [RUN_BATCH], depth=1)
    edge = _edge(g, "Scheduler.run_batch", "SchedulerProfilerMixin._profile_batch_predicate")
    assert edge["resolution"] == "self"


def test_self_inside_a_mixin_is_typed_by_the_class_that_mixes_it_in(old_project):
    mixin = "sglang.srt.managers.scheduler_output_processor_mixin.SchedulerOutputProcessorMixin"
    # assigned only in Scheduler's init helpers (one class per cache kind), read in the mixin
    types = {t[1].rsplit(".", 1)[-1] for t in old_project.attr_types(mixin, "tree_cache")}
    assert {"ChunkCache", "RadixCacheCpp", "HiRadixCache", "SWARadixCache"} <= types


def test_super_calls_and_nested_functions(old_project):
    init = "sglang.srt.managers.cache_controller.PrefetchOperation.__init__"
    calls = {c.resolution: c for c in old_project.calls(init)}
    assert calls["super"].targets == ["sglang.srt.managers.cache_controller.StorageOperation.__init__"]
    outer = "sglang.srt.managers.async_mm_data_processor.AsyncMMDataProcessor.process"
    local = [c for c in old_project.calls(outer) if c.resolution == "local"]
    assert local and local[0].targets == [f"{outer}._invoke"]


def test_property_return_annotation_types_an_attribute(old_project):
    prop_owner = "sglang.srt.speculative.base_spec_worker.BaseSpecWorker"
    types = old_project.attr_types(prop_owner, "target_worker")
    assert ("inst", "sglang.srt.managers.tp_worker.TpModelWorker") in types


def test_unresolved_calls_are_kept_with_their_text_and_counted(old_project):
    # torch tensors typed only as attributes of a plain class: nothing in the tree resolves them
    copy_to_cpu = "sglang.srt.managers.utils.GenerationBatchResult.copy_to_cpu"
    g = call_graph(old_project, [copy_to_cpu], depth=1)
    unresolved = [(u, v, d) for u, v, d in g.edges(data=True) if d["resolution"] == "unresolved"]
    assert g.graph["unresolved"] == len(unresolved) == 7
    assert {"self.copy_done.record()", "self.next_token_ids.to()", "x.copy_to_cpu()"} <= {
        d["call"] for _u, _v, d in unresolved}
    assert all(g.nodes[v]["kind"] == "unresolved" for _u, v, _d in unresolved)


def test_a_stream_unpacked_from_a_returned_tuple_is_typed(old_project):
    # `(..., self.forward_stream, ...) = self.tp_worker.get_worker_info()`: an external torch call,
    # hidden by default, no longer an unresolved one
    g = call_graph(old_project, [RUN_BATCH], depth=1, external=True)
    calls = {d["call"]: d["resolution"] for _u, _v, d in g.edges(data=True)}
    assert calls["self.forward_stream.wait_stream()"] == "external"
    assert call_graph(old_project, [RUN_BATCH], depth=1).graph["unresolved"] == 0


def test_external_calls_hidden_unless_asked(old_project):
    hidden = call_graph(old_project, [RUN_BATCH], depth=1)
    shown = call_graph(old_project, [RUN_BATCH], depth=1, external=True)
    assert "time.perf_counter" not in hidden
    assert shown.nodes["time.perf_counter"]["kind"] == "external"


def test_include_exclude_globs(old_project):
    g = call_graph(old_project, [RUN_BATCH], depth=1, exclude=("*forward_batch_generation",))
    assert not any(v.endswith("forward_batch_generation") for v in g.successors(RUN_BATCH))
    g = call_graph(old_project, [RUN_BATCH], depth=1, include=("sglang.srt.speculative.*",))
    assert {g.nodes[v]["kind"] for v in g.successors(RUN_BATCH)} <= {"method", "unresolved"}
    assert all(v.startswith("sglang.srt.speculative.") or v.startswith("?") for v in g.successors(RUN_BATCH))


def test_depth_limits_the_walk(old_project):
    one = call_graph(old_project, [RUN_BATCH], depth=1)
    two = call_graph(old_project, [RUN_BATCH], depth=2)
    assert one.number_of_nodes() < two.number_of_nodes()
    # depth 2 reaches what the speculative worker calls
    assert any(u.endswith("EAGLEWorkerV2.forward_batch_generation") for u, _v in two.edges())


def test_syntax_error_is_reported_with_its_path_and_the_rest_is_analysed(sglang_copy):
    from spectrace.source import from_path

    root = sglang_copy(OLD, subdirs=("sglang/srt/managers", "sglang/srt/speculative"))
    bad = root / "sglang/srt/managers/io_struct.py"
    bad.write_text(bad.read_text() + "\ndef broken(:\n")
    proj = Project(from_path(root), use_cache=False)
    proj.index_all(jobs=1)
    assert any(e.startswith("sglang/srt/managers/io_struct.py:") and "syntax error" in e for e in proj.errors)
    assert proj.find_functions("Scheduler.run_batch") == [RUN_BATCH]


def test_changed_file_is_reread_alone(sglang_copy, tmp_path, monkeypatch):
    from spectrace.source import from_path
    from spectrace.tracer import summary_cache as index_mod

    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    root = sglang_copy(OLD, subdirs=("sglang/srt/managers",))
    Project(from_path(root)).index_all(jobs=1)
    Project(from_path(root)).save()
    target = root / "sglang/srt/managers/overlap_utils.py"
    target.write_text(target.read_text() + "\n\ndef added_later():\n    return 1\n")
    parsed = []
    real = index_mod.summarize_source
    monkeypatch.setattr(index_mod, "summarize_source", lambda data, rel: parsed.append(rel) or real(data, rel))
    proj = Project(from_path(root))
    proj.index_all(jobs=1)
    assert parsed == ["sglang/srt/managers/overlap_utils.py"]
    assert "added_later" in proj.module("sglang.srt.managers.overlap_utils").functions


def test_parsing_ahead_changes_no_answer_and_fills_the_pack(sglang_copy, tmp_path, monkeypatch):
    from spectrace.source import from_path

    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    root = sglang_copy(OLD, subdirs=("sglang/srt/managers", "sglang/srt/speculative"))
    plain = call_graph(Project(from_path(root), use_cache=False), [RUN_BATCH], depth=2)
    proj = Project(from_path(root))
    with proj.parsing_ahead():
        ahead = call_graph(proj, [RUN_BATCH], depth=2)
    proj.save()
    assert set(ahead.edges(data="resolution")) == set(plain.edges(data="resolution"))
    # what the worker parsed is in the pack, and the bodies parsed one by one with their outlined
    # modules: the next process parses no module whole
    again = Project(from_path(root))
    from spectrace.tracer import summary_cache

    whole = summary_cache.summarize_source
    monkeypatch.setattr(summary_cache, "summarize_source", None)
    assert set(call_graph(again, [RUN_BATCH], depth=2).edges) == set(plain.edges)
    # each whole summary was also written by content (in the bundle that save wrote); an outlined
    # one is not (its body may hide a syntax error), so that module is parsed again
    monkeypatch.setattr(summary_cache, "summarize_source", whole)
    proj.cache.pack_path(root).unlink()
    assert set(call_graph(Project(from_path(root)), [RUN_BATCH], depth=2).edges) == set(plain.edges)


def test_refresh_counts_every_module_without_loading_one(sglang_copy, tmp_path, monkeypatch):
    from spectrace.source import from_path
    from spectrace.tracer.index import lighten

    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    root = sglang_copy(OLD, subdirs=("sglang/srt/managers",))
    (root / "sglang/srt/managers/io_struct.py").write_text("def broken(:\n")
    loaded = Project(from_path(root), use_cache=False)
    loaded.index_all(jobs=1)
    mods = list(loaded.loaded_modules())
    first = Project(from_path(root)).store.refresh(jobs=1)
    warm = Project(from_path(root))
    assert warm.store.refresh() == first and not list(warm.loaded_modules())
    assert len(first) == len(mods)
    # the counts are of what is defined outside function bodies (the light summaries)
    assert sum(s[0] for s in first) == sum(len(lighten(m).classes) for m in mods)
    assert sum(s[1] for s in first) == sum(len(lighten(m).functions) for m in mods)
    assert sum(s[1] for s in first) < sum(len(m.functions) for m in mods)  # nested functions and lambdas left out
    assert [s[2] for s in first if s[2]] == loaded.errors
