"""Runtime shims against SGLang's own code, on the CPU (no torch, no sglang installed).

The consumer side is real: ``Scheduler.run_batch`` (and the output processor's
``_resolve_spec_overlap_tokens``) are compiled from the fetched SGLang 0.5.12 source with their
real file names and line numbers, and so are ``GenerationBatchResult``, ``EagleDraftInput`` and
``FutureMap.store_to_map``: the shims find their sites in that source and check the results that
flow through it. Only the environment of a step (streams, a tensor stand-in, the batch object)
is made of minimal objects with SGLang's attribute names.
"""

from __future__ import annotations

import __future__
import ast
import contextlib
import json
import sys
import types
from pathlib import Path

import jsonschema
import pytest

from spectrace.contracts.catalog import CatalogContract
from spectrace.shims import checks, plans, post_import, runtime

REPO = Path(__file__).resolve().parents[1]
VERSION = "0.5.12"
SCHED = "sglang/srt/managers/scheduler.py"
OUTPROC = "sglang/srt/managers/scheduler_output_processor_mixin.py"
UTILS = "sglang/srt/managers/utils.py"
EAGLE_INFO = "sglang/srt/speculative/eagle_info.py"
OVERLAP = "sglang/srt/managers/overlap_utils.py"

# the catalog entries these tests exercise, in the schema of docs/design.md
CATALOG = """
family = "spec-v2-overlap"

[[contract]]
id = "SPEC2-NDI-SPECINFO"
field = "next_draft_input"
owner = "GenerationBatchResult"
consumer = "Scheduler.run_batch"
shape = "batch.spec_info = batch_result.next_draft_input"
attribute_path = ["next_draft_input"]
kind = "unconditional-read"
path_condition = "self.enable_overlap and batch.is_spec_v2"
versions = ["0.5.9", "0.5.12"]
[contract.runtime]
check = "not-none"
at = "producer-return"
producer = "forward_batch_generation"

[[contract]]
id = "SPEC2-NDI-SEQLENS"
field = "next_draft_input"
owner = "GenerationBatchResult"
consumer = "Scheduler.run_batch"
shape = "batch.seq_lens = batch_result.next_draft_input.new_seq_lens"
attribute_path = ["next_draft_input", "new_seq_lens"]
kind = "unconditional-read"
path_condition = "self.enable_overlap and batch.is_spec_v2"
versions = ["0.5.9", "0.5.12"]
[contract.runtime]
check = "seq-lens-relation"
at = "producer-return"
producer = "forward_batch_generation"

[[contract]]
id = "SPEC2-OUT-ACCEPT-LENS"
field = "accept_lens"
owner = "GenerationBatchResult"
consumer = "SchedulerOutputProcessorMixin._resolve_spec_overlap_tokens"
shape = "accept_lens = result.accept_lens.tolist()"
attribute_path = ["accept_lens"]
kind = "unconditional-read"
path_condition = "batch.is_spec_v2"
[contract.runtime]
check = "fields-present"
fields = ["accept_lens", "next_token_ids", "speculative_num_draft_tokens"]
at = "producer-return"
mode = "decode"

[[contract]]
id = "SPEC2-NEW-SEQLENS-ON-RESULT"
field = "new_seq_lens"
owner = "GenerationBatchResult"
consumer = "Scheduler.run_batch"
shape = "batch.seq_lens = batch_result.new_seq_lens"
attribute_path = ["new_seq_lens"]
kind = "unconditional-read"
versions = ["0.5.17"]
[contract.runtime]
check = "not-none"
"""


# --------------------------------------------------------------------------------------------
# real SGLang classes, compiled from the fetched source without torch
# --------------------------------------------------------------------------------------------

def real_class(root: Path, relpath: str, name: str, methods=(), namespace=None, bases=()):
    """Class ``name`` of ``relpath`` with its real fields (dataclass fields keep their
    declarations and defaults) and the real ``methods``, compiled with the file's name and line
    numbers. Defaults that need torch become None. Method bodies resolve names in ``namespace``."""
    filename = str(root / relpath)
    tree = ast.parse(Path(filename).read_text(), filename)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    ns = dict(namespace or {})
    ns.setdefault("dataclass", __import__("dataclasses").dataclass)
    ns.setdefault("dataclasses", __import__("dataclasses"))
    body = []
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                try:
                    eval(compile(ast.Expression(node.value), filename, "eval"), ns)
                except Exception:
                    node.value = ast.copy_location(ast.Constant(None), node.value)
            body.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in methods:
            body.append(node)
    decorators = [d for d in cls.decorator_list if "dataclass" in ast.unparse(d)]
    new = ast.ClassDef(name=name, bases=[ast.Name(f"_base{i}", ast.Load()) for i in range(len(bases))],
                       keywords=[], body=body or [ast.Pass()], decorator_list=decorators, type_params=[])
    ast.copy_location(new, cls)
    mod = ast.Module(body=[new], type_ignores=[])
    ast.fix_missing_locations(mod)
    for i, b in enumerate(bases):
        ns[f"_base{i}"] = b
    code = compile(mod, filename, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, ns)
    return ns[name]


