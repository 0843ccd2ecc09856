"""The modules of one source tree and their summaries, loaded lazily or all at once.

A summary comes from the per-tree pack when its file's size and mtime are unchanged, else from
the cache by content or a fresh parse (``summary_cache``). Whatever is parsed is put back into the
pack, which ``save`` writes for the next process. The pack keeps each module's light summary and,
once a process has made it, its whole one; a module loaded from the pack is light until a query
needs a body.
"""

from __future__ import annotations

import contextlib
import copy
import os
import pickle
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable, Iterator

from spectrace.interrupts import process_pool
from spectrace.tracer.index import (MODULE_FUNC, ClassInfo, FuncInfo, ModuleSummary, PendingTable, add_body, body_pending,
                                    complete, defer_bodies, function_body, is_light, lighten)
from spectrace.tracer.prefetch import ParseAhead
from spectrace.tracer.summary_cache import (SummaryCache, is_outlined, keep_blobs, module_stats, outline_file,
                                           summarize_file, summarize_in_worker, whole_key)
from spectrace.tracer.tree import module_files

Progress = Callable[[int, int], None]

# Below this many files to parse, starting a process pool costs more than it saves.
PARALLEL_FROM = 40

# A module asked for lazily is parsed from deep inside the inference's recursion. CPython 3.11
# keeps frames in 16 KiB chunks, mapped and unmapped as the stack crosses into and out of one;
# the walk over a module's tree goes up and down thousands of times and, from some depths, crosses
# a chunk boundary each time (thousands of mmap/munmap pairs in a cold map, ~10 us each). Parsed
# on a thread of its own, the walk starts from a shallow stack and stays inside one chunk.
_parser: ThreadPoolExecutor | None = None


def _shallow(fn, *args):
    """``fn(*args)`` on the parsing thread."""
    global _parser
    if _parser is None:
        _parser = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spectrace-parse")
    return _parser.submit(fn, *args).result()


def _summarize_shallow(root: Path, rel: str, cache: SummaryCache):
    return _shallow(summarize_file, root, rel, cache)


def _names(text: bytes, word: str) -> bool:
    """Whether ``text`` holds ``word`` as a whole identifier (any text holds the empty word)."""
    if not word:
        return True
    w = word.encode()
    n, pos = len(w), text.find(w)
    while pos >= 0:
        before, after = text[pos - 1:pos] if pos else b"", text[pos + n:pos + n + 1]
        if not (before.isalnum() or before == b"_") and not (after.isalnum() or after == b"_"):
            return True
        pos = text.find(w, pos + 1)
    return False


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


