"""Write bench/callgraph/sglang-<V>.json from the hand decisions in decisions_<V without dots>.py.

The decisions name, per call site or receiver, what it reaches: the receiver types read from the
assignments (ATTRS, TYPED), polymorphic sets, the overrides in SITES and the with-statements in WITH.
This script only does the mechanical part: lists the call sites of each root (nested functions
folded in), looks `self.m()` up in the MRO of the class `self` is, follows imports to the defining
module, expands CHA:Base to the classes deriving from Base, and fails on any site no decision covers.

    python bench/callgraph/sglang_key/build.py 0.5.9   # reads $SPECTRACE_CACHE_DIR/sglang/0.5.9
"""
import ast, os, sys, json, collections, importlib.util, builtins
from pathlib import Path

# the reading rules every version's key follows (docs/benchmarks.md)
CONVENTIONS = "depth-1 calls written in the root's body (nested functions folded in, calling them is no edge); a call of a class is an edge to its __init__ when SGLang defines one (dataclasses: none); polymorphic receivers reach every class assigned to them (every class deriving from the declared base where the object comes from a factory or registry); with-statements reach the __enter__/__exit__ SGLang defines; calls into torch, the stdlib and other packages, and property reads, are listed under not_in_key and not scored"
HERE = Path(__file__).resolve().parent
v = sys.argv[1]; root = Path(os.environ.get("SPECTRACE_CACHE_DIR", os.path.expanduser("~/.cache/spectrace"))) / "sglang" / v
spec = importlib.util.spec_from_file_location("d", HERE / f"decisions_{v.replace('.', '')}.py"); D = importlib.util.module_from_spec(spec); spec.loader.exec_module(D)
props = set(); classes = {}; byname = collections.defaultdict(list); funcs = set()
for f in (root / "sglang").rglob("*.py"):
    mod = ".".join(f.relative_to(root).with_suffix("").parts)
    if mod.endswith(".__init__"): mod = mod[:-9]
    try: t = ast.parse(f.read_text())
    except Exception: continue
    for n in t.body:
        if isinstance(n, ast.ClassDef):
            q = f"{mod}.{n.name}"
            classes[q] = ([ast.unparse(b).split(".")[-1].split("[")[0] for b in n.bases], {c.name for c in n.body if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef))})
            byname[n.name].append(q)
            props.update(f"{q}.{c.name}" for c in n.body if isinstance(c, ast.FunctionDef) and any(ast.unparse(d) == "property" for d in c.decorator_list))
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)): funcs.add(f"{mod}.{n.name}")
_base_cache = {}
def bases_of(c):
    if c not in _base_cache:
        m = c.rsplit(".", 1)[0]; res = []
        for b in classes[c][0]:
            r = resolve_name(m, b)
            if r not in classes:
                cands = [x for x in byname.get(b, []) if x != c]
                r = cands[0] if cands else None
            if r and r != c: res.append(r)
        _base_cache[c] = res
    return _base_cache[c]
_mro_cache = {}
def mro(cls):
    if cls in _mro_cache: return _mro_cache[cls]
    out = []
    def visit(c, path):
        out.append(c)
        for b in bases_of(c):
            if b not in path: visit(b, path | {b})
    visit(cls, {cls})
    seen = []
    for c in reversed(out):
        if c not in seen: seen.insert(0, c)
    _mro_cache[cls] = seen
    return seen
def lookup(cls, m):
    if cls not in classes: return None
    return next((f"{c}.{m}" for c in mro(cls) if m in classes[c][1]), None)
import re
def full(c):
    if c in classes: return c
    m = byname.get(c, [])
    m = [x for x in m if x.startswith("sglang.srt")] or m
    if len(m) != 1:
        print(f"CLASS {c}: {m}", file=sys.stderr); return "sglang.MISSING." + c
    return m[0]
def expand(spec):
    out = []
    for c in spec:
        if c.startswith("CHA:"):
            base = full(c[4:])
            out += [k for k in classes if base in mro(k)]
        else:
            out.append(full(c))
    return out
def typed(recv):
    for pat, cl in D.TYPED.items():
        if re.fullmatch(pat, recv): return cl
    return None