class FakeTensor:
    """Host-side stand-in with the metadata the shims read (shape) and the ops run_batch uses."""

    def __init__(self, values):
        self.values = list(values)
        self.shape = (len(self.values),)
        self.is_cuda = False

    def to(self, *args, **kwargs):
        return self

    def __neg__(self):
        return FakeTensor([-v for v in self.values])

    def __len__(self):
        return len(self.values)

    def tolist(self):
        return list(self.values)

    def record_stream(self, stream):
        pass


class Mode:
    def __init__(self, name):
        self.name = name

    def is_prebuilt(self):
        return False

    def is_decode(self):
        return self.name == "DECODE"

    def is_extend(self):
        return self.name == "EXTEND"


@pytest.fixture
def real(sglang_source):
    """SGLang 0.5.12's classes on the path the overlap spec-v2 scheduler takes."""
    root = sglang_source(VERSION).root
    torch_ns = {"torch": types.SimpleNamespace(is_tensor=lambda x: isinstance(x, FakeTensor))}
    result_cls = real_class(root, UTILS, "GenerationBatchResult", methods=("copy_to_cpu",), namespace=torch_ns)
    draft_cls = real_class(root, EAGLE_INFO, "EagleDraftInput")
    future_map_cls = real_class(root, OVERLAP, "FutureMap",
                                methods=("store_to_map", "store_to_map_for_new_batch", "is_empty_slice"),
                                namespace={"spec_need_hidden_states": lambda: False})
    mixin = real_class(root, OUTPROC, "SchedulerOutputProcessorMixin",
                       methods=("_resolve_spec_overlap_tokens",))
    scheduler_cls = real_class(root, SCHED, "Scheduler", methods=("run_batch",),
                               namespace={"time": __import__("time")}, bases=(mixin,))
    return types.SimpleNamespace(root=root, Result=result_cls, DraftInput=draft_cls,
                                 FutureMap=future_map_cls, Scheduler=scheduler_cls, Mixin=mixin)


class Buffers:
    """A device buffer indexed by slices: keeps what was stored."""

    def __init__(self):
        self.stored = []

    def __setitem__(self, index, value):
        self.stored.append((index, value))


def make_scheduler(real, worker):
    sched = real.Scheduler.__new__(real.Scheduler)
    fm = real.FutureMap.__new__(real.FutureMap)
    fm.spec_algo = types.SimpleNamespace(is_none=lambda: False)
    fm.buf_initialized = True
    fm.future_buffer_len = 1024
    for buf in ("topk_p_buf", "topk_index_buf", "bonus_tokens_buf", "new_seq_lens_buf", "hidden_states_buf"):
        setattr(fm, buf, Buffers())
    fm.alloc_future_indices = lambda bs: types.SimpleNamespace(indices=FakeTensor(range(1, bs + 1)),
                                                                interval=slice(1, bs + 1))
    fm.resolve_future = lambda mwb: None
    sched.__dict__.update(
        forward_ct=0, forward_sleep_time=None, is_generation=True, enable_overlap=True,
        enable_pdmux=False, spec_algorithm=types.SimpleNamespace(is_none=lambda: False),
        future_map=fm, forward_stream_ctx=contextlib.nullcontext(),
        forward_stream=types.SimpleNamespace(wait_stream=lambda s: None), schedule_stream=None,
        device_module=types.SimpleNamespace(Event=lambda: types.SimpleNamespace(record=lambda: None,
                                                                                 query=lambda: True)),
        model_worker=worker, tp_rank=0,
        server_args=types.SimpleNamespace(enable_dp_attention=False, elastic_ep_backend=None),
    )
    sched._profile_batch_predicate = lambda batch: None
    sched.record_batch_in_overlap = lambda mwb: None
    return sched


def make_batch(mode="DECODE", bs=3):
    seq_lens = FakeTensor([10 + i for i in range(bs)])
    mwb = types.SimpleNamespace(seq_lens=seq_lens, forward_mode=Mode(mode),
                                sampling_info=types.SimpleNamespace(copy_for_forward=lambda: None))
    batch = types.SimpleNamespace(forward_mode=Mode(mode), is_spec_v2=True, return_logprob=False,
                                  return_hidden_states=False, reqs=[object()] * bs, seq_lens=seq_lens,
                                  spec_info=None, output_ids=None, get_model_worker_batch=lambda: mwb)
    return batch


