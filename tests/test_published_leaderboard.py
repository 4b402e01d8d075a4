"""`geneb leaderboard` and `geneb leaderboard import`: the ranking per regime and category,
and a newer `leaderboard_tasks.json` of GENEB's shape kept in the cache, or refused in one line
with nothing cached (a record whose micro/macro does not match its tasks, a missing task, NaN,
a duplicate model, an unknown regime, ...).

The files are made in GENEB's shape (``task_MCC`` an object keyed by task id) from the packaged
leaderboard; where a test changes a value it recomputes micro and macro as GENEB's
``validate.py`` does (left to right in task order), independently of geneb.
"""

from __future__ import annotations

import copy
import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED, require_shared
from typer.testing import CliRunner

import geneb
from geneb.cli import app
from geneb.errors import LeaderboardError
from geneb.results.published import PACKAGED_FILE, cache_file, import_leaderboard

H3 = "InstaDeepAI_nucleotide_transformer_downstream_tasks_H3"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GENEB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def genebs_shape() -> dict[str, Any]:
    """The packaged leaderboard as GENEB's leaderboard_tasks.json has it (MCC part)."""
    doc = json.loads(PACKAGED_FILE.read_text())
    ids = [t["id"] for t in doc["tasks"]]
    data = {regime: [{**r, "task_MCC": dict(zip(ids, r["task_MCC"], strict=True))}
                     for r in recs] for regime, recs in doc["data"].items()}
    return {"tasks": doc["tasks"], "data": data}


def restate(doc: dict[str, Any], record: dict[str, Any]) -> None:
    """micro and macro of ``record`` as GENEB's validate.py computes them."""
    cat = {t["id"]: t["cat"] for t in doc["tasks"]}
    vals = [record["task_MCC"][t["id"]] for t in doc["tasks"]]
    total = 0.0
    for v in vals:
        total += v
    record["micro_MCC"] = total / len(vals)
    means = []
    for c in dict.fromkeys(cat.values()):
        xs = [v for t, v in zip(doc["tasks"], vals, strict=True) if cat[t["id"]] == c]
        s = 0.0
        for v in xs:
            s += v
        means.append(s / len(xs))
    s = 0.0
    for m in means:
        s += m
    record["macro_MCC"] = s / len(means)


