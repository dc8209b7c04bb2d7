"""No import cycle among opsdk's modules, counting imports inside functions too.

A function-level import hides a cycle from Python (the import runs late) but not
from a reader: the modules still depend on each other. So every ``import`` and
``from ... import`` anywhere in a module counts here. ``from pkg import name``
depends on the module ``pkg.name`` when there is one, else on ``pkg``.
"""

import ast
from pathlib import Path

import opsdk
from opsdk.harness import columns

ROOT = Path(opsdk.__file__).parent


def _modules(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root``: dotted name -> file (templates and
    other data directories are not packages: no ``__init__.py``)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        if not all((d / "__init__.py").is_file() for d in path.parents if d.is_relative_to(root)):
            continue
        parts = path.relative_to(root.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` (at ``path``) imports, anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            targets = [f"{base}.{alias.name}" for alias in node.names]
            targets = [t if t in modules else base for t in targets]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` imports a.b.c
                target = target.rpartition(".")[0]
            if target:
                found.add(target)
    return found


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected group of modules (Tarjan), as a path a -> ... -> a."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph[node]:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(graph, group) for group in groups]


def _cycle_in(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest cycle through the group's first module, staying inside the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for succ in sorted(graph[node] & group):
                if succ == start:
                    return paths[node] + [start]
                if succ not in paths:
                    paths[succ] = paths[node] + [succ]
                    nxt.append(succ)
        frontier = nxt
    raise AssertionError(f"no cycle through {start}")


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = _modules(root)
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_opsdk_has_no_import_cycle():
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles (function-level imports count):\n" + "\n".join(
        " -> ".join(cycle) for cycle in cycles
    )


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from . import c\n")
    (pkg / "sub" / "c.py").write_text("def late():\n    from ..a import late\n")
    (pkg / "d.py").write_text("import pkg.a\n")
    assert find_cycles(import_graph(pkg)) == [["pkg.a", "pkg.sub.b", "pkg.sub.c", "pkg.a"]]


def test_test_modules_have_unique_basenames_across_tiers():
    """pytest imports test modules by basename (no __init__.py): a name in both tiers
    makes the second an import-mismatch error, and its tests never run."""
    tests = Path(__file__).resolve().parents[1]
    names = [p.name for tier in ("unit", "e2e") for p in (tests / tier).glob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []


# The layers, lowest first: a module may import its own package's modules and those of
# a lower layer, never a higher one nor another package of its own layer. Named by
# package (a module belongs to the longest prefix listed). docs/architecture.md says why.
PACKAGE_LAYERS = (
    ("opsdk.errors",),
    ("opsdk.axes", "opsdk._versions", "opsdk._outputs", "opsdk._streams", "opsdk._registry"),
    ("opsdk._runtime",),
    (
        "opsdk",
        "opsdk.attach",
        "opsdk.converters",
        "opsdk.cpp_build",
        "opsdk.device",
        "opsdk.fast_entry",
        "opsdk.updatable",
        "opsdk.inputs",
        "opsdk.irdef",
        "opsdk.meta",
        "opsdk.oplib",
    ),
    ("opsdk.offline", "opsdk.cann"),
    ("opsdk.harness", "opsdk.scaffold"),
    ("opsdk.report", "opsdk.audit", "opsdk.patterns"),
    ("opsdk.matrix_run",),
    ("opsdk.cli", "opsdk.pytest_plugin"),
    ("opsdk.console",),
    ("opsdk.__main__",),
)


def layer_of(module: str, layers=PACKAGE_LAYERS) -> tuple[int, str]:
    """The layer ``module`` is in and the package that places it there."""
    places = [(len(p), rank, p) for rank, layer in enumerate(layers) for p in layer]
    found = [(n, rank, p) for n, rank, p in places if module == p or module.startswith(p + ".")]
    if not found:
        raise AssertionError(f"{module} is in no layer: add its package to PACKAGE_LAYERS")
    _, rank, package = max(found)
    return rank, package


def _is_private(module: str, package: str) -> bool:
    """Whether ``module`` is private to its layer package (a ``_name`` below it)."""
    inner = module.removeprefix(package).split(".")
    return any(p.startswith("_") and not p.startswith("__") for p in inner)


def layer_violations(graph: dict[str, set[str]], layers=PACKAGE_LAYERS, private=True) -> list[str]:
    """Imports against ``layers``; with ``private``, also those of a name private to
    another layer package."""
    found = []
    for module, targets in sorted(graph.items()):
        rank, package = layer_of(module, layers)
        for target in sorted(targets):
            target_rank, target_package = layer_of(target, layers)
            if private and target_package != package and _is_private(target, target_package):
                found.append(f"{module} -> {target}: private to {target_package}")
            elif target_package != package and target_rank >= rank:
                found.append(f"{module} -> {target}: {target_package} is not below {package}")
    return found


def test_imports_only_point_down_the_layers():
    bad = layer_violations(import_graph())
    assert not bad, "imports against the layer order (function-level imports count):\n" + (
        "\n".join(bad)
    )


def test_an_upward_import_and_a_private_one_are_found():
    graph = {
        "opsdk._runtime.spec": {"opsdk.errors"},
        "opsdk._runtime.device": {"opsdk.offline.torchair"},
        "opsdk.offline.torchair": {"opsdk._runtime.device"},
        "opsdk.report.html": {"opsdk.harness.columns._ge_dump"},
        "opsdk.harness.columns.ge": {"opsdk.harness.columns._ge_dump"},
        "opsdk.harness.run.cache": {"opsdk.scaffold"},
    }
    assert layer_violations(graph) == [
        "opsdk._runtime.device -> opsdk.offline.torchair: opsdk.offline is not below "
        "opsdk._runtime",
        "opsdk.harness.run.cache -> opsdk.scaffold: opsdk.scaffold is not below opsdk.harness",
        "opsdk.report.html -> opsdk.harness.columns._ge_dump: private to opsdk.harness",
    ]


# Inside `opsdk.harness` (one package in PACKAGE_LAYERS), lowest first, by the same rule: what
# a cell is and how a failure is mapped; the column registry (facts, no torch); what a
# column runs an op on; what the columns are built from (the backends ge and fusion
# compile through included); the columns, one module each, none importing another; the
# run around them; the front (`opsdk.harness` itself, the data types and IR exports of a
# package's cases).
HARNESS_LAYERS = (
    ("opsdk.harness.cell",),
    ("opsdk.harness.failures", "opsdk.harness.notes", "opsdk.harness.torchair_graphs"),
    ("opsdk.harness.graph_hook", "opsdk.harness.pattern_pass"),
    ("opsdk.harness.columns",),
    ("opsdk.harness.variants",),
    ("opsdk.harness.core",),
    tuple(c.module for c in map(columns.column, columns.names())),
    ("opsdk.harness.run",),
    ("opsdk.harness",),
)


def _inside(graph: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """The edges of ``graph`` between modules of ``package``."""
    within = {m for m in graph if m == package or m.startswith(package + ".")}
    return {m: graph[m] & within for m in within}


def test_harness_imports_only_point_down_its_inner_layers():
    bad = layer_violations(_inside(import_graph(), "opsdk.harness"), HARNESS_LAYERS, private=False)
    assert not bad, "imports against the harness' inner order (function-level count):\n" + (
        "\n".join(bad)
    )


def test_an_upward_import_inside_the_harness_is_found():
    graph = {
        "opsdk.harness.variants.cases": {"opsdk.harness.columns", "opsdk.harness.core.kernel"},
        "opsdk.harness.core.compiled": {"opsdk.harness.run.cache"},
        "opsdk.harness.columns.eager": {"opsdk.harness.columns.opcheck"},
        "opsdk.harness.columns.fusion": {"opsdk.harness.columns.ge"},
    }
    assert layer_violations(graph, HARNESS_LAYERS, private=False) == [
        "opsdk.harness.columns.eager -> opsdk.harness.columns.opcheck: "
        "opsdk.harness.columns.opcheck is not below opsdk.harness.columns.eager",
        "opsdk.harness.columns.fusion -> opsdk.harness.columns.ge: opsdk.harness.columns.ge is "
        "not below opsdk.harness.columns.fusion",
        "opsdk.harness.core.compiled -> opsdk.harness.run.cache: opsdk.harness.run is not "
        "below opsdk.harness.core",
        "opsdk.harness.variants.cases -> opsdk.harness.core.kernel: opsdk.harness.core is not "
        "below opsdk.harness.variants",
    ]


def test_each_module_of_the_columns_package_is_the_column_of_its_name():
    """A column is one module named as its column; what columns share is in
    `opsdk.harness.core`, so no column module doubles as a library."""
    folder = ROOT / "harness" / "columns"
    found = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    named = {n: columns.column(n).module for n in columns.names()}
    assert {n: f"opsdk.harness.columns.{n}" for n in found} == named


def test_the_architecture_doc_names_every_layered_package():
    """docs/architecture.md explains the layers: a package in PACKAGE_LAYERS is named there."""
    doc = (ROOT.parent / "docs" / "architecture.md").read_text()
    named = {p.removeprefix("opsdk.") for layer in PACKAGE_LAYERS for p in layer if p != "opsdk"}
    spellings = ("`{}`", "`{}/`", "`opsdk.{}`")
    missing = sorted(n for n in named if not any(s.format(n) in doc for s in spellings))
    assert missing == [], f"docs/architecture.md does not name {missing}"
