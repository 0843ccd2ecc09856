"""Call resolution on small programs, one construct each (tests/programs/): the exact edge sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from spectrace.errors import SpectraceError
from spectrace.source import package_source
from spectrace.tracer.graph import call_graph
from spectrace.tracer.index import ir_text, summarize_source
from spectrace.tracer.project import Project

PROGRAMS = Path(__file__).parent / "programs"


def project(name: str) -> Project:
    return Project(package_source(PROGRAMS / name), use_cache=False)


def edges(proj: Project, root: str, depth: int = 1, **options) -> set:
    """(caller, callee, resolution) with the program's module prefix dropped."""
    g = call_graph(proj, [root], depth=depth, **options)
    prefix = root.split(".")[0] + "."
    short = lambda qn: qn[len(prefix):] if qn.startswith(prefix) else qn  # noqa: E731
    return {(short(u), short(v), d["resolution"]) for u, v, d in g.edges(data=True)}


def test_source_of_a_single_module_a_package_and_a_named_package(tmp_path):
    src = package_source(PROGRAMS / "cha.py")
    assert (src.root, src.packages) == (PROGRAMS, ("cha",))
    src = package_source(PROGRAMS / "starpkg")
    assert (src.root, src.packages) == (PROGRAMS, ("starpkg",))
    assert package_source(PROGRAMS, package="starpkg").packages == ("starpkg",)
    whole = package_source(PROGRAMS).packages  # the packages first, then the loose modules beside them
    assert whole[0] == "starpkg" and "cha" in whole
    (tmp_path / "src" / "mylib").mkdir(parents=True)
    (tmp_path / "src" / "mylib" / "__init__.py").write_text("__version__ = '1.2'\n")
    src = package_source(tmp_path)
    assert (src.root, src.packages, src.version) == (tmp_path / "src", ("mylib",), "1.2")
    with pytest.raises(SpectraceError):
        package_source(tmp_path, package="absent")


def test_any_package_is_indexed_not_only_sglang():
    proj = Project(package_source(PROGRAMS / "starpkg"), use_cache=False)
    assert sorted(proj.files) == ["starpkg", "starpkg.tools", "starpkg.user"]
    assert proj.find_functions("tool") == ["starpkg.tools.tool"]


