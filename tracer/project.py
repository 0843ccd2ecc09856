"""A source tree as a queryable program: modules, classes, MROs, attribute types, calls.

``Project`` is a façade over passes that share one symbol table, each owning its own caches:

* ``modules.ModuleStore``   finds the tree's files and loads their summaries (lazily, or all
  at once in parallel with ``index_all``) through the on-disk ``summary_cache``;
* ``texts.SourceTexts``     whole-tree text scans that pick the few files worth parsing;
* ``symbols.SymbolTable``   what a name denotes; classes, MROs, subclasses; searches by name;
* ``inference.TypeInference``  attribute, return and expression types;
* ``calls.CallResolver``    each call site with its targets and how they were found.

Nothing is parsed until a query needs it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Callable, Iterable, Iterator

from spectrace.source import PackageSource, SglangSource
from spectrace.tracer.calls import CallResolver, ResolvedCall
from spectrace.tracer.index import ClassInfo, FuncInfo, ModuleSummary
from spectrace.tracer.inference import TypeInference, public
from spectrace.tracer.modules import ModuleStore, Progress
from spectrace.tracer.summary_cache import SummaryCache
from spectrace.tracer.symbols import SymbolTable, Type
from spectrace.tracer.texts import SourceTexts
from spectrace.tracer.tree import TreeState, source_packages

__all__ = ["Project", "ResolvedCall", "Type"]


class Project:
    def __init__(self, source: SglangSource | PackageSource, use_cache: bool = True, lambdas: str = "inline",
                 tree: TreeState | None = None):
        """``lambdas``: ``"inline"`` (a call of a lambda reaches what its body calls, and those calls
        are also the defining function's) or ``"nodes"`` (each lambda a function of its own,
        ``<scope>.<lambdaN>``, as PyCG and its successors name them). ``tree``: the tree's files
        and fingerprint when the caller has read them already (``tree.read_tree``)."""
        if lambdas not in ("inline", "nodes"):
            raise ValueError(f"lambdas must be 'inline' or 'nodes', not {lambdas!r}")
        self.lambdas = lambdas
        self.source = source
        self.use_cache = use_cache
        self.root = Path(source.root)
        self.cache = SummaryCache(use_cache)
        self.packages = source_packages(source)
        self.store = ModuleStore(self.root, self.cache, self.packages, tree.files if tree is not None else None)
        self.texts = SourceTexts(self.root, self.store, tree)
        self.symbols = SymbolTable(self.store, self.texts)
        self.types = TypeInference(self.symbols, lambda_nodes=lambdas == "nodes")
        self.resolver = CallResolver(self.types)

    # -- modules (ModuleStore)
    @property
    def files(self) -> dict[str, str]:
        """Module name -> path relative to the tree root."""
        return self.store.files

    @property
    def errors(self) -> list[str]:
        """Files that could not be parsed ("path:line: why"); the rest is analysed."""
        return self.store.errors

    def module(self, name: str) -> ModuleSummary | None:
        return self.store.module(name)

    def loaded_modules(self) -> Iterable[ModuleSummary]:
        return self.store.loaded()

    def modules_naming(self, word: str) -> list[ModuleSummary]:
        """The summaries of the modules whose text holds ``word`` as an identifier: the only ones
        that can read, write or declare an attribute of that name."""
        return [m for m in map(self.module, self.texts.mentions(word)) if m is not None]

    def index_all(self, jobs: int | None = None, progress: Progress | None = None) -> None:
        self.store.index_all(jobs, progress)

    def save(self) -> None:
        """Write what this process added to the cache: summaries, the tree's pack, text scans."""
        self.store.save()
        self.texts.save()

    @contextlib.contextmanager
    def parsing_ahead(self) -> Iterator[None]:
        """A block in which the modules that parsed ones import are parsed in a second process,
        whole-tree text scans are shared with another, and a module not parsed yet is read from its
        outline, each function's body parsed when it is first needed (a cold lazy walk's speed-up;
        answers are the same without them)."""
        with self.store.parsing_ahead(lazy_bodies=True), self.texts.sharing():
            yield

    # -- text scans (SourceTexts)
    def file_bytes(self, module: str) -> bytes:
        return self.texts.file_bytes(module)

    def cached_scan(self, name: str, compute: Callable[[], object]):
        return self.texts.cached_scan(name, compute)

    def fingerprint(self) -> str:
        return self.texts.fingerprint()

    def class_name_index(self) -> dict[str, list[str]]:
        return self.texts.class_name_index()

    # -- names and classes (SymbolTable)
    def split(self, qualname: str) -> tuple[ModuleSummary | None, str]:
        return self.symbols.split(qualname)

    def cls(self, qualname: str) -> ClassInfo | None:
        return self.symbols.cls(qualname)

    def func(self, qualname: str) -> FuncInfo | None:
        return self.symbols.func(qualname)

    def module_of(self, qualname: str) -> ModuleSummary | None:
        return self.symbols.module_of(qualname)

    def resolve_symbol(self, module: str, name: str) -> Type | None:
        return self.symbols.resolve_symbol(module, name)

    def resolve_import(self, target) -> Type | None:
        return self.symbols.resolve_import(target)

    def type_of_expr_static(self, module: str, ir) -> Type | None:
        return self.symbols.type_of_expr_static(module, ir)

    def mro(self, class_qn: str) -> list[str]:
        return self.symbols.mro(class_qn)

    def lookup_method(self, class_qn: str, name: str, start_after: str | None = None) -> str | None:
        return self.symbols.lookup_method(class_qn, name, start_after)

    def subclasses(self, class_qn: str) -> list[str]:
        return self.symbols.subclasses(class_qn)

    def find_classes(self, name: str) -> list[str]:
        return self.symbols.find_classes(name)

    def find_functions(self, spec: str) -> list[str]:
        return self.symbols.find_functions(spec)

    def close_matches(self, spec: str, limit: int = 8) -> list[str]:
        return self.symbols.close_matches(spec, limit)

    # -- types (TypeInference); internal container and declared-instance tags are not exposed
    def attr_types(self, class_qn: str, attr: str) -> set:
        return public(self.types.attr_types(class_qn, attr))

    def return_types(self, func_qn: str) -> set:
        return public(self.types.return_types(func_qn))

    def param_types(self, func_qn: str, param: str) -> set:
        """What the callers pass to ``param`` (``*args``/``**kwargs`` spelled with their stars)."""
        return public(self.types.param_types(func_qn, param))

    def expr_types(self, func_qn: str, ir) -> set:
        return public(self.types.expr_types(func_qn, ir))

    def expr_types_in(self, module: str, f: FuncInfo | None, ir) -> set:
        return public(self.types.expr_types_in(module, f, ir))

    def annotation_types(self, module: str, ir, func: FuncInfo | None = None) -> set:
        return public(self.types.annotation_types(module, ir, func))

    # -- calls (CallResolver)
    def calls(self, func_qn: str, cha: bool = True) -> list[ResolvedCall]:
        """Every call site of ``func_qn``; ``cha=False``: no class-hierarchy expansion."""
        return self.resolver.calls(func_qn, cha=cha)

    def closure_calls(self, func_qn: str, cha: bool = True) -> list[ResolvedCall]:
        """The call sites of the functions nested in ``func_qn`` (at any depth), each with its ``closure``."""
        return self.resolver.closure_calls(func_qn, cha=cha)

    def resolve_call(self, module: str, f: FuncInfo, callee, line: int, col: int, cha: bool = True) -> ResolvedCall:
        return self.resolver.resolve_call(module, f, callee, line, col, cha=cha)
