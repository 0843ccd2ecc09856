"""What the fact collectors make of libcst nodes: an expression's normalised text, its attribute
chain, and a small serialisable descriptor of its value. Only parsing needs libcst: the facts
themselves (facts.py) and everything that reads them from the cache do not import it."""

from __future__ import annotations

import re

import libcst as cst
import libcst.matchers as m

_EMPTY_MODULE = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    """Source text of a node, normalised to one line (libcst's code generator + whitespace fold)."""
    text = _EMPTY_MODULE.code_for_node(node)
    text = re.sub(r"#[^\n]*", "", text)  # comments inside multi-line conditions
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"([(\[{]) ", r"\1", text)
    text = re.sub(r" ([)\]}])", r"\1", text)
    text = re.sub(r",([)\]}])", r"\1", text)  # trailing commas of exploded calls
    return text


def chain_of(node: cst.BaseExpression) -> tuple[str, list[str]] | None:
    """``a.b.c`` -> ("a", ["b", "c"]); None for anything that is not Name(.attr)*."""
    attrs: list[str] = []
    while isinstance(node, cst.Attribute):
        attrs.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        return node.value, list(reversed(attrs))
    return None


def describe(node: cst.BaseExpression | None) -> dict:
    """A small serialisable descriptor of an expression (what the flow analysis needs)."""
    desc = _describe(node)
    if node is not None and "text" not in desc:
        desc["text"] = code(node)[:300]
    return desc


def _describe(node: cst.BaseExpression | None) -> dict:
    if node is None:
        return {"kind": "none"}
    if m.matches(node, m.Name("None")):
        return {"kind": "none"}
    if isinstance(node, cst.Name):
        return {"kind": "name", "name": node.value}
    if isinstance(node, cst.Attribute):
        ch = chain_of(node)
        if ch:
            return {"kind": "chain", "root": ch[0], "attrs": ch[1], "text": code(node)}
    if isinstance(node, cst.Call):
        kws = {a.keyword.value: describe(a.value) for a in node.args if a.keyword is not None}
        npos = sum(1 for a in node.args if a.keyword is None and not a.star)
        args = [describe(a.value) for a in node.args if a.keyword is None and not a.star]
        spread = any(a.star for a in node.args)  # *args or **kwargs: which parameters it fills is not known
        return {"kind": "call", "callee": code(node.func), "kw": kws, "npos": npos, "args": args, "spread": spread,
                "text": code(node)[:200]}
    if isinstance(node, cst.IfExp):
        return {"kind": "ifexp", "test": code(node.test), "body": describe(node.body), "orelse": describe(node.orelse)}
    if isinstance(node, (cst.Tuple, cst.List)):
        return {"kind": "tuple", "items": [describe(e.value) for e in node.elements]}
    if isinstance(node, cst.Lambda):
        # a callable passed on: the flow analysis follows its body where it is called
        params = [p.name.value for p in [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]]
        return {"kind": "lambda", "params": params, "body": describe(node.body), "text": code(node)[:200]}
    if isinstance(node, cst.BooleanOperation):
        return {"kind": "boolop", "op": "and" if isinstance(node.operator, cst.And) else "or",
                "left": describe(node.left), "right": describe(node.right)}
    return {"kind": "expr", "text": code(node)[:200]}
