"""Renderers, on call graphs built here with the schema of docs/design.md.

The graphs are spectrace's own data structure (what tracer/graph.py produces), so building them by
hand is the honest way to pin every marker the renderers must show; each output is parsed back.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import xml.etree.ElementTree as ET

import networkx as nx
import pytest

from spectrace.errors import SpectraceError
from spectrace.tracer import render as render_mod
from spectrace.tracer.render import available_formats, format_for_path, render

SVG = "{http://www.w3.org/2000/svg}"
SCHED = "sglang.srt.managers.scheduler"
MIXIN = "sglang.srt.managers.scheduler_metrics_mixin"
TP = "sglang.srt.managers.tp_worker"
EAGLE2 = "sglang.srt.speculative.eagle_worker_v2"
RUN_BATCH = f"{SCHED}.Scheduler.run_batch"
RECORD = f"{MIXIN}.SchedulerMetricsMixin.record_forward_metrics"
TP_FBG = f"{TP}.TpModelWorker.forward_batch_generation"
EAGLE2_FBG = f"{EAGLE2}.EAGLEWorkerV2.forward_batch_generation"
EAGLE2_VERIFY = f"{EAGLE2}.EAGLEWorkerV2.verify"
DRAFT = f"{EAGLE2}.EagleDraftWorker.draft"
UNRESOLVED = f"?{RUN_BATCH}@2325:20"
EXTERNAL = "torch.cuda.synchronize"

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def code_node(g, qn, kind, line, cls=None, side="scheduler"):
    module = qn.rsplit(".", 2 if cls else 1)[0]
    g.add_node(qn, kind=kind, file=module.replace(".", "/") + ".py", line=line, module=module,
               cls=f"{module}.{cls}" if cls else None, side=side,
               label=f"{cls}.{qn.rsplit('.', 1)[-1]}" if cls else qn.rsplit(".", 1)[-1])


def call(g, src, dst, line, resolution, text, polymorphic=False):
    cross = {g.nodes[src]["side"], g.nodes[dst]["side"]} == {"scheduler", "worker"}
    g.add_edge(src, dst, file=g.nodes[src]["file"], line=line, sites=[line], resolution=resolution,
               polymorphic=polymorphic, call=text, cross=cross)


@pytest.fixture
def call_graph() -> nx.DiGraph:
    """run_batch -> mixin method, two polymorphic worker targets, an unresolved and an external call;
    EAGLEWorkerV2.verify <-> EagleDraftWorker.draft form a cycle."""
    g = nx.DiGraph()
    code_node(g, RUN_BATCH, "method", 2278, "Scheduler")
    code_node(g, RECORD, "method", 759, "SchedulerMetricsMixin")
    code_node(g, TP_FBG, "method", 431, "TpModelWorker", side="worker")
    code_node(g, EAGLE2_FBG, "method", 650, "EAGLEWorkerV2", side="worker")
    code_node(g, EAGLE2_VERIFY, "method", 700, "EAGLEWorkerV2", side="worker")
    code_node(g, DRAFT, "method", 300, "EagleDraftWorker", side="worker")
    g.add_node(UNRESOLVED, kind="unresolved", file="sglang/srt/managers/scheduler.py", line=2325, module=None,
               cls=None, side="other", label="self.forward_stream.wait_stream()")
    g.add_node(EXTERNAL, kind="external", file=None, line=None, module="torch.cuda", cls=None, side="other",
               label=EXTERNAL)
    call(g, RUN_BATCH, RECORD, 2300, "self", "self.record_forward_metrics(batch)")
    fbg = "self.model_worker.forward_batch_generation(model_worker_batch)"
    call(g, RUN_BATCH, TP_FBG, 2328, "polymorphic", fbg, polymorphic=True)
    call(g, RUN_BATCH, EAGLE2_FBG, 2328, "polymorphic", fbg, polymorphic=True)
    call(g, RUN_BATCH, UNRESOLVED, 2325, "unresolved", "self.forward_stream.wait_stream()")
    call(g, RUN_BATCH, EXTERNAL, 2330, "external", "torch.cuda.synchronize()")
    call(g, EAGLE2_FBG, EAGLE2_VERIFY, 660, "self", "self.verify(batch)")
    call(g, EAGLE2_VERIFY, DRAFT, 710, "attr-type", "self.draft_worker.draft(batch)")
    call(g, DRAFT, EAGLE2_VERIFY, 320, "attr-type", "self.target_worker.verify(batch)")
    g.graph.update(roots=[RUN_BATCH], source="SGLang 0.5.9 (test)", version="0.5.9", unresolved=1, depth=3)
    return g


@pytest.fixture
def field_map() -> nx.DiGraph:
    g = nx.DiGraph()
    field = "field:next_draft_input"
    g.add_node(field, kind="field", file=None, line=None, module=None, cls=None, side="other",
               label="next_draft_input")
    code_node(g, EAGLE2_FBG, "method", 650, "EAGLEWorkerV2", side="worker")
    code_node(g, RUN_BATCH, "method", 2278, "Scheduler")
    code_node(g, f"{SCHED}.Scheduler.process_batch_result", "method", 2500, "Scheduler")
    g.add_edge(EAGLE2_FBG, field, file="sglang/srt/speculative/eagle_worker_v2.py", line=690, sites=[690],
               resolution="writes", polymorphic=False, call="next_draft_input =", cross=False)
    for consumer, line in ((RUN_BATCH, 2340), (f"{SCHED}.Scheduler.process_batch_result", 2510)):
        g.add_edge(field, consumer, file="sglang/srt/managers/scheduler.py", line=line, sites=[line],
                   resolution="reads", polymorphic=False, call=".next_draft_input", cross=False)
    g.graph.update(roots=[field], field="next_draft_input",
                   owners=["sglang.srt.managers.utils.GenerationBatchResult"], unresolved=0, version="0.5.9")
    return g


def svg_tree(svg: bytes):
    root = ET.fromstring(svg)
    groups = {}
    for g in root.iter(f"{SVG}g"):
        title = g.find(f"{SVG}title")
        groups.setdefault(g.get("class", "").split(" ")[0], []).append((g.get("class", ""), title.text if title is not None else None, g))
    return root, groups


def node_x(g_element) -> float:
    """The centre of a node: the x of its (first) text element."""
    return float(next(g_element.iter(f"{SVG}text")).get("x"))


# ----------------------------------------------------------------------------- formats


def test_available_formats_and_suffixes():
    formats = available_formats()
    assert {"text", "json", "mermaid", "dot"} <= set(formats)
    assert ("svg" in formats) == (shutil.which("dot") is not None)
    assert format_for_path("loop.svg") == "svg" and format_for_path("x.PNG") == "png"
    assert format_for_path("g.gv") == "dot" and format_for_path("m.mmd") == "mermaid"
    assert format_for_path(None) == "text" and format_for_path("noext", default="json") == "json"


def test_unknown_format_is_a_one_line_error(call_graph):
    with pytest.raises(SpectraceError, match="unknown format 'gif'"):
        render(call_graph, "gif")


def test_missing_dot_says_how_to_install_and_other_formats_still_work(call_graph, monkeypatch):
    monkeypatch.setattr(render_mod.shutil, "which", lambda name: None)
    assert available_formats() == ["text", "dot", "json", "mermaid"]
    for fmt in ("svg", "png"):
        with pytest.raises(SpectraceError) as err:
            render(call_graph, fmt)
        assert "apt-get install graphviz" in str(err.value) and "brew install graphviz" in str(err.value)
        assert "conda" in str(err.value)
    for fmt in ("dot", "json", "text", "mermaid"):
        assert isinstance(render(call_graph, fmt), str)


# ----------------------------------------------------------------------------- text


def test_text_tree_marks_polymorphic_unresolved_and_shows_cycles_once(call_graph):
    text = render(call_graph, "text")
    lines = text.splitlines()
    assert lines[0].startswith("# Scheduler.run_batch")
    assert lines[2].startswith("Scheduler.run_batch  sglang/srt/managers/scheduler.py:2278")
    tp = next(line for line in lines if "TpModelWorker.forward_batch_generation" in line)
    assert "[polymorphic]" in tp and "[cross]" in tp and tp.startswith("├── ")
    unresolved = next(line for line in lines if "wait_stream" in line)
    assert "[unresolved]" in unresolved and unresolved.endswith("scheduler.py:2325")
    assert "[external]" in next(line for line in lines if "torch.cuda.synchronize" in line)
    # children in call-site order: record (2300) < unresolved (2325) < worker calls (2328)
    order = [i for i, line in enumerate(lines) for key in ("record_forward_metrics", "wait_stream", "TpModelWorker")
             if key in line]
    assert order == sorted(order)
    # the cycle verify -> draft -> verify is cut where it closes, each node expanded once
    verify_lines = [line for line in lines if "EAGLEWorkerV2.verify" in line]
    assert len(verify_lines) == 2 and verify_lines[1].endswith("(cycle)")
    assert sum("EagleDraftWorker.draft" in line for line in lines) == 1
    assert lines[-1] == "# 6 functions, 7 calls, 2 polymorphic, 2 crossing scheduler/worker, 1 unresolved, 1 external"


def test_text_refers_back_to_a_node_already_expanded(call_graph):
    # TpModelWorker.forward_batch_generation is reached twice; its callees are listed once.
    call(call_graph, RECORD, TP_FBG, 770, "attr-type", "self.tp_worker.forward_batch_generation(b)")
    call(call_graph, TP_FBG, EXTERNAL, 440, "external", "torch.cuda.synchronize()")
    text = render(call_graph, "text")
    tp_lines = [line for line in text.splitlines() if "TpModelWorker.forward_batch_generation" in line]
    assert len(tp_lines) == 2 and tp_lines[1].endswith("(see above)")


def test_text_field_map_lists_writers_then_readers(field_map):
    lines = render(field_map, "text").splitlines()
    assert lines[0] == "# field map: next_draft_input (GenerationBatchResult)  ·  SGLang 0.5.9"
    assert lines[1:] == [
        "next_draft_input",
        "  writes (1):",
        "    EAGLEWorkerV2.forward_batch_generation  sglang/srt/speculative/eagle_worker_v2.py:690",
        "  reads (2):",
        "    Scheduler.run_batch  sglang/srt/managers/scheduler.py:2340",
        "    Scheduler.process_batch_result  sglang/srt/managers/scheduler.py:2510",
        "# 3 functions, 1 writing, 2 reading",
    ]


# ----------------------------------------------------------------------------- json


def test_json_is_node_link_and_round_trips(call_graph, tmp_path):
    out = tmp_path / "g.json"
    text = render(call_graph, "json", out)
    assert out.read_text() == text
    data = json.loads(text)
    assert {n["id"] for n in data["nodes"]} == set(call_graph)
    back = nx.node_link_graph(data, edges="edges")
    assert set(back.edges) == set(call_graph.edges)
    assert back.nodes[RUN_BATCH]["file"] == "sglang/srt/managers/scheduler.py" and back.nodes[RUN_BATCH]["line"] == 2278
    edge = back.edges[RUN_BATCH, EAGLE2_FBG]
    assert (edge["file"], edge["line"], edge["resolution"], edge["polymorphic"]) == (
        "sglang/srt/managers/scheduler.py", 2328, "polymorphic", True)
    assert back.graph["roots"] == [RUN_BATCH] and back.graph["unresolved"] == 1


# ----------------------------------------------------------------------------- dot / svg / png


def test_dot_source_has_side_module_and_class_clusters(call_graph):
    dot = render(call_graph, "dot")
    assert "rankdir=LR" in dot
    assert "subgraph cluster_side_scheduler" in dot and "subgraph cluster_side_worker" in dot
    fills = {side: dot.split(f"subgraph cluster_side_{side}")[1].split("fillcolor=")[1].split()[0]
             for side in ("scheduler", "worker")}
    assert fills["scheduler"] != fills["worker"]
    assert "srt/managers/scheduler_metrics_mixin.py" in dot  # a mixin is its own module cluster
    assert "<B>SchedulerMetricsMixin</B>" in dot and "<B>EAGLEWorkerV2</B>" in dot
    assert "legend" in dot
    # the legend counts what the text's summary line counts, in the same words
    assert (">6 functions, 7 calls, 2 polymorphic, 2 crossing scheduler/worker, 1 unresolved, 1 external<"
            in dot)


@needs_dot
def test_svg_nodes_edges_and_classes(call_graph, tmp_path):
    svg = render(call_graph, "svg", tmp_path / "g.svg")
    assert (tmp_path / "g.svg").read_bytes() == svg
    _, groups = svg_tree(svg)
    titles = {title for _, title, _ in groups["node"]}
    assert {RUN_BATCH, RECORD, TP_FBG, EAGLE2_FBG, EAGLE2_VERIFY, DRAFT, EXTERNAL} <= titles
    assert UNRESOLVED.replace(":", "%3A") in titles  # dot ids cannot hold ':' (port syntax)
    edges = {title: cls.split() for cls, title, _ in groups["edge"]}
    poly = edges[f"{RUN_BATCH}->{EAGLE2_FBG}"]
    assert {"polymorphic", "cross", "resolution-polymorphic"} <= set(poly)
    assert "unresolved" in edges[f"{RUN_BATCH}->{UNRESOLVED.replace(':', '%3A')}"]
    assert "external" in edges[f"{RUN_BATCH}->{EXTERNAL}"]
    assert "cross" not in edges[f"{RUN_BATCH}->{RECORD}"]
    clusters = {title for _, title, _ in groups["cluster"]}
    assert {"cluster_side_scheduler", "cluster_side_worker"} <= clusters
    root_classes = next(cls for cls, title, _ in groups["node"] if title == RUN_BATCH)
    assert "root" in root_classes.split()
    # the polymorphic edges carry their receiver as a label
    poly_g = next(g for cls, title, g in groups["edge"] if title == f"{RUN_BATCH}->{TP_FBG}")
    assert any(t.text == "poly: self.model_worker" for t in poly_g.iter(f"{SVG}text"))


@needs_dot
def test_svg_draws_the_two_sides_as_separate_differently_filled_boxes(call_graph):
    _, groups = svg_tree(render(call_graph, "svg"))
    boxes = {}
    for _, title, g in groups["cluster"]:
        if title in ("cluster_side_scheduler", "cluster_side_worker"):
            shape = next(e for e in g.iter() if e.tag in (f"{SVG}path", f"{SVG}polygon"))
            points = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", shape.get("d") or shape.get("points"))]
            xs, ys = points[0::2], points[1::2]
            boxes[title] = (min(xs), min(ys), max(xs), max(ys), shape.get("fill"))
    sched, worker = boxes["cluster_side_scheduler"], boxes["cluster_side_worker"]
    assert sched[4] != worker[4]
    apart = sched[2] < worker[0] or worker[2] < sched[0] or sched[3] < worker[1] or worker[3] < sched[1]
    assert apart, boxes
    x = {title: node_x(g) for _, title, g in groups["node"]}
    assert x[RUN_BATCH] < x[TP_FBG]  # left to right: the caller before its callees


@needs_dot
def test_many_unresolved_calls_of_one_caller_become_one_grey_list(call_graph):
    for i, text in enumerate(("logger.info()", "self.device_module.Event()", "emb.to()")):
        uid = f"?{RUN_BATCH}@{2400 + i}:8"
        call_graph.add_node(uid, kind="unresolved", file="sglang/srt/managers/scheduler.py", line=2400 + i,
                            module=None, cls=None, side="other", label=text)
        call(call_graph, RUN_BATCH, uid, 2400 + i, "unresolved", text)
    _, groups = svg_tree(render(call_graph, "svg"))
    bundle = next(g for cls, _, g in groups["node"] if "bundle" in cls.split())
    texts = [t.text for t in bundle.iter(f"{SVG}text")]
    assert any("logger.info()" in t for t in texts) and any("wait_stream" in t for t in texts)
    bundle_edge = next(g for cls, title, g in groups["edge"] if title.endswith("%3Aunresolved"))
    assert any(t.text == "4 unresolved" for t in bundle_edge.iter(f"{SVG}text"))


@needs_dot
def test_png_header_and_size(call_graph, tmp_path):
    png = render(call_graph, "png", tmp_path / "g.png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    assert width > 400 and height > 200
    assert (tmp_path / "g.png").stat().st_size == len(png)


@needs_dot
def test_field_map_draws_producers_field_consumers_left_to_right(field_map):
    _, groups = svg_tree(render(field_map, "svg"))
    x = {title: node_x(g) for _, title, g in groups["node"]}
    field = "field%3Anext_draft_input"
    assert x[EAGLE2_FBG] < x[field] < min(x[RUN_BATCH], x[f"{SCHED}.Scheduler.process_batch_result"])
    edges = {title: cls.split() for cls, title, _ in groups["edge"]}
    assert "writes" in edges[f"{EAGLE2_FBG}->{field}"] and "reads" in edges[f"{field}->{RUN_BATCH}"]
    clusters = {title for _, title, _ in groups["cluster"]}
    assert {"cluster_producers", "cluster_consumers"} <= clusters


# ----------------------------------------------------------------------------- mermaid


def test_mermaid_flowchart_with_nested_subgraphs_and_styled_links(call_graph):
    text = render(call_graph, "mermaid")
    lines = [line.strip() for line in text.splitlines() if not line.startswith("%%")]
    assert lines[0] == "flowchart LR"
    subgraphs = [line for line in lines if line.startswith("subgraph ")]
    assert 'subgraph side_scheduler["scheduler side"]' in subgraphs
    assert 'subgraph side_worker["worker side"]' in subgraphs
    assert any(line.endswith('["srt/managers/scheduler_metrics_mixin.py"]') for line in subgraphs)
    assert any(line.endswith('["EAGLEWorkerV2"]') for line in subgraphs)
    assert lines.count("end") == len(subgraphs)
    links = [line for line in lines if "-->" in line or ".->" in line]
    assert len(links) == call_graph.number_of_edges()
    poly = [line for line in links if '-.->|"poly: self.model_worker"|' in line]
    assert len(poly) == 2
    link_styles = [line for line in lines if line.startswith("linkStyle")]
    assert sum("stroke:#d62728" in line for line in link_styles) == 2  # the two crossing edges
    assert any(":::unresolved" in line and "wait_stream()" in line for line in lines)
    assert any(":::root" in line and "run_batch" in line for line in lines)
    assert any(line.startswith("style side_worker fill:") for line in lines)


def test_mermaid_escapes_quotes_and_brackets():
    g = nx.DiGraph()
    g.add_node("a.f", kind="function", file="sglang/a.py", line=1, module="a", cls=None, side="other", label="f")
    g.add_node("?a.f@2:0", kind="unresolved", file="sglang/a.py", line=2, module=None, cls=None, side="other",
               label='d["k"] <x>|y')
    g.add_edge("a.f", "?a.f@2:0", file="sglang/a.py", line=2, sites=[2], resolution="unresolved",
               polymorphic=False, call='d["k"]()', cross=False)
    text = render(g, "mermaid")
    node_line = next(line for line in text.splitlines() if ":::unresolved" in line)
    assert node_line.strip() == 'n1>"d[#quot;k#quot;] #lt;x#gt;#124;y"]:::unresolved'


@needs_dot
def test_lambda_nodes_are_drawn_and_escaped_in_every_format():
    """``--lambdas nodes`` names a lambda ``f.<lambda1>``: the angle brackets survive dot, svg and mermaid."""
    g = nx.DiGraph()
    code_node(g, "m.f", "function", 1, side="other")
    code_node(g, "m.f.<lambda1>", "function", 2, side="other")
    g.nodes["m.f.<lambda1>"].update(label="f.<lambda1>", module="m", file="m.py")
    call(g, "m.f", "m.f.<lambda1>", 3, "lambda", "x()")
    g.graph.update(roots=["m.f"], unresolved=0, depth=1, source="m", version=None)
    _, groups = svg_tree(render(g, "svg"))
    assert "m.f.<lambda1>" in {title for _, title, _ in groups["node"]}
    assert "m.f->m.f.<lambda1>" in {title for _, title, _ in groups["edge"]}
    mermaid = render(g, "mermaid")
    assert "#lt;lambda1#gt;" in mermaid and "<lambda1>" not in mermaid
    assert "m.f.<lambda1>" in {n["id"] for n in json.loads(render(g, "json"))["nodes"]}


# --------------------------------------------------------------------------- views: collapse and fold


def small_tree():
    """m.r -> K.a, K.b, L.c (in call order); K.a -> m.d, m.e; L.c -> an unresolved call."""
    from spectrace.tracer.render import summary_line

    g = nx.DiGraph()
    for qn, cls in (("m.r", None), ("m.K.a", "m.K"), ("m.K.b", "m.K"), ("m.L.c", "m.L"), ("m.d", None), ("m.e", None)):
        g.add_node(qn, kind="method" if cls else "function", file="m.py", line=1, module="m", cls=cls,
                   side="scheduler", label=qn[2:])
    g.add_node("?m.L.c@9:0", kind="unresolved", file="m.py", line=9, module=None, cls=None, side="other", label="x.y()")
    for i, (u, v) in enumerate((("m.r", "m.K.a"), ("m.r", "m.K.b"), ("m.r", "m.L.c"), ("m.K.a", "m.d"),
                                ("m.K.a", "m.e"), ("m.K.a", "m.K.b"), ("m.L.c", "?m.L.c@9:0"))):
        g.add_edge(u, v, file="m.py", line=i + 1, sites=[i + 1], polymorphic=False, cross=False, call="f()",
                   resolution="unresolved" if v.startswith("?") else "import")
    g.graph.update(roots=["m.r"], unresolved=1, depth=2, source="m", version=None)
    return g, summary_line(g)


def test_fold_keeps_the_nodes_nearest_the_roots_and_counts_the_rest_per_caller():
    from spectrace.tracer.views import fold

    g, whole = small_tree()
    shown = fold(g, 4)
    assert set(shown) == {"m.r", "m.K.a", "m.K.b", "m.L.c", "?m.L.c@9:0", "+more:m.K.a"}
    assert shown.nodes["+more:m.K.a"]["label"] == "+2 more"
    assert shown.nodes["+more:m.K.a"]["members"] == ["m.d", "m.e"]
    assert shown.graph["folded"] == {"drawn": 4, "of": 6, "max_nodes": 4}
    assert render_mod.summary_line(shown) == whole  # the legend counts the whole graph
    assert fold(g, 6) is g


def test_collapse_by_class_and_module_counts_calls_per_arrow():
    from spectrace.tracer.views import collapse

    g, whole = small_tree()
    by_class = collapse(g, "class")
    assert set(by_class) == {"m.r", "m.K", "m.L", "m.d", "m.e", "?m.L"}
    assert by_class.edges["m.r", "m.K"]["count"] == 2  # r -> a, r -> b
    assert by_class.edges["m.K", "m.d"]["count"] == 1
    assert not by_class.has_edge("m.K", "m.K")  # a -> b stays inside K
    assert by_class.nodes["?m.L"]["label"] == "1 unresolved"
    by_module = collapse(g, "module")
    assert set(by_module) == {"m", "?m"} and by_module.graph["roots"] == ["m"]
    assert render_mod.summary_line(by_module) == whole
    dot = render(by_class, "dot")
    assert "×2" in dot


def test_json_keeps_everything_and_drawings_get_the_default_budget():
    from spectrace.tracer.views import DEFAULT_MAX_NODES, for_display

    g, _ = small_tree()
    assert for_display(g, "json", "class", 2) is g
    assert for_display(g, "text") is g  # text: no budget unless asked
    assert len(for_display(g, "text", None, 2)) < len(g)
    big = nx.DiGraph(roots=["n0"])
    for i in range(DEFAULT_MAX_NODES + 10):
        big.add_node(f"n{i}", kind="function", module="m", side="other", cls=None, file="m.py", line=i)
        if i:
            big.add_edge("n0", f"n{i}", line=i, resolution="import")
    shown = for_display(big, "svg")
    assert shown.graph["folded"]["drawn"] == DEFAULT_MAX_NODES
    assert shown.nodes["+more:n0"]["label"] == "+10 more"


@needs_dot
def test_a_large_drawing_fits_one_screen():
    from spectrace.tracer.views import for_display

    big = nx.DiGraph(roots=["m.n0"], source="m")
    for i in range(120):
        big.add_node(f"m.n{i}", kind="function", module="m", side="scheduler", cls=None, file="m.py", line=i,
                     label=f"n{i}")
    for i in range(1, 120):
        big.add_edge(f"m.n{(i - 1) // 6}", f"m.n{i}", line=i, sites=[i], resolution="import", call="f()",
                     polymorphic=False, cross=False, file="m.py")
    svg = render(for_display(big, "svg"), "svg").decode()
    width, height = (float(x) for x in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
    assert width <= 2000 and height <= 1400
