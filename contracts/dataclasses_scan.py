"""Find a dataclass by class name and read its fields (names, annotations, defaults).

The fields drive the whole field-flow analysis, so a field added in a new release is traced
without any change here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from spectrace.errors import SpectraceError


@dataclass
class FieldInfo:
    name: str
    annotation: str
    default: str | None  # source of the default, None when there is none
    line: int

    @property
    def default_set(self) -> bool:
        """A default that is not None: the field is set even when a producer never names it."""
        if self.default is None:
            return False
        return self.default not in ("None", "field(default=None)", "dataclasses.field(default=None)")

    @property
    def may_be_none(self) -> bool:
        return not self.default_set


@dataclass
class DataclassInfo:
    name: str
    file: str
    line: int
    fields: dict  # name -> FieldInfo, in declaration order


def _is_dataclass_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id == "dataclass"
    if isinstance(target, ast.Attribute):
        return target.attr == "dataclass"
    return False


def find_dataclass(text: str, name: str, rel: str) -> DataclassInfo | None:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise SpectraceError(f"{rel}:{exc.lineno}: syntax error: {exc.msg}: the contracts depend on this file",
                             exit_code=2) from exc
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name and any(map(_is_dataclass_decorator, node.decorator_list)):
            fields = {}
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    ann = ast.unparse(stmt.annotation)
                    if ann.startswith(("ClassVar", "typing.ClassVar")):
                        continue
                    default = ast.unparse(stmt.value) if stmt.value is not None else None
                    if isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func).endswith("field"):
                        kws = {k.arg: ast.unparse(k.value) for k in stmt.value.keywords}
                        if "default" in kws:
                            default = "None" if kws["default"] == "None" else kws["default"]
                        elif "default_factory" in kws:
                            default = f"{kws['default_factory']}()"
                    fields[stmt.target.id] = FieldInfo(stmt.target.id, ann, default, stmt.lineno)
            return DataclassInfo(name=name, file=rel, line=node.lineno, fields=fields)
    return None
