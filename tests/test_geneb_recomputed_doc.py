"""docs/geneb-recomputed.md is what tools/geneb_recomputed.py writes from the tables of the
report on ``published:geneb``: a change of an analysis that moves a number fails here until
the page is regenerated (``python tools/geneb_recomputed.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("geneb_recomputed",
                                                  REPO / "tools" / "geneb_recomputed.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_page_matches_the_report_tables(tmp_path: Path) -> None:
    tool = _tool()
    text = tool.render(*tool.build_tables(tmp_path))
    page = (REPO / "docs" / "geneb-recomputed.md").read_text(encoding="utf-8")
    assert page == text, "docs/geneb-recomputed.md is stale: run python tools/geneb_recomputed.py"
    # the paper's values are only printed, beside geneb's
    assert "| Spearman rho, log params vs macro-MCC, full | 0.565 (p < 0.001) |" in page
