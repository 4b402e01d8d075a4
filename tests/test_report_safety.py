"""A report writes only what it owns, neutralises spreadsheet formulas in its CSV tables and
escapes every value in its HTML (issue 15)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from example_results import example_results

from geneb.analysis.report import MANIFEST, build_report
from geneb.analysis.report import build as build_mod
from geneb.analysis.report.page import FORMULA_START, csv_safe_value
from geneb.errors import GenebError

N_BOOT = 100


def user_files(folder: Path) -> dict[str, bytes]:
    (folder / "tables").mkdir(parents=True)
    (folder / "figures").mkdir()
    files = {
        "tables/my_results.csv": b"a,b\n1,2\n",
        "figures/my_plot.png": b"\x89PNG not really",
        "notes.txt": b"my notes",
    }
    for rel, data in files.items():
        (folder / rel).write_bytes(data)
    return files


def test_foreign_folder_is_refused_and_left_whole(tmp_path):
    out = tmp_path / "mine"
    files = user_files(out)
    with pytest.raises(GenebError, match="holds files that geneb did not write"):
        build_report(example_results(), out, n_boot=N_BOOT)
    for rel, data in files.items():
        assert (out / rel).read_bytes() == data
    assert sorted(p.name for p in out.iterdir()) == ["figures", "notes.txt", "tables"]


def test_cli_refuses_a_foreign_folder(tmp_path):
    from typer.testing import CliRunner

    from geneb.cli import app

    res = tmp_path / "r.parquet"
    example_results().to_parquet(res)
    out = tmp_path / "mine"
    files = user_files(out)
    r = CliRunner().invoke(app, ["report", "--results", str(res), "--out", str(out)])
    assert r.exit_code == 2 and r.output.startswith("error: report output"), r.output
    assert all((out / rel).read_bytes() == data for rel, data in files.items())


def test_empty_folder_is_used_and_rerun_keeps_user_additions(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    build_report(example_results(), out, n_boot=N_BOOT)
    assert (out / MANIFEST).is_file()
    assert (out / "figures" / "linear_vs_mlp.png").exists()
    assert (out / "tables" / "probe_stability.csv").exists()
    (out / "tables" / "my_extra.csv").write_text("x\n1\n")
    (out / "README-mine.txt").write_text("mine")
    build_report(example_results(mlp=False), out, n_boot=N_BOOT)
    assert (out / "tables" / "my_extra.csv").read_text() == "x\n1\n"
    assert (out / "README-mine.txt").read_text() == "mine"
    # the report's own stale figure and table (no MLP rows now), gone
    assert not (out / "figures" / "linear_vs_mlp.png").exists()
    assert not (out / "tables" / "probe_stability.csv").exists()
    assert not list(out.glob(".geneb-report-staging-*"))


def test_user_file_with_a_report_name_is_not_overwritten(tmp_path, built_report):
    out = built_report(tmp_path / "r", mlp=False)  # a previous report without MLP rows
    before = (out / "index.html").read_bytes()
    mine = out / "figures" / "linear_vs_mlp.png"  # not written by that report
    mine.write_bytes(b"user's own figure")
    with pytest.raises(GenebError, match="linear_vs_mlp.png exists and was not written"):
        build_report(example_results(), out, n_boot=N_BOOT)
    assert mine.read_bytes() == b"user's own figure"
    assert (out / "index.html").read_bytes() == before
    assert not list(out.glob(".geneb-report-staging-*"))


def test_failed_build_leaves_the_previous_report_whole(tmp_path, monkeypatch, built_report):
    out = built_report(tmp_path / "r")  # the previous report
    snapshot = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def boom(page, ctx):
        raise RuntimeError("section failed")

    monkeypatch.setattr(build_mod, "SECTIONS", [*build_mod.SECTIONS[:3], boom])
    with pytest.raises(RuntimeError):
        build_report(example_results(), out, n_boot=N_BOOT)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == snapshot


def test_output_that_is_a_file_or_a_symlinked_subfolder(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(GenebError, match="exists and is not a folder"):
        build_report(example_results(), f, n_boot=N_BOOT)
    out = tmp_path / "r"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "tables").symlink_to(elsewhere)
    with pytest.raises(GenebError, match="tables/ is a symlink"):
        build_report(example_results(), out, n_boot=N_BOOT)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("kmer-4", "kmer-4"),
        (-0.5, -0.5),
    ],
)
def test_csv_safe_value(value, expected):
    assert csv_safe_value(value) == expected


HOSTILE = {
    "kmer-4": '=HYPERLINK("http://evil.example","click")',
    "tiny-1m": "<script>alert(1)</script>",
    "small-4m": "@SUM(1+1)",
    "mid-20m": "+cmd|' /C calc'!A0",
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    df = example_results()
    df["model"] = df["model"].replace(HOSTILE)
    df["category"] = df["category"].replace({"promoters": "-promoters"})
    return build_report(df, tmp_path_factory.mktemp("h") / "r", n_boot=N_BOOT).parent


def test_no_csv_cell_is_a_formula(hostile):
    n_cells = 0
    for path in (hostile / "tables").glob("*.csv"):
        with path.open(newline="", encoding="utf-8") as fh:
            for row in csv.reader(fh):
                for cell in row:
                    n_cells += 1
                    if cell.startswith(FORMULA_START):
                        float(cell)  # only a number may start with '-' or '+'
    assert n_cells > 1000
    with (hostile / "tables" / "leaderboard_full.csv").open(newline="") as fh:
        models = {r["model"] for r in csv.DictReader(fh)}
    assert "'" + HOSTILE["kmer-4"] in models and "'" + HOSTILE["small-4m"] in models
    assert HOSTILE["tiny-1m"] in models  # not a formula: unchanged


def test_html_escapes_every_value(hostile):
    page = (hostile / "index.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "=HYPERLINK(&quot;http://evil.example&quot;" in page
