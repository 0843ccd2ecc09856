"""One function's source as the stdlib ``ast`` parsed it, with what the fact collectors ask of it:
each node's parent, its position (in characters, shifted to the file's lines), its text as written
(with the parentheses that wrap it alone), and the statements that share a physical line.

The texts are the ones a concrete syntax tree prints: a node's own parentheses belong to it
(``(a or b)``), a call's parentheses to the call, and the small statements of one line joined by
``;`` are one statement line, except in a one-line suite (``if x: return y``), whose statements
stand on the header's line and are no statement line of their own.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

COMPOUND = (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
            ast.AsyncFunctionDef, ast.ClassDef, ast.Match, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SINGLETONS = {True: "True", False: "False", None: "None"}


class DottedName(ast.expr):
    """The dotted module name of an import (``import a.b``, ``from a.b import c``): an attribute
    chain as a concrete syntax tree has it, read where the import runs."""

    _fields = ()

    def __init__(self, root: str, attrs: list[str], lineno: int, col: int, text: str):
        super().__init__()
        self.root, self.attrs, self.text = root, attrs, text
        self.lineno, self.col_offset, self.end_lineno, self.end_col_offset = lineno, col, lineno, col + len(text)


class NoneTest(ast.Compare):
    """``subject is None``, which a ``case None:`` of ``match subject`` tests: a test with no text of
    its own in the source, spelled from the subject's (``Snippet.none_test``)."""

    def __init__(self, subject: ast.expr):
        super().__init__(left=subject, ops=[ast.Is()], comparators=[ast.Constant(None)])
        ast.copy_location(self, subject)

    def spelled(self, subject: str) -> str:
        """The test's text, given the subject's (parenthesised unless it is one operand already)."""
        simple = isinstance(self.left, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))
        return f"{subject if simple else f'({subject})'} is None"


def singleton_name(node) -> str | None:
    """``True``, ``False`` and ``None`` are names in the source (constants to ``ast``)."""
    if isinstance(node, ast.Constant) and any(node.value is v for v in _SINGLETONS):
        return _SINGLETONS[node.value]
    return None


