#!/usr/bin/env python3
"""Generate the dynamic-disable series of one SGLang version from the sources kept in the repository.

    python patches/dynamic-disable/tools/make_series.py VERSION              # write VERSION/
    python patches/dynamic-disable/tools/make_series.py VERSION --check      # exit 1 if VERSION/ is stale
    python patches/dynamic-disable/tools/make_series.py VERSION --from-tree EDITED_DIR

Sources (under patches/dynamic-disable/):

    src/<version>/...                 the modules the series adds (below sglang/srt/ in the tree, kept
                                      without that prefix): spectrace's own code, real files
    edits/<version>/<stem>.header     the patch's DEP-3-like header, up to and including its '---' line
    edits/<version>/<stem>.diff       ``diff -u`` of the existing SGLang files the patch edits (absent
                                      when the patch only adds files); SGLang's own files are never kept

Each ``<version>/<stem>.patch`` is the header, then one diff per file in the order PATCHES gives: a
new-file diff from /dev/null written from src/, or the file's section of the stem's .diff.
``series`` lists the stems in order; ``manifest.toml`` is written by spectrace's render_manifest,
with ``server_args`` parsed from the ``parser.add_argument("--...")`` lines the series adds and
``environment`` from the SGLANG_SPEC_DISABLE_* names its added lines read.

The pristine release (``--pristine DIR``, a directory holding ``sglang/``; default spectrace's
source cache for VERSION when it is there) gives the manifest's original-file sha256 and a trial
``patch -p1``. Without it the hashes are carried over from the existing manifest.

``--from-tree EDITED_DIR`` (a full copy of the pristine release, edited) imports the edits first:
files new in EDITED_DIR go to src/<version>/, changed ones become edits/<version>/<stem>.diff
(``diff -u`` against the pristine tree), each assigned to its stem by PATCHES; a stem whose content
changed gets today's Last-Update, a stem without a header gets a stub to fill in. The series is
then regenerated and applied to a fresh pristine copy, which must equal EDITED_DIR.
"""

from __future__ import annotations

import argparse
import datetime
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# run it where spectrace is installed: the manifest is spectrace's own (as `spectrace patch manifest` writes it)
from spectrace.patches.series import HUNK_RE, Series, load_patch, render_manifest, split_keepends

SERIES = "dynamic-disable"
HERE = Path(__file__).resolve().parent.parent  # patches/dynamic-disable
MODULE = "sglang/srt/speculative/dynamic_disable.py"
KERNELS = "sglang/srt/speculative/dynamic_disable_kernels.py"
WORKER_V2_FILES = ["sglang/srt/speculative/eagle_worker_v2.py", "sglang/srt/speculative/standalone_worker_v2.py"]

