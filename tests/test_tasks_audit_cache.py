"""Issue 28 cases 3, 4, 6: a cached audit is used only when it is the intact audit of the task.

Tamperings held out from the issue's replay (``"verdict": "pass"``, a list, a missing key,
wrong types, bad bytes, ``"task": "../../x"``): another verdict, a count changed under the
same verdict, a resealed record of other counts, a record of another task copied over,
a truncated file, NaN counts. Each is recomputed (the fresh audit's verdict is the one a
freshly computed audit of the same task gives, in a cache of its own) with one line naming
the file; the ``--out`` names never come from file content.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_tasks_audit import planted, rand_seq, write_task  # noqa: F401 - fixture
from typer.testing import CliRunner

from geneb.audit import cached_audit, find_audits
from geneb.audit.record import seal
from geneb.cli import app
from geneb.tasks import load_task_folder


@pytest.fixture(scope="module")
def reference(planted: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:  # noqa: F811
    """The planted task's audit computed in a cache nothing else touches."""
    return cached_audit(load_task_folder(planted["folder"]),
                        cache=tmp_path_factory.mktemp("clean"))


def _edit(text: str, how: str, other: str) -> bytes:
    rec = json.loads(text)
    if how == "verdict_warn":
        rec["verdict"] = "warn"
    elif how == "count_same_verdict":
        rec["exact_duplicates_across_splits"] += 1
    elif how == "resealed_other_counts":
        rec["exact_duplicates_across_splits"] = 0
        rec["revcomp_duplicates_across_splits"] = 0
        rec["near_duplicates_across_splits"] = 0
        rec["verdict"], rec["reasons"] = "pass", []
        rec["shortcut_mcc"] = {k: 0.0 for k in rec["shortcut_mcc"]}
        rec["composition_twin_opposite_label_fraction"] = 0.0
        rec["label_conflicts_across_splits"] = 0
        rec["within_split"] = {k: {**v, "label_conflicts": 0}
                               for k, v in rec["within_split"].items()}
        return json.dumps(seal(rec)).encode()
    elif how == "other_task":
        return other.encode()
    elif how == "truncated":
        return text.encode()[: len(text) // 2]
    elif how == "nan_count":
        return text.replace('"n_test": 100', '"n_test": NaN').encode()
    elif how == "dict_as_string":
        rec["shortcut_mcc"] = "high"
    elif how == "latin1":
        return text.replace('"fail"', '"f\u00e9il"').encode("latin-1")
    return json.dumps(rec).encode()


HOW = ["verdict_warn", "count_same_verdict", "resealed_other_counts", "other_task",
       "truncated", "nan_count", "dict_as_string", "latin1"]


def test_tampered_or_malformed_cache_is_recomputed_with_one_line(planted, reference,  # noqa: F811
                                                                  tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("GENEB_CACHE", str(cache))
    rng = np.random.default_rng(11)
    other = write_task(tmp_path / "other", [(rand_seq(rng, 80), i % 2) for i in range(40)],
                       [(rand_seq(rng, 80), i % 2) for i in range(20)])
    cached_audit(load_task_folder(other))
    other_text = next((cache / "audit").glob("other-*.json")).read_text()
    task = load_task_folder(planted["folder"])
    first = cached_audit(task)
    path = next((cache / "audit").glob("planted-*.json"))
    clean_text = path.read_text()
    for how in HOW:
        path.write_bytes(_edit(clean_text, how, other_text))
        lines: list[str] = []
        rec = cached_audit(task, say=lines.append)
        assert rec["cached"] is False, how
        assert rec["verdict"] == reference["verdict"] == "fail", how
        assert rec["exact_duplicates_across_splits"] == reference[
            "exact_duplicates_across_splits"], how
        assert len(lines) == 1 and str(path) in lines[0] and "recomputed" in lines[0], (how,
                                                                                        lines)
        assert cached_audit(task, say=lines.append)["cached"] is True  # replaced, intact again
        assert len(lines) == 1
    assert first["verdict"] == "fail"
    # the CLI: one line on stderr, the table shows the recomputed verdict
    path.write_bytes(_edit(clean_text, "verdict_warn", other_text))
    res = CliRunner().invoke(app, ["tasks", "audit", str(planted["folder"])])
    assert res.exit_code == 0, res.output
    assert "FAIL" in res.output and "WARN" not in res.output.replace("warn:", "")
    said = [ln for ln in res.output.splitlines() if "audit cache" in ln]
    assert len(said) == 1 and "recomputed" in said[0] and "Traceback" not in res.output


def test_report_never_reads_a_tampered_record(planted, reference, tmp_path):  # noqa: F811
    out = tmp_path / "audits"
    res = CliRunner().invoke(app, ["tasks", "audit", str(planted["folder"]), "--out", str(out)],
                             env={"GENEB_CACHE": str(tmp_path / "c")})
    assert res.exit_code == 0, res.output
    fp = reference["fingerprints"]["train"]
    assert find_audits([("planted", fp)], out)["planted"]["verdict"] == "fail"
    f = out / "planted.json"
    f.write_text(f.read_text().replace('"verdict": "fail"', '"verdict": "pass"'))
    assert find_audits([("planted", fp)], out) == {}
    f.write_bytes(b"\xff\xfe[1, 2]")
    assert find_audits([("planted", fp)], out) == {}


@pytest.mark.parametrize("name", ["../../escaped", "/tmp/abs-escaped", "sub/dir/x"])
def test_out_names_come_from_the_task_not_the_file(planted, reference, tmp_path,  # noqa: F811
                                                   name):
    cache = tmp_path / "cache"
    task = load_task_folder(planted["folder"])
    cached_audit(task, cache=cache)
    path = next((cache / "audit").glob("planted-*.json"))
    rec = json.loads(path.read_text())
    rec["task"] = name
    path.write_text(json.dumps(seal(rec)))  # a well-formed, resealed record naming elsewhere
    out = tmp_path / "deep" / "er" / "out"
    res = CliRunner().invoke(app, ["tasks", "audit", str(planted["folder"]), "--out", str(out)],
                             env={"GENEB_CACHE": str(cache)})
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["planted.json"]
    assert json.loads((out / "planted.json").read_text())["task"] == "planted"
    assert not list(tmp_path.rglob("escaped*")) and not Path("/tmp/abs-escaped.json").exists()


@pytest.mark.parametrize("inside", ["", "audit", "deeper/still"])
def test_cache_naming_a_file_is_one_line(planted, tmp_path, inside):  # noqa: F811
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cache = blocker / inside if inside else blocker
    res = CliRunner().invoke(app, ["tasks", "audit", str(planted["folder"])],
                             env={"GENEB_CACHE": str(cache)})
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    text = " ".join(res.output.split())
    assert lines[0].startswith("error: ") and "Traceback" not in res.output
    assert "is a file, expected a folder" in text and "$GENEB_CACHE" in text, text
    assert blocker.read_text() == "not a folder"
