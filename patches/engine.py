"""The patch engine: check, apply, revert and report a series on an SGLang tree, all or nothing.

Crash safety (docs/patches.md, "State and journal"): every change to a target tree goes through a
journal under ``<python root>/.spectrace/patches/<series>/``:

1. the new contents of every touched file are computed in memory (patches/hunks.py) and every
   gate has passed before anything is written;
2. the original bytes of every touched file are copied to ``originals/`` (fsynced), then
   ``journal.json`` is written atomically: from here on an interruption rolls back;
3. each file is replaced atomically (``spectrace.atomic.atomic_write``: a temp file in the same
   directory, fsync, ``os.replace``);
4. the contracts are re-checked on the patched tree;
5. ``state.json`` is written atomically: the commit point; then the journal is removed.

Every engine command first runs ``recover()``: a journal without a matching ``state.json`` is an
interrupted apply and is rolled back from ``originals/``; a journal of a revert is rolled forward.
So a SIGKILL at any instant leaves either the original tree or the fully patched one.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import fcntl
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from spectrace.atomic import _fsync_dir, atomic_write
from spectrace.errors import Interrupted, SpectraceError, describe, one_line
from spectrace.interrupts import deferred
from spectrace.progress import waiting
from spectrace.ui import plural
from spectrace.patches.hunks import HunkError, apply_file_diff
from spectrace.patches.series import DEFAULT_SERIES, Series, load_series, sha256_bytes
from spectrace.source import VERSION_RE, SglangSource, from_path, installed

if TYPE_CHECKING:  # the checker is imported when it runs (run_contract_catalog)
    from spectrace.contracts.check import CheckReport as ContractReport
    from spectrace.contracts.records import Violation

INSTALLED = "installed"  # --sglang installed: the sglang package this Python would import
STATE_DIRNAME = ".spectrace"
JOURNAL = "journal.json"
STATE = "state.json"
ORIGINALS = "originals"
TMP_SUFFIX = ".spectrace-tmp"  # the temp files of engines before atomic_write; still cleaned up

# Test hooks (tests/test_patch_engine.py): die like a SIGKILL after N target-file writes, or at a named point.
KILL_AFTER_WRITES_ENV = "SPECTRACE_TEST_KILL_AFTER_WRITES"
KILL_AT_ENV = "SPECTRACE_TEST_KILL_AT"


# ---------------------------------------------------------------- target


@dataclass
class Target:
    source: SglangSource
    git_toplevel: Path | None

    @property
    def root(self) -> Path:
        return self.source.root

    @property
    def version(self) -> str:
        return self.source.version

    @property
    def state_base(self) -> Path:
        return self.root / STATE_DIRNAME / "patches"

    def state_dir(self, series: str) -> Path:
        return self.state_base / series

    def describe(self) -> str:
        where = f"git checkout {self.git_toplevel}" if self.git_toplevel else "plain directory"
        if self.source.origin == "installed":
            where = f"installed package, {where}"
        return f"SGLang {self.version} at {self.root} ({where})"


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess | None:
    """A read-only git query; never one that writes the index or the worktree."""
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        return subprocess.run(["git", "--no-optional-locks", *args], cwd=cwd, capture_output=True, env=env, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None


def is_version_spec(spec: str | os.PathLike) -> bool:
    """``--sglang 0.5.12``: a version, not a tree (a directory of that name wins)."""
    text = str(spec)
    return os.sep not in text and bool(VERSION_RE.match(text)) and not Path(text).expanduser().exists()


def resolve_target(path: str | os.PathLike) -> Target:
    """A tree to patch: a path, or ``installed`` (found with importlib, never imported)."""
    if str(path) == INSTALLED and not Path(INSTALLED).exists():
        source = installed()
        if source is None:
            raise SpectraceError("--sglang installed: this Python has no importable sglang package")
    elif is_version_spec(path):
        raise SpectraceError(f"--sglang {path} is a version; patching needs a tree: a path (a checkout, a directory holding sglang/) or 'installed'")
    else:
        source = from_path(path)
    if not (source.root / "sglang" / "__init__.py").is_file():
        raise SpectraceError(_leftovers_message(source.root))
    if source.version == "unknown":  # a series is chosen by version: none fits a tree without one
        raise SpectraceError(f"no SGLang version in {source.root}: neither sglang/_version.py, sglang/version.py, "
                             f"an sglang dist-info nor pyproject.toml names one")
    proc = _git(["rev-parse", "--show-toplevel"], source.root)
    top = Path(proc.stdout.decode().strip()) if proc is not None and proc.returncode == 0 and proc.stdout.strip() else None
    return Target(source=source, git_toplevel=top)


def _leftovers_message(root: Path) -> str:
    """What an uninstalled sglang leaves where the installed one was (``pip uninstall`` removes only
    the files it installed): this engine's record and the files a series added."""
    pkg = root / "sglang"
    ours = root / STATE_DIRNAME
    left = sorted(p.relative_to(root).as_posix() for p in pkg.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    text = f"--sglang installed: {pkg} is no sglang package (no __init__.py; uninstalled?)"
    if ours.is_dir() or left:
        what = ([f"{ours} (spectrace's patch record)"] if ours.is_dir() else []) + [
            f"{len(left)} file{'s' if len(left) != 1 else ''} under {pkg} ({', '.join(left[:3])}{', ...' if len(left) > 3 else ''})"
        ] * bool(left)
        text += f"; left behind: {' and '.join(what)}; nothing of SGLang is left to patch or revert: remove them by hand"
    return text


def git_dirty(target: Target, paths: list[str]) -> list[str]:
    """Touched paths (relative to the python root) with uncommitted changes in a git checkout."""
    if target.git_toplevel is None or not paths:
        return []
    proc = _git(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *paths], target.root)
    if proc is None or proc.returncode != 0:
        return []
    dirty = []
    for entry in proc.stdout.decode("utf-8", "replace").split("\0"):
        if len(entry) > 3:
            full = (target.git_toplevel / entry[3:]).resolve()
            try:
                dirty.append(str(full.relative_to(target.root.resolve())))
            except ValueError:
                pass  # outside the python root: not a file the series touches
    return dirty


