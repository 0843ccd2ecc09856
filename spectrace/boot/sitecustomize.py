# spectrace's start-up hook for every Python process that has this folder on PYTHONPATH
# (`spectrace run`, `runtime.install()` and `spectrace bench` put it there). SGLang starts its
# scheduler with multiprocessing "spawn", a fresh interpreter that inherits the environment, so
# the hook reaches it; coverage.py measures subprocesses the same way.
#
# Nothing happens unless SPECTRACE_SHIMS (warn|raise|record) or SPECTRACE_POOL_STATS=1 is set (the
# runtime shims), or SPECTRACE_BENCH_DRAFTS is accepted or half (the bench's draft regimes).
# Whatever sitecustomize this file shadows (the next one on sys.path) still runs afterwards.
import os
import sys

_OFF = ("", "0", "off", "false", "no")


def _spectrace_package_beside():
    """The `spectrace` package this folder belongs to (spectrace/boot), imported by its path
    alone: the interpreter may be another environment's (SGLang's) that does not have spectrace
    installed. Only that package becomes importable, none of the packages around it; the shims
    need nothing else but the standard library."""
    import importlib.util

    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for name in [n for n in sys.modules if n == "spectrace" or n.startswith("spectrace.")]:
        del sys.modules[name]  # another spectrace, without the shims, imported just now by us
    spec = importlib.util.spec_from_file_location(
        "spectrace", os.path.join(package_dir, "__init__.py"), submodule_search_locations=[package_dir])
    package = importlib.util.module_from_spec(spec)
    sys.modules["spectrace"] = package
    spec.loader.exec_module(package)


def _import(module: str, name: str):
    try:
        return getattr(__import__(module, fromlist=[name]), name)
    except ImportError as exc:
        if (exc.name or "spectrace").split(".")[0] != "spectrace":
            raise  # spectrace is there but a module it needs is not (tomli on Python 3.10)
        _spectrace_package_beside()
        return getattr(__import__(module, fromlist=[name]), name)


def _spectrace_boot():
    shims = any(os.environ.get(v, "").strip().lower() not in _OFF for v in ("SPECTRACE_SHIMS", "SPECTRACE_POOL_STATS"))
    drafts = os.environ.get("SPECTRACE_BENCH_DRAFTS", "").strip().lower() not in ("", "dummy")
    if shims:
        try:
            _import("spectrace.shims", "runtime").install_from_environment()
        except Exception as exc:  # never break interpreter start-up
            print(f"[spectrace] runtime shims not installed: {exc!r}", file=sys.stderr)
    if drafts:
        try:
            _import("spectrace.bench", "drafts").install_from_environment()
        except Exception as exc:  # the bench refuses to time a regime it could not set up
            print(f"[spectrace bench] drafts regime not installed: {exc!r}", file=sys.stderr)


def _chain_shadowed_sitecustomize():
    # only entries after this folder: the shadowed file is the next one on the path, and one
    # before it would chain back here
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
            print(f"[spectrace] chained sitecustomize in {entry} failed: {exc!r}", file=sys.stderr)
            return


# Once per interpreter: another hook that chains every sitecustomize it finds on the path
# (not only the ones after it) would otherwise run this file again, and each would chain the
# other until the recursion limit.
if not getattr(sys, "_spectrace_boot_ran", False):
    sys._spectrace_boot_ran = True
    _spectrace_boot()
    _chain_shadowed_sitecustomize()
