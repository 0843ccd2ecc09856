"""Build call graphs (and field maps) from a ``Project``, as networkx ``DiGraph`` objects.

The graph schema (node and edge attributes) is described in docs/design.md; the renderers
in ``render.py`` and the json output rely on it.

An edge's ``resolution`` says how its call was resolved:

* ``self``        ``self.m()`` through the caller's class MRO;
* ``super``       ``super().m()``: the next class in the MRO;
* ``local``       a function nested in the caller, called by name;
* ``import``      a name bound by a definition or import of the module (or of an enclosing function);
* ``attr-type``   a method of the receiver's inferred type;
* ``constructor`` calling a class (its ``__init__``), ``raise E`` included;
* ``polymorphic`` several targets, one per concrete type the receiver was assigned;
* ``cha``         class-hierarchy expansion: the receiver is known only from an annotation (a base
  class), or is ``self``/``cls``/``super()`` in a method that subclasses inherit, so the call reaches
  the base's method and every override in its subclasses;
* ``closure``     a call written in a function nested in the caller (closures, local helpers),
  folded into the caller; ``closure`` names the nested function and ``inner`` its own resolution;
* ``argument``    the callee (or its receiver) is a parameter, typed by the arguments every caller
  passes to it (context-insensitive: ``def f(a): a()`` called as ``f(g)`` gives ``f -> g``);
  callbacks, bound methods, classes, keywords, ``*args`` and ``**kwargs`` included;
* ``decorator``   a call of a function whose decorator returns a wrapper it defines reaches the
  wrapper (the wrapper reaches the originals through ``argument``); also ``@factory(...)`` applying
  what the factory returns, from the decorated definition's scope;
* ``lambda``      a call of a variable, attribute or parameter holding ``lambda ...: g(...)`` reaches
  ``g`` (the lambda's calls are also edges of the function that writes it, where it is written);
* ``property``    reading or writing ``x.p`` runs property ``p``'s getter or setter (one node for both);
* ``protocol``    ``for x in obj`` / ``with obj`` reach ``__iter__``/``__next__`` /
  ``__enter__``/``__exit__`` (and the async forms) of obj's classes, when the tree defines them;
* ``external``    outside the tree (stdlib, torch, builtins, methods of list/dict/tuple, methods
  inherited from an external base class);
* ``unresolved``  no target found; ``reads``/``writes`` are field-map edges.

``polymorphic`` (bool) is set on ``polymorphic`` and ``cha`` edges (and on closure edges whose
inner resolution is one of those). Calls made by module-level code have the caller
``<module qualname>.<module>``.
"""

from __future__ import annotations

import fnmatch
from collections import deque
from typing import TYPE_CHECKING

from spectrace.sides import side_of
from spectrace.tracer.digraph import DiGraph
from spectrace.tracer.project import Project

if TYPE_CHECKING:
    import networkx as nx


def _matches(name: str, globs) -> bool:
    return any(fnmatch.fnmatchcase(name, g) or fnmatch.fnmatchcase(name.rsplit(".", 1)[-1], g) for g in globs)


def _add_code_node(g: DiGraph | nx.DiGraph, proj: Project, qn: str):
    if qn in g:
        return
    mod, local = proj.split(qn)
    if mod is None:
        g.add_node(qn, kind="external", file=None, line=None, module=qn.rsplit(".", 1)[0],
                   cls=None, side="other", label=qn)
        return
    f = mod.functions.get(local)
    c = mod.classes.get(local)
    if f is not None:
        kind = "method" if f.cls else "function"
        g.add_node(qn, kind=kind, file=mod.path, line=f.line, module=mod.module,
                   cls=f"{mod.module}.{f.cls}" if f.cls else None, side=side_of(mod.module),
                   label=f"{f.cls.split('.')[-1]}.{f.name}" if f.cls else f.qualname)
    else:
        g.add_node(qn, kind="class", file=mod.path, line=c.line if c else None, module=mod.module,
                   cls=qn, side=side_of(mod.module), label=local)


