"""Where SGLang's source comes from: a path, the installed package, or a PyPI version.

``resolve_source(spec)`` turns the ``--sglang`` argument into an ``SglangSource``: the
directory that holds the ``sglang/`` package (the "python root": every file path that
spectrace reports is relative to it) and the version found there.

A version is fetched with ``pip download --no-deps sglang==X`` into the user cache,
unpacked once (only ``sglang/``), and reused offline afterwards.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import zipfile
import tarfile
from dataclasses import dataclass
from pathlib import Path

from spectrace.errors import SpectraceError
from spectrace.progress import waiting

VERSION_RE = re.compile(r"^\d+(\.\d+)*([a-z0-9.+-]*)$")


@dataclass(frozen=True)
class SglangSource:
    root: Path  # the directory holding the sglang/ package
    version: str
    origin: str  # "path", "installed", "cache" or "pypi"

    @property
    def package_dir(self) -> Path:
        return self.root / "sglang"

    def describe(self) -> str:
        return f"SGLang {self.version} ({self.origin}: {self.package_dir})"


def cache_dir() -> Path:
    """SPECTRACE_CACHE_DIR, else the platform's user cache (honours XDG_CACHE_HOME)."""
    explicit = os.environ.get("SPECTRACE_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    try:
        import platformdirs

        return Path(platformdirs.user_cache_dir("spectrace"))
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        return Path(base) / "spectrace"


def versions_dir() -> Path:
    return cache_dir() / "sglang"


def _version_key(v: str):
    parts = []
    for piece in re.split(r"[.+-]", v):
        parts.append((0, int(piece), "") if piece.isdigit() else (1, 0, piece))
    return parts


def cached_versions() -> list[str]:
    d = versions_dir()
    if not d.is_dir():
        return []
    found = [p.name for p in d.iterdir() if (p / "sglang" / "__init__.py").is_file()]
    return sorted(found, key=_version_key)


def read_version(root: Path) -> str:
    """The version of the sglang package under ``root``, read from files, never imported."""
    pkg = root / "sglang"
    vfile = pkg / "_version.py"
    if vfile.is_file():
        m = re.search(r"""__version__\s*=\s*(?:version\s*=\s*)?['"]([^'"]+)['"]""", vfile.read_text(errors="replace"))
        if m:
            return m.group(1)
    vfile = pkg / "version.py"
    if vfile.is_file():
        m = re.search(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", vfile.read_text(errors="replace"), re.M)
        if m:
            return m.group(1)
    for meta in root.glob("sglang-*.dist-info/METADATA"):
        m = re.search(r"^Version:\s*(\S+)", meta.read_text(errors="replace"), re.M)
        if m:
            return m.group(1)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        m = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(errors="replace"), re.M)
        if m:
            return m.group(1)
    return "unknown"


def _python_root_of(path: Path) -> Path | None:
    """The directory holding ``sglang/__init__.py`` for a checkout, a site dir or the package itself."""
    candidates = [path / "python", path]
    if path.name == "sglang":
        candidates.append(path.parent)
    for c in candidates:
        if (c / "sglang" / "__init__.py").is_file():
            return c
    return None


def from_path(path: str | os.PathLike) -> SglangSource:
    p = Path(path).expanduser()
    if not p.exists():
        raise SpectraceError(f"no such directory: {p}")
    if not p.is_dir():
        raise SpectraceError(f"not a directory: {p}")
    root = _python_root_of(p.resolve())
    if root is None:
        raise SpectraceError(
            f"no sglang package in {p} (expected {p}/sglang/__init__.py or {p}/python/sglang/__init__.py)"
        )
    return SglangSource(root=root, version=read_version(root), origin="path")


def installed() -> SglangSource | None:
    """The importable sglang, found through the import system without importing it."""
    try:
        spec = importlib.util.find_spec("sglang")
    except (ImportError, ValueError):  # a broken sglang already in sys.modules
        return None
    if spec is None:
        return None
    if spec.origin and spec.origin.endswith("__init__.py"):
        pkg = Path(spec.origin).resolve().parent  # a regular package: .../site-packages/sglang/__init__.py
    elif spec.submodule_search_locations:
        pkg = Path(list(spec.submodule_search_locations)[0]).resolve()  # a namespace package
    else:
        return None  # a module named sglang, not the package
    return SglangSource(root=pkg.parent, version=read_version(pkg.parent), origin="installed")


def _unpack_archive(archive: Path, dest: Path) -> None:
    """Unpack only the sglang package (wheel: sglang/..., sdist: */python/sglang/... or */sglang/...)."""
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as zf:
            members = [n for n in zf.namelist() if n.startswith("sglang/")]
            members += [n for n in zf.namelist() if re.match(r"sglang-[^/]+\.dist-info/METADATA$", n)]
            zf.extractall(dest, members)
        return
    with tarfile.open(archive) as tf:
        for member in tf.getmembers():
            m = re.match(r"[^/]+/(?:python/)?(sglang/.*)$", member.name)
            if m and (member.isfile() or member.isdir()):
                member.name = m.group(1)
                tf.extract(member, dest, filter="data") if hasattr(tarfile, "data_filter") else tf.extract(member, dest)


def _pip_download(version: str, dest: Path) -> Path:
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q", "-d", str(dest)]
    attempts = [
        base + [f"sglang=={version}"],
        # newer releases ship only CPython-3.11 manylinux wheels; the source is the same
        base + ["--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp",
                "--platform", "manylinux_2_34_x86_64", f"sglang=={version}"],
    ]
    errors = []
    for cmd in attempts:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        files = [p for p in dest.iterdir() if p.name.startswith("sglang-")]
        if proc.returncode == 0 and files:
            return files[0]
        errors.append(proc.stderr)
    text = "\n".join(errors)
    if "No matching distribution" in text or "Could not find a version" in text:
        # pip lists the versions it saw; none at all for a package that exists means no index answered
        if "from versions: none" in text or re.search(
            r"(Failed to establish|Temporary failure|Name or service not known|NewConnectionError|ConnectTimeout)", text
        ):
            raise SpectraceError(
                f"cannot fetch sglang=={version}: no package index answered (no network?) "
                f"and it is not in the cache {versions_dir()}"
            )
        raise SpectraceError(f"no such SGLang version on PyPI: {version} (pip: no matching distribution)")
    last = [ln for ln in text.strip().splitlines() if ln.strip()]
    raise SpectraceError(f"pip download sglang=={version} failed: {last[-1] if last else 'unknown error'}")


def fetch_version(version: str, offline: bool = False) -> SglangSource:
    if not VERSION_RE.match(version):
        raise SpectraceError(f"not a version, a path or 'installed': {version}")
    target = versions_dir() / version
    if (target / "sglang" / "__init__.py").is_file():
        return SglangSource(root=target, version=read_version(target) if read_version(target) != "unknown" else version, origin="cache")
    if offline or os.environ.get("SPECTRACE_OFFLINE"):
        raise SpectraceError(f"SGLang {version} is not in the cache {versions_dir()} and fetching is off")
    versions_dir().mkdir(parents=True, exist_ok=True)
    with _fetch_lock():
        if (target / "sglang" / "__init__.py").is_file():  # fetched by another process meanwhile
            return SglangSource(root=target, version=read_version(target) if read_version(target) != "unknown" else version, origin="cache")
        _download_into(version, target)
    found = read_version(target)
    return SglangSource(root=target, version=found if found != "unknown" else version, origin="pypi")


@contextlib.contextmanager
def _fetch_lock():
    """One fetch at a time per cache, by a lock on the versions folder itself (no lock file for
    ``spectrace cache`` to list): two processes that start together (``pytest -n 2``) download a
    release once; the second waits, then finds it unpacked. Without flock (not POSIX) both
    download, and the atomic rename keeps one."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(versions_dir(), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


def _download_into(version: str, target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=versions_dir(), prefix=f".fetch-{version}-") as tmp:
        tmpdir = Path(tmp)
        dl = tmpdir / "dl"
        dl.mkdir()
        with waiting(f"downloading sglang=={version}", delay=0):  # pip -q says nothing for many seconds
            archive = _pip_download(version, dl)
        unpack = tmpdir / "unpacked"
        unpack.mkdir()
        _unpack_archive(archive, unpack)
        if not (unpack / "sglang" / "__init__.py").is_file():
            raise SpectraceError(f"the download for sglang=={version} holds no sglang package: {archive.name}")
        try:
            os.replace(unpack, target)  # atomic: a concurrent fetch either wins or finds it done
        except OSError:
            if not (target / "sglang" / "__init__.py").is_file():
                raise


def resolve_source(spec: str | None) -> SglangSource:
    """``--sglang``: a path, ``installed``, a version, or None for the default."""
    if spec is None:
        inst = installed()
        if inst is not None:
            return inst
        cached = cached_versions()
        if cached:
            return fetch_version(cached[-1])
        raise SpectraceError(
            "no SGLang source: pass --sglang VERSION (e.g. 0.5.9, fetched from PyPI), a path, or install sglang"
        )
    if spec == "installed":
        inst = installed()
        if inst is None:
            raise SpectraceError("--sglang installed: no importable sglang package in this Python")
        return inst
    looks_like_path = os.sep in spec or spec.startswith((".", "~")) or Path(spec).expanduser().exists()
    if looks_like_path:
        return from_path(spec)
    return fetch_version(spec)


@dataclass(frozen=True)
class PackageSource:
    """Any Python package (or loose modules): the same shape as ``SglangSource`` for the index.

    ``packages`` are the top-level names analysed under ``root``: a package directory
    ``root/<name>/`` or a single module ``root/<name>.py``.
    """

    root: Path
    version: str
    origin: str
    packages: tuple[str, ...]

    @property
    def package_dir(self) -> Path:
        return self.root / self.packages[0] if len(self.packages) == 1 else self.root

    def describe(self) -> str:
        return f"{', '.join(self.packages)} {self.version} (path: {self.package_dir})"


_NOT_PACKAGES = {"test", "tests", "docs", "doc", "build", "dist", "examples", "benchmarks", "scripts"}


def _top_level_names(d: Path) -> tuple[str, ...]:
    """Packages (dirs with ``__init__.py``) under ``d``, then its loose modules (a script beside the
    packages it imports is part of the program)."""
    pkgs = sorted(c.name for c in d.iterdir()
                  if c.is_dir() and (c / "__init__.py").is_file() and c.name not in _NOT_PACKAGES
                  and c.name.isidentifier())
    loose = sorted(c.stem for c in d.glob("*.py") if c.stem.isidentifier() and c.stem != "setup")
    return tuple(pkgs) + tuple(m for m in loose if m not in pkgs)


def _package_version(root: Path, name: str) -> str:
    rx = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M)
    for f in (root / name / "__init__.py", root / name / "_version.py", root / name / "version.py", root / f"{name}.py"):
        if f.is_file():
            m = rx.search(f.read_text(errors="replace"))
            if m:
                return m.group(1)
    for meta in root.glob(f"{name}-*.dist-info/METADATA"):
        m = re.search(r"^Version:\s*(\S+)", meta.read_text(errors="replace"), re.M)
        if m:
            return m.group(1)
    return "unknown"


def package_source(path: str | os.PathLike, package: str | None = None) -> PackageSource:
    """``--source PATH [--package NAME]``: any package tree, found under ``PATH``.

    ``PATH`` may be a package directory, a ``.py`` file, a directory holding packages (or loose
    modules), or a checkout with a ``src/`` or ``python/`` layout. ``package`` picks one top-level
    name when several are there.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise SpectraceError(f"no such file or directory: {p}")
    p = p.resolve()
    if p.is_file():
        if p.suffix != ".py":
            raise SpectraceError(f"not a Python file: {p}")
        root, names = p.parent, (p.stem,)
    elif (p / "__init__.py").is_file() and package in (None, p.name):
        root, names = p.parent, (p.name,)
    else:
        root, names = None, ()
        for cand in (p / "src", p / "python", p):
            if not cand.is_dir():
                continue
            if package is not None:
                if (cand / package / "__init__.py").is_file() or (cand / f"{package}.py").is_file():
                    root, names = cand, (package,)
                    break
            else:
                found = _top_level_names(cand)
                if found:
                    root, names = cand, found
                    break
        if root is None:
            what = f"package '{package}'" if package else "Python package or module"
            raise SpectraceError(f"no {what} under {p}")
    return PackageSource(root=root, version=_package_version(root, names[0]), origin="path", packages=names)


def module_name(relpath: str) -> tuple[str, bool]:
    """The dotted module name of a file path relative to the python root, and whether it is a
    package's ``__init__``: ``sglang/srt/managers/scheduler.py`` -> (``sglang.srt.managers.scheduler``, False)."""
    parts = relpath[:-3].split("/") if relpath.endswith(".py") else relpath.split("/")
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False
