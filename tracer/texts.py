"""Whole-tree text scans: cheap regex pre-filters that spare the parser most files.

Each file is read at most once per process and shared by every scan. A scan's result can be
cached on disk under the tree's fingerprint (every file's path, size and mtime), so a warm run
reads no file for it; the results for one fingerprint share one cache file.

Inside ``SourceTexts.sharing()`` (a cold ``map``) the tree is split in two: a helper process
reads and scans the second half while this process reads and scans the first, and the two
partial results are joined in file order, so the answers are those of one pass over the tree.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import re
from pathlib import Path
from typing import Callable, Iterator

from spectrace.tracer.cache_layout import TEXT_SCANS_PREFIX
from spectrace.tracer.modules import ModuleStore
from spectrace.tracer.tree import TreeState, fingerprint

# `class Name(bases)`; a match counts only at the start of a line (checked by hand: a `^` with
# re.M makes the regex engine try every position, 14 times slower over a whole tree).
CLASS_STMT = re.compile(rb"class[ \t]+(\w+)[ \t]*(\(([^)]*)\))?")
IDENT = re.compile(rb"[A-Za-z_]\w*")
# `@property` / `@functools.cached_property` (further decorators allowed) and the def it applies to
PROPERTY_DEF = re.compile(rb"@(?:\w+\.)?(?:property|cached_property)\b[^\n]*\n(?:[ \t]*@[^\n]*\n)*"
                          rb"[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")


def class_statements(data: bytes):
    """(class name, the text of its bases or None) for each class statement of a source."""
    for m in CLASS_STMT.finditer(data):
        start = m.start()
        if data[data.rfind(b"\n", 0, start) + 1:start].strip(b" \t"):
            continue
        yield m.group(1), m.group(3) if m.group(2) is not None else None


class SourceTexts:
    def __init__(self, root: Path, store: ModuleStore, state: TreeState | None = None):
        """``state``: the tree's fingerprint as read already for ``store``'s files (else read when
        first asked)."""
        self.root = root
        self.store = store
        self._texts: dict[str, bytes] | None = None  # module name -> source bytes (this process's part)
        self._others: dict[str, bytes] = {}  # files of the helper's part read here (``file_bytes``)
        self._rest: list | None = None  # [(module, file)] of the helper's part, not read here
        self._fingerprint: str | None = state.fingerprint if state is not None else None
        # file -> size, from the fingerprint's stats
        self._sizes: dict[str, int] = dict(state.sizes) if state is not None else {}
        self._class_index: dict[str, list[str]] | None = None
        self._base_index: dict[str, list[str]] | None = None
        self._mentions: dict[str, list[str]] = {}
        self._cached: dict | None = None  # scan name -> result, for this fingerprint
        self._new_scans: dict = {}  # the results computed here, not yet written
        self._properties: frozenset[str] | None = None
        self._sharing = False
        self._helper: _Helper | None = None

    @contextlib.contextmanager
    def sharing(self) -> Iterator[None]:
        """For the length of the block, whole-tree scans that have to read the tree share it with a
        helper process (each reads and scans half); the answers are the same without it."""
        self._sharing = True
        try:
            yield
        finally:
            self._sharing = False
            self._lost_helper()  # a later scan reads the helper's part here

    def file_bytes(self, module: str) -> bytes:
        """A module's source, read once per process and shared by every text scan."""
        own = self._own()
        if module in own:
            return own[module]
        if module not in self._others:
            rel = self.store.files.get(module)
            try:
                self._others[module] = _read(f"{self.root}/{rel}", self._sizes.get(rel)) if rel is not None else b""
            except OSError:
                self._others[module] = b""
        return self._others[module]

    def grep(self, pattern: bytes, literal: bytes = b"") -> list[str]:
        """Modules whose text matches ``pattern``.

        ``literal`` must occur in a matching file; testing it first skips the regex on most files.
        """
        return self._scan("grep", (pattern, literal))

    def fingerprint(self) -> str:
        """A digest of every file's state (``tree.fingerprint``): changes whenever any file does."""
        if self._fingerprint is None:
            self._fingerprint, self._sizes = fingerprint(self.root, self.store.files.values())
        return self._fingerprint

    def cached_scan(self, name: str, compute: Callable[[], object]):
        """A whole-tree scan (a picklable result) cached until any file of the tree changes; what
        is computed here is written by ``save``."""
        cached = self._cached_scans()
        if name not in cached:
            cached[name] = compute()
            if self.store.cache.enabled:
                self._new_scans[name] = cached[name]
        return cached[name]

    def save(self) -> None:
        """Add the scans computed since the last save to the tree's scan file (kept with what
        another process may have added meanwhile)."""
        if self._new_scans:
            new, self._new_scans = self._new_scans, {}
            path = self._scans_path()
            self.store.cache.write(path, pickle.dumps({**_load(path), **new}, protocol=pickle.HIGHEST_PROTOCOL))

    def _cached_scans(self) -> dict:
        if self._cached is None:
            self._cached = _load(self._scans_path()) if self.store.cache.enabled else {}
        return self._cached

    def _scans_path(self) -> Path:
        return self.store.cache.pack_path(self.root).with_name(f"{TEXT_SCANS_PREFIX}{self.fingerprint()}.pkl")

    def class_name_index(self) -> dict[str, list[str]]:
        """Class name -> the modules that define a class of that name (at any nesting)."""
        if self._class_index is None:
            self._class_index, self._base_index = self._class_scans()
        return self._class_index

    def base_name_index(self) -> dict[str, list[str]]:
        """Name -> the modules where it appears in the bases of a class statement (subclass search)."""
        if self._base_index is None:
            self._class_index, self._base_index = self._class_scans()
        return self._base_index

    def _class_scans(self) -> tuple[dict, dict]:
        """Both class-statement indexes, from one pass over the tree."""
        classes, bases = self.cached_scan("class-statements", lambda: self._scan("classes", None))
        return classes, bases

    def defined_names(self, fragment: str) -> dict[str, list[str]]:
        """Function names holding ``fragment`` -> the modules whose text defines one of that name."""
        return self._scan("defined", fragment)

    def property_names(self) -> frozenset[str]:
        """The names defined under ``@property`` or ``@cached_property`` anywhere in the tree (a
        filter: only reads of these attributes can run a getter)."""
        if self._properties is None:
            self._properties = frozenset(self.cached_scan("property-names", lambda: self._scan("properties", None)))
        return self._properties

    def mentions(self, word: str) -> list[str]:
        """Modules whose text holds ``word`` as a whole identifier (callers of a function by its name)."""
        if word not in self._mentions:
            self._mentions[word] = self.cached_scan(f"modules-naming-{word}", lambda: self._scan("mentions", word))
        return self._mentions[word]

    def _scan(self, name: str, arg):
        """One whole-tree scan: over this process's part, and at the same time over the helper's."""
        scan, join = SCANS[name]
        own = self._own()
        helper = self._helper
        if helper is not None and not helper.send((name, arg)):
            self._lost_helper()
            own, helper = self._own(), None
        parts = [scan(own, arg)]
        if helper is not None:
            theirs = helper.receive()
            if theirs is _FAILED:
                self._lost_helper()
                texts = self._own()
                theirs = scan({m: texts[m] for m, _rel in helper.part if m in texts}, arg)
            parts.append(theirs)
        return join(parts)

    def _own(self) -> dict[str, bytes]:
        """The texts this process scans: the whole tree, or its first half while a helper holds the rest."""
        if self._texts is None:
            files = list(self.store.files.items())
            if self._sharing and len(files) > 1 and multiprocessing.get_start_method() == "fork":
                # (a helper that had to start a fresh interpreter would cost more than it saves)
                cut = self._halfway(files)
                self._helper = _Helper.start(str(self.root), files[cut:], self._sizes)
                if self._helper is not None:
                    files, self._rest = files[:cut], files[cut:]
            self._texts = self._texts_of(files)
        elif self._rest is not None and self._helper is None:  # the helper is gone: read its part
            self._texts = {**self._texts, **self._texts_of(self._rest)}
            self._rest = None
        return self._texts

    def _halfway(self, files: list) -> int:
        """Where to cut the file list into two parts of about the same number of bytes."""
        sizes = [self._sizes.get(rel, 1) for _mod, rel in files]
        half, total = sum(sizes) / 2, 0
        for i, n in enumerate(sizes):
            total += n
            if total >= half:
                return min(i + 1, len(files) - 1)
        return len(files) - 1

    def _lost_helper(self) -> None:
        """No helper from now on (it failed, or the block ended): this process scans the whole
        tree, reading the helper's part when a scan first needs it."""
        helper, self._helper = self._helper, None
        if helper is not None:
            helper.close()

    def _texts_of(self, files) -> dict[str, bytes]:
        return _read_texts(str(self.root), files, self._sizes)