def call_graph(
    proj: Project,
    roots: list[str],
    depth: int | None = 2,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    external: bool = False,
    cha: bool = True,
    exact: bool = False,
    closures: str = "fold",
    networkx: bool = True,
) -> nx.DiGraph | DiGraph:
    """Breadth-first from ``roots``: every call site becomes an edge (polymorphic ones, one per target).

    ``cha=False``: no class-hierarchy expansion (a receiver typed by its annotation reaches only the
    annotated class's method). ``exact=True``: only calls resolved to one target (no expansion, no
    polymorphic call sites). ``closures``: ``"fold"`` counts the calls of a function's nested
    functions as its own (resolution ``closure``); ``"separate"`` keeps nested functions as nodes
    of their own, reached by the calls that name them. ``networkx=False``: the graph as built
    (``digraph.DiGraph``), all the json output needs.
    """
    if closures not in ("fold", "separate"):
        raise ValueError(f"closures must be 'fold' or 'separate', not {closures!r}")
    fold = closures == "fold"
    cha = cha and not exact
    g = DiGraph()
    unresolved_total = 0
    seen_depth = {}
    queue = deque()
    for r in roots:
        _add_code_node(g, proj, r)
        seen_depth[r] = 0
        queue.append(r)
    while queue:
        caller = queue.popleft()
        d = seen_depth[caller]
        if depth is not None and d >= depth:
            continue
        mod = proj.module_of(caller)
        if mod is None:
            continue
        sites = proj.calls(caller, cha=cha)
        if fold:  # the nested functions' calls stand for the calls that name them
            nested = caller + "."
            sites += proj.closure_calls(caller, cha=cha)
            sites = [c for c in sites if not (c.resolution == "local" and c.targets[0].startswith(nested))]
        for call in sites:
            if exact and len(call.targets) > 1:
                continue
            if call.resolution == "unresolved":
                unresolved_total += 1
                uid = f"?{caller}@{call.line}:{call.col}"
                g.add_node(uid, kind="unresolved", file=mod.path, line=call.line, module=None,
                           cls=None, side="other", label=call.text)
                g.add_edge(caller, uid, file=mod.path, line=call.line, sites=[call.line],
                           resolution="unresolved", polymorphic=False, call=call.text, cross=False)
                continue
            if call.external and not external:
                continue
            poly = call.polymorphic
            resolution = call.resolution if call.closure is None else "closure"
            extra = {} if call.closure is None else {"closure": call.closure, "inner": call.resolution}
            for target in call.targets:
                if include and not _matches(target, include):
                    continue
                if exclude and _matches(target, exclude):
                    continue
                if call.external:
                    if target not in g:
                        g.add_node(target, kind="external", file=None, line=None,
                                   module=target.rsplit(".", 1)[0], cls=None, side="other", label=target)
                else:
                    _add_code_node(g, proj, target)
                if g.has_edge(caller, target):
                    g.edges[caller, target]["sites"].append(call.line)
                    continue
                cross = {g.nodes[caller]["side"], g.nodes[target]["side"]} == {"scheduler", "worker"}
                g.add_edge(caller, target, file=mod.path, line=call.line, sites=[call.line],
                           resolution=resolution, polymorphic=poly, call=call.text, cross=cross,
                           via=call.via.get(target, []), **extra)
                if not call.external and target not in seen_depth:
                    seen_depth[target] = d + 1
                    queue.append(target)
    g.graph.update(roots=list(roots), unresolved=unresolved_total, depth=depth,
                   source=proj.source.describe(), version=proj.source.version,
                   cha=cha, exact=exact, closures=closures, lambdas=proj.lambdas)
    return g.to_networkx() if networkx else g


def field_graph(proj: Project, field: str, owner: str | None = None) -> nx.DiGraph:
    """Producers -> field -> consumers, over the whole package.

    A producer assigns ``x.<field> = ...`` or passes ``<field>=`` to a constructor of a class
    that declares the field; a consumer reads ``x.<field>``. ``owner`` (a class name) limits
    constructor producers to that class.
    """
    import networkx as nx

    # the others' bodies are never summarised (after a light index: the bodies of the few)
    modules = proj.modules_naming(field)
    owners = set()
    for summary in modules:
        for qn, c in summary.classes.items():
            if field in c.annotations and (owner is None or c.name == owner):
                owners.add(f"{summary.module}.{qn}")
    owner_names = {o.rsplit(".", 1)[-1] for o in owners}
    fid = f"field:{field}"
    g = nx.DiGraph()
    g.add_node(fid, kind="field", file=None, line=None, module=None, cls=None, side="other",
               label=field, owners=sorted(owners))
    for summary in modules:
        for qn, f in proj.store.functions_naming(summary, field):
            fq = f"{summary.module}.{qn}"
            writes = f.writes.get(field, [])
            # constructor keyword flow: SomeResult(<field>=...)
            ctor_lines = [
                line for line, _col, callee, kwnames in f.calls
                if field in kwnames and callee[0] in ("n", "a")
                and (callee[1] if callee[0] == "n" else callee[2]) in owner_names
            ]
            reads = f.reads.get(field, [])
            if writes or ctor_lines:
                _add_code_node(g, proj, fq)
                lines = sorted(writes + ctor_lines)
                g.add_edge(fq, fid, file=summary.path, line=lines[0], sites=lines,
                           resolution="writes", polymorphic=False, call=f"{field} =", cross=False)
            if reads:
                _add_code_node(g, proj, fq)
                g.add_edge(fid, fq, file=summary.path, line=reads[0], sites=list(reads),
                           resolution="reads", polymorphic=False, call=f".{field}", cross=False)
    g.graph.update(roots=[fid], field=field, owners=sorted(owners), unresolved=0,
                   source=proj.source.describe(), version=proj.source.version)
    return g
