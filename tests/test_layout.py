"""The package layout keeps its promises: folders map to subpackages, inner layers never import
the CLI, no module imports itself through others (no import cycle, imports inside functions
counted), and no product module grows past what one reader can hold."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]


def _setup_folders() -> dict[str, str]:
    """setup.py's FOLDERS (read, not imported: importing setup.py would run setup())."""
    for node in ast.parse((ROOT / "setup.py").read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "FOLDERS":
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no FOLDERS")


FOLDERS = _setup_folders()
MAX_LINES = 500


def product_modules() -> dict[str, Path]:
    found = {}
    for package, folder in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts if p != "__init__"]
            found[".".join([package, *parts])] = path
    return found


def import_graph() -> nx.DiGraph:
    """Module -> modules it imports (at any level of the file, lazy imports included)."""
    modules = product_modules()
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
                # `from pkg import mod` depends on mod, and on pkg's __init__ unless the importer
                # lives inside pkg (its package is initialised before any of its modules runs).
                named = [f"{base}.{alias.name}" for alias in node.names]
                inside = name.startswith(base + ".")
                targets = [t for t in named if t in modules]
                if not inside or len(targets) < len(named):  # a name of pkg/__init__ itself
                    targets.append(base)
            else:
                continue
            graph.add_edges_from((name, t) for t in targets if t in modules and t != name)
    return graph


def test_every_product_folder_is_mapped():
    assert set(FOLDERS.values()) >= {"planlineage", "cli", "planner", "registry", "emitter", "lifecycle"}
    assert all((ROOT / folder / "__init__.py").exists() for folder in FOLDERS.values())


def test_no_product_folder_holds_a_symlink():
    """A link (committed once: ``planlineage/cli -> /elsewhere/cli``) makes a checkout import
    another tree's code and a wheel package it twice; setup.py maps the folders instead."""
    links = [
        str(path.relative_to(ROOT))
        for folder in set(FOLDERS.values())
        for path in [ROOT / folder, *(ROOT / folder).rglob("*")]
        if path.is_symlink()
    ]
    assert links == []


def test_inner_layers_never_import_the_cli():
    graph = import_graph()
    offenders = [
        (module, target)
        for module, target in graph.edges
        if not module.startswith("planlineage.cli")
        and target.startswith("planlineage.cli")
        and module != "planlineage.__main__"  # `python -m planlineage` is the command line
    ]
    assert offenders == []


def test_no_module_imports_itself_through_others():
    """No import cycle anywhere in the product, imports inside functions included: a cycle hidden
    in a function-level import is still two modules that cannot be understood apart."""
    graph = import_graph()
    cycles = [sorted(group) for group in nx.strongly_connected_components(graph) if len(group) > 1]
    assert cycles == [], "modules that import each other (move what they share to a module both import): " + str(
        [next(nx.simple_cycles(graph.subgraph(group))) for group in cycles]
    )


def test_no_product_module_is_over_the_limit():
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in product_modules().items()}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


#: What each engine is made of, under the same names in planner/ (Flink) and spark/.
ENGINE_PARTS = ("provision", "child", "request", "walk", "naming", "columns")


def test_the_engines_stand_side_by_side_and_share_one_splitter():
    modules = product_modules()
    for engine in ("planlineage.planner", "planlineage.spark"):
        assert [part for part in ENGINE_PARTS if f"{engine}.{part}" not in modules] == [], engine
    # One statement splitter, neither engine's own: both import it from its neutral place.
    assert [m for m in modules if m.endswith(".script")] == ["planlineage.script"]
    graph = import_graph()
    assert {"planlineage.planner.request", "planlineage.spark.request"} <= set(graph.predecessors("planlineage.script"))
    # Spark borrows nothing of Flink's engine (what both need lives outside either).
    assert [
        t for m, t in graph.edges if m.startswith("planlineage.spark") and t.startswith("planlineage.planner")
    ] == []


PLATFORM_ADAPTERS = ("planlineage.streampark", "planlineage.dinky", "planlineage.gateway")
WATCH_CORE = "planlineage.watch"


def _room(module: str) -> str | None:
    """The platform adapter or the watcher core ``module`` belongs to (None: neither)."""
    return next((p for p in (*PLATFORM_ADAPTERS, WATCH_CORE) if module == p or module.startswith(p + ".")), None)


