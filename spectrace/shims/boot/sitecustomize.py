# spectrace runtime shims: start-up hook for every Python process that has this folder on
# PYTHONPATH (`spectrace run` and `runtime.install()` put it there). SGLang starts its scheduler
# with multiprocessing "spawn", a fresh interpreter that inherits the environment, so the hook
# reaches it; coverage.py measures subprocesses the same way.
#
# Nothing happens unless SPECTRACE_SHIMS (warn|raise|record) or SPECTRACE_POOL_STATS=1 is set.
# Whatever sitecustomize this file shadows (the next one on sys.path) still runs afterwards.
import os
import sys


def _spectrace_boot():
    if os.environ.get("SPECTRACE_SHIMS", "").strip().lower() in ("", "0", "off", "false", "no") \
            and os.environ.get("SPECTRACE_POOL_STATS", "").strip().lower() in ("", "0", "off", "false", "no"):
        return
    try:
        from spectrace.shims import runtime
    except ImportError:
        # spectrace is not importable in this interpreter (another venv): the runtime module
        # needs only the standard library, so load it from beside this folder.
        import importlib.util

        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runtime.py")
        spec = importlib.util.spec_from_file_location("spectrace_runtime_shims", path)
        runtime = importlib.util.module_from_spec(spec)
        sys.modules["spectrace_runtime_shims"] = runtime
        spec.loader.exec_module(runtime)
    runtime.install_from_environment()


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
    try:
        _spectrace_boot()
    except Exception as _exc:  # never break interpreter start-up
        print(f"[spectrace] runtime shims not installed: {_exc!r}", file=sys.stderr)
    _chain_shadowed_sitecustomize()
