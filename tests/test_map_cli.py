"""``spectrace map`` end to end on real SGLang 0.5.9: every format parsed back, and the errors."""

from __future__ import annotations

import json
import shutil
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import networkx as nx
import pytest
from click.testing import CliRunner

from spectrace.cli import main

from conftest import OLD

RUN_BATCH = "sglang.srt.managers.scheduler.Scheduler.run_batch"
V2_FBG = "sglang.srt.speculative.eagle_worker_v2.EAGLEWorkerV2.forward_batch_generation"


@pytest.fixture(scope="module")
def old_root(sglang_source):
    return str(sglang_source(OLD).root)


def run(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


def test_json_is_node_link_with_sites(old_root, tmp_path):
    out = tmp_path / "g.json"
    r = run("map", "--sglang", old_root, "Scheduler.run_batch", "--depth", "1", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "using SGLang 0.5.9" in r.output
    data = json.loads(out.read_text())
    g = nx.node_link_graph(data, edges="edges")
    node = g.nodes[RUN_BATCH]
    assert node["file"] == "sglang/srt/managers/scheduler.py" and node["line"] > 2000
    edge = g.edges[RUN_BATCH, V2_FBG]
    assert edge["polymorphic"] is True and edge["resolution"] == "polymorphic"
    assert edge["file"] == "sglang/srt/managers/scheduler.py" and edge["line"] == 2328
    assert data["graph"]["unresolved"] == sum(1 for n in g if g.nodes[n]["kind"] == "unresolved")


def test_text_tree_marks_polymorphic_and_unresolved(old_root):
    r = run("map", "--sglang", old_root, "Scheduler.run_batch", "--depth", "1", "--format", "text")
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert any("EAGLEWorkerV2.forward_batch_generation" in ln and "polymorphic" in ln for ln in lines)
    r = run("map", "--sglang", old_root, "GenerationBatchResult.copy_to_cpu", "--depth", "1", "--format", "text")
    assert any("self.copy_done.record()" in ln and "unresolved" in ln for ln in r.output.splitlines())


def test_dot_and_mermaid(old_root):
    dot = run("map", "--sglang", old_root, "Scheduler.run_batch", "--depth", "1", "--format", "dot").output
    assert "digraph" in dot and "cluster" in dot and "forward_batch_generation" in dot
    mer = run("map", "--sglang", old_root, "Scheduler.run_batch", "--depth", "1", "--format", "mermaid").output
    body = mer[mer.index("flowchart"):]
    assert body.startswith("flowchart") and "subgraph" in body and "forward_batch_generation" in body


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not installed")
def test_svg_and_png(old_root, tmp_path):
    svg = tmp_path / "g.svg"
    assert run("map", "--sglang", old_root, "Scheduler.run_batch", "--depth", "1", "-o", str(svg)).exit_code == 0
    root = ET.parse(svg).getroot()
    titles = {t.text for t in root.iter("{http://www.w3.org/2000/svg}title")}
    assert any(t and "run_batch" in t for t in titles)
    assert any(t and "forward_batch_generation" in t for t in titles)
    png = tmp_path / "g.png"
    assert run("map", "--sglang", old_root, "Scheduler.run_batch", "--depth", "1", "-o", str(png)).exit_code == 0
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    assert width > 200 and height > 200


def test_field_map_of_next_draft_input(old_root, tmp_path):
    out = tmp_path / "ndi.json"
    r = run("map", "--sglang", old_root, "--field", "next_draft_input", "-o", str(out))
    assert r.exit_code == 0, r.output
    g = nx.node_link_graph(json.loads(out.read_text()), edges="edges")
    field = "field:next_draft_input"
    producers = set(g.predecessors(field))
    consumers = set(g.successors(field))
    assert V2_FBG in producers  # batch_output.next_draft_input = ... (prefill path)
    assert "sglang.srt.speculative.eagle_worker_v2.EAGLEWorkerV2.verify" in producers  # constructor kwarg
    assert RUN_BATCH in consumers
    assert "sglang.srt.managers.overlap_utils.FutureMap.store_to_map" in consumers
    assert g.edges[field, RUN_BATCH]["sites"] == [2347, 2357]


MAP_SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "docs" / "schemas" / "map.schema.json").read_text())


@pytest.mark.parametrize("args", [["Scheduler.run_batch", "--depth", "2", "--external"],
                                  ["--field", "new_seq_lens", "--owner", "EagleDraftInput"]], ids=["calls", "field"])
