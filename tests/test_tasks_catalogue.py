"""The built-in task catalogue: coverage, well-formed facts, and the ``catalogue`` command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import TaskError, UnknownNameError
from geneb.tasks.catalogue import CATALOGUE_FILE, load_task_catalogue, select, suites
from geneb.tasks.spec import CATEGORIES

HEX40 = re.compile(r"[0-9a-f]{40}")


@pytest.fixture(scope="module")
def entries():
    return load_task_catalogue()


def test_covers_the_suites_the_issue_names(entries) -> None:
    assert len(entries) >= 100
    by_suite = suites(entries)
    assert len(by_suite["gue"]) == 28  # GUE: 28 datasets (DNABERT-2 README)
    assert len(by_suite["nt"]) == 18 and len(by_suite["nt_revised"]) == 18  # NT: 18 tasks
    assert len(by_suite["genomic_benchmarks"]) == 9  # the package's nine datasets
    names = {e.name for e in by_suite["vep"]}
    assert {"clinvar", "brca1_findlay2018", "bend_vep_expression", "bend_vep_disease"} <= names
    assert any(n.startswith("traitgym_") for n in names)


def test_every_entry_is_mapped_with_a_reason(entries) -> None:
    for e in entries:
        assert e.category_reason.strip(), e.name
        if e.kind == "classification":
            assert e.category in CATEGORIES, e.name
        else:
            assert e.category is None, e.name  # variant sets sit outside the 13 categories
    used = {e.category for e in entries if e.category}
    assert len(used) == 13  # every GENEB category has at least one catalogued task


def test_pins_are_exact_and_fetchable_entries_are_pinned(entries) -> None:
    for e in entries:
        if e.source.revision is not None:
            assert HEX40.fullmatch(e.source.revision), e.name
        if e.fetchable() is None and not e.source.hub:
            assert all(f.url and f.sha256 for f in e.source.files), e.name
            assert "source.sha256" in e.checked, e.name
        # a hub source without a checked pin is fetched at a full commit all the same (the
        # hub's current one when none is published), recorded with each file's sha256 in
        # fetch.json (tests/test_tasks_fetch_geneb.py); it never claims a checked revision
        if e.source.hub and "source.revision" in e.checked:
            assert e.source.revision, e.name
    fetchable = {e.suite for e in entries if e.fetchable() is None}
    assert {"nt", "nt_revised", "gue"} <= fetchable
    refused = [e for e in entries if e.fetchable() is not None]
    assert all(e.fetchable() for e in refused)  # a stated reason, never an empty one


def test_checked_facts_are_never_null_claims(entries) -> None:
    """A fact listed as checked has a value; all_checked means no null and nothing unchecked."""
    for e in entries:
        for fact in ("license", "n_classes", "seq_len"):
            if fact in e.checked:
                assert getattr(e, fact) is not None, (e.name, fact)
        if e.all_checked():
            assert e.license is not None and e.unchecked_facts() == []


def test_json_objects_have_the_required_fields(entries) -> None:
    result = CliRunner().invoke(app, ["tasks", "catalogue", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert len(rows) == len(entries)
    required = {"name", "suite", "category", "source", "license", "n_classes", "n_train", "n_test"}
    for row in rows:
        assert required <= set(row), row["name"]
        assert isinstance(row["source"], str) and row["source"]
    nt = next(r for r in rows if r["name"] == "nt_h3k4me3")
    assert nt["source"] == "hf:InstaDeepAI/nucleotide_transformer_downstream_tasks@" + (
        "1eb53008d1202c4de77dd963b29118ebc18d501b"
    )


def test_table_and_suite_filter() -> None:
    result = CliRunner().invoke(app, ["tasks", "catalogue", "--suite", "genomic_benchmarks"])
    assert result.exit_code == 0, result.output
    assert "gb_human_nontata_promoters" in result.output and "nt_h3" not in result.output
    assert "9 tasks in 1 suites" in " ".join(result.output.split())
    bad = CliRunner().invoke(app, ["tasks", "catalogue", "--suite", "gue_plu"])
    assert bad.exit_code == 2 and "gue_plus" in bad.output


def test_select_by_task_and_suite(entries) -> None:
    picked = select(["gb_human_ocr_ensembl", "nt", "nt_h3"], entries)
    assert [e.name for e in picked][:2] == ["gb_human_ocr_ensembl", "nt_h3"]
    assert len(picked) == 19  # nt_h3 named twice, kept once
    with pytest.raises(UnknownNameError, match="Did you mean 'gue'"):
        select(["guee"], entries)


def test_a_malformed_catalogue_names_entry_and_key(tmp_path: Path) -> None:
    base = json.loads(CATALOGUE_FILE.read_text())["tasks"][0]
    cases = [
        (dict(base, category="histone"), "entry 1 (nt_h3)"),
        (dict(base, source=dict(base["source"], revision="main")), "full 40-hex commit"),
        (dict(base, n_classes="2"), "n_classes: expected null or a non-negative int, got '2'"),
        (dict(base, name="a/b"), "invalid task name"),
    ]
    for i, (obj, fragment) in enumerate(cases):
        path = tmp_path / f"c{i}.json"
        path.write_text(json.dumps({"tasks": [obj]}))
        with pytest.raises(TaskError, match=re.escape(fragment)):
            load_task_catalogue(path)
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps({"tasks": [base, base]}))
    with pytest.raises(TaskError, match="appears twice"):
        load_task_catalogue(dup)
