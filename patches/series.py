"""Reading a patch series: the quilt-style ``series`` file, DEP-3-like headers, unified diffs, manifest.

Layout (docs/patches.md)::

    patches/<series>/<sglang-version>/series          # patch file names in order, '#' comments
    patches/<series>/<sglang-version>/0001-*.patch     # header, then a diff with a/sglang/... b/sglang/...
    patches/<series>/<sglang-version>/manifest.toml   # exact version, patch and original-file sha256

Everything here is pure parsing: nothing touches a target tree.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from spectrace.errors import SpectraceError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_SERIES = "dynamic-disable"
SERIES_DIR_ENV = "SPECTRACE_SERIES_DIR"  # tests and series authors point the engine at another tree

HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
HEADER_KEY_RE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*):\s?(.*)$")
NO_NEWLINE = "\\ No newline at end of file"


def series_root() -> Path:
    """The directory holding ``<series>/<version>/``: SPECTRACE_SERIES_DIR, else the installed patches/."""
    explicit = os.environ.get(SERIES_DIR_ENV)
    return Path(explicit).expanduser() if explicit else Path(__file__).resolve().parent


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    return sha256_bytes(path.read_bytes())


@dataclass
class Hunk:
    old_start: int  # 1-based as in the @@ line; 0 when the old side is empty
    old_len: int
    new_start: int
    new_len: int
    # (tag, text) with tag in ' ', '-', '+'; text keeps its line ending ("" ending = no newline at EOF)
    lines: list[tuple[str, str]] = field(default_factory=list)

    @property
    def old_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag in " -"]

    @property
    def new_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag in " +"]

    def describe(self) -> str:
        return f"@@ -{self.old_start},{self.old_len} +{self.new_start},{self.new_len} @@"


@dataclass
class FileDiff:
    old_path: str | None  # relative to the python root (a/ stripped); None for /dev/null (new file)
    new_path: str | None  # None for a deleted file
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new_path or self.old_path  # type: ignore[return-value]

    @property
    def creates(self) -> bool:
        return self.old_path is None

    @property
    def deletes(self) -> bool:
        return self.new_path is None


@dataclass
class PatchFile:
    name: str
    path: Path
    sha256: str
    header: dict[str, str]
    files: list[FileDiff]

    @property
    def description(self) -> str:
        return self.header.get("description", "").strip()

    @property
    def requires_contracts(self) -> list[str]:
        return _id_list(self.header.get("requires-contracts", ""))

    @property
    def adds_contracts(self) -> list[str]:
        return _id_list(self.header.get("adds-contracts", ""))

    @property
    def touched(self) -> list[str]:
        return [f.path for f in self.files]


@dataclass
class Series:
    name: str
    version: str
    directory: Path
    patches: list[PatchFile]
    manifest: dict

    @property
    def touched_files(self) -> list[str]:
        seen: dict[str, None] = {}
        for p in self.patches:
            for f in p.files:
                seen.setdefault(f.path)
        return list(seen)

    def manifest_patch_sha(self) -> dict[str, str]:
        """{patch file name: sha256} from the manifest (``[[patches]]`` with ``name``/``file``)."""
        out = {}
        for entry in self.manifest.get("patches", self.manifest.get("patch", [])) or []:
            name = entry.get("name") or entry.get("file")
            if name and entry.get("sha256"):
                out[name] = entry["sha256"]
        return out

    def manifest_original_sha(self) -> dict[str, str]:
        """{touched path: sha256 of the pristine release file} (``[[files]]`` with ``path``)."""
        out = {}
        for entry in self.manifest.get("files", self.manifest.get("file", [])) or []:
            path = entry.get("path")
            sha = entry.get("original_sha256") or entry.get("sha256")
            if path and sha:
                out[path] = sha
        return out

    @property
    def manifest_version(self) -> str | None:
        m = self.manifest
        return m.get("sglang_version") or m.get("sglang") or m.get("version")


def _id_list(value: str) -> list[str]:
    return [piece for piece in re.split(r"[\s,]+", value.strip()) if piece]


def _version_key(version: str) -> list:
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.+-]", version)]


def available_series(root: Path | None = None) -> dict[str, list[str]]:
    """{series name: [versions]} for every ``<root>/<series>/<version>/series`` file."""
    root = root or series_root()
    found: dict[str, list[str]] = {}
    if not root.is_dir():
        return found
    for series_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        versions = sorted((v.name for v in series_dir.iterdir() if (v / "series").is_file()), key=_version_key)
        if versions:
            found[series_dir.name] = versions
    return found


def read_series_file(path: Path) -> list[str]:
    """Patch names from a quilt ``series`` file: one per line, '#' comments, quilt's ``-pN`` options ignored."""
    names = []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, *opts = line.split()
        if any(opt not in ("-p1",) for opt in opts):
            raise SpectraceError(f"{path}: unsupported option in '{raw.strip()}' (only -p1 patches are supported)")
        names.append(name)
    return names