def test_json_follows_its_schema_and_names_no_path_of_this_machine(old_root, args):
    r = run("-q", "map", "--sglang", old_root, *args, "--format", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    jsonschema.validate(data, MAP_SCHEMA)
    assert data["graph"]["source"] == {"package": "sglang", "version": "0.5.9", "origin": "path"}
    assert old_root not in r.stdout and str(Path(old_root).parent) not in r.stdout
    by_version = run("-q", "map", "--sglang", OLD, *args, "--format", "json").stdout
    assert by_version.replace('"origin": "cache"', '"origin": "path"') == r.stdout  # wherever the cache lies


def test_unknown_root_lists_close_matches(old_root):
    r = run("map", "--sglang", old_root, "Scheduler.run_bach")
    assert r.exit_code == 2
    assert "unknown root 'Scheduler.run_bach'" in r.output and "run_batch" in r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize("args, message, hint", [
    (["--field", "new_seq_len"], "no reads or writes of a field named 'new_seq_len' in SGLang 0.5.9 ",
     "; did you mean new_seq_lens,"),
    (["--field", "new_seq_lens", "--owner", "EagleDraftInptu"], "no class named 'EagleDraftInptu' in SGLang 0.5.9 ",
     "; did you mean EagleDraftInput?"),
    (["--field", "new_seq_lens", "--owner", "Scheduler"], "class 'Scheduler' declares no field 'new_seq_lens' ",
     "; classes that do: EagleDraftInput"),
    (["Scheduler.run_batch", "--owner", "EagleDraftInput"], "--owner goes with --field", ""),
], ids=["field", "owner typo", "owner without the field", "owner without --field"])
def test_mistyped_field_or_owner_is_refused_with_close_names(old_root, tmp_path, args, message, hint):
    out = tmp_path / "map.json"
    r = run("map", "--sglang", old_root, *args, "-o", str(out))
    assert r.exit_code == 2, r.output
    last = r.stderr.strip().splitlines()[-1]
    assert message in last and hint in last, last
    assert "Traceback" not in r.output and not out.exists()


def test_ambiguous_root_names_the_candidates(old_root):
    r = run("map", "--sglang", old_root, "LlamaMLP.forward")
    assert r.exit_code == 2
    assert "ambiguous root" in r.output
    assert "sglang.srt.models.llama.LlamaMLP.forward" in r.output
    assert "sglang.srt.models.torch_native_llama.LlamaMLP.forward" in r.output


def test_directory_without_sglang(tmp_path):
    r = run("map", "--sglang", str(tmp_path), "Scheduler.run_batch")
    assert r.exit_code == 2 and "no sglang package in" in r.output


def test_no_network_and_no_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens there
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    r = run("map", "--sglang", "0.5.8", "Scheduler.run_batch")
    assert r.exit_code == 2
    assert "no package index answered" in r.output and "not in the cache" in r.output


def test_unknown_version_is_refused_by_pip(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "empty"))
    r = run("map", "--sglang", "0.0.999", "Scheduler.run_batch")
    assert r.exit_code == 2
    assert "no such SGLang version on PyPI: 0.0.999" in r.output or "no package index answered" in r.output


def test_processes_that_fetch_a_release_together_download_it_once(tmp_path, monkeypatch):
    """Two fetches of one version at once (two pytest workers starting): one download; the other
    waits for it and reads the unpacked release. Threads stand for the processes here: the lock is
    flock, which two opens of the folder contend for even within one process."""
    import threading
    import time
    import zipfile

    from spectrace import source

    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    downloads = []

    def fake_download(version, dest):
        downloads.append(version)
        time.sleep(0.3)  # long enough for the other fetch to arrive while this one runs
        wheel = dest / f"sglang-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr("sglang/__init__.py", "")
            zf.writestr("sglang/version.py", f'__version__ = "{version}"\n')
        return wheel

    monkeypatch.setattr(source, "_pip_download", fake_download)
    got = []
    threads = [threading.Thread(target=lambda: got.append(source.fetch_version("9.9.9"))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert downloads == ["9.9.9"]
    assert sorted(s.origin for s in got) == ["cache", "pypi"] and {s.root for s in got} == {tmp_path / "cache/sglang/9.9.9"}
    assert [p.name for p in (tmp_path / "cache/sglang").iterdir()] == ["9.9.9"]  # no lock file, no leftover


def test_default_source_is_the_newest_cached_version(tmp_path, monkeypatch, sglang_source):
    cache = tmp_path / "c"
    (cache / "sglang").mkdir(parents=True)
    (cache / "sglang" / OLD).symlink_to(sglang_source(OLD).root, target_is_directory=True)
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(cache))
    from spectrace.source import installed

    if installed() is not None:
        pytest.skip("an installed sglang takes precedence")
    r = run("map", "Scheduler.run_batch", "--depth", "0", "--format", "text")
    assert r.exit_code == 0 and "using SGLang 0.5.9 (cache:" in r.output
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "nothing"))
    r = run("map", "Scheduler.run_batch")
    assert r.exit_code == 2 and "pass --sglang VERSION" in r.output


def test_installed_sglang_is_found_without_importing_it(sglang_source, monkeypatch):
    import sys

    from spectrace.source import resolve_source

    root = sglang_source(OLD).root
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, "sglang", raising=False)
    src = resolve_source("installed")
    assert src.origin == "installed" and src.version == OLD and src.root == root
    assert "sglang" not in sys.modules  # found through the import system, never imported
    r = run("map", "--sglang", "installed", "Scheduler.run_batch", "--depth", "0", "--format", "text")
    assert r.exit_code == 0 and "using SGLang 0.5.9 (installed:" in r.output


def test_collapse_and_node_budget_shape_drawings_and_text_not_json(tmp_path):
    from pathlib import Path

    program = str(Path(__file__).parent / "programs" / "decorators.py")
    base = ("map", "--source", program, "decorators.main", "--depth", "2")
    run(*base, "--max-nodes", "2", "--collapse", "class", "-o", str(tmp_path / "g.json"))
    whole = json.loads((tmp_path / "g.json").read_text())
    assert len(whole["nodes"]) == 9 and not any(n["kind"] in ("more", "group") for n in whole["nodes"])
    text = run(*base, "--format", "text", "--max-nodes", "3").output
    assert "+2 more" in text and "retry.decorator.again" not in text
    dot = run(*base, "--format", "dot", "--collapse", "module").output
    assert "decorators  (" in dot and "×" not in dot  # one module: every call is inside it
    r = run(*base, "--format", "dot", "--collapse", "file")
    assert r.exit_code != 0 and "'file' is not one of" in r.output