def _read_texts(root: str, files, sizes: dict[str, int]) -> dict[str, bytes]:
    texts = {}
    for mod, rel in files:
        try:
            texts[mod] = _read(f"{root}/{rel}", sizes.get(rel))
        except OSError:
            continue  # scans skip it; parsing the module, if asked for, reports why
    return texts


def _load(path: Path) -> dict:
    """A scan file's results; none when it is absent or unreadable (they are computed again)."""
    try:
        with open(path, "rb") as fh:
            found = pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _read(path: str, size: int | None = None) -> bytes:
    """A whole file, read with plain system calls in as few reads as its size (when known) allows:
    a third less time than an unbuffered ``open`` over the thousands of small files of a tree."""
    fd = os.open(path, os.O_RDONLY)
    try:
        data = os.read(fd, (size or 65535) + 1)
        rest = []
        while data and (chunk := os.read(fd, 1 << 20)):  # until the end, had the file grown
            rest.append(chunk)
        return data + b"".join(rest) if rest else data
    finally:
        os.close(fd)


# -- the scans: module -> text in (a part of the tree, in file order), a partial result out; the
#    join puts the parts' results together as one pass over the whole tree would have them
def _scan_classes(texts: dict, _arg) -> list:
    classes: dict = {}
    bases: dict = {}
    for mod, data in texts.items():
        defined, named = set(), set()
        for name, written in class_statements(data):
            defined.add(name.decode())
            if written is not None:
                named.update(i.decode() for i in IDENT.findall(written))
        for name in sorted(defined):
            classes.setdefault(name, []).append(mod)
        for name in sorted(named):
            bases.setdefault(name, []).append(mod)
    return [classes, bases]