class SpecWorker:
    """A worker whose forward_batch_generation returns what EAGLEWorkerV2's verify returns
    (a GenerationBatchResult with next_draft_input), or, while ``disabled``, what the naive
    dynamic disable returned: a plain target result without the draft input."""

    def __init__(self, real):
        self.real = real
        self.disabled = False

    def forward_batch_generation(self, model_worker_batch):
        bs = len(model_worker_batch.seq_lens)
        if self.disabled:
            return self.real.Result(logits_output=None, next_token_ids=FakeTensor([7] * bs),
                                    can_run_cuda_graph=True)
        accept = FakeTensor([1] * bs)
        new = FakeTensor([s + 1 for s in model_worker_batch.seq_lens.values])
        ndi = self.real.DraftInput(bonus_tokens=FakeTensor([5] * bs), new_seq_lens=new)
        return self.real.Result(logits_output=None, next_token_ids=FakeTensor([5] * (4 * bs)),
                                can_run_cuda_graph=True, speculative_num_draft_tokens=4,
                                next_draft_input=ndi, accept_lens=accept)


@pytest.fixture
def shims(tmp_path, real):
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "spec-v2.toml").write_text(CATALOG)

    made, workers = [], {SpecWorker}

    def make(mode="warn", worker_cls=SpecWorker, packaged_catalog=False):
        report = tmp_path / f"report-{mode}.jsonl"
        s = checks.Shims(mode, str(report), None if packaged_catalog else str(catalog), value_sample=0)
        module = types.SimpleNamespace(Scheduler=real.Scheduler, __name__="sglang.srt.managers.scheduler")
        s._on_scheduler_module(module)
        worker_module = types.ModuleType("fake_worker_module")
        worker_module.__dict__[worker_cls.__name__] = worker_cls
        worker_cls.__module__ = "fake_worker_module"
        s._on_worker_module(worker_module)
        made.append(s)
        workers.add(worker_cls)
        return s, report

    yield make
    for s in made:
        s.close()
        s.returns.close()
    unwrap_all(real, workers)


def unwrap_all(real, workers=(SpecWorker,)):
    """Restore the unwrapped methods (each test, and each simulated rank, wraps afresh)."""
    for cls, name in [(real.Scheduler, "run_batch")] + [(w, "forward_batch_generation") for w in workers]:
        while hasattr(cls.__dict__[name], "__spectrace_wrapped__"):
            setattr(cls, name, cls.__dict__[name].__spectrace_wrapped__)


def events(report):
    return [json.loads(line) for line in Path(report).read_text().splitlines()]


def test_sites_come_from_the_imported_source(shims, real):
    s, _ = shims()
    active = {p.id: p for p in s.active}
    text = (real.root / SCHED).read_text().splitlines()
    site = active["SPEC2-NDI-SPECINFO"].consumer_site
    assert site["file"] == SCHED and site["qualname"] == "Scheduler.run_batch"
    assert text[site["line"] - 1].strip() == "batch.spec_info = batch_result.next_draft_input"
    seq = active["SPEC2-NDI-SEQLENS"].consumer_site
    assert text[seq["line"] - 1].strip() == "batch.seq_lens = batch_result.next_draft_input.new_seq_lens"
    out = active["SPEC2-OUT-ACCEPT-LENS"].consumer_site
    assert out["file"] == OUTPROC and out["qualname"] == "SchedulerOutputProcessorMixin._resolve_spec_overlap_tokens"
    # 0.5.17's contract is not in 0.5.12's run_batch: listed as not checked, with the reason
    inactive = {p.id: p.reason for p in s.inactive}
    assert "batch.seq_lens = batch_result.new_seq_lens" in inactive["SPEC2-NEW-SEQLENS-ON-RESULT"]


def test_healthy_steps_hold_every_contract(shims, real):
    s, report = shims("raise")
    worker = SpecWorker(real)
    sched = make_scheduler(real, worker)
    for mode in ("EXTEND", "DECODE", "DECODE"):
        batch = make_batch(mode)
        result = sched.run_batch(batch)
        assert batch.seq_lens is result.next_draft_input.new_seq_lens
    s.close()
    assert s.checks["SPEC2-NDI-SPECINFO"] == 3 and s.checks["SPEC2-NDI-SEQLENS"] == 3
    assert s.checks["SPEC2-OUT-ACCEPT-LENS"] == 2  # decode steps only
    assert sum(s.violations.values()) == 0
    final = [e for e in events(report) if e["event"] == "summary"][-1]
    assert final["final"] and final["checks"]["SPEC2-NDI-SPECINFO"] == 3