# Per version: the patches in order, each (file name stem, the files it adds or edits, in diff
# order), and the manifest's verified_modes.  A file is new when src/<version>/ holds it.
PATCHES = {
    "0.5.12": [
        ("0001-speculative-dynamic-disable-module", [MODULE, KERNELS]),
        ("0002-server-args-dynamic-disable", ["sglang/srt/server_args.py"]),
        ("0003-eagle-worker-v2-disabled-step", WORKER_V2_FILES),
        ("0004-decode-log-and-metrics-spec-mode", ["sglang/srt/observability/metrics_collector.py",
                                                   "sglang/srt/observability/scheduler_metrics_mixin.py"]),
        ("0005-overlap-utils-fused-future-map", ["sglang/srt/managers/overlap_utils.py"]),
    ],
    "0.5.17": [
        ("0001-core-module", [MODULE]),
        ("0002-server-args", ["sglang/srt/server_args.py", "sglang/srt/arg_groups/speculative_hook.py",
                              "sglang/srt/environ.py"]),
        ("0003-worker-disabled-step", ["sglang/srt/speculative/eagle_worker_v2.py", "sglang/srt/managers/utils.py"]),
        ("0004-metrics-log", ["sglang/srt/managers/scheduler_components/batch_result_processor.py",
                              "sglang/srt/managers/scheduler_components/metrics_reporter.py",
                              "sglang/srt/managers/tokenizer_manager.py"]),
    ],
    "0.5.23": [
        ("0001-core-module", [MODULE]),
        ("0002-server-args", ["sglang/srt/arg_groups/fields/spec.py", "sglang/srt/arg_groups/memory_hook.py",
                              "sglang/srt/arg_groups/speculative_hook.py", "sglang/srt/environ.py"]),
        ("0003-worker-disabled-step", ["sglang/srt/speculative/eagle_worker_v2.py", "sglang/srt/managers/utils.py"]),
        ("0004-metrics-log", ["sglang/srt/managers/scheduler_components/batch_result_processor.py",
                              "sglang/srt/managers/scheduler_components/metrics_reporter.py",
                              "sglang/srt/managers/tokenizer_manager.py"]),
    ],
    "0.5.9": [
        ("0001-speculative-dynamic-disable-module", [MODULE]),
        ("0002-server-args-dynamic-disable", ["sglang/srt/server_args.py"]),
        ("0003-eagle-worker-v2-disabled-step", WORKER_V2_FILES),
        ("0004-output-processor-disabled-stride", ["sglang/srt/managers/scheduler_output_processor_mixin.py"]),
        ("0005-decode-log-spec-mode", ["sglang/srt/managers/scheduler_metrics_mixin.py"]),
    ],
}
VERIFIED = {
    "0.5.23": [
        "statically and on the CPU only: SGLang 0.5.23 needs torch 2.13+, which the GPU machine lacks; the rule, "
        "the refusals and the prefix-cache cap against 0.5.23's own objects on the CPU "
        "(tests/test_core_policy.py, tests/test_core_runtime.py)",
    ],
    "0.5.17": [
        "spec-v2 overlap, EAGLE3, topk=1, triton attention, page_size 1, tp 1: the plain step, its graphs and "
        "the catch-up ran on the H200 under the rule of fabdf67 (docs/results.md); the window rule, the "
        "refusals and the prefix-cache cap on the CPU only (tests/test_core_policy.py, tests/test_core_runtime.py)",
    ],
    "0.5.12": [
        "spec-v2 overlap, EAGLE3, topk=1, triton attention, page_size 1, tp 1 (GPU: H200, see "
        "docs/results.md)",
        "spec-v2 overlap, EAGLE, topk=1 (same code path as EAGLE3; not run on the GPU)",
    ],
    "0.5.9": [
        "spec-v2 overlap, EAGLE/EAGLE3, topk=1, triton attention, page_size 1, tp 1: NOT run on a GPU "
        "(0.5.9 needs an older torch than the lent H200 has); applies cleanly, byte-compiles, read against "
        "0.5.9; same design as the GPU-verified 0.5.12 series",
    ],
}
_CORE = (
    "Spec v2 (EAGLEWorkerV2): per decode step, speculation or a plain target decode through SGLang's own "
    "DECODE CUDA graphs, whichever the measured step times and the accept length of the batch-size bucket "
    "say is faster; the losing mode is measured again within a bound set by the step times alone; rank 0's "
    "plan broadcast under TP; next_draft_input (new_seq_lens) on every path, the draft KV caught up before "
    "speculation resumes, and a finished request cached only up to its first stale draft position."
)
DESCRIPTION = {
    "0.5.23": _CORE + " The options are fields of the spec namespace (arg_groups/fields/spec.py).",
    "0.5.17": _CORE,
}
DEFAULT_DESCRIPTION = (
    "Spec v2 (EAGLEWorkerV2, overlap scheduler): per decode step, run a plain one-token target decode "
    "instead of draft/verify/draft-extend while the running batch is large (hysteresis) or drafts are "
    "rarely accepted; next_draft_input (new_seq_lens) is returned on every path."
)
SERVER_ARGS_FILE = "sglang/srt/server_args.py"
# where a release declares its server options: ServerArgs itself, or from 0.5.23 its field namespaces
SERVER_ARGS_FILES = (SERVER_ARGS_FILE, "sglang/srt/arg_groups/fields/spec.py")
SKIP_NAMES = {"__pycache__"}
# manifest keys of a series generated by another series' tool (e.g. draft-steps: applies_over)
EXTRA_MANIFEST: dict = {}


class MakeSeriesError(Exception):
    pass


def src_dir(version: str) -> Path:
    return HERE / "src" / version


