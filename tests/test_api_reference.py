"""The API reference (docs/api.md, rendered by mkdocstrings) builds with warnings as errors,
covers every public name, and a broken link in the docs fails the build."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import geneb

ROOT = Path(__file__).resolve().parents[1]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is absent
        return False


MISSING = [m for m in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python")
           if not _installed(m)]
needs_mkdocs = pytest.mark.skipif(
    bool(MISSING), reason=f"{', '.join(MISSING)} not installed (pip install -e '.[docs]')")


def _build(root: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"),
         "-d", str(out)], cwd=root, capture_output=True, text=True, timeout=300, check=False)


def test_api_page_names_every_public_export() -> None:
    text = (ROOT / "docs" / "api.md").read_text()
    shown = {m.group(1).rsplit(".", 1)[-1] for m in re.finditer(r"^::: ([\w.]+)", text, re.M)}
    missing = sorted(set(geneb.__all__) - {"__version__"} - shown)
    assert not missing, f"docs/api.md lacks a `::: module.name` entry for {missing}"


@needs_mkdocs
def test_docs_build_strict(tmp_path: Path) -> None:
    r = _build(ROOT, tmp_path / "site")
    assert r.returncode == 0, r.stdout + r.stderr
    page = (tmp_path / "site" / "api" / "index.html").read_text()
    for name in ("geneb.probe.engine.run_probes", "geneb.analysis.report.build_report",
                 "geneb.results.table.read_results", "geneb.store.FeatureStore"):
        assert f'id="{name}"' in page, name


@needs_mkdocs
def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    (root / "docs" / "api.md").write_text("# API reference\n")  # no package to render here
    store = root / "docs" / "store.md"
    store.write_text(store.read_text() + "\nSee [the probes](probing-gone.md).\n")
    r = _build(root, tmp_path / "site")
    assert r.returncode != 0 and "probing-gone.md" in r.stdout + r.stderr, r.stdout + r.stderr