def test_raise_names_contract_and_both_sites_before_sglangs_crash(shims, real):
    s, report = shims("raise")
    worker = SpecWorker(real)
    sched = make_scheduler(real, worker)
    sched.run_batch(make_batch("EXTEND"))
    worker.disabled = True
    with pytest.raises(runtime.ContractViolation) as info:
        sched.run_batch(make_batch("DECODE"))
    exc = info.value
    assert exc.contract == "SPEC2-NDI-SPECINFO"
    assert exc.consumer["file"] == SCHED and exc.consumer["qualname"] == "Scheduler.run_batch"
    assert exc.producer["qualname"] == "SpecWorker.forward_batch_generation"
    assert exc.producer["file"].endswith("test_runtime.py")
    returns = [r["line"] for r in exc.producer.get("return_sites", [])]
    assert len(returns) == 2
    if "return_site" in exc.producer:  # Python 3.12+: the return that ran
        assert exc.producer["return_site"]["line"] == returns[0]
    assert f"{SCHED}:{exc.consumer['line']}" in str(exc)
    violation = [e for e in events(report) if e["event"] == "violation"][0]
    assert violation["contract"] == "SPEC2-NDI-SPECINFO" and violation["step"] == 2
    assert violation["forward_mode"] == "DECODE"

    # without the shim, SGLang's own code crashes on the same step, inside run_batch
    s.active = []
    with pytest.raises(AttributeError, match="NoneType"):
        sched.run_batch(make_batch("DECODE"))


def test_warn_logs_once_and_counts_the_rest(shims, real, capsys):
    s, report = shims("warn")
    worker = SpecWorker(real)
    worker.disabled = True
    sched = make_scheduler(real, worker)
    for _ in range(3):
        with pytest.raises(AttributeError):  # warn lets SGLang's own crash happen
            sched.run_batch(make_batch("DECODE"))
    err = capsys.readouterr().err
    assert err.count("contract SPEC2-NDI-SPECINFO broken") == 1
    assert err.count("contract SPEC2-OUT-ACCEPT-LENS broken") == 1
    assert SCHED in err and "test_runtime.py" in err
    assert s.violations["SPEC2-NDI-SPECINFO"] == 3
    assert s.violations["SPEC2-OUT-ACCEPT-LENS"] == 3


def test_record_mode_only_reports(shims, real, capsys):
    s, report = shims("record")
    worker = SpecWorker(real)
    sched = make_scheduler(real, worker)
    worker.disabled = True
    with pytest.raises(AttributeError):
        sched.run_batch(make_batch("DECODE"))
    assert "[spectrace]" not in capsys.readouterr().err
    kinds = {e["contract"] for e in events(report) if e["event"] == "violation"}
    assert kinds == {"SPEC2-NDI-SPECINFO", "SPEC2-NDI-SEQLENS", "SPEC2-OUT-ACCEPT-LENS"}


def test_seq_lens_batch_size_mismatch(shims, real):
    class ShortWorker(SpecWorker):
        def forward_batch_generation(self, model_worker_batch):
            result = SpecWorker.forward_batch_generation(self, model_worker_batch)
            result.next_draft_input.new_seq_lens = FakeTensor([1])
            return result

    s, report = shims("raise", worker_cls=ShortWorker)
    sched = make_scheduler(real, ShortWorker(real))
    with pytest.raises(runtime.ContractViolation) as info:
        sched.run_batch(make_batch("DECODE", bs=3))
    assert info.value.contract == "SPEC2-NDI-SEQLENS"
    assert "shape (1,)" in info.value.detail and "3 requests" in info.value.detail


def test_path_condition_off_means_no_check(shims, real):
    s, _ = shims("raise")
    worker = SpecWorker(real)
    worker.disabled = True
    sched = make_scheduler(real, worker)
    sched.enable_overlap = False  # the catalog's path condition: self.enable_overlap and batch.is_spec_v2
    sched.run_batch = types.MethodType(real.Scheduler.run_batch, sched)
    batch = make_batch("DECODE")
    batch.is_spec_v2 = False
    s.local.ctx = None
    # run only the producer wrapper with a context whose condition is false
    ctx = checks.StepContext(sched, batch, 1)
    s.local.ctx = ctx
    result = worker.forward_batch_generation(batch.get_model_worker_batch())
    s.local.ctx = None
    assert result.next_draft_input is None
    assert s.checks["SPEC2-NDI-SPECINFO"] == 0 and sum(s.violations.values()) == 0


def test_a_producer_replaced_after_import_is_rewrapped(shims, real):
    s, _ = shims("raise")
    worker = SpecWorker(real)
    sched = make_scheduler(real, worker)
    sched.run_batch(make_batch("EXTEND"))

    def naive(self, model_worker_batch):  # a plugin's monkeypatch, after the shims wrapped
        return real.Result(next_token_ids=FakeTensor([1, 2, 3]))

    original = SpecWorker.__dict__["forward_batch_generation"]
    SpecWorker.forward_batch_generation = naive
    try:
        with pytest.raises(runtime.ContractViolation) as info:
            sched.run_batch(make_batch("DECODE"))
        assert info.value.producer["qualname"] == "SpecWorker.forward_batch_generation"
        assert info.value.producer["line"] == naive.__code__.co_firstlineno
    finally:
        SpecWorker.forward_batch_generation = original


