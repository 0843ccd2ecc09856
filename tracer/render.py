"""Render call graphs and field maps (networkx DiGraphs, schema in docs/design.md).

``render(graph, fmt, out_path=None)`` returns the rendering (``str`` for text, json, mermaid and
dot; ``bytes`` for svg and png) and writes it to ``out_path`` when one is given.

The Graphviz drawing groups nodes the way a reader of SGLang thinks about them: one big cluster
per side of the scheduler/worker boundary (different fills), inside it one cluster per module and
inside that one per class. Edges that cross the boundary are thick and red, polymorphic edges
(one per possible target of a dispatch) dashed, purple (red when they also cross) and labelled
with the receiver, unresolved calls grey dashed to small plaintext nodes holding the call text
(one grey list per caller when it has many). A field map (graph attribute ``field``) is drawn
producers | field | consumers from left to right.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from spectrace.errors import SpectraceError

if TYPE_CHECKING:
    import networkx as nx

FORMATS = ("text", "dot", "svg", "png", "json", "mermaid")
GRAPHVIZ_FORMATS = ("svg", "png")
SUFFIX_FORMATS = {
    ".txt": "text", ".dot": "dot", ".gv": "dot", ".svg": "svg", ".png": "png",
    ".json": "json", ".mmd": "mermaid", ".mermaid": "mermaid", ".md": "mermaid",
}
INSTALL_DOT = (
    "drawing {fmt} needs Graphviz's `dot` program, which is not on PATH; install it with "
    "`apt-get install graphviz`, `brew install graphviz` or `conda install -c conda-forge graphviz` "
    "(--format dot, json, text and mermaid work without it)"
)

# Colours: one fill per side, a darker border of the same hue; edges by meaning.
SIDE_STYLE = {
    "scheduler": {"label": "scheduler side", "fill": "#e4edfb", "module": "#f4f8fe", "border": "#5b7fc7"},
    "worker": {"label": "worker side", "fill": "#fdebd3", "module": "#fff7ec", "border": "#c9822b"},
    "other": {"label": "other modules", "fill": "#eeeeee", "module": "#f8f8f8", "border": "#9a9a9a"},
}
SIDE_ORDER = ("scheduler", "worker", "other")
CROSS_COLOR = "#d62728"
POLY_COLOR = "#8e44ad"
CALL_COLOR = "#5f6b7a"
UNRESOLVED_COLOR = "#9e9e9e"
EXTERNAL_FILL = "#e0e0e0"
ROOT_FILL = "#fff2a8"
WRITES_COLOR = "#2e7d32"
READS_COLOR = "#1565c0"
FIELD_FILL = "#ffd966"
FONT = "Helvetica"
MAX_CALL_TEXT = 48


def available_formats() -> list[str]:
    """The formats that can be produced here (svg and png need the system ``dot``)."""
    have_dot = shutil.which("dot") is not None
    return [f for f in FORMATS if have_dot or f not in GRAPHVIZ_FORMATS]


def format_for_path(path: str | Path | None, default: str = "text") -> str:
    """The format an output file's suffix asks for (``loop.svg`` -> ``svg``), else ``default``."""
    if path is None:
        return default
    return SUFFIX_FORMATS.get(Path(path).suffix.lower(), default)