# The added modules live below sglang/srt/ in the tree; src/<version>/ holds them without that
# prefix, so that nothing in the repository passes for SGLang's own source.
SRC_PREFIX = "sglang/srt/"


def src_file(version: str, rel: str) -> Path:
    """Where src/ keeps the added file ``rel`` (a path in the tree, ``sglang/srt/...``)."""
    if not rel.startswith(SRC_PREFIX):
        raise MakeSeriesError(f"{rel}: an added file must lie below {SRC_PREFIX}")
    return src_dir(version) / rel[len(SRC_PREFIX):]


def edits_dir(version: str) -> Path:
    return HERE / "edits" / version


def layout(version: str) -> list[tuple[str, list[str]]]:
    if version not in PATCHES:
        raise MakeSeriesError(f"no entry for {version} in PATCHES (make_series.py): which patch adds or edits which file")
    return PATCHES[version]


# ---- derived manifest fields ----------------------------------------------------------------

def environment(patch_texts: list[str]) -> list[str]:
    """The variables the patches read, in order of first appearance (derived, so that a new switch
    cannot be missing from the manifest)."""
    added = (line for text in patch_texts for line in text.splitlines() if line.startswith("+"))
    # raw names before 0.5.17 ("SGLANG_SPEC_DISABLE_X" read with os.environ); from 0.5.17, entries of
    # SGLang's envs registry (`SGLANG_SPEC_DYNAMIC_DISABLE_X = EnvBool(...)` in environ.py)
    pattern = r"[\"'](SGLANG_SPEC_DISABLE_[A-Z_]+)[\"']|^\+\s*(SGLANG_SPEC_DYNAMIC_DISABLE_[A-Z_]+)\s*=\s*Env"
    return list(dict.fromkeys(a or b for line in added for a, b in re.findall(pattern, line)))


def server_args(patch_texts: list[str]) -> list[str]:
    """The options the patches add to server_args.py, in order: the first string of each
    ``parser.add_argument("--...")`` call (which may sit on the next line), or the annotated
    ``ServerArgs`` fields that 0.5.17 turns into options."""
    added = []
    for text in patch_texts:
        current = None
        for line in text.splitlines():
            if line.startswith("+++ "):
                current = line[4:].split("\t", 1)[0].removeprefix("b/")
            elif line.startswith("+") and current in SERVER_ARGS_FILES:
                added.append(line[1:])
    text = "\n".join(added)
    options = re.findall(r"parser\.add_argument\(\s*[\"'](--[A-Za-z0-9-]+)[\"']", text)
    # from 0.5.17 an argument is an annotated field of ServerArgs: `name: A[type, help, ...] = default`
    options += ["--" + name.replace("_", "-") for name in re.findall(r"^\s{4}(\w+): A\[", text, flags=re.M)]
    return list(dict.fromkeys(options))


# ---- diffs ----------------------------------------------------------------------------------

def new_file_diff(rel: str, data: bytes) -> str:
    """What ``diff -u --label /dev/null --label b/REL /dev/null FILE`` prints for a new file."""
    text = data.decode("utf-8")
    lines = split_keepends(text)
    if not lines:
        raise MakeSeriesError(f"src/{rel}: empty file (a patch cannot create it)")
    count = f"1,{len(lines)}" if len(lines) != 1 else "1"
    out = ["--- /dev/null\n", f"+++ b/{rel}\n", f"@@ -0,0 +{count} @@\n"]
    out += ["+" + line for line in lines]
    if not lines[-1].endswith("\n"):
        out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def split_diff(text: str, where: str) -> dict[str, str]:
    """{path: that file's section} of a unified diff of existing files (a/ b/ prefixes); hunk line
    counts decide where a section ends, so a removed line starting with '-- ' cannot split one."""
    sections: dict[str, str] = {}
    lines = split_keepends(text)
    i = 0
    while i < len(lines):
        if not (lines[i].startswith("--- a/") and i + 1 < len(lines) and lines[i + 1].startswith("+++ b/")):
            raise MakeSeriesError(f"{where}: line {i + 1} is not the start of a file diff: {lines[i].rstrip()}")
        rel = lines[i + 1][6:].split("\t", 1)[0].rstrip("\n")
        start = i
        i += 2
        while i < len(lines) and lines[i].startswith("@@"):
            m = HUNK_RE.match(lines[i])
            if not m:
                raise MakeSeriesError(f"{where}: malformed hunk header at line {i + 1}")
            old = 1 if m.group(2) is None else int(m.group(2))
            new = 1 if m.group(4) is None else int(m.group(4))
            i += 1
            while (old > 0 or new > 0) and i < len(lines):
                tag = lines[i][:1]
                if not lines[i].startswith("\\"):
                    old -= tag in " -"
                    new -= tag in " +"
                i += 1
            while i < len(lines) and lines[i].startswith("\\"):
                i += 1
        if rel in sections:
            raise MakeSeriesError(f"{where}: {rel} appears twice")
        sections[rel] = "".join(lines[start:i])
    return sections