def test_packaged_catalog_resolves_on_the_real_scheduler(real, tmp_path):
    """Whatever the packaged catalog holds for 0.5.12, its runtime checks find their consumer."""
    if not list(runtime.DEFAULT_CATALOG.glob("*.toml")):
        pytest.skip("no packaged catalog yet")
    s = checks.Shims("record", str(tmp_path / "r.jsonl"), None, value_sample=0)
    s._on_scheduler_module(types.SimpleNamespace(Scheduler=real.Scheduler))
    s.close()
    ids = {p.id for p in s.active}
    spec_info = [p for p in s.active if p.shape == "batch.spec_info = batch_result.next_draft_input"]
    assert spec_info, f"no active runtime check for the next_draft_input read (active: {sorted(ids)})"


class PlainWorker:
    """What TpModelWorker returns without speculation: sampled tokens, no accept_lens."""

    def __init__(self, real):
        self.real = real

    def forward_batch_generation(self, model_worker_batch):
        bs = len(model_worker_batch.seq_lens)
        return self.real.Result(logits_output=None, next_token_ids=FakeTensor([7] * bs),
                                can_run_cuda_graph=True)


def test_packaged_catalog_holds_on_a_server_without_speculation(shims, real):
    """A server without speculation holds SPEC2-OUT-RESOLVE-TOKENS on every decode step: its
    check takes the caller's branch (``batch.is_spec_v2``), not only the read's own condition."""
    s, _ = shims("raise", worker_cls=PlainWorker, packaged_catalog=True)
    sched = make_scheduler(real, PlainWorker(real))
    not_spec = types.SimpleNamespace(is_none=lambda: True)
    sched.spec_algorithm = sched.future_map.spec_algo = not_spec
    sched.future_map.token_ids_buf = Buffers()
    for mode in ("EXTEND", "DECODE", "DECODE"):
        batch = make_batch(mode)
        batch.is_spec_v2, batch.spec_algorithm = False, not_spec
        sched.run_batch(batch)
    assert sum(s.violations.values()) == 0, dict(s.violations)
    # the same check is live: on the spec-v2 branch the plain result breaks it
    with pytest.raises(runtime.ContractViolation, match="SPEC2-OUT-RESOLVE-TOKENS"):
        sched.run_batch(make_batch("DECODE"))
    s.close()
    assert "SPEC2-OUT-RESOLVE-TOKENS" in {p.id for p in s.active}
    # checked once: on the spec-v2 step, not on the three steps that do not read accept_lens
    assert s.checks["SPEC2-OUT-RESOLVE-TOKENS"] == 1
    assert s.violations["SPEC2-OUT-RESOLVE-TOKENS"] == 1


# --------------------------------------------------------------------------------------------
# the report: several processes (TP ranks) append to one file; `spectrace report` merges them
# --------------------------------------------------------------------------------------------

def _run_rank(make, real, rank, disabled_from=None, steps=4):
    s, report = make("record")
    worker = SpecWorker(real)
    sched = make_scheduler(real, worker)
    sched.tp_rank = rank
    for i in range(steps):
        worker.disabled = disabled_from is not None and i >= disabled_from
        try:
            sched.run_batch(make_batch("EXTEND" if i == 0 else "DECODE"))
        except AttributeError:
            break  # SGLang's own crash after the recorded violation
    s.close()
    unwrap_all(real)
    return report


def test_report_merges_ranks_and_fails_on_violations(shims, real):
    from click.testing import CliRunner

    from spectrace.cli import main

    report = _run_rank(shims, real, rank=0)
    # a second "rank" appends to the same file (record mode uses the same report path)
    _run_rank(shims, real, rank=1, disabled_from=2)
    with open(report, "a") as fh:
        fh.write('{"event": "summary", "truncated')  # a process killed mid-write
    res = CliRunner().invoke(main, ["report", str(report)])
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    row = next(line for line in lines if line.startswith("SPEC2-NDI-SPECINFO"))
    cells = row.split()
    assert cells[1] == "7" and cells[2] == "1"  # 4 checks on rank 0 + 3 on rank 1 (the last failed)
    assert "step 3 tp1" in row and f"{SCHED}:" in row and "test_runtime.py:" in row
    assert "2 process(es), ranks tp0, tp1" in res.output
    assert "SPEC2-NEW-SEQLENS-ON-RESULT" in res.output  # listed as not checked, with its reason
    assert "1 unreadable line(s) skipped" in res.output

    res = CliRunner().invoke(main, ["report", "--json", str(report)])
    data = json.loads(res.output)
    assert data["contracts"]["SPEC2-NDI-SPECINFO"]["first_violation"]["rank"] == {"tp_rank": 1}
    jsonschema.validate(data, json.loads((REPO / "docs" / "schemas" / "report.schema.json").read_text()))
    assert data["schema"] == "spectrace-report" and data["schema_version"] == 1


def test_report_of_a_clean_run_exits_zero(shims, real):
    from click.testing import CliRunner

    from spectrace.cli import main

    report = _run_rank(shims, real, rank=0)
    res = CliRunner().invoke(main, ["report", str(report)])
    assert res.exit_code == 0, res.output
    assert "0 violations" in res.output
    res = CliRunner().invoke(main, ["report", str(report) + ".missing"])
    assert res.exit_code == 2 and "no such report" in res.output