class Snippet:
    """``text`` parsed; line ``n`` of it is line ``n + line_offset`` of the file."""

    def __init__(self, text: str, line_offset: int):
        self.text = text
        self.line_offset = line_offset
        self.tree = ast.parse(text)
        self._lines = text.split("\n")
        starts = [0]
        for line in self._lines[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        self._starts = starts
        self._parent: dict[int, tuple[ast.AST, str]] = {}
        self._blocks: dict[int, tuple[list, int]] = {}  # statement -> (its list, index)
        self._spans: dict[int, tuple[int, int]] = {}
        self._prefixes: dict[tuple[int, int], ast.BoolOp] = {}
        self._prefix_ids: set[int] = set()
        self._code: dict[int, str] = {}
        self._none_tests: dict[int, NoneTest] = {}
        # the local container item a lookup node is (``held["r"]``, ``items[0]``), once a
        # ContextFinder answers it (node_context); describe names such a lookup by its spelling
        self.item_of = lambda node: None
        self._link(self.tree)

    # -- structure
    def _link(self, root: ast.AST) -> None:
        stack = [root]
        parent, blocks = self._parent, self._blocks
        while stack:
            node = stack.pop()
            for name, value in ast.iter_fields(node):
                if isinstance(value, list):
                    for i, item in enumerate(value):
                        if isinstance(item, ast.AST):
                            parent[id(item)] = (node, name)
                            if isinstance(item, ast.stmt):
                                blocks[id(item)] = (value, i)
                            stack.append(item)
                elif isinstance(value, ast.AST):
                    parent[id(value)] = (node, name)
                    stack.append(value)

    def adopt(self, node: ast.AST, parent: ast.AST, field: str) -> None:
        self._parent[id(node)] = (parent, field)

    def parent(self, node: ast.AST) -> ast.AST | None:
        p = self._parent.get(id(node))
        return p[0] if p else None

    def field(self, node: ast.AST) -> str | None:
        """The field of its parent that holds ``node`` ("test", "body", "orelse", ...)."""
        p = self._parent.get(id(node))
        return p[1] if p else None

    def prefix(self, node: ast.BoolOp, n: int) -> ast.expr:
        """The first ``n`` operands of ``a and b and c``: the left operand of a binary and/or."""
        if n == 1:
            return node.values[0]
        key = (id(node), n)
        if key not in self._prefixes:
            left = ast.BoolOp(op=node.op, values=node.values[:n])
            first, last = node.values[0], node.values[n - 1]
            start, end = self.span(first)[0], self.span(last)[1]
            self._spans[id(left)] = (start, end)
            left.lineno, left.col_offset = first.lineno, first.col_offset
            left.end_lineno, left.end_col_offset = last.end_lineno, last.end_col_offset
            self._parent[id(left)] = self._parent[id(node)]
            self._prefixes[key] = left
            self._prefix_ids.add(id(left))
        return self._prefixes[key]

    def none_test(self, subject: ast.expr) -> NoneTest:
        """``subject is None``, one node per subject (the finder keys its memos by node)."""
        if id(subject) not in self._none_tests:
            self._none_tests[id(subject)] = NoneTest(subject)
        return self._none_tests[id(subject)]

    # -- positions
    def line(self, node: ast.AST) -> int:
        return self._start_line(node) + self.line_offset

    def end_line(self, node: ast.AST) -> int:
        return node.end_lineno + self.line_offset

    def _start_line(self, node: ast.AST) -> int:
        if isinstance(node, ast.match_case):
            return node.pattern.lineno
        if isinstance(node, ast.BoolOp) and id(node) in self._prefix_ids:
            return self._line_of(self._spans[id(node)][0])
        return node.lineno

    def col(self, node: ast.AST) -> int:
        return self._char_col(node.lineno, node.col_offset)

    def _char_col(self, lineno: int, col: int) -> int:
        line = self._lines[lineno - 1]
        return col if line.isascii() else len(line.encode()[:col].decode(errors="replace"))

    def _offset(self, lineno: int, col: int) -> int:
        return self._starts[lineno - 1] + self._char_col(lineno, col)

    def _line_of(self, offset: int) -> int:
        lo, hi = 0, len(self._starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    # -- texts
    def span(self, node: ast.AST) -> tuple[int, int]:
        """Character offsets of ``node`` with the parentheses that wrap it alone."""
        key = id(node)
        if key not in self._spans:
            start = self._offset(node.lineno, node.col_offset)
            end = self._offset(node.end_lineno, node.end_col_offset)
            if isinstance(node, ast.GeneratorExp) and self._in_syntax_parens(node) and self._char(self._before(start)) != "(":
                start, end = start + 1, end - 1  # f(x for x in y): the parentheses are the call's
            elif isinstance(node, ast.expr):
                pairs = 0
                s, e = start, end
                while True:
                    b, a = self._before(s), self._after(e)
                    if b is None or a is None or self.text[b] != "(" or self.text[a] != ")":
                        break
                    pairs += 1
                    s, e = b, a + 1
                if pairs and self._in_syntax_parens(node):
                    pairs -= 1
                for _ in range(pairs):
                    start, end = self._before(start), self._after(end) + 1
            self._spans[key] = (start, end)
        return self._spans[key]

    def _in_syntax_parens(self, node: ast.AST) -> bool:
        """The parentheses around ``node`` are its parent's own: ``f(x)``, ``class C(B)``."""
        parent = self.parent(node)
        if isinstance(parent, ast.Call):
            return len(parent.args) + len(parent.keywords) == 1 and self.field(node) == "args"
        if isinstance(parent, ast.keyword):
            return False
        if isinstance(parent, ast.ClassDef):
            return len(parent.bases) + len(parent.keywords) == 1 and self.field(node) == "bases"
        return False

    def _char(self, pos: int | None) -> str:
        return "" if pos is None else self.text[pos]

    def _before(self, pos: int) -> int | None:
        """The offset of the last significant character before ``pos`` (spaces, line breaks and
        comments skipped)."""
        text = self.text
        i = pos - 1
        while i >= 0:
            c = text[i]
            if c in " \t\f\\\r":
                i -= 1
            elif c == "\n":
                j = i - 1
                line_start = text.rfind("\n", 0, i) + 1
                hash_at = _comment_start(text[line_start:i])
                i = line_start + hash_at - 1 if hash_at is not None else j
            else:
                return i
        return None

    def _after(self, pos: int) -> int | None:
        text = self.text
        i, n = pos, len(text)
        while i < n:
            c = text[i]
            if c in " \t\f\\\r\n":
                i += 1
            elif c == "#":
                nl = text.find("\n", i)
                i = n if nl < 0 else nl
            else:
                return i
        return None

    def code(self, node: ast.AST) -> str:
        """Source text of a node, normalised to one line (comments out, whitespace folded)."""
        key = id(node)
        if key not in self._code:
            if isinstance(node, DottedName):
                text = node.text
            elif isinstance(node, NoneTest):
                text = node.spelled(self.code(node.left))
            else:
                start, end = self.span(node)
                if isinstance(node, ast.stmt):
                    end = self._with_semicolon(end)
                text = self.text[start:end]
            self._code[key] = normalise(text)
        return self._code[key]

    def _with_semicolon(self, end: int) -> int:
        i = end
        while i < len(self.text) and self.text[i] in " \t":
            i += 1
        return i + 1 if i < len(self.text) and self.text[i] == ";" else end

    def is_simple_string(self, node: ast.AST) -> bool:
        """One string literal (no implicit concatenation, no f-string)."""
        if not (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
            return False
        start, end = self.span(node)
        try:
            tokens = [t for t in tokenize.generate_tokens(io.StringIO(self.text[start:end]).readline)
                      if t.type == tokenize.STRING]
        except (tokenize.TokenError, SyntaxError):
            return False
        return len(tokens) == 1

    # -- statements
    def block_of(self, stmt: ast.stmt) -> tuple[list, int] | None:
        return self._blocks.get(id(stmt))

    def is_suite(self, block: list) -> bool:
        """A block written on its header's line (``if x: return``)."""
        first = block[0]
        line = self._lines[first.lineno - 1]
        return bool(line[: self._char_col(first.lineno, first.col_offset)].strip())

    def line_group(self, block: list, index: int) -> list[ast.stmt]:
        """The simple statements of ``block`` on the physical line of ``block[index]`` (``a; b``)."""
        lo = hi = index
        if isinstance(block[index], COMPOUND):
            return [block[index]]
        while lo > 0 and not isinstance(block[lo - 1], COMPOUND) and block[lo - 1].end_lineno == block[lo].lineno:
            lo -= 1
        while hi + 1 < len(block) and not isinstance(block[hi + 1], COMPOUND) and block[hi].end_lineno == block[hi + 1].lineno:
            hi += 1
        return block[lo : hi + 1]

    def groups_before(self, block: list, index: int) -> list[list[ast.stmt]]:
        """The statement lines of ``block`` before the one holding ``block[index]``."""
        out, i = [], 0
        first = self.line_group(block, index)[0]
        while i < len(block) and block[i] is not first:
            group = self.line_group(block, i)
            out.append(group)
            i += len(group)
        return out


def _comment_start(line: str) -> int | None:
    """Where a ``#`` comment starts on ``line`` (outside string literals), if it has one."""
    if "#" not in line:
        return None
    i, n, quote = 0, len(line), None
    while i < n:
        c = line[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
        elif c == "#":
            return i
        elif c in "'\"":
            quote = c * 3 if line.startswith(c * 3, i) else c
            i += len(quote)
            continue
        i += 1
    return None


_COMMENT = re.compile(r"#[^\n]*")
_SPACE = re.compile(r"\s+")
_OPEN = re.compile(r"([(\[{]) ")
_CLOSE = re.compile(r" ([)\]}])")
_TRAILING_COMMA = re.compile(r",([)\]}])")


def normalise(text: str) -> str:
    text = _COMMENT.sub("", text)  # comments inside multi-line conditions
    text = _SPACE.sub(" ", text).strip()
    text = _OPEN.sub(r"\1", text)
    text = _CLOSE.sub(r"\1", text)
    return _TRAILING_COMMA.sub(r"\1", text)  # trailing commas of exploded calls
