"""The per-file cache of function facts: only functions it has not seen are parsed.

Entries are keyed by the file's content hash and hold ``{span_key: [FunctionFacts]}`` plus the
file's function boundaries (``__spans__``), so a warm run parses nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Iterator

from spectrace.atomic import atomic_write
from spectrace.contracts.cache_warnings import warn_cache_unusable
from spectrace.contracts.facts import FACTS_VERSION, FunctionFacts, FunctionSpan, Mentions, function_spans, span_key
from spectrace.errors import SpectraceError
from spectrace.interrupts import process_pool
from spectrace.source import cache_dir


def facts_cache_dir() -> Path:
    return cache_dir() / "contracts" / f"facts-v{FACTS_VERSION}"


def _parse_spans(spans: list[FunctionSpan]) -> list[tuple[str, list[FunctionFacts]]]:
    from spectrace.contracts.facts_visitors import facts_for_span  # only when parsing

    return [(span_key(s), facts_for_span(s)) for s in spans]


# files parsed ahead per task: small enough that the first results come back early
AHEAD_CHUNK = 4
# (file, content hash, its function boundaries, [(span key, facts)] of the functions picked)
Ahead = tuple[str, str, list, list]


def _parse_files(root: str, rels: list[str], mentions: Mentions) -> list[Ahead]:
    """In a worker process: the facts of the functions of ``rels`` that ``mentions`` picks."""
    from spectrace.contracts.facts_visitors import facts_for_span

    out = []
    for rel in rels:
        try:
            data = (Path(root) / rel).read_bytes()
            spans = function_spans(data.decode("utf-8", errors="replace"))
        except (OSError, SyntaxError, ValueError):
            continue  # the process that asks for it reads it again and says what is wrong
        parsed = []
        for s in spans:
            if mentions.search(s.text):
                try:
                    parsed.append((span_key(s), facts_for_span(s)))
                except SpectraceError:
                    pass  # raised again where it is asked for
        out.append((rel, hashlib.sha1(data).hexdigest(), [(s.cls, s.name, s.start, s.end) for s in spans], parsed))
    return out


class FactsCache:
    """Facts per function, parsed on demand, cached per file content hash."""

    def __init__(self, root: Path, use_cache: bool = True, jobs: int | None = None):
        self.root = root
        self.use_cache = use_cache and not os.environ.get("SPECTRACE_NO_CACHE")
        self.jobs = jobs
        self._text: dict[str, str] = {}
        self._spans: dict[str, list[FunctionSpan]] = {}
        self._entries: dict[str, dict] = {}  # rel -> {span_key: [FunctionFacts], "__spans__": bounds}
        self._dirty: set[str] = set()
        self._hash: dict[str, str] = {}
        self.parsed = 0
        self.reused = 0
        self._pool: ProcessPoolExecutor | None = None
        self._ahead: dict[str, Future] = {}  # file -> the task parsing it ahead
        self._parsed_ahead: set[tuple[str, str]] = set()  # (file, span key) not counted yet

    @contextlib.contextmanager
    def parsing_ahead(self, rels: list[str], mentions: Mentions) -> Iterator[None]:
        """A block during which the functions ``mentions`` picks in ``rels`` are parsed in worker
        processes (``parse_ahead``); the workers stop when it ends, also on an error."""
        self.parse_ahead(rels, mentions)
        try:
            yield
        finally:
            self.close()

    def parse_ahead(self, rels: list[str], mentions: Mentions) -> None:
        """Start parsing, in worker processes, the functions that ``mentions`` picks in the files of
        ``rels`` that have nothing cached; ``spans`` and ``facts_many`` take the results."""
        jobs = self.jobs if self.jobs is not None else min(os.cpu_count() or 1, 8)
        todo = [rel for rel in rels if rel not in self._ahead and not self._entry(rel)]
        if jobs <= 1 or len(todo) < 2 * AHEAD_CHUNK:
            return
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=jobs)
        for i in range(0, len(todo), AHEAD_CHUNK):
            chunk = todo[i : i + AHEAD_CHUNK]
            task = self._pool.submit(_parse_files, str(self.root), chunk, mentions)
            self._ahead.update(dict.fromkeys(chunk, task))

    def _settle(self, rel: str) -> None:
        """Take what was parsed ahead for ``rel`` (waiting for it), and for the files of its task."""
        task = self._ahead.get(rel)
        if task is None:
            return
        try:
            results = task.result()
        except Exception:  # noqa: BLE001 (a worker lost: the asker parses the file itself)
            results = []
        for name in [r for r, t in self._ahead.items() if t is task]:
            del self._ahead[name]
        for name, digest, bounds, parsed in results:
            entry = self._entry(name)
            if digest != self._hash[name]:
                continue  # changed since: parsed again on demand
            entry.setdefault("__spans__", bounds)
            for key, facts in parsed:
                if key not in entry:
                    entry[key] = facts
                    self._parsed_ahead.add((name, key))
            self._dirty.add(name)

    def close(self) -> None:
        """Stop the workers (what they did not finish is parsed on demand)."""
        pool, self._pool = self._pool, None
        self._ahead.clear()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def text(self, rel: str) -> str:
        if rel not in self._text:
            try:
                data = (self.root / rel).read_bytes()
            except OSError as exc:
                raise SpectraceError(f"cannot read {self.root / rel}: {exc}") from exc
            self._hash[rel] = hashlib.sha1(data).hexdigest()
            self._text[rel] = data.decode("utf-8", errors="replace")
        return self._text[rel]

    def spans(self, rel: str) -> list[FunctionSpan]:
        """Function spans of a file; their boundaries are cached with the facts (no ast parse when warm)."""
        if rel not in self._spans:
            self._settle(rel)
            entry = self._entry(rel)
            bounds = entry.get("__spans__")
            text = self.text(rel)
            if bounds is None:
                try:
                    spans = function_spans(text)
                except SyntaxError as exc:
                    raise SpectraceError(f"{rel}:{exc.lineno}: syntax error: {exc.msg}: the contracts depend on this file",
                                         exit_code=2) from exc
                entry["__spans__"] = [(s.cls, s.name, s.start, s.end) for s in spans]
                self._dirty.add(rel)
            else:
                lines = text.splitlines(keepends=True)
                spans = [FunctionSpan(c, n, a, b, "".join(lines[a - 1 : b])) for c, n, a, b in bounds]
            self._spans[rel] = spans
        return self._spans[rel]

    def _entry(self, rel: str) -> dict:
        if rel not in self._entries:
            self.text(rel)
            self._entries[rel] = self._load(facts_cache_dir() / f"{self._hash[rel]}.pkl") if self.use_cache else {}
        return self._entries[rel]

    @staticmethod
    def _load(path: Path) -> dict:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            warn_cache_unusable("contract facts", exc, action="read")
            return {}
        try:
            return pickle.loads(data)
        # an entry written by another version of the fact records, or cut short: parse again, and
        # the rewrite at save() replaces it
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
            return {}

    def facts(self, rel: str, spans: list[FunctionSpan]) -> list[FunctionFacts]:
        """Facts for these spans of one file (parsing the ones not cached)."""
        return self.facts_many({rel: spans}).get(rel, [])

    def facts_many(self, wanted: dict[str, list[FunctionSpan]]) -> dict[str, list[FunctionFacts]]:
        todo: list[tuple[str, FunctionSpan]] = []
        for rel, spans in wanted.items():
            self._settle(rel)
            entry = self._entry(rel)
            todo.extend((rel, s) for s in spans if span_key(s) not in entry)
        if todo:
            jobs = self.jobs if self.jobs is not None else min(os.cpu_count() or 1, 8)
            if jobs > 1 and len(todo) > 24:
                chunks = [todo[i::jobs] for i in range(jobs)]
                with process_pool(jobs) as pool:
                    futures = [(chunk, pool.submit(_parse_spans, [s for _, s in chunk])) for chunk in chunks if chunk]
                    for chunk, fut in futures:
                        for (rel, _), (key, facts) in zip(chunk, fut.result()):
                            self._entries[rel][key] = facts
                            self._dirty.add(rel)
            else:
                for (rel, _), (key, facts) in zip(todo, _parse_spans([s for _, s in todo])):
                    self._entries[rel][key] = facts
                    self._dirty.add(rel)
            self.parsed += len(todo)
        ahead = {(rel, span_key(s)) for rel, spans in wanted.items() for s in spans} & self._parsed_ahead
        self._parsed_ahead -= ahead
        self.parsed += len(ahead)
        self.reused += sum(len(v) for v in wanted.values()) - len(todo) - len(ahead)
        return {rel: [f for s in spans for f in self._entries[rel].get(span_key(s), [])]
                for rel, spans in wanted.items()}

    def save(self) -> None:
        for rel in list(self._ahead):
            self._settle(rel)
        self.close()
        if not self.use_cache or not self._dirty:
            return
        d = facts_cache_dir()
        try:
            d.mkdir(parents=True, exist_ok=True)
            for rel in sorted(self._dirty):
                atomic_write(d / f"{self._hash[rel]}.pkl",
                             pickle.dumps(self._entries[rel], protocol=pickle.HIGHEST_PROTOCOL), durable=False)
        except OSError as exc:
            warn_cache_unusable("contract facts", exc)
        self._dirty.clear()
