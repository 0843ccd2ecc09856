"""Stand-ins for the bench's tests: toy torch models shaped as the weight edits
(spectrace/bench/drafts.py) read them, and an ``sglang`` package whose ``launch_server`` serves the
HTTP stand-in (tests/http_standin.py)."""

from __future__ import annotations

from pathlib import Path


def toy_llama(h: int, vocab: int, draft: bool):
    from torch import nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.self_attn, self.mlp = nn.Module(), nn.Module()
            self.self_attn.o_proj, self.mlp.down_proj = nn.Linear(h, h, bias=False), nn.Linear(h, h, bias=False)
            self.input_layernorm = nn.LayerNorm(h)

    m = nn.Module()
    m.model = nn.Module()
    m.model.embed_tokens = nn.Embedding(vocab, h)
    m.model.layers = nn.ModuleList([Layer(), Layer()])
    m.model.norm = nn.LayerNorm(h)
    m.lm_head = nn.Linear(h, vocab, bias=False)
    if draft:
        m.model.fc = nn.Linear(3 * h, h)
    return m


def fake_sglang(root: Path, init_source: str = "", record: Path | None = None) -> Path:
    """A site folder with an ``sglang`` package (``init_source`` runs on its import) whose
    ``sglang.launch_server ... --port P`` serves the stand-in on P, after writing its argv, pid and
    shims variable to ``record``."""
    fake = root / "fake-site"
    (fake / "sglang").mkdir(parents=True)
    (fake / "sglang" / "__init__.py").write_text(init_source)
    recording = "" if record is None else (
        f"with open({str(record)!r}, 'w') as fh:\n"
        "    json.dump({'argv': argv, 'pid': os.getpid(), 'shims': os.environ.get('SPECTRACE_SHIMS')}, fh)\n")
    (fake / "sglang" / "launch_server.py").write_text(
        "import json, os, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from http_standin import serve\n"
        "argv = sys.argv[1:]\n"
        + recording +
        "serve(int(argv[argv.index('--port') + 1]))\n")
    return fake