def gnu_diff(pristine: Path, edited: Path, rel: str) -> str:
    proc = subprocess.run(
        ["diff", "-u", "--label", f"a/{rel}", "--label", f"b/{rel}", str(pristine / rel), str(edited / rel)],
        capture_output=True, text=True,
    )
    if proc.returncode not in (0, 1):
        raise MakeSeriesError(f"diff failed for {rel}: {proc.stderr.strip()}")
    return proc.stdout


# ---- generation -----------------------------------------------------------------------------

def patch_texts(version: str) -> dict[str, str]:
    """{patch file name: its bytes as text}, built from src/ and edits/ only."""
    src, edits = src_dir(version), edits_dir(version)
    out = {}
    for stem, files in layout(version):
        header_path = edits / f"{stem}.header"
        if not header_path.is_file():
            raise MakeSeriesError(f"{header_path} is missing (the patch's Description, contracts, Last-Update)")
        header = header_path.read_text()
        if not header.endswith("---\n"):
            raise MakeSeriesError(f"{header_path}: must end with a '---' line")
        diff_path = edits / f"{stem}.diff"
        sections = split_diff(diff_path.read_text(), str(diff_path)) if diff_path.is_file() else {}
        body = []
        for rel in files:
            if rel.startswith(SRC_PREFIX) and src_file(version, rel).is_file():
                if rel in sections:
                    raise MakeSeriesError(f"{rel}: both new (src/{version}) and edited ({diff_path.name})")
                body.append(new_file_diff(rel, src_file(version, rel).read_bytes()))
            elif rel in sections:
                body.append(sections.pop(rel))
            else:
                raise MakeSeriesError(f"{rel} ({stem}): neither in src/{version}/ nor in {diff_path.name}")
        if sections:
            raise MakeSeriesError(f"{diff_path}: edits {', '.join(sections)}, which PATCHES does not give to {stem}")
        out[f"{stem}.patch"] = header + "".join(body)
    stray = sorted(SRC_PREFIX + p.relative_to(src).as_posix() for p in src.rglob("*")
                   if p.is_file() and not SKIP_NAMES & set(p.parts) and p.suffix == ".py") if src.is_dir() else []
    listed = {rel for _, files in layout(version) for rel in files}
    if set(stray) - listed:
        raise MakeSeriesError(f"src/{version}/ holds files no patch adds: {', '.join(sorted(set(stray) - listed))}")
    return out


def default_pristine(version: str) -> Path | None:
    """spectrace's cached copy of the release (never downloads here)."""
    try:
        from spectrace.source import fetch_version

        return fetch_version(version, offline=True).root
    except Exception:  # not cached, or no spectrace install: hashes come from the manifest
        return None


def carried_hashes(version: str) -> dict[str, str]:
    manifest = HERE / version / "manifest.toml"
    if not manifest.is_file():
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return {f["path"]: f["original_sha256"] for f in tomllib.loads(manifest.read_text()).get("files", [])}


