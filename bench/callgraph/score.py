#!/usr/bin/env python3
"""Score call-graph tools against hand-written keys, one small program per Python construct.

Each folder of ``bench/callgraph/programs/`` is a tiny package (``<construct>/__init__.py``,
``main.py``, sometimes more modules) with a ``key.json``: the caller -> callee edges Python runs,
as dotted names relative to the package (``main.f``, ``main.C.m``, ``main.<module>`` for
module-level code; the harness prefixes ``<construct>.``).

Runs spectrace, pyan3, code2flow, jarviscg and PyCG (the last four each from its own venv,
``.bench-venvs/<tool>``), turns each tool's output into dotted edges, keeps the edges whose two
ends are functions, methods or module bodies of the program, and prints precision / recall per
construct and overall (micro-averaged over all edges).

    python bench/callgraph/score.py --json /tmp/callgraph-bench.json

Conventions shared by the keys and the normalisation:
  * a call of a class is an edge to the ``__init__`` it runs when the program defines one
    (own or inherited from a program class); otherwise no edge;
  * lambdas and comprehensions are not nodes: their calls count as their enclosing function's;
    a call of a lambda is no edge (spectrace's ``lambda`` edges included);
  * class bodies count as the module body (decorating a method is a call from ``<module>``);
  * nested functions are nodes of their own (``outer.inner``);
  * calls into external code, and external code calling back, are not edges;
  * self edges are dropped (no program recurses).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
REPO = HERE.parent.parent
TOOLS = ("spectrace", "pyan3", "code2flow", "jarviscg", "pycg")
PYPI_NAME = {"pyan3": "pyan3", "code2flow": "code2flow", "jarviscg": "jarviscg", "pycg": "pycg"}
SCOPES = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


# --------------------------------------------------------------------------- the program


class Program:
    """Modules, functions and classes of one program, read with ast."""

    def __init__(self, construct: str):
        self.name = construct
        self.root = PROGRAMS / construct
        self.modules: set[str] = set()
        self.functions: set[str] = set()
        self.classes: dict[str, list[str]] = {}  # qualname -> base names as written
        self.class_defines: dict[str, set[str]] = {}
        for path in sorted(self.root.rglob("*.py")):
            rel = path.relative_to(self.root).with_suffix("").parts
            module = ".".join((construct,) + (rel[:-1] if rel[-1] == "__init__" else rel))
            self.modules.add(module)
            tree = ast.parse(path.read_text())
            self._walk(tree, module, module)
        key = json.loads((self.root / "key.json").read_text())
        self.description = key.get("description", "")
        self.key = {(f"{construct}.{a}", f"{construct}.{b}") for a, b in key["edges"]}
        unknown = {n for e in self.key for n in e} - self.nodes
        if unknown:
            raise SystemExit(f"{construct}/key.json names unknown nodes: {sorted(unknown)}")

    def _walk(self, node, prefix, module):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.add(f"{prefix}.{child.name}")
                self._walk(child, f"{prefix}.{child.name}", module)
            elif isinstance(child, ast.ClassDef):
                qual = f"{prefix}.{child.name}"
                self.classes[qual] = [ast.unparse(b).split(".")[-1] for b in child.bases]
                self.class_defines[qual] = {
                    c.name for c in child.body if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef))
                }
                self._walk(child, qual, module)
            else:
                self._walk(child, prefix, module)

    @property
    def nodes(self) -> set[str]:
        return self.functions | {f"{m}.<module>" for m in self.modules}

    def init_of(self, cls: str, seen=()) -> str | None:
        if "__init__" in self.class_defines.get(cls, ()):
            return f"{cls}.__init__"
        for base in self.classes.get(cls, []):
            matches = [c for c in self.classes if c.rsplit(".", 1)[-1] == base and c not in seen]
            for match in matches[:1]:
                found = self.init_of(match, seen + (cls,))
                if found:
                    return found
        return None

    def canon(self, name: str, callee: bool) -> str | None:
        name = name.replace("<locals>.", "")
        parts = name.split(".")
        for i, part in enumerate(parts):
            if part.startswith("<lambda") or part in SCOPES or part == "lambda":
                if callee:
                    return None
                name = ".".join(parts[:i])
                break
        if name in self.modules:
            return f"{name}.<module>"
        if name in self.classes:
            if callee:
                return self.init_of(name)
            if name.rsplit(".", 1)[0] in self.modules:
                return f"{name.rsplit('.', 1)[0]}.<module>"
            parent = name.rsplit(".", 1)[0]
            return self.canon(parent, callee=False)
        return name if name in self.nodes else None

    def normalise(self, raw) -> set[tuple[str, str]]:
        edges = set()
        for caller, callee in raw:
            caller, callee = caller.replace("<locals>.", ""), callee.replace("<locals>.", "")
            if callee in self.modules or callee.endswith(".<module>"):
                continue  # importing a module is no call
            if caller in self.classes and callee.startswith(caller + "."):
                continue  # a class node pointing at its own methods: the tool's constructor proxy
            if caller in self.modules and callee in self.classes and callee.rsplit(".", 1)[0] == caller:
                continue  # the module defining the class, not calling it
            a, b = self.canon(caller, callee=False), self.canon(callee, callee=True)
            if a and b and a != b:
                edges.add((a, b))
        return edges


# --------------------------------------------------------------------------- running the tools


class ToolFailed(Exception):
    def __init__(self, status, detail=""):
        super().__init__(status)
        self.status, self.detail = status, detail


def run(cmd, cwd, timeout, env=None):
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolFailed(f"timeout ({timeout} s)")
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        raise ToolFailed(f"crash (exit {proc.returncode})", tail[-1][:200] if tail else "")
    return proc


def files_of(prog: Program) -> list[str]:
    return [f"{prog.name}/{p.relative_to(prog.root)}" for p in sorted(prog.root.rglob("*.py"))]


def spectrace_map(args, source: Path, roots: list[str], cwd: Path, *options: str) -> dict:
    """``spectrace map --source SOURCE ROOTS --depth 1`` as json. spectrace has a <module> node only
    where module-level code calls something: a root it calls unknown is dropped and the run repeated."""
    roots = list(roots)
    while True:
        try:
            proc = run([args.spectrace, "map", "--source", str(source), *roots, "--depth", "1", "--format", "json",
                        *options], cwd, args.timeout)
            return json.loads(proc.stdout)
        except ToolFailed as exc:
            m = re.search(r"unknown root '([^']+)'", exc.detail)
            if not m or m.group(1) not in roots:
                raise
            roots.remove(m.group(1))


def edges_spectrace(prog, out, args):
    graph = spectrace_map(args, prog.root, sorted(prog.nodes), PROGRAMS, "--closures", "separate")
    # A `lambda` edge is a call of a lambda, drawn to what the lambda's body calls: the edge other
    # tools draw to a `<lambda>` node, dropped for them by `canon` and so dropped here too.
    return [(e["source"], e["target"]) for e in graph["edges"] if e.get("resolution") != "lambda"]


def pycg_shim(args) -> Path:
    """The PyPI wheel of PyCG ships its package as PyCG/ but imports `pycg`: a folder that exposes
    it under that name, for PYTHONPATH."""
    venv = Path(args.venvs) / "pycg"
    shim = Path(args.venvs) / "pycg-shim"
    shim.mkdir(exist_ok=True)
    link = shim / "pycg"
    if not link.exists():
        installed = list((venv / "lib").glob("python3*/site-packages/pycg"))
        link.symlink_to((installed or list((venv / "lib").glob("python3*/site-packages/PyCG")))[0].resolve())
    return shim.resolve()


def edges_pycg_like(prog, out, args, tool):
    venv = Path(args.venvs) / tool
    env = dict(os.environ)
    if tool == "pycg":
        env["PYTHONPATH"] = str(pycg_shim(args))
        cmd = [str(venv / "bin" / "python"), "-m", "pycg", "--package", ".", *files_of(prog), "-o", str(out)]
    else:
        cmd = [str(venv / "bin" / "jarviscg"), *files_of(prog), "--package", ".", "-o", str(out)]
    run(cmd, PROGRAMS, args.timeout, env)
    adjacency = json.loads(out.read_text())
    return [(a, b) for a, targets in adjacency.items() for b in targets]


def edges_pyan3(prog, out, args):
    venv = Path(args.venvs) / "pyan3"
    run([str(venv / "bin" / "pyan3"), *files_of(prog), "--root", ".", "--uses", "--no-defines", "--dot",
         "--file", str(out)], PROGRAMS, args.timeout)
    text = out.read_text()
    names = dict(re.findall(r'^\s*"([^"]+)" \[label=.*?tooltip="([^"\\]+)', text, re.M))
    return [(names.get(a, a), names.get(b, b)) for a, b in re.findall(r'^\s*"([^"]+)" -> "([^"]+)"', text, re.M)]


def edges_code2flow(prog, out, args):
    venv = Path(args.venvs) / "code2flow"
    run([str(venv / "bin" / "code2flow"), prog.name, "--language", "py", "--skip-parse-errors", "--quiet",
         "-o", str(out)], PROGRAMS, args.timeout)
    graph = json.loads(out.read_text())["graph"]

    def dotted(name):  # "main::C.m" -> "<construct>.main.C.m"; "(global)" is the module body
        stem, _, rest = name.partition("::")
        module = prog.name if stem == "__init__" else f"{prog.name}.{stem}"
        return module if rest == "(global)" else f"{module}.{rest}"

    nodes = {uid: dotted(n["name"]) for uid, n in graph["nodes"].items()}
    return [(nodes[e["source"]], nodes[e["target"]]) for e in graph["edges"]]


# --------------------------------------------------------------------------- a public suite


# spectrace's names of the builtin types' methods -> PyCG's (``"a".join`` is ``<**PyStr**>.join``)
PYCG_BUILTIN_TYPES = {"builtins.str": "<**PyStr**>", "builtins.dict": "<**PyDict**>",
                      "builtins.list": "<**PyList**>", "builtins.set": "<**PySet**>",
                      "builtins.tuple": "<**PyTuple**>"}


class SuiteProgram:
    """One program of a suite in PyCG's micro-benchmark layout: ``<category>/<name>/`` holding
    ``main.py`` (the entry point), the modules it imports, and ``callgraph.json``, the key as an
    adjacency list of dotted names relative to the program folder (``main`` is main.py's module
    body, ``<builtin>.len`` a builtin, ``<**PyStr**>.join`` a method of str, ``main.<lambda1>``
    the first lambda of main.py's top level); every edge counts, external ones included."""

    def __init__(self, root: Path, name: str):
        self.root, self.name = root, name
        self.modules: set[str] = set()
        self.functions: set[str] = set()
        self.classes: set[str] = set()
        self.lambdas: set[str] = set()  # spectrace's (and PyCG's) names of the lambdas: roots too
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).with_suffix("").parts
            if rel == ("__init__",):
                continue  # the program runs as a script from its folder: that folder is no package
            module = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
            self.modules.add(module)
            tree = ast.parse(path.read_text())
            self._walk(tree, module)
            self.lambdas |= _lambda_names(tree, module)
        adjacency = json.loads((root / "callgraph.json").read_text())
        self.key = {(a, b) for a, targets in adjacency.items() for b in targets}
        self.description = (root / "README.md").read_text().strip() if (root / "README.md").exists() else ""

    def _walk(self, node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.add(f"{prefix}.{child.name}")
                self._walk(child, f"{prefix}.{child.name}")
            elif isinstance(child, ast.ClassDef):
                self.classes.add(f"{prefix}.{child.name}")
                self._walk(child, f"{prefix}.{child.name}")
            else:
                self._walk(child, prefix)

    @property
    def roots(self) -> list[str]:
        return sorted(self.functions | self.lambdas | {f"{m}.<module>" for m in self.modules})

    def copy_to(self, dest: Path) -> Path:
        """The program without a top-level ``__init__.py`` (the folder is the script's path entry)."""
        for path in self.root.rglob("*.py"):
            rel = path.relative_to(self.root)
            if rel == Path("__init__.py"):
                continue
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(path.read_bytes())
        return dest

    def pycg_name(self, name: str) -> str | None:
        """A spectrace node in the key's names; None for what the key cannot name."""
        if name.startswith("?"):
            return None
        if name.endswith(".<module>"):
            return name[: -len(".<module>")]
        owner, _, attr = name.rpartition(".")
        if owner in PYCG_BUILTIN_TYPES:
            return f"{PYCG_BUILTIN_TYPES[owner]}.{attr}"
        if owner == "builtins":
            return f"<builtin>.{attr}"
        if name in self.classes:
            return None  # a class of the program without an __init__: calling it runs no function of it
        return name

    def normalise(self, raw) -> set[tuple[str, str]]:
        edges = set()
        for caller, callee in raw:
            a, b = self.pycg_name(caller), self.pycg_name(callee)
            if a and b:
                edges.add((a, b))
        return edges


def _lambda_names(scope, prefix: str) -> set[str]:
    """``<prefix>.<lambdaN>`` for the lambdas written in a function, class or module body (its
    decorators' included, nested definitions' not), N from 1 in source order; then each nested
    definition's likewise."""
    found, names = [], set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for d in child.decorator_list:
                    visit(d)
                names.update(_lambda_names(child, f"{prefix}.{child.name}"))
            else:
                if isinstance(child, ast.Lambda):
                    found.append((child.lineno, child.col_offset))
                visit(child)

    visit(ast.Module(body=scope.body, type_ignores=[]))
    names.update(f"{prefix}.<lambda{n}>" for n, _pos in enumerate(sorted(found), 1))
    return names


def suite_programs(folder: Path, only: set[str] | None) -> list[SuiteProgram]:
    found = sorted(p.parent for p in folder.rglob("callgraph.json") if (p.parent / "main.py").exists())
    programs = [SuiteProgram(p, str(p.relative_to(folder))) for p in found]
    return [p for p in programs if only is None or p.name in only or p.name.split("/")[0] in only]


def suite_spectrace(prog: SuiteProgram, out: Path, args):
    src = prog.copy_to(out.with_suffix(""))
    graph = spectrace_map(args, src, prog.roots, src, "--external", "--closures", "separate", "--lambdas", "nodes")
    return [(e["source"], e["target"]) for e in graph["edges"]]


def suite_pycg_like(prog: SuiteProgram, out: Path, args, tool):
    """PyCG and jarviscg as the suite runs them: ``main.py`` the entry point, the folder the package."""
    src = prog.copy_to(out.with_suffix(""))
    venv = Path(args.venvs) / tool
    env = dict(os.environ)
    if tool == "pycg":
        env["PYTHONPATH"] = str(pycg_shim(args))
        cmd = [str(venv / "bin" / "python"), "-m", "pycg", "--package", str(src), str(src / "main.py"), "-o", str(out)]
    else:
        cmd = [str(venv / "bin" / "jarviscg"), str(src / "main.py"), "--package", str(src), "-o", str(out)]
    run(cmd, src, args.timeout, env)
    adjacency = json.loads(out.read_text())
    return [(a, b) for a, targets in adjacency.items() for b in targets]


SUITE_RUNNERS = {
    "spectrace": suite_spectrace,
    "jarviscg": lambda p, o, a: suite_pycg_like(p, o, a, "jarviscg"),
    "pycg": lambda p, o, a: suite_pycg_like(p, o, a, "pycg"),
}


# jarviscg's names of the builtin types -> PyCG's
JARVIS_BUILTIN_TYPES = {"<str>": "<**PyStr**>", "<map>": "<**PyDict**>", "<list>": "<**PyList**>"}


def suite_normalise(prog: SuiteProgram, tool: str, raw) -> set[tuple[str, str]]:
    """A tool's edges in the key's names. PyCG's and jarviscg's edges to a module (an import) and
    to a class of the program (its definition, or the constructor proxy of a class without an
    ``__init__``) are not calls the key counts, as in the construct programs' scoring."""
    if tool == "spectrace":
        return prog.normalise(raw)
    edges = set()
    for a, b in raw:
        owner, dot, attr = b.partition(".")
        b = f"{JARVIS_BUILTIN_TYPES[owner]}.{attr}" if dot and owner in JARVIS_BUILTIN_TYPES else b
        if b not in prog.modules and b not in prog.classes:
            edges.add((a, b))
    return edges


RUNNERS = {
    "spectrace": edges_spectrace,
    "pyan3": edges_pyan3,
    "code2flow": edges_code2flow,
    "jarviscg": lambda p, o, a: edges_pycg_like(p, o, a, "jarviscg"),
    "pycg": lambda p, o, a: edges_pycg_like(p, o, a, "pycg"),
}


def tool_version(tool, args) -> str:
    if tool == "spectrace":
        try:
            rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                 text=True).stdout.strip()
        except OSError:
            rev = "?"
        return f"commit {rev}"
    pip = Path(args.venvs) / tool / "bin" / "pip"
    if not pip.exists():
        return "not installed"
    out = subprocess.run([str(pip), "show", PYPI_NAME[tool]], capture_output=True, text=True).stdout
    m = re.search(r"^Version: (\S+)", out, re.M)
    return m.group(1) if m else "?"


