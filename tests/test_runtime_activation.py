"""Activation: the shims reach a child started with multiprocessing "spawn" (as SGLang starts its
scheduler) through the environment, and nothing is installed when the variable is unset."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap

import pytest

from spectrace.shims import runtime

CATALOG = textwrap.dedent("""
    family = "activation"
    [[contract]]
    id = "T-NDI"
    field = "next_draft_input"
    owner = "GenerationBatchResult"
    consumer = "Scheduler.run_batch"
    shape = "batch.spec_info = batch_result.next_draft_input"
    attribute_path = ["next_draft_input"]
    kind = "unconditional-read"
    path_condition = "self.enable_overlap and batch.is_spec_v2"
    [contract.runtime]
    check = "not-none"
    at = "producer-return"
    producer = "forward_batch_generation"
""")


def _child_state(module_dir: str, queue) -> None:
    """Runs in the spawned child: what did start-up install?"""
    from spectrace.shims import runtime as rt

    shims = rt.active_shims()
    seen = []
    if shims is not None:
        # the same post-import machinery that wraps SGLang's scheduler, on a module of our own
        rt.when_imported("activation_probe_module", lambda m: seen.append(m.__name__))
        sys.path.insert(0, module_dir)
        import activation_probe_module  # noqa: F401
    queue.put({
        "installed": shims is not None,
        "mode": getattr(shims, "mode", None),
        "report": getattr(getattr(shims, "report", None), "path", None),
        "plans": [p.id for p in getattr(shims, "plans", [])],
        "finder_first": type(sys.meta_path[0]).__name__,
        "hooked": seen,
        "chained": os.environ.get("CHAINED_SITECUSTOMIZE_RAN"),
        "chained_count": os.environ.get("CHAINED_SITECUSTOMIZE_COUNT"),
    })


def _spawn(tmp_path, env_updates: dict, monkeypatch):
    for key in (runtime.ENV_MODE, runtime.ENV_REPORT, runtime.ENV_CATALOG, runtime.ENV_POOL):
        monkeypatch.delenv(key, raising=False)
    for key, value in env_updates.items():
        monkeypatch.setenv(key, value)
    (tmp_path / "mods").mkdir(exist_ok=True)
    (tmp_path / "mods" / "activation_probe_module.py").write_text("VALUE = 1\n")
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child_state, args=(str(tmp_path / "mods"), queue))
    proc.start()
    state = queue.get(timeout=120)
    proc.join(60)
    assert proc.exitcode == 0
    return state


@pytest.fixture
def catalog(tmp_path):
    path = tmp_path / "catalog.toml"
    path.write_text(CATALOG)
    return path


def test_spawned_child_installs_the_shims_from_the_environment(tmp_path, catalog, monkeypatch):
    report = tmp_path / "shims.jsonl"
    env = runtime.child_environment("raise", str(report), str(catalog), env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    state = _spawn(tmp_path, {k: env[k] for k in (runtime.ENV_MODE, runtime.ENV_REPORT, runtime.ENV_CATALOG, "PYTHONPATH")},
                   monkeypatch)
    assert state["installed"] and state["mode"] == "raise"
    assert state["report"] == str(report)
    assert state["plans"] == ["T-NDI"]
    assert state["finder_first"] == "_PostImportFinder"
    assert state["hooked"] == ["activation_probe_module"]


def test_nothing_is_installed_without_the_variable(tmp_path, monkeypatch):
    env = runtime.child_environment(None, env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    state = _spawn(tmp_path, {"PYTHONPATH": env["PYTHONPATH"]}, monkeypatch)
    assert not state["installed"]
    assert state["finder_first"] != "_PostImportFinder"


def test_a_shadowed_sitecustomize_still_runs(tmp_path, catalog, monkeypatch):
    other = tmp_path / "other-site"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import os\nos.environ['CHAINED_SITECUSTOMIZE_RAN'] = 'yes'\n")
    env = runtime.child_environment("warn", str(tmp_path / "r.jsonl"), str(catalog),
                                    env={"PYTHONPATH": str(other)})
    state = _spawn(tmp_path, {k: env[k] for k in (runtime.ENV_MODE, runtime.ENV_REPORT, runtime.ENV_CATALOG, "PYTHONPATH")},
                   monkeypatch)
    assert state["installed"] and state["chained"] == "yes"


# A naive hook: it chains the first other sitecustomize on the whole path, so it chains the shims'
# boot file, which comes before it, back.
NAIVE_CHAINING_SITECUSTOMIZE = textwrap.dedent("""
    import os, sys
    os.environ["CHAINED_SITECUSTOMIZE_COUNT"] = str(int(os.environ.get("CHAINED_SITECUSTOMIZE_COUNT", "0")) + 1)
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if entry and os.path.abspath(entry) != here and os.path.isfile(os.path.join(entry, "sitecustomize.py")):
            path = os.path.join(entry, "sitecustomize.py")
            exec(compile(open(path).read(), path, "exec"), {"__name__": "sitecustomize", "__file__": path})
            break