def test_platform_adapters_are_siblings_around_one_watcher_core():
    """StreamPark, Dinky and the SQL Gateway each feed the watcher core; none imports another (what
    two of them share belongs in the core), and the core imports none of them."""
    assert {*PLATFORM_ADAPTERS, WATCH_CORE} <= set(FOLDERS)
    graph = import_graph()
    between = sorted(
        (m, t)
        for m, t in graph.edges
        if _room(m) in PLATFORM_ADAPTERS and _room(t) in PLATFORM_ADAPTERS and _room(m) != _room(t)
    )
    assert between == []
    assert sorted((m, t) for m, t in graph.edges if _room(m) == WATCH_CORE and _room(t) in PLATFORM_ADAPTERS) == []
    # Both watchers stand on the core: the loop and the ledger are theirs, not copies.
    for adapter in ("planlineage.streampark.watcher", "planlineage.dinky.watcher"):
        assert {"planlineage.watch.loop", "planlineage.watch.ledger"} <= set(graph.successors(adapter)), adapter


ERRORS_MODULE = "planlineage.errors"
#: Exceptions that never reach a user as such: caught where they are raised and turned into one of
#: planlineage.errors' classes, a warning, or a decision. A new one belongs here only for that reason.
INTERNAL_EXCEPTIONS = {
    "planlineage.lifecycle.compile_queue.QueueFailed": "the run is dropped with its reason (runner, watchers)",
    "planlineage.lifecycle.run_rows.RunChanged": "the run changed under a write: decide again",
    "planlineage.lifecycle.spool.SpoolFull": "a fail-open warning: the item is dropped",
    "planlineage.listener_conf.syntax.SyntaxProblem": "the conf commands fail open: a warning, the input echoed",
    "planlineage.planner.columns.algebra.Unreadable": "an expression the column walk cannot read: INDIRECT",
    "planlineage.registry.filesystem.LocationError": "a path a naming rule cannot name: a WARN",
    "planlineage.registry.javauri.JavaURISyntaxError": "a URI a naming rule cannot name: a WARN",
    "planlineage.registry.jdbc.JdbcParseError": "a JDBC URL a naming rule cannot name: a WARN",
    "planlineage.registry.jdbc.JdbcUnsupported": "a JDBC URL a naming rule cannot name: a WARN",
    "planlineage.registry.resolvers.ResolverConfigError": "raised again as ConfigError naming the rules file",
    "planlineage.registry.rules.TemplateError": "raised again as ConfigError naming the rules file",
    "planlineage.registry.rules._TableFieldMissing": "the rule does not apply to this table",
    "planlineage.registry.rule_result.MissingOption": "the rule does not apply to these options",
    "planlineage.store.migrations.NewerSchemaError": "raised again as StoreError by both stores",
    "planlineage.dinky.sql.Unsupported": "a WARN: the task is not reported (watcher, history replay)",
    "planlineage.doctor.sources.UnreadableLine": "the line is skipped and counted in the report",
    "planlineage.gateway.job_script.NotReportable": "the job is not reported: one line of the proxy's",
    "planlineage.gateway.job_script.NoSink": "a query's job: not reported, said with --verbose only",
    "planlineage.gateway.proxy.UpstreamError": "the proxy's own 502/504 answer to the client",
    "planlineage.gateway.submissions.RecordedElsewhere": "another proxy recorded the job: its run id is answered",
    "planlineage.streampark.sql.DecodeError": "the app is not reported, said why (watcher, history replay)",
    "planlineage.streampark.sql.TooLarge": "a WARN naming the limit: the app is not reported",
}


def _module_trees() -> dict[str, ast.Module]:
    return {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in product_modules().items()}


def test_exit_codes_are_defined_in_the_one_table_only():
    """Every command returns a member of planlineage.errors.ExitCode: no module defines an EXIT_*
    number of its own (a float EXIT_*_SECONDS is a time, not a code)."""
    found = set()
    for name, tree in _module_trees().items():
        if name == ERRORS_MODULE:
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                value = node.value
                a_time = isinstance(value, ast.Constant) and isinstance(value.value, float)
                found.update(f"{name}.{n}" for n in names if n.startswith("EXIT_") and not a_time)
            elif isinstance(node, ast.ClassDef) and "exit" in node.name.lower():
                found.add(f"{name}.{node.name}")
    assert found == set()


#: Where exit codes are returned: the commands.
CLI_PACKAGE = "planlineage.cli."