import functools
@functools.lru_cache(maxsize=None)
def module_tree(m):
    p = root / (m.replace(".", "/") + ".py")
    if not p.exists(): p = root / m.replace(".", "/") / "__init__.py"
    return ast.parse(p.read_text()) if p.exists() else None
@functools.lru_cache(maxsize=None)
def resolve_name(m, name, depth=0):
    t = module_tree(m)
    if t is None or depth > 3: return None
    for n in t.body:
        if isinstance(n, ast.ClassDef) and n.name == name: return f"{m}.{name}"
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name: return f"{m}.{name}"
    for n in ast.walk(t):
        if isinstance(n, ast.ImportFrom) and n.module:
            for a in n.names:
                if (a.asname or a.name) == name:
                    src = n.module if n.level == 0 else ".".join(m.split(".")[:-n.level] + [n.module])
                    if not src.startswith("sglang"): return "EXT"
                    q = f"{src}.{a.name}"
                    if q in classes or q in funcs: return q
                    return resolve_name(src, a.name, depth + 1)
    return None
def node_exists(q):
    if q in funcs: return True
    c, _, m = q.rpartition(".")
    return c in classes and m in classes[c][1]
EXT_ROOTS = {"time", "logger", "torch", "np", "numpy", "os", "threading", "logging", "json", "math", "dist", "collections", "random"}
EXT_METHODS = {"append", "extend", "tolist", "item", "cpu", "clone", "detach", "numpy", "reshape", "popleft", "pop", "get_nowait", "wait_stream", "synchronize", "record", "items", "keys", "values", "to", "sum", "any", "all", "copy_", "index_select", "size", "indices", "prod", "add", "update", "insert", "remove", "fill_", "zero_", "nonzero", "squeeze", "unsqueeze", "view", "split", "numel", "long", "int", "float", "max", "min", "argmax", "add_", "join", "format", "startswith", "endswith", "setdefault", "discard", "clear", "sort", "flatten", "repeat", "expand", "contiguous", "masked_fill_", "index_copy_", "scatter_", "gather", "narrow", "t", "mean", "new_empty", "new_zeros", "copy"}
out = {"version": v, "source": f"$SPECTRACE_CACHE_DIR/sglang/{v}/sglang", "conventions": CONVENTIONS, "roots": {}}
unhandled = []
for alias, (path, qual, selfcls) in D.ROOTS.items():
    tree = ast.parse((root / "sglang" / path).read_text()); node = tree
    for part in qual.split("."):
        node = next(n for n in ast.iter_child_nodes(node) if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == part)
    mod = "sglang." + path[:-3].replace("/", ".")
    calls = []
    for stmt in node.body:
        calls += [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    edges = collections.OrderedDict(); ext = []
    for n in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
        f = n.func; text = ast.unparse(f); site = f"{path}:{n.lineno}"
        key = f"{n.lineno} {text}"
        dec = D.SITES.get(key)
        if dec is None and isinstance(f, ast.Name) and hasattr(builtins, f.id): dec = ("EXT", "builtin")
        if dec is None and isinstance(f, ast.Name):
            tgt = resolve_name(mod, f.id)
            if tgt == "EXT": dec = ("EXT", f"{f.id}: imported from outside SGLang")
            elif tgt in classes:
                init = lookup(tgt, "__init__")
                dec = ([init], f"{f.id}(...): constructor, imported") if init else ("SKIP", f"{f.id}: class without __init__ in source (dataclass or inherited from outside)")
            elif tgt in funcs: dec = ([tgt], f"{f.id}: imported function")
        if dec is None and isinstance(f, ast.Name) and f.id in D.LOCAL_EXT: dec = ("EXT", D.LOCAL_EXT[f.id])
        if dec is None and isinstance(f, ast.Attribute):
            base = f.value
            while isinstance(base, (ast.Attribute, ast.Call, ast.Subscript)): base = base.value if not isinstance(base, ast.Call) else base.func
            if isinstance(base, ast.Name) and base.id in EXT_ROOTS: dec = ("EXT", f"{base.id} (stdlib/torch)")
            elif f.attr in EXT_METHODS and not (isinstance(f.value, ast.Name) and f.value.id == "self") and f"{f.attr}" not in D.NOT_EXT_METHODS and typed(ast.unparse(f.value)) is None: dec = ("EXT", f"{f.attr}() on a list/tensor/dict")
            elif isinstance(f.value, ast.Name) and f.value.id == "self" and selfcls:
                hit = lookup(selfcls, f.attr)
                if hit: dec = ([hit], f"self.{f.attr}: {selfcls.rsplit('.', 1)[-1]} MRO")
            elif isinstance(f.value, ast.Attribute) and isinstance(f.value.value, ast.Name) and f.value.value.id == "self" and f.value.attr in D.ATTRS.get(alias, D.ATTRS.get("*", {})):
                spec_ = D.ATTRS.get(alias, {}).get(f.value.attr) or D.ATTRS["*"][f.value.attr]
                if spec_ == "EXT": dec = ("EXT", f"self.{f.value.attr} is external")
                else:
                    hits = sorted({h for c in expand(spec_) for h in [lookup(c, f.attr)] if h})
                    dec = (hits, f"self.{f.value.attr} is {' | '.join(c.rsplit('.', 1)[-1] for c in spec_)}") if hits else None
            elif typed(ast.unparse(f.value)) is not None:
                cl = typed(ast.unparse(f.value))
                if cl == "EXT": dec = ("EXT", f"{ast.unparse(f.value)} is external")
                else:
                    hits = sorted({h for c in expand(cl) for h in [lookup(c, f.attr)] if h})
                    dec = (hits, f"{ast.unparse(f.value)} is {' | '.join(c.rsplit('.', 1)[-1] for c in cl)}") if hits else None
            if dec is None:
                for pat, d in D.PATTERNS.items():
                    if text.endswith(pat) if pat.startswith(".") else text == pat:
                        dec = d; break
        if dec is not None and dec[0] not in ("EXT", "SKIP"):
            dec = ([full(t.rsplit(".", 1)[0]) + "." + t.rsplit(".", 1)[1] if not node_exists(t) and "." in t and t.rsplit(".", 1)[0] in byname else t for t in dec[0]], dec[1])
        if dec is None:
            unhandled.append(f"{alias}\t{key}"); continue
        targets, why = dec
        if targets == "EXT": ext.append({"site": site, "call": text, "why": why}); continue
        if targets == "SKIP": ext.append({"site": site, "call": text, "why": why, "kind": "no node"}); continue
        for t in targets:
            if not node_exists(t): unhandled.append(f"{alias}\t{key}\tNO SUCH NODE {t}")
            e = edges.setdefault(t, {"callee": t, "sites": [], "comment": why})
            if site not in e["sites"]: e["sites"].append(site)
    for stmt in node.body:
        for w in ast.walk(stmt):
            if isinstance(w, (ast.With, ast.AsyncWith)) and w.lineno in getattr(D, "WITH", {}):
                targets, why = D.WITH[w.lineno]
                for t in targets:
                    e = edges.setdefault(t, {"callee": t, "sites": [], "comment": why})
                    if f"{path}:{w.lineno}" not in e["sites"]: e["sites"].append(f"{path}:{w.lineno}")
    seen_props = set()
    if selfcls:
        for stmt in node.body:
            for a in ast.walk(stmt):
                if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and a.value.id == "self" and isinstance(a.ctx, ast.Load):
                    hit = lookup(selfcls, a.attr)
                    if hit and hit in props and hit not in seen_props:
                        seen_props.add(hit)
                        ext.append({"site": f"{path}:{a.lineno}", "call": f"self.{a.attr}", "why": "property read (runs the getter); not scored", "kind": "property", "callee": hit})
    out["roots"][alias] = {"qualname": f"{mod}.{qual}", "file": f"{path}:{node.lineno}", "edges": list(edges.values()), "not_in_key": ext}
print("\n".join(unhandled) or "all sites handled", file=sys.stderr)
if unhandled:
    sys.exit(1)
(HERE.parent / f"sglang-{v}.json").write_text(json.dumps(out, indent=1) + "\n")
