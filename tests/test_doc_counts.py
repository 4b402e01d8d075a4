"""Model counts in the README and docs agree with the catalogue (issue 28, case 30: the README
said 51 models, docs/models.md 57, `geneb models list` 58). The docs do not write the count
down; this test keeps any count written near the word "catalogue" equal to the catalogue's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from geneb.cli import app
from geneb.models.catalogue import load_catalogue

ROOT = Path(__file__).resolve().parents[1]
COUNT = re.compile(r"\b(\d+)\s+(?:genomic foundation models|models|entries)\b")


def sentences() -> list[tuple[str, str]]:
    """Each table row and each prose sentence of the README and docs (a count and the word
    "catalogue" in one of them are about the same thing; a paragraph can hold other counts)."""
    out = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for para in re.split(r"\n\s*\n", doc.read_text(encoding="utf-8")):
            if para.lstrip().startswith("|"):
                units = para.splitlines()
            else:
                units = re.split(r"(?<=[.;:])\s+", " ".join(para.split()))
            out.extend((str(doc.relative_to(ROOT)), u) for u in units)
    return out


def test_no_stale_catalogue_count_in_the_docs() -> None:
    n = len(load_catalogue())
    stale = [(doc, m.group(0)) for doc, para in sentences() if "catalogue" in para.lower()
             for m in COUNT.finditer(para) if int(m.group(1)) != n]  # fmt: skip
    assert not stale, f"counts that are not the catalogue's {n}: {stale}"


def test_models_list_counts_what_it_lists() -> None:
    r = CliRunner().invoke(app, ["models", "list", "--json"])
    listed = json.loads(r.output)
    assert len(listed) == len(load_catalogue())
    r = CliRunner().invoke(app, ["models", "list"], terminal_width=200)
    assert f"model catalogue ({len(listed)} models" in r.output
