"""The facts of one function, as the contract passes read them: texts as written (a node's own
parentheses, a call's for a lone generator, small statements of one line), positions in the
file's lines and characters, and the records in source order."""

import pickle

from spectrace.contracts.facts import Cond, function_spans
from spectrace.contracts.facts_visitors import facts_for_span
from spectrace.contracts.values import BoolOp, Chain, IfExp, ItemOf, LambdaValue, Name, NoneValue, Opaque, TupleValue


def facts_of(source: str, name: str):
    spans = [s for s in function_spans(source) if s.name == name]
    assert len(spans) == 1
    return {f.qualname: f for f in facts_for_span(spans[0])}


SOURCE = '''\
import os


class Worker:
    @property
    def ready(self):
        return True

    def forward(self, batch, result=None):
        if (batch.is_extend and  # a comment inside the condition
                batch.spec_info is not None):
            out = batch.spec_info.verify()
        elif batch.mode == "décodé":
            out = batch.decode(x.ids for x in batch.reqs); flag = True
        else: return None
        if result is None: return out
        import torch.distributed
        total = sum((r.n for r in batch.reqs))
        assert out.logits is not None
        done = a and b and out.ok
        return out.logits
'''


def test_conditions_keep_their_own_parentheses_and_drop_comments():
    f = facts_of(SOURCE, "forward")["Worker.forward"]
    read = next(r for r in f.reads if r.attrs == ["spec_info", "verify"])
    assert read.conds == [("batch.is_extend", True), ("batch.spec_info is not None", True)]
    assert read.line == 12 and read.col == 18
    assert read.shape == "out = batch.spec_info.verify()"
    assert [g.kind for g in read.guards2] == ["not-none-check"]
    assert read.guards2[0].text == "(batch.is_extend and batch.spec_info is not None)"
    assert read.guards2[0].line == 10  # the test, without its parentheses, starts on the if's line


def test_a_lone_generator_argument_is_written_without_the_calls_parentheses():
    f = facts_of(SOURCE, "forward")["Worker.forward"]
    decode = next(c for c in f.calls if c.callee == "batch.decode")
    assert decode.args == [Opaque("x.ids for x in batch.reqs")]
    total = next(c for c in f.calls if c.callee == "sum")
    assert total.args == [Opaque("(r.n for r in batch.reqs)")]


def test_small_statements_of_one_line_share_a_statement_and_a_suite_has_none():
    f = facts_of(SOURCE, "forward")["Worker.forward"]
    flag = next(b for b in f.bindings if b.target == "flag")
    assert flag.line == 14 and flag.conds == [("(batch.is_extend and batch.spec_info is not None)", False),
                                             ('batch.mode == "décodé"', True)]
    decode_read = next(r for r in f.reads if r.attrs == ["decode"])
    # each small statement is written with its own semicolon, as the reports have always shown it
    assert decode_read.shape == "out = batch.decode(x.ids for x in batch.reqs);; flag = True"
    assert decode_read.col == 18  # characters, not UTF-8 bytes
    suite_returns = [r for r in f.returns if r.line in (15, 16)]
    assert [r.shape for r in suite_returns] == ["", ""]
    assert f.returns[-1].exits == ["result is None"]


def test_imports_asserts_and_chained_operands():
    f = facts_of(SOURCE, "forward")["Worker.forward"]
    imported = next(r for r in f.reads if r.root == "torch")
    assert imported.attrs == ["distributed"] and imported.shape == "import torch.distributed"
    last = f.reads[-1]
    assert last.attrs == ["logits"] and [g.kind for g in last.guards2] == ["assert"]
    ok = next(r for r in f.reads if r.attrs == ["ok"])
    assert ok.conds == [("a", True), ("b", True)]
    assert all(isinstance(c, Cond) for c in ok.conds) and ok.conds[0].text == "a" and ok.conds[0].positive
    # `a and b and c` is `(a and b) and c`: each left operand is a tested condition
    assert f.none_tested[-4:] == ["a", "b", "a", "a"]


def test_decorators_and_constants():
    f = facts_of(SOURCE, "ready")["Worker.ready"]
    assert f.decorators == ["property"] and f.line == 6
    assert f.returns[0].value == Name("True", "True")


VALUES = '''\
class Worker:
    def forward(self, batch, run=None):
        a, b = self.model.split(batch, *rest, mode=None)
        self.out = batch.spec_info if batch.ok else None
        pick = lambda x: x.logits if x else None
        both = a or b or run
        pair = (a, [b])
        n = len(batch) + 1
        return
'''


def test_values_are_records_of_their_kind():
    f = facts_of(VALUES, "forward")["Worker.forward"]
    bound = {b.target: b.value for b in f.bindings}
    call = bound["a"].of
    assert bound["a"] == ItemOf(0, call) and bound["b"] == ItemOf(1, call)
    assert call.callee == "self.model.split" and call.args == (Name("batch", "batch"),) and call.spread
    assert call.keywords == {"mode": NoneValue("None")} and call.npos == 1
    ifexp = f.writes[0].value
    assert ifexp == IfExp("batch.ok", Chain("batch", ("spec_info",), "batch.spec_info"), NoneValue("None"),
                          "batch.spec_info if batch.ok else None")
    assert isinstance(bound["pick"], LambdaValue) and bound["pick"].params == ("x",)
    assert isinstance(bound["pick"].body, IfExp)
    # `a or b or run` is `(a or b) or run`
    both = bound["both"]
    assert isinstance(both, BoolOp) and both.op == "or" and both.right == Name("run", "run")
    assert both.left.text == "a or b" and isinstance(both.left, BoolOp)
    assert bound["pair"].items == (Name("a", "a"), TupleValue((Name("b", "b"),), "[b]"))
    assert bound["n"] == Opaque("len(batch) + 1")
    # a bare return has no expression: shown by its kind
    assert f.returns[0].value == NoneValue() and f.returns[0].value.shown == "none"
    assert f.defaults == {"run": NoneValue("None")}


def test_value_records_survive_the_facts_cache():
    f = facts_of(VALUES, "forward")["Worker.forward"]
    assert pickle.loads(pickle.dumps(f)) == f
