"""Per-file summaries of Python source, extracted with ``ast`` (and cached by ``summary_cache``).

A summary holds what call resolution needs and nothing else: classes (bases, methods,
class-level annotations), functions (parameters and annotations, decorators, calls,
assignments, returned expressions, attribute reads and writes, local imports) and the
module's imports. Expressions are kept as a tiny tuple IR (see ``expr_ir``) so that a
summary pickles small and loads fast.

A summary is whole (``summarize_source``) or light (``light_summary``: no function bodies, nor
what is defined inside them), the latter what ``spectrace index`` writes: a whole-tree index then
costs little more than the parse. A light summary a query loads is completed in place, on first
need of a body, from the whole one (``defer_bodies``, ``complete``).

Why ``ast`` and not libcst here: the whole-package index must cover 4,700 files of SGLang
0.5.23 in under a minute on two cores; libcst needs 257 s on one core for that.

Caching the summaries is ``summary_cache``'s job; the classes here are what it pickles, so they
stay in this module (moving one would orphan every cached entry).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from typing import ClassVar

from spectrace.source import module_name

# ---------------------------------------------------------------------------- expression IR
# ("n", name)                 a name
# ("a", base, attr)           attribute
# ("c", func, kwnames)        call (keyword argument names kept for constructor field flow)
# ("s", base, (items...))     subscript (annotations: Optional[X], Type[X], Union[...])
# ("k", value)                constant (None, int, str: string annotations; other values as None)
# ("kb", value)               True or False
# ("|", left, right)          X | Y in annotations
# ("t", (items...))           tuple
# ("l", (items...))           list or set display
# ("d", (keys...), (values...))  dict display (`**m`: key ("?",), value m[("?",)], any entry of m)
# ("lc", elt)                 list/set comprehension, generator expression, what a generator yields
# ("dc", key, value)          dict comprehension
# ("bi", name, (args...))     a call of a builtin that passes elements on (list(x), zip(a, b), ...)
# ("it", iterable)            an element of iterable (loop and comprehension targets)
# ("ix", value, i)            the i-th item of value (tuple unpacking targets)
# ("lam", body, params, pos)  a lambda (its body's IR, parameter names, (line, col): its node in `lambdas`)
# ("pa", func, first)         a call of `partial`/`functools.partial` with its first argument
# ("def", qualname)           the function defined at a decorator's site (the decorator's argument)
# ("*", value), ("**", value) starred arguments of a call
# ("?",)                      anything else

UNKNOWN = ("?",)

# Builtins whose result is made of their arguments' elements (kept with their arguments).
ITER_BUILTINS = frozenset({"enumerate", "zip", "list", "tuple", "set", "frozenset", "sorted", "reversed",
                           "iter", "next", "filter", "map"})

# The pseudo-function that holds a module's top-level calls: ``pkg.mod.<module>``.
MODULE_FUNC = "<module>"


_INTERNED: dict = {}
_NAME_IRS: dict = {}  # name -> its interned ("n", name)


def expr_ir(node: ast.AST | None, depth: int = 0):
    """The IR of an expression; equal IRs are one shared object (smaller, faster pickles). One
    function, most frequent kinds first: it runs for most expression nodes of a tree."""
    t = type(node)
    if depth > 12:
        return UNKNOWN
    if t is ast.Name:  # most of them: one lookup, no tuple made
        ir = _NAME_IRS.get(node.id)
        if ir is None:
            ir = ("n", node.id)
            ir = _NAME_IRS[node.id] = _INTERNED.setdefault(ir, ir)
        return ir
    if t is ast.Attribute:
        ir = ("a", expr_ir(node.value, depth + 1), node.attr)
    elif t is ast.Call:
        ir = _call_ir(node, depth)
    elif t is ast.Constant:
        v = node.value
        if type(v) is bool:  # a tag of its own: ("k", True) == ("k", 1), and equal IRs are shared
            ir = ("kb", v)
        else:
            ir = ("k", v if v is None or isinstance(v, (str, int)) else None)
    elif t is ast.Subscript:
        sl = node.slice
        items = sl.elts if type(sl) is ast.Tuple else [sl]
        ir = ("s", expr_ir(node.value, depth + 1), tuple([expr_ir(i, depth + 1) for i in items]))
    elif t is ast.UnaryOp and type(node.op) is ast.USub and type(node.operand) is ast.Constant \
            and type(node.operand.value) is int:  # a negative index
        ir = ("k", -node.operand.value)
    elif t is ast.BinOp and type(node.op) is ast.BitOr:
        ir = ("|", expr_ir(node.left, depth + 1), expr_ir(node.right, depth + 1))
    elif t is ast.Tuple:
        ir = ("t", tuple([expr_ir(e, depth + 1) for e in node.elts]))
    elif t is ast.List or t is ast.Set:
        ir = ("l", tuple([expr_ir(e, depth + 1) for e in node.elts]))
    elif t is ast.Dict:
        ir = ("d", tuple([expr_ir(k, depth + 1) for k in node.keys]),
              tuple([expr_ir(v, depth + 1) if k is not None else ("s", expr_ir(v, depth + 1), (UNKNOWN,))
                     for k, v in zip(node.keys, node.values)]))
    elif t is ast.ListComp or t is ast.SetComp or t is ast.GeneratorExp:
        ir = ("lc", expr_ir(node.elt, depth + 1))
    elif t is ast.DictComp:
        ir = ("dc", expr_ir(node.key, depth + 1), expr_ir(node.value, depth + 1))
    elif t is ast.IfExp:  # a if c else b: either value
        ir = ("t|", (expr_ir(node.body, depth + 1), expr_ir(node.orelse, depth + 1)))
    elif t is ast.BoolOp and type(node.op) is ast.Or:  # x or Default(): either value
        ir = ("t|", tuple([expr_ir(v, depth + 1) for v in node.values]))
    elif t is ast.Await:
        return expr_ir(node.value, depth + 1)
    elif t is ast.Lambda:
        a = node.args
        names = tuple(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x)
        ir = ("lam", expr_ir(node.body, depth + 1), names, (node.lineno, node.col_offset))
    elif t is ast.Starred:
        ir = ("*", expr_ir(node.value, depth + 1))
    else:
        return UNKNOWN
    return _INTERNED.setdefault(ir, ir)


def _call_ir(node: ast.Call, depth: int):
    f = node.func
    tf = type(f)
    if tf is ast.Name and f.id in ITER_BUILTINS and not node.keywords:
        return ("bi", f.id, tuple([expr_ir(a, depth + 1) for a in node.args]))
    if (node.args and type(node.args[0]) is not ast.Starred
            and (f.id if tf is ast.Name else f.attr if tf is ast.Attribute else None) == "partial"):
        return ("pa", expr_ir(f, depth + 1), expr_ir(node.args[0], depth + 1))
    if tf is ast.Name and f.id == "dict" and not node.args and all(k.arg for k in node.keywords):
        # `dict(a=x, b=y)` is the display `{"a": x, "b": y}`
        return ("d", tuple([("k", k.arg) for k in node.keywords]),
                tuple([expr_ir(k.value, depth + 1) for k in node.keywords]))
    return ("c", expr_ir(f, depth + 1), tuple([k.arg for k in node.keywords if k.arg]))


def annotation_ir(node: ast.AST):
    """An annotation's IR; a string annotation (``"ForwardBatch"``) is parsed here, once per file
    content, rather than each time a query reads it (a string that is no expression stays one)."""
    if type(node) is ast.Constant and type(node.value) is str:
        try:
            return expr_ir(ast.parse(node.value, mode="eval").body)
        except (SyntaxError, ValueError):
            pass
    return expr_ir(node)


def ir_text(ir) -> str:
    """Source-like text of an IR expression, for labels and unresolved edges."""
    tag = ir[0]
    if tag == "n":
        return ir[1]
    if tag == "a":
        return f"{ir_text(ir[1])}.{ir[2]}"
    if tag in ("c", "pa"):
        return f"{ir_text(ir[1])}(...)"
    if tag == "s":
        return f"{ir_text(ir[1])}[{', '.join(ir_text(i) for i in ir[2])}]"
    if tag in ("k", "kb"):
        return repr(ir[1])
    if tag == "|":
        return f"{ir_text(ir[1])} | {ir_text(ir[2])}"
    if tag in ("t", "t|"):
        return "(" + ", ".join(ir_text(i) for i in ir[1]) + ")"
    if tag == "l":
        return "[" + ", ".join(ir_text(i) for i in ir[1]) + "]"
    if tag == "bi":
        return f"{ir[1]}(...)"
    if tag == "it":
        return f"<element of {ir_text(ir[1])}>"
    if tag == "lam":
        return f"(lambda: {ir_text(ir[1])})"
    if tag == "ix":
        return f"{ir_text(ir[1])}[{ir[2]}]"
    return "<expr>"


# ---------------------------------------------------------------------------- summaries
@dataclass
class FuncInfo:
    qualname: str  # within the module: "func", "Class.method", "outer.inner"
    name: str
    line: int
    end: int
    cls: str | None  # the class qualname (within the module) for methods
    params: list  # [(name, annotation_ir or None)]
    returns: tuple | None
    decorators: list
    calls: list = field(default_factory=list)  # [(line, col, func_ir, keyword names)]
    # [(target_ir, value_ir, annotation_ir, line)]; targets: names, `name.attr`, `name["key"]`
    assigns: list = field(default_factory=list)
    return_exprs: list = field(default_factory=list)
    imports: dict = field(default_factory=dict)  # local imports: name -> ("mod", m) | ("from", m, n)
    reads: dict = field(default_factory=dict)  # attr -> [lines]
    writes: dict = field(default_factory=dict)  # attr -> [lines]
    nested: list = field(default_factory=list)  # names of nested functions
    parent: str | None = None  # enclosing function qualname for nested functions
    # (line, col) of a call -> (positional arg IRs, ((keyword, IR), ...)); calls without arguments left out
    args: dict = field(default_factory=dict)
    protocols: list = field(default_factory=list)  # [(line, col, "iter"|"aiter"|"with"|"awith", value IR)]
    deco_sites: set = field(default_factory=set)  # (line, col) of `@factory(...)` applications
    npos: int = -1  # how many leading params take positional arguments (the rest are keyword-only)
    # `name.attr` read or written other than as a call's callee (a property's getter or setter runs):
    # (name, attr, written) -> (line, col) of its first use
    uses: dict = field(default_factory=dict)
    lambda_sites: set = field(default_factory=set)  # (line, col) of the calls written inside a lambda
    # (line, col) of the calls no call expression writes: `raise E` and a bare `@decorator`
    implicit_sites: set = field(default_factory=set)
    # What a dict's entries are read back from, in source order: [(line, target IR, value IR)]. Targets:
    # `d[k]` and `d[k1][k2]` (any key expression; `d.update(...)` one entry per key, an unknown key
    # for a value that is no display) and, at module level, names (`d = ...`), whose line orders them.
    stores: list = field(default_factory=list)
    # (first, last line) of each compound statement (if, for, while, try, match) of the body's own
    # statements: what is written inside may run or not, or more than once
    branches: list = field(default_factory=list)

    def __getattr__(self, name: str):
        """Only for attributes not set: the body of a light summary's function is summarised on
        first use (``ModuleStore`` sets how, see ``PendingTable``)."""
        complete = self.__dict__.get("_complete")
        if complete is None or name not in BODY_FIELDS:
            raise AttributeError(name)
        complete()
        return self.__dict__[name]

    def __getstate__(self):  # the hook that completes a light function is this process's alone
        d = self.__dict__
        if "_complete" in d:
            d = dict(d)
            del d["_complete"]
        return d

    @property
    def kind(self) -> str:
        names = {d[1] if d[0] == "n" else (d[2] if d[0] == "a" else None) for d in self.decorators}
        if "property" in names or "cached_property" in names:
            return "property"
        if "staticmethod" in names:
            return "staticmethod"
        if "classmethod" in names:
            return "classmethod"
        return "method" if self.cls else "function"


@dataclass
class ClassInfo:
    qualname: str
    name: str
    line: int
    end: int
    bases: list
    decorators: list
    methods: dict = field(default_factory=dict)  # name -> function qualname (within module)
    annotations: dict = field(default_factory=dict)  # class-level `x: T [= v]`
    assigns: dict = field(default_factory=dict)  # class-level `x = v`
    field_order: list = field(default_factory=list)  # annotated names in order (dataclass fields)


@dataclass
class ModuleSummary:
    module: str
    path: str  # relative to the python root
    is_package: bool
    imports: dict = field(default_factory=dict)
    classes: dict = field(default_factory=dict)
    functions: dict = field(default_factory=dict)
    globals: dict = field(default_factory=dict)  # module-level `x = v`
    star_imports: list = field(default_factory=list)  # modules of `from m import *`, in order
    # (line, col) of each lambda -> its function's qualname: `<lambdaN>` under the function (or class)
    # it is written in, numbered from 1 in source order as PyCG names them (`f.<lambda1>`)
    lambdas: dict = field(default_factory=dict)
    error: str | None = None


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


class _Extractor(ast.NodeVisitor):
    """One pass over a module; one handler per node kind (as in pyflakes)."""

    def __init__(self, summary: ModuleSummary, light: bool = False):
        self.s = summary
        self.light = light  # the bodies of functions not nested in one are left for ``summarize_source``
        self.class_stack: list[ClassInfo] = []
        self.func_stack: list[FuncInfo] = []
        self.hidden = 0  # inside a class body nested in a function: no scope records its calls
        self.lambda_params: list[set] = []  # parameter names of the lambdas being visited
        self.lambda_stack: list[FuncInfo] = []  # the lambdas being visited, innermost last
        self.scope_lambdas: list[list] = [[]]  # per scope being visited: its lambdas, to be named at its end
        self.callee = None  # the callee expression of the call being visited
        self.nesting = 0  # compound statements open around the statement being visited, in its scope
        # Calls made by module-level code (class bodies and decorators included).
        self.module_func = FuncInfo(qualname=MODULE_FUNC, name=MODULE_FUNC, line=1, end=1, cls=None,
                                    params=[], returns=None, decorators=[])

    # The walk is written by hand rather than driven by NodeVisitor's generic dispatch: a statement's
    # or expression's children are visited field by field in the order ``_fields`` lists them (the
    # order of the facts recorded depends on it), and the leaves that hold nothing (names,
    # constants, contexts, operators) are never called. Parsing and walking the trees into
    # summaries are most of a cold map and a cold index.
    _SKIP = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.Constant, ast.Name,
             ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.alias)
    _LEAF_FIELDS = frozenset({"ctx", "op", "id", "attr", "arg", "name", "names", "level", "module",
                              "type_comment", "kind", "is_async", "simple", "conversion", "lineno"})
    _handlers: ClassVar[dict] = {}
    _fields: ClassVar[dict] = {}  # node type -> the fields that may hold nodes worth visiting

    def visit(self, node):
        t = type(node)
        handler = self._handlers.get(t)
        if handler is None:
            handler = self._handler(t)
        return handler(self, node)

    @classmethod
    def _handler(cls, t):
        handler = getattr(cls, "visit_" + t.__name__, None) if t.__name__ != "Constant" else None
        if handler is None or getattr(ast.NodeVisitor, "visit_" + t.__name__, None) is handler:
            if not issubclass(t, ast.AST) or issubclass(t, cls._SKIP):
                handler = _Extractor._skip
            else:
                handler = _Extractor.generic_visit
        cls._handlers[t] = handler
        return handler

    def _skip(self, node):
        pass

    def _expr(self, node):
        """Visit one optional child; a leaf or None costs one type test."""
        t = type(node)
        if t is not ast.Name and t is not ast.Constant and node is not None:
            handler = self._handlers.get(t)
            if handler is None:
                handler = self._handler(t)
            handler(self, node)

    def _each(self, nodes):
        """Visit a list of children in order."""
        handlers = self._handlers
        for node in nodes:
            t = type(node)
            if t is not ast.Name and t is not ast.Constant and node is not None:
                handler = handlers.get(t)
                if handler is None:
                    handler = self._handler(t)
                handler(self, node)

    def generic_visit(self, node):
        """The kinds of node no handler is written for (rare ones: match statements, type aliases...)."""
        t = type(node)
        fields = self._fields.get(t)
        if fields is None:
            fields = self._fields[t] = tuple(f for f in t._fields if f not in self._LEAF_FIELDS)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                self._each(value)
            elif isinstance(value, ast.AST):
                self._expr(value)

    # -- containers: nothing recorded, their children visited
    def visit_Expr(self, node):
        self._expr(node.value)

    visit_Await = visit_Starred = visit_keyword = visit_Expr

    def visit_FormattedValue(self, node):
        self._expr(node.value)
        self._expr(node.format_spec)

    def visit_Subscript(self, node):
        self._expr(node.value)
        self._expr(node.slice)

    def visit_BinOp(self, node):
        self._expr(node.left)
        self._expr(node.right)

    def visit_Compare(self, node):
        self._expr(node.left)
        self._each(node.comparators)

    def visit_BoolOp(self, node):
        self._each(node.values)

    def visit_UnaryOp(self, node):
        self._expr(node.operand)

    def visit_Tuple(self, node):
        self._each(node.elts)

    visit_List = visit_Set = visit_Tuple

    def visit_Dict(self, node):
        self._each(node.keys)
        self._each(node.values)

    def visit_JoinedStr(self, node):
        self._each(node.values)

    def visit_IfExp(self, node):
        self._expr(node.test)
        self._expr(node.body)
        self._expr(node.orelse)

    def visit_Slice(self, node):
        self._expr(node.lower)
        self._expr(node.upper)
        self._expr(node.step)

    def _open_branch(self, node):
        """A compound statement: what its body writes may run once, never or many times."""
        f = self.scope()
        if not self.nesting and f is not None and not (self.class_stack and not self.func_stack):
            f.branches.append((node.lineno, node.end_lineno or node.lineno))
        self.nesting += 1

    def visit_If(self, node):
        self._open_branch(node)
        self._expr(node.test)
        self._each(node.body)
        self._each(node.orelse)
        self.nesting -= 1

    visit_While = visit_If

    def visit_Try(self, node):
        self._open_branch(node)
        self._each(node.body)
        self._each(node.handlers)
        self._each(node.orelse)
        self._each(node.finalbody)
        self.nesting -= 1

    visit_TryStar = visit_Try

    def visit_Match(self, node):
        self._open_branch(node)
        self.generic_visit(node)
        self.nesting -= 1

    def visit_ExceptHandler(self, node):
        self._expr(node.type)
        self._each(node.body)

    def visit_Assert(self, node):
        self._expr(node.test)
        self._expr(node.msg)

    def visit_Delete(self, node):
        self._each(node.targets)

    def visit_AugAssign(self, node):
        self._expr(node.target)
        self._expr(node.value)

    visit_NamedExpr = visit_AugAssign

    def visit_Module(self, node):
        self._each(node.body)

    def scope(self) -> FuncInfo | None:
        """The function whose calls the current statement makes (the module's pseudo-function at top level)."""
        if self.func_stack:
            return self.func_stack[-1]
        return None if self.hidden else self.module_func

    def add_call(self, node, func_ir, kwnames=(), args=None, implicit=False):
        f = self.func_stack[-1] if self.func_stack else (None if self.hidden else self.module_func)  # scope()
        if implicit and f is not None:
            f.implicit_sites.add((node.lineno, node.col_offset))
        if self.lambda_params:
            root = func_ir
            while root[0] in ("a", "c", "s"):
                root = root[1]
            if root[0] == "n" and any(root[1] in names for names in self.lambda_params):
                # a call of a lambda's parameter: the lambda's own, nothing the enclosing function can resolve
                lam = self.lambda_stack[-1] if self.lambda_stack else None
                if lam is not None and any(p == root[1] for p, _a in lam.params):
                    lam.calls.append((node.lineno, node.col_offset, func_ir, kwnames))
                    if args is not None and (args[0] or args[1]):
                        lam.args[(node.lineno, node.col_offset)] = args
                return
        if self.lambda_stack:  # the lambda's call, and (unless lambdas are nodes) its scope's
            lam = self.lambda_stack[-1]
            lam.calls.append((node.lineno, node.col_offset, func_ir, kwnames))
            if args is not None and (args[0] or args[1]):
                lam.args[(node.lineno, node.col_offset)] = args
        if f is not None:
            f.calls.append((node.lineno, node.col_offset, func_ir, kwnames))
            if args is not None and (args[0] or args[1]):
                f.args[(node.lineno, node.col_offset)] = args
            if self.lambda_stack:
                f.lambda_sites.add((node.lineno, node.col_offset))

    # -- scopes
    def visit_ClassDef(self, node: ast.ClassDef):
        if self.func_stack:  # classes inside functions: index them under the function's name
            prefix = self.func_stack[-1].qualname + "."
        else:
            prefix = self.class_stack[-1].qualname + "." if self.class_stack else ""
        info = ClassInfo(
            qualname=prefix + node.name,
            name=node.name,
            line=node.lineno,
            end=node.end_lineno or node.lineno,
            bases=[expr_ir(b) for b in node.bases],
            decorators=[expr_ir(d) for d in node.decorator_list],
        )
        self.s.classes[info.qualname] = info
        self.class_stack.append(info)
        saved_funcs, self.func_stack = self.func_stack, []
        hide = bool(saved_funcs)
        self.hidden += hide
        self._decorators(node, info.qualname)
        self.scope_lambdas.append([])
        for stmt in node.body:
            if type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name:
                info.annotations[stmt.target.id] = annotation_ir(stmt.annotation)
                info.field_order.append(stmt.target.id)
                if stmt.value is not None:
                    info.assigns[stmt.target.id] = expr_ir(stmt.value)
            elif type(stmt) is ast.Assign:
                for t in stmt.targets:
                    if type(t) is ast.Name:
                        info.assigns[t.id] = expr_ir(stmt.value)
            self.visit(stmt)
        self._name_lambdas(info.qualname)
        self.func_stack = saved_funcs
        self.hidden -= hide
        self.class_stack.pop()

    def _decorators(self, node, qualname: str):
        """Decorators run where the definition is: ``@d`` calls ``d`` with the function defined (or
        the next decorator's result); ``@d(...)`` is a visited call whose result is applied likewise."""
        applied = ("def", qualname)
        for d in reversed(node.decorator_list):  # the innermost decorator is applied first
            func_ir = expr_ir(d)
            if type(d) in (ast.Name, ast.Attribute):
                self.add_call(d, func_ir, (), ((applied,), ()), implicit=True)
            elif type(d) is ast.Call:
                site = (d.lineno, d.end_col_offset)
                f = self.scope()
                if f is not None:
                    f.calls.append((site[0], site[1], func_ir, ()))
                    f.args[site] = ((applied,), ())
                    f.deco_sites.add(site)
            applied = ("c", func_ir, ())
        for d in node.decorator_list:
            self.visit(d)

    def _function(self, node):
        parent = self.func_stack[-1] if self.func_stack else None
        cls = self.class_stack[-1] if (self.class_stack and parent is None) else None
        if parent is not None:
            qn = parent.qualname + "." + node.name
        elif cls is not None:
            qn = cls.qualname + "." + node.name
        else:
            qn = node.name
        args = node.args
        params = []
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            params.append((a.arg, annotation_ir(a.annotation) if a.annotation is not None else None))
        if args.vararg:
            params.append(("*" + args.vararg.arg, None))
        if args.kwarg:
            params.append(("**" + args.kwarg.arg, None))
        signature = {"qualname": qn, "name": node.name, "line": node.lineno, "end": node.end_lineno or node.lineno,
                     "cls": cls.qualname if cls is not None else None, "params": params,
                     "returns": annotation_ir(node.returns) if node.returns is not None else None,
                     "decorators": [expr_ir(d) for d in node.decorator_list],
                     "parent": parent.qualname if parent is not None else None,
                     "npos": len(args.posonlyargs) + len(args.args)}
        if self.light and parent is None:  # a signature alone: its body is summarised when asked for
            info = FuncInfo.__new__(FuncInfo)  # the fields in their order, the body's left out
            info.__dict__.update(signature)
        else:
            info = FuncInfo(**signature)
        self._decorators(node, qn)  # decorators are calls made at definition time
        getter = self._property_of(node, cls)
        if self.light and parent is None:
            if getter is not None:
                getter.params += [p for p in info.params if p not in getter.params]
                getter.end = max(getter.end, info.end)
                return
            if cls is not None:
                cls.methods[node.name] = qn
            self.s.functions[qn] = info
            return
        nesting, self.nesting = self.nesting, 0  # a body's statements run in order from its start
        if getter is not None:  # `@x.setter def x(...)`: one node with the getter, the two bodies' facts merged
            self.func_stack.append(info)
            for stmt in node.body:
                self.visit(stmt)
            self.func_stack.pop()
            self.nesting = nesting
            _merge_accessor(getter, info)
            return
        if cls is not None:
            cls.methods[node.name] = qn
        if parent is not None:
            parent.nested.append(node.name)
        self.s.functions[qn] = info
        self.func_stack.append(info)
        self.scope_lambdas.append([])
        for stmt in node.body:
            self.visit(stmt)
        self._name_lambdas(qn)
        self.func_stack.pop()
        self.nesting = nesting

    def _property_of(self, node, cls: ClassInfo | None) -> FuncInfo | None:
        """The getter a ``@<name>.setter`` (or ``.deleter``) definition belongs to, if indexed."""
        if cls is None or node.name not in cls.methods:
            return None
        for d in node.decorator_list:
            if (type(d) is ast.Attribute and d.attr in ("setter", "deleter") and type(d.value) is ast.Name
                    and d.value.id == node.name):
                getter = self.s.functions.get(cls.methods[node.name])
                return getter if getter is not None and getter.kind == "property" else None
        return None

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    # -- imports (module level, inside functions, under TYPE_CHECKING: all the same)
    def _bind_import(self, local: str, target):
        if self.func_stack:
            self.func_stack[-1].imports[local] = target
        else:
            self.s.imports.setdefault(local, target)

    def visit_Import(self, node: ast.Import):
        for alias in node.names:
            if alias.asname:
                self._bind_import(alias.asname, ("mod", alias.name))
            else:  # `import a.b.c` binds `a`
                top = alias.name.split(".")[0]
                self._bind_import(top, ("mod", top))

    def visit_ImportFrom(self, node: ast.ImportFrom):
        base = _resolve_relative(self.s.module, self.s.is_package, node.level, node.module)
        for alias in node.names:
            if alias.name == "*":
                if not self.func_stack and base not in self.s.star_imports:
                    self.s.star_imports.append(base)
                continue
            self._bind_import(alias.asname or alias.name, ("from", base, alias.name))

    # -- facts inside functions
    def visit_Call(self, node: ast.Call):
        f = node.func
        if type(f) is ast.Attribute and f.attr == "update" and _entry_root(f.value) is not None:
            self._record_update(node)
        keywords = node.keywords
        args = (tuple([expr_ir(a) for a in node.args]),
                tuple([(k.arg or "**", expr_ir(k.value)) for k in keywords]) if keywords else ())
        self.add_call(node, expr_ir(f), tuple([k.arg for k in keywords if k.arg]) if keywords else (), args)
        self.callee = node.func  # `x.m()` calls m: no property use (the walk meets func first)
        self._expr(f)
        self._each(node.args)
        for k in keywords:  # (a keyword node itself holds nothing)
            self._expr(k.value)

    def visit_Raise(self, node: ast.Raise):
        if type(node.exc) in (ast.Name, ast.Attribute):  # `raise E` instantiates E
            self.add_call(node.exc, expr_ir(node.exc), implicit=True)
        self._expr(node.exc)
        self._expr(node.cause)

    def _protocol(self, node, kind: str, value):
        f = self.scope()
        if f is not None:
            f.protocols.append((node.lineno, node.col_offset, kind, expr_ir(value)))

    def visit_For(self, node):
        self._open_branch(node)
        self._record_assign(node.target, ("it", expr_ir(node.iter)), None, node.lineno)
        self._protocol(node.iter, "aiter" if type(node) is ast.AsyncFor else "iter", node.iter)
        self._expr(node.target)
        self._expr(node.iter)
        self._each(node.body)
        self._each(node.orelse)
        self.nesting -= 1

    visit_AsyncFor = visit_For

    def _comprehension(self, node):
        if self.func_stack:  # module-level comprehension variables are no globals
            for gen in node.generators:
                self._record_assign(gen.target, ("it", expr_ir(gen.iter)), None, node.lineno)
                self._protocol(gen.iter, "aiter" if gen.is_async else "iter", gen.iter)
        if type(node) is ast.DictComp:
            self._expr(node.key)
            self._expr(node.value)
        else:
            self._expr(node.elt)
        self._each(node.generators)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_comprehension(self, node):
        self._expr(node.target)
        self._expr(node.iter)
        self._each(node.ifs)

    def _store_scope(self) -> FuncInfo | None:
        """The scope whose entry writes are recorded (a class body's are not: its names are the class's)."""
        if self.func_stack:
            return self.func_stack[-1]
        return None if self.class_stack or self.hidden else self.module_func

    def _record_store(self, target_ir, value_ir, line: int, literal: bool):
        """``d[k1]...[kn] = v``: an entry of the dict the root name holds, in its scope's order. At
        module level the name also holds, in any order, a display of that one entry (its keys
        unknown where not constant): what a read from elsewhere may find. Only where the name holds
        dict displays, or the write is ``d["k"] = v`` or ``d.update({...})`` (``literal``): another
        object's ``update`` or subscript makes it no dict."""
        f = self._store_scope()
        if f is None:
            return
        f.stores.append((line, target_ir, value_ir))
        root = target_ir
        while root[0] == "s":
            root = root[1]
        if f is self.module_func and (literal or dict_displays(self.s.globals.get(root[1]))):
            held = value_ir
            while target_ir[0] == "s":
                key = target_ir[2][0]
                held = ("d", (key if key[0] == "k" else UNKNOWN,), (held,))
                target_ir = target_ir[1]
            self._bind_global(target_ir[1], held)

    def _record_update(self, node: ast.Call):
        """``d.update(...)``: one entry write per key of a display or keyword; where the keys are not
        written (another dict, ``**kw``), an entry of unknown key holding any value of that one."""
        base = expr_ir(node.func.value)
        literal = len(node.args) == 1 and type(node.args[0]) is ast.Dict and not node.keywords
        entries = []
        for a in node.args:
            given = expr_ir(a)
            if given[0] == "d":  # (`**m` in it: an entry of unknown key, any of m's)
                entries += zip(given[1], given[2])
            else:
                entries.append((UNKNOWN, ("s", given, (UNKNOWN,))))
        for k in node.keywords:
            value = expr_ir(k.value)
            entries.append((("k", k.arg), value) if k.arg else (UNKNOWN, ("s", value, (UNKNOWN,))))
        for key, value in entries:
            self._record_store(_interned(("s", base, (key if key[0] == "k" else UNKNOWN,))), value, node.lineno,
                               literal and type(node.func.value) is ast.Name)

    def _record_assign(self, target, value_ir, annotation_ir, line):
        if type(target) is ast.Subscript and _entry_root(target) is not None:
            if (self.func_stack and type(target.value) is ast.Name and type(target.slice) is ast.Constant
                    and type(target.slice.value) is str):  # `d["key"] = v`: a dict's entry (`**d` binds it)
                self.func_stack[-1].assigns.append((expr_ir(target), value_ir, annotation_ir, line))
            if type(target.slice) is not ast.Slice:
                literal = (type(target.value) is ast.Name and type(target.slice) is ast.Constant
                           and type(target.slice.value) in (str, int))
                self._record_store(expr_ir(target), value_ir, line, literal)
        elif type(target) is ast.Name or (type(target) is ast.Attribute and type(target.value) is ast.Name):
            if self.func_stack:
                self.func_stack[-1].assigns.append((expr_ir(target), value_ir, annotation_ir, line))
            elif not self.class_stack and type(target) is ast.Name:
                self._bind_global(target.id, value_ir)
                if not self.hidden:
                    self.module_func.stores.append((line, expr_ir(target), value_ir))
        elif type(target) in (ast.Tuple, ast.List):
            for elt, item in _unpacked(target.elts, value_ir):
                self._record_assign(elt, item, None, line)

    def _bind_global(self, name: str, value_ir):
        """Every value a module-level name is assigned, as one expression (either of them)."""
        old = self.s.globals.get(name)
        if old is None or old == value_ir:
            self.s.globals[name] = value_ir
        elif old[0] == "t|" and old is not value_ir:
            if value_ir not in old[1]:
                self.s.globals[name] = ("t|", old[1] + (value_ir,))
        else:
            self.s.globals[name] = ("t|", (old, value_ir))

    def visit_Assign(self, node: ast.Assign):
        value = expr_ir(node.value)
        for t in node.targets:
            self._record_assign(t, value, None, node.lineno)
        self._each(node.targets)
        self._expr(node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign):
        if self.func_stack or not self.class_stack:
            self._record_assign(node.target, expr_ir(node.value) if node.value else UNKNOWN,
                                annotation_ir(node.annotation), node.lineno)
        self._expr(node.target)
        self._expr(node.annotation)
        self._expr(node.value)

    def visit_With(self, node):
        for item in node.items:
            self._protocol(item.context_expr, "awith" if type(node) is ast.AsyncWith else "with", item.context_expr)
            if item.optional_vars is not None:
                self._record_assign(item.optional_vars, UNKNOWN, None, node.lineno)
        self._each(node.items)
        self._each(node.body)

    visit_AsyncWith = visit_With

    def visit_withitem(self, node):
        self._expr(node.context_expr)
        self._expr(node.optional_vars)

    def visit_Return(self, node: ast.Return):
        if self.func_stack and node.value is not None:
            self.func_stack[-1].return_exprs.append(expr_ir(node.value))
        self._expr(node.value)

    def visit_Yield(self, node):
        # a generator returns an iterator over what it yields: the yielded values' sequence
        if self.func_stack and node.value is not None:
            yielded = expr_ir(node.value)
            self.func_stack[-1].return_exprs.append(("lc", yielded if type(node) is ast.Yield else ("it", yielded)))
        self._expr(node.value)

    visit_YieldFrom = visit_Yield

    def visit_Attribute(self, node: ast.Attribute):
        if self.func_stack:
            f = self.func_stack[-1]
            store = type(node.ctx) is ast.Store
            book = f.writes if store else f.reads
            lines = book.get(node.attr)
            if lines is None:
                book[node.attr] = [node.lineno]
            else:
                lines.append(node.lineno)
            if type(node.value) is ast.Name and node is not self.callee:
                f.uses.setdefault((node.value.id, node.attr, store), (node.lineno, node.col_offset))
        self._expr(node.value)  # (the only field that may hold a node)

    def visit_Lambda(self, node):
        a = node.args
        params = [(x.arg, None) for x in a.posonlyargs + a.args + a.kwonlyargs]
        params += [("*" + a.vararg.arg, None)] if a.vararg else []
        params += [("**" + a.kwarg.arg, None)] if a.kwarg else []
        enclosing = self.func_stack[-1] if self.func_stack else None
        lam = FuncInfo(qualname="", name="<lambda>", line=node.lineno, end=node.end_lineno or node.lineno, cls=None,
                       params=params, returns=None, decorators=[], return_exprs=[expr_ir(node.body)],
                       parent=enclosing.qualname if enclosing is not None else None,
                       npos=len(a.posonlyargs) + len(a.args))
        self.scope_lambdas[-1].append(((node.lineno, node.col_offset), lam))
        self.lambda_params.append({p.lstrip("*") for p, _a in params})
        self.lambda_stack.append(lam)
        self.generic_visit(node)
        self.lambda_stack.pop()
        self.lambda_params.pop()

    def _name_lambdas(self, prefix: str):
        """The lambdas of the scope ending here, ``<prefix>.<lambdaN>`` in source order."""
        for n, (pos, lam) in enumerate(sorted(self.scope_lambdas.pop(), key=lambda x: x[0]), 1):
            lam.name = f"<lambda{n}>"
            lam.qualname = f"{prefix}.{lam.name}" if prefix else lam.name
            self.s.lambdas[pos] = lam.qualname
            self.s.functions[lam.qualname] = lam


def _entry_root(node) -> str | None:
    """The name under a chain of subscripts (``d`` of ``d[a][b]``), or None."""
    while type(node) is ast.Subscript:
        node = node.value
    return node.id if type(node) is ast.Name else None


def dict_displays(ir) -> bool:
    """A dict display, or either of dict displays (a global's values)."""
    return ir is not None and (ir[0] == "d" or ir[0] == "t|" and all(dict_displays(v) for v in ir[1]))


def _interned(ir):
    return _INTERNED.setdefault(ir, ir)


def _unpacked(targets: list, value_ir):
    """``a, *b, c = value``: each target with the IR of what it receives. Before a starred target
    the i-th item; the starred one a list of the middle items; after it the items counted from the
    end (a display's own items where the value is one)."""
    star = next((i for i, e in enumerate(targets) if type(e) is ast.Starred), None)
    if value_ir == UNKNOWN:
        return [(e.value if type(e) is ast.Starred else e, UNKNOWN) for e in targets]
    display = value_ir[1] if value_ir[0] in ("t", "l") and not any(x[0] == "*" for x in value_ir[1]) else None
    out = []
    for i, elt in enumerate(targets):
        if star is None or i < star:
            item = display[i] if display is not None and i < len(display) else ("ix", value_ir, i)
        elif i == star:
            after = len(targets) - star - 1
            item = ("l", display[star:len(display) - after]) if display is not None else ("bi", "list", (value_ir,))
            elt = elt.value
        else:
            back = i - len(targets)
            item = display[back] if display is not None and -len(display) <= back else ("it", value_ir)
        out.append((elt, item))
    return out


# What a function's body holds: left out of a light summary's functions (``light_summary``).
BODY_FIELDS = ("calls", "assigns", "return_exprs", "imports", "reads", "writes", "nested", "args", "protocols",
               "deco_sites", "uses", "lambda_sites", "implicit_sites", "stores", "branches")


def _strip_body(info: FuncInfo) -> None:
    d = info.__dict__
    for name in BODY_FIELDS:
        del d[name]


def _merge_accessor(getter: FuncInfo, accessor: FuncInfo) -> None:
    """A property's setter or deleter runs on attribute writes: its calls and facts are the property's."""
    getter.calls += accessor.calls
    getter.args.update(accessor.args)
    getter.assigns += accessor.assigns
    getter.stores += accessor.stores
    getter.branches += accessor.branches
    getter.protocols += accessor.protocols
    getter.deco_sites |= accessor.deco_sites
    getter.lambda_sites |= accessor.lambda_sites
    getter.implicit_sites |= accessor.implicit_sites
    getter.nested += [n for n in accessor.nested if n not in getter.nested]
    getter.params += [p for p in accessor.params if p not in getter.params]
    for name, target in accessor.imports.items():
        getter.imports.setdefault(name, target)
    for mine, theirs in ((getter.reads, accessor.reads), (getter.writes, accessor.writes)):
        for attr, lines in theirs.items():
            mine.setdefault(attr, []).extend(lines)
    for key, site in accessor.uses.items():
        getter.uses.setdefault(key, site)
    getter.end = max(getter.end, accessor.end)


def summarize_source(source: bytes, relpath: str) -> ModuleSummary:
    """The whole summary of a module: every function's body included."""
    return _summarize(source, relpath, light=False)


def light_summary(source: bytes, relpath: str) -> ModuleSummary:
    """A module's summary without the bodies of its functions and methods (what is written inside
    them: their calls, assignments and other facts, and the functions, classes and lambdas defined
    there), for ``spectrace index`` and a lazy walk; ``complete`` adds them from the whole one.
    Module-level code, class bodies, decorators and signatures are all in."""
    summary = _summarize(source, relpath, light=True)
    if summary.error is None:
        summary.__dict__["light"] = True  # no field: a whole summary pickles as it always has
    return summary


def lighten(whole: ModuleSummary) -> ModuleSummary:
    """``light_summary`` of the source that ``whole`` summarises, made from ``whole`` (left as it is)."""
    if whole.error is not None:
        return whole
    defs = [(f.line, f.end) for f in whole.functions.values()
            if f.parent is None and f.qualname != MODULE_FUNC and not f.name.startswith("<lambda")]

    def in_a_body(line: int) -> bool:  # a class statement's line is never its function's `def` line
        return any(start < line <= end for start, end in defs)

    classes = {qn: c for qn, c in whole.classes.items() if not in_a_body(c.line)}
    functions = {}
    for qn, f in whole.functions.items():
        if f.name.startswith("<lambda"):
            outer = qn.rpartition(".")[0]
            if f.parent is None and (not outer or outer in classes):
                functions[qn] = f
        elif f.parent is None and (f.cls is None or f.cls in classes):
            if qn != MODULE_FUNC:
                f = copy.copy(f)
                _strip_body(f)
            functions[qn] = f
    light = copy.copy(whole)
    light.functions = functions
    light.classes = classes
    light.lambdas = {pos: qn for pos, qn in whole.lambdas.items() if qn in functions}
    light.__dict__["light"] = True
    return light


def body_pending(f: FuncInfo) -> bool:
    """Whether ``f``'s body is still to be summarised (a light summary's function)."""
    return "_complete" in f.__dict__


def is_light(summary: ModuleSummary) -> bool:
    return "light" in summary.__dict__


class PendingTable(dict):
    """A light summary's table of functions, classes or lambdas. Walking over it first completes the
    module; asking for a key that may have been defined inside a function's body first gives that
    function its body (and the tables what it defines), or completes the module; other misses are
    answered from what the light summary holds."""

    __slots__ = ("_complete", "_inside")

    def __init__(self, items: dict, complete, inside):
        super().__init__(items)
        self._complete = complete  # None once the module is complete
        self._inside = inside  # key -> the hook of the function left out whose body may define it, or None

    def _fill(self) -> None:
        complete = self._complete
        if complete is not None:
            complete()

    def _miss(self, key) -> None:
        if self._complete is not None and not dict.__contains__(self, key):
            owner = self._inside(key)
            if owner is not None:
                owner()

    def get(self, key, default=None):
        self._miss(key)
        return dict.get(self, key, default)

    def __getitem__(self, key):
        self._miss(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key):
        self._miss(key)
        return dict.__contains__(self, key)

    def __iter__(self):
        self._fill()
        return dict.__iter__(self)

    def __len__(self):
        self._fill()
        return dict.__len__(self)

    def keys(self):
        self._fill()
        return dict.keys(self)

    def values(self):
        self._fill()
        return dict.values(self)

    def items(self):
        self._fill()
        return dict.items(self)

    def __reduce__(self):  # pickles as the plain table it stands for
        self._fill()
        return (dict, (dict(self),))


def defer_bodies(light: ModuleSummary, complete, complete_one=None, whole_classes: bool = False) -> None:
    """Arrange for ``complete()`` to be called (once) when a query first needs what ``light``
    leaves out: a function's body, or anything defined inside one. With ``complete_one``, a
    function's body is first asked of ``complete_one(qualname)``, which gives it that body alone
    and what it defines and says so (True), or leaves it to ``complete`` (False). ``whole_classes``:
    the light summary holds every class of the module (none is defined inside a function)."""
    functions = light.functions
    defs = {qn: (f.line, f.end) for qn, f in functions.items()
            if "calls" not in f.__dict__}  # the functions whose bodies are left out

    def once():
        for table in tables:
            table._complete = None
        defs.clear()
        complete()

    def one(qn):
        def hook():
            if qn not in defs:  # (given its body already)
                return
            if complete_one(qn):
                del defs[qn]  # what it defines is in the tables now
            else:
                once()
        return hook

    def named_inside(qn):  # `f.inner`, `C.m.<lambda1>`, `f.Local`: under a function left out
        if type(qn) is not str:
            return None
        head, _, _ = qn.rpartition(".")
        while head:
            if head in defs:
                return hooks[head]
            head, _, _ = head.rpartition(".")
        return None

    def at_inside(pos):  # a lambda's (line, col) inside a function left out
        return next((hooks[qn] for qn, (start, end) in defs.items() if start <= pos[0] <= end), None)

    hooks = {qn: (once if complete_one is None else one(qn)) for qn in defs}
    tables = [PendingTable(functions, once, named_inside), PendingTable(light.lambdas, once, at_inside)]
    light.functions, light.lambdas = tables
    if not whole_classes:
        tables.append(PendingTable(light.classes, once, named_inside))
        light.classes = tables[-1]
    for qn, hook in hooks.items():
        functions[qn].__dict__["_complete"] = hook


def complete(light: ModuleSummary, whole: ModuleSummary) -> None:
    """Make ``light`` the whole summary ``whole`` of the same source, in place: the functions it
    holds (the same objects, which callers may keep) get their bodies, the tables get what was
    defined inside functions, in ``whole``'s order. Where ``whole`` is the source's syntax error (an
    outline hid it in a body), the functions a caller may keep get empty bodies."""
    if whole.error is not None:
        empty = FuncInfo(qualname="", name="", line=0, end=0, cls=None, params=[], returns=None, decorators=[])
        for f in dict.values(light.functions):
            if "calls" not in f.__dict__:
                f.__dict__.update(copy.deepcopy({name: empty.__dict__[name] for name in BODY_FIELDS}))
                f.__dict__.pop("_complete", None)
    functions = {}
    for qn, f in whole.functions.items():
        mine = light.functions.get(qn)
        if mine is not None:
            d = mine.__dict__
            d.clear()
            d.update(f.__dict__)
            f = mine
        functions[qn] = f
    tables = {"functions": functions, "classes": whole.classes, "lambdas": whole.lambdas}
    for name, value in whole.__dict__.items():
        if name in tables:
            own = light.__dict__[name]  # a table a caller may hold: filled in place
            dict.clear(own)
            dict.update(own, tables[name])
            value = tables[name]  # a plain dict from here on
        light.__dict__[name] = value
    light.__dict__.pop("light", None)


def _line_count(source: bytes) -> int:
    """``len(source.splitlines())`` without making the lines (most sources have no ``\r``)."""
    if b"\r" in source:
        return len(source.splitlines())
    return source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0)


