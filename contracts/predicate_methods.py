"""A consumer's condition that calls one of its own predicate methods (``if self._has_draft(result):``)
stands for what the method returns: a method whose body is one ``return <expr>`` of its parameters
is that expression with the call's arguments in their place, so the guard it makes is seen as the
same test written inline (``result.next_draft_input is not None``)."""

from __future__ import annotations

import re

from spectrace.contracts.facts import Cond, FunctionFacts

_SELF_CALL = re.compile(r"(not\s+)?self\.(\w+)\((.*)\)")
_ARGUMENT = re.compile(r"[A-Za-z_][\w.]*")


class PredicateMethods:
    def __init__(self, symbols):
        self.symbols = symbols
        self._bodies: dict[str, tuple[list[str], str] | None] = {}

    def _body(self, class_qn: str, name: str) -> tuple[list[str], str] | None:
        """(parameters, returned expression) of a method that only returns an expression of them."""
        key = f"{class_qn}.{name}"
        if key not in self._bodies:
            self._bodies[key] = None
            t = self.symbols.lookup_method(class_qn, name)
            got = self.symbols.function_facts(t) if t else None
            g = got[1] if got else None
            if g is not None and len(g.returns) == 1 and not g.returns[0].conds and not g.bindings \
                    and not g.writes and not g.decorators and g.returns[0].value.text:
                params = [p for p, _ in g.params if p not in ("self", "cls")]
                if all(p.isidentifier() for p in params):
                    self._bodies[key] = (params, g.returns[0].value.text)
        return self._bodies[key]

    def expanded(self, module: str, f: FunctionFacts, conds: list) -> list:
        """``conds`` with each test of a predicate method of ``f``'s class, called with plain names
        or attribute chains, replaced by the expression it returns."""
        if not f.cls:
            return list(conds)
        out = []
        for text, positive in conds:
            m = _SELF_CALL.fullmatch(" ".join(text.split()))
            body = self._body(f"{module}.{f.cls}", m.group(2)) if m else None
            args = [a.strip() for a in m.group(3).split(",")] if m and m.group(3).strip() else []
            if body is None or len(args) != len(body[0]) or not all(_ARGUMENT.fullmatch(a) for a in args):
                out.append(Cond(text, positive))
                continue
            params, expr = body
            by_name = dict(zip(params, args))
            inline = re.sub(r"(?<![\w.])([A-Za-z_]\w*)", lambda x: by_name.get(x.group(1), x.group(1)), expr)
            out.append(Cond(inline, positive != bool(m.group(1))))
        return out