def _bare_exit_codes(module: str, tree: ast.Module) -> list[str]:
    """Exit codes spelled as numbers in ``tree``: `return 2` (or `return 1 if … else 0`) in a
    function that gives an exit code (a command, `cmd_…` or `main`, or one that returns an
    ExitCode elsewhere), and `sys.exit(1)` / `exit(1)` / `SystemExit(1)` / `os._exit(1)`
    anywhere."""

    def numbers(node: ast.AST | None) -> list[int]:
        if isinstance(node, ast.IfExp):
            return numbers(node.body) + numbers(node.orelse)
        if isinstance(node, ast.BoolOp):
            return [n for value in node.values for n in numbers(value)]
        is_int = isinstance(node, ast.Constant) and type(node.value) is int
        return [node.value] if is_int else []

    def gives_exit_codes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        returns = [n.value for n in ast.walk(function) if isinstance(n, ast.Return) and n.value is not None]
        named = any("ExitCode" in ast.unparse(value) for value in returns)
        return named or function.name == "main" or function.name.startswith("cmd_")

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and gives_exit_codes(node):
            found += [
                (n.lineno, f"{module}:{n.lineno} returns {numbers(n.value)}")
                for n in ast.walk(node)
                if isinstance(n, ast.Return) and numbers(n.value)
            ]
        elif isinstance(node, ast.Call) and node.args and numbers(node.args[0]):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in ("exit", "SystemExit", "_exit"):
                found.append((node.lineno, f"{module}:{node.lineno} exits with {numbers(node.args[0])}"))
    return [line for _, line in sorted(set(found))]


def test_commands_give_their_exit_codes_by_name():
    """A command returns (or exits with) a member of planlineage.errors.ExitCode, never a number:
    a bare `return 2` is the scattered table the issue removed, under another spelling."""
    trees = _module_trees()
    found = [f for name, tree in trees.items() if name.startswith(CLI_PACKAGE) for f in _bare_exit_codes(name, tree)]
    assert len([name for name in trees if name.startswith(CLI_PACKAGE)]) > 10  # the scan sees the commands
    assert found == []


def test_the_exit_code_scan_sees_a_number_however_it_is_returned():
    source = """
import sys
def cmd_fake(args):
    if args.a:
        return 2
    if args.b:
        sys.exit(1)
    if args.c:
        raise SystemExit(3)
    return ExitCode.OK if args.d else 1
def _said(note, code):
    if not note:
        return 0
    return ExitCode.INPUT
def width():
    return 80
"""
    found = _bare_exit_codes("planlineage.cli.fake", ast.parse(source))
    assert [line.split(" ", 1)[1] for line in found] == [
        "returns [2]",
        "exits with [1]",
        "exits with [3]",
        "returns [1]",
        "returns [0]",
    ]


def _exception_classes() -> dict[str, str]:
    """``module.Class`` -> module of every exception class defined in the product (nested ones
    too), found by its bases: a builtin exception, another exception of the product, or a
    library's ``…Error``."""
    import builtins

    builtin = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    classes = {}
    for name, tree in _module_trees().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
                classes[f"{name}.{node.name}"] = (name, node.name, bases)
    exceptions = {n for _, n, bases in classes.values() if bases & builtin or any(b.endswith("Error") for b in bases)}
    while True:  # subclasses of those, to a fixed point
        more = {n for _, n, bases in classes.values() if bases & exceptions} - exceptions
        if not more:
            break
        exceptions |= more
    return {full: module for full, (module, n, _) in classes.items() if n in exceptions}


def test_exceptions_a_user_can_read_live_in_the_one_error_module():
    """An exception whose message can end a command is defined in planlineage.errors (one
    hierarchy under PlanlineageError, said by cli.main.failed); the others are listed above with
    why they never reach a user."""
    found = _exception_classes()
    assert len(found) > len(INTERNAL_EXCEPTIONS)  # the scan finds what it should
    outside = {full for full, module in found.items() if module != ERRORS_MODULE and full not in INTERNAL_EXCEPTIONS}
    assert outside == set()
    assert set(INTERNAL_EXCEPTIONS) <= set(found)  # a class listed and since gone: drop it from the list


def _misnamed_loggers(module: str, tree: ast.Module) -> list[str]:
    """``getLogger(…)`` calls of ``tree`` whose name is another module's: a `planlineage.…`
    literal, an f-string with such a head, or a module-level constant bound to one."""
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    misnamed = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "getLogger":
            literal = node.args[0] if node.args else None
            text = literal.value if isinstance(literal, ast.Constant) else None
            if isinstance(literal, ast.Name):
                text = constants.get(literal.id)  # LOGGER = "planlineage.emitter"; getLogger(LOGGER)
            if isinstance(literal, ast.JoinedStr) and isinstance(literal.values[0], ast.Constant):
                text = literal.values[0].value  # f"planlineage.x.{...}": its literal head
            if isinstance(text, str) and text.startswith("planlineage") and text != module:
                misnamed.append(f"{module}: getLogger({text!r})")
    return misnamed


