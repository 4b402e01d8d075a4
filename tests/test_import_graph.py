"""The import graph of geneb: no cycles, and no import against the data flow.

Every ``import`` in every module counts, at module level or inside a function (a lazy import
is still a dependency; it only moves the cost). The graph is read with :mod:`ast` from the
source files, so nothing is imported and the test cannot be fooled by import order.

The layer order is declared once, in :data:`LAYERS`. A module may import modules of its own
layer or of an earlier one. The data flows tasks -> models/extract -> store -> probe ->
results -> analysis -> report; in code the store sits below extract (extract writes into it,
the store imports neither tasks nor models), and the results table sits below probe for the
same reason. ``vep`` sits beside probe: it may use everything before it, but only the plan
layers (``params``, ``pipeline``) and the interface may import it (analysis reads vep outputs as
plain data). ``params`` and ``pipeline`` come after the library and before the interface: the
pipeline calls the library, the commands call the pipeline, never the other way round.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "geneb"

#: The layers, first to last: (layer, module prefixes under ``geneb``). A module belongs to
#: the layer of its longest matching prefix ("" is the ``geneb`` package itself).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("errors", "vocabulary", "dna", "constraints", "protocol", "_fs", "_lazy", "_version",
              "cluster", "_progress", "_threads")),
    ("tasks", ("tasks",)),
    ("store", ("store",)),
    # the results table sits below probe in code (probe writes it, as extract writes the store)
    ("results", ("results",)),
    ("models", ("models", "extract")),
    ("probe", ("probe",)),
    ("vep", ("vep",)),
    ("audit", ("audit",)),  # task audits: k-mer shortcut probes over task data (geneb.probe)
    ("analysis", ("analysis",)),
    ("report", ("analysis.report",)),
    # the plan's sections and keys, read from the library functions' own declarations
    ("params", ("params",)),
    # ``geneb run``: reads a plan and calls the library functions (extract, run_probes, run_vep,
    # build_report) in order; its own layer, so that it cannot reach the commands and any
    # step it re-implements instead of calling shows as its own import of that step's internals
    ("pipeline", ("pipeline",)),
    # evaluation: the task API's ``task.evaluate(model)`` (probes and vep scorers on a task);
    # like ``api`` it implements the public API and may use every layer below, vep included
    ("interface", ("commands", "api", "evaluation", "cli", "__main__", "")),
]

#: Layers beside the flow, and the only layers that may import them (besides themselves):
#: analysis reads vep outputs as plain data; plans ([vep]) and the interface run vep.
BESIDE: dict[str, set[str]] = {"vep": {"params", "pipeline", "interface"}}

#: Cycles left on purpose, each an exact set of modules: none (the geneb/extract cycle of
#: hf, hf_load, hub, minilm and registry was broken by the geneb/models/ package).
ALLOWED_CYCLES: list[frozenset[str]] = []

#: Modules whose imports against the flow are NOT fixed yet: none. (The task API's
#: ``Task.evaluate`` lives in geneb/evaluation, which the interface layer holds; geneb/tasks
#: keeps the task objects and a registry of evaluators.)
OPEN_BACK_EDGE_SOURCES: frozenset[str] = frozenset()

_RANK = {name: i for i, (name, _) in enumerate(LAYERS)}
_PREFIXES = {prefix: name for name, prefixes in LAYERS for prefix in prefixes}


def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package), for every ``.py`` file under ``geneb/``."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["geneb", *path.relative_to(PACKAGE).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _owner(name: str, modules: dict) -> str | None:
    """The geneb module that ``name`` (a module, or an attribute of one) lives in."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path, is_package: bool, modules: dict) -> set[str]:
    """The geneb modules ``module`` imports anywhere in its source (relative ones resolved)."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(_owner(a.name, modules) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rpartition(".")[0]
            if node.level:
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            # `from pkg import sub` imports the submodule, `from mod import name` the module
            found.update(_owner(f"{target}.{a.name}", modules) for a in node.names)
    return {m for m in found if m and m.startswith("geneb") and m != module}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: _imports(m, p, pkg, modules) for m, (p, pkg) in modules.items()}


def _layer(module: str) -> str:
    rest = module.removeprefix("geneb").removeprefix(".")
    while rest not in _PREFIXES:
        if not rest:
            raise KeyError(module)
        rest = rest.rpartition(".")[0]
    return _PREFIXES[rest]


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _allowed(source: str, target: str) -> bool:
    """Whether a module of layer ``source`` may import one of layer ``target``."""
    if target in BESIDE and source != target and source not in BESIDE[target]:
        return False
    return _RANK[target] <= _RANK[source]


def test_every_module_has_a_layer() -> None:
    unplaced = []
    for module in _graph():
        try:
            _layer(module)
        except KeyError:
            unplaced.append(module)
    assert unplaced == [], f"place these in LAYERS: {unplaced}"


def test_no_import_cycles() -> None:
    cycles = [sorted(c) for c in _cycles(_graph()) if c not in ALLOWED_CYCLES]
    assert cycles == []


def test_no_import_against_the_data_flow() -> None:
    graph = _graph()
    wrong = sorted(
        f"{a} ({_layer(a)}) imports {b} ({_layer(b)})"
        for a, targets in graph.items()
        for b in targets
        if not _allowed(_layer(a), _layer(b)) and a not in OPEN_BACK_EDGE_SOURCES
    )
    assert wrong == []


def test_open_back_edges_are_still_open() -> None:
    """An entry of OPEN_BACK_EDGE_SOURCES whose module no longer imports against the flow is
    removed from the list (so the list only shrinks)."""
    graph = _graph()
    fixed = sorted(
        a for a in OPEN_BACK_EDGE_SOURCES
        if a in graph and all(_allowed(_layer(a), _layer(b)) for b in graph[a])
    )
    assert fixed == []


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    """The graph reader against hand-made graphs: a cycle and a back-edge are seen."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        frozenset({"a", "b", "c"})
    ]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert not _allowed("store", "probe")  # against the flow
    assert not _allowed("analysis", "vep")  # vep beside the flow
    assert not _allowed("probe", "vep")
    assert _allowed("vep", "probe") and _allowed("interface", "vep")
    assert _allowed("report", "analysis") and not _allowed("analysis", "report")
    assert _allowed("pipeline", "params") and _allowed("pipeline", "vep")
    assert not _allowed("pipeline", "interface") and not _allowed("params", "pipeline")
    assert not _allowed("probe", "pipeline") and not _allowed("report", "params")
    # a lazy import inside a function counts, and relative imports resolve
    pkg = tmp_path / "geneb" / "sub"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from . import b\n    from ..sub.b import x\n")
    (pkg / "b.py").write_text("x = 1\n")
    modules = {"geneb.sub": (pkg / "__init__.py", True), "geneb.sub.b": (pkg / "b.py", False)}
    assert _imports("geneb.sub.a", pkg / "a.py", False, modules) == {"geneb.sub.b"}


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("geneb.analysis.report.build", "report"),
        ("geneb.analysis.scaling", "analysis"),
        ("geneb", "interface"),
        ("geneb.errors", "base"),
        ("geneb.pipeline.execute", "pipeline"),
        ("geneb.params", "params"),
        ("geneb.commands.run", "interface"),
    ],
)
def test_layers_by_longest_prefix(module: str, layer: str) -> None:
    assert _layer(module) == layer