def _summarize(source: bytes, relpath: str, light: bool) -> ModuleSummary:
    module, is_pkg = module_name(relpath)
    summary = ModuleSummary(module=module, path=relpath, is_package=is_pkg)
    try:
        tree = ast.parse(source, filename=relpath)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        summary.error = f"{relpath}:{line}: syntax error: {getattr(exc, 'msg', exc)}"
        return summary
    ex = _Extractor(summary, light)
    ex.visit(tree)
    ex._name_lambdas("")
    if ex.module_func.calls:
        ex.module_func.end = _line_count(source) or 1
        ex.module_func.stores = _entry_stores(ex.module_func.stores)
        summary.functions[MODULE_FUNC] = ex.module_func
    return summary


def _entry_stores(stores: list) -> list:
    """Module-level stores less the binds that order nothing: a name bound once and given no entry."""
    rooted = set()
    bound: dict = {}
    for _line, target, _value in stores:
        if target[0] == "n":
            bound[target[1]] = bound.get(target[1], 0) + 1
        else:
            while target[0] == "s":
                target = target[1]
            rooted.add(target[1])
    return [s for s in stores if s[1][0] != "n" or s[1][1] in rooted or bound[s[1][1]] > 1]


# ---------------------------------------------------------------------------- lazy bodies
def outline_summary(source: bytes, relpath: str) -> tuple[ModuleSummary, bool] | None:
    """``light_summary`` of ``source`` from a parse of its outline (``outline``: the bodies of its
    functions blanked, found by a text scan), which costs a fraction of the whole parse; None
    where the scan cannot be sure of the bodies' extent (parse it whole), or the outline does not
    parse (the source itself has the error to report). With it, whether a class is defined inside
    a function (the light summary's classes are then not all of them). A syntax error inside a
    body is not seen until that body is parsed (``function_body``)."""
    from spectrace.tracer.outline import outline

    found = outline(source)
    if found is None:
        return None
    summary = _summarize(found.text, relpath, light=True)
    if summary.error is not None:
        return None
    module_func = summary.functions.get(MODULE_FUNC)
    if module_func is not None:  # its end is the source's last line, blank lines included
        module_func.end = _line_count(source) or 1
    summary.__dict__["light"] = True
    return summary, found.classes_in_bodies