def test_ranking_per_regime_is_the_published_one() -> None:
    src = require_shared(SHARED / "published" / "geneb-9642d48", "GENEB's leaderboard")
    res = CliRunner().invoke(app, ["leaderboard", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    with open(src / "categories.csv", encoding="utf-8", newline="") as f:
        facts = list(csv.DictReader(f))
    regime = {"full": "full", "10shot": "10", "1shot": "1"}
    for key, name in regime.items():
        ref = sorted((r for r in facts if r["regime"] == key),
                     key=lambda r: (-float(r["macro_MCC"]), r["model"]))
        rows = got["regimes"][name]
        assert [r["model"] for r in rows] == [r["model"] for r in ref]
        assert [r["macro_mcc"] for r in rows] == [float(r["macro_MCC"]) for r in ref]
        assert [r["params"] for r in rows] == [int(r["params"]) for r in ref]
        assert [r["official"] for r in rows] == [r["official"] == "true" for r in ref]
        from geneb.results.leaderboard_file import GENEB_CATEGORY_SLUGS as SLUG

        assert [r["categories"] for r in rows] == [
            {SLUG[c]: float(r[c]) for c in SLUG} for r in ref]  # the published cat_MCC
    # one category, ranked by its mean: the published cat_MCC
    res = CliRunner().invoke(app, ["leaderboard", "--shots", "1", "--category", "Promoters",
                                   "--json"])
    rows = json.loads(res.output)["regimes"]["1"]
    ref = sorted((r for r in facts if r["regime"] == "1shot"),
                 key=lambda r: (-float(r["Promoters"]), r["model"]))
    assert [(r["model"], r["score"], r["n_tasks"]) for r in rows] == [
        (r["model"], float(r["Promoters"]), 22) for r in ref]
    assert rows[0]["model"] == "splicebert-1024nt" and rows[0]["submitted"] == "self-reported"


def test_plain_table_shows_params_and_flags() -> None:
    res = CliRunner().invoke(app, ["leaderboard", "--shots", "full"])
    assert res.exit_code == 0
    lines = res.output.splitlines()
    assert lines[0].startswith("source: darlednik/GENEB@9642d48")
    first = next(line for line in lines if line.strip().startswith("1 "))
    assert "GENERator-eukaryote-3b-base" in first and "3B" in first and "official" in first
    assert "0.6049" in first
    assert any("splicebert-1024nt" in line and "self-reported" in line for line in lines)


def test_import_a_newer_leaderboard(tmp_path: Path, cache: Path) -> None:
    doc = genebs_shape()
    rec = doc["data"]["full"][0]
    rec["task_MCC"][H3] = 0.5
    restate(doc, rec)
    f = tmp_path / "leaderboard_tasks.json"
    f.write_text(json.dumps(doc))
    res = CliRunner().invoke(app, ["leaderboard", "import", str(f)])
    assert res.exit_code == 0, res.output
    assert "100 tasks, 41 models, regimes full, 10shot, 1shot" in res.output
    assert cache_file().is_file()
    new = geneb.read_results("published:geneb")
    old = geneb.read_results("published:geneb-9642d48")
    pick = (new["model"] == rec["model"]) & (new["task"] == H3) & (new["regime"] == "full")
    assert new.loc[pick, "mcc"].item() == 0.5 and old.loc[pick, "mcc"].item() != 0.5
    assert (new["official"] == old["official"]).all()  # flags from the packaged leaderboard
    res = CliRunner().invoke(app, ["leaderboard", "--shots", "full", "--json"])
    mine = next(r for r in json.loads(res.output)["regimes"]["full"] if r["model"] == rec["model"])
    assert mine["macro_mcc"] == rec["macro_MCC"]


def _micro(d: dict[str, Any]) -> None:
    d["data"]["full"][0]["micro_MCC"] += 1e-6


def _macro(d: dict[str, Any]) -> None:
    d["data"]["10shot"][3]["macro_MCC"] -= 1e-4


def _missing(d: dict[str, Any]) -> None:
    del d["data"]["1shot"][2]["task_MCC"][H3]


def _nan(d: dict[str, Any]) -> None:
    d["data"]["full"][1]["task_MCC"][H3] = float("nan")


def _duplicate(d: dict[str, Any]) -> None:
    d["data"]["full"].append(copy.deepcopy(d["data"]["full"][0]))


def _regime(d: dict[str, Any]) -> None:
    d["data"]["5shot"] = d["data"]["1shot"]


def _category(d: dict[str, Any]) -> None:
    d["tasks"][0]["cat"] = "Histones"


def _unknown_task(d: dict[str, Any]) -> None:
    d["data"]["full"][0]["task_MCC"]["my_task"] = 0.3


MALFORMED: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("micro", _micro, r"data\.full 'agro-nucleotide-transformer-1b': micro_MCC 0\.4962\d* is "
                      r"not the mean of its 100 task values \(0\.4962853848839059\)"),
    ("macro", _macro, r"data\.10shot '.*': macro_MCC .* is not the mean of its 100 task values"),
    ("missing task", _missing, r"data\.1shot '.*': task_MCC: missing task '.*_H3' \(1 of the "
                               r"100 tasks missing\)"),
    ("NaN", _nan, r"data\.full '.*': task '.*_H3': expected a finite MCC in \[-1, 1\], got nan"),
    ("duplicate", _duplicate, r"data\.full 'agro-nucleotide-transformer-1b': duplicate model"),
    ("regime", _regime, r"data: unknown regime '5shot'; expected full, 10shot, 1shot"),
    ("category", _category, r"tasks\[0\] '.*_H3': category 'Histones' is not one of GENEB's"),
    ("unknown task", _unknown_task, r"task_MCC: task 'my_task' is not in the file's tasks"),
]


@pytest.mark.parametrize(("what", "edit", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_file_refused_in_one_line_nothing_cached(
        tmp_path: Path, what: str, edit: Callable[[dict[str, Any]], None], message: str) -> None:
    doc = genebs_shape()
    edit(doc)
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))  # NaN is written as GENEB's JSON writer would: NaN
    with pytest.raises(LeaderboardError, match=message) as e:
        import_leaderboard(f)
    assert "\n" not in str(e.value)
    assert not cache_file().exists()
    res = CliRunner().invoke(app, ["leaderboard", "import", str(f)])
    assert res.exit_code != 0
    out = [line for line in res.output.splitlines() if line.strip()]
    assert len(out) == 1 and out[0].startswith("error: ") and str(f) in out[0]
    assert not cache_file().exists()


def test_refused_file_leaves_an_imported_one_as_it_was(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(genebs_shape()))
    import_leaderboard(good)
    before = cache_file().read_bytes()
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(LeaderboardError, match="not a JSON file"):
        import_leaderboard(bad)
    assert cache_file().read_bytes() == before


COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture()
def server(tmp_path: Path):
    """A server on 127.0.0.1 serving ``tmp_path/www`` (started by the test: no network)."""
    import functools
    import http.server
    import threading

    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_import_from_a_url_pinned_at_a_commit(server) -> None:
    root, base = server
    where = root / "darlednik" / "GENEB" / COMMIT / "leaderboard"
    where.mkdir(parents=True)
    (where / "leaderboard_tasks.json").write_text(json.dumps(genebs_shape()))
    url = f"{base}/darlednik/GENEB/{COMMIT}/leaderboard/leaderboard_tasks.json"
    res = CliRunner().invoke(app, ["leaderboard", "import", url])
    assert res.exit_code == 0, res.output
    rows = geneb.read_results("published:geneb")
    assert set(rows["source"]) == {f"darlednik/GENEB@{COMMIT[:7]}"}
    assert json.loads(cache_file().read_text())["source"]["url"] == url


def test_url_refused_unpinned_unreachable_or_malformed(server) -> None:
    from geneb.results.leaderboard_url import import_leaderboard_url

    root, base = server
    with pytest.raises(LeaderboardError, match="expected a URL pinned at a commit"):
        import_leaderboard_url(f"{base}/darlednik/GENEB/main/leaderboard/x.json")
    with pytest.raises(LeaderboardError, match="download failed .*nothing was cached"):
        import_leaderboard_url(f"{base}/x/y/{COMMIT}/missing.json")
    (root / "bad").mkdir()
    doc = genebs_shape()
    _duplicate(doc)
    (root / "bad" / "l.json").write_text(json.dumps(doc))
    url = f"{base}/bad/l.json?pin={COMMIT}"
    with pytest.raises(LeaderboardError, match=r"^http://127\.0\.0\.1:\d+/bad/l\.json\?pin=.*: "
                                               r"data\.full .*duplicate model"):
        import_leaderboard_url(url)
    assert not cache_file().exists()