def _scan_defined(texts: dict, fragment: str) -> dict:
    literal = fragment.encode()
    rx = re.compile(rb"def[ \t]+(\w*" + re.escape(literal) + rb"\w*)")
    found: dict = {}
    for mod, data in texts.items():
        if literal in data:
            for name in {n.decode() for n in rx.findall(data)}:
                found.setdefault(name, []).append(mod)
    return found


def _scan_properties(texts: dict, _arg) -> set:
    found: set = set()
    for data in texts.values():
        if b"property" in data:
            found.update(m.decode() for m in PROPERTY_DEF.findall(data))
    return found


def _scan_mentions(texts: dict, word: str) -> list:
    rx = re.compile(rb"\b" + re.escape(word.encode()) + rb"\b")
    literal = word.encode()
    return [m for m, data in texts.items() if literal in data and rx.search(data)]


def _scan_grep(texts: dict, arg) -> list:
    pattern, literal = arg
    rx = re.compile(pattern, re.M)
    return [mod for mod, data in texts.items() if literal in data and rx.search(data)]


def _join_lists(dicts: list) -> dict:
    """name -> modules, each part's modules after the earlier parts' (names in order of first sight)."""
    out: dict = {}
    for part in dicts:
        for name, mods in part.items():
            if name in out:
                out[name] = out[name] + mods
            else:
                out[name] = mods
    return out


def _concat(parts: list) -> list:
    return [m for part in parts for m in part]


SCANS = {
    "classes": (_scan_classes, lambda parts: [_join_lists([p[0] for p in parts]), _join_lists([p[1] for p in parts])]),
    "defined": (_scan_defined, _join_lists),
    "properties": (_scan_properties, lambda parts: sorted(set().union(*parts))),
    "mentions": (_scan_mentions, _concat),
    "grep": (_scan_grep, _concat),
}

_FAILED = object()


class _Helper:
    """A process that reads the second part of the tree and runs scans over it on request."""

    def __init__(self, process, conn, part: list):
        self.process = process
        self.conn = conn
        self.part = part  # [(module, file)] it holds

    @classmethod
    def start(cls, root: str, part: list, sizes: dict[str, int]) -> _Helper | None:
        try:
            conn, child = multiprocessing.Pipe()
            process = multiprocessing.Process(target=_helper_main, args=(child, root, part, sizes), daemon=True)
            process.start()
        except (OSError, AssertionError):  # AssertionError: a daemonic process may have no children
            return None  # no second process here: this one reads and scans everything
        child.close()
        return cls(process, conn, part)

    def send(self, request) -> bool:
        try:
            self.conn.send(request)
            return True
        except (OSError, ValueError):
            return False

    def receive(self):
        try:
            status, result = self.conn.recv()
        except (OSError, EOFError, ValueError):
            return _FAILED
        return result if status == "ok" else _FAILED

    def close(self) -> None:
        """Tell it to stop, without waiting: it ends on its own (or, being a daemon, when this
        process exits)."""
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        self.conn.close()


def _helper_main(conn, root: str, part: list, sizes: dict[str, int]) -> None:
    texts = _read_texts(root, part, sizes)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        name, arg = request
        try:
            result = ("ok", SCANS[name][0](texts, arg))
        except Exception as exc:  # noqa: BLE001 (the asking process scans this part itself)
            result = ("error", repr(exc))
        conn.send(result)
