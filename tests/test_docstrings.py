"""Public functions carry numpydoc Parameters and Returns sections that match their signatures.

Checked with :mod:`ast` (nothing imported) on what users call: every export of ``import geneb``
and every public function, method and class of the modules that hold them (the API reference,
docs/api.md, renders these docstrings). A function with parameters documents each one, and
no parameter it does not have (so a renamed parameter shows); one that returns something has a
Returns (or Yields) section. ``__init__`` parameters are documented in the class docstring, as
numpydoc has it; a property's docstring describes the value and needs no Returns.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import geneb

GENEB = Path(__file__).resolve().parents[1] / "geneb"

#: The modules users import, whose public functions must be documented in full.
USER_MODULES = (
    "api", "errors", "store/feature_store", "results/table", "extract/runner", "probe/engine",
    "probe/arrays", "analysis/report/build", "models/registry",
    # named in the docs for users: the protocol's pieces, store keys and provenance, the task
    # API's objects, the protocol comparison, the shared vocabulary
    "protocol", "store/keys", "store/provenance", "tasks/spec", "tasks/variant_tasks",
    "analysis/protocols", "vocabulary",
)

_SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}\s*$", re.M)
_ENTRY = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::|$)")


def sections(doc: str) -> dict[str, str]:
    """Section title -> its body, of a (dedented) numpydoc docstring."""
    marks = list(_SECTION.finditer(doc))
    return {m.group(1): doc[m.end():nxt.start() if nxt else len(doc)]
            for m, nxt in zip(marks, [*marks[1:], None], strict=False)}


def documented_parameters(body: str) -> list[str]:
    """The names a Parameters section documents (``a, b : int`` documents both)."""
    names = []
    for line in body.splitlines():
        if line and not line[0].isspace():
            m = _ENTRY.match(line.strip())
            if m:
                names += [n.strip() for n in m.group(1).split(",")]
    return names


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    names = [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
    names = [n for n in names if n not in ("self", "cls")]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return names


def _returns(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``fn`` gives a value back (annotated so, and not a body that only raises)."""
    if fn.returns is None or ast.unparse(fn.returns) in ("None", "NoReturn"):
        return False
    return any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))
               and getattr(n, "value", None) is not None for n in ast.walk(fn))


def problems_of(fn: ast.FunctionDef | ast.AsyncFunctionDef, doc: str | None,
                where: str) -> list[str]:
    """What the docstring ``doc`` of ``fn`` lacks (or has too much of)."""
    params = _parameters(fn)
    property_ = any(ast.unparse(d).endswith("property") for d in fn.decorator_list)
    if doc is None:
        return [f"{where}: no docstring"]
    found = sections(doc)
    out = []
    if params:
        if "Parameters" not in found:
            out.append(f"{where}: no Parameters section (parameters: {', '.join(params)})")
        else:
            have = documented_parameters(found["Parameters"])
            bare = {n.lstrip("*") for n in params}
            missing = [n for n in params if n not in have and n.lstrip("*") not in have]
            extra = [n for n in have if n.lstrip("*") not in bare]
            if missing:
                out.append(f"{where}: Parameters lacks {', '.join(missing)}")
            if extra:
                out.append(f"{where}: Parameters names {', '.join(extra)}, not a parameter")
    if (_returns(fn) and fn.name != "__init__" and not property_
            and not {"Returns", "Yields"} & set(found)):
        out.append(f"{where}: no Returns section")
    return out


def _public_functions(path: Path) -> list[tuple[str, ast.AST, str | None]]:
    """(name, function, docstring to check) of a module's public functions and methods."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[str, ast.AST, str | None]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name[0] != "_":
            out.append((node.name, node, ast.get_docstring(node)))
        if isinstance(node, ast.ClassDef) and node.name[0] != "_":
            for m in node.body:
                if not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                if m.name == "__init__":  # numpydoc: the class docstring documents them
                    out.append((f"{node.name}.__init__", m, ast.get_docstring(node)))
                elif m.name[0] != "_":
                    out.append((f"{node.name}.{m.name}", m, ast.get_docstring(m)))
    return out


def _module_file(module: str) -> Path:
    rel = module.removeprefix("geneb").lstrip(".").replace(".", "/")
    path = GENEB / f"{rel}.py"
    return path if path.exists() else GENEB / rel / "__init__.py"


def test_every_export_and_user_module_function_is_documented() -> None:
    files = {GENEB / f"{m}.py" for m in USER_MODULES}
    files |= {_module_file(mod) for mod, _ in geneb._EXPORTS.values()}
    exported = {attr for _, attr in geneb._EXPORTS.values()}
    seen = set()
    found = []
    for path in sorted(files):
        for name, fn, doc in _public_functions(path):
            seen.add(name.split(".")[0])
            where = f"{path.relative_to(GENEB).as_posix()}: {name}"
            found += problems_of(fn, doc, where)  # type: ignore[arg-type]
    assert exported <= seen, f"exports not found in the scanned modules: {exported - seen}"
    assert found == [], "\n".join(found)


def test_exported_classes_document_their_fields() -> None:
    """Classes: the constructor's parameters (FeatureStore, GenebError) or the fields of a
    dataclass (StoreEntry, in an Attributes section)."""
    tree = ast.parse((GENEB / "store" / "feature_store.py").read_text(encoding="utf-8"))
    entry = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "StoreEntry")
    fields = [s.target.id for s in entry.body
              if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    doc = sections(ast.get_docstring(entry) or "")
    assert "Attributes" in doc
    assert documented_parameters(doc["Attributes"]) == fields


@pytest.mark.parametrize(("source", "want"), [
    ('def f(a, b=1):\n    """Doc.\n\n    Parameters\n    ----------\n    a : int\n        A.\n'
     '    b : int\n        B.\n    """\n', []),
    ('def f(a, *, b=1) -> int:\n    """Doc.\n\n    Parameters\n    ----------\n    a, b : int\n'
     '        A and B.\n    """\n    return a\n', ["m: f: no Returns section"]),
    ('def f(a, **kw) -> int:\n    """Doc.\n\n    Parameters\n    ----------\n    a : int\n'
     '    c : int\n\n    Returns\n    -------\n    int\n    """\n',
     ["m: f: Parameters lacks **kw", "m: f: Parameters names c, not a parameter"]),
    ('def f(x):\n    """Just a line."""\n', ["m: f: no Parameters section (parameters: x)"]),
    ('def f() -> None:\n    """No parameters, returns nothing."""\n', []),
    ('def f():\n    pass\n', ["m: f: no docstring"]),
    ('def f() -> int:\n    """Only raises."""\n    raise ValueError\n', []),
])
def test_the_check_sees_what_is_missing(source: str, want: list[str]) -> None:
    fn = ast.parse(source).body[0]
    assert problems_of(fn, ast.get_docstring(fn), "m: f") == want  # type: ignore[arg-type]
