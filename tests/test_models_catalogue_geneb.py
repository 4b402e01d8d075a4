"""The catalogue's GENEB set is exactly GENEB's 41 leaderboard records (issue 27), checked
against the shared transcription of the leaderboard (an independent copy, not the catalogue)."""

from __future__ import annotations

import csv

import pytest

from geneb.models import catalogue as cat
from tests.conftest import SHARED, require_shared

PUBLISHED = SHARED / "published" / "geneb-9642d48"


@pytest.fixture(scope="module")
def leaderboard() -> dict[str, int]:
    """GENEB model id -> parameter count, from the leaderboard (full regime)."""
    path = require_shared(PUBLISHED / "task_mcc_full.csv", "GENEB's published leaderboard")
    with path.open(encoding="utf-8") as f:
        return {r["model"]: int(r["params"]) for r in csv.DictReader(f)}


def test_geneb_set_is_the_leaderboard(leaderboard: dict[str, int]) -> None:
    assert len(leaderboard) == 41
    geneb = [e for e in cat.load_catalogue() if "GENEB" in e.studies]
    resolved = {m: cat.published_facts(m) for m in leaderboard}
    missing = sorted(m for m, f in resolved.items() if f is None or "GENEB" not in f["studies"])
    assert missing == []
    # one entry per leaderboard id, and no GENEB entry outside the leaderboard
    assert len({f["name"] for f in resolved.values()}) == 41
    assert sorted(e.name for e in geneb) == sorted(f["name"] for f in resolved.values())


def test_geneb_counts_are_the_leaderboard_counts(leaderboard: dict[str, int]) -> None:
    for model, params in leaderboard.items():
        facts = cat.published_facts(model)
        assert facts["n_params"] == params, model
        assert facts["sources"]["n_params"].startswith("https://"), model


def test_geneb_hub_ids_where_identifiable(leaderboard: dict[str, int]) -> None:
    # GENEB pins these off the hub (Google Drive, Harvard Dataverse, Zenodo): no hub id
    off_hub = {"dna_gpt3b_m", "dna_gpt0.1b_h", "genomics-fm", "deepgene", "JanusDNA_72_w",
               "JanusDNA_72_wo", "splicebert-1024nt"}
    for model in leaderboard:
        hub = cat.published_facts(model)["hub_id"]
        assert (hub is None) == (model in off_hub), model
    assert cat.published_facts("LucaOne-default-step36M")["hub_id"] == (
        "LucaGroup/LucaOne-default-step36M")  # the checkpoint GENEB ran, not step5.6M
    assert cat.published_facts("METAGENE-1")["hub_id"] == "metagene-ai/METAGENE-1"


def test_docs_table_is_the_catalogue(leaderboard: dict[str, int]) -> None:
    """docs/models.md's GENEB table: one row per leaderboard id, with the catalogue's name,
    hub id, count and classes (parsed from the page, compared with the catalogue)."""
    from tests.conftest import REPO

    text = (REPO / "docs" / "models.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[0].startswith("`") and cells[0].strip("`") in leaderboard:
            rows[cells[0].strip("`")] = cells
    assert sorted(rows) == sorted(leaderboard)
    for model, cells in rows.items():
        f = cat.published_facts(model)
        hub = f"`{f['hub_id']}`" if f["hub_id"] else "- (off the hub)"
        assert cells[1:7] == [f["name"], hub, f"{f['n_params']:,}", f["architecture_class"],
                              f["tokenization_class"], f["pretraining_data_class"]], model
