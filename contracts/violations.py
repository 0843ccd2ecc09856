"""The violations pass: an unguarded scheduler read of a None-default field that a worker's return
path leaves unset, when the read's path condition, the worker's selection condition and the return
path's condition can hold together (``conditions.py``), and no catalog assumption rules it out."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase as fnmatch
from pathlib import Path

from spectrace.contracts import conditions as C
from spectrace.contracts.analysis import Analysis
from spectrace.contracts.arguments import bind
from spectrace.contracts.blocks import dominates
from spectrace.contracts.entries import EntryCondition, entry_condition, name_uses
from spectrace.contracts.enums import EnumMembers
from spectrace.contracts.facts import Cond
from spectrace.contracts.kinds import ReadKind
from spectrace.contracts.return_paths import constant_parameters, decided
from spectrace.contracts.spread_keys import spread_keys
from spectrace.contracts.values import AttrOf, BoolOp, CallValue, Chain, Name, NoneValue, Opaque, Value
from spectrace.contracts.holders import HolderFinder
from spectrace.contracts.reads import tested_fields
from spectrace.contracts.relay_origin import RelayCall, RelayOrigins
from spectrace.contracts.records import (
    FieldRead,
    ReturnPath,
    Unknown,
    Violation,
    ViolatingPath,
    ViolatingRead,
    violation_id,
)
from spectrace.sides import SCHEDULER

ASSUMPTIONS_FILE = Path(__file__).parent / "catalog" / "assumptions.toml"
_NOT_CLASSES = ("Optional", "Union", "List", "Dict", "Tuple")


def load_assumptions(path: Path | None = None) -> list[dict]:
    try:
        import tomllib
    except ImportError:  # pragma: no cover - python 3.10
        import tomli as tomllib
    p = Path(path) if path else ASSUMPTIONS_FILE
    if not p.is_file():
        return []
    return list(tomllib.loads(p.read_text()).get("assumption", []))


def applicable(assumptions: list[dict], version: str | None) -> list[dict]:
    """The assumptions that hold on this release: one with ``releases`` only on those named (a tree
    whose version is not known gets none of them)."""
    return [x for x in assumptions if "releases" not in x or (version is not None and version in x["releases"])]


@dataclass
class Context:
    """Where a checked consumer gets its result: directly from the worker call, or from a call of
    the function that did (``caller``) at ``site``, under that call's conditions, with the
    callee's ``self.<attr>`` names mapped to the caller's (``rename``) and its parameters to the
    arguments' text (``arguments``)."""
    conds: list
    rename: dict
    how: str
    caller: tuple[str, str] | None = None
    site: object | None = None  # the CallSite
    arguments: dict = field(default_factory=dict)
    tested: set = field(default_factory=set)  # the result's fields the calls on the way test set
    written: set = field(default_factory=set)  # the result's fields the functions on the way set before their call
    # the condition under which the first function on the way is entered (entries.py), in its
    # callers' text; true where not known
    entry: C.Formula = C.And(())


def _set_before(g, names: set, call) -> set[str]:
    """The fields ``g`` sets non-None on the result (held in ``names``) on every path to ``call``
    (``result.copy_done = Event()`` before ``result.copy_to_cpu(...)``)."""
    return {w.attrs[0] for w in g.writes if w.root in names and len(w.attrs) == 1 and w.line < call.line
            and not isinstance(w.value, NoneValue) and dominates(w.blocks, call.blocks)}


def _substitute(text: str, arguments: dict) -> str:
    """``text`` with each bare name of a parameter replaced by its argument (``return_logprob`` ->
    ``batch.return_logprob``), so that a condition of the callee reads as the caller's."""
    for name, arg in arguments.items():
        text = re.sub(rf"(?<![\w.]){re.escape(name)}\b", f"({arg})", text)
    return text


def _rename_self_attrs(text: str, rename: dict) -> str:
    for old, new in rename.items():
        text = re.sub(rf"\bself\.{re.escape(old)}\b", f"self.{new}", text)
    return text


def _how(why: str, prefix: str) -> str:
    """How a receiving function holds the worker's result, for the violation's ``context``."""
    return "direct" if why.startswith(prefix) else why