@dataclass
class BodyParse:
    """One function's body parsed alone: what ``summarize_source`` records for it and for what is
    defined inside it."""
    body: dict  # its ``BODY_FIELDS``
    # the functions and lambdas defined inside it (at any depth), in the whole summary's order
    functions: dict
    lambdas: dict  # (line, col) -> qualname, of the lambdas written inside it
    classes: dict  # the classes defined inside it, in the whole summary's order


def function_body(light: ModuleSummary, qualname: str, lines: list[bytes]) -> BodyParse | None:
    """The body of one function of a light summary and what is defined inside it, from a parse of
    its own lines (``lines``: the source split at each ``\\n``): what ``summarize_source`` records
    for them. None where that is not sure: a function whose lines hold more than its own
    definition (a property's setter merged into its getter, a redefinition), a source whose lines
    a slice does not keep (``\\r``, a coding declaration), or a body that does not parse alone."""
    f = dict.get(light.functions, qualname)
    if f is None or f.parent is not None or f.line < 1 or f.end > len(lines):
        return None
    if b"coding" in lines[0] or (len(lines) > 1 and b"coding" in lines[1]):
        return None
    own = lines[f.line - 1:f.end]
    if any(b"\r" in line for line in own):
        return None
    if own[0][:1] in (b" ", b"\t"):  # indented: made the block of an `if` on the line before
        if f.line < 2:
            return None
        text = b"\n" * (f.line - 2) + b"if 1:\n" + b"\n".join(own)
    else:
        text = b"\n" * (f.line - 1) + b"\n".join(own)
    try:
        tree = ast.parse(text, filename=light.path)
    except (SyntaxError, ValueError):
        return None
    node = tree.body[0] if tree.body else None
    if type(node) is ast.If:
        node = node.body[0] if len(tree.body) == 1 and len(node.body) == 1 else None
    elif len(tree.body) != 1:
        node = None
    if (type(node) not in (ast.FunctionDef, ast.AsyncFunctionDef) or node.name != f.name
            or node.lineno != f.line or node.end_lineno != f.end):
        return None
    scratch = ModuleSummary(module=light.module, path=light.path, is_package=light.is_package)
    ex = _Extractor(scratch)
    if f.cls is not None:  # a method: its class's name makes its qualname (no other methods: no setter)
        cls_name = f.cls.rpartition(".")[2]
        ex.class_stack.append(ClassInfo(qualname=f.cls, name=cls_name, line=0, end=0, bases=[], decorators=[]))
    node.decorator_list = []  # they run where the function is defined: the light summary has them
    ex.visit(node)
    got = scratch.functions.pop(qualname, None)
    if got is None:
        return None
    return BodyParse({name: got.__dict__[name] for name in BODY_FIELDS}, scratch.functions, scratch.lambdas,
                     scratch.classes)


