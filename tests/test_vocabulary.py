"""Each vocabulary is defined once (geneb.vocabulary) and every place that accepts one of its
names uses exactly those names: the solver registry, the adapters, the parameter declarations
(hence plans and CLI options)."""

from __future__ import annotations

import ast
from pathlib import Path

from geneb import constraints, vocabulary
from geneb.probe import solvers
from geneb.probe.solvers import ALIASES, SOLVERS

GENEB = Path(__file__).resolve().parents[1] / "geneb"


def test_solver_registry_keys_use_the_vocabulary():
    assert {p for p, _, _ in SOLVERS} == {*vocabulary.PROBES, *vocabulary.STAND_IN_PROBES}
    assert solvers.PROBES == vocabulary.PROBES  # what a user may name: no stand-in
    assert {pr for _, pr, _ in SOLVERS} == set(vocabulary.PROTOCOLS)
    registry_backends = {b for _, _, b in SOLVERS} | {a for d in ALIASES.values() for a in d}
    assert registry_backends == {*vocabulary.BACKENDS, *vocabulary.STAND_IN_BACKENDS}
    assert set(solvers.BACKEND_NAMES) == set(vocabulary.BACKENDS)
    assert vocabulary.DEFAULT_PROTOCOL in vocabulary.PROTOCOLS


def test_declarations_use_the_vocabulary():
    for constraint, names in [
        (constraints.PROBE, vocabulary.PROBES),
        (constraints.BACKEND, vocabulary.BACKENDS),
        (constraints.PROTOCOL, vocabulary.PROTOCOLS),
        (constraints.POOLING, vocabulary.POOLINGS),
        (constraints.TRUNCATION, vocabulary.TRUNCATIONS),
        (constraints.STRANDS, vocabulary.STRANDS),
        (constraints.STORAGE_DTYPE, vocabulary.STORAGE_DTYPES),
        (constraints.COMPUTE_DTYPE, vocabulary.COMPUTE_DTYPES),
    ]:
        assert constraint.options is names


def test_vocabularies_are_not_spelled_twice():
    """No other module assigns a tuple literal equal to one of the vocabularies."""
    vocabularies = {tuple(v): k for k, v in vars(vocabulary).items()
                    if isinstance(v, tuple) and all(isinstance(x, str) for x in v)}
    copies = []
    for path in sorted(GENEB.rglob("*.py")):
        if path.name == "vocabulary.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple) and node.elts and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                names = tuple(e.value for e in node.elts)
                if names in vocabularies and len(names) > 1:
                    copies.append((path.relative_to(GENEB).as_posix(), node.lineno,
                                   vocabularies[names]))
    assert copies == []


def test_vocabulary_imports_nothing():
    """Plain data: importable from every layer, numpy-free."""
    tree = ast.parse((GENEB / "vocabulary.py").read_text(encoding="utf-8"))
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [getattr(n, "module", None) for n in imports] == ["__future__"]