def deep_wants(reads: list[FieldRead]) -> dict[str, set[str]]:
    """{field: attributes below it} that these reads dereference (``next_draft_input.new_seq_lens``)."""
    out: dict[str, set[str]] = {}
    for r in reads:
        if len(r.attribute_path) > 1:
            out.setdefault(r.attribute_path[0], set()).add(r.attribute_path[1])
    return out


def _obligation(r: FieldRead, p: ReturnPath) -> tuple[str | None, str | None]:
    """(the first prefix of the read's attribute path that ``p`` leaves None, why it is undecided)."""
    if p.sets is None:
        return None, p.unresolved or "not followed"
    if r.field in p.unknown and r.field not in p.sets:
        return None, p.unknown[r.field]
    if r.field not in p.sets:
        return r.field, None
    for depth in range(2, len(r.attribute_path) + 1):
        prefix = ".".join(r.attribute_path[:depth])
        if prefix in p.deep_sets:
            continue
        if prefix in p.unknown:
            return None, p.unknown[prefix]
        return prefix, None
    return None, None


class ViolationFinder:
    def __init__(self, analysis: Analysis, holders: HolderFinder, assumptions: list[dict]):
        self.analysis = analysis
        self.symbols = analysis.symbols
        self.holders = holders
        # configuration facts (``when`` -> ``implies``) and exclusions (``excludes``: consumers whose
        # reads are no obligation of the workers on the releases named)
        self.assumptions = [x for x in assumptions if "when" in x]
        self.exclusions = [x for x in assumptions if "excludes" in x]
        self.assumptions_used: set[str] = set()
        self.excluded: dict[str, list[FieldRead]] = {}  # exclusion id -> the reads it left out
        self.entries: dict[str, EntryCondition] = {}  # consumer -> the condition it is entered under
        self._premises = {a for x in self.assumptions for a in C.atoms(C.parse_receiver_free(x["when"]))}
        self._implications = tuple(C.implication(x["when"], x["implies"]) for x in self.assumptions)
        self.origins = RelayOrigins(holders)
        self.enums = EnumMembers(self.symbols)
        self.solver = C.Solver(analysis.predicates, self.enums)

    def checked(self, reads: list[FieldRead], scheduler_writes: set[str]) -> list[FieldRead]:
        """The unconditional, dereferenced scheduler reads of None-default fields in the functions
        that receive the worker's result (the obligations every worker path must meet)."""
        a = self.analysis
        self._context_map = self._contexts(reads)
        obligations = [r for r in reads if r.side == SCHEDULER and r.kind == ReadKind.UNCONDITIONAL and r.deref
                       and a.fields[r.field].may_be_none and (r.module, r.consumer) in self._context_map
                       and (r.field not in scheduler_writes or self._unwritten_somewhere(r))]
        self.excluded = {}
        kept = []
        for r in obligations:
            x = next((x for x in self.exclusions if any(fnmatch(r.consumer, pat) for pat in x["excludes"])), None)
            if x is None:
                kept.append(r)
            else:
                self.excluded.setdefault(x["id"], []).append(r)
        return kept

    def find(self, reads: list[FieldRead], paths: list[ReturnPath], selection: dict,
             scheduler_writes: set[str]) -> list[Violation]:
        a = self.analysis
        out: list[Violation] = []
        self.unknowns: list[Unknown] = []
        checked = self.checked(reads, scheduler_writes)
        contexts = self._context_map
        expanders: dict = {}
        self._path_formulas: dict = {}
        self._selections: dict = {}
        for r in checked:
            expand = expanders.setdefault((r.module, r.consumer), self._expander(r.module, r.consumer))
            local = [Cond(*c) for c in r.conditions] + [Cond(e, False) for e in r.early_exits]
            for ctx in contexts[(r.module, r.consumer)]:
                if r.field in ctx.written:
                    continue  # a function on the way sets the field itself before it hands the result on
                if r.field in scheduler_writes and self._scheduler_sets_before(r, ctx):
                    continue  # the scheduler sets the field itself on every way to this read
                extra, how, caller = ctx.conds, ctx.how, ctx.caller
                tested_none, tested_set = self._result_fields(caller, extra) if caller else (set(), set())
                relays = self._relays(r, ctx)
                worker_calls = self._worker_calls(caller, ctx.site, relays)
                renamed = [Cond(_substitute(_rename_self_attrs(t, ctx.rename), ctx.arguments), pos) for t, pos in local]
                # the call site's conditions are the caller's text: inline the caller's properties
                outer = expanders.setdefault(caller, self._expander(*caller)) if caller else expand
                comp = a.complements
                read_f = C.with_complements(C.all_of(C.conjunction(renamed, expand),
                                                     C.conjunction([Cond(*c) for c in extra], outer), ctx.entry,
                                                     C.Not(self._relay_sets(relays, r.field, scheduler_writes))), comp)
                definitions = None  # of read_f's atoms, when first asked for
                for p in paths:
                    missing, why = _obligation(r, p)
                    if missing is None and why is None:
                        continue
                    if p.sets is not None and tested_none & set(p.sets):
                        continue  # the call runs only when the result's field is None, which this path sets
                    if (set(r.tested_set) | tested_set | ctx.tested) & set(p.cleared):
                        continue  # the read runs only when the result's field is set, which this path leaves None
                    p_f = self._path_formula(p, worker_calls)
                    if p_f is None:
                        continue  # the worker calls' constant arguments rule this return out
                    for alt, sel_f in self._selection_formulas(selection, p.worker):
                        if not self.solver.satisfiable(read_f, sel_f, p_f):
                            continue
                        if definitions is None:
                            definitions = self._definitions(read_f)
                        # with what the enum's predicates say of each other (conditions.satisfiable_under_modes)
                        if not self.solver.satisfiable_under_modes((read_f, sel_f, p_f, *definitions)):
                            continue
                        if self._ruled_out(read_f, sel_f, p_f, definitions):
                            continue
                        read = ViolatingRead(id=r.id, file=r.file, line=r.line, consumer=r.consumer, shape=r.shape,
                                             path_condition=r.path_condition, context=how)
                        producer = ViolatingPath(worker=p.worker, method=p.method, file=p.file, line=p.line,
                                                 shape=p.shape, path_condition=p.path_condition, via=p.via,
                                                 branch=p.branch, left_none=p.cleared.get(missing or "", ""))
                        worker = f"{p.worker.rsplit('.', 1)[-1]}.{p.method.rsplit('.', 1)[-1]}"
                        when = f" when {p.branch}" if p.branch else ""
                        if missing is None or r.unsure:
                            uid = "U-" + violation_id(r.id, p.worker, p.method, p.shape)[2:]
                            if missing is not None:  # the path breaks the read where its root holds the result
                                why = r.unsure
                                message = (f"{r.consumer} dereferences {a.owner_name}.{'.'.join(r.attribute_path)} "
                                           f"({r.file}:{r.line}) through a name that may hold another value, and "
                                           f"{worker} can return without setting it ({p.file}:{p.line}){when}; "
                                           f"whether it holds the result there is not followed: {why}")
                            else:
                                message = (f"{r.consumer} dereferences {a.owner_name}.{'.'.join(r.attribute_path)} "
                                           f"({r.file}:{r.line}); whether {worker} sets it on its return at "
                                           f"{p.file}:{p.line}{when} is unknown: {why}")
                            if not any(u.id == uid for u in self.unknowns):
                                self.unknowns.append(Unknown(
                                    id=uid, field=r.field, owner=a.owner_name, attribute_path=list(r.attribute_path),
                                    read=read, producer=producer, why=why, message=message))
                            break
                        vid = violation_id(r.id, p.worker, p.method, p.shape)
                        if any(v.id == vid for v in out):
                            break
                        if "." in missing:
                            what = f"returns with {missing} None"
                        else:
                            what = "can return without setting it"
                        where = f": {producer.left_none}" if producer.left_none else ""
                        out.append(Violation(
                            id=vid, field=r.field, owner=a.owner_name, read=read, producer=producer,
                            worker_selection=C.render(alt) or "always",
                            attribute_path=missing.split("."),
                            message=(f"{r.consumer} reads {a.owner_name}.{'.'.join(r.attribute_path) if '.' in missing else r.field} "
                                     f"unconditionally ({r.file}:{r.line}) but {worker} {what} "
                                     f"({p.file}:{p.line}){when}{where}"),
                        ))
                        break
        return out

    def _unwritten_somewhere(self, r: FieldRead) -> bool:
        """Does some way to the read (one of its contexts) reach it without the scheduler's write?"""
        return any(not self._scheduler_sets_before(r, ctx) for ctx in self._context_map.get((r.module, r.consumer), []))

    def _scheduler_sets_before(self, r: FieldRead, ctx: Context) -> bool:
        """Does the scheduler set ``r.field`` (non-None) on the result before the read on every way
        there: in the reading function before the read, or in the caller before the call site
        (``batch_result.copy_done = ...`` before ``batch_result.copy_to_cpu()``)? A write on one
        branch only (path-sensitive) does not count."""
        got = self.symbols.indexed(f"{r.module}.{r.consumer}")
        at = [x.blocks for x in got[1].reads if x.line == r.line and x.attrs[:1] == [r.field]] if got else []
        if at and self._sets_in(r.module, got[1], r.field, r.line, at[0]):
            return True
        if ctx.caller is None:
            return False
        got = self.symbols.indexed(f"{ctx.caller[0]}.{ctx.caller[1]}")
        return got is not None and self._sets_in(ctx.caller[0], got[1], r.field, ctx.site.line, ctx.site.blocks)

    def _sets_in(self, module: str, f, field_name: str, line: int, blocks: list[str]) -> bool:
        """Does ``f`` write ``field_name`` non-None on a name holding the result on every way to the
        statement at ``line`` in ``blocks``?"""
        names = self.holders.of(module, f)
        return any(w.root in names and w.attrs == [field_name] and not isinstance(w.value, NoneValue)
                   and w.line < line and dominates(w.blocks, blocks) for w in f.writes)

    def _definitions(self, formula) -> list:
        """``X == <expr>`` for each bare atom ``X`` that the consumer class assigns once, from a
        boolean expression (``self.enable_overlap = not ...disable_overlap_schedule and not use_mlx()``)."""
        cls = self.analysis.scheduler_qn
        if cls is None:
            return []
        memo = self.__dict__.setdefault("_definition_memo", {})
        out = []
        for atom in sorted(C.atoms(formula)):
            if not atom.isidentifier():
                continue
            if atom not in memo:
                writes = list(self.symbols.attr_writes(cls, atom))
                value = writes[0][2].value if len(writes) == 1 else None
                memo[atom] = value.text if isinstance(value, (BoolOp, AttrOf, Opaque)) else None
            if memo[atom]:
                defined = C.parse(memo[atom])
                out.append(C.with_complements(C.equivalence(C.Atom(atom), defined), self.analysis.complements))
        return out

    def _worker_call_before(self, caller: tuple[str, str], site):
        """The worker call whose result the call ``site`` of ``caller`` passes: the one call of the
        worker that dominates the site with no other call of the worker in between; else None."""
        got = self.symbols.indexed(f"{caller[0]}.{caller[1]}")
        if got is None:
            return None
        prefix = f"self.{self.analysis.roles.worker_attr}."
        calls = [c for c in got[1].calls if c.callee.startswith(prefix) and c.line < site.line]
        if not calls:
            return None
        last = max(calls, key=lambda c: c.line)
        if sum(1 for c in calls if c.line == last.line) != 1 or not dominates(last.blocks, site.blocks):
            return None
        return last, got[1]

    def _relays(self, r: FieldRead, ctx: Context) -> list[RelayCall] | None:
        """The relay calls the result on this way to the read came from, where a relay handed it
        over (``result = self.run_batch(batch)`` in the loop the context starts at)."""
        if ctx.caller is None:
            got = self.symbols.indexed(f"{r.module}.{r.consumer}")
            return self.origins.relay_calls(r.module, got[1], {r.holder}) if got else None
        got = self.symbols.indexed(f"{ctx.caller[0]}.{ctx.caller[1]}")
        return self.origins.passed_at(ctx.caller[0], got[1], ctx.site) if got else None

    def _worker_calls(self, caller, site, relays: list[RelayCall] | None) -> list | None:
        """The worker calls whose result reaches the call ``site``: the one in the caller before
        it, else those of the relays it came from; None where not known."""
        direct = self._worker_call_before(caller, site) if caller else None
        if direct is not None or not relays:
            return [direct] if direct is not None else None
        out = []
        for relay in relays:
            calls = self.origins.worker_calls(relay)
            if calls is None:
                return None
            out.extend(calls)
        return out or None

    def _relay_sets(self, relays: list[RelayCall] | None, field_name: str, scheduler_writes: set[str]) -> C.Formula:
        """When the relays the result came from have set the field on it themselves (false where
        none does): each relay's writes, its parameters read as the call's arguments."""
        if not relays or field_name not in scheduler_writes:
            return C.Or(())
        each = []
        for relay in relays:
            expand = self._expander(relay.module, relay.facts.qualname)
            alternatives = [[Cond(_substitute(t, relay.arguments), pos) for t, pos in conds]
                            for conds in self.origins.sets(relay, field_name)]
            each.append(C.Or(tuple(C.conjunction(alt, expand) for alt in alternatives)))
        return C.all_of(*each)

    def _path_formula(self, p: ReturnPath, worker_calls: list | None) -> C.Formula | None:
        """The return path's condition as the worker calls that may make it decide it, complements
        written; None where those calls rule the path out. The same for every read and context that
        meets the path with the same calls: made once for each (the calls kept, so their ids stay theirs)."""
        key = (id(p), None if worker_calls is None else tuple(id(x) for wc in worker_calls for x in wc))
        if key not in self._path_formulas:
            conds = [Cond(*c) for c in p.conditions]
            alternatives = [conds] if worker_calls is None else self._decided_by_calls(p, worker_calls, conds)
            formula = (C.with_complements(C.Or(tuple(C.conjunction(alt) for alt in alternatives)), self.analysis.complements)
                       if alternatives else None)
            self._path_formulas[key] = (p, worker_calls, formula)
        return self._path_formulas[key][2]

    def _selection_formulas(self, selection: dict, worker: str) -> list[tuple[list, C.Formula]]:
        """Each selection alternative of the worker with its formula (complements written), made once."""
        if worker not in self._selections:
            comp = self.analysis.complements
            self._selections[worker] = [(alt, C.with_complements(C.conjunction(alt), comp))
                                        for alt in selection.get(worker, [[]])]
        return self._selections[worker]

    def _decided_by_calls(self, p: ReturnPath, worker_calls: list, conds: list) -> list[list]:
        """``conds`` of a return path as each worker call that may make it decides them (the calls
        of another method of the worker decide nothing); the calls that rule it out left out."""
        method = p.method.rsplit(".", 1)[-1]
        calls = [wc for wc in worker_calls if wc[0].callee.rsplit(".", 1)[-1] == method]
        if not calls:
            return [conds]
        out = []
        for wc in calls:
            got = self._decided_by_call(p, wc, conds)
            # calls that decide alike give one alternative: repeats would crowd the solver's atoms
            if got is not None and got not in out:
                out.append(got)
        return out

    def _decided_by_call(self, p: ReturnPath, worker_call, conds: list) -> list | None:
        """``conds`` of a return path of the worker method, with the parameters that the call gives a
        constant (or leaves at a constant default) decided. ``worker_call``: (the call, the facts of
        the function making it)."""
        call, caller_f = worker_call
        module = self.symbols.module_of_file(p.file)
        got = self.symbols.function_facts(f"{module}.{p.method}") if module else None
        if got is None:
            return conds
        g = got[1]
        bound = bind(g, call.args, call.keywords)
        spread = len(call.args) != call.npos  # a *args or **kwargs among the arguments
        keys = spread_keys(caller_f, call) if spread else None
        if keys is not None:
            # `**fwd_kwargs` whose every key is written as a literal: those parameters are free, the
            # others keep what the call gives them or their defaults
            bound.update({k: Opaque(f"({call.spread[0]})[{k!r}]") for k in keys if k not in bound})
            spread = False
        return decided(conds, constant_parameters(g, bound, spread=spread))

    def _result_fields(self, caller: tuple[str, str], conds: list) -> tuple[set[str], set[str]]:
        """(the owner's fields the call site's conditions say are None, those they say are set) on
        the result the caller holds (``if batch_result.delay_sample_func is None:
        batch_result.copy_to_cpu()``); a test of the owner's property that asks for a field
        (``if batch_result.has_sampled_token_ids:``, which returns ``isinstance(self.next_token_ids,
        torch.Tensor)``) says that field is set."""
        got = self.symbols.indexed(f"{caller[0]}.{caller[1]}")
        if got is None:
            return set(), set()
        names = self.holders.of(caller[0], got[1])
        none, set_ = set(), set()
        for text, positive in conds:
            m = re.fullmatch(r"\s*(\w+)\.(\w+)\s+is\s+(not\s+)?None\s*", text)
            if m and m.group(1) in names and m.group(2) in self.analysis.fields:
                (none if positive != bool(m.group(3)) else set_).add(m.group(2))
                continue
            m = re.fullmatch(r"\s*(\w+)\.(\w+)\s*", text)
            if m and m.group(1) in names and positive:
                asked = m.group(2) if m.group(2) in self.analysis.fields else self._property_asks(m.group(2))
                if asked:
                    set_.add(asked)
        return none, set_

    def _property_asks(self, name: str) -> str | None:
        """The field a property of the owner is true only with: ``return self.f is not None``,
        ``return isinstance(self.f, T)`` or ``return self.f``."""
        owner = self.analysis.owner
        module = self.symbols.module_of_file(owner.file)
        target = self.symbols.lookup_method(f"{module}.{owner.name}", name) if module else None
        if not target or not self.symbols.is_property(target):
            return None
        got = self.symbols.function_facts(target)
        rets = got[1].returns if got else []
        if len(rets) != 1 or rets[0].conds:
            return None
        text = rets[0].value.text
        m = re.fullmatch(r"\s*(?:isinstance\(\s*self\.(\w+)\s*,[^()]*\)|self\.(\w+)(?:\s+is\s+not\s+None)?)\s*", text)
        field_name = m and (m.group(1) or m.group(2))
        return field_name if field_name in self.analysis.fields else None

    def witnessed(self, checked: list[FieldRead]) -> set[str]:
        """The fields whose None a checked read's conditions, or its call site's, rule out (the
        return paths note where they leave them None)."""
        out = {g for r in checked for g in r.tested_set}
        for r in checked:
            for ctx in self._context_map.get((r.module, r.consumer), []):
                if ctx.caller:
                    out |= self._result_fields(ctx.caller, ctx.conds)[1]
        return out

    def _ruled_out(self, read_f, sel_f, p_f, definitions: list) -> bool:
        """Do the catalog's assumptions, when one speaks of these conditions (or of the definitions
        of their atoms), make them contradict?"""
        spoken = C.atoms(C.all_of(read_f, sel_f, p_f))
        if self._contradicted(spoken, read_f, sel_f, p_f):
            return True
        # a definition that speaks of an assumption's premise (`self._pp_spec_relay` is `... and
        # get_parallel().pp_size > 1 and ...`): asked again with the definitions
        defined = C.atoms(C.all_of(*definitions)) if definitions else set()
        return bool(defined & self._premises) and self._contradicted(defined, read_f, sel_f, p_f, *definitions)

    def _contradicted(self, spoken: set, *formulas) -> bool:
        if not spoken & self._premises:  # no assumption speaks of them
            return False
        if not self.solver.satisfiable(*formulas, *self._implications):
            self.assumptions_used.update(x["id"] for x in self.assumptions)
            return True
        return False

    def _contexts(self, reads: list[FieldRead]) -> dict:
        """Where each checked consumer gets its result from the polymorphic call.

        ``{(module, consumer): [(extra conditions, rename map, how, caller (module, consumer) or None)]}``: the direct consumer (the
        function that binds ``self.model_worker.<m>(...)``) with no extra condition, and each
        function it passes that result to, one level down, under the call site's condition; a callee
        on a composed object (``self.future_map.store_to_map``) gets its ``self.<attr>`` names mapped
        to the scheduler's through the object's constructor call (``FutureMap(..., self.spec_algorithm)``
        stored as ``self.spec_algo``).
        """
        out: dict = {}
        prefix = self.analysis.roles.worker_call_prefix
        held_by: dict = {}
        for r in reads:
            held_by.setdefault((r.module, r.consumer), set()).add(r.holder)
        if self.analysis.roles.hand_on_receivers:
            for caller in self._hand_on_receivers():
                held_by.setdefault(caller, set())
        # a function that calls the worker and passes the result to one that reads it receives it
        # too, reads of its own or none (relays and loops that only hand it on: hand_on_receivers)
        passing = set()
        for r in reads:
            if r.caller and r.caller_site:
                key = (self.symbols.module_of_file(r.caller_site.rsplit(":", 1)[0]), r.caller)
                if key not in held_by:
                    passing.add(key)
                    held_by[key] = set()
        receivers, direct = [], {}
        for module, consumer in sorted(held_by):
            got = self.symbols.indexed(f"{module}.{consumer}")
            if got is None:
                continue
            holders = self.holders.of(module, got[1])
            # a function that reads the worker's result: where it comes from, direct first
            held = sorted((not why.startswith(prefix), why) for why in {holders.why[h] for h in holders.from_worker}
                          if why in held_by[(module, consumer)] or not held_by[(module, consumer)])
            if (module, consumer) in passing:
                held = [h for h in held if h[1].startswith(prefix)]  # it calls the worker itself
            if held:
                direct[(module, consumer)] = _how(held[0][1], prefix)
                receivers.append((module, consumer, got[1], holders.from_worker))
        # the entry conditions of these functions alone are asked for: the tree is searched for their names
        self._entry_uses = name_uses(self.symbols, {consumer.rsplit(".", 1)[-1] for _, consumer in direct})
        for (module, consumer), how in direct.items():
            out[(module, consumer)] = [Context([], {}, how, entry=self._entry(consumer))]
        for module, consumer, f, poly in receivers:
            for c, rel2, g, params in self.holders.calls_passing(module, f, poly):
                key = (self.symbols.module_of_file(rel2), g.qualname)
                rename = self._constructor_renames(module, f, c.callee)
                arguments = {p: a.text for p, a in bind(g, c.args, c.keywords).items() if a.text}
                ctx = Context(list(c.conds), rename, f"called from {consumer}:{c.line}", (module, consumer), c,
                              arguments, entry=self._entry(consumer))
                out.setdefault(key, []).append(ctx)
                if g.cls == self.analysis.owner_name:
                    self._owner_contexts(g, ctx, out, {key})
                else:
                    self._consumer_contexts(key[0], g, {p for p, _ in params}, ctx, out, {key})
        return out

    def _entry(self, consumer: str) -> C.Formula:
        """The condition under which the function is entered (entries.py); true where not known."""
        found = entry_condition(self.symbols, consumer.rsplit(".", 1)[-1], self._entry_uses)
        if found is None:
            return C.And(())
        self.entries[consumer] = found
        return found.formula

    def _consumer_contexts(self, module: str, g, names: set, ctx: Context, out: dict, seen: set) -> None:
        """The consumer's methods that its method ``g`` hands the result ``ctx`` passes on to run on
        it too, under the calls' conditions and the early exits before them (``g``'s parameters read
        as the caller's arguments), three calls deep."""
        if len(seen) > 3:
            return
        for c, rel2, g2, params in self.holders.passed_on(module, g, names):
            key, arguments, here = self._step(rel2, g2, c, ctx)
            if key in seen:
                continue
            # a test of the result's own field where it is handed on rules worker paths out
            tested = ctx.tested.union(*(tested_fields(here, n, self.analysis.fields) for n in names))
            conds = [*ctx.conds, *(Cond(_substitute(_rename_self_attrs(text, ctx.rename), ctx.arguments), pos)
                                   for text, pos in here)]
            # an object the consumer holds: its `self.<attr>` names the consumer's through its constructor
            rename = self._constructor_renames(module, g, c.callee) if self.holders.in_composed(*key[:1], g2) \
                and not self.holders.in_composed(module, g) else ctx.rename
            inner = Context(conds, rename, f"{ctx.how}, through {g.qualname}:{c.line}", ctx.caller, ctx.site,
                            arguments, tested, ctx.written | _set_before(g, names, c), ctx.entry)
            out.setdefault(key, []).append(inner)
            if params == [("self", "")]:  # the owner's method, called on the result
                self._owner_contexts(g2, inner, out, seen | {key})
            else:
                self._consumer_contexts(key[0], g2, {p for p, _ in params}, inner, out, seen | {key})

    def _step(self, rel2: str, g2, c, ctx: Context) -> tuple[tuple[str, str], dict, list[Cond]]:
        """A call one step down from a context: the callee's key, its parameters read as the
        caller's arguments, and the call's conditions with the early exits before it."""
        arguments = {p: _substitute(a.text, ctx.arguments) for p, a in bind(g2, c.args, c.keywords).items() if a.text}
        here = [*c.conds, *(Cond(e, False) for e in c.exits)]
        return (self.symbols.module_of_file(rel2), g2.qualname), arguments, here

    def _hand_on_receivers(self) -> set[tuple[str, str]]:
        """(module, function) of each function that hands the worker's result on, reading it or not
        (``event_loop_normal``: ``self.process_batch_result(batch, result)``)."""
        inbound = [i for names in self.holders.inbound.values() for i in names.values()]
        return {(self.symbols.module_of_file(i.site.rsplit(":", 1)[0]), i.caller) for i in inbound}

    def _owner_contexts(self, g, ctx: Context, out: dict, seen: set) -> None:
        """The owner's methods that its method ``g`` calls on ``self`` run on the result ``ctx``
        passes, under the call's conditions too (``g``'s parameters read as the caller's arguments)."""
        if len(seen) > 3:
            return
        for c, rel2, g2 in self.holders.owner_calls(g):
            key, arguments, here = self._step(rel2, g2, c, ctx)
            if key in seen:
                continue
            # a test of the result's own field (`self.f`) is no atom of the caller: it rules worker paths out
            tested = ctx.tested | tested_fields(here, "self", self.analysis.fields)
            conds = [*ctx.conds, *(Cond(_substitute(text, ctx.arguments), pos) for text, pos in here
                                   if not re.search(r"\bself\.", text))]
            inner = Context(conds, ctx.rename, f"{ctx.how}, through {g.qualname}:{c.line}", ctx.caller, ctx.site,
                            arguments, tested, ctx.written, ctx.entry)
            out.setdefault(key, []).append(inner)
            self._owner_contexts(g2, inner, out, seen | {key})

    def _constructor_renames(self, module: str, f, callee: str) -> dict:
        """``self.a.m`` called on a composed object: {attr of the object: attr of the scheduler}."""
        parts = callee.split(".")
        if len(parts) != 3 or parts[0] != "self" or not f.cls:
            return {}
        cls_qn = f"{module}.{f.cls}"
        renames: dict = {}
        for _wmod, _wf, w in self.symbols.attr_writes(cls_qn, parts[1]):
            if not isinstance(w.value, CallValue):
                continue
            for obj_cls in self.symbols.attr_classes(cls_qn, parts[1]):
                init = self.symbols.lookup_method(obj_cls, "__init__")
                got = self.symbols.function_facts(init) if init else None
                if got is None:
                    continue
                params = [p for p, _ in got[1].params if p != "self"]
                passed = {params[i]: a for i, a in enumerate(w.value.args) if i < len(params)}
                passed.update(w.value.keywords)
                for iw in got[1].writes:
                    if iw.root == "self" and len(iw.attrs) == 1 and isinstance(iw.value, Name):
                        arg = passed.get(iw.value.name)
                        if isinstance(arg, Chain) and arg.root == "self" and len(arg.attrs) == 1:
                            renames[iw.attrs[0]] = arg.attrs[0]
        return renames

    def _expander(self, module: str, consumer: str):
        """Inline boolean properties of the receiver's class (``batch.is_spec_v2``)."""
        got = self.symbols.function_facts(f"{module}.{consumer}")
        if got is None:
            return None
        _, f = got
        types: dict[str, list[str]] = {}
        for name, ann in f.params:
            if name == "self" and f.cls:
                types[name] = [f"{module}.{f.cls}"]
            elif ann:
                cands = []
                for s in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", ann):
                    if s[:1].isupper() and s not in _NOT_CLASSES:
                        cands.extend(self.symbols.find_class(s))
                types[name] = cands
        memo: dict = {}

        def expand(root: str, attr: str) -> str | None:
            key = (root, attr)
            if key in memo:
                return memo[key]
            memo[key] = None
            for cqn in types.get(root, []):
                m = self.symbols.lookup_method(cqn, attr)
                if not m or not self.symbols.is_property(m):
                    continue
                got2 = self.symbols.function_facts(m)
                if got2 is None:
                    continue
                rets = [r for r in got2[1].returns if not isinstance(r.value, NoneValue)]
                if len(rets) != 1:
                    continue
                value = rets[0].value
                if isinstance(value, Name):  # `ret = <expr>; ...; return ret`
                    binds = [b for b in got2[1].bindings if b.target == value.name and b.line < rets[0].line]
                    if len(binds) == 1:
                        value = binds[0].value
                if value.text:
                    memo[key] = value.text
                    break
            return memo[key]

        return expand
