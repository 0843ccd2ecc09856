"""Whole-tree text scans: cheap regex pre-filters that spare the parser most files.

Each file is read at most once per process and shared by every scan. A scan's result can be
cached on disk under the tree's fingerprint (every file's path, size and mtime), so a warm run
reads no file for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Callable

from spectrace.tracer.modules import ModuleStore

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
    def __init__(self, root: Path, store: ModuleStore):
        self.root = root
        self.store = store
        self._texts: dict[str, bytes] | None = None  # module name -> source bytes
        self._fingerprint: str | None = None
        self._class_index: dict[str, list[str]] | None = None
        self._base_index: dict[str, list[str]] | None = None
        self._mentions: dict[str, list[str]] = {}
        self._properties: frozenset[str] | None = None

    def file_bytes(self, module: str) -> bytes:
        """A module's source, read once per process and shared by every text scan."""
        return self._all().get(module, b"")

    def grep(self, pattern: bytes, literal: bytes = b"") -> list[str]:
        """Modules whose text matches ``pattern``.

        ``literal`` must occur in a matching file; testing it first skips the regex on most files.
        """
        rx = re.compile(pattern, re.M)
        return [mod for mod, data in self._all().items() if literal in data and rx.search(data)]

    def fingerprint(self) -> str:
        """A digest of every file's path, size and mtime: changes whenever any file does."""
        if self._fingerprint is None:
            h = hashlib.blake2b(digest_size=12)
            root = str(self.root)
            for rel in sorted(self.store.files.values()):
                try:
                    st = os.stat(f"{root}/{rel}")
                except OSError:
                    continue  # gone since the walk: its absence is what the digest should say
                h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    def cached_scan(self, name: str, compute: Callable[[], object]):
        """A whole-tree scan (JSON-able result) cached until any file of the tree changes."""
        cache = self.store.cache
        path = cache.pack_path(self.root).with_name(f"scan-{self.fingerprint()}-{name}.json")
        if cache.enabled:
            try:
                return json.loads(path.read_text())
            except (OSError, ValueError):
                pass  # a miss (absent or damaged entry): compute it and write it anew
        result = compute()
        if cache.enabled:
            cache.write(path, json.dumps(result).encode())
        return result

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

        def scan():
            classes: dict = {}
            bases: dict = {}
            for mod, data in self._all().items():
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

        classes, bases = self.cached_scan("class-statements", scan)
        return classes, bases

    def defined_names(self, fragment: str) -> dict[str, list[str]]:
        """Function names holding ``fragment`` -> the modules whose text defines one of that name."""
        literal = fragment.encode()
        rx = re.compile(rb"def[ \t]+(\w*" + re.escape(literal) + rb"\w*)")
        found: dict = {}
        for mod, data in self._all().items():
            if literal in data:
                for name in {n.decode() for n in rx.findall(data)}:
                    found.setdefault(name, []).append(mod)
        return found

    def property_names(self) -> frozenset[str]:
        """The names defined under ``@property`` or ``@cached_property`` anywhere in the tree (a
        filter: only reads of these attributes can run a getter)."""
        if self._properties is None:

            def scan():
                found: set = set()
                for data in self._all().values():
                    if b"property" in data:
                        found.update(m.decode() for m in PROPERTY_DEF.findall(data))
                return sorted(found)

            self._properties = frozenset(self.cached_scan("property-names", scan))
        return self._properties

    def mentions(self, word: str) -> list[str]:
        """Modules whose text holds ``word`` as a whole identifier (callers of a function by its name)."""
        if word not in self._mentions:
            rx = re.compile(rb"\b" + re.escape(word.encode()) + rb"\b")
            literal = word.encode()
            self._mentions[word] = self.cached_scan(
                f"modules-naming-{word}", lambda: [m for m, data in self._all().items() if literal in data and rx.search(data)])
        return self._mentions[word]

    def _all(self) -> dict[str, bytes]:
        if self._texts is None:
            texts = {}
            root = str(self.root)
            for mod, rel in self.store.files.items():
                try:
                    texts[mod] = _read(f"{root}/{rel}")
                except OSError:
                    continue  # scans skip it; parsing the module, if asked for, reports why
            self._texts = texts
        return self._texts


def _read(path: str) -> bytes:
    """A whole file, unbuffered and without a Path object: half the time of ``Path.read_bytes``
    over the thousands of small files of a tree."""
    with open(path, "rb", buffering=0) as fh:
        return fh.readall()
