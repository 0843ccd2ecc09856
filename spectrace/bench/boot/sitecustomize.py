# spectrace bench: start-up hook for the engine's processes (`spectrace bench --drafts accepted|half`
# puts this folder on PYTHONPATH, after the shims' boot folder). SGLang spawns its scheduler, a
# fresh interpreter that inherits the environment, so the hook reaches the process that loads the
# weights. Nothing happens unless SPECTRACE_BENCH_DRAFTS is accepted or half (spectrace/bench/drafts.py).
# Whatever sitecustomize this file shadows (the next one on sys.path) still runs afterwards.
import os
import sys


def _spectrace_package_beside():
    """The `spectrace` package this folder belongs to (spectrace/bench/boot), by its path: the
    engine's interpreter may not have spectrace installed."""
    import importlib.util

    package_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for name in [n for n in sys.modules if n == "spectrace" or n.startswith("spectrace.")]:
        del sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        "spectrace", os.path.join(package_dir, "__init__.py"), submodule_search_locations=[package_dir])
    package = importlib.util.module_from_spec(spec)
    sys.modules["spectrace"] = package
    spec.loader.exec_module(package)


def _spectrace_bench_boot():
    if os.environ.get("SPECTRACE_BENCH_DRAFTS", "").strip().lower() in ("", "dummy"):
        return
    try:
        from spectrace.bench import drafts
    except ImportError as exc:
        if (exc.name or "spectrace").split(".")[0] != "spectrace":
            raise
        _spectrace_package_beside()
        from spectrace.bench import drafts
    drafts.install_from_environment()


def _chain_shadowed_sitecustomize():
    # only entries after this folder: one before it (the shims' boot folder) chained here
    here = os.path.dirname(os.path.abspath(__file__))
    entries = [os.path.abspath(e) if e else "" for e in sys.path]
    after = entries.index(here) + 1 if here in entries else 0
    for entry in sys.path[after:]:
        try:
            if not entry or os.path.abspath(entry) == here:
                continue
            candidate = os.path.join(entry, "sitecustomize.py")
            if os.path.isfile(candidate):
                namespace = {"__name__": "sitecustomize", "__file__": candidate}
                with open(candidate, encoding="utf-8") as fh:
                    exec(compile(fh.read(), candidate, "exec"), namespace)
                return
        except Exception as exc:  # never break interpreter start-up
            print(f"[spectrace bench] chained sitecustomize in {entry} failed: {exc!r}", file=sys.stderr)
            return


# once per interpreter: a hook that chains every sitecustomize on the path would run this again
if not getattr(sys, "_spectrace_bench_boot_ran", False):
    sys._spectrace_bench_boot_ran = True
    try:
        _spectrace_bench_boot()
    except Exception as _exc:  # never break interpreter start-up
        print(f"[spectrace bench] drafts regime not installed: {_exc!r}", file=sys.stderr)
    _chain_shadowed_sitecustomize()
