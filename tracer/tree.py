"""The files of a source tree and a fingerprint of their state, with the standard library alone.

Kept apart from the index so that a command that only needs to know whether a tree changed (a
warm ``map`` answered from its result cache) finds out without importing the parser's modules.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from spectrace.source import module_name


def source_packages(source) -> tuple[str, ...]:
    """The top-level packages (or single modules) of a source: an SGLang tree has one."""
    return tuple(getattr(source, "packages", ("sglang",)))


def module_files(root: Path, packages: tuple[str, ...]) -> dict[str, str]:
    """Module name -> file path relative to ``root``, for every ``.py`` of the packages (a package
    directory, or a single module ``<name>.py``): in each directory its files by name, then its
    subdirectories by name (hidden ones, ``__pycache__`` and links to directories left out)."""
    files: dict[str, str] = {}
    for pkg in packages:
        if not (root / pkg).is_dir() and (root / f"{pkg}.py").is_file():
            files[pkg] = f"{pkg}.py"
        else:
            _add_files(f"{root}/", pkg, files)
    return files


def _add_files(top: str, rel_dir: str, files: dict[str, str]) -> None:
    names, dirs = [], []
    try:
        with os.scandir(top + rel_dir) as entries:
            for e in entries:
                if e.is_dir():
                    if not e.is_symlink() and not e.name.startswith((".", "__pycache__")):
                        dirs.append(e.name)
                elif e.name.endswith(".py"):
                    names.append(e.name)
    except OSError:
        return  # an unreadable directory holds no module we can read
    for name in sorted(names):
        rel = f"{rel_dir}/{name}"
        files[module_name(rel)[0]] = rel
    for name in sorted(dirs):
        _add_files(top, f"{rel_dir}/{name}", files)


def fingerprint(root: Path, rels) -> tuple[str, dict[str, int]]:
    """A digest of every file's path, size, mtime, ctime and inode (it changes when a file is
    edited, replaced, added or removed), and each file's size."""
    h = hashlib.blake2b(digest_size=12)
    sizes: dict[str, int] = {}
    top = str(root)
    for rel in sorted(rels):
        try:
            st = os.stat(f"{top}/{rel}")
        except OSError:
            continue  # gone since the walk: its absence is what the digest should say
        sizes[rel] = st.st_size
        h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\n".encode())
    return h.hexdigest(), sizes


@dataclass(frozen=True)
class TreeState:
    """A tree's files and their fingerprint, read once: what a map's result cache is keyed by, and
    then what the index of the same run works from (one walk and one stat per file)."""

    files: dict[str, str]
    fingerprint: str
    sizes: dict[str, int]


def read_tree(root: Path, packages: tuple[str, ...]) -> TreeState:
    files = module_files(root, packages)
    digest, sizes = fingerprint(root, files.values())
    return TreeState(files, digest, sizes)