def generate(version: str, out: Path, pristine: Path | None = None) -> list[str]:
    """Write VERSION's patches, series and manifest.toml into ``out``; return the patch names."""
    texts = patch_texts(version)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (out / name).write_bytes(text.encode("utf-8"))
    names = list(texts)
    (out / "series").write_text(
        f"# {SERIES} for SGLang {version}: apply in this order (patch -p1 from the dir holding sglang/)\n"
        + "".join(n + "\n" for n in names)
    )
    src = src_dir(version)
    touched = [rel for _, files in layout(version) for rel in files]
    info = {
        "description": DESCRIPTION.get(version, DEFAULT_DESCRIPTION),
        "verified_modes": VERIFIED.get(version, []),
        "server_args": server_args(list(texts.values())),
        "environment": environment(list(texts.values())),
        "adds_files": [rel for rel in touched if rel.startswith(SRC_PREFIX) and src_file(version, rel).is_file()],
        **EXTRA_MANIFEST,
    }
    series = Series(name=SERIES, version=version, directory=out,
                    patches=[load_patch(out / n) for n in names], manifest=info)
    if pristine is not None:
        manifest = render_manifest(series, pristine)
    else:
        hashes = carried_hashes(version)
        missing = [rel for rel in touched if rel not in hashes
                   and not (rel.startswith(SRC_PREFIX) and src_file(version, rel).is_file())]
        if missing:
            raise MakeSeriesError(f"no pristine {version} tree (--pristine) and no hash in the manifest "
                                  f"for: {', '.join(missing)}")
        manifest = render_manifest(series, None, original_sha=hashes)
    (out / "manifest.toml").write_text(manifest)
    return names


