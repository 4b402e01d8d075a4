"""Each shared default is defined once, in :mod:`geneb.vocabulary`, and imported everywhere else.

An AST scan of the package finds a copy of one outside its home: a literal default of a model
option (``device="auto"``, ``pooling="mean"``, ...) or a VEP window (``window=1024``) or a
bootstrap count (``n_boot=2000``), as a parameter default, a dataclass field or the fallback of
``mapping.get(key, literal)``; the capacity-tier edges as a literal tuple; a task kind spelled
as a string (a tuple of kind names, a ``kind`` default, a comparison with a ``kind``, a
``"kind":`` value; comparisons in geneb/commands are not scanned: commands should call the
library, and the two there, in ``tasks`` and ``tasks fetch``, are in code that moves into it);
and a module-level
name ``N_BOOT`` (or an import aliased to it), a name that could mean the report's count, the
per-cell count or the rule an ``n_boot`` must meet. These replace the tests that held copies
together by comparing them.
"""

from __future__ import annotations

import ast
from pathlib import Path

from geneb import vocabulary as v

GENEB = Path(__file__).resolve().parents[1] / "geneb"

#: parameter / field / ``.get`` key -> the one definition of its default
DEFAULTS: dict[str, object] = {
    "device": v.DEFAULT_DEVICE,
    "pooling": v.DEFAULT_POOLING,
    "layer": v.DEFAULT_LAYER,
    "truncation": v.DEFAULT_TRUNCATION,
    "strands": v.DEFAULT_STRANDS,
    "storage_dtype": v.DEFAULT_STORAGE_DTYPE,
    "window": v.DEFAULT_VEP_WINDOW,
}
#: names whose literal integer default is a bootstrap count, whatever its value
N_BOOT_NAMES = {"n_boot"}
TASK_KINDS = {v.CLASSIFICATION, v.REGRESSION, v.VARIANTS, v.ZERO_SHOT_VARIANT,
              v.SUPERVISED_VARIANT}


def _literal(node: ast.AST | None) -> object:
    """The value of a literal (``-1`` included), else a sentinel that equals nothing."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal(node.operand)
        return -inner if isinstance(inner, (int, float)) else _NOT
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
        return node.value
    return _NOT


_NOT = object()


def _is_copy(name: str, value: ast.AST | None) -> bool:
    lit = _literal(value)
    if lit is _NOT:
        return False
    if name in N_BOOT_NAMES:
        return isinstance(lit, int)
    if name == "kind":
        return lit in TASK_KINDS
    return name in DEFAULTS and lit == DEFAULTS[name] and type(lit) is type(DEFAULTS[name])


def _defaults(node: ast.AST) -> list[tuple[str, ast.AST]]:
    """(name, default) of a function's parameters, a class field or a ``.get(key, default)``."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = node.args
        positional = [*a.posonlyargs, *a.args]
        pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True))
        pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d]
        return [(arg.arg, d) for arg, d in pairs]
    if isinstance(node, ast.ClassDef):
        return [(s.target.id, s.value) for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get" and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return [(node.args[0].value, node.args[1])]
    return []


def copies_in(source: str, where: str) -> list[str]:
    """Every copy of a shared default in ``source`` (a module's text), as ``where:line: what``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        for name, default in _defaults(node):
            if _is_copy(name, default):
                found.append(f"{where}:{default.lineno}: {name} = {ast.unparse(default)}")
        if isinstance(node, ast.Compare) and not where.startswith("commands/"):
            sides = [node.left, *node.comparators]
            if "kind" in ast.unparse(node) and any(_literal(s) in TASK_KINDS for s in sides):
                found.append(f"{where}:{node.lineno}: task kind {ast.unparse(node)}")
        if isinstance(node, ast.Dict):
            for k, val in zip(node.keys, node.values, strict=True):
                if _literal(k) == "kind" and _literal(val) in TASK_KINDS:
                    found.append(f"{where}:{val.lineno}: task kind 'kind': {ast.unparse(val)}")
        if isinstance(node, ast.Tuple):
            values = [_literal(e) for e in node.elts]
            if values == list(v.CAPACITY_TIER_EDGES):
                found.append(f"{where}:{node.lineno}: tier edges {ast.unparse(node)}")
            strings = [x for x in values if isinstance(x, str)]
            if len(strings) == len(values) >= 2 and set(strings) <= TASK_KINDS:
                found.append(f"{where}:{node.lineno}: task kinds {ast.unparse(node)}")
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "N_BOOT" for t in targets):
                found.append(f"{where}:{node.lineno}: N_BOOT (name the count: N_BOOT_REPORT, "
                             "N_BOOT_METRIC, or the rule N_BOOT_RULE)")
        if isinstance(node, ast.ImportFrom) and any(
                (a.asname or a.name) == "N_BOOT" for a in node.names):
            found.append(f"{where}:{node.lineno}: imported as N_BOOT")
    return found


def test_no_copy_of_a_shared_default_outside_its_home() -> None:
    found = []
    for path in sorted(GENEB.rglob("*.py")):
        if path.name == "vocabulary.py" and path.parent == GENEB:
            continue
        found += copies_in(path.read_text(encoding="utf-8"), path.relative_to(GENEB).as_posix())
    assert found == [], "import these from geneb.vocabulary:\n" + "\n".join(found)


def test_the_scan_sees_each_kind_of_copy() -> None:
    """The scanner against planted copies (and the imports that replace them)."""
    planted = '''
def f(window: int = 1024, *, device="auto", layer=-1, n_boot=500, pooling=POOL):
    return cfg.get("strands", "forward"), cfg.get("window", DEFAULT_VEP_WINDOW)
class C:
    truncation: str = "truncate"
    storage_dtype: str = "float16"
EDGES = (200e6, 1e9)
KINDS = ("classification", "regression")
def g(kind="variants"):
    return kind == "regression", {"kind": "classification"}
N_BOOT = 7
from geneb.protocol import N_BOOT_REPORT as N_BOOT
'''
    found = sorted(line.split(": ", 1)[1] for line in copies_in(planted, "m.py"))
    assert found == sorted([
        "window = 1024", "device = 'auto'", "layer = -1", "n_boot = 500",
        "truncation = 'truncate'", "strands = 'forward'", "tier edges (200000000.0, 1000000000.0)",
        "task kinds ('classification', 'regression')", "kind = 'variants'",
        "task kind kind == 'regression'", "task kind 'kind': 'classification'",
        "N_BOOT (name the count: N_BOOT_REPORT, N_BOOT_METRIC, or the rule N_BOOT_RULE)",
        "imported as N_BOOT",
    ]), found