def test_a_killed_scheduler_keeps_the_counts_of_its_last_server_info(shims, real):
    """SGLang's shutdown SIGKILLs the scheduler: no exit hook runs, so the counts a report
    holds are those of the last summary; a get_internal_state call (the bench's server-info
    query after each run) writes one, and the report says the process ended unfinished."""
    from click.testing import CliRunner

    from spectrace.cli import main

    s, report = shims("record")
    sched = make_scheduler(real, SpecWorker(real))
    for mode in ("EXTEND", "DECODE", "DECODE"):
        sched.run_batch(make_batch(mode))
    get_state = s._wrap_internal_state(lambda _sched: types.SimpleNamespace(internal_state={}), type(sched))
    assert "spectrace_pool" in get_state(sched).internal_state
    last = [e for e in events(report) if e["event"] == "summary"][-1]
    assert last["final"] is False and last["steps"] == 3 and last["checks"]["SPEC2-NDI-SPECINFO"] == 3
    res = CliRunner().invoke(main, ["report", str(report)])  # before any close(): as if killed
    assert res.exit_code == 0, res.output
    assert "ended without a final summary (killed): pid" in res.output and "3 steps" in res.output
    s.close()
    res = CliRunner().invoke(main, ["report", str(report)])
    assert "without a final summary" not in res.output


# --------------------------------------------------------------------------------------------
# producer-sets contracts (SPEC2-DISABLED-NDI/-STRIDE): the real module of the shipped
# dynamic-disable series, imported through the shims' import hook with torch and the SGLang
# modules around it stubbed (no torch here); its real forward_disabled runs on host stand-ins
# --------------------------------------------------------------------------------------------

DISABLE_MODULE = "sglang.srt.speculative.dynamic_disable"
DISABLE_FILE = "sglang/srt/speculative/dynamic_disable.py"


class Tensor(FakeTensor):
    def __add__(self, n):
        return Tensor([v + n for v in self.values])


class _ReqToToken:
    def __getitem__(self, index):
        pools, positions = index
        return Tensor(positions.values)


@pytest.fixture
def disable_module(sglang_copy, real, monkeypatch, tmp_path):
    """``disable_module(edit=None, mode="raise") -> (module, shims, report)``: the shipped 0.5.12
    series applied to a copy of real source (``edit`` rewrites the new module's text first), the
    shims hooked with the packaged catalog, then the module imported by its real name."""
    from spectrace.patches import engine
    from spectrace.patches.series import SERIES_DIR_ENV

    monkeypatch.delenv(SERIES_DIR_ENV, raising=False)
    monkeypatch.setattr(post_import, "_POST_IMPORT", {})
    monkeypatch.setattr(post_import, "_POST_IMPORT_MATCHES", [])
    made = []

    def make(edit=None, mode="raise"):
        tree = sglang_copy(VERSION, subdirs=("sglang/srt",))
        engine.apply(tree, "dynamic-disable", use_contracts=False)
        if edit is not None:
            path = tree / DISABLE_FILE
            path.write_text(edit(path.read_text()))
        torch = types.ModuleType("torch")
        torch.int32, torch.int64 = "int32", "int64"
        torch.get_device_module = lambda device: types.SimpleNamespace(
            current_stream=lambda: None, Event=lambda: types.SimpleNamespace(record=lambda: None))
        torch.ones = lambda n, dtype=None, device=None: Tensor([1] * n)
        stubs = {"torch": torch}
        for name, rel in (("sglang", "sglang"), ("sglang.srt", "sglang/srt"),
                          ("sglang.srt.speculative", "sglang/srt/speculative")):
            stubs[name] = types.ModuleType(name)
            stubs[name].__path__ = [str(tree / rel)]  # the real file is found through these
        stubs["sglang"].__version__ = VERSION
        for name, attrs in (
            ("sglang.srt.speculative.spec_info", {"SpeculativeAlgorithm": object}),
            ("sglang.srt.model_executor.forward_batch_info", {"ForwardMode": types.SimpleNamespace(DECODE=Mode("DECODE"))}),
            ("sglang.srt.managers.utils", {"GenerationBatchResult": real.Result}),
            ("sglang.srt.speculative.eagle_info", {"EagleDraftInput": real.DraftInput}),
        ):
            stubs[name] = types.ModuleType(name)
            stubs[name].__dict__.update(attrs)
        # the series' fused kernels need Triton and a GPU (tests/test_patch_kernels.py runs them):
        # here the step gets what their torch fallback computes, on the host stand-ins
        kernels = stubs["sglang.srt.speculative.dynamic_disable_kernels"] = types.ModuleType("kernels")

        def prologue(seq_lens, req_pool_indices, req_to_token, bonus_tokens, orig_dtype):
            new = seq_lens + 1
            orig = None if orig_dtype is None else new.to(orig_dtype)
            return new, req_to_token[req_pool_indices, seq_lens].to(torch.int64), bonus_tokens.to(torch.int64), orig

        kernels.disabled_step_prologue = prologue
        for name, mod in stubs.items():
            monkeypatch.setitem(sys.modules, name, mod)
        monkeypatch.delitem(sys.modules, DISABLE_MODULE, raising=False)
        report = tmp_path / f"report-{len(made)}.jsonl"
        shims = checks.Shims(mode, str(report), None, value_sample=0)
        shims.hook()
        import importlib

        module = importlib.import_module(DISABLE_MODULE)
        made.append(shims)
        return module, shims, report

    yield make
    for s in made:
        s.close()
        s.returns.close()


