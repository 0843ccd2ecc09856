"""The core's plain step returns the target worker's own GenerationBatchResult with the spec-v2
fields set on it, so it carries every field of the verify result that SGLang's scheduler or output
processor reads. Checked on the real release sources: the fields the verify result is built with
(speculative/eagle_worker_common.py), those the target worker's result is built or filled with
(managers/tp_worker.py), those forward_disabled sets, and the reads under managers/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "patches/dynamic-disable/src"
pytestmark = pytest.mark.slow

# read by the scheduler, but for work the plain step does not do
NOT_FOR_A_PLAIN_STEP = {
    # pins the verify ForwardBatch past prepare_for_draft_extend's rebinding of batch.input_ids
    "extra_keep_alive_refs",
    # read by the pipeline-parallel mixin only (pp > 1 is refused)
    "accept_index",
}


def result_calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "GenerationBatchResult":
            yield node


def kwargs(call: ast.Call) -> set[str]:
    return {k.arg for k in call.keywords if k.arg}


def assigned_attributes(func: ast.AST, name: str) -> set[str]:
    attrs = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for t in (target.elts if isinstance(target, ast.Tuple) else [target]):
                    if isinstance(t, ast.Attribute) and getattr(t.value, "id", None) == name:
                        attrs.add(t.attr)
    return attrs


def functions(tree: ast.AST, name: str):
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name]


@pytest.mark.parametrize("version", ["0.5.17", "0.5.23"])
def test_the_plain_result_carries_what_the_verify_result_carries_and_the_scheduler_reads(version, sglang_source):
    root = sglang_source(version).root / "sglang/srt"
    verify = set().union(*map(kwargs, result_calls(ast.parse((root / "speculative/eagle_worker_common.py").read_text()))))
    assert {"next_token_ids", "accept_lens", "new_seq_lens", "routed_experts_output"} <= verify
    target = set()
    for forward in functions(ast.parse((root / "managers/tp_worker.py").read_text()), "forward_batch_generation"):
        target |= set().union(*map(kwargs, result_calls(forward))) | assigned_attributes(forward, "batch_result")
    (core,) = functions(ast.parse((SRC / version / "speculative/dynamic_disable.py").read_text()), "forward_disabled")
    # it returns the target worker's own result, with fields set on it
    (returned,) = [n.value for n in ast.walk(core) if isinstance(n, ast.Return)]
    assert getattr(returned, "id", None) == "out"
    assert any(isinstance(n, ast.Assign) and [getattr(t, "id", None) for t in n.targets] == ["out"]
               and getattr(n.value.func, "attr", None) == "forward_batch_generation"
               for n in ast.walk(core) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call))
    ours = assigned_attributes(core, "out")
    managers = " ".join(p.read_text() for p in (root / "managers").rglob("*.py"))
    read = {f for f in verify if re.search(rf"\.{f}\b", managers)}
    missing = sorted(read - target - ours - NOT_FOR_A_PLAIN_STEP)
    assert not missing, f"the plain step's result lacks {missing}"
    assert {"routed_experts_output", "indexer_topk_output"} <= target  # the target's own, carried