# ---------------------------------------------------------------- file primitives


def _temp_files(path: Path) -> list[Path]:
    """What a write of ``path`` cut short by a kill leaves beside it: atomic_write's
    ``.<name>.<pid>.tmp``, or an older engine's ``<name>.spectrace-tmp``."""
    own = re.compile(rf"\.{re.escape(path.name)}\.\d+\.tmp")
    found = [p for p in path.parent.glob(f".{glob.escape(path.name)}.*.tmp") if own.fullmatch(p.name)]
    old = path.with_name(path.name + TMP_SUFFIX)
    return found + ([old] if old.exists() else [])


def _write_json_atomic(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")


class DamagedState(SpectraceError):
    """state.json or journal.json that cannot be read: every command stops with the way out."""

    def __init__(self, path: Path, reason: str):
        self.path, self.series = path, path.parent.name
        super().__init__(
            f"damaged patch state {path} ({one_line(reason, 120)}); 'spectrace patch revert --series {self.series} --force' "
            f"restores the files from the originals kept beside it, or 'revert --series {self.series} --reset-state' "
            f"forgets the record and leaves the files as they are"
        )


_FILE_KEYS = {"path", "existed_before", "sha_before", "sha_after"}


def _read_json(path: Path) -> dict | None:
    """A state or journal record, checked for the fields the engine reads; DamagedState if not."""
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise DamagedState(path, describe(exc) if isinstance(exc, OSError) else str(exc)) from exc
    needed = {"txn", "files", "op"} if path.name == JOURNAL else {"txn", "series", "patches", "files"}
    files = record.get("files") if isinstance(record, dict) else None
    if (not isinstance(record, dict) or not needed <= record.keys() or not isinstance(files, list)
            or not all(isinstance(f, dict) and _FILE_KEYS <= f.keys() for f in files)):
        raise DamagedState(path, "not a record the engine wrote")
    return record


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


class _Writes:
    """Counts target-file writes; the kill hooks let tests die at any point of an apply or revert."""

    def __init__(self):
        raw = os.environ.get(KILL_AFTER_WRITES_ENV)
        self.kill_after = int(raw) if raw and raw.isdigit() else None
        self.kill_at = os.environ.get(KILL_AT_ENV)
        self.count = 0

    def wrote(self) -> None:
        self.count += 1
        if self.kill_after is not None and self.count >= self.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)

    def reached(self, point: str) -> None:
        if self.kill_at == point:
            os.kill(os.getpid(), signal.SIGKILL)


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """Turn SIGTERM into an exception while files change, so the rollback runs at once (SIGKILL
    cannot be caught: recover() on the next command handles that)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_exit(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, raise_exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _put(root: Path, rel: str, data: bytes | None, writes: _Writes | None = None) -> None:
    """Give ``root/rel`` the contents ``data`` (None: absent), atomically."""
    path = root / rel
    if data is None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            _fsync_dir(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, mode_from=path)
    if writes is not None:
        writes.wrote()


# ---------------------------------------------------------------- lock, journal, recovery


@contextlib.contextmanager
def _locked(target: Target, create: bool) -> Iterator[None]:
    """One engine command at a time on a tree (flock on .spectrace/patches/.lock)."""
    base = target.state_base
    if not base.is_dir():
        if not create:
            yield
            return
        try:
            base.mkdir(parents=True, exist_ok=True)
            # keeps the engine's state out of `git status` without touching the user's .gitignore
            (target.root / STATE_DIRNAME / ".gitignore").write_text("*\n")
        except OSError as exc:
            raise SpectraceError(f"cannot create the patch state {base}: {describe(exc)}; nothing was changed") from exc
    fd = os.open(base / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise SpectraceError(f"another spectrace patch command is working on {target.root}; try again when it ends") from exc
            raise
        try:
            yield
        finally:
            _remove_if_unused(target)
    finally:
        os.close(fd)


def _remove_if_unused(target: Target) -> None:
    """Drop .spectrace/ once no series is applied or journaled, so a revert leaves no trace."""
    if _series_dirs(target):
        return
    top = target.root / STATE_DIRNAME
    leftovers = {p.relative_to(top).as_posix() for p in top.rglob("*")} if top.is_dir() else set()
    if leftovers <= {".gitignore", "patches", "patches/.lock"}:
        shutil.rmtree(top, ignore_errors=True)


def _series_dirs(target: Target) -> list[Path]:
    base = target.state_base
    return sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def _keep_originals(state_dir: Path, files: list[dict], before: dict[str, bytes | None]) -> None:
    """The bytes each touched file had before the series, under the state's originals (a revert
    restores them); files the series creates have none."""
    shutil.rmtree(state_dir / ORIGINALS, ignore_errors=True)
    for entry in files:
        if entry["existed_before"]:
            saved = state_dir / ORIGINALS / entry["path"]
            saved.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(saved, before[entry["path"]])


def _restore_from(state_dir: Path, root: Path, files: list[dict], only_ours: bool = True) -> list[str]:
    """Put journaled files back to their original bytes (idempotent: a rerun after a crash is safe).

    ``only_ours``: restore a file only if it holds what the engine wrote (or the original already);
    bytes that are neither were written by someone else meanwhile and are left alone, reported.
    Returns one line per file left alone.
    """
    left_alone = []
    for entry in files:
        rel = entry["path"]
        if (root / rel).parent.is_dir():
            for leftover in _temp_files(root / rel):
                leftover.unlink(missing_ok=True)
        current = _read_or_none(root / rel)
        sha = sha256_bytes(current) if current is not None else None
        if sha == entry["sha_before"]:
            continue  # already original (None == None: a created file that is gone)
        if only_ours and sha != entry["sha_after"]:
            left_alone.append(f"{rel} was changed by something else meanwhile; left as it is")
            continue
        if not entry["existed_before"]:
            _put(root, rel, None)
            continue
        saved = _read_or_none(state_dir / ORIGINALS / rel)
        if saved is None or sha256_bytes(saved) != entry["sha_before"]:
            raise SpectraceError(
                f"cannot restore {rel}: its saved original in {state_dir / ORIGINALS} is missing or damaged"
            )
        _put(root, rel, saved)
    return left_alone


def recover(target: Target) -> list[str]:
    """Finish or undo whatever an interrupted apply/revert left; returns what it did (one line each)."""
    done = []
    for state_dir in _series_dirs(target):
        journal = _read_json(state_dir / JOURNAL)
        # the record matters only to an apply journal: a revert journal rolls forward even over a damaged one
        state = _read_json(state_dir / STATE) if journal is not None and journal.get("op") == "apply" else None
        if journal is not None:
            if journal.get("op") == "apply" and state is not None and state.get("txn") == journal.get("txn"):
                (state_dir / JOURNAL).unlink()  # the apply committed; only the cleanup was cut short
                done.append(f"recovered: the interrupted apply of '{state_dir.name}' had committed; kept it")
            elif journal.get("op") == "apply":
                left_alone = _restore_from(state_dir, target.root, journal["files"])
                (state_dir / JOURNAL).unlink()
                shutil.rmtree(state_dir / ORIGINALS, ignore_errors=True)
                done.append(f"recovered: rolled back an interrupted apply of '{state_dir.name}'; the tree is as before")
                done.extend(f"recovered: warning: {line}" for line in left_alone)
            elif journal.get("op") == "revert":
                _restore_from(state_dir, target.root, journal["files"], only_ours=False)
                (state_dir / STATE).unlink(missing_ok=True)
                (state_dir / JOURNAL).unlink()
                shutil.rmtree(state_dir / ORIGINALS, ignore_errors=True)
                done.append(f"recovered: finished an interrupted revert of '{state_dir.name}'")
            else:
                raise SpectraceError(f"unknown journal in {state_dir}: op={journal.get('op')!r}")
        for name in (STATE, JOURNAL):  # a state/journal write cut short
            for leftover in _temp_files(state_dir / name):
                leftover.unlink()
        if not (state_dir / STATE).exists() and not (state_dir / JOURNAL).exists():
            if _kept_originals_differ(state_dir, target.root):
                continue  # the record was deleted after apply: the originals are the only way back (revert)
            shutil.rmtree(state_dir / ORIGINALS, ignore_errors=True)  # e.g. an apply killed before its journal existed
            with contextlib.suppress(OSError):
                state_dir.rmdir()
    return done


def _kept_originals_differ(state_dir: Path, root: Path) -> bool:
    """Whether a kept original differs from the tree's file: an apply killed before its journal
    changed nothing, so such originals outlived a record someone deleted."""
    originals = state_dir / ORIGINALS
    if not originals.is_dir():
        return False
    return any(_read_or_none(root / saved.relative_to(originals)) != saved.read_bytes()
               for saved in originals.rglob("*") if saved.is_file())


def _orphaned_series(target: Target) -> list[str]:
    """Series whose record is gone while their kept originals still differ from the tree."""
    return [d.name for d in _series_dirs(target)
            if not (d / STATE).exists() and not (d / JOURNAL).exists() and _kept_originals_differ(d, target.root)]


# ---------------------------------------------------------------- dry run (the anchors gate)


@dataclass
class PatchVerdict:
    name: str
    applies: bool
    already_applied: bool = False
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        if self.applies:
            extra = f" ({'; '.join(self.notes)})" if self.notes else ""
            return f"{self.name}: would apply{extra}"
        if self.already_applied:
            return f"{self.name}: already in the tree ({'; '.join(self.reasons)})"
        return f"{self.name}: would NOT apply: {'; '.join(self.reasons)}"


@dataclass
class DryRun:
    series: Series
    verdicts: list[PatchVerdict]
    before: dict[str, bytes | None]  # every touched path's current bytes
    after: dict[str, bytes | None]  # what they would become

    @property
    def ok(self) -> bool:
        return all(v.applies for v in self.verdicts)

    @property
    def already_applied(self) -> list[PatchVerdict]:
        return [v for v in self.verdicts if v.already_applied]


def read_touched(series: Series, root: Path) -> dict[str, bytes | None]:
    before: dict[str, bytes | None] = {}
    for path in series.touched_files:
        if (root / path).is_symlink():
            raise SpectraceError(f"{root / path} is a symbolic link; the engine patches regular files only")
        data = _read_or_none(root / path)
        if data is None and (root / path).exists():
            raise SpectraceError(f"{root / path} is not a readable file")
        before[path] = data
    return before


def dry_run(series: Series, root: Path) -> DryRun:
    """Apply the whole series in memory, patch after patch, as -p1 from ``root``; touch nothing."""
    return dry_run_bytes(series, read_touched(series, root))


def dry_run_bytes(series: Series, before: dict[str, bytes | None]) -> DryRun:
    current = dict(before)
    verdicts = []
    for patch in series.patches:
        verdict = PatchVerdict(patch.name, applies=True)
        staged: dict[str, bytes | None] = {}
        for diff in patch.files:
            data = staged[diff.path] if diff.path in staged else current[diff.path]
            try:
                staged[diff.path], placements = apply_file_diff(data, diff)
                moved = [f"#{p.hunk_index} at {p.offset:+d}" for p in placements if p.offset]
                if moved:
                    verdict.notes.append(f"{diff.path}: hunk {', '.join(moved)} lines")
            except HunkError as exc:
                verdict.applies = False
                try:
                    apply_file_diff(data, diff, reverse=True)
                    verdict.already_applied = True
                    verdict.reasons.append(f"{diff.path}: its changes are already there")
                except HunkError:
                    verdict.reasons.append(f"{diff.path}: {exc}")
        if verdict.applies:
            current.update(staged)
        verdicts.append(verdict)
    return DryRun(series=series, verdicts=verdicts, before=before, after=current)


def applied_by_hand(series: Series, current: dict[str, bytes | None]) -> tuple[list[str], dict[str, bytes | None]]:
    """The series' patches already in these bytes, found by reverse-applying them last to first
    (a later patch may edit what an earlier one added), and the bytes with those undone."""
    found = []
    current = dict(current)
    for patch in reversed(series.patches):
        staged: dict[str, bytes | None] = {}
        try:
            for diff in reversed(patch.files):
                data = staged[diff.path] if diff.path in staged else current[diff.path]
                staged[diff.path], _ = apply_file_diff(data, diff, reverse=True)
        except HunkError:
            continue
        current.update(staged)
        found.append(patch.name)
    found.reverse()
    return found, current


# ---------------------------------------------------------------- the contract gate


@dataclass
class GateResult:
    name: str
    status: str  # "ok", "fail", "unavailable", "skipped"
    summary: str
    details: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == "ok"

    def line(self) -> str:
        return f"gate {self.name}: {self.status}: {one_line(self.summary)}"


# the checker's statuses for a read that is there (moved: at another line; relaxed: newly guarded)
HOLDS = {"present", "moved", "relaxed"}
# the checker could not follow a worker path far enough to decide: said in the gate's line (the
# runtime shims check the same contract in a live server), and a failure when a site of it lies in
# a file the series touches
UNDECIDED = "unknown"


def run_contract_catalog(source: SglangSource):
    """The one call into the contract checker: ``check_catalog(source, load_catalog())``.

    Returns ``(CheckReport, {contract id: catalog kind})``, or a string saying why the checker is
    not available. The kinds come from the catalog itself (unconditional-read, guarded-read, ...).
    """
    try:
        from spectrace.contracts.catalog import load_catalog
        from spectrace.contracts.check import check_catalog
    except ImportError as exc:
        return f"the contract checker is not installed ({exc})"
    catalog = load_catalog()
    return check_catalog(source, catalog), {c.id: c.kind for c in catalog}


@dataclass
class ContractSnapshot:
    statuses: dict[str, str] = field(default_factory=dict)  # contract id -> present|moved|guarded|gone|...
    holding: set[str] = field(default_factory=set)  # ids whose read is there as the catalog says
    kinds: dict[str, str] = field(default_factory=dict)
    violations: dict[str, str] = field(default_factory=dict)  # line-free key -> one-line text
    # what the checker could not decide: one-line text -> the files of its sites (read, worker return)
    undecided_sites: dict[str, set[str]] = field(default_factory=dict)

    def undecided_in(self, files: list[str]) -> list[str]:
        """The undecided obligations with a site in ``files`` (the code a series touches)."""
        wanted = set(files)
        return [text for text, sites in self.undecided_sites.items() if sites & wanted]

    def unconditional_holding(self) -> set[str]:
        return {cid for cid in self.holding if self.kinds.get(cid) == "unconditional-read"}


def _violation_key(violation: Violation) -> str:
    """Identifies a violation across a patch: its id, worker and method (line numbers shift when a
    file is patched; none of these holds one)."""
    return f"{violation.id}|{violation.producer.worker}|{violation.producer.method}"


def _snapshot(report: ContractReport, kinds: dict[str, str]) -> ContractSnapshot:
    snap = ContractSnapshot(kinds=dict(kinds))
    for r in report.results:
        snap.statuses[r.id] = str(r.status)
        if r.status in HOLDS and r.ok:
            snap.holding.add(r.id)
    for v in report.violations:
        snap.violations[_violation_key(v)] = one_line(v.message)
    for u in report.unknowns:
        snap.undecided_sites[one_line(u.message)] = {s for s in (u.read.file, u.producer.file) if s}
    for r in report.results:
        if r.status == UNDECIDED and r.found is not None and r.found.file:
            snap.undecided_sites[f"{r.id}: {one_line(r.message)}"] = {r.found.file}
    return snap


def contract_gate(source: SglangSource, series: Series, phase: str, baseline: ContractSnapshot | None = None) -> tuple[GateResult, ContractSnapshot]:
    """Run the catalog on ``source``; returns the gate and a snapshot for the after-gate's comparison.

    before: every contract a patch lists in Requires-Contracts is in the catalog and holds
            (``present`` or ``moved``) in this tree.
    after:  every unconditional read that held before still holds, every contract a patch lists
            in Adds-Contracts that the catalog knows holds, and the checker reports no violation
            that the tree did not already have before patching.
    """
    empty = ContractSnapshot()
    name = f"contracts ({phase})"
    try:
        with waiting(f"checking the contract catalog ({phase})"):
            outcome = run_contract_catalog(source)
    except SpectraceError as exc:
        return GateResult(name, "fail", f"the contract checker refused: {one_line(exc)}"), empty
    except Exception as exc:  # the checker is another module: report its failure as a failed gate, one line
        return GateResult(name, "fail", f"the contract checker failed: {describe(exc)}"), empty
    if isinstance(outcome, str):
        return GateResult(name, "unavailable", f"contracts: not available: {outcome}"), empty
    report, kinds = outcome
    snap = _snapshot(report, kinds)
    problems = []
    if phase == "before":
        for patch in series.patches:
            for cid in patch.requires_contracts:
                if cid not in snap.statuses:
                    problems.append(f"{patch.name} requires {cid}, which the catalog does not know")
                elif cid not in snap.holding:
                    problems.append(f"{patch.name} requires {cid}, which is {snap.statuses[cid]} in this tree")
        required = sorted({c for p in series.patches for c in p.requires_contracts})
        summary = f"{len(snap.statuses)} contracts checked; required and holding: {', '.join(required) or 'none listed'}"
        if snap.violations:
            summary += f"; {len(snap.violations)} violations already in this tree (not the series')"
    else:
        baseline = baseline or ContractSnapshot()
        undecided = []
        for cid in sorted(baseline.unconditional_holding() - snap.holding):
            if snap.statuses.get(cid) == UNDECIDED:
                undecided.append(cid)
            else:
                problems.append(f"unconditional read {cid} is {snap.statuses.get(cid, 'missing')} after patching")
        for patch in series.patches:
            for cid in patch.adds_contracts:
                if cid in snap.statuses and cid not in snap.holding:
                    if snap.statuses[cid] == UNDECIDED:
                        undecided.append(cid)
                    else:
                        problems.append(f"{patch.name} adds {cid}, which is {snap.statuses[cid]} after patching")
        for key, text in snap.violations.items():
            if key not in baseline.violations:
                problems.append(f"new violation: {text}")
        # in the code the series touches, the series must be decidable: an unknown there fails
        for text in snap.undecided_in(series.touched_files):
            problems.append(f"not decided in code the series touches: {text}")
        summary = (f"{len(snap.statuses)} contracts checked; the {len(snap.unconditional_holding())} unconditional "
                   f"reads that hold still hold; no new violation")
        added = sorted({c for p in series.patches for c in p.adds_contracts if c in snap.holding})
        if added:
            summary += f"; added and holding: {', '.join(added)}"
        unknown = sorted({c for p in series.patches for c in p.adds_contracts if c not in snap.statuses})
        if unknown:
            summary += f"; Adds-Contracts not in the catalog, not checked: {', '.join(unknown)}"
        if undecided:
            summary += (f"; not decided statically (a worker path the checker cannot follow; the runtime "
                        f"shims check them): {', '.join(sorted(set(undecided)))}")
    if problems:
        return GateResult(name, "fail", problems[0] + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""), problems), snap
    return GateResult(name, "ok", summary), snap


def _existing_dir(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def unwritable(root: Path, paths: list[str]) -> list[str]:
    """What would stop the engine writing ``paths`` (and its state beside sglang/), one line each.
    Files are replaced by a rename in their directory, so that directory must be writable too;
    a read-only file is reported as well: someone meant it not to change."""
    problems, seen = [], set()

    def check_dir(d: Path, why: str) -> None:
        d = _existing_dir(d)
        if d not in seen:
            seen.add(d)
            if not os.access(d, os.W_OK | os.X_OK):
                problems.append(f"directory {d} is not writable ({why})")

    for rel in paths:
        path = root / rel
        if path.exists() and not os.access(path, os.W_OK):
            problems.append(f"{rel} is not writable")
        check_dir(path.parent, f"{rel} is replaced there" if path.exists() else f"{rel} is created there")
    check_dir(root / STATE_DIRNAME / "patches", "the engine keeps its state there")
    return problems


def permissions_gate(root: Path, paths: list[str]) -> GateResult:
    problems = unwritable(root, paths)
    if problems:
        return GateResult("permissions", "fail", problems[0] + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""), problems)
    return GateResult("permissions", "ok", f"{plural(len(paths), 'file')} and the state directory are writable")


def manifest_gate(series: Series, before: dict[str, bytes | None]) -> tuple[GateResult, list[str]]:
    """The series is what its manifest says it is; returns notes on touched files that differ from the release."""
    problems, notes = [], []
    if not series.manifest:
        return GateResult("manifest", "fail", f"{series.directory / 'manifest.toml'} is missing"), notes
    mv = series.manifest_version
    if mv and mv != series.version:
        problems.append(f"manifest.toml is for SGLang {mv}, the directory for {series.version}")
    wanted = series.manifest_patch_sha()
    for patch in series.patches:
        if patch.name not in wanted:
            problems.append(f"{patch.name} is not in manifest.toml")
        elif wanted[patch.name] != patch.sha256:
            problems.append(f"{patch.name} differs from the sha256 in manifest.toml (edited since the series was vetted)")
    for path, sha in series.manifest_original_sha().items():
        data = before.get(path)
        if path in before and data is not None and sha256_bytes(data) != sha:
            notes.append(f"{path} differs from the released {series.version} file (local edits: the hunks must still match exactly)")
    if problems:
        return GateResult("manifest", "fail", problems[0], problems), notes
    return GateResult("manifest", "ok", f"{plural(len(series.patches), 'patch', 'patches')} "
                                        f"match{'es' if len(series.patches) == 1 else ''} manifest.toml"), notes


# ---------------------------------------------------------------- check / apply / revert / status


@dataclass
class CheckReport:
    target: Target
    series: Series
    dry: DryRun
    gates: list[GateResult]
    notes: list[str]
    applied_state: dict | None
    baseline_contracts: ContractSnapshot
    missing_base: str | None = None  # the series this one applies over is not applied

    @property
    def refusal(self) -> str | None:
        """Why apply would refuse (one line), or None."""
        if self.applied_state is not None:
            return _already_patched_message(self.applied_state)
        if self.missing_base is not None:
            return self.missing_base
        if self.dry.already_applied:
            v = self.dry.already_applied[0]
            return f"the tree is already (partly) patched: {v.name} is in it; nothing was changed"
        for gate in self.gates:
            if gate.status == "unavailable":
                return f"gate {gate.name} cannot run: {gate.summary} (pass --no-contract-gate to apply without it)"
            if not gate.passed and gate.status != "skipped":
                return f"gate {gate.name} failed: {gate.summary}"
        for v in self.dry.verdicts:
            if not v.applies:
                return f"{v.name} does not apply: {'; '.join(v.reasons)}"
        return None


def _already_patched_message(state: dict) -> str:
    return (
        f"already patched with series '{state.get('series')}' ({plural(len(state.get('patches', [])), 'patch', 'patches')}, "
        f"applied {state.get('applied_at', '?')}); run 'spectrace patch revert' first"
    )


def _any_applied_state(target: Target) -> dict | None:
    for state_dir in _series_dirs(target):
        state = _read_json(state_dir / STATE)
        if state is not None:
            return state
    return None


def _applied_states(target: Target, other_than: str | None = None) -> list[dict]:
    """The records of the series applied here; with ``other_than``, of the other series, and those
    whose record is damaged left out (their own commands report them)."""
    states = []
    for state_dir in _series_dirs(target):
        if other_than is None:
            state = _read_json(state_dir / STATE)
        elif state_dir.name == other_than:
            continue
        else:
            try:
                state = _read_json(state_dir / STATE)
            except DamagedState:
                continue
        if state is not None:
            states.append(state)
    return states


def _blocking_state(target: Target, series: Series) -> dict | None:
    """An applied series that ``series`` cannot go over: any, but the one its manifest says it applies
    over (``applies_over``: a series stacked like quilt's, reverted first)."""
    base = series.manifest.get("applies_over")
    for state in _applied_states(target):
        if state.get("series") != base:
            return state
    return None


def _missing_base(target: Target, series: Series) -> str | None:
    base = series.manifest.get("applies_over")
    if base and base not in {state.get("series") for state in _applied_states(target)}:
        return f"series '{series.name}' applies over '{base}', which is not applied here: apply '{base}' first (or --with {series.name})"
    return None


def _series_for(target: Target, series_name: str) -> Series:
    return load_series(series_name, target.version)


def _check(target: Target, series: Series, use_contracts: bool) -> CheckReport:
    dry = dry_run(series, target.root)
    gate, notes = manifest_gate(series, dry.before)
    gates = [gate, permissions_gate(target.root, series.touched_files)]
    baseline = ContractSnapshot()
    if use_contracts:
        cgate, baseline = contract_gate(target.source, series, "before")
        gates.append(cgate)
    else:
        gates.append(GateResult("contracts (before)", "skipped", "skipped on request (--no-contract-gate)"))
    applied_state = _blocking_state(target, series)
    if _any_applied_state(target) is not None or dry.already_applied:
        notes = []  # "differs from the release" says nothing new about a patched tree
    dirty = git_dirty(target, series.touched_files)
    if dirty:
        notes.append(f"uncommitted changes in {', '.join(dirty)} are kept: the series applies around them and revert restores them")
    return CheckReport(target, series, dry, gates, notes, applied_state, baseline, _missing_base(target, series))


def check(path: str | os.PathLike, series_name: str = DEFAULT_SERIES, use_contracts: bool = True) -> tuple[CheckReport, list[str]]:
    target = resolve_target(path)
    with _locked(target, create=False):
        recovered = recover(target)
        series = _series_for(target, series_name)
        return _check(target, series, use_contracts), recovered


@dataclass
class ApplyResult:
    target: Target
    series: Series
    state: dict
    gates: list[GateResult]
    notes: list[str]
    recovered: list[str]


def _refuse_source_cache(target: Target) -> None:
    """spectrace's own download cache is what `--sglang 0.5.12` analyses: patching it would make
    every later analysis of that version read patched code."""
    from spectrace.source import versions_dir

    cache = versions_dir().resolve()
    if target.root.resolve() == cache or cache in target.root.resolve().parents:
        raise SpectraceError(f"{target.root} is spectrace's SGLang source cache; patch a copy of it (or a checkout) instead")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def apply(path: str | os.PathLike, series_name: str = DEFAULT_SERIES, use_contracts: bool = True,
          progress: Callable[[str], None] | None = None) -> ApplyResult:
    """Apply every patch of the series or none; SpectraceError (one line) on any refusal."""
    try:
        return _apply(path, series_name, use_contracts, progress or (lambda _msg: None))
    except KeyboardInterrupt:
        # before the writes: nothing changed; during them: _apply rolled back before re-raising
        raise Interrupted("interrupted; the tree is unchanged") from None


def _apply(path, series_name: str, use_contracts: bool, say: Callable[[str], None]) -> ApplyResult:
    target = resolve_target(path)
    _refuse_source_cache(target)
    series = _series_for(target, series_name)  # refuses a version without a series before creating any state
    with _locked(target, create=True):
        recovered = recover(target)
        for line in recovered:
            say(line)
        report = _check(target, series, use_contracts)
        refusal = report.refusal
        if refusal:
            raise SpectraceError(refusal)
        for gate in report.gates:
            say(gate.line())
        state_dir = target.state_dir(series.name)
        writes = _Writes()
        txn = uuid.uuid4().hex
        changed = [p for p in series.touched_files if report.dry.before[p] != report.dry.after[p]]
        files = [
            {
                "path": p,
                "existed_before": report.dry.before[p] is not None,
                "sha_before": sha256_bytes(report.dry.before[p]) if report.dry.before[p] is not None else None,
                "sha_after": sha256_bytes(report.dry.after[p]) if report.dry.after[p] is not None else None,
            }
            for p in changed
        ]
        try:
            # originals first, then the journal: without a journal the tree is untouched
            _keep_originals(state_dir, files, report.dry.before)
            _write_json_atomic(state_dir / JOURNAL, {"op": "apply", "txn": txn, "series": series.name, "files": files})
            writes.reached("journal-written")
            with _sigterm_raises():
                for entry in files:
                    on_disk = _read_or_none(target.root / entry["path"])
                    if (sha256_bytes(on_disk) if on_disk is not None else None) != entry["sha_before"]:
                        raise SpectraceError(f"{entry['path']} changed while the series was being applied; rolled back")
                    _put(target.root, entry["path"], report.dry.after[entry["path"]], writes)
                writes.reached("files-written")
                gates = list(report.gates)
                if use_contracts:
                    after_gate, _ = contract_gate(target.source, series, "after", report.baseline_contracts)
                    gates.append(after_gate)
                    if not after_gate.passed:
                        raise SpectraceError(f"the patched tree fails gate {after_gate.name}: {after_gate.summary}; rolled back")
                    say(after_gate.line())
                state = {
                    "txn": txn,
                    "series": series.name,
                    "sglang_version": series.version,
                    "root": str(target.root),
                    "applied_at": _now(),
                    "patches": [{"name": p.name, "sha256": p.sha256} for p in series.patches],
                    "applies_over": series.manifest.get("applies_over"),
                    "files": files,
                    "contract_gates": {g.name: g.status for g in gates},
                }
                _write_json_atomic(state_dir / STATE, state)  # the commit point
        except BaseException as exc:
            # anything short of a kill: undo now (a kill is undone by recover() on the next command).
            # The state record goes first: a journal without it always means "roll back".
            with deferred():  # a second Ctrl-C must not cut the rollback short
                committed = _read_json(state_dir / STATE)
                if committed is not None and committed.get("txn") == txn:
                    (state_dir / STATE).unlink()
                _restore_from(state_dir, target.root, files)
                (state_dir / JOURNAL).unlink(missing_ok=True)
                shutil.rmtree(state_dir / ORIGINALS, ignore_errors=True)
                with contextlib.suppress(OSError):
                    state_dir.rmdir()
            if isinstance(exc, KeyboardInterrupt):
                raise Interrupted("interrupted; the tree is unchanged (rolled back)") from None
            raise
        writes.reached("committed")
        (state_dir / JOURNAL).unlink()
        _fsync_dir(state_dir)
        return ApplyResult(target, series, state, gates, report.notes, recovered)


@dataclass
class FileStatus:
    path: str
    state: str  # "patched", "edited since apply", "missing", "original", "deleted since apply (...)"


def _patched_over(target: Target, state: dict) -> dict[str, tuple[str, str]]:
    """{path: (series, its sha after)} of this series' files that a series applied over it patched again."""
    ours = {entry["path"]: entry["sha_after"] for entry in state["files"]}
    over = {}
    for other in _applied_states(target, other_than=state.get("series")):
        if other.get("applies_over") != state.get("series"):
            continue
        for entry in other["files"]:
            if entry["path"] in ours and entry["sha_before"] == ours[entry["path"]]:
                over[entry["path"]] = (other["series"], entry["sha_after"])
    return over


def _file_statuses(target: Target, state: dict) -> list[FileStatus]:
    over = _patched_over(target, state)
    out = []
    for entry in state["files"]:
        data = _read_or_none(target.root / entry["path"])
        sha = sha256_bytes(data) if data is not None else None
        if sha == entry["sha_after"]:
            out.append(FileStatus(entry["path"], "patched"))
        elif entry["path"] in over and sha == over[entry["path"]][1]:
            out.append(FileStatus(entry["path"], f"patched, then patched over by '{over[entry['path']][0]}'"))
        elif data is None and not entry["existed_before"]:
            out.append(FileStatus(entry["path"], "deleted since apply (the series created it)"))
        elif sha == entry["sha_before"]:
            out.append(FileStatus(entry["path"], "original"))
        elif data is None:
            out.append(FileStatus(entry["path"], "missing"))
        else:
            out.append(FileStatus(entry["path"], "edited since apply"))
    return out


def _rebuild_state(target: Target, series_name: str) -> dict:
    """A damaged record's stand-in, from what is still sound: the kept originals and the series.
    Files the series creates have no original; the patched bytes are the series applied to the originals."""
    state_dir = target.state_dir(series_name)
    originals = state_dir / ORIGINALS
    if not originals.is_dir():
        raise SpectraceError(
            f"the record of '{series_name}' is damaged and no originals are kept in {originals}: nothing to restore from; "
            f"'spectrace patch revert --series {series_name} --reset-state' forgets the record and leaves the files as they are"
        )
    series = _series_for(target, series_name)
    created = {d.path for p in series.patches for d in p.files if d.creates}
    before: dict[str, bytes | None] = {}
    for rel in series.touched_files:
        saved = _read_or_none(originals / rel)
        if saved is not None:
            before[rel] = saved
        elif rel in created:
            before[rel] = None
        else:
            before[rel] = _read_or_none(target.root / rel)  # not saved: apply did not change it
    dry = dry_run_bytes(series, before)
    files = []
    for rel, data in before.items():
        if (originals / rel).is_file() or rel in created:
            after = dry.after[rel] if dry.ok else b"\0unknown"  # a series edited since: every file counts as edited
            files.append({
                "path": rel,
                "existed_before": data is not None,
                "sha_before": sha256_bytes(data) if data is not None else None,
                "sha_after": sha256_bytes(after) if after is not None else None,
            })
    return {"txn": "rebuilt", "series": series_name, "patches": [{"name": p.name, "sha256": p.sha256} for p in series.patches],
            "files": files, "applied_at": "?", "rebuilt": True}


def _reset_state(target: Target, series_name: str) -> list[str]:
    """Forget the record of a series; the files stay as they are. Returns the record's files it dropped."""
    state_dir = target.state_dir(series_name)
    if not state_dir.is_dir():
        raise SpectraceError(f"series '{series_name}' has no state in {target.root}; nothing to reset")
    dropped = sorted(p.name for p in state_dir.iterdir())
    # the record first: without it and without a journal, what is left is plain leftovers
    for name in (STATE, JOURNAL):
        (state_dir / name).unlink(missing_ok=True)
    shutil.rmtree(state_dir, ignore_errors=True)
    return dropped


def revert(path: str | os.PathLike, series_name: str = DEFAULT_SERIES, force: bool = False,
           progress: Callable[[str], None] | None = None, reset_state: bool = False) -> tuple[dict, list[str]]:
    """Restore every file the series touched to its bytes before apply; returns (the state undone, recovered).

    ``force``: restore over edits made since apply (each one is reported first), and restore from the
    kept originals when the record is damaged. ``reset_state``: only forget the record."""
    say = progress or (lambda _msg: None)
    target = resolve_target(path)
    with _locked(target, create=False):
        state_dir = target.state_dir(series_name)
        if reset_state:
            dropped = _reset_state(target, series_name)
            return {"series": series_name, "files": [], "reset": dropped}, []
        try:
            recovered = recover(target)
            state = _read_json(state_dir / STATE)
        except DamagedState as exc:
            if not force or exc.series != series_name:
                raise
            say(f"warning: {exc.path} is damaged; restoring from the originals kept in {state_dir / ORIGINALS}")
            recovered, state = [], _rebuild_state(target, series_name)
        for line in recovered:
            say(line)
        if state is None and series_name in _orphaned_series(target):
            say(f"warning: the record {state_dir / STATE} is missing; reverting from the originals kept in {state_dir / ORIGINALS}")
            state = _rebuild_state(target, series_name)
        if state is None:
            raise SpectraceError(f"series '{series_name}' is not applied to {target.root}; nothing to revert")
        above = [other["series"] for other in _applied_states(target, other_than=series_name)
                 if other.get("applies_over") == series_name]
        if above:
            raise SpectraceError(f"series '{above[0]}' applies over '{series_name}': revert '{above[0]}' first; nothing was changed")
        statuses = _file_statuses(target, state)
        # a file already as before apply (a reinstall put it back) has nothing to discard or restore
        edited = [f for f in statuses if f.state not in ("patched", "original") and not f.state.startswith("deleted since")]
        if edited and not force:
            first = edited[0]
            raise SpectraceError(
                f"{first.path} is {first.state}"
                + (f" (+{len(edited) - 1} more files)" if len(edited) > 1 else "")
                + "; revert would discard that: pass --force to restore the originals anyway"
            )
        problems = unwritable(target.root, [f["path"] for f in state["files"]])
        if problems:
            raise SpectraceError(f"cannot revert: {problems[0]}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "") + "; nothing was changed")
        for f in edited:  # --force: say what goes before it goes
            say(f"discarding: {f.path}: {f.state}")
        writes = _Writes()
        # a revert only ever moves forward (an interrupted one is finished by recover()), and its
        # writes are few: Ctrl-C waits for them rather than leave a half-reverted tree
        with deferred() as interrupted:
            _write_json_atomic(state_dir / JOURNAL, {"op": "revert", "txn": state["txn"], "series": series_name, "files": state["files"]})
            writes.reached("journal-written")
            already = {f.path for f in statuses if f.state == "original" or f.state.startswith("deleted since")}
            for entry in state["files"]:
                rel = entry["path"]
                if rel in already:
                    continue
                if not entry["existed_before"]:
                    _put(target.root, rel, None, writes)
                    continue
                saved = _read_or_none(state_dir / ORIGINALS / rel)
                if saved is None or sha256_bytes(saved) != entry["sha_before"]:
                    raise SpectraceError(f"cannot revert {rel}: its saved original under {state_dir / ORIGINALS} is missing or damaged")
                _put(target.root, rel, saved, writes)
            writes.reached("files-written")
            (state_dir / STATE).unlink(missing_ok=True)
            (state_dir / JOURNAL).unlink()
            shutil.rmtree(state_dir / ORIGINALS, ignore_errors=True)
            with contextlib.suppress(OSError):
                state_dir.rmdir()
        if interrupted:
            raise Interrupted(f"interrupted; the revert of '{series_name}' had started and was finished: the tree is as before apply")
        return dict(state, already_original=sorted(already)), recovered


@dataclass
class HandApplied:
    """A series found in a tree without spectrace's record (``patch -p1``, ``git apply``)."""
    series: str
    found: list[str]  # patch names in the tree
    missing: list[str]  # patch names not in it

    @property
    def complete(self) -> bool:
        return bool(self.found) and not self.missing


@dataclass
class StatusReport:
    target: Target
    applied: list[tuple[dict, list[FileStatus]]]
    recovered: list[str]
    by_hand: HandApplied | None = None
    note: str | None = None  # why the by-hand check could not run
    orphaned: list[str] = field(default_factory=list)  # series whose record is gone, their originals kept


def _by_hand(target: Target, series: Series) -> HandApplied:
    found, pristine = applied_by_hand(series, read_touched(series, target.root))
    if found and len(found) == len(series.patches) and not dry_run_bytes(series, pristine).ok:
        found = []  # the hunks reverse, but the series does not apply again on what that gives: not this series
    return HandApplied(series.name, found, [p.name for p in series.patches if p.name not in found])


def status(path: str | os.PathLike, series_name: str = DEFAULT_SERIES) -> StatusReport:
    target = resolve_target(path)
    with _locked(target, create=False):
        recovered = recover(target)
        applied = []
        for state_dir in _series_dirs(target):
            state = _read_json(state_dir / STATE)
            if state is not None:
                applied.append((state, _file_statuses(target, state)))
        report = StatusReport(target, applied, recovered, orphaned=_orphaned_series(target))
        if not applied and not report.orphaned:
            try:
                report.by_hand = _by_hand(target, _series_for(target, series_name))
            except SpectraceError as exc:  # e.g. no series for this version: nothing to compare with
                report.note = one_line(exc)
        return report


def adopt(path: str | os.PathLike, series_name: str = DEFAULT_SERIES) -> dict:
    """Take over a series applied by hand: record it as if apply had done it, so revert can undo it.
    Writes only the engine's state (the originals come from reverse-applying the patches in memory)."""
    target = resolve_target(path)
    series = _series_for(target, series_name)
    with _locked(target, create=True):
        recover(target)
        existing = _any_applied_state(target)
        if existing is not None:
            raise SpectraceError(_already_patched_message(existing))
        current = read_touched(series, target.root)
        found, pristine = applied_by_hand(series, current)
        if len(found) != len(series.patches) or dry_run_bytes(series, pristine).after != current:
            missing = [p.name for p in series.patches if p.name not in found]
            raise SpectraceError(
                f"series '{series_name}' is not wholly in {target.root} (not found: {', '.join(missing) or 'a clean reverse'}); "
                f"nothing to adopt"
            )
        problems = unwritable(target.root, [])
        if problems:
            raise SpectraceError(f"cannot adopt: {problems[0]}")
        state_dir = target.state_dir(series.name)
        files = [
            {"path": p, "existed_before": pristine[p] is not None,
             "sha_before": sha256_bytes(pristine[p]) if pristine[p] is not None else None,
             "sha_after": sha256_bytes(current[p]) if current[p] is not None else None}
            for p in series.touched_files if pristine[p] != current[p]
        ]
        try:
            _keep_originals(state_dir, files, pristine)
            state = {
                "txn": uuid.uuid4().hex, "series": series.name, "sglang_version": series.version, "root": str(target.root),
                "applied_at": _now(), "adopted": True,
                "patches": [{"name": p.name, "sha256": p.sha256} for p in series.patches],
                "files": files, "contract_gates": {},
            }
            _write_json_atomic(state_dir / STATE, state)  # the commit point; before it, recover() drops the originals
        except BaseException:
            with deferred():
                (state_dir / STATE).unlink(missing_ok=True)
                shutil.rmtree(state_dir, ignore_errors=True)
            raise
        return state
