"""What a method name of a class is bound to when it is called on an instance, as Python decides it:
the last binding of the name in the class body (a ``def``, or an alias ``step = _other_step`` /
``step = Base.step``) of the first class of the MRO that binds it; a binding nested in an ``if``,
``try``, ``with`` or loop of the class body may or may not have run, so the binding before it (or
the base's) stays possible too; and a ``self.step = ...`` in a method of the class rebinds it on
the instance. The index records ``def``s alone, so a name bound otherwise would silently resolve
to a base's method."""

from __future__ import annotations

import ast
from dataclasses import dataclass

_COMPOUND = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, ast.Match)
_TRY_STAR = getattr(ast, "TryStar", None)


@dataclass(frozen=True)
class MethodBinding:
    """One function a method name may run, or why which one is not known (``target`` None)."""
    target: str | None
    rel: str = ""
    line: int = 0
    shape: str = ""
    why: str = ""


@dataclass(frozen=True)
class _Event:
    """A binding of the name in a class body, in source order."""
    node: ast.stmt
    conditional: bool  # nested in a compound statement of the body


def _events(body: list, name: str, conditional: bool = False) -> list[_Event]:
    out = []
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if stmt.name == name:
                out.append(_Event(stmt, conditional))
        elif isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            out.append(_Event(stmt, conditional))
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name) \
                and stmt.target.id == name:
            out.append(_Event(stmt, conditional))
        elif isinstance(stmt, _COMPOUND) or (_TRY_STAR and isinstance(stmt, _TRY_STAR)):
            for part in _parts(stmt):
                out.extend(_events(part, name, True))
    return out


def _parts(stmt: ast.stmt) -> list[list]:
    if isinstance(stmt, ast.Match):
        return [c.body for c in stmt.cases]
    parts = [getattr(stmt, a) for a in ("body", "orelse", "finalbody") if getattr(stmt, a, None)]
    return parts + [h.body for h in getattr(stmt, "handlers", ())]


class ClassBindings:
    def __init__(self, symbols):
        self.symbols = symbols
        self._classes: dict[str, ast.ClassDef | None] = {}
        self._trees: dict[str, ast.Module] = {}
        self._bindings: dict[tuple[str, str], list[MethodBinding]] = {}

    def _class_node(self, class_qn: str) -> tuple[str, str, ast.ClassDef] | None:
        """(module, file, node) of a top-level class of the tree."""
        module, _, name = class_qn.rpartition(".")
        rel = self.symbols.file_of_module(module)
        if rel is None:
            return None
        if class_qn not in self._classes:
            if rel not in self._trees:  # one parse per file, for all its classes
                self._trees[rel] = ast.parse(self.symbols.facts.text(rel))
            found = [n for n in self._trees[rel].body if isinstance(n, ast.ClassDef) and n.name == name]
            self._classes[class_qn] = found[-1] if found else None
        node = self._classes[class_qn]
        return (module, rel, node) if node is not None else None

    def bindings(self, class_qn: str, name: str) -> list[MethodBinding]:
        """The functions ``instance.name(...)`` may run for an instance of ``class_qn`` (an empty
        list: the name is no method of the tree)."""
        key = (class_qn, name)
        if key not in self._bindings:
            out = self._in_classes(class_qn, name, self.symbols.mro(class_qn))
            for module, f, w in self.symbols.attr_writes(class_qn, name):
                out.extend(self._rebound(class_qn, name, module, f, w))
            self._bindings[key] = list(dict.fromkeys(out))
        return self._bindings[key]

    def _rebound(self, class_qn: str, name: str, module: str, f, w) -> list[MethodBinding]:
        """``self.name = v`` in a method (of ``module``): ``v``'s method where it is ``self.m``, else not known."""
        rel = self.symbols.file_of_module(module) or ""
        v = w.value
        attrs = getattr(v, "attrs", None)
        if getattr(v, "root", None) == "self" and attrs and len(attrs) == 1 and attrs[0] != name:
            got = self._in_classes(class_qn, attrs[0], self.symbols.mro(class_qn))
            if got:  # a method of the class (an attribute that is none: not followed)
                return got
        return [MethodBinding(None, rel, w.line, w.shape,
                              f"`{w.shape}` in {f.qualname} rebinds {name} on the instance")]

    def _in_classes(self, receiver: str, name: str, mro: list[str]) -> list[MethodBinding]:
        for i, c in enumerate(mro):
            got = self._class_node(c)
            if got is None:
                t = self.symbols.project.lookup_method(c, name)
                if t and t.rpartition(".")[0] == c:
                    return [MethodBinding(t)]
                continue
            module, rel, node = got
            events = _events(node.body, name)
            if not events:
                continue
            alternatives: list[MethodBinding] | None = None  # None: what the next classes give
            for e in events:
                own = self._resolve(receiver, module, rel, c, node, e.node)
                if not e.conditional:
                    alternatives = own
                else:
                    before = alternatives if alternatives is not None else self._in_classes(receiver, name, mro[i + 1:])
                    alternatives = before + own
            return alternatives if alternatives is not None else self._in_classes(receiver, name, mro[i + 1:])
        return []

    def _resolve(self, receiver: str, module: str, rel: str, class_qn: str, node: ast.ClassDef,
                 stmt: ast.stmt) -> list[MethodBinding]:
        """The function one binding in the body of ``class_qn`` names."""
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return [MethodBinding(f"{class_qn}.{stmt.name}", rel, stmt.lineno, f"def {stmt.name}(...)")]
        value = stmt.value
        shape = ast.unparse(stmt)
        if isinstance(value, ast.Name):  # an alias of a function the body defines before it
            earlier = _events(node.body[: node.body.index(stmt)] if stmt in node.body else node.body, value.id)
            if earlier:
                return self._resolve(receiver, module, rel, class_qn, node, earlier[-1].node)
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            t = self.symbols.project.resolve_symbol(module, value.value.id)
            if t and t[0] == "cls":
                got = self._in_classes(receiver, value.attr, self.symbols.mro(t[1]))
                if got:
                    return got
        return [MethodBinding(None, rel, stmt.lineno, shape,
                              f"`{shape}` in the body of {class_qn.rpartition('.')[2]} binds it to a value not followed")]