def _disabled_step(module, real, bs=3):
    """SpecDisableRuntime.forward_disabled (the real, patched method) on host stand-ins."""
    target_out = real.Result(logits_output=types.SimpleNamespace(hidden_states=None),
                             next_token_ids=Tensor([9] * bs), can_run_cuda_graph=True)
    runner = types.SimpleNamespace(attn_backend="target", graph_runner="target")
    worker = types.SimpleNamespace(
        req_to_token_pool=types.SimpleNamespace(req_to_token=_ReqToToken()),
        target_worker=types.SimpleNamespace(model_runner=runner, forward_batch_generation=lambda b: target_out))
    rt = module.SpecDisableRuntime.__new__(module.SpecDisableRuntime)  # __init__ captures CUDA graphs
    rt.__dict__.update(worker=worker, device="cpu", skip_draft=True, catch_up=None, check_seq_lens=False, is_standalone=False,
                       target_hidden_mode=None, decode_attn_backend="plain", decode_graph_runner=None)
    seq_lens = Tensor([10 + i for i in range(bs)])
    batch = types.SimpleNamespace(spec_info=real.DraftInput(bonus_tokens=Tensor([5] * bs)), seq_lens=seq_lens,
                                  seq_lens_cpu=seq_lens, seq_lens_sum=sum(seq_lens.values), orig_seq_lens=None,
                                  req_pool_indices=Tensor(range(bs)), forward_mode=Mode("DECODE"))
    return rt.forward_disabled(batch)


def _return_line(module) -> int:
    text = Path(module.__file__).read_text()
    func = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == "forward_disabled")
    return next(n.lineno for n in ast.walk(func) if isinstance(n, ast.Return))


def test_import_hook_wraps_the_patched_producer_and_its_result_holds(disable_module, real):
    module, s, _ = disable_module()
    assert Path(module.__file__).as_posix().endswith(DISABLE_FILE)  # the patched tree's real file
    assert hasattr(module.SpecDisableRuntime.__dict__["forward_disabled"], "__spectrace_wrapped__")
    assert f"{DISABLE_MODULE}.SpecDisableRuntime.forward_disabled" in s.wrapped
    assert s.producer_active["SPEC2-DISABLED-STRIDE"].fields == ["accept_lens", "speculative_num_draft_tokens"]
    result = _disabled_step(module, real)
    assert result.next_draft_input.new_seq_lens.values == [11, 12, 13]
    assert s.checks["SPEC2-DISABLED-NDI"] == s.checks["SPEC2-DISABLED-STRIDE"] == 1
    assert s.violations["SPEC2-DISABLED-NDI"] == s.violations["SPEC2-DISABLED-STRIDE"] == 0


def test_patched_producer_without_next_draft_input_raises_at_its_return(disable_module, real):
    keyword = "            next_draft_input=next_draft_input,\n"
    module, s, _ = disable_module(edit=lambda text: text.replace(keyword, ""))
    with pytest.raises(runtime.ContractViolation) as info:
        _disabled_step(module, real)
    exc = info.value
    assert exc.contract == "SPEC2-DISABLED-NDI"
    assert "GenerationBatchResult returned by SpecDisableRuntime.forward_disabled has next_draft_input=None" in str(exc)
    assert exc.producer["file"] == DISABLE_FILE and exc.producer["qualname"] == "SpecDisableRuntime.forward_disabled"
    line = _return_line(module)
    ran = exc.producer.get("return_site")  # exact on python 3.12+ (sys.monitoring), else the candidates
    assert (ran or {}).get("line") == line or [r["line"] for r in exc.producer["return_sites"]] == [line]


def test_patched_producer_with_another_stride_is_recorded(disable_module, real):
    module, s, report = disable_module(
        edit=lambda text: text.replace("speculative_num_draft_tokens=1,", "speculative_num_draft_tokens=4,"), mode="record")
    _disabled_step(module, real, bs=2)
    s.close()
    found = [e for e in events(report) if e["event"] == "violation"]
    assert [(e["contract"], e["detail"]) for e in found] == [
        ("SPEC2-DISABLED-STRIDE", "speculative_num_draft_tokens is 4, the catalog expects 1")]
    assert found[0]["batch_size"] == 2 and found[0]["producer"]["file"] == DISABLE_FILE


