"""``spectrace cache info`` and ``spectrace cache clean``: where the cache is, what it holds, how big.

The cache holds three things, each rebuilt on demand (docs/cli.md):

* ``sglang/<version>/``: releases fetched from PyPI (``--sglang 0.5.9``), unpacked;
* ``index/v<format>-py<python>/``: module summaries, ``bundles/`` by file content and one
  ``packs/`` file per source tree (a tree since deleted, such as a temporary copy, leaves its pack);
* ``contracts/facts-v<format>/``: contract facts per file content.

Entries of another format are written by other spectrace versions and never read by this one.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import click

from spectrace.errors import SpectraceError
from spectrace.ui import plural


@dataclass
class Entry:
    """One removable part of the cache: what it is, where, how big."""

    what: str
    path: Path
    size: int
    keep: bool = True  # what clean leaves


@dataclass
class CacheContents:
    root: Path
    chosen_by: str
    entries: list[Entry] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(e.size for e in self.entries)


def size_of(path: Path) -> int:
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def _current_formats() -> tuple[str, str]:
    from spectrace.contracts.facts import FACTS_VERSION
    from spectrace.tracer.summary_cache import SUMMARY_FORMAT

    return f"v{SUMMARY_FORMAT}-py{sys.version_info[0]}{sys.version_info[1]}", f"facts-v{FACTS_VERSION}"


def _release_keys(release: Path) -> tuple[set[str], set[str]]:
    """The content keys of a release's modules: (index summaries, contract facts)."""
    from spectrace.tracer.summary_cache import content_key

    summaries, facts = set(), set()
    for module in (release / "sglang").rglob("*.py"):
        data = module.read_bytes()
        summaries.add(content_key(data))
        facts.add(hashlib.sha1(data).hexdigest())
    return summaries, facts


def _bundle_keys(bundle: Path) -> set[str]:
    try:
        with open(bundle, "rb") as fh:
            return set(pickle.loads(fh.read(int.from_bytes(fh.read(8), "little"))))
    except (OSError, EOFError, ValueError, pickle.UnpicklingError):
        return set()  # unreadable: nothing in it is used


def survey(keep_versions: tuple[str, ...] = ()) -> CacheContents:
    """What the cache holds, each entry marked with whether ``clean --keep-versions`` leaves it."""
    from spectrace.source import _version_key, cache_dir, versions_dir
    from spectrace.tracer.cache_layout import MAP_RESULT_PREFIX, TEXT_SCANS_PREFIX
    from spectrace.tracer.summary_cache import SummaryCache

    root = cache_dir()
    chosen_by = ("SPECTRACE_CACHE_DIR" if os.environ.get("SPECTRACE_CACHE_DIR")
                 else "the user cache directory; SPECTRACE_CACHE_DIR moves it")
    contents = CacheContents(root, chosen_by)
    if not root.is_dir():
        return contents
    index_format, facts_format = _current_formats()
    kept_releases = [versions_dir() / v for v in keep_versions]
    summary_keys: set[str] = set()
    fact_keys: set[str] = set()
    for release in kept_releases:
        keys = _release_keys(release)
        summary_keys |= keys[0]
        fact_keys |= keys[1]
    kept_packs = {SummaryCache().pack_path(r).name for r in kept_releases}
    add = contents.entries.append
    known = {"sglang", "index", "contracts"}
    releases = sorted(versions_dir().iterdir(), key=lambda p: _version_key(p.name)) if versions_dir().is_dir() else []
    release_packs = {SummaryCache().pack_path(r).name for r in releases}
    for release in releases:
        add(Entry(f"SGLang {release.name} source", release, size_of(release), release.name in keep_versions))
    for fmt in sorted((root / "index").iterdir()) if (root / "index").is_dir() else ():
        if fmt.name != index_format:
            add(Entry(f"index of another format ({fmt.name})", fmt, size_of(fmt), False))
            continue
        for pack in sorted((fmt / "packs").glob("*")):
            if pack.name.startswith(MAP_RESULT_PREFIX):
                what = "map result (rebuilt when needed)"
            elif pack.name.startswith(TEXT_SCANS_PREFIX):
                what = "text scans of a tree (rebuilt when needed)"
            elif pack.name in release_packs:
                what = "index pack of a cached release"
            else:
                what = "index pack of another tree"
            add(Entry(what, pack, size_of(pack), pack.name in kept_packs))
        for bundle in sorted((fmt / "bundles").glob("*")):
            add(Entry("index bundle", bundle, size_of(bundle), bool(_bundle_keys(bundle) & summary_keys)))
    for fmt in sorted((root / "contracts").iterdir()) if (root / "contracts").is_dir() else ():
        if fmt.name != facts_format:
            add(Entry(f"contract facts of another format ({fmt.name})", fmt, size_of(fmt), False))
            continue
        for facts in sorted(fmt.glob("*")):
            add(Entry("contract facts", facts, size_of(facts), facts.stem in fact_keys))
    for other in sorted(root.iterdir()):
        if other.name not in known:
            add(Entry("not spectrace's", other, size_of(other), True))
    return contents