# --------------------------------------------------------------------------- scoring


def ratio(a, b):
    return a / b if b else None


def fmt(x):
    return "-" if x is None else f"{x:.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--programs", help="comma-separated constructs (default: all)")
    parser.add_argument("--venvs", default=str(REPO / ".bench-venvs"))
    parser.add_argument("--spectrace", default="spectrace", help="spectrace executable")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per tool per program")
    parser.add_argument("--json", help="write per-construct edges and scores here")
    parser.add_argument("--details", action="store_true", help="list missed and false edges")
    parser.add_argument("--suite", metavar="DIR",
                        help="score a suite in PyCG's micro-benchmark layout (DIR/<category>/<name>/main.py and "
                             "callgraph.json) instead of bench/callgraph/programs; --programs then picks names "
                             "or categories")
    args = parser.parse_args(argv)

    tools = args.tools.split(",")
    if args.suite:
        only = set(args.programs.split(",")) if args.programs else None
        programs = suite_programs(Path(args.suite), only)
        unknown = [t for t in tools if t not in SUITE_RUNNERS]
        if unknown:
            parser.error(f"--suite runs {', '.join(SUITE_RUNNERS)}, not {', '.join(unknown)}")
        runner = lambda prog, tool, out: suite_normalise(prog, tool, SUITE_RUNNERS[tool](prog, out, args))
    else:
        constructs = args.programs.split(",") if args.programs else sorted(
            p.name for p in PROGRAMS.iterdir() if (p / "key.json").exists())
        programs = [Program(c) for c in constructs]
        runner = lambda prog, tool, out: prog.normalise(RUNNERS[tool](prog, out, args))
    versions = {t: tool_version(t, args) for t in tools}
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n, prog in enumerate(programs):
            construct = prog.name
            results[construct] = {"description": prog.description, "key": sorted(prog.key), "tools": {}}
            for tool in tools:
                out = Path(tmp) / f"{tool}-{n}.{'txt' if tool == 'pyan3' else 'json'}"
                started = time.monotonic()
                entry = {"status": "ok"}
                try:
                    found = runner(prog, tool, out)
                except ToolFailed as exc:
                    entry.update(status=exc.status, detail=exc.detail)
                    found = None
                except (ValueError, KeyError, OSError, StopIteration) as exc:
                    entry.update(status="unreadable output", detail=f"{type(exc).__name__}: {exc}"[:200])
                    found = None
                entry["seconds"] = round(time.monotonic() - started, 2)
                if found is not None:
                    tp = found & prog.key
                    entry.update(
                        tp=len(tp), found=len(found), key=len(prog.key),
                        precision=ratio(len(tp), len(found)), recall=ratio(len(tp), len(prog.key)),
                        missed=sorted(prog.key - found), false=sorted(found - prog.key),
                    )
                results[construct]["tools"][tool] = entry
                print(f"{construct:22} {tool:10} {entry['status']:8} "
                      f"P={fmt(entry.get('precision'))} R={fmt(entry.get('recall'))}", file=sys.stderr, flush=True)

    overall = {}
    for tool in tools:
        entries = [r["tools"][tool] for r in results.values()]
        ok = [e for e in entries if e["status"] == "ok"]
        tp, found = sum(e["tp"] for e in ok), sum(e["found"] for e in ok)
        key = sum(len(r["key"]) for r in results.values())
        overall[tool] = {
            "precision": ratio(tp, found), "recall": ratio(tp, key), "tp": tp, "found": found, "key": key,
            "failed_programs": len(entries) - len(ok),
            "exact_programs": sum(1 for e in ok if not e["missed"] and not e["false"]),
        }

    head = "| construct | key edges | " + " | ".join(f"{t} P / R" for t in tools) + " |"
    lines = [head, "|" + "---|" * (len(tools) + 2)]
    for construct, r in results.items():
        cells = []
        for tool in tools:
            e = r["tools"][tool]
            cells.append(f"{fmt(e['precision'])} / {fmt(e['recall'])}" if e["status"] == "ok" else e["status"])
        lines.append(f"| {construct} | {len(r['key'])} | " + " | ".join(cells) + " |")
    lines.append(f"| **overall** (micro) | {overall[tools[0]]['key']} | " + " | ".join(
        f"**{fmt(overall[t]['precision'])} / {fmt(overall[t]['recall'])}**" for t in tools) + " |")
    lines.append("| programs exactly right | | " + " | ".join(
        f"{overall[t]['exact_programs']} / {len(results)}" for t in tools) + " |")
    table = "\n".join(lines)
    print("Tool versions: " + ", ".join(f"{t} {versions[t]}" for t in tools) + "\n")
    print(table)
    if args.details:
        for tool in tools:
            print(f"\n### {tool}")
            for construct, r in results.items():
                e = r["tools"][tool]
                if e["status"] != "ok":
                    print(f"- {construct}: {e['status']} {e.get('detail', '')}")
                    continue
                cut = 0 if args.suite else len(construct) + 1
                strip = lambda edges: ", ".join(f"{a[cut:]} -> {b[cut:]}" for a, b in edges)
                if e["missed"]:
                    print(f"- {construct} missed: {strip(e['missed'])}")
                if e["false"]:
                    print(f"- {construct} false: {strip(e['false'])}")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"versions": versions, "overall": overall, "constructs": results}, indent=1, default=list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