def test_loggers_are_named_by_their_module():
    """``getLogger(__name__)`` (logging or planlineage.lazylog): a literal `planlineage.…` name is
    another module's (`planlineage.emitter` was used by ten modules that are not the emitter)."""
    assert [m for name, tree in _module_trees().items() for m in _misnamed_loggers(name, tree)] == []


def test_the_logger_scan_sees_another_modules_name_however_it_is_spelled():
    source = """
import logging
from planlineage import lazylog
LOGGER = "planlineage.emitter"
OWN = "planlineage.lifecycle.runs"
a = logging.getLogger("planlineage.emitter")
b = lazylog.getLogger(LOGGER)
c = logging.getLogger(f"planlineage.emitter.{__name__}")
d = logging.getLogger(__name__)
e = logging.getLogger(OWN)
"""
    found = _misnamed_loggers("planlineage.lifecycle.runs", ast.parse(source))
    assert sorted(found) == [
        "planlineage.lifecycle.runs: getLogger('planlineage.emitter')",
        "planlineage.lifecycle.runs: getLogger('planlineage.emitter')",
        "planlineage.lifecycle.runs: getLogger('planlineage.emitter.')",
    ]


#: The one module that picks an engine by its name (``--engine``, a compile job's ``engine``).
ENGINE_PICKER = "planlineage.engines"


def _engine_names() -> set[str]:
    """The engine names the picker knows (read, not imported: the layout test imports no product code)."""
    tree = ast.parse(product_modules()[ENGINE_PICKER].read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "_MODULES":
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{ENGINE_PICKER} has no _MODULES")


#: The package whose engine names are a platform's data, not a branch of planlineage's: StreamPark
#: keeps Flink and Spark applications in two tables (t_flink_app, t_spark_app) with their own state
#: codes and operations, and its adapter names the table a row came from with its FLINK/SPARK
#: constants (streampark/states.py). A compile job it queues still names its engine for the picker.
ENGINE_NAMES_AS_PLATFORM_DATA = "planlineage.streampark."


def _engine_constants(trees: dict[str, ast.Module], names: set[str]) -> dict[str, dict[str, str]]:
    """module -> {name: engine name} for every module-level name bound to an engine name, and
    every such name a module imports from another (`SPARK = "spark"` then `engine == SPARK` is
    the same branch as `engine == "spark"`)."""
    bound = {
        module: {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant)
            if node.value.value in names
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
        }
        for module, tree in trees.items()
    }
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in bound:
                for alias in node.names:
                    if alias.name in bound[node.module]:
                        bound[module][alias.asname or alias.name] = bound[node.module][alias.name]
    return bound


def _engine_literals(node: ast.AST, names: set[str], constants: dict[str, str]) -> list[str]:
    """The engine names written in ``node``: a string, a name bound to one, or either in a
    tuple/list/set."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    found = []
    for item in items:
        if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value in names:
            found.append(item.value)
        elif isinstance(item, ast.Name | ast.Attribute):
            name = item.id if isinstance(item, ast.Name) else item.attr
            if name in constants:
                found.append(constants[name])
    return found


def _engine_branches(module: str, tree: ast.Module, names: set[str], constants: dict[str, str]) -> list[str]:
    """Where ``tree`` decides something by an engine's name: a comparison (`==`, `!=`, `in`,
    `is`), a `match` case, or `--engine` choices of its own."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            parts = (node.left, *node.comparators)
            literals = [v for part in parts for v in _engine_literals(part, names, constants)]
            if literals:
                found.append(f"{module}:{node.lineno} compares with {literals}")
        elif isinstance(node, ast.match_case):
            values = [n.value for n in ast.walk(node.pattern) if isinstance(n, ast.MatchValue)]
            literals = [v for value in values for v in _engine_literals(value, names, constants)]
            if literals:
                found.append(f"{module}:{node.pattern.lineno} matches {literals}")
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("startswith", "endswith"):
            prefixes = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            named = [e for text in prefixes for e in names if re.match(rf"{e}([-_:/]|$)", text, re.IGNORECASE)]
            # key.startswith("spark-"): the engine's name read back from a key built with it (a
            # dotted "spark.sql.…" is a configuration key of Spark's, not an engine's name)
            if named:
                found.append(f"{module}:{node.lineno} tests a prefix of {named}")
        elif isinstance(node, ast.keyword) and node.arg == "choices" and _engine_literals(node.value, names, constants):
            found.append(f"{module}:{node.value.lineno} lists the engines itself: use {ENGINE_PICKER}.NAMES")
    return found


