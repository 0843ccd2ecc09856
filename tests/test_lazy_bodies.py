"""Lazy bodies: a module read from its outline (``tracer/outline.py``), each function's body parsed
alone when first needed, gives the summaries and the call graphs that whole parses give."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import pytest

from spectrace.source import package_source
from spectrace.tracer import index
from spectrace.tracer.graph import call_graph
from spectrace.tracer.outline import outline
from spectrace.tracer.project import Project
from spectrace.tracer.render import render

from conftest import OLD, RECENT

PROGRAMS = Path(__file__).parent / "programs"
CALLGRAPH = Path(__file__).parent.parent / "bench" / "callgraph" / "programs"
OUTLINED = PROGRAMS / "outlined.py"


def _sources() -> list[Path]:
    return sorted([*PROGRAMS.glob("*.py"), *PROGRAMS.glob("*/*.py"), *CALLGRAPH.glob("*/*.py"),
                   *CALLGRAPH.glob("*/*/*.py")])


def _pickled(summary) -> bytes:
    return pickle.dumps(summary, protocol=pickle.HIGHEST_PROTOCOL)


def test_the_outline_blanks_bodies_and_keeps_every_line():
    src = OUTLINED.read_bytes()
    found = outline(src)
    assert found is not None and found.classes_in_bodies  # `local_class` defines one
    text = found.text.decode()
    assert text.count("\n") == src.count(b"\n")
    assert "NotAClass" not in text and "helper(2)" not in text and "TEMPLATE" in text
    assert "def not_a_function():" in text  # in a module-level string: no def, kept
    assert "def one_liner(x): return helper(x)" in text  # a body on its header's line stays


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_outline_summary_is_the_light_summary(path):
    src = path.read_bytes()
    found = index.outline_summary(src, path.name)
    assert found is not None
    summary, classes_in_bodies = found
    assert _pickled(summary) == _pickled(index.light_summary(src, path.name))
    whole = index.summarize_source(src, path.name)
    assert classes_in_bodies == (len(whole.classes) != len(summary.classes))


def test_function_body_is_what_the_whole_parse_records():
    src = OUTLINED.read_bytes()
    light, _ = index.outline_summary(src, "outlined.py")
    whole = index.summarize_source(src, "outlined.py")
    lines = src.split(b"\n")
    alone = {}
    for qn, f in dict.items(light.functions):
        if "calls" not in f.__dict__:
            alone[qn] = index.function_body(light, qn, lines)
    # a property's lines hold its setter too (their facts are merged): the module is parsed whole
    assert [qn for qn, body in alone.items() if body is None] == ["Holder.x"]
    assert "local_class" in alone and "Holder.Inner.deep" in alone and "conditional" in alone
    for qn, parsed in alone.items():
        if parsed is not None:
            assert parsed.body == {k: whole.functions[qn].__dict__[k] for k in index.BODY_FIELDS}, qn
    assert list(alone["local_class"].functions) == ["local_class.Local.run"]
    assert list(alone["trace"].functions) == ["trace.wrapper"]
    assert list(alone["local_class"].classes) == ["local_class.Local"]


def test_bodies_parsed_alone_fill_the_tables_as_the_whole_parse():
    """Each function given its body alone, what it defines goes where the whole summary has it,
    and no query about a name defined in a body completes the module."""
    src = OUTLINED.read_bytes()
    light, _ = index.outline_summary(src, "outlined.py")
    whole = index.summarize_source(src, "outlined.py")
    lines = src.split(b"\n")
    completed = []
    index.defer_bodies(light, lambda: completed.append(True),
                       lambda qn: (parsed := index.function_body(light, qn, lines)) is not None
                       and (index.add_body(light, qn, parsed) or True))
    assert light.functions.get("local_class.Local.run") is not None and not completed
    assert "local_class.Local" in light.classes and not completed
    for qn, f in list(dict.items(light.functions)):
        if qn != "Holder.x":  # (its setter's lines: left to the whole parse)
            f.calls  # noqa: B018
    assert not completed
    assert [qn for qn in dict.keys(light.functions)] == [qn for qn in whole.functions]
    assert [qn for qn in dict.keys(light.classes)] == [qn for qn in whole.classes]
    assert dict(dict.items(light.lambdas)) == whole.lambdas
    for qn, f in dict.items(light.functions):
        if qn != "Holder.x":
            assert f.__dict__ == whole.functions[qn].__dict__, qn


@pytest.mark.parametrize("source", [
    b"def f():\n\treturn 1\n",  # a tab in an indentation
    b"def f():\r\n    return 1\r\n",
    b"# -*- coding: latin-1 -*-\ndef f():\n    return 1\n",
    b"def f():\n    s = '''never closed\n",
    b"def f():\n    return (1,\n",  # a bracket never closed
], ids=["tab", "crlf", "coding", "unterminated-string", "unclosed-bracket"])
def test_no_outline_where_the_scan_cannot_be_sure(source):
    assert outline(source) is None
    assert index.outline_summary(source, "m.py") is None


@pytest.mark.skipif(sys.version_info < (3, 12), reason="quotes nest in f-strings from Python 3.12")
def test_no_outline_of_f_strings_where_quotes_nest():
    assert outline(b'def f(x):\n    return f"{x["k"]}"\n') is None


def test_a_syntax_error_in_a_body_shows_when_the_body_is_parsed():
    src = b"def f():\n    x = = 1\n\n\ndef g():\n    return 1\n"
    light, _ = index.outline_summary(src, "m.py")
    assert set(light.functions) == {"f", "g"} and light.error is None
    assert index.function_body(light, "f", src.split(b"\n")) is None  # then the module is parsed whole
    assert index.light_summary(src, "m.py").error == "m.py:2: syntax error: invalid syntax"


def _json(proj: Project, roots: list[str], lazy: bool, **options) -> str:
    if lazy:
        with proj.parsing_ahead():
            graph = call_graph(proj, roots, **options)
    else:
        graph = call_graph(proj, roots, **options)
    return render(graph, "json")


def _program_roots(proj: Project) -> list[str]:
    proj.index_all(jobs=1)
    return sorted(f"{m.module}.{qn}" for m in proj.loaded_modules() for qn in m.functions)


@pytest.mark.parametrize("program", [OUTLINED, *sorted(p for p in CALLGRAPH.iterdir() if p.is_dir())],
                         ids=lambda p: p.name)
def test_a_lazy_map_is_the_map_of_whole_parses(program, tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    source = package_source(program)
    roots = _program_roots(Project(source, use_cache=False))
    for options in ({"depth": 1, "external": True, "closures": "separate"}, {"depth": 2}, {"depth": 2, "exact": True}):
        whole = _json(Project(source, use_cache=False), roots, lazy=False, **options)
        lazy = Project(source)
        assert _json(lazy, roots, lazy=True, **options) == whole, options
        lazy.save()
        # the next process reads the outlined modules and their bodies from the pack
        assert _json(Project(source), roots, lazy=False, **options) == whole, options
    # lambdas as nodes of their own (`--lambdas nodes`)
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "nodes"))
    options = {"depth": 1, "external": True, "closures": "separate"}
    whole = _json(Project(source, use_cache=False, lambdas="nodes"), roots, lazy=False, **options)
    assert _json(Project(source, lambdas="nodes"), roots, lazy=True, **options) == whole
    # after `index` (light summaries in the pack), the bodies are parsed one by one as well
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "indexed"))
    Project(source).store.refresh(jobs=1)
    for options in ({"depth": 1, "external": True, "closures": "separate"}, {"depth": 2}):
        whole = _json(Project(source, use_cache=False), roots, lazy=False, **options)
        assert _json(Project(source), roots, lazy=True, **options) == whole, options


@pytest.mark.slow
@pytest.mark.parametrize("version", [OLD, RECENT])
def test_a_lazy_map_of_a_release_is_the_map_of_whole_parses(version, sglang_source, tmp_path, monkeypatch):
    source = sglang_source(version)  # (the release from the shared cache, then a cache of this test's)
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    roots = ["sglang.srt.managers.scheduler.Scheduler.run_batch"]
    edges = []
    for options in ({"depth": 2}, {"depth": 2, "exact": True}, {"depth": 1, "closures": "separate"}):
        whole = json.loads(_json(Project(source, use_cache=False), roots, lazy=False, **options))
        lazy = json.loads(_json(Project(source), roots, lazy=True, **options))
        assert lazy == whole, options
        edges.append(len(whole["edges"]))
    assert edges[0] > edges[1] > 0 and edges[0] > edges[2] > 0


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning")  # (the release's own source)
def test_every_module_of_a_release_outlines_to_its_light_summary(sglang_source):
    root = sglang_source(RECENT).root
    rels = sorted(str(p.relative_to(root)) for p in (root / "sglang").rglob("*.py"))
    outlined, differ = 0, []
    for rel in rels:
        src = (root / rel).read_bytes()
        found = index.outline_summary(src, rel)
        if found is not None:
            outlined += 1
            if _pickled(found[0]) != _pickled(index.light_summary(src, rel)):
                differ.append(rel)
    assert differ == []
    assert outlined > 0.95 * len(rels)  # the files no outline is made of are parsed whole


def test_a_syntax_error_in_a_body_is_reported_once_that_body_is_needed(tmp_path, monkeypatch):
    from spectrace.tracer.modules import ModuleStore
    from spectrace.tracer.summary_cache import SummaryCache

    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text("from pkg.broken import g, h\n\n\ndef main():\n    return g()\n\n\ndef other():\n"
                                 "    return h()\n")
    (pkg / "broken.py").write_text("def g():\n    return 1\n\n\ndef h():\n    x = = 1\n    return x\n")
    source = package_source(pkg)
    proj = Project(source)
    with proj.parsing_ahead():
        call_graph(proj, ["pkg.main.main"], depth=2)
        assert proj.errors == []  # the outline hides it: no body of broken.py was needed
        call_graph(proj, ["pkg.main.other"], depth=2)
    assert proj.errors == ["pkg/broken.py:6: syntax error: invalid syntax"]
    proj.save()
    # `index` summarises an outlined module again: the pack hides no error from it
    stats = ModuleStore(tmp_path, SummaryCache(), ("pkg",)).refresh(jobs=1)
    assert [s[2] for s in stats if s[2]] == ["pkg/broken.py:6: syntax error: invalid syntax"]


def test_a_field_map_after_a_lazy_map_parses_only_the_bodies_naming_the_field(tmp_path, monkeypatch):
    from spectrace.tracer.graph import field_graph

    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text("from pkg.work import Worker\n\n\ndef main():\n    return Worker().step()\n")
    (pkg / "work.py").write_text(
        "class Worker:\n    def step(self):\n        return 1\n\n    def write(self):\n        self.draft = 2\n\n"
        "    def read(self):\n        return self.draft\n\n    def unrelated(self, xs):\n        return [x for x in xs]\n\n"
        "    def nested(self):\n        def inner():\n            return 3\n        return inner\n")
    source = package_source(pkg)
    lazy = Project(source)
    with lazy.parsing_ahead():
        call_graph(lazy, ["pkg.main.main"], depth=2)
    lazy.save()
    whole = render(field_graph(Project(source, use_cache=False), "draft"), "json")
    proj = Project(source)
    assert render(field_graph(proj, "draft"), "json") == whole
    work = proj.module("pkg.work")
    pending = sorted(qn for qn, f in dict.items(work.functions) if index.body_pending(f))
    # the bodies that do not name the field stay unparsed (a nested definition's among them)
    assert pending == ["Worker.nested", "Worker.unrelated"]
    assert json.loads(whole)["edges"]


def test_a_lazy_caller_search_finds_the_calls_whole_parses_find(tmp_path, monkeypatch):
    """A parameter is typed from the calls of its function, found by the callers' texts: by its
    name, through a global alias, a subscript or a call's result, or a parameter it is passed to."""
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kinds.py").write_text("".join(
        f"class {k}:\n    def step(self):\n        return 1\n\n\n" for k in ("A", "B", "C", "D", "E")))
    (pkg / "use.py").write_text(
        "def use(w):\n    return w.step()\n\n\ndef via_param(w):\n    return w.step()\n\n\n"
        "def other(w):\n    return w.step()\n")
    (pkg / "main.py").write_text(
        "from pkg.kinds import A, B, C, D, E\nfrom pkg.use import use, via_param, other\n\n"
        "alias = other\n\n\n"
        "def main():\n    use(A())\n    run(B())\n    third()\n    apply(via_param, D())\n\n\n"
        "def run(x):\n    alias(x)\n\n\ndef third():\n    pick()(C())\n\n\n"
        "def pick():\n    handlers = [use]\n    return handlers[0]\n\n\n"
        "def apply(cb, x):\n    cb(x)\n\n\ndef unrelated(y):\n    return [v for v in y]\n")
    source = package_source(pkg)
    roots = ["pkg.use.use", "pkg.use.via_param", "pkg.use.other"]
    whole = _json(Project(source, use_cache=False), roots, lazy=False, depth=1)
    lazy = Project(source)
    assert _json(lazy, roots, lazy=True, depth=1) == whole
    assert all(f"pkg.kinds.{k}.step" in whole for k in "ABCD")
    main = lazy.module("pkg.main")
    # the callers the searches can use are parsed, the one that names none of them is not
    assert [qn for qn, f in dict.items(main.functions) if index.body_pending(f)] == ["unrelated"]