def add_body(light: ModuleSummary, qualname: str, parsed: BodyParse) -> None:
    """Give one function of a light summary its body and the tables what is defined inside it
    (``function_body``), where the whole summary has them: its functions and lambdas right after
    it, its classes before the first class that starts after it."""
    f = dict.get(light.functions, qualname)
    d = f.__dict__
    d.update(parsed.body)
    d.pop("_complete", None)
    if parsed.functions:
        _insert_after(light.functions, qualname, parsed.functions)
    if parsed.lambdas:
        dict.update(light.lambdas, parsed.lambdas)  # (looked up by position only: their order is no one's)
    if parsed.classes:
        after = next((qn for qn, c in dict.items(light.classes) if c.line > f.line), None)
        if after is None:
            dict.update(light.classes, parsed.classes)
        else:
            _insert_after(light.classes, None, parsed.classes, before=after)


def _insert_after(table: dict, key, items: dict, before=None) -> None:
    """``items`` put into ``table`` in place, right after ``key`` (or right before ``before``)."""
    entries = list(dict.items(table))
    at = next(i for i, (k, _v) in enumerate(entries) if k == (key if before is None else before))
    at += before is None
    dict.clear(table)
    dict.update(table, entries[:at])
    dict.update(table, items)
    dict.update(table, entries[at:])
