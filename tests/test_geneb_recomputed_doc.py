"""docs/geneb-recomputed.md is what tools/geneb_recomputed.py writes from the tables of the
report on ``published:geneb``, and docs/analysis.md lists every table of that report with its
columns: a change of an analysis that moves a number or a column fails here until the pages
are regenerated (``python tools/geneb_recomputed.py``)."""

from __future__ import annotations

import csv
import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("geneb_recomputed",
                                                  REPO / "tools" / "geneb_recomputed.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _documented_tables() -> dict[str, list[str]]:
    """docs/analysis.md's table of tables: name -> columns."""
    text = (REPO / "docs" / "analysis.md").read_text(encoding="utf-8")
    out = {}
    for line in text.splitlines():
        m = re.fullmatch(r"\| `([a-z0-9_]+)` \| (.*) \| ([^|]*) \|", line)
        if m and "," in m.group(3):
            out[m.group(1)] = [c.strip() for c in m.group(3).split(",")]
    return out


def test_pages_match_the_report_tables(tmp_path: Path) -> None:
    tool = _tool()
    all_tables, official_tables = tool.build_tables(tmp_path)
    text = tool.render(all_tables, official_tables)
    page = (REPO / "docs" / "geneb-recomputed.md").read_text(encoding="utf-8")
    assert page == text, "docs/geneb-recomputed.md is stale: run python tools/geneb_recomputed.py"
    # the paper's values are only printed, beside geneb's
    assert "| Spearman rho, log params vs macro-MCC, full | 0.565 (p < 0.001) |" in page
    written = {}
    for path in sorted(all_tables.glob("*.csv")):
        with path.open(encoding="utf-8") as f:
            written[path.stem] = next(csv.reader(f))
    assert _documented_tables() == written
