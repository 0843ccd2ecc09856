"""The search for a consumer's uses over the tree (contracts/entries.py, name_uses): only code is a
use, so the text of comments and strings is left out before any file is parsed (code_text.py)."""

from __future__ import annotations

from pathlib import Path

from spectrace.contracts.code_text import code_text
from spectrace.contracts.entries import name_uses
from spectrace.contracts.facts_cache import FactsCache
from spectrace.contracts.symbols import Symbols
from spectrace.source import package_source
from spectrace.tracer.project import Project


def test_code_text_blanks_comments_and_plain_strings_but_keeps_f_strings():
    source = b'x = "run_batch"  # run_batch()\ny = b"""\nrun_batch\n"""\nz = f"{s.run_batch()}"\nrun_batch(x)\n'
    code = code_text(source)
    assert len(code) == len(source)
    assert code.count(b"run_batch") == 2  # the f-string's field and the call
    assert b'f"{s.run_batch()}"' in code and code.endswith(b"run_batch(x)\n")


def test_code_text_gives_up_on_an_unterminated_string():
    assert code_text(b"x = 'run_batch\n") is None
    assert code_text(b'x = 1\ny = """run_batch\n') is None


def _symbols(tmp_path: Path, files: dict[str, str]) -> Symbols:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / name).write_text(text)
    source = package_source(pkg)
    return Symbols(Project(source, use_cache=False), FactsCache(Path(source.root), use_cache=False))


def test_names_in_comments_and_strings_are_no_use(tmp_path):
    symbols = _symbols(tmp_path, {
        "docs.py": '"""run_loop is entered by main."""\n# run_loop(x)\nHELP = "see run_loop"\n',
        "main.py": "def main(s):\n    if s.ready:\n        s.run_loop()\n",
    })
    uses = name_uses(symbols, {"run_loop"})["run_loop"]
    assert uses.calls == (("pkg/main.py", 3),) and not uses.other


def test_a_call_in_an_f_string_is_a_call(tmp_path):
    symbols = _symbols(tmp_path, {"log.py": 'def report(s):\n    return f"{s.run_loop()}"\n'})
    assert name_uses(symbols, {"run_loop"})["run_loop"].calls == (("pkg/log.py", 2),)


def test_a_file_that_does_not_parse_leaves_unknown_only_the_names_it_holds(tmp_path):
    symbols = _symbols(tmp_path, {
        "broken.py": "def f(s):\n    s.run_loop(\n",
        "main.py": "def main(s):\n    s.run_loop()\n    s.other_loop()\n",
    })
    uses = name_uses(symbols, {"run_loop", "other_loop"})
    assert uses["run_loop"].other and not uses["other_loop"].other
    assert uses["other_loop"] == name_uses(symbols, {"other_loop"})["other_loop"]