def test_no_module_branches_on_an_engine_name_outside_the_picker():
    """What differs between Flink and Spark is asked of the engine (planlineage.engine.Engine), never
    decided by comparing its name to a literal (`engine == "spark"`, `in ("flink", ...)`, a
    constant bound to one, a `match` case); a command's `--engine` choices are the picker's list
    (planlineage.engines.NAMES), not a literal one. A platform's own name for an engine
    (StreamPark's FLINK/SPARK constants) is its data, not this."""
    names = _engine_names()
    assert names >= {"flink", "spark"}  # the scan looks for what the picker knows
    trees = _module_trees()
    constants = _engine_constants(trees, names)
    found = []
    for name, tree in trees.items():
        if name != ENGINE_PICKER and not name.startswith(ENGINE_NAMES_AS_PLATFORM_DATA):
            found += _engine_branches(name, tree, names, constants[name])
    assert found == []


def test_the_engine_branch_scan_sees_the_spellings_that_evade_a_literal_comparison():
    source = """
from planlineage.fake.kinds import SPARK
FLINK = "flink"
def run(engine, other):
    if engine == FLINK: pass
    if engine in (SPARK,): pass
    if engine.name != "flink": pass
    match engine:
        case "spark": pass
    if other == "flinkish": pass
    if (other or "").startswith("spark-"): pass
    if other.startswith("sparkling"): pass
    if other.startswith("spark.sql.catalog."): pass
"""
    trees = {"planlineage.fake.kinds": ast.parse('SPARK = "spark"'), "planlineage.fake.run": ast.parse(source)}
    constants = _engine_constants(trees, {"flink", "spark"})
    found = _engine_branches(
        "planlineage.fake.run", trees["planlineage.fake.run"], {"flink", "spark"}, constants["planlineage.fake.run"]
    )
    assert [line.split(" ", 1)[1] for line in found] == [
        "compares with ['flink']",
        "compares with ['spark']",
        "compares with ['flink']",
        "matches ['spark']",
        "tests a prefix of ['spark']",
    ]


#: The modules that read settings by key: the store and its overlay, and the typed object every
#: other module reads them from (planlineage.config.Config, by attribute).
SETTINGS_MODULES = {
    "planlineage.settings",
    "planlineage.known_settings",
    "planlineage.openlineage_config",
    "planlineage.config",
}
#: Reads by key that are not reads of this process's settings, with why (module -> the key read).
SETTINGS_KEY_READS_ALLOWED = {
    # `planlineage settings get/set/list`: the string-keyed interface to the settings, by nature.
    ("planlineage.cli.settings", "*"),
    # The node's own file names the state store; it is read to find the store, before any store
    # (and so any Settings over it) exists.
    ("planlineage.store.url", "lineage.store"),
    # StreamPark's own settings table (t_setting): the platform reports lineage itself when set.
    ("planlineage.streampark.watcher", "lineage.gravitino.address"),
    ("planlineage.streampark.check", "lineage.gravitino.address"),
    # The doctor reads the rules file a recorded store's settings name (--state with a store given
    # on the command line), not this process's settings.
    ("planlineage.doctor.sources", "lineage.rules"),
}
_SETTINGS_READERS = {"get", "source"}


def _setting_key(node: ast.AST, constants: dict[str, str]) -> str | None:
    """The setting key ``node`` spells: a ``lineage.…`` literal, or a constant bound to one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("lineage."):
        return node.value
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return constants.get(name or "")


def test_settings_are_read_by_key_only_in_the_settings_modules():
    """Every other module reads a setting as an attribute of planlineage.config.Config (built once
    by Settings.config()): never `settings.get("lineage.…")`, `values["lineage.…"]`, a key kept in
    a constant, or any `settings.get(…)` / `.source(…)` of a Settings."""
    trees = _module_trees()
    constants = {  # NAME = "lineage.…" anywhere in the product: a key read through it is a key read
        target.id: node.value.value
        for tree in trees.values()
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and node.value.value.startswith("lineage.")
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = set()
    for name, tree in trees.items():
        if name in SETTINGS_MODULES:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
                method, receiver = node.func.attr, ast.unparse(node.func.value)
                key = _setting_key(node.args[0], constants)
                if method in _SETTINGS_READERS and key is not None:
                    found.add((name, key))
                elif method in _SETTINGS_READERS and receiver.rsplit(".", 1)[-1] == "settings":
                    found.add((name, "*"))  # a Settings read by a key computed at run time
            elif isinstance(node, ast.Subscript) and (key := _setting_key(node.slice, constants)) is not None:
                found.add((name, key))
    assert found - SETTINGS_KEY_READS_ALLOWED == set()
    assert found >= SETTINGS_KEY_READS_ALLOWED  # an allowance no longer used: drop it from the list