def _summarise(entries: list[Entry]) -> list[tuple[str, int, int]]:
    """(what, count, size) per kind of entry, in the order first seen."""
    rows: dict[str, list[int]] = {}
    for e in entries:
        row = rows.setdefault(e.what, [0, 0])
        row[0] += 1
        row[1] += e.size
    return [(what, n, size) for what, (n, size) in rows.items()]


def info_lines(contents: CacheContents) -> list[str]:
    index_format, facts_format = _current_formats()
    lines = [f"cache: {contents.root} ({contents.chosen_by})"]
    if not contents.entries:
        return lines + ["empty"]
    for what, n, size in _summarise(contents.entries):
        lines.append(f"  {what:<52} {n:>6}  {megabytes(size):>10}")
    lines.append(f"total: {megabytes(contents.size)}; this spectrace reads index {index_format} and "
                 f"contracts/{facts_format}")
    return lines


def clean(keep_versions: tuple[str, ...]) -> tuple[list[Entry], int]:
    """Remove every entry the kept releases do not need; returns (what was removed, bytes left)."""
    from spectrace.source import cached_versions

    cached = cached_versions()
    missing = [v for v in keep_versions if v not in cached]
    if missing:
        raise SpectraceError(f"--keep-versions {', '.join(missing)}: not in the cache "
                             f"(cached: {', '.join(cached) or 'none'}); nothing was removed")
    contents = survey(keep_versions)
    removed = []
    for entry in contents.entries:
        if entry.keep:
            continue
        try:
            if entry.path.is_dir() and not entry.path.is_symlink():
                shutil.rmtree(entry.path)
            else:
                entry.path.unlink()
        except FileNotFoundError:
            continue  # another process cleaned it meanwhile
        except OSError as exc:
            raise SpectraceError(f"cannot remove {entry.path}: {exc.strerror or exc}; "
                                 f"{plural(len(removed), 'entry', 'entries')} removed before it") from exc
        removed.append(entry)
    return removed, contents.size - sum(e.size for e in removed)


@click.group("cache")
def cache_group():
    """Where spectrace's cache is, what it holds and how big it is; clean it."""


@cache_group.command("info")
def info_command():
    """The cache's place and, per kind of entry, how many and how big."""
    for line in info_lines(survey()):
        click.echo(line)


def _versions(ctx, param, value) -> tuple[str, ...]:
    return tuple(v for item in value for v in item.split(",") if v)


@cache_group.command("clean")
@click.option("--keep-versions", multiple=True, metavar="VERSION[,VERSION...]", callback=_versions,
              help="Keep these fetched SGLang releases and the index and facts of their modules.")
def clean_command(keep_versions):
    """Remove the cache's entries, except those the releases of --keep-versions need.

    Everything removed is rebuilt on demand: a release is fetched again, its modules analysed again.
    """
    removed, left = clean(keep_versions)
    for what, n, size in _summarise(removed):
        click.echo(f"removed: {what}: {n} ({megabytes(size)})")
    freed = sum(e.size for e in removed)
    click.echo(f"freed {megabytes(freed)}; {megabytes(left)} left"
               + (f" (kept: SGLang {', '.join(keep_versions)})" if keep_versions else ""))