def test_text_scans_shared_with_a_helper_answer_as_one_pass(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for i in range(12):  # both halves define and name the same things, in varying order
        (pkg / "sub" / f"m{i:02}.py").write_text(
            f"class Base{i % 3}(object):\n    @property\n    def p{i % 4}(self): ...\n"
            f"class Child{i}(Base{(i + 1) % 3}, Mixin):\n    def make_{i % 5}(self): return Base{i % 2}()\n"
            + ("# Child0 named in a comment\n" if i % 4 == 0 else ""))
    questions = lambda t: (t.class_name_index(), t.base_name_index(), t.property_names(),  # noqa: E731
                           [t.mentions(w) for w in ("Base1", "Child0", "make_3", "absent")],
                           t.grep(rb"^class Child1\d", b"Child1"), t.defined_names("make"))
    plain = questions(Project(package_source(pkg), use_cache=False).texts)
    shared = Project(package_source(pkg), use_cache=False)
    with shared.texts.sharing():
        answers = questions(shared.texts)
        assert shared.texts._helper is not None  # the second half was scanned by the helper
    assert answers == plain
    # after the block the helper is gone: a new scan reads its half here
    assert shared.texts.mentions("Base2") == Project(package_source(pkg), use_cache=False).texts.mentions("Base2")
    assert shared.texts.mentions("Child11") == ["pkg.sub.m11"]
    assert list(answers[0]) == list(plain[0])  # names in the same order of first sight


def test_json_of_the_graph_as_built_is_networkx_node_link_data():
    """``map --format json`` writes the graph as built without networkx: the same text as
    networkx's node-link data of the converted graph, orders included."""
    import json

    import networkx as nx

    from spectrace.tracer.render import render_json

    proj = project("cha.py")
    built = call_graph(proj, ["cha.use"], depth=2, networkx=False)
    converted = built.to_networkx()
    assert render_json(built) == render_json(converted)
    default = lambda o: sorted(o) if isinstance(o, (set, frozenset)) else str(o)  # noqa: E731
    reference = {"schema": "spectrace-map", "schema_version": 1, **nx.node_link_data(converted, edges="edges")}
    assert render_json(built) == json.dumps(reference, indent=1, default=default) + "\n"
    assert built.number_of_edges() > 0


def test_class_hierarchy_expansion_reaches_every_override():
    proj = project("cha.py")
    assert edges(proj, "cha.use") == {
        ("use", "Base.run", "cha"), ("use", "Left.run", "cha"), ("use", "Deep.run", "cha"),
    }
    g = call_graph(proj, ["cha.use"], depth=1)
    assert all(d["polymorphic"] for _u, _v, d in g.edges(data=True))
    assert g.edges["cha.use", "cha.Deep.run"]["via"] == ["cha.Deep"]
    # a receiver built right there is exact: no expansion
    assert edges(proj, "cha.made_here") == {
        ("made_here", "Left.run", "attr-type"), ("made_here", "Left", "constructor"),
    }


def test_cha_and_exact_switches():
    proj = project("cha.py")
    assert edges(proj, "cha.use", cha=False) == {("use", "Base.run", "attr-type")}
    assert edges(proj, "cha.use", exact=True) == {("use", "Base.run", "attr-type")}


def test_exact_drops_call_sites_with_several_targets():
    proj = project("elements.py")
    # unpack(): zip over two lists; every site there has one target
    assert edges(proj, "elements.unpack", exact=True) == edges(proj, "elements.unpack")


def test_module_level_code_calls_from_a_module_pseudo_function():
    proj = project("module_level.py")
    assert proj.find_functions("module_level.<module>") == ["module_level.<module>"]
    assert edges(proj, "module_level.<module>") == {
        ("<module>", "register", "import"),  # the bare decorator
        ("<module>", "setup", "import"),  # in the class body and at top level
    }
    g = call_graph(proj, ["module_level.<module>"], depth=1)
    assert g.edges["module_level.<module>", "module_level.setup"]["sites"] == [18, 21]


def test_closure_calls_are_folded_into_the_defining_function():
    proj = project("closures.py")
    assert edges(proj, "closures.outer") == {
        ("outer", "helper", "closure"), ("outer", "other", "closure"),
    }
    g = call_graph(proj, ["closures.outer"], depth=1)
    assert g.edges["closures.outer", "closures.other"]["closure"] == "closures.outer.inner.innermost"
    assert g.edges["closures.outer", "closures.other"]["inner"] == "import"


def test_closures_shown_separately_on_request():
    proj = project("closures.py")
    assert edges(proj, "closures.outer", depth=3, closures="separate") == {
        ("outer", "outer.inner", "local"),
        ("outer.inner", "helper", "import"),
        ("outer.inner", "outer.inner.innermost", "local"),
        ("outer.inner.innermost", "other", "import"),
    }
    with pytest.raises(ValueError):
        call_graph(proj, ["closures.outer"], closures="inline")


def test_loop_variables_typed_by_list_annotations_and_attribute_chains():
    proj = project("elements.py")
    assert edges(proj, "elements.loop") == {
        ("loop", "Req.check", "attr-type"), ("loop", "Stats.mark", "attr-type"),
    }


def test_dict_items_and_enumerate():
    proj = project("elements.py")
    assert edges(proj, "elements.views") == {
        ("views", "Req.check", "attr-type"), ("views", "Stats.mark", "attr-type"),
    }


def test_comprehension_variables():
    proj = project("elements.py")
    assert edges(proj, "elements.comprehension") == {("comprehension", "Req.check", "attr-type")}


def test_tuple_unpacking_and_zip():
    proj = project("elements.py")
    assert edges(proj, "elements.unpack") == {
        ("unpack", "pair", "import"), ("unpack", "Stats.mark", "attr-type"),
        ("unpack", "Req.__init__", "constructor"), ("unpack", "Stats", "constructor"),
    }


def test_assigned_type_preferred_to_base_annotation():
    proj = project("concrete.py")
    assert edges(proj, "concrete.Holder.run") == {("Holder.run", "FastWorker.step", "attr-type"),
                                                  ("Holder.run", "Holder.draft", "property")}
    assert proj.attr_types("concrete.Holder", "worker") == {("inst", "concrete.FastWorker")}
    assert proj.attr_types("concrete.Holder", "draft") == {("inst", "concrete.FastWorker")}


def test_raise_calls_the_exception_class():
    proj = project("protocols.py")
    assert edges(proj, "protocols.fail") == {("fail", "Failure.__init__", "constructor")}


def test_loop_over_an_object_yields_what_its_next_returns():
    proj = project("protocols.py")
    assert edges(proj, "protocols.walk") == {
        ("walk", "Items", "constructor"), ("walk", "Item.use", "attr-type"),
        ("walk", "Items.__iter__", "protocol"), ("walk", "Items.__next__", "protocol"),
    }


def test_method_of_an_external_base_class_is_an_external_call():
    proj = project("protocols.py")
    assert edges(proj, "protocols.Cache.touch", external=True) == {
        ("Cache.touch", "collections.OrderedDict.move_to_end", "external"),
    }
    assert edges(proj, "protocols.Cache.touch") == set()


def test_star_import_binds_the_public_names():
    proj = Project(package_source(PROGRAMS / "starpkg"), use_cache=False)
    assert edges(proj, "starpkg.user.use") == {("user.use", "tools.tool", "import")}
    assert proj.resolve_symbol("starpkg.user", "_private") is None


def test_container_methods_are_external_calls_of_the_builtin_type():
    proj = project("elements.py")
    g = call_graph(proj, ["elements.views"], depth=1, external=True)
    assert ("elements.views", "builtins.dict.items") in g.edges


def test_arguments_flow_into_parameters():
    proj = project("arguments.py")
    assert edges(proj, "arguments.call_it") == {("call_it", "target", "argument")}
    # a bound method passed where the annotation names no class
    assert edges(proj, "arguments.call_typed") == {("call_typed", "Worker.step", "argument")}
    assert edges(proj, "arguments.call_kw") == {("call_kw", "other", "argument")}
    assert edges(proj, "arguments.call_kwargs") == {("call_kwargs", "target", "argument")}
    assert edges(proj, "arguments.call_args") == {("call_args", "other", "argument")}
    # a class passed and called: its instance's methods resolve
    assert edges(proj, "arguments.use_made") == {("use_made", "make", "import"),
                                                  ("use_made", "Worker.step", "attr-type")}
    assert proj.return_types("arguments.make") == {("inst", "arguments.Worker")}
    assert proj.param_types("arguments.call_it", "fn") == {("func", "arguments.target")}
    assert proj.param_types("arguments.Engine.__init__", "name") == set()  # only its default


def test_attribute_typed_by_constructor_arguments():
    proj = project("arguments.py")
    assert edges(proj, "arguments.Engine.run") == {("Engine.run", "Worker.step", "attr-type")}
    assert proj.attr_types("arguments.Engine", "worker") == {("inst", "arguments.Worker")}


def test_a_parameter_no_caller_passes_stays_unresolved():
    proj = project("arguments.py")
    assert {r for _u, _v, r in edges(proj, "arguments.never_called")} == {"unresolved"}


def test_decorators_are_calls_and_calls_of_decorated_functions_reach_the_wrapper():
    proj = project("decorators.py")
    assert edges(proj, "decorators.<module>") == {
        ("<module>", "traced", "import"), ("<module>", "register", "import"), ("<module>", "retry", "import"),
        ("<module>", "retry.decorator", "decorator"),  # what @retry(3) applies
    }
    assert edges(proj, "decorators.main") == {
        ("main", "traced.wrapper", "decorator"),  # work() and Service().handle()
        ("main", "plain", "import"),  # register returns the function itself
        ("main", "retry.decorator.again", "decorator"),
        ("main", "Service", "constructor"),
    }
    # the wrapper calls what its decorator decorates (every such function: context-insensitive)
    assert edges(proj, "decorators.traced.wrapper") == {
        ("traced.wrapper", "log", "import"),
        ("traced.wrapper", "work", "polymorphic"), ("traced.wrapper", "Service.handle", "polymorphic"),
    }
    assert edges(proj, "decorators.retry.decorator.again") == {("retry.decorator.again", "flaky", "argument")}


def test_lambdas_call_what_their_body_calls():
    proj = project("lambdas.py")
    assert edges(proj, "lambdas.Holder.fire") == {("Holder.fire", "g", "lambda")}
    g = call_graph(proj, ["lambdas.direct"], depth=1)  # written and called in one function: one edge
    assert set(g.edges) == {("lambdas.direct", "lambdas.g")} and g.edges["lambdas.direct", "lambdas.g"]["sites"] == [13, 14]
    assert edges(proj, "lambdas.apply") == {("apply", "h", "lambda")}  # passed by `passed`
    # a lambda's own parameter is not the module's function of that name
    assert {(u, v) for u, v, _r in edges(proj, "lambdas.own_param")} == {("own_param", "?lambdas.own_param@19:4")}


def test_for_and_with_call_the_protocol_methods():
    proj = project("contexts.py")
    assert edges(proj, "contexts.uses") == {
        ("uses", "Span", "constructor"), ("uses", "Span.__enter__", "protocol"), ("uses", "Span.__exit__", "protocol"),
        ("uses", "Numbers", "constructor"), ("uses", "Numbers.__iter__", "protocol"),
        ("uses", "NumberIter.__next__", "protocol"),
    }
    assert edges(proj, "contexts.plain") == set()  # builtins: no protocol edge, nothing unresolved


def test_dataclass_fields_are_typed_by_the_constructor_arguments():
    proj = project("factories.py")
    # `allocator: object` set from a parameter annotated Allocator, which its one caller passes a
    # PagedAllocator: that class, not every override
    assert edges(proj, "factories.Owner.step") == {("Owner.step", "PagedAllocator.flush", "attr-type")}
    # `cache: object` set from a factory returning RadixCache or ChunkCache
    assert edges(proj, "factories.Owner.clear") == {
        ("Owner.clear", "Cache.reset", "polymorphic"), ("Owner.clear", "RadixCache.reset", "polymorphic"),
        ("Owner.clear", "RadixCache.backup", "attr-type"),
    }
    # NamedTuple fields bound by position
    assert edges(proj, "factories.Owner.positional") == {
        ("Owner.positional", "RadixCache.backup", "attr-type"), ("Owner.positional", "PagedAllocator.flush", "attr-type"),
    }
    assert proj.attr_types("factories.BuildResult", "size") == set()  # annotated with a type: no flow


def test_partial_objects_call_their_function_through_keyword_dicts():
    proj = project("factories.py")
    assert edges(proj, "factories.Worker.forward") == {
        ("Worker.forward", "Counter.publish", "argument"),  # partial(...) stored in a dict passed as **kwargs
        ("Worker.forward", "done", "argument"),  # functools.partial(...) passed by keyword
    }
    assert proj.param_types("factories.Worker.forward", "on_publish") == {("func", "factories.Counter.publish")}


def test_property_returning_an_attribute_takes_the_receivers_assigned_types():
    proj = project("factories.py")
    assert edges(proj, "factories.FastSpec.forward") == {("FastSpec.forward", "FastDraft.draft", "attr-type"),
                                                         ("FastSpec.forward", "SpecBase.draft_worker", "property")}
    # nothing assigned on the receiver: the property's annotation, expanded
    assert edges(proj, "factories.PlainSpec.forward") == {
        ("PlainSpec.forward", "Draft.draft", "cha"), ("PlainSpec.forward", "FastDraft.draft", "cha"),
        ("PlainSpec.forward", "SlowDraft.draft", "cha"), ("PlainSpec.forward", "SpecBase.draft_worker", "property"),
    }


def test_self_cls_and_super_in_a_base_method_reach_the_subclasses():
    proj = project("inherited.py")
    assert edges(proj, "inherited.Shape.describe") == {
        ("Shape.describe", "Shape.area", "cha"), ("Shape.describe", "Square.area", "cha")}
    assert edges(proj, "inherited.Shape.make") == {
        ("Shape.make", "Shape.check", "cha"), ("Shape.make", "Square.check", "cha")}
    assert edges(proj, "inherited.Mixin.save") == {("Mixin.save", "Store.save", "cha")}
    g = call_graph(proj, ["inherited.Mixin.save"], depth=1)
    assert g.edges["inherited.Mixin.save", "inherited.Store.save"]["via"] == ["inherited.Both"]
    # without expansion: the class's own MRO only
    assert edges(proj, "inherited.Shape.describe", cha=False) == {("Shape.describe", "Shape.area", "self")}
    assert edges(proj, "inherited.Mixin.save", cha=False) == {
        ("Mixin.save", "?inherited.Mixin.save@35:8", "unresolved")}
    # a subclass's own self call stays exact when nothing below it overrides
    assert edges(proj, "inherited.Square.check") == set()


def test_property_reads_and_writes_run_the_getter_and_the_setter():
    proj = project("properties.py")
    assert edges(proj, "properties.main") == {
        ("main", "Account.__init__", "constructor"), ("main", "Account.plain", "attr-type"),
        ("main", "Account.balance", "property")}
    g = call_graph(proj, ["properties.main"], depth=1)
    assert g.edges["properties.main", "properties.Account.balance"]["sites"] == [31, 32]
    # the setter's body is the property's too, and the getter stays a property
    assert edges(proj, "properties.Account.balance") == {
        ("Account.balance", "compute", "import"), ("Account.balance", "audit", "import")}
    assert proj.func("properties.Account.balance").kind == "property"


def test_an_annotated_parameter_is_what_every_caller_passes():
    proj = project("refined.py")
    # built through a factory's class, with a dict(...) of keywords: the one caller passes Fast
    assert edges(proj, "refined.Spec.run") == {
        ("Spec.run", "Fast.step", "attr-type"), ("Spec.run", "Spec.target", "property")}
    # one caller passes something unknown: the annotation, expanded
    assert edges(proj, "refined.any_worker") == {
        ("any_worker", "Worker.step", "cha"), ("any_worker", "Fast.step", "cha"), ("any_worker", "Slow.step", "cha")}
    assert proj.param_types("refined.Spec.__init__", "target") == {("inst", "refined.Fast")}


def test_a_literal_index_picks_one_item_of_a_list_or_tuple():
    proj = project("indexed.py")
    assert edges(proj, "indexed.first") == {("first", "a", "import")}
    assert edges(proj, "indexed.last") == {("last", "c", "import")}
    assert edges(proj, "indexed.literal") == {("literal", "b", "import")}
    assert edges(proj, "indexed.reordered") == {("reordered", "a", "polymorphic"), ("reordered", "b", "polymorphic")}
    assert edges(proj, "indexed.by_key") == {("by_key", "c", "import")}


def test_keywords_handed_on_through_kwargs_reach_the_parameter():
    proj = project("forwarded.py")
    assert edges(proj, "forwarded.target") == {("target", "greet", "argument")}
    assert proj.param_types("forwarded.target", "action") == {("func", "forwarded.greet")}


def test_appended_and_extended_items_are_elements():
    proj = project("added.py")
    assert edges(proj, "added.Button.click") == {("Button.click", "save", "import")}
    assert edges(proj, "added.local") == {("local", "log", "import")}


def test_lambdas_as_nodes_are_named_as_pycg_names_them():
    proj = Project(package_source(PROGRAMS / "lambdas.py"), use_cache=False, lambdas="nodes")
    # a lambda is a function of its own, <lambdaN> in its scope, numbered in source order; its
    # calls are its own, not the defining function's
    assert edges(proj, "lambdas.direct") == {("direct", "direct.<lambda1>", "lambda")}
    assert edges(proj, "lambdas.direct.<lambda1>") == {("direct.<lambda1>", "g", "import")}
    assert edges(proj, "lambdas.Holder.fire") == {("Holder.fire", "Holder.__init__.<lambda1>", "lambda")}
    assert edges(proj, "lambdas.apply") == {("apply", "passed.<lambda1>", "lambda")}  # passed by `passed`
    assert edges(proj, "lambdas.passed") == {("passed", "apply", "import")}
    # the lambda's parameter is typed by what its callers pass, as any function's
    assert edges(proj, "lambdas.own_param.<lambda1>") == {("own_param.<lambda1>", "g", "argument")}
    with pytest.raises(ValueError):
        Project(package_source(PROGRAMS / "lambdas.py"), lambdas="anonymous")


def test_values_followed_through_assignments_generators_builtins_and_keys():
    proj = project("values.py")
    assert edges(proj, "values.rebound") == {("rebound", "f1", "polymorphic"), ("rebound", "f2", "polymorphic")}
    assert edges(proj, "values.starred") == {("starred", "f3", "import")}  # rest == [f2, f3]
    assert edges(proj, "values.generated") == {("generated", "gen", "import"), ("generated", "f3", "import")}
    assert edges(proj, "values.callbacks") == {("callbacks", "f1", "callback"), ("callbacks", "f2", "callback")}
    assert edges(proj, "values.callbacks", external=True) >= {("callbacks", "builtins.sorted", "external"),
                                                              ("callbacks", "builtins.map", "external")}
    assert edges(proj, "values.strings", external=True) == {("strings", "builtins.str.join", "external")}
    assert edges(proj, "values.keyed") == {("keyed", "f1", "import"), ("keyed", "f2", "import")}
    assert edges(proj, "values.take") == {("take", "f3", "argument")}  # called as `t(f3)`, t = take
    # `raise ValueError` (no call written, none into the tree) is no edge, even with external calls
    assert edges(proj, "values.raising", external=True) == {("raising", "Ordered", "constructor")}


def test_exact_keeps_one_target_per_call_site():
    proj = project("values.py")
    assert edges(proj, "values.rebound", exact=True) == {("rebound", "f1", "import")}  # a() may be f1 or f2


def test_a_dict_entry_is_what_the_writes_before_the_read_leave():
    proj = project("entries.py")
    # module level: `d[k] = f` replaces the display's value, also under two keys; a function's
    # `d[param] = f` may run before any read
    assert edges(proj, "entries.<module>") == {
        ("<module>", "f2", "import"), ("<module>", "f3", "import"), ("<module>", "register", "import"),
        ("<module>", "Settings", "constructor"), ("<module>", "Settings.update", "attr-type")}
    assert edges(proj, "entries.overwritten") == {("overwritten", "f2", "import"), ("overwritten", "f3", "import")}
    assert edges(proj, "entries.updated") == {("updated", "f2", "import"), ("updated", "f3", "import")}
    # a write under an `if` may not run; one later in a loop runs before the next pass's read
    assert edges(proj, "entries.branched") == {("branched", "f1", "polymorphic"), ("branched", "f2", "polymorphic")}
    assert edges(proj, "entries.looped") == {("looped", "f1", "polymorphic"), ("looped", "f2", "polymorphic")}
    # an inner dict read through a name of its own sees the writes through the outer one
    assert edges(proj, "entries.nested_read") == {("nested_read", "f1", "import"), ("nested_read", "f2", "import")}
    # a key not known: any value; a function reading a global: any value it held
    assert {e[1] for e in edges(proj, "entries.any_key")} == {"f1", "f2", "f3"}
    assert {e[1] for e in edges(proj, "entries.later")} == {"f1", "f2"}
    assert edges(proj, "entries.set_default") == {("set_default", "f2", "import")}


def test_exact_keeps_a_dict_entry_overwritten_before_the_read():
    proj = project("entries.py")
    assert edges(proj, "entries.overwritten", exact=True) == edges(proj, "entries.overwritten")
    assert edges(proj, "entries.branched", exact=True) == set()  # f1 or f2: no one target


def test_the_index_orders_entry_writes_and_spans_compound_statements():
    summary = summarize_source((PROGRAMS / "entries.py").read_bytes(), "entries.py")
    top = summary.functions["<module>"]
    written = [(line, ir_text(target)) for line, target, _value in top.stores]  # REGISTRY's one bind orders nothing
    assert written == [(17, "GLOBAL"), (18, "GLOBAL['a']"), (21, "NESTED"), (22, "NESTED['x']['y']"),
                       (98, "SETTINGS"), (99, "SETTINGS['level']")]
    # an object's own update() gives its name no dict display
    assert summary.globals["SETTINGS"] == ("c", ("n", "Settings"), ())
    assert summary.functions["register"].stores == [(29, ("s", ("n", "REGISTRY"), (("n", "key"),)), ("n", "f3"))]
    updated = summary.functions["updated"]
    assert [(line, ir_text(t), ir_text(v)) for line, t, v in updated.stores] == [
        (45, "d['a']", "f2"), (47, "d['a']", "f3")]
    assert summary.functions["branched"].branches == [(53, 54)]
    assert summary.functions["looped"].branches == [(60, 62)]


def test_an_imported_dicts_entries_are_named_in_its_own_module(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "table.py").write_text('def f():\n    pass\n\n\nTABLE = {"a": f}\n')
    (pkg / "use.py").write_text('from pkg.table import TABLE\n\n\ndef f():\n    pass\n\n\ndef g():\n    TABLE["a"]()\n')
    proj = Project(package_source(pkg), use_cache=False)
    assert edges(proj, "pkg.use.g") == {("use.g", "table.f", "import")}


def test_an_objects_own_update_makes_it_no_dict():
    proj = project("entries.py")
    assert edges(proj, "entries.configured", external=True) == {("configured", "Settings.get", "attr-type")}