""")


def test_a_sitecustomize_that_chains_back_runs_once(tmp_path, catalog, monkeypatch):
    """The boot file and such a hook must not chain each other until RecursionError."""
    other = tmp_path / "other-site"
    other.mkdir()
    (other / "sitecustomize.py").write_text(NAIVE_CHAINING_SITECUSTOMIZE)
    monkeypatch.delenv("CHAINED_SITECUSTOMIZE_COUNT", raising=False)
    env = runtime.child_environment("warn", str(tmp_path / "r.jsonl"), str(catalog),
                                    env={"PYTHONPATH": str(other)})
    state = _spawn(tmp_path, {k: env[k] for k in (runtime.ENV_MODE, runtime.ENV_REPORT, runtime.ENV_CATALOG, "PYTHONPATH")},
                   monkeypatch)
    assert state["installed"] and state["plans"] == ["T-NDI"]
    assert state["chained_count"] == "1"


def test_spectrace_run_reaches_a_spawned_grandchild(tmp_path, catalog):
    """``spectrace run -- python prog.py`` where prog.py spawns a child, like sglang.launch_server."""
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import json, multiprocessing, os, sys

        def child(q):
            from spectrace.shims import runtime
            s = runtime.active_shims()
            q.put({"installed": s is not None, "mode": getattr(s, "mode", None)})

        if __name__ == "__main__":
            ctx = multiprocessing.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            print(json.dumps(q.get(timeout=120)))
            p.join()
    """))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECTRACE_SHIMS")}
    out = subprocess.run([sys.executable, "-m", "spectrace", "run", "--mode", "record", "--catalog", str(catalog),
                          "--report", str(tmp_path / "r.jsonl"), "--", sys.executable, str(prog)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"installed": True, "mode": "record"}


def test_spectrace_run_passes_the_exit_code_and_rejects_a_missing_command(tmp_path, catalog):
    out = subprocess.run([sys.executable, "-m", "spectrace", "run", "--catalog", str(catalog), "--report",
                          str(tmp_path / "r.jsonl"), "--", sys.executable, "-c", "raise SystemExit(3)"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 3
    out = subprocess.run([sys.executable, "-m", "spectrace", "run", "--catalog", str(catalog), "--",
                          "no-such-program-xyz"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.startswith("spectrace: command not found")


def test_install_in_a_program_reaches_its_spawned_children(tmp_path, catalog):
    """``runtime.install()`` before ``sglang.Engine(...)``: the engine's spawned scheduler gets it."""
    prog = tmp_path / "embed.py"
    prog.write_text(textwrap.dedent(f"""
        import json, multiprocessing

        def child(q):
            from spectrace.shims import runtime
            s = runtime.active_shims()
            q.put({{"installed": s is not None, "mode": getattr(s, "mode", None),
                    "report": getattr(getattr(s, "report", None), "path", None)}})

        if __name__ == "__main__":
            from spectrace.shims import runtime
            parent = runtime.install(mode="raise", report={str(tmp_path / 'r.jsonl')!r}, catalog={str(catalog)!r})
            ctx = multiprocessing.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            state = q.get(timeout=120)
            p.join()
            state["parent_mode"] = parent.mode
            print(json.dumps(state))
    """))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECTRACE_SHIMS")}
    out = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout.strip().splitlines()[-1])
    assert state == {"installed": True, "mode": "raise", "report": str(tmp_path / "r.jsonl"), "parent_mode": "raise"}


def test_run_refuses_a_report_it_could_not_write_before_the_command_starts(tmp_path, catalog):
    marker = tmp_path / "ran"
    for report in (tmp_path / "missing" / "r.jsonl", tmp_path / "missing" / "r-{pid}.jsonl"):
        out = subprocess.run([sys.executable, "-m", "spectrace", "run", "--catalog", str(catalog), "--report",
                              str(report), "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith(f"spectrace: cannot write {report.parent}/r") and len(out.stderr.splitlines()) == 1
        assert not marker.exists() and not (tmp_path / "missing").exists()