def trial_apply(version: str, directory: Path, pristine: Path, expected: Path | None = None) -> None:
    """Apply the series with ``patch -p1`` to a copy of the pristine files it touches; the result must
    equal ``expected`` (an edited tree) or, for added files, src/."""
    touched = [rel for _, files in layout(version) for rel in files]
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        for rel in touched:
            if (pristine / rel).is_file():
                (fresh / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(pristine / rel, fresh / rel)
        for name in (directory / "series").read_text().split():
            if name.startswith("#") or not name.endswith(".patch"):
                continue
            proc = subprocess.run(["patch", "-p1", "--forward", "--batch", "-s", "-d", str(fresh), "-i", str(directory / name)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise MakeSeriesError(f"{name} does not apply to the pristine {version}:\n{proc.stdout}{proc.stderr}")
        for rel in touched:
            want = expected / rel if expected is not None else (
                src_file(version, rel) if rel.startswith(SRC_PREFIX) else fresh / rel)
            if want.is_file() and (fresh / rel).read_bytes() != want.read_bytes():
                raise MakeSeriesError(f"{rel}: the patched file differs from {want}")


def _files(root: Path) -> set[str]:
    base = root / "sglang"
    return {str(p.relative_to(root)) for p in base.rglob("*")
            if p.is_file() and not SKIP_NAMES & set(p.parts) and p.suffix != ".pyc"}


def import_tree(version: str, pristine: Path, edited: Path) -> None:
    """Take EDITED's changes against PRISTINE into src/<version>/ and edits/<version>/."""
    if not (edited / "sglang").is_dir():
        raise MakeSeriesError(f"{edited}: holds no sglang/")
    old_files, new_files = _files(pristine), _files(edited)
    deleted = sorted(old_files - new_files)
    if deleted:
        raise MakeSeriesError(f"{edited}: deletes {', '.join(deleted[:5])} (the series only adds and edits files)")
    added = sorted(new_files - old_files)
    changed = sorted(rel for rel in old_files & new_files
                     if not filecmp.cmp(pristine / rel, edited / rel, shallow=False))
    if version not in PATCHES:
        guess = "".join(f"        (\"000?-...\", [\"{rel}\"]),\n" for rel in added + changed)
        raise MakeSeriesError(f"add {version} to PATCHES in make_series.py, e.g.\n    \"{version}\": [\n{guess}    ],")
    assigned = {rel: stem for stem, files in PATCHES[version] for rel in files}
    unassigned = [rel for rel in added + changed if rel not in assigned]
    unchanged = [rel for rel in assigned if rel not in added and rel not in changed]
    if unassigned or unchanged:
        raise MakeSeriesError("PATCHES[%r] does not match the edited tree: %s" % (version, "; ".join(
            filter(None, [unassigned and "changed but in no patch: " + ", ".join(unassigned),
                          unchanged and "in a patch but unchanged: " + ", ".join(unchanged)]))))

    before = _stem_bodies(version)
    src, edits = src_dir(version), edits_dir(version)
    if src.exists():
        shutil.rmtree(src)
    for rel in added:
        src_file(version, rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(edited / rel, src_file(version, rel))
    edits.mkdir(parents=True, exist_ok=True)
    today = datetime.date.today().isoformat()
    for stem, files in PATCHES[version]:
        diff = "".join(gnu_diff(pristine, edited, rel) for rel in files if rel in changed)
        diff_path = edits / f"{stem}.diff"
        if diff:
            diff_path.write_text(diff)
        elif diff_path.exists():
            diff_path.unlink()
        header_path = edits / f"{stem}.header"
        if not header_path.exists():
            header_path.write_text(stub_header(stem, today))
    for path in edits.iterdir():  # stems PATCHES no longer has
        if path.suffix in (".header", ".diff") and path.stem not in {s for s, _ in PATCHES[version]}:
            path.unlink()
    after = _stem_bodies(version)
    for stem, _ in PATCHES[version]:
        if before.get(stem) != after.get(stem):  # the patch's content changed: it is updated today
            header_path = edits / f"{stem}.header"
            header_path.write_text(re.sub(r"(?m)^Last-Update: .*$", f"Last-Update: {today}", header_path.read_text()))


def _stem_bodies(version: str) -> dict[str, str]:
    """{stem: its diffs without the header}, to tell which patches an import changed."""
    try:
        texts = patch_texts(version)
    except MakeSeriesError:
        return {}
    bodies = {}
    for name, text in texts.items():
        header = (edits_dir(version) / name.replace(".patch", ".header")).read_text()
        bodies[name.removesuffix(".patch")] = text[len(header):]
    return bodies


def stub_header(stem: str, today: str) -> str:
    return (f"Description: {stem.split('-', 1)[-1].replace('-', ' ')}\n"
            " TODO: what the patch changes and why (continuation lines start with a space).\n"
            "Author: spectrace\nRequires-Contracts: \nAdds-Contracts: \nForwarded: no\n"
            f"Last-Update: {today}\n---\n")


def stale_files(version: str, pristine: Path | None) -> list[str]:
    """The files of VERSION/ that differ from a fresh generation (missing or extra ones too)."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        generate(version, fresh, pristine)
        shipped = HERE / version
        names = {p.name for p in fresh.iterdir()} | ({p.name for p in shipped.iterdir()} if shipped.is_dir() else set())
        return sorted(n for n in names if not (shipped / n).is_file() or not (fresh / n).is_file()
                      or (shipped / n).read_bytes() != (fresh / n).read_bytes())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version")
    parser.add_argument("--pristine", type=Path, help="directory holding the release's sglang/ (default: spectrace's cache)")
    parser.add_argument("--from-tree", type=Path, metavar="EDITED_DIR", help="import an edited copy of the release first")
    parser.add_argument("--out", type=Path, help="write here instead of patches/dynamic-disable/VERSION")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when VERSION/ is not what the sources give")
    args = parser.parse_args(argv)
    version = args.version
    pristine = args.pristine.resolve() if args.pristine else default_pristine(version)
    if pristine is not None and not (pristine / "sglang").is_dir():
        raise MakeSeriesError(f"{pristine}: holds no sglang/")
    if args.check:
        stale = stale_files(version, pristine)
        if stale:
            print(f"{SERIES}/{version} is out of date with src/ and edits/: {', '.join(stale)}; "
                  f"run: python {os.path.relpath(__file__)} {version}")
            return 1
        print(f"{SERIES}/{version}: up to date")
        return 0
    if args.from_tree:
        if pristine is None:
            raise MakeSeriesError(f"--from-tree needs the pristine {version} tree (--pristine DIR)")
        import_tree(version, pristine, args.from_tree.resolve())
    out = args.out.resolve() if args.out else HERE / version
    names = generate(version, out, pristine)
    if pristine is not None:
        trial_apply(version, out, pristine, args.from_tree.resolve() if args.from_tree else None)
        print(f"{out}: {len(names)} patches; they apply to {pristine} and give "
              + ("the edited tree" if args.from_tree else "src/ for the added files"))
    else:
        print(f"{out}: {len(names)} patches (no pristine tree: not trial-applied; hashes from the manifest)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except MakeSeriesError as exc:
        sys.exit(f"make_series: {exc}")