def render(graph: nx.DiGraph, fmt: str, out_path: str | Path | None = None) -> bytes | str:
    """Render ``graph`` as ``fmt`` (one of ``FORMATS``); write it to ``out_path`` if given."""
    renderers = {
        "text": render_text, "json": render_json, "mermaid": render_mermaid, "dot": render_dot,
        "svg": lambda g: _graphviz_pipe(g, "svg"), "png": lambda g: _graphviz_pipe(g, "png"),
    }
    if fmt not in renderers:
        raise SpectraceError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    result = renderers[fmt](graph)
    if out_path is not None:
        path = Path(out_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(result, bytes):
            path.write_bytes(result)
        else:
            path.write_text(result, encoding="utf-8")
    return result


# --------------------------------------------------------------------------- shared helpers


def short_call(text: str | None, limit: int = MAX_CALL_TEXT) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def receiver(call_text: str | None) -> str:
    """``self.model_worker.forward_batch_generation(b)`` -> ``self.model_worker``."""
    callee = (call_text or "").split("(", 1)[0].strip()
    return callee.rsplit(".", 1)[0] if "." in callee else callee


def module_label(data: dict) -> str:
    """A module cluster's title: its file without the leading ``sglang/`` (``srt/managers/scheduler.py``)."""
    file = data.get("file")
    if file:
        return re.sub(r"^sglang/", "", str(file))
    return data.get("module") or "?"


def class_label(data: dict) -> str:
    cls, module = data.get("cls") or "", data.get("module") or ""
    return cls[len(module) + 1:] if module and cls.startswith(module + ".") else cls.rsplit(".", 1)[-1]


def display_name(node: str, data: dict) -> str:
    """What a reader calls a node: ``Scheduler.run_batch``, ``empty_context``, the call text."""
    kind = data.get("kind")
    if kind in ("unresolved", "external", "field", "more", "group"):
        return short_call(data.get("label") or node)
    if data.get("cls") and kind in ("method", "function"):
        return f"{class_label(data)}.{node.rsplit('.', 1)[-1]}"
    if kind == "class":
        return class_label(data) or node.rsplit(".", 1)[-1]
    module = data.get("module") or ""
    return node[len(module) + 1:] if module and node.startswith(module + ".") else node.rsplit(".", 1)[-1]


def location(data: dict) -> str:
    file, line = data.get("file"), data.get("line")
    if not file:
        return ""
    return f"{file}:{line}" if line else str(file)


def roots_of(graph: nx.DiGraph) -> list[str]:
    roots = [r for r in graph.graph.get("roots") or [] if r in graph]
    if roots:
        return roots
    roots = [n for n in graph if graph.in_degree(n) == 0]
    return roots or list(graph)[:1]


def is_field_map(graph: nx.DiGraph) -> bool:
    return bool(graph.graph.get("field")) or any(d.get("kind") == "field" for _, d in graph.nodes(data=True))


@dataclass(frozen=True)
class GraphCounts:
    """What a graph holds, counted once for every place that reports it (the text output's last
    line, mermaid's header comment, the picture's legend).

    ``functions`` are the analysed code nodes: functions, methods and classes called as
    constructors. The pseudo-nodes are not functions: an unresolved call's text is counted in
    ``unresolved`` and a callee outside SGLang in ``external``. ``calls`` are the resolved
    caller -> callee arrows (several call sites of one callee in one caller make one arrow).
    ``unresolved`` counts call sites whose target could not be found.
    """

    functions: int
    calls: int
    polymorphic: int
    crossing: int
    unresolved: int
    external: int
    writing: int  # field maps: producer arrows
    reading: int  # field maps: consumer arrows


def count(graph: nx.DiGraph) -> GraphCounts:
    kinds: dict = defaultdict(int)
    for _, data in graph.nodes(data=True):
        kinds[data.get("kind")] += 1
    resolutions: dict = defaultdict(int)
    polymorphic = crossing = 0
    for *_, data in graph.edges(data=True):
        resolutions[data.get("resolution")] += 1
        polymorphic += bool(data.get("polymorphic"))
        crossing += bool(data.get("cross"))
    return GraphCounts(
        functions=kinds["function"] + kinds["method"] + kinds["class"],
        calls=graph.number_of_edges() - resolutions["unresolved"],
        polymorphic=polymorphic,
        crossing=crossing,
        # the graph records every unresolved call site; two on one line and column share a node
        unresolved=graph.graph.get("unresolved", kinds["unresolved"]),
        external=kinds["external"],
        writing=resolutions["writes"],
        reading=resolutions["reads"],
    )


def summary_line(graph: nx.DiGraph) -> str:
    """``82 functions, 109 calls, 9 polymorphic, 16 crossing scheduler/worker, 19 unresolved``:
    the one wording of a graph's counts (see ``GraphCounts`` for what each counts). A graph made
    for display (``views``) answers the counts of the graph it was made from."""
    if graph.graph.get("summary"):
        return graph.graph["summary"]
    n = count(graph)
    if is_field_map(graph):
        return f"{n.functions} functions, {n.writing} writing, {n.reading} reading"
    parts = [f"{n.functions} functions", f"{n.calls} calls"]
    if n.polymorphic:
        parts.append(f"{n.polymorphic} polymorphic")
    if n.crossing:
        parts.append(f"{n.crossing} crossing scheduler/worker")
    parts.append(f"{n.unresolved} unresolved")
    if n.external:
        parts.append(f"{n.external} external")
    return ", ".join(parts)


def title(graph: nx.DiGraph) -> str:
    if is_field_map(graph):
        head = f"field map: {graph.graph.get('field') or '?'}"
        owners = graph.graph.get("owners")
        if owners:
            head += " (" + ", ".join(o.rsplit(".", 1)[-1] for o in owners) + ")"
    else:
        names = [display_name(r, graph.nodes[r]) for r in roots_of(graph)]
        head = ", ".join(names)
        if graph.graph.get("depth") is not None:
            head += f"  depth {graph.graph['depth']}"
    # "SGLang 0.5.9" or, for --source, the package and its version ("click 8.5.1")
    what = (graph.graph.get("source") or "").split(" (")[0].removesuffix(" unknown")
    if not what and graph.graph.get("version"):
        what = f"SGLang {graph.graph['version']}"
    return f"{head}  ·  {what}" if what else head


def ordered_successors(graph: nx.DiGraph, node: str) -> list[str]:
    """Callees in the order of their first call site."""
    return sorted(graph.successors(node), key=lambda s: (graph.edges[node, s].get("line") or 0, s))


# --------------------------------------------------------------------------- text


def render_text(graph: nx.DiGraph) -> str:
    """An indented tree from the roots; a node already expanded is shown once, then referred to."""
    lines = [f"# {title(graph)}"]
    if graph.graph.get("source"):
        lines.append(f"# source: {graph.graph['source']}")
    if is_field_map(graph):
        return "\n".join(lines + _field_map_text(graph) + [f"# {summary_line(graph)}"]) + "\n"
    expanded: set[str] = set()

    def label(node: str, edge: dict | None) -> str:
        data = graph.nodes[node]
        kind = data.get("kind")
        text = display_name(node, data)
        markers = []
        if edge:
            if edge.get("polymorphic"):
                markers.append("[polymorphic]")
            if edge.get("cross"):
                markers.append("[cross]")
            if edge.get("resolution") in ("reads", "writes"):
                markers.append(f"[{edge['resolution']}]")
        if kind == "unresolved" or (edge and edge.get("resolution") == "unresolved"):
            markers.append("[unresolved]")
            where = f"{edge.get('file')}:{edge.get('line')}" if edge and edge.get("file") else location(data)
        else:
            where = location(data)
            if kind == "external":
                markers.append("[external]")
        out = text + (" " + " ".join(markers) if markers else "")
        return f"{out}  {where}" if where else out

    def walk(node: str, prefix: str, edge: dict | None, connector: str, on_path: set[str]):
        line = prefix + connector + label(node, edge)
        children = ordered_successors(graph, node)
        if node in on_path:
            lines.append(line + "  (cycle)")
            return
        if node in expanded and children:
            lines.append(line + "  (see above)")
            return
        lines.append(line)
        expanded.add(node)
        child_prefix = prefix + ("" if not connector else ("│   " if connector == "├── " else "    "))
        for i, child in enumerate(children):
            last = i == len(children) - 1
            walk(child, child_prefix, graph.edges[node, child], "└── " if last else "├── ", on_path | {node})

    for root in roots_of(graph):
        walk(root, "", None, "", set())
    # Nodes no root reaches (e.g. a cycle among non-roots) are still listed, never dropped.
    for node in graph:
        if node not in expanded and graph.in_degree(node) == 0 and node not in roots_of(graph):
            walk(node, "", None, "", set())
    lines.append(f"# {summary_line(graph)}")
    return "\n".join(lines) + "\n"


def _field_map_text(graph: nx.DiGraph) -> list[str]:
    """Producers (writes) and consumers (reads) of each field, with the sites' file:line."""
    lines = []
    for field in (n for n, d in graph.nodes(data=True) if d.get("kind") == "field"):
        lines.append(display_name(field, graph.nodes[field]))
        for heading, edges, end in (("writes", graph.in_edges(field, data=True), 0),
                                    ("reads", graph.out_edges(field, data=True), 1)):
            edges = sorted(edges, key=lambda e: (e[2].get("file") or "", e[2].get("line") or 0))
            lines.append(f"  {heading} ({len(edges)}):")
            for edge in edges:
                node = edge[end]
                sites = ",".join(str(s) for s in edge[2].get("sites") or [edge[2].get("line")])
                lines.append(f"    {display_name(node, graph.nodes[node])}  {edge[2].get('file')}:{sites}")
    return lines


# --------------------------------------------------------------------------- json


MAP_SCHEMA_VERSION = 1  # docs/schemas/map.schema.json; bump when a key changes meaning or goes


def render_json(graph: nx.DiGraph) -> str:
    """networkx node-link data (``node_link_data(graph, edges="edges")``, written out here so that the
    json output needs no networkx): node id = qualified name; edge file/line/resolution; every
    ``file`` relative to the source root. ``schema``/``schema_version`` name the layout."""
    data = {"schema": "spectrace-map", "schema_version": MAP_SCHEMA_VERSION,
            "directed": graph.is_directed(), "multigraph": graph.is_multigraph(), "graph": graph.graph,
            "nodes": [{**attrs, "id": node} for node, attrs in graph.nodes(data=True)],
            "edges": [{**attrs, "source": u, "target": v} for u, v, attrs in graph.edges(data=True)]}
    return json.dumps(data, indent=1, default=lambda o: sorted(o) if isinstance(o, (set, frozenset)) else str(o)) + "\n"


# --------------------------------------------------------------------------- cluster layout


def _cluster_key(graph: nx.DiGraph, node: str) -> tuple[str, str | None, str | None] | None:
    """(side, module, class) a node is drawn in; None for nodes outside every cluster."""
    data = graph.nodes[node]
    kind = data.get("kind")
    if kind in ("external", "field"):
        return None
    if kind in ("unresolved", "more"):
        # Drawn next to its caller, inside the caller's module, so the grey text stays close.
        callers = list(graph.predecessors(node))
        if len(callers) == 1 and _cluster_key(graph, callers[0]) is not None:
            side, module, _ = _cluster_key(graph, callers[0])
            return side, module, None
        return None
    side = data.get("side") if data.get("side") in SIDE_STYLE else "other"
    if kind == "group" and graph.graph.get("collapsed") == "module":
        return side, None, None  # a module drawn as one node sits in its side's box
    return side, data.get("module") or "?", data.get("cls")


def _group(graph: nx.DiGraph, nodes) -> dict:
    """side -> module -> class (or None) -> [nodes], in a stable order."""
    tree: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for node in nodes:
        key = _cluster_key(graph, node)
        if key is not None:
            side, module, cls = key
            tree[side][module][cls].append(node)
    return tree


# --------------------------------------------------------------------------- graphviz


def _dot_id(node: str) -> str:
    # python-graphviz reads "a:b" in an edge as node a, port b; unresolved and field ids hold colons.
    return node.replace(":", "%3A")


def _esc(text: str) -> str:
    import graphviz

    return graphviz.escape(text)


def _node_attrs(graph: nx.DiGraph, node: str, roots: set[str], in_class: bool) -> dict:
    data = graph.nodes[node]
    kind = data.get("kind")
    tooltip = _esc(f"{node}\n{location(data)}".strip())
    attrs = {"tooltip": tooltip, "class": f"node-{kind or 'unknown'}"}
    if kind == "more":
        members = data.get("members") or []
        names = ", ".join(display_name(m, {"kind": "?"}) if m.startswith("?") else m.rsplit(".", 1)[-1]
                          for m in members[:12])
        attrs.update(shape="box", style="dashed,rounded", fontsize="9", fontcolor="#555555", color="#9a9a9a",
                     label=_esc(data.get("label") or "more"), height="0.2",
                     tooltip=_esc(f"not drawn (--max-nodes): {names}" + (" …" if len(members) > 12 else "")))
        attrs["class"] += " more"
    elif kind == "group":
        n = len(data.get("members") or [])
        attrs["label"] = _esc(f"{data.get('label') or node}  ({n})")
        attrs["tooltip"] = _esc(f"{node}: {n} functions")
        if node in roots:
            attrs.update(fillcolor=ROOT_FILL, penwidth="2.2", fontsize="12", color="#8a6d00")
            attrs["class"] += " root"
    elif kind == "unresolved":
        attrs.update(shape="plaintext", style="", fontsize="9", fontcolor="#757575",
                     label=_esc(short_call(data.get("label") or node)), height="0.2", margin="0.02")
        attrs["class"] += " unresolved"
    elif kind == "external":
        attrs.update(shape="box", style="filled", fillcolor=EXTERNAL_FILL, color="#b0b0b0",
                     fontcolor="#555555", fontsize="9", label=_esc(short_call(data.get("label") or node)))
        attrs["class"] += " external"
    elif kind == "field":
        owners = graph.graph.get("owners") or data.get("owners") or []
        label = data.get("label") or node
        if owners:
            label += "\n" + ", ".join(o.rsplit(".", 1)[-1] for o in owners)
        attrs.update(shape="box", style="filled,bold,rounded", fillcolor=FIELD_FILL, color="#b8860b",
                     fontsize="15", penwidth="2", label=_esc(label), margin="0.2,0.1")
    else:
        name = node.rsplit(".", 1)[-1] if in_class and kind != "class" else display_name(node, data)
        if kind == "class":
            name = f"{name}()"
        attrs["label"] = _esc(name)
        if node in roots:
            attrs.update(fillcolor=ROOT_FILL, penwidth="2.2", fontsize="12", color="#8a6d00")
            attrs["class"] += " root"
    return attrs


def _edge_attrs(graph: nx.DiGraph, src: str, dst: str) -> dict:
    data = graph.edges[src, dst]
    resolution = data.get("resolution") or "unknown"
    sites = data.get("sites") or []
    where = f"{data.get('file')}:{data.get('line')}" if data.get("file") else ""
    more = f" (+{len(sites) - 1} more sites)" if len(sites) > 1 else ""
    tooltip = _esc(f"{short_call(data.get('call'), 120)}\n{where}{more}\nresolved: {resolution}".strip())
    classes = ["call", f"resolution-{resolution}"]
    attrs = {"tooltip": tooltip, "edgetooltip": tooltip, "color": CALL_COLOR}
    if resolution == "unresolved" or graph.nodes[dst].get("kind") == "unresolved":
        attrs.update(style="dashed", color=UNRESOLVED_COLOR, arrowhead="onormal", arrowsize="0.5", penwidth="0.8")
        classes.append("unresolved")
    elif graph.nodes[dst].get("kind") == "external" or resolution == "external":
        attrs.update(color="#b0b0b0", arrowsize="0.5")
        classes.append("external")
    elif resolution == "writes":
        attrs.update(color=WRITES_COLOR, penwidth="1.6", label="writes", fontcolor=WRITES_COLOR)
        classes.append("writes")
    elif resolution == "reads":
        attrs.update(color=READS_COLOR, penwidth="1.6", label="reads", fontcolor=READS_COLOR)
        classes.append("reads")
    if data.get("polymorphic"):
        attrs.update(style="dashed", color=POLY_COLOR, penwidth="1.6", fontcolor=POLY_COLOR,
                     label=_esc(f"poly: {receiver(data.get('call'))}"))
        classes.append("polymorphic")
    if data.get("cross"):
        # Crossing the boundary wins the colour; a polymorphic one keeps its dashes and label.
        attrs.update(color=CROSS_COLOR, penwidth="2.6")
        classes.append("cross")
    if resolution == "folded":
        attrs.update(style="dotted", color="#9a9a9a", arrowsize="0.5")
    elif (data.get("count") or 1) > 1:  # a collapsed edge: how many calls it stands for
        attrs["label"] = _esc(" ".join(x for x in (attrs.get("label", ""), f"×{data['count']}") if x))
    attrs["class"] = " ".join(classes)
    return attrs


def _legend(graph: nx.DiGraph) -> str:
    """An HTML-like table node: what the fills, colours and dash patterns mean, and the graph's
    counts in the words of ``summary_line``."""
    edges = [d for *_, d in graph.edges(data=True)]
    sides = {graph.nodes[n].get("side") for n in graph if _cluster_key(graph, n) is not None}
    rows = []
    for side in SIDE_ORDER:
        if side in sides:
            style = SIDE_STYLE[side]
            rows.append(f'<TR><TD BGCOLOR="{style["fill"]}" WIDTH="28"> </TD><TD ALIGN="LEFT">{style["label"]}</TD></TR>')
    entries = [
        (any(d.get("resolution") not in ("unresolved", "reads", "writes") and not d.get("cross")
             and not d.get("polymorphic") for d in edges), CALL_COLOR, "&#8594;", "call"),
        (any(d.get("cross") for d in edges), CROSS_COLOR, "&#10145;", "crosses scheduler/worker"),
        (any(d.get("polymorphic") and not d.get("cross") for d in edges), POLY_COLOR, "- - &#8594;",
         "polymorphic: one edge per possible target"),
        (any(d.get("polymorphic") and d.get("cross") for d in edges), CROSS_COLOR, "- - &#10145;",
         "polymorphic, crossing scheduler/worker"),
        (any(d.get("resolution") == "unresolved" for d in edges), UNRESOLVED_COLOR, "- - &#8594;",
         "unresolved call (its text)"),
        (any(d.get("resolution") == "writes" for d in edges), WRITES_COLOR, "&#8594;", "writes the field"),
        (any(d.get("resolution") == "reads" for d in edges), READS_COLOR, "&#8594;", "reads the field"),
    ]
    for present, color, arrow, text in entries:
        if present:
            rows.append(f'<TR><TD><FONT COLOR="{color}"><B>{arrow}</B></FONT></TD>'
                        f'<TD ALIGN="LEFT"><FONT COLOR="{color}">{text}</FONT></TD></TR>')
    if any(graph.nodes[n].get("kind") == "external" for n in graph):
        rows.append(f'<TR><TD BGCOLOR="{EXTERNAL_FILL}"> </TD><TD ALIGN="LEFT">external (not analysed)</TD></TR>')
    if not is_field_map(graph):
        rows.append(f'<TR><TD BGCOLOR="{ROOT_FILL}"> </TD><TD ALIGN="LEFT">root</TD></TR>')
    if graph.graph.get("collapsed"):
        rows.append(f'<TR><TD>&#215;N</TD><TD ALIGN="LEFT">one node per {graph.graph["collapsed"]}; '
                    'an arrow stands for N calls</TD></TR>')
    folded = graph.graph.get("folded")
    if folded:
        rows.append(f'<TR><TD>+N</TD><TD ALIGN="LEFT">{folded["drawn"]} of {folded["of"]} nodes drawn '
                    f'(--max-nodes {folded["max_nodes"]})</TD></TR>')
    return ('<<TABLE BORDER="1" CELLBORDER="0" CELLSPACING="2" CELLPADDING="2" COLOR="#bbbbbb" BGCOLOR="white">'
            '<TR><TD COLSPAN="2"><B>legend</B></TD></TR>' + "".join(rows) +
            f'<TR><TD COLSPAN="2"><FONT POINT-SIZE="9" COLOR="#555555">{summary_line(graph)}</FONT></TD></TR>'
            "</TABLE>>")


BUNDLE_UNRESOLVED_OVER = 2  # a caller with more unresolved calls than this gets one grey list
BUNDLE_LINES = 8  # lines of a grey list before "… N more" (the rest are in its tooltip)
# Leaves of a wide graph are staggered over this many columns (as Graphviz's `unflatten -l`): a
# caller with 40 callees otherwise stacks them in one column many screens tall.
STAGGER = 3
STAGGER_FROM = 25  # nodes
STAGGER_OVER = 6  # callees of one caller
# A larger drawing keeps only the side boxes (module and class boxes stacked in one column made
# the 0.5.23 run_batch picture 12,000 pt tall), names nodes Class.method, shrinks each caller's
# unresolved calls to one "N unresolved" node and is scaled to fit FIT_INCHES at most.
CLUSTER_UP_TO = 30  # nodes
FIT_INCHES = "27.5,19.4"  # 1980 x 1400 pt


def _is_large(graph: nx.DiGraph) -> bool:
    return graph.number_of_nodes() > CLUSTER_UP_TO and not is_field_map(graph)


def _unresolved_bundles(graph: nx.DiGraph) -> dict[str, list[str]]:
    """caller -> its unresolved call nodes, for callers with many (drawn as one plaintext list);
    in a large drawing every caller's."""
    over = 0 if _is_large(graph) else BUNDLE_UNRESOLVED_OVER
    per_caller = defaultdict(list)
    for node, data in graph.nodes(data=True):
        callers = list(graph.predecessors(node))
        if data.get("kind") == "unresolved" and len(callers) == 1 and graph.out_degree(node) == 0:
            per_caller[callers[0]].append(node)
    return {c: sorted(ns, key=lambda n: (graph.nodes[n].get("line") or 0, n))
            for c, ns in per_caller.items() if len(ns) > over}


def _bundle_id(caller: str) -> str:
    return _dot_id(f"{caller}:unresolved")


def _bundle_node_attrs(graph: nx.DiGraph, caller: str, members: list[str]) -> dict:
    lines = [f"{short_call(graph.nodes[n].get('label') or n)}  :{graph.nodes[n].get('line') or '?'}" for n in members]
    tooltip = _esc(f"{len(members)} unresolved calls in {caller}")
    if _is_large(graph):
        label = _esc(f"{len(members)} unresolved")
        tooltip = _esc("\n".join(lines))
    else:
        if len(lines) > BUNDLE_LINES:
            lines = lines[:BUNDLE_LINES - 1] + [f"… {len(lines) - BUNDLE_LINES + 1} more"]
        label = "".join(_esc(line) + "\\l" for line in lines)  # \l: left-justified lines
    return {"shape": "plaintext", "style": "", "fontsize": "9", "fontcolor": "#757575", "label": label,
            "margin": "0.02", "class": "node-unresolved unresolved bundle",
            "tooltip": tooltip}


def _stagger(graph: nx.DiGraph, roots: set[str]) -> dict:
    """(caller, callee) -> minlen 1..STAGGER, cycling over the callees of each caller with many,
    in call order (callees reached from elsewhere too keep their rank)."""
    if graph.number_of_nodes() < STAGGER_FROM:
        return {}
    out = {}
    for caller in graph:
        callees = [s for s in ordered_successors(graph, caller)
                   if s not in roots and graph.in_degree(s) == 1 and s != caller]
        if len(callees) > STAGGER_OVER:
            for i, callee in enumerate(callees):
                out[caller, callee] = 1 + i % STAGGER
    return out


def to_graphviz(graph: nx.DiGraph):
    """A ``graphviz.Digraph`` of the call graph or field map (clusters, styles, legend)."""
    import graphviz

    dot = graphviz.Digraph(name="spectrace", strict=False)
    dot.attr(rankdir="LR", compound="true", fontname=FONT, labelloc="t", labeljust="l",
             label=_esc(title(graph)), fontsize="18", nodesep="0.12", ranksep="0.45", pad="0.3",
             tooltip=_esc(title(graph)), bgcolor="white")
    dot.attr("node", shape="box", style="rounded,filled", fillcolor="white", fontname=FONT, fontsize="11",
             height="0.28", margin="0.1,0.03", color="#6b7785")
    dot.attr("edge", fontname=FONT, fontsize="9", arrowsize="0.6", color=CALL_COLOR)
    roots = set(roots_of(graph))
    field_map = is_field_map(graph)
    large = _is_large(graph)
    if large:
        dot.attr(newrank="true", size=FIT_INCHES)
    bundles = _unresolved_bundles(graph)
    bundled = {n: caller for caller, members in bundles.items() for n in members}

    def add_node(parent, node: str, in_class: bool):
        if node in bundled:
            caller = bundled[node]
            if node == bundles[caller][0]:  # the bundle is drawn where its first member would be
                parent.node(_bundle_id(caller), **_bundle_node_attrs(graph, caller, bundles[caller]))
            return
        parent.node(_dot_id(node), **_node_attrs(graph, node, roots, in_class=in_class))

    def add_clusters(parent, nodes, prefix: str):
        for side, modules in sorted(_group(graph, nodes).items(), key=lambda kv: SIDE_ORDER.index(kv[0])):
            style = SIDE_STYLE[side]
            with parent.subgraph(name=f"cluster_{prefix}side_{side}") as side_graph:
                side_graph.attr(label=_esc(style["label"]), style="filled,rounded", fillcolor=style["fill"],
                                color=style["border"], penwidth="2", fontsize="16", fontcolor=style["border"],
                                margin="14", tooltip=_esc(style["label"]))
                for m_index, (module, classes) in enumerate(sorted(modules.items(), key=lambda kv: kv[0] or "")):
                    if module is None or large:  # whole modules, or a drawing too large for boxes
                        for members in classes.values():
                            for n in members:
                                add_node(side_graph, n, in_class=False)
                        continue
                    named = [n for members in classes.values() for n in members
                             if graph.nodes[n].get("kind") != "unresolved"]
                    mod_title = module_label(graph.nodes[named[0]]) if named else module
                    with side_graph.subgraph(name=f"cluster_{prefix}{side}_m{m_index}") as mod_graph:
                        mod_graph.attr(label=_esc(mod_title), style="filled,rounded", fillcolor=style["module"],
                                       color=style["border"], penwidth="1", fontsize="11", fontcolor="#333333",
                                       margin="8", tooltip=_esc(module))
                        for c_index, (cls, members) in enumerate(sorted(classes.items(), key=lambda kv: kv[0] or "")):
                            if cls is None:
                                for n in members:
                                    add_node(mod_graph, n, in_class=False)
                                continue
                            with mod_graph.subgraph(name=f"cluster_{prefix}{side}_m{m_index}_c{c_index}") as cls_graph:
                                cls_name = class_label(graph.nodes[members[0]])
                                cls_graph.attr(label=f"<<B>{_html(cls_name)}</B>>", style="filled,rounded",
                                               fillcolor="white", color="#8d99a6", penwidth="1", fontsize="11",
                                               margin="6", tooltip=_esc(cls))
                                for n in members:
                                    add_node(cls_graph, n, in_class=True)

    if field_map:
        field_nodes = [n for n in graph if graph.nodes[n].get("kind") == "field"]
        producers = {p for f in field_nodes for p in graph.predecessors(f)}
        consumers = {c for f in field_nodes for c in graph.successors(f)} - producers
        rest = set(graph) - producers - consumers - set(field_nodes)
        for name, members, label in (("producers", producers, "producers (write)"),
                                     ("consumers", consumers, "consumers (read)")):
            with dot.subgraph(name=f"cluster_{name}") as part:
                part.attr(label=label, style="dashed,rounded", color="#999999", fontsize="16", margin="16")
                add_clusters(part, sorted(members), prefix=f"{name}_")
        for f in field_nodes:
            dot.node(_dot_id(f), **_node_attrs(graph, f, roots, in_class=False))
        add_clusters(dot, sorted(rest), prefix="rest_")
    else:
        add_clusters(dot, list(graph), prefix="")
    for node in graph:
        if _cluster_key(graph, node) is None and graph.nodes[node].get("kind") != "field":
            add_node(dot, node, in_class=False)
    stagger = _stagger(graph, roots) if not field_map else {}
    for src, dst in graph.edges():
        if dst not in bundled:
            attrs = _edge_attrs(graph, src, dst)
            if (src, dst) in stagger:
                attrs["minlen"] = str(stagger[src, dst])
            dot.edge(_dot_id(src), _dot_id(dst), **attrs)
    for caller, members in bundles.items():
        dot.edge(_dot_id(caller), _bundle_id(caller), style="dashed", color=UNRESOLVED_COLOR, arrowhead="onormal",
                 arrowsize="0.5", penwidth="0.8", label=f"{len(members)} unresolved", fontcolor="#757575",
                 tooltip=_esc(f"{len(members)} unresolved calls"), **{"class": "call resolution-unresolved unresolved"})
    dot.node("__legend__", label=_legend(graph), shape="plaintext", style="", margin="0", tooltip="legend")
    return dot


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_dot(graph: nx.DiGraph) -> str:
    return to_graphviz(graph).source


def _graphviz_pipe(graph: nx.DiGraph, fmt: str) -> bytes:
    import graphviz

    if shutil.which("dot") is None:
        raise SpectraceError(INSTALL_DOT.format(fmt=fmt))
    dot = to_graphviz(graph)
    if fmt == "png":
        dot.attr(dpi="110")
    try:
        return dot.pipe(format=fmt, quiet=True)
    except graphviz.ExecutableNotFound as exc:
        raise SpectraceError(INSTALL_DOT.format(fmt=fmt)) from exc
    except graphviz.CalledProcessError as exc:
        message = (exc.stderr or b"").decode(errors="replace").strip().splitlines()
        raise SpectraceError(f"Graphviz failed to draw the {fmt}: {message[-1] if message else exc}") from exc


# --------------------------------------------------------------------------- mermaid


def _mermaid_text(text: str) -> str:
    return (text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
            .replace("|", "#124;"))


def render_mermaid(graph: nx.DiGraph) -> str:
    """A mermaid flowchart: subgraphs per side, module and class; styles mirror the Graphviz drawing."""
    ids = {node: f"n{i}" for i, node in enumerate(graph)}
    roots = set(roots_of(graph))
    out = [f"%% {title(graph)}", f"%% {summary_line(graph)}", "flowchart LR"]

    def node_line(node: str, in_class: bool) -> str:
        data = graph.nodes[node]
        kind = data.get("kind")
        if kind in ("method", "function") and in_class:
            label = node.rsplit(".", 1)[-1]
        else:
            label = display_name(node, data) + ("()" if kind == "class" else "")
        shape = {"unresolved": ('>"', '"]'), "external": ('["', '"]'), "field": ('[("', '")]')}.get(kind, ('("', '")'))
        cls = {"unresolved": "unresolved", "external": "external", "field": "field"}.get(kind)
        if node in roots and not cls:
            cls = "root"
        return f"{ids[node]}{shape[0]}{_mermaid_text(label)}{shape[1]}" + (f":::{cls}" if cls else "")

    def add_clusters(nodes, indent: str, prefix: str):
        for side, modules in sorted(_group(graph, nodes).items(), key=lambda kv: SIDE_ORDER.index(kv[0])):
            side_id = f"{prefix}side_{side}"
            out.append(f'{indent}subgraph {side_id}["{SIDE_STYLE[side]["label"]}"]')
            for m_index, (module, classes) in enumerate(sorted(modules.items(), key=lambda kv: kv[0] or "")):
                if module is None:  # nodes that stand for whole modules
                    out.extend(f"{indent}  {node_line(n, False)}" for n in classes[None])
                    continue
                named = [n for members in classes.values() for n in members if graph.nodes[n].get("kind") != "unresolved"]
                mod_title = module_label(graph.nodes[named[0]]) if named else module
                out.append(f'{indent}  subgraph {side_id}_m{m_index}["{_mermaid_text(mod_title)}"]')
                for c_index, (cls, members) in enumerate(sorted(classes.items(), key=lambda kv: kv[0] or "")):
                    if cls is None:
                        out.extend(f"{indent}    {node_line(n, False)}" for n in members)
                        continue
                    out.append(f'{indent}    subgraph {side_id}_m{m_index}_c{c_index}'
                               f'["{_mermaid_text(class_label(graph.nodes[members[0]]))}"]')
                    out.extend(f"{indent}      {node_line(n, True)}" for n in members)
                    out.append(f"{indent}    end")
                out.append(f"{indent}  end")
            out.append(f"{indent}end")
            style = SIDE_STYLE[side]
            styles.append(f"style {side_id} fill:{style['fill']},stroke:{style['border']},stroke-width:2px")

    styles: list[str] = []
    if is_field_map(graph):
        field_nodes = [n for n in graph if graph.nodes[n].get("kind") == "field"]
        producers = {p for f in field_nodes for p in graph.predecessors(f)}
        consumers = {c for f in field_nodes for c in graph.successors(f)} - producers
        for name, members in (("producers", producers), ("consumers", consumers)):
            out.append(f'  subgraph {name}["{name}"]')
            out.append("    direction TB")
            add_clusters(sorted(members), "    ", f"{name}_")
            out.append("  end")
        out.extend(f"  {node_line(f, False)}" for f in field_nodes)
        add_clusters(sorted(set(graph) - producers - consumers - set(field_nodes)), "  ", "rest_")
    else:
        add_clusters(list(graph), "  ", "")
    for node in graph:
        if _cluster_key(graph, node) is None and graph.nodes[node].get("kind") != "field":
            out.append(f"  {node_line(node, False)}")

    link_styles = []
    for index, (src, dst, data) in enumerate(graph.edges(data=True)):
        resolution = data.get("resolution")
        if data.get("polymorphic"):
            arrow = f'-.->|"poly: {_mermaid_text(receiver(data.get("call")))}"|'
        elif resolution in ("reads", "writes"):
            arrow = f"-->|{resolution}|"
        elif resolution in ("unresolved", "folded") or graph.nodes[dst].get("kind") == "unresolved":
            arrow = "-.->"
        elif (data.get("count") or 1) > 1:
            arrow = f'-->|"×{data["count"]}"|'
        else:
            arrow = "-->"
        out.append(f"  {ids[src]} {arrow} {ids[dst]}")
        if data.get("cross"):
            link_styles.append(f"linkStyle {index} stroke:{CROSS_COLOR},stroke-width:3px")
        elif data.get("polymorphic"):
            link_styles.append(f"linkStyle {index} stroke:{POLY_COLOR},stroke-width:2px")
        elif resolution == "unresolved":
            link_styles.append(f"linkStyle {index} stroke:{UNRESOLVED_COLOR}")
        elif resolution == "writes":
            link_styles.append(f"linkStyle {index} stroke:{WRITES_COLOR},stroke-width:2px")
        elif resolution == "reads":
            link_styles.append(f"linkStyle {index} stroke:{READS_COLOR},stroke-width:2px")
    out += [f"  {s}" for s in styles + link_styles]
    out += [
        f"  classDef root fill:{ROOT_FILL},stroke:#8a6d00,stroke-width:2px",
        f"  classDef external fill:{EXTERNAL_FILL},stroke:#b0b0b0,color:#555",
        "  classDef unresolved fill:none,stroke:none,color:#757575,font-size:11px",
        f"  classDef field fill:{FIELD_FILL},stroke:#b8860b,stroke-width:2px",
    ]
    return "\n".join(out) + "\n"
