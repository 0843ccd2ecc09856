"""A directed graph as a call graph is built: nodes and edges with attributes, in insertion order.

``spectrace map`` writes its json straight from this; every other format, and ``call_graph``'s
callers, get the networkx ``DiGraph`` it converts to (importing networkx costs a cold map a
twentieth of its time, so only the paths that draw or query the graph pay for it). The subset
of networkx's API here behaves as networkx's does, orders included.
"""

from __future__ import annotations


class _Nodes(dict):
    """node -> its attributes; called as ``nodes(data=True)`` like networkx's node view."""

    def __call__(self, data: bool = False) -> list:
        return list(self.items()) if data else list(self)


class _Edges:
    """``edges[u, v]`` -> the edge's attributes; ``edges(data=True)`` in networkx's order (by source
    in node order, then by target in the order the edges were added)."""

    def __init__(self, succ: dict):
        self._succ = succ

    def __getitem__(self, edge: tuple):
        u, v = edge
        return self._succ[u][v]

    def __call__(self, data: bool = False) -> list:
        if data:
            return [(u, v, d) for u, nbrs in self._succ.items() for v, d in nbrs.items()]
        return [(u, v) for u, nbrs in self._succ.items() for v in nbrs]


class DiGraph:
    def __init__(self):
        self.graph: dict = {}
        self._succ: dict = {}  # node -> {successor: edge attributes}
        self.nodes = _Nodes()
        self.edges = _Edges(self._succ)

    def __contains__(self, node) -> bool:
        return node in self.nodes

    def __iter__(self):
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def add_node(self, node, **attrs) -> None:
        if node not in self.nodes:
            self.nodes[node] = {}
            self._succ[node] = {}
        self.nodes[node].update(attrs)

    def add_edge(self, u, v, **attrs) -> None:
        for node in (u, v):
            if node not in self.nodes:
                self.add_node(node)
        self._succ[u].setdefault(v, {}).update(attrs)

    def has_edge(self, u, v) -> bool:
        return v in self._succ.get(u, ())

    def number_of_edges(self) -> int:
        return sum(len(nbrs) for nbrs in self._succ.values())

    def is_directed(self) -> bool:
        return True

    def is_multigraph(self) -> bool:
        return False

    def to_networkx(self):
        """The same graph as a networkx ``DiGraph`` (orders kept)."""
        import networkx as nx

        g = nx.DiGraph()
        g.graph.update(self.graph)
        g.add_nodes_from(self.nodes.items())
        g.add_edges_from(self.edges(data=True))
        return g
