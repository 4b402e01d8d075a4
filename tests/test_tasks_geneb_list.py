"""GENEB's published task list against the task catalogue (issue 23, part 6)."""

from __future__ import annotations

import collections
import json

from typer.testing import CliRunner

from geneb.cli import app
from geneb.tasks.geneb_list import GENEB_LIST_FILE


def _json(*args: str):
    res = CliRunner().invoke(app, ["tasks", "catalogue", *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_category_counts_against_geneb() -> None:
    cmp = _json("--compare-geneb")
    rows = {r["category"]: r for r in cmp["categories"]}
    # the counts GENEB states (issue 23): 100 tasks; histone 30, promoters 22, chromatin 1
    assert cmp["n_geneb"] == 100 == sum(r["geneb"] for r in rows.values())
    assert (rows["histone_modifications"]["geneb"], rows["promoters"]["geneb"]) == (30, 22)
    assert rows["chromatin_accessibility"]["geneb"] == 1
    # the catalogue side equals the categories `geneb tasks catalogue --json` lists
    listed = [e for e in _json() if e["kind"] == "classification"]
    # 94 classification tasks before issue 23, plus 25 GENEB tasks (issue 33: from GENEB's own
    # task dataset, the Plant Genomic Benchmark and the GUE mirror)
    assert cmp["n_catalogue"] == len(listed) == 119
    suites = collections.Counter(e["suite"] for e in listed)
    assert (suites["geneb_tasks"], suites["plant_genomic_benchmark"], suites["gue_extra"]) == (
        17, 7, 1)
    counts = collections.Counter(e["category"] for e in listed)
    assert {c: r["catalogue"] for c, r in rows.items() if r["catalogue"]} == dict(counts)
    # shared = GENEB tasks whose matched catalogue entry exists (read from the data file)
    names = {e["name"] for e in listed}
    data = json.loads(GENEB_LIST_FILE.read_text())
    assert cmp["n_shared"] == sum(t["catalogue_name"] in names for t in data["tasks"]) == 100
    assert cmp["missing"] == []
    # GUE's mouse tasks are TF binding here and "Mouse Enh." in GENEB, among 8 disagreements
    assert len(cmp["disagreements"]) == 8
    assert {"task": "gue_mouse_0", "catalogue_category": "tf_binding",
            "geneb_category": "mouse_enhancers"} in cmp["disagreements"]  # fmt: skip


def test_geneb_list_entries_state_no_unchecked_fact() -> None:
    entries = _json("--suite", "geneb_tasks", "--suite", "plant_genomic_benchmark",
                    "--suite", "gue_extra")  # fmt: skip
    assert len(entries) == 25
    for e in entries:  # GENEB's category and source; fetchable (issue 33); nothing guessed
        assert e["fetchable"], (e["name"], e["not_fetchable_because"])
        for key in ("n_classes", "n_train", "n_valid", "n_test"):  # stated = sourced and checked
            assert e[key] is None or (e["sources"].get(key) and key in e["checked"]), e["name"]
    # class counts read from the upstream iPro-WAEL files (8 tasks), the Plant Genomic
    # Benchmark card (the 6 PGB lncRNA tasks) and iDNA-ABF files (2); the other 9 state none
    stated = {e["name"] for e in entries if e["n_classes"] is not None}
    assert len(stated) == 16
    assert {"idna_abf_5mc", "idna_abf_6ma"} <= stated
    assert {n for n in stated if n.startswith("pgb_lncrna_")} == {
        f"pgb_lncrna_{s}" for s in
        ("g_max", "m_esculenta", "s_bicolor", "s_lycopersicum", "t_aestivum", "z_mays")
    }


def test_plain_comparison_names_the_source() -> None:
    res = CliRunner().invoke(app, ["tasks", "catalogue", "--compare-geneb"])
    assert res.exit_code == 0
    assert "darlednik/GENEB" in res.output and "total" in res.output