class ModuleStore:
    def __init__(self, root: Path, cache: SummaryCache, packages: tuple[str, ...] = ("sglang",),
                 files: dict[str, str] | None = None):
        self.root = root
        self.packages = packages  # top-level package dirs (or single modules) under root
        self.cache = cache
        self.errors: list[str] = []  # files that could not be parsed, "path:line: why"
        self._summaries: dict[str, ModuleSummary | None] = {}  # None: no such module in the tree
        self._files = files  # None: walked when first asked
        # relpath -> (size, mtime_ns, content key, pickled light summary, stats, pickled whole one or None)
        self._pack: dict | None = None
        self._pack_dirty = False
        self._ahead: ParseAhead | None = None
        # Lazy bodies (a call-graph walk): a module not in the pack is summarised from its outline
        # and each function's body parsed alone when first needed (``index.outline_summary``,
        # ``index.function_body``); the module whole only when a query needs all of it.
        self.lazy_bodies = False
        # file -> its light summary, its source's lines (None until a body is asked for)
        self._outlined: dict[str, tuple[ModuleSummary, list[bytes] | None]] = {}
        self._walked: set[str] = set()  # files whose every function a query walks: parsed whole
        self._bodies_added: set[str] = set()  # outlined files given a body since their pickle was made
        self._texts: dict[int, bytes] = {}  # id of a function whose body is not parsed -> its text (b"": not ASCII)

    @contextlib.contextmanager
    def parsing_ahead(self, lazy_bodies: bool = False) -> Iterator[None]:
        """For the length of the block, the modules the walk is about to ask for are parsed ahead in
        a worker process (``prefetch``); what the worker finished goes into the pack. With
        ``lazy_bodies``, a module neither in the pack nor parsed ahead is read from its outline
        (see ``lazy_bodies`` above)."""
        was_lazy, self.lazy_bodies = self.lazy_bodies, lazy_bodies or self.lazy_bodies
        self._ahead = ParseAhead(self.root, self.cache.enabled, outlined=self.lazy_bodies)
        try:
            yield
        finally:
            self.lazy_bodies = was_lazy
            pack = self._load_pack()
            for rel, parsed in self._ahead.close():
                known = pack.get(rel)
                if known is None or is_outlined(known) or not is_outlined(parsed[0]):  # (never a whole one's)
                    self._keep_parsed(rel, parsed)
            self._ahead = None

    @property
    def files(self) -> dict[str, str]:
        """Module name -> file path relative to the tree root, for every ``.py`` of the packages."""
        if self._files is None:
            self._files = module_files(self.root, self.packages)
        return self._files

    def module(self, name: str) -> ModuleSummary | None:
        """The summary of a module of the tree (parsed on first use), None for any other name."""
        if name in self._summaries:
            return self._summaries[name]
        rel = self.files.get(name)
        if rel is None:
            self._summaries[name] = None
            return None
        summary = self._from_pack(rel)
        if summary is None:
            summary = self._from_worker(rel)
            if summary is None and self.lazy_bodies and rel not in self._walked:
                summary = self._from_outline(rel)
            if summary is None:
                summary, entry = _summarize_shallow(self.root, rel, self.cache)
                self._remember(rel, entry)
            if self._ahead is not None:  # the modules of its classes' bases (MROs are asked for first)
                self._ahead.expect(self._imported_files(self._base_imports(summary)))
        self._adopt(summary)
        return summary

    def _from_outline(self, rel: str) -> ModuleSummary | None:
        """The file's light summary from its outline, its bodies to be parsed one by one as they are
        needed; None where the scan gives no outline. Its pack entry is marked outlined in place of
        its counts (``summary_cache.is_outlined``): `index` summarises the file again, as the
        outline may hide a syntax error in a body; nor does its light summary go to the cache by
        content, for the same reason. The summary's pickle is made when the pack is saved, with the
        bodies parsed by then."""
        found = _shallow(outline_file, self.root, rel)
        if found is None:
            return None
        summary, _classes_in_bodies, data, entry = found
        self._remember(rel, entry)
        self._defer_outlined(summary, rel, entry, data)
        return summary

    def _defer_outlined(self, summary: ModuleSummary, rel: str, entry: tuple, data: bytes | None) -> None:
        """An outlined module's bodies (or, while the walk is lazy, a light module's whose whole
        summary is not in the pack): each parsed alone when first needed, the whole module when a
        query needs all of it (its source read when a body is first asked for, if not yet)."""
        self._outlined[rel] = (summary, data.split(b"\n") if data is not None else None)
        defer_bodies(summary, lambda: self._complete(summary, rel), lambda qn: self._complete_one(summary, rel, qn),
                     whole_classes=is_outlined(entry) and not entry[4][1])

    def _complete_one(self, light: ModuleSummary, rel: str, qualname: str) -> bool:
        """Give one function its body, and the tables what it defines, from a parse of its own lines
        (False: left to the module's whole parse)."""
        lines = self._source_lines(rel, light)
        if lines is None:
            return False
        parsed = _shallow(function_body, light, qualname, lines)
        if parsed is None:
            return False
        add_body(light, qualname, parsed)
        self._bodies_added.add(rel)
        return True

    def _source_lines(self, rel: str, light: ModuleSummary) -> list[bytes] | None:
        """An outlined file's source split at each line end, read when first asked for (a module
        outlined by another process: the file is as it was, its pack entry being fresh); None when
        it cannot be read."""
        lines = self._outlined.get(rel, (light, None))[1]
        if lines is None:
            try:
                lines = _read_bytes(f"{self.root}/{rel}").split(b"\n")
            except OSError:
                return None
            self._outlined[rel] = (light, lines)
        return lines

    def may_name(self, summary: ModuleSummary, f: FuncInfo, word: str, any_of: tuple[str, ...] = ()) -> bool:
        """False when ``f``'s lines do not hold ``word`` (an ASCII identifier), or none of ``any_of``,
        so no fact of its body can name them: asked of a function whose body is not parsed yet, it
        reads the function's text rather than parse it. True otherwise (a function of a module
        parsed whole: no text is read)."""
        if "_complete" not in f.__dict__:
            return True
        text = self._body_text(summary, f)
        if text is None or not text.isascii():  # (in a text not all ASCII another spelling may name them)
            return True
        return _names(text, word) and (not any_of or any(w.encode() in text for w in any_of))

    def functions_naming(self, summary: ModuleSummary, word: str) -> list[tuple[str, FuncInfo]]:
        """``functions_where`` for the facts of the bodies that name ``word`` (an identifier)."""
        return self.functions_where(summary, lambda _f, text: _names(text, word))

    def functions_where(self, summary: ModuleSummary, relevant: Callable[[FuncInfo, bytes], bool]
                        ) -> list[tuple[str, FuncInfo]]:
        """A walk over ``summary``'s functions (qualname, function), in the table's order, for a
        query that only the functions whose text is ``relevant`` can answer: while the module's
        bodies are parsed one by one, the others are left out (and unparsed), and each relevant
        one is parsed alone, with what it defines (asked in turn). Where a text cannot be read, or
        a body cannot be parsed alone, the module is completed and walked whole, as a plain walk is."""
        table = summary.functions
        if type(table) is not PendingTable or table._complete is None:
            return list(table.items())
        kept = []
        walked = list(dict.items(table))  # (a body parsed below adds what it defines after it)
        known = {qn for qn, _f in walked}
        for qn, f in walked:
            if qn == MODULE_FUNC:  # the module-level code: in the light summary (its text is the file's)
                kept.append((qn, f))
                continue
            text = self._body_text(summary, f)
            if text is None:
                return list(table.items())
            # (an identifier is read in its NFKC form: in a text not all ASCII another spelling may
            # name anything, so such a function is walked)
            if text.isascii() and not relevant(f, text):
                continue  # (a function defined inside it is in its text: not relevant either)
            kept.append((qn, f))
            if body_pending(f):
                f.calls  # noqa: B018 (parses its body alone, or completes the module)
                if table._complete is None:
                    return list(table.items())
                inner = [(q, g) for q, g in dict.items(table) if q not in known and q.startswith(qn + ".")]
                for q, g in inner:  # what it defines, in the order the whole table has them
                    text = self._body_text(summary, g)
                    if text is None or not text.isascii() or relevant(g, text):
                        kept.append((q, g))
        return kept

    def classes_named(self, summary: ModuleSummary, name: str) -> list[tuple[str, ClassInfo]]:
        """``summary``'s classes called ``name`` (qualname, class), at any nesting, in the table's
        order: while the module's bodies are parsed one by one, only the functions whose text names
        ``class`` and ``name`` are parsed (alone), for the classes they define."""
        table = summary.classes
        if type(table) is PendingTable and table._complete is not None:
            self.functions_where(summary, lambda _f, text: _names(text, "class") and _names(text, name))
        return [(qn, c) for qn, c in dict.items(table) if c.name == name]

    def _body_text(self, summary: ModuleSummary, f: FuncInfo) -> bytes | None:
        """The lines of a function of an outlined module, kept once read; None where they are not
        at hand (the module is not outlined)."""
        if summary.path not in self._outlined:
            return None
        text = self._texts.get(id(f))
        if text is None:
            lines = self._source_lines(summary.path, self._outlined[summary.path][0])
            if lines is None:
                return None
            text = self._texts[id(f)] = b"\n".join(lines[f.line - 1:f.end])
        return text

    def _from_worker(self, rel: str) -> ModuleSummary | None:
        parsed = self._ahead.take(rel) if self._ahead is not None else None
        if parsed is None:
            return None
        self._keep_parsed(rel, parsed)
        entry = parsed[0]
        if is_outlined(entry):
            summary = pickle.loads(entry[3])
            self._defer_outlined(summary, rel, entry, None)
            return summary
        return pickle.loads(entry[5])

    def _keep_parsed(self, rel: str, parsed) -> None:
        """A pack entry from another process, and its summary for the cache where it was parsed anew."""
        entry, fresh = parsed
        self._remember(rel, entry)
        if fresh:
            keep_blobs(self.cache, entry)

    @staticmethod
    def _base_imports(summary: ModuleSummary) -> list:
        """The imports that the bases of ``summary``'s classes are reached through (a hint for the
        worker: the classes a light summary leaves out, defined in bodies, do not complete it)."""
        out = []
        for c in dict.values(summary.classes):
            for b in c.bases:
                while b[0] in ("a", "s"):
                    b = b[1]
                if b[0] == "n" and b[1] in summary.imports:
                    out.append(summary.imports[b[1]])
        return out

    def _imported_files(self, targets) -> list[str]:
        """The files of the in-tree modules that import ``targets`` bind, not loaded nor packed yet."""
        files, pack = self.files, self._load_pack()
        out = []
        for target in targets:
            mod = target[1]
            if target[0] == "from" and f"{mod}.{target[2]}" in files:
                mod = f"{mod}.{target[2]}"
            rel = files.get(mod)
            if rel is not None and rel not in out and self._wants_whole(mod, rel, pack):
                out.append(rel)
        return out

    def expect(self, modules, walked: bool = False) -> None:
        """While parsing ahead: these modules are about to be asked for, in this order; ``walked``:
        each of their functions is (a search over their calls), so they are parsed whole, not
        outlined."""
        if self._ahead is not None:
            pack = self._load_pack()
            rels = [rel for m in modules if (rel := self.files.get(m)) is not None]
            if walked:
                self._walked.update(rels)
            self._ahead.expect([rel for m, rel in zip(modules, rels) if self._wants_whole(m, rel, pack, walked)],
                               whole=walked)

    def _wants_whole(self, mod: str, rel: str, pack: dict, walked: bool = False) -> bool:
        """Whether a module's whole summary is yet to be made: neither loaded whole nor in the pack
        (a light one from ``spectrace index`` is completed when its bodies are needed). While the
        walk is lazy and the module is not to be walked, whether it is neither loaded nor in the
        pack at all (what the worker makes then is the outline's light summary)."""
        if self.lazy_bodies and not walked:
            return mod not in self._summaries and rel not in pack
        loaded = self._summaries.get(mod)
        if loaded is not None and not is_light(loaded):
            return False
        entry = pack.get(rel)
        return entry is None or entry[5] is None

    def expect_calls(self, summary: ModuleSummary, f: FuncInfo) -> None:
        """While parsing ahead: the modules that the names ``f``'s calls start from are imported
        from, in call order, are about to be asked for."""
        if self._ahead is None:
            return
        targets = []
        for _line, _col, callee, _kw in f.calls:
            while callee[0] in ("a", "c", "s"):
                callee = callee[1]
            target = (f.imports.get(callee[1]) or summary.imports.get(callee[1])) if callee[0] == "n" else None
            if target is not None:
                targets.append(target)
        self._ahead.expect(self._imported_files(targets))

    def loaded(self) -> Iterable[ModuleSummary]:
        return (m for m in self._summaries.values() if m is not None)

    def index_all(self, jobs: int | None = None, progress: Progress | None = None) -> None:
        """Summarise every module: from the pack when unchanged, else in parallel."""
        todo = []
        for mod, rel in self.files.items():
            if mod in self._summaries:
                continue
            summary = self._from_pack(rel, whole=True)
            if summary is not None:
                self._adopt(summary)
            else:
                todo.append(rel)
        for rel, summary in self._parse(todo, jobs, progress, whole=True):
            self._adopt(summary if summary is not None else pickle.loads(self._pack[rel][5]))
        self.save()

    def refresh(self, jobs: int | None = None, progress: Progress | None = None) -> list[tuple]:
        """Bring the pack up to date with every file (the changed ones parsed in parallel into light
        summaries) without loading any summary; the ``module_stats`` of every module, in file order."""
        pack = self._load_pack()
        todo = [rel for rel in self.files.values()
                if not self._fresh(pack.get(rel), rel) or is_outlined(pack[rel])]
        for _rel, _summary in self._parse(todo, jobs, progress, whole=False):
            pass
        self.save()
        return [pack[rel][4] for rel in self.files.values() if rel in pack]

    def _parse(self, todo: list[str], jobs: int | None, progress: Progress | None, whole: bool):
        """Parse ``todo`` into the pack (whole summaries, or light ones); yields (file, its summary,
        or None where only the pack entry came back from a worker process)."""
        total = len(todo)
        if progress:
            progress(0, total)
        if not todo:
            return
        jobs = jobs or min(os.cpu_count() or 1, 8)
        if jobs <= 1 or total < PARALLEL_FROM:
            for i, rel in enumerate(todo, 1):
                summary, entry = summarize_file(self.root, rel, self.cache, whole)
                self._remember(rel, entry)
                yield rel, summary
                if progress:
                    progress(i, total)
        else:
            args = [(str(self.root), rel, self.cache.enabled, whole) for rel in todo]
            with process_pool(jobs) as pool:
                done = pool.map(summarize_in_worker, args, chunksize=16)
                for i, (rel, entry, fresh) in enumerate(done, 1):
                    self._keep_parsed(rel, (entry, fresh))
                    yield rel, None
                    if progress:
                        progress(i, total)

    def save(self) -> None:
        """Write the per-tree pack (warm start for the next process)."""
        self._pickle_outlined()
        if self._pack_dirty and self._pack is not None:
            self.cache.save_pack(self.root, self._pack)
            self._pack_dirty = False

    def _pickle_outlined(self) -> None:
        """The outlined modules' pack entries get their light summaries' pickles, with the bodies
        parsed so far, and so do the light modules given bodies one by one (a module completed
        whole has had its entry made anew)."""
        pack = self._load_pack()
        for rel, (summary, _data) in self._outlined.items():
            entry = pack.get(rel)
            if (entry is not None and entry[5] is None and is_light(summary)
                    and ((is_outlined(entry) and entry[3] is None) or rel in self._bodies_added)):
                plain = copy.copy(summary)  # the tables as plain dicts: pickling a pending one completes it
                for name in ("functions", "classes", "lambdas"):
                    setattr(plain, name, dict(dict.items(getattr(summary, name))))
                pack[rel] = entry[:3] + (pickle.dumps(plain, protocol=pickle.HIGHEST_PROTOCOL),) + entry[4:]
                self._pack_dirty = True
        self._bodies_added.clear()

    # -- the pack
    def _load_pack(self) -> dict:
        if self._pack is None:
            self._pack = self.cache.load_pack(self.root)
        return self._pack

    def _from_pack(self, rel: str, whole: bool = False) -> ModuleSummary | None:
        """The file's light summary from the pack (its bodies summarised when first needed), or
        with ``whole`` its whole one if the pack has it; None if the pack has no fresh entry."""
        entry = self._load_pack().get(rel)
        if not self._fresh(entry, rel):
            return None
        if whole:
            return pickle.loads(entry[5]) if entry[5] is not None else None
        if entry[3] is None:  # an outline's entry of this process, its pickle not made yet
            return None
        summary = pickle.loads(entry[3])
        if is_light(summary):
            if is_outlined(entry) or (self.lazy_bodies and entry[5] is None):  # (else unpickled whole)
                self._defer_outlined(summary, rel, entry, None)
            else:
                defer_bodies(summary, lambda: self._complete(summary, rel))
        return summary

    def _complete(self, light: ModuleSummary, rel: str) -> None:
        """Give a light summary its functions' bodies: from the pack, the cache or a parse."""
        entry = self._load_pack()[rel]
        blob = entry[5] if entry[5] is not None else self.cache.get_blob(whole_key(entry[2]))
        whole = None
        if blob is not None:
            try:
                whole = pickle.loads(blob)
            except Exception:  # noqa: BLE001 (an unreadable cache entry: parsed again below)
                whole = None
        if whole is None or whole.path != rel:
            parsed = self._ahead.take(rel) if self._ahead is not None else None
            if parsed is not None:
                self._keep_parsed(rel, parsed)
                whole = pickle.loads(parsed[0][5])
            else:
                whole, entry = _summarize_shallow(self.root, rel, self.cache)
                self._remember(rel, entry)
        elif entry[5] is None:  # from the cache: the pack keeps it for the next process
            if is_outlined(entry):  # now the light summary of the whole parse
                light_of = lighten(whole)
                entry = entry[:3] + (pickle.dumps(light_of, protocol=pickle.HIGHEST_PROTOCOL), module_stats(light_of))
            self._remember(rel, entry[:5] + (blob,))
        if whole.error and not light.error:  # hidden by an outline in a body: the module is skipped from here
            self.errors.append(whole.error)
        complete(light, whole)

    def _fresh(self, entry, rel: str) -> bool:
        """A pack entry whose file has the size and mtime it was read with."""
        if entry is None:
            return False
        try:
            st = os.stat(f"{self.root}/{rel}")  # (a pathlib join per file is a tenth of a warm index)
        except OSError:
            return False  # gone since the walk: reading it will report why
        return st.st_size == entry[0] and st.st_mtime_ns == entry[1]

    def _remember(self, rel: str, entry: tuple) -> None:
        # Each module is kept as its own pickle inside the pack: a lazy map unpickles only the
        # modules it reaches, not the whole package an earlier `index` stored.
        self._load_pack()[rel] = entry
        self._pack_dirty = True

    def _adopt(self, summary: ModuleSummary) -> None:
        self._summaries[summary.module] = summary
        if summary.error:
            self.errors.append(summary.error)
