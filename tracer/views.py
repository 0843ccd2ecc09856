"""Smaller graphs for reading: call graphs collapsed by class or module, and folded to a node budget.

Both return a new graph for display and leave the analysed graph as it is: the json output is
always the whole graph. The display graph remembers the whole graph's summary line
(``graph["summary"]``), so a drawing's legend counts what was analysed, with what was drawn.

* ``collapse(graph, "class"|"module")``: one node per class (functions outside classes stay as
  they are) or per module; an edge per pair of groups, ``count`` = how many calls it stands for
  (drawn as ``×N``); calls inside a group are left out; a caller's unresolved calls make one node.
* ``fold(graph, max_nodes)``: the nodes nearest the roots (breadth-first, in call order) are kept up
  to ``max_nodes``; each kept caller of dropped nodes gets one ``+N more`` node (kind ``more``,
  its ``members`` the dropped callees). Unresolved calls are drawn with their caller and are not
  counted in the budget.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

# Formats drawn for a person get this budget unless one is given; text is a tree and json the data.
DEFAULT_MAX_NODES = 60
DRAWING_FORMATS = ("svg", "png", "dot", "mermaid")
CODE_KINDS = ("function", "method", "class")


def for_display(graph: nx.DiGraph, fmt: str, collapse_by: str | None = None,
                max_nodes: int | None = None) -> nx.DiGraph:
    """The graph a format shows: json the whole graph; others collapsed and folded as asked (the
    drawing formats folded to ``DEFAULT_MAX_NODES`` unless ``max_nodes`` says otherwise, 0: no budget)."""
    if fmt == "json" or graph.graph.get("field"):
        return graph
    if max_nodes is None and fmt in DRAWING_FORMATS:
        max_nodes = DEFAULT_MAX_NODES
    shown = collapse(graph, collapse_by) if collapse_by else graph
    if max_nodes:
        shown = fold(shown, max_nodes)
    return shown


def _copy_graph_attrs(src: nx.DiGraph, dst: nx.DiGraph) -> None:
    from spectrace.tracer.render import summary_line

    dst.graph.update(src.graph)
    dst.graph.setdefault("summary", summary_line(src))


def collapse(graph: nx.DiGraph, by: str) -> nx.DiGraph:
    if by not in ("class", "module"):
        raise ValueError(f"collapse by 'class' or 'module', not {by!r}")
    group: dict[str, str] = {}
    import networkx as nx

    out = nx.DiGraph()
    for node, data in graph.nodes(data=True):
        kind = data.get("kind")
        if kind == "unresolved":
            continue
        if kind in CODE_KINDS and by == "class" and data.get("cls"):
            key = data["cls"]
            label = key[len(data.get("module") or "") + 1:] if key.startswith(f"{data.get('module')}.") else key
            attrs = {"kind": "group", "file": data.get("file"), "line": None, "module": data.get("module"),
                     "cls": None, "side": data.get("side"), "label": label}
        elif kind in CODE_KINDS + ("external",) and by == "module":
            key = data.get("module") or node
            attrs = {"kind": "group" if kind != "external" else "external", "file": data.get("file"),
                     "line": None, "module": key, "cls": None, "side": data.get("side"), "label": key}
        else:
            key, attrs = node, dict(data)
        group[node] = key
        if key not in out:
            out.add_node(key, members=[], **attrs)
        out.nodes[key]["members"].append(node)
    roots = [r for r in graph.graph.get("roots") or [] if r in group]
    for u, v, data in graph.edges(data=True):
        gu = group.get(u)
        if gu is None:
            continue
        if graph.nodes[v].get("kind") == "unresolved":
            uid = f"?{gu}"
            if uid not in out:
                out.add_node(uid, kind="unresolved", file=None, line=None, module=None, cls=None, side="other",
                             label="0 unresolved", members=[])
                out.add_edge(gu, uid, resolution="unresolved", polymorphic=False, cross=False, call="",
                             file=data.get("file"), line=data.get("line"), sites=[], count=0)
            out.nodes[uid]["members"].append(v)
            out.nodes[uid]["label"] = f"{len(out.nodes[uid]['members'])} unresolved"
            continue
        gv = group[v]
        if gu == gv:
            continue  # calls inside one class or module
        if out.has_edge(gu, gv):
            e = out.edges[gu, gv]
            e["count"] += 1
            e["sites"] = e["sites"] + list(data.get("sites") or [])
            e["polymorphic"] = e["polymorphic"] and bool(data.get("polymorphic"))
            e["cross"] = e["cross"] or bool(data.get("cross"))
            if e["resolution"] != data.get("resolution"):
                e["resolution"] = "mixed"
        else:
            out.add_edge(gu, gv, **{**data, "sites": list(data.get("sites") or []), "count": 1,
                                    "polymorphic": bool(data.get("polymorphic")), "cross": bool(data.get("cross"))})
    _copy_graph_attrs(graph, out)
    out.graph["roots"] = list(dict.fromkeys(group[r] for r in roots))
    out.graph["collapsed"] = by
    return out


def fold(graph: nx.DiGraph, max_nodes: int) -> nx.DiGraph:
    """Keep ``max_nodes`` nodes nearest the roots; fold the rest into ``+N more`` nodes per caller."""
    counted = [n for n, d in graph.nodes(data=True) if d.get("kind") != "unresolved"]
    if len(counted) <= max_nodes:
        return graph
    roots = [r for r in graph.graph.get("roots") or [] if r in graph] or counted[:1]
    order: list[str] = []
    seen = set(roots)
    queue = deque(roots)
    while queue:
        node = queue.popleft()
        order.append(node)
        succ = sorted(graph.successors(node), key=lambda s: (graph.edges[node, s].get("line") or 0, s))
        for s in succ:
            if s not in seen and graph.nodes[s].get("kind") != "unresolved":
                seen.add(s)
                queue.append(s)
    order += [n for n in counted if n not in seen]  # unreachable from the roots: last
    kept = set(roots) | set(order[:max(max_nodes, len(roots))])
    for n, d in graph.nodes(data=True):  # unresolved calls stay with a kept caller
        if d.get("kind") == "unresolved" and any(p in kept for p in graph.predecessors(n)):
            kept.add(n)
    out = graph.subgraph(kept).copy()
    for caller in [n for n in order if n in kept]:
        dropped = [s for s in graph.successors(caller) if s not in kept]
        if not dropped:
            continue
        dropped.sort(key=lambda s: (graph.edges[caller, s].get("line") or 0, s))
        more = f"+more:{caller}"
        out.add_node(more, kind="more", file=None, line=None, module=None, cls=None, side="other",
                     label=f"+{len(dropped)} more", members=dropped)
        last = max((graph.edges[caller, s].get("line") or 0) for s in dropped)  # listed after the calls
        out.add_edge(caller, more, resolution="folded", polymorphic=False, cross=False, call="",
                     file=graph.nodes[caller].get("file"), line=last, sites=[], count=len(dropped))
    _copy_graph_attrs(graph, out)
    drawn = sum(1 for n in out if out.nodes[n].get("kind") not in ("unresolved", "more"))
    out.graph["folded"] = {"drawn": drawn, "of": len(counted), "max_nodes": max_nodes}
    return out