def split_keepends(text):
    """Lines with their endings, split on '\n' only (str.splitlines also splits on form feeds and
    U+2028, which Python source may hold inside strings; patch and diff treat them as text)."""
    parts = text.split("\n" if isinstance(text, str) else b"\n")
    nl = "\n" if isinstance(text, str) else b"\n"
    lines = [p + nl for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _strip_prefix(path: str) -> str | None:
    path = path.split("\t", 1)[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        return path[2:]
    raise SpectraceError(f"diff path without an a/ or b/ prefix: {path} (series diffs are -p1)")


def parse_patch_text(text: str, name: str = "<patch>") -> tuple[dict[str, str], list[FileDiff]]:
    """Split a patch into its DEP-3-like header ({lowercase key: value}) and its file diffs."""
    lines = split_keepends(text)
    header: dict[str, str] = {}
    i = 0
    last_key = None
    # the header ends at the first line of the diff proper
    while i < len(lines) and not lines[i].startswith(("--- ", "diff ", "Index: ", "===")):
        raw = lines[i].rstrip("\r\n")
        m = HEADER_KEY_RE.match(raw)
        if m and not raw.startswith((" ", "\t")):
            last_key = m.group(1).lower()
            header[last_key] = m.group(2).strip()
        elif raw.startswith((" ", "\t")) and last_key:
            cont = raw.strip()
            header[last_key] += "\n" + ("" if cont == "." else cont)
        else:
            last_key = None
        i += 1

    files: list[FileDiff] = []
    while i < len(lines):
        line = lines[i]
        if not line.startswith("--- "):
            i += 1  # 'diff --git', 'index ...', blank separator lines
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            raise SpectraceError(f"{name}: '---' line without '+++' at line {i + 1}")
        fd = FileDiff(old_path=_strip_prefix(line[4:].rstrip("\r\n")), new_path=_strip_prefix(lines[i + 1][4:].rstrip("\r\n")))
        if fd.old_path is None and fd.new_path is None:
            raise SpectraceError(f"{name}: diff from /dev/null to /dev/null at line {i + 1}")
        if fd.old_path and fd.new_path and fd.old_path != fd.new_path:
            raise SpectraceError(f"{name}: renames are not supported ({fd.old_path} -> {fd.new_path}, line {i + 1})")
        i += 2
        while i < len(lines) and lines[i].startswith("@@"):
            m = HUNK_RE.match(lines[i])
            if not m:
                raise SpectraceError(f"{name}: malformed hunk header at line {i + 1}: {lines[i].strip()}")
            hunk = Hunk(
                old_start=int(m.group(1)), old_len=_count(m.group(2)),
                new_start=int(m.group(3)), new_len=_count(m.group(4)),
            )
            i += 1
            old_seen = new_seen = 0
            while (old_seen < hunk.old_len or new_seen < hunk.new_len) and i < len(lines):
                body = lines[i]
                tag = body[:1]
                if body.startswith(NO_NEWLINE):
                    _drop_last_newline(hunk, name, i)
                    i += 1
                    continue
                if tag not in (" ", "-", "+"):
                    if body in ("\n", "\r\n"):  # an editor stripped the lone space of an empty context line
                        tag, body = " ", " " + body
                    else:
                        raise SpectraceError(f"{name}: hunk {hunk.describe()} ends early at line {i + 1}")
                hunk.lines.append((tag, body[1:]))
                if tag in " -":
                    old_seen += 1
                if tag in " +":
                    new_seen += 1
                i += 1
            if old_seen != hunk.old_len or new_seen != hunk.new_len:
                raise SpectraceError(f"{name}: hunk {hunk.describe()} is truncated (file ends early)")
            if i < len(lines) and lines[i].startswith(NO_NEWLINE):
                _drop_last_newline(hunk, name, i)
                i += 1
            fd.hunks.append(hunk)
        if not fd.hunks:
            raise SpectraceError(f"{name}: no hunks for {fd.path}")
        files.append(fd)
    if not files:
        raise SpectraceError(f"{name}: holds no diff")
    return header, files


def _count(group: str | None) -> int:
    return 1 if group is None else int(group)  # '@@ -5 +5 @@' means one line


def _drop_last_newline(hunk: Hunk, name: str, lineno: int) -> None:
    if not hunk.lines:
        raise SpectraceError(f"{name}: '{NO_NEWLINE}' before any hunk line at line {lineno + 1}")
    tag, text = hunk.lines[-1]
    hunk.lines[-1] = (tag, text.rstrip("\r\n") if text.endswith("\n") else text)


def load_patch(path: Path) -> PatchFile:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpectraceError(f"{path}: not UTF-8 text") from exc
    header, files = parse_patch_text(text, name=path.name)
    return PatchFile(name=path.name, path=path, sha256=sha256_bytes(data), header=header, files=files)


def load_series(name: str, version: str, root: Path | None = None) -> Series:
    """The series ``name`` for SGLang ``version``; a one-line SpectraceError when there is none."""
    root = root or series_root()
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        raise SpectraceError(f"not a series name: {name!r}")
    series_dir = root / name
    if not series_dir.is_dir():
        known = ", ".join(available_series(root)) or "none"
        raise SpectraceError(f"no patch series '{name}' (available: {known})")
    directory = series_dir / version
    if not (directory / "series").is_file():
        versions = available_series(root).get(name, [])
        raise SpectraceError(
            f"series '{name}' has no patches for SGLang {version} (it targets {', '.join(versions) or 'no version yet'})"
        )
    names = read_series_file(directory / "series")
    if not names:
        raise SpectraceError(f"{directory / 'series'} lists no patches")
    patches = []
    for patch_name in names:
        p = directory / patch_name
        if not p.is_file():
            raise SpectraceError(f"{directory / 'series'} names {patch_name}, which does not exist")
        patches.append(load_patch(p))
    manifest: dict = {}
    mpath = directory / "manifest.toml"
    if mpath.is_file():
        try:
            manifest = tomllib.loads(mpath.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise SpectraceError(f"{mpath}: not valid TOML ({exc})") from exc
    return Series(name=name, version=version, directory=directory, patches=patches, manifest=manifest)


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise SpectraceError(f"manifest.toml: cannot write a {type(value).__name__} value")


def render_manifest(series: Series, pristine_root: Path | None, original_sha: dict[str, str] | None = None) -> str:
    """manifest.toml for ``series`` with hashes taken from the pristine release tree ``pristine_root``
    (or, without one, from ``original_sha``: {touched path: sha256}, e.g. a previous manifest's).

    Keeps the informational top-level keys (description, verified_modes, server_args, ...) of an
    existing manifest; rewrites series, sglang_version, [[patches]] and [[files]].
    """
    keep = {k: v for k, v in series.manifest.items()
            if k not in ("series", "sglang_version", "sglang", "version", "patches", "patch", "files", "file")}
    keep.setdefault("verified_modes", [])
    keep.setdefault("server_args", [])
    out = ["# written by `spectrace patch manifest`; hashes of the patches and of the pristine files they touch",
           f"series = {_toml_str(series.name)}", f"sglang_version = {_toml_str(series.version)}"]
    out += [f"{key} = {_toml_value(value)}" for key, value in keep.items()]
    for patch in series.patches:
        out += ["", "[[patches]]", f"name = {_toml_str(patch.name)}", f"sha256 = {_toml_str(patch.sha256)}"]
    for path in series.touched_files:
        if pristine_root is not None:
            original = pristine_root / path
            sha = sha256_file(original) if original.is_file() else None  # files a patch creates have no original
        else:
            sha = (original_sha or {}).get(path)
        if sha:
            out += ["", "[[files]]", f"path = {_toml_str(path)}", f"original_sha256 = {_toml_str(sha)}"]
    return "\n".join(out) + "\n"