def test_batch_sized_field_of_the_wrong_size_is_a_violation():
    plan = plans.plan_for(CatalogContract(
        id="X", field="next_draft_input", owner="GenerationBatchResult", consumer="", shape="",
        kind="producer-sets", producer="SpecDisableRuntime.forward_disabled", fields=["next_draft_input"],
        runtime={"batch_sized": ["next_draft_input.new_seq_lens"]}))
    ok = types.SimpleNamespace(next_draft_input=types.SimpleNamespace(new_seq_lens=Tensor([1, 2, 3])))
    assert checks.Shims._producer_sets_problem(plan, ok, 3) is None
    assert checks.Shims._producer_sets_problem(plan, ok, 4) == "next_draft_input.new_seq_lens has shape (3,), the batch has 4 requests"


@pytest.mark.parametrize("version, fields, batch_sized", [
    ("0.5.12", ["next_draft_input"], ["next_draft_input.new_seq_lens"]),
    ("0.5.17", ["next_draft_input", "new_seq_lens"], ["new_seq_lens"]),  # 0.5.13+: the lengths ride on the result
])
def test_the_disabled_step_is_checked_with_the_fields_of_the_imported_release(version, fields, batch_sized, tmp_path):
    s = checks.Shims("record", str(tmp_path / "r.jsonl"), None, value_sample=0)
    s.sglang_version = version
    plan = next(p for p in s.producer_plans if p.id == "SPEC2-DISABLED-NDI")

    class SpecDisableRuntime:
        def forward_disabled(self, batch):
            return None

    s._activate_producer_plan(plan, SpecDisableRuntime, "forward_disabled")
    active = s.producer_active["SPEC2-DISABLED-NDI"]
    assert (active.fields, active.batch_sized) == (fields, batch_sized)
    result = types.SimpleNamespace(next_draft_input=types.SimpleNamespace(), new_seq_lens=Tensor([11, 12]))
    problem = checks.Shims._producer_sets_problem(active, result, 2)
    assert problem is None if version == "0.5.17" else "new_seq_lens" in problem
    s.close()


def test_release_without_the_producer_lists_the_contracts_as_not_checked(real, tmp_path):
    s = checks.Shims("record", str(tmp_path / "r.jsonl"), None, value_sample=0)
    s._on_scheduler_module(types.SimpleNamespace(Scheduler=real.Scheduler))
    s._start(types.SimpleNamespace(tp_rank=0))
    s.close()
    start = next(e for e in events(tmp_path / "r.jsonl") if e["event"] == "start")
    inactive = {c["id"]: c["reason"] for c in start["inactive"]}
    assert inactive["SPEC2-DISABLED-NDI"].startswith("producer SpecDisableRuntime.forward_disabled not imported")
    assert "SPEC2-DISABLED-STRIDE" in inactive


def test_uninstall_removes_the_import_hook_so_a_new_install_starts_clean(tmp_path):
    import sys

    from spectrace.shims import runtime as rt

    rt.install(mode="record", report=str(tmp_path / "a.jsonl"))
    assert post_import._FINDER in sys.meta_path and post_import._POST_IMPORT_MATCHES
    rt.uninstall()
    assert post_import._FINDER not in sys.meta_path
    assert not post_import._POST_IMPORT and not post_import._POST_IMPORT_MATCHES
    rt.install(mode="record", report=str(tmp_path / "b.jsonl"))
    try:
        hooks = len(post_import._POST_IMPORT_MATCHES) + sum(len(v) for v in post_import._POST_IMPORT.values())
        rt.uninstall()
        rt.install(mode="record", report=str(tmp_path / "c.jsonl"))
        again = len(post_import._POST_IMPORT_MATCHES) + sum(len(v) for v in post_import._POST_IMPORT.values())
        assert again == hooks, "a second install registered its callbacks on top of the first"
    finally:
        rt.uninstall()


@pytest.mark.parametrize("line", [
    "[1, 2]",
    '"text"',
    '{"no": "event"}',
    '{"event": "summary", "rank": 3, "checks": {"A": 1}}',
    '{"event": "summary", "checks": [1]}',
    '{"event": "summary", "violations": {"A": "many"}}',
    '{"event": "violation"}',
    '{"event": "start", "contracts": [1]}',
])
def test_report_of_other_json_is_one_line_and_exit_2(tmp_path, line):
    from click.testing import CliRunner

    from spectrace.cli import main

    report = tmp_path / "other.jsonl"
    report.write_text('{"event": "start", "contracts": []}\n' + line + "\n")
    res = CliRunner().invoke(main, ["report", str(report)])
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert res.stdout == "" and "Traceback" not in res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"spectrace: {report}:2: not a shim report event: "), lines
