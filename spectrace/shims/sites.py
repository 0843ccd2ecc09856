"""Code sites computed from the imported source with ``ast``, never from hard-coded line numbers:
the consumer's read of a contract, a function's definition and its return statements."""

from __future__ import annotations

import ast
import os
import sys
from typing import Any

# filename -> (tree, None) or (None, why it could not be parsed)
_PARSED: dict[str, tuple[ast.Module | None, str | None]] = {}


def _parse_file(filename: str) -> tuple[ast.Module | None, str | None]:
    if filename not in _PARSED:
        try:
            with open(filename, encoding="utf-8") as fh:
                _PARSED[filename] = (ast.parse(fh.read(), filename), None)
        except (OSError, SyntaxError, ValueError) as exc:
            _PARSED[filename] = (None, f"source {filename} not readable: {exc!r}")
    return _PARSED[filename]


def relative_source_path(filename: str) -> str:
    """Path relative to the directory that holds ``sglang/`` (as the static reports print it)."""
    norm = filename.replace(os.sep, "/")
    i = norm.rfind("/sglang/")
    return norm[i + 1:] if i >= 0 else norm


def _unwrap(func: Any) -> Any:
    func = getattr(func, "__func__", func)
    while hasattr(func, "__spectrace_wrapped__"):
        func = func.__spectrace_wrapped__
    while hasattr(func, "__wrapped__"):
        func = func.__wrapped__
    return func


def source_problem(func: Any) -> str | None:
    """Why ``function_node(func)`` cannot look at the function's source; None when it can."""
    code = getattr(_unwrap(func), "__code__", None)
    if code is None:
        return f"{func!r} has no code object"
    return _parse_file(code.co_filename)[1]


def function_node(func: Any) -> tuple[str, ast.AST] | None:
    """The ``FunctionDef`` of ``func`` in its source file, found through its code object."""
    code = getattr(_unwrap(func), "__code__", None)
    if code is None:
        return None
    tree, _ = _parse_file(code.co_filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first == code.co_firstlineno or node.lineno == code.co_firstlineno:
                return code.co_filename, node
    return None


def _normalise(code_text: str) -> str | None:
    """The catalog's shape in ``ast.unparse`` form; None when the shape is prose, not Python."""
    try:
        return ast.unparse(ast.parse(code_text.strip()))
    except SyntaxError:
        return None


def _own_nodes(fn: ast.AST):
    """Nodes of a function, not descending into nested functions or classes."""
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _attribute_chain(node: ast.AST) -> list[str]:
    chain = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    return chain[::-1]


def statement_lines(fn: ast.AST, shape: str | None, attribute_path: list[str] | None = None) -> list[int]:
    """Lines in ``fn`` of the statement (or expression) whose normalised text is ``shape``;
    failing that, of the reads of ``attribute_path`` (``x.next_draft_input.new_seq_lens``)."""
    lines: list[int] = []
    wanted = _normalise(shape) if shape else None
    if wanted:
        for node in _own_nodes(fn):
            if isinstance(node, (ast.stmt, ast.expr)) and ast.unparse(node) == wanted:
                lines.append(node.lineno)
    if not lines and attribute_path:
        for node in _own_nodes(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                # `<name>.a.b` exactly: the read of the catalog's path on a local (the result)
                base = node
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and _attribute_chain(node) == list(attribute_path):
                    lines.append(node.lineno)
    return sorted(set(lines))


def return_sites(fn: ast.AST, filename: str) -> list[dict]:
    rel = relative_source_path(filename)
    return [{"file": rel, "line": n.lineno, "text": ast.unparse(n)[:120]}
            for n in sorted((n for n in _own_nodes(fn) if isinstance(n, ast.Return)), key=lambda n: n.lineno)]


def function_site(func: Any, qualname: str | None = None) -> dict:
    """``file``, ``line`` and ``qualname`` of a function, with its return statements."""
    code = getattr(_unwrap(func), "__code__", None)
    if code is None:
        return {"qualname": qualname}
    real_name = getattr(_unwrap(func), "__qualname__", code.co_name)
    site = {"file": relative_source_path(code.co_filename), "line": code.co_firstlineno,
            "qualname": qualname or real_name}
    if qualname and real_name.split(".")[-1] != qualname.split(".")[-1]:
        site["function"] = real_name  # the method was replaced by another function
    found = function_node(func)
    if found:
        site["return_sites"] = return_sites(found[1], found[0])
    else:
        site["source_problem"] = source_problem(func) or "definition not found in its source file"
    return site


def resolve_consumer(consumer: str, scheduler_cls: type | None) -> tuple[Any, str] | None:
    """``Class.method`` (module-free, as the catalog writes it) -> the function object."""
    if "." not in consumer:
        return None
    cls_name, meth = consumer.rsplit(".", 1)
    cls_name = cls_name.rsplit(".", 1)[-1]
    candidates: list[type] = []
    if scheduler_cls is not None:
        candidates += [c for c in scheduler_cls.__mro__ if c.__name__ == cls_name]
    if not candidates:
        for modname, mod in list(sys.modules.items()):
            if modname.startswith("sglang.") and mod is not None:
                obj = getattr(mod, cls_name, None)
                if isinstance(obj, type):
                    candidates.append(obj)
                    break
    for cls in candidates:
        func = cls.__dict__.get(meth)
        if func is not None:
            return func, f"{cls.__name__}.{meth}"
    return None
