"""The modules of one source tree and their summaries, loaded lazily or all at once.

A summary comes from the per-tree pack when its file's size and mtime are unchanged, else from
the per-file cache or a fresh parse (``summary_cache``). Whatever is parsed is put back into the
pack, which ``save`` writes for the next process.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Callable, Iterable

from spectrace.interrupts import process_pool
from spectrace.source import module_name
from spectrace.tracer.index import ModuleSummary
from spectrace.tracer.summary_cache import (
    SummaryCache,
    report_write_failure,
    summarize_file,
    summarize_in_worker,
)

Progress = Callable[[int, int], None]

# Below this many files to parse, starting a process pool costs more than it saves.
PARALLEL_FROM = 40


class ModuleStore:
    def __init__(self, root: Path, cache: SummaryCache, packages: tuple[str, ...] = ("sglang",)):
        self.root = root
        self.packages = packages  # top-level package dirs (or single modules) under root
        self.cache = cache
        self.errors: list[str] = []  # files that could not be parsed, "path:line: why"
        self._summaries: dict[str, ModuleSummary | None] = {}  # None: no such module in the tree
        self._files: dict[str, str] | None = None
        self._pack: dict | None = None  # relpath -> (size, mtime_ns, content key, pickled summary)
        self._pack_dirty = False

    @property
    def files(self) -> dict[str, str]:
        """Module name -> file path relative to the tree root, for every ``.py`` of the packages."""
        if self._files is None:
            files = {}
            for pkg in self.packages:
                if not (self.root / pkg).is_dir() and (self.root / f"{pkg}.py").is_file():
                    files[pkg] = f"{pkg}.py"
                    continue
                for dirpath, dirnames, filenames in os.walk(self.root / pkg):
                    dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
                    rel_dir = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
                    for fn in sorted(filenames):
                        if fn.endswith(".py"):
                            rel = f"{rel_dir}/{fn}"
                            files[module_name(rel)[0]] = rel
            self._files = files
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
            key, summary = summarize_file(self.root, rel, self.cache)
            self._remember(rel, key, summary)
        self._adopt(summary)
        return summary

    def loaded(self) -> Iterable[ModuleSummary]:
        return (m for m in self._summaries.values() if m is not None)

    def index_all(self, jobs: int | None = None, progress: Progress | None = None) -> None:
        """Summarise every module: from the pack when unchanged, else in parallel."""
        todo = []
        for mod, rel in self.files.items():
            if mod in self._summaries:
                continue
            summary = self._from_pack(rel)
            if summary is not None:
                self._adopt(summary)
            else:
                todo.append(rel)
        total = len(todo)
        if progress:
            progress(0, total)
        if not todo:
            return
        jobs = jobs or min(os.cpu_count() or 1, 8)
        if jobs <= 1 or total < PARALLEL_FROM:
            results = ((rel, summarize_file(self.root, rel, self.cache)) for rel in todo)
            for i, (rel, (key, summary)) in enumerate(results, 1):
                self._remember(rel, key, summary)
                self._adopt(summary)
                if progress:
                    progress(i, total)
        else:
            args = [(str(self.root), rel, self.cache.enabled) for rel in todo]
            with process_pool(jobs) as pool:
                done = pool.map(summarize_in_worker, args, chunksize=16)
                for i, (rel, (key, summary), write_failure) in enumerate(done, 1):
                    if write_failure:
                        report_write_failure(write_failure)
                    self._remember(rel, key, summary)
                    self._adopt(summary)
                    if progress:
                        progress(i, total)
        self.save()

    def save(self) -> None:
        """Write the per-tree pack (warm start for the next process)."""
        if self._pack_dirty and self._pack is not None:
            self.cache.save_pack(self.root, self._pack)
            self._pack_dirty = False

    # -- the pack
    def _load_pack(self) -> dict:
        if self._pack is None:
            self._pack = self.cache.load_pack(self.root)
        return self._pack

    def _from_pack(self, rel: str) -> ModuleSummary | None:
        entry = self._load_pack().get(rel)
        if entry is None:
            return None
        size, mtime, _key, blob = entry
        try:
            st = os.stat(self.root / rel)
        except OSError:
            return None  # gone since the walk: reading it will report why
        if st.st_size == size and st.st_mtime_ns == mtime:
            return pickle.loads(blob)
        return None

    def _remember(self, rel: str, key: str, summary: ModuleSummary) -> None:
        pack = self._load_pack()
        try:
            st = os.stat(self.root / rel)
        except OSError:
            return  # gone since it was read: nothing to key a pack entry on, and it was parsed
        # Each module is kept as its own pickle inside the pack: a lazy map unpickles only the
        # modules it reaches, not the whole package an earlier `index` stored.
        pack[rel] = (st.st_size, st.st_mtime_ns, key, pickle.dumps(summary, pickle.HIGHEST_PROTOCOL))
        self._pack_dirty = True

    def _adopt(self, summary: ModuleSummary) -> None:
        self._summaries[summary.module] = summary
        if summary.error:
            self.errors.append(summary.error)
