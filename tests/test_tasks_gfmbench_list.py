"""GFMBench-API's 20 tasks under their class names (geneb/tasks/gfmbench_list.json), each
mapped to the task-catalogue entries it is, or saying why there is none."""

from __future__ import annotations

import json

import pytest

import geneb
from geneb.errors import GenebError, TaskError
from geneb.tasks import gfmbench_list as gl
from geneb.tasks.catalogue import load_task_catalogue, select

#: The task classes of GFMBench-API's README ("Supported Benchmarks & Tasks", @ bab164e).
README_CLASSES = {
    "GuePromoterAllTask", "GueSpliceSiteTask", "GueTranscriptionFactorTask",
    "VariantBenchmarksCodingTask", "VariantBenchmarksNonCodingTask",
    "VariantBenchmarksExpressionTask", "VariantBenchmarksCommonVsRareTask",
    "VariantBenchmarksMEQTLTask", "VariantBenchmarksSQTLTask", "LRBCausalEqtlTask",
    "VepevalClinvarTask", "IndelClinvarTask", "BendVEPExpression", "BendVEPDisease",
    "SonglabClinvarTask", "BRCA1Task", "TraitGymComplexTask", "TraitGymMendelianTask",
    "LrbVariantEffectPathogenicOmimTask", "LoleveCausalEqtlTask",
}


def test_the_twenty_classes_each_mapped_or_said_why_not():
    tasks = gl.gfmbench_tasks()
    assert {t.cls for t in tasks} == README_CLASSES and len(tasks) == 20
    by_name = {e.name: e for e in load_task_catalogue()}
    for t in tasks:
        assert t.module.endswith("_task.py") and t.module.startswith("gfmbench_api/tasks/")
        for name in t.catalogue:  # every named entry exists and is the right kind
            entry = by_name[name]
            assert entry.kind == ("classification" if t.geneb_kind == "classification"
                                  else "variants"), (t.cls, name)
        if t.match == "none":
            assert not t.catalogue and t.missing
        if t.match == "differs":
            assert t.notes
    pinned = {t.cls: t.catalogue for t in tasks}
    assert pinned["BRCA1Task"] == ("brca1_findlay2018",)
    assert pinned["GuePromoterAllTask"] == ("gue_prom_300_all",)
    assert pinned["GueSpliceSiteTask"] == ("gue_splice_reconstructed",)
    assert len(pinned["GueTranscriptionFactorTask"]) == 5
    assert gl.gfmbench_task("GueSpliceSiteTask").n_labels == 3


def test_class_names_select_catalogue_entries():
    entries = load_task_catalogue()
    got = [e.name for e in select(["BRCA1Task", "GueTranscriptionFactorTask",
                                   "gue_human_tf_0"], entries)]
    assert got == ["brca1_findlay2018", *[f"gue_human_tf_{i}" for i in range(5)]]
    with pytest.raises(TaskError, match="VariantBenchmarksSQTLTask.*no geneb catalogue entry"):
        select(["VariantBenchmarksSQTLTask"], entries)


def test_load_task_by_class_name():
    with pytest.raises(GenebError, match="is 5 geneb tasks"):
        geneb.load_task("GueTranscriptionFactorTask")
    with pytest.raises(TaskError, match="cannot be fetched"):  # as brca1_findlay2018 today
        geneb.load_task("BRCA1Task")
    with pytest.raises(GenebError, match="geneb tasks fetch gue_prom_300_all"):
        geneb.load_task("GuePromoterAllTask")


@pytest.mark.parametrize("edit, msg", [
    (lambda d: d["tasks"][0].update(match="cousin"), "match: expected one of"),
    (lambda d: d["tasks"][0].update(catalogue=[]), "expected 'none' exactly"),
    (lambda d: d["tasks"][0].update(extra=1), "unknown key 'extra'"),
    (lambda d: d["tasks"][0].pop("n_labels"), "'n_labels' is given exactly"),
    (lambda d: d["tasks"].append(dict(d["tasks"][0])), "appears twice"),
])
def test_malformed_list_is_one_line(tmp_path, monkeypatch, edit, msg):
    doc = json.loads(gl.GFMBENCH_LIST_FILE.read_text())
    edit(doc)
    p = tmp_path / "gfmbench_list.json"
    p.write_text(json.dumps(doc))
    monkeypatch.setattr(gl, "GFMBENCH_LIST_FILE", p)
    gl.gfmbench_tasks.cache_clear()
    try:
        with pytest.raises(TaskError, match=msg):
            gl.gfmbench_tasks()
    finally:
        gl.gfmbench_tasks.cache_clear()


def test_docs_table_lists_every_class_and_its_entries():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "task-api.md").read_text()
    rows = {line.split("|")[1].strip(" `"): line for line in doc.splitlines()
            if line.startswith("| `")}
    for t in gl.gfmbench_tasks():
        assert t.cls in rows, t.cls
        assert all(f"`{n}`" in rows[t.cls] for n in t.catalogue), t.cls
        assert f"| {t.match} |" in rows[t.cls], t.cls
