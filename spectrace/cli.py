"""The ``spectrace`` command: a click group whose subcommands load on first use.

Subcommands live next to the code they drive (tracer/cli.py, contracts/cli.py, ...);
the group imports a module only when its command runs, so ``spectrace map`` does not
pay for the runtime shims or the patch engine at start-up (click's documented LazyGroup).
"""

from __future__ import annotations

import atexit
import difflib
import gc
import importlib
import inspect
import os
import sys

import click

from spectrace import interrupts, ui
from spectrace.errors import SpectraceError, describe, one_line
from spectrace.output import guard_stdout

LAZY_COMMANDS = {
    "map": "spectrace.tracer.cli:map_command",
    "index": "spectrace.tracer.cli:index_command",
    "contracts": "spectrace.contracts.cli:contracts_group",
    "run": "spectrace.shims.cli:run_command",
    "report": "spectrace.shims.cli:report_command",
    "bench": "spectrace.bench:bench_command",
    "patch": "spectrace.patches.cli:patch_group",
    "cache": "spectrace.cache:cache_group",
}


# Commands that analyse source and exit (not `run`/`bench`, which host SGLang itself).
BATCH_ANALYSES = {"map", "index", "contracts", "patch"}


class LazyGroup(click.Group):
    def __init__(self, *args, lazy_subcommands: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = lazy_subcommands or {}

    def make_context(self, info_name, args, parent=None, **extra):
        ui.set_level(ui.NORMAL)  # until -q/-v says otherwise, on this command line alone
        return super().make_context(info_name, args, parent=parent, **extra)

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_subcommands))

    def get_command(self, ctx, cmd_name):
        if cmd_name in BATCH_ANALYSES:
            # Short-lived analyses build millions of small acyclic objects (summaries, facts):
            # the cyclic GC only re-scans them, costing about half of a warm contracts run.
            # Peak memory measured the same with and without it.
            gc.disable()
            # At exit the interpreter still collects once over every object left (40 ms after a
            # cold map); frozen objects it skips, and the process's memory goes back whole anyway.
            atexit.unregister(gc.freeze)
            atexit.register(gc.freeze)
            _keep_freed_memory()
        if cmd_name in self.lazy_subcommands:
            module_name, attr = self.lazy_subcommands[cmd_name].split(":")
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                if exc.name and exc.name.startswith("spectrace"):
                    return None  # a command whose module is not part of this build
                if ctx.resilient_parsing:
                    return None  # shell completion: offer the commands that can run, say nothing
                raise click.ClickException(f"'{cmd_name}' needs a package that is not installed: {exc.name}") from exc
            command = getattr(module, attr)
            _finish_loaded(command)
            return command
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx, args):
        """An unknown command gets click's "Did you mean" from the lazy names too (``spectrace mapp``)."""
        name = click.utils.make_str(args[0])
        if ctx.resilient_parsing or name.startswith("-") or name in self.list_commands(ctx):
            return super().resolve_command(ctx, args)
        close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise click.UsageError(f"No such command '{name}'.{hint}", ctx)

    def invoke(self, ctx):
        """Every failure a user can cause ends here as one line and an exit code (docs/cli.md)."""
        guard_stdout()
        try:
            with interrupts.handled():
                return super().invoke(ctx)
        except SpectraceError as exc:
            click.echo(f"spectrace: {one_line(exc, limit=1000)}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("spectrace: interrupted", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            _silence_stdout()
            ctx.exit(141)  # 128 + SIGPIPE, what a shell reports for a reader that went away
        except OSError as exc:  # a filesystem error no command turned into a message of its own
            click.echo(f"spectrace: {describe(exc)}", err=True)
            ctx.exit(2)


def _keep_freed_memory() -> None:
    """Have glibc keep freed memory for reuse rather than hand it back to the kernel at once.

    Parsing one module after another allocates and frees tens of megabytes; memory handed back
    is paid for again in page faults when the next module needs it (a third of a cold map's
    system time). Peak memory measured the same. Nothing happens where there is no ``mallopt``.
    """
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError, TypeError):
        return
    mallopt(-1, 128 << 20)  # M_TRIM_THRESHOLD: free memory kept at the top of the heap
    mallopt(-3, 16 << 20)  # M_MMAP_THRESHOLD: blocks below this come from the heap, not mmap


def _silence_stdout() -> None:
    """The reader of stdout is gone (``spectrace ... | head``): send what is still buffered
    to /dev/null, so the flush at exit does not print "Broken pipe" (Python's documented recipe)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (e.g. click's test runner): nothing is flushed at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


# -------------------------------------------------------------------- options every command takes

_LEVEL_KEY = "spectrace.level"


def _verbosity_callback(level: int):
    def set_level(ctx, param, value):
        if not value:
            return
        chosen = ctx.meta.get(_LEVEL_KEY)
        if chosen is not None and chosen != level:
            raise click.UsageError("--quiet and --verbose contradict each other", ctx)
        ctx.meta[_LEVEL_KEY] = level
        ui.set_level(level)

    return set_level


def verbosity_options() -> list[click.Option]:
    """``-q``/``-v``, taken before the command (``spectrace -q map``) and after it (``spectrace map -q``)."""
    return [
        click.Option(["-q", "--quiet"], is_flag=True, expose_value=False, is_eager=True,
                     callback=_verbosity_callback(ui.QUIET),
                     help="Only errors and warnings on stderr: no progress, no 'using SGLang ...'."),
        click.Option(["-v", "--verbose"], is_flag=True, expose_value=False, is_eager=True,
                     callback=_verbosity_callback(ui.VERBOSE), help="Also timing and cache statistics on stderr."),
    ]


def first_sentence(text: str | None) -> str:
    """A command's summary for ``--help``: its docstring's first sentence whole (click cuts it at 45
    characters, often inside a parenthesis); the help formatter wraps it."""
    paragraph = " ".join(inspect.cleandoc(text or "").split("\n\n")[0].split())
    paragraph = paragraph.replace("\b ", "")
    return paragraph.split(". ", 1)[0].rstrip(".") + "."


def _finish_loaded(command: click.Command) -> None:
    """Give a command loaded on first use (and a group's subcommands) the options and help every
    command has; once, since the command objects are module-level and loaded again by tests."""
    if getattr(command, "_spectrace_finished", False):
        return
    command._spectrace_finished = True
    taken = {opt for param in command.params for opt in getattr(param, "opts", ())}
    if not taken & {"-q", "--quiet", "-v", "--verbose"}:
        command.params.extend(verbosity_options())
    if command.short_help is None and command.help:
        command.short_help = first_sentence(command.help)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _finish_loaded(sub)


@click.group(cls=LazyGroup, lazy_subcommands=LAZY_COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="spectrace", prog_name="spectrace")
def main():
    """Trace SGLang's scheduler<->worker code paths and verify the contracts between them."""


main.params.extend(verbosity_options())


def run():  # pragma: no cover - python -m spectrace
    sys.exit(main())
