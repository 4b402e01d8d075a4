"""The HTML report: files, figures, offline HTML, degenerate inputs, model info and the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from example_results import example_results
from PIL import Image
from typer.testing import CliRunner

from geneb.analysis.report import build_report
from geneb.cli import app

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FIGURES = {
    "heatmap_model_category.png",
    "scaling.png",
    "fewshot.png",
    "rank_changes.png",
    "linear_vs_mlp.png",
    "mcc_vs_c.png",
    "tiers.png",  # capacity tiers (the example models have parameter counts)
    "matched_pairs.png",  # matched pairs (from the --model-properties file)
}
N_BOOT = 200


def check_png(path: Path) -> None:
    """A valid, non-empty, non-blank PNG."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, path
    assert len(data) > 2000, path
    with Image.open(path) as im:
        im.verify()
    with Image.open(path) as im:
        arr = np.asarray(im.convert("L"))
    assert arr.shape[0] > 100 and arr.shape[1] > 100
    assert arr.std() > 1.0, f"{path} looks blank"


def check_offline(html: str) -> None:
    """No external reference: every src/href is inline data or a relative file."""
    refs = re.findall(r"""(?:src|href)\s*=\s*["']?([^"'\s>]+)""", html, flags=re.I)
    assert refs, "expected embedded images"
    for ref in refs:
        if ref.startswith("data:image/png;base64,"):
            continue  # inline (base64 text may spell "http" by chance: ~4% per figure)
        assert "http" not in ref.lower() and not ref.startswith("//"), ref
        assert not re.match(r"^[a-z]+:", ref), ref
    assert "<script" not in html.lower()
    assert "<link" not in html.lower()
    assert "@import" not in html and "url(" not in html


@pytest.fixture(scope="module")
def full_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    props = out.parent / "props.csv"  # the properties, then columns of the user's own
    props.write_text(
        "model,architecture_class,tokenization_class,pretraining_data_class,architecture,"
        "tokenization,pretraining_data\n"
        "kmer-4,,,,kmer,kmer,none\n"
        "tiny-1m,CNN,single-nucleotide,human,cnn,char,human\n"
        "small-4m,transformer encoder,BPE,human,transformer,bpe,human\n"
        "mid-20m,transformer encoder,BPE,multi-species,transformer,bpe,multi\n"
        "big-100m,transformer encoder,k-mer,multi-species,transformer,kmer,multi\n"
    )
    return build_report(example_results(), out, n_boot=N_BOOT, model_properties=props)


def test_report_files(full_report):
    out = full_report.parent
    assert full_report.name == "index.html"
    assert {p.name for p in (out / "figures").glob("*.png")} == FIGURES
    for p in (out / "figures").glob("*.png"):
        check_png(p)
    html = full_report.read_text(encoding="utf-8")
    check_offline(html)
    # every figure is embedded, decodable, and identical to its file
    import base64

    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(imgs) == len(FIGURES)
    files = {p.read_bytes() for p in (out / "figures").glob("*.png")}
    assert {base64.b64decode(i) for i in imgs} == files
    # every table named in the page exists and is a readable, non-empty CSV
    named = set(re.findall(r"tables/([A-Za-z0-9_]+)\.csv", html))
    on_disk = {p.stem for p in (out / "tables").glob("*.csv")}
    assert named == on_disk
    for t in (
        "performance_matrix",
        "aggregates",
        "rankings",
        "category_leaders",
        "category_rank_correlations",
        "leader_changes",
        "scaling_correlation",
        "smaller_beats_larger",
        "fewshot_degradation",
        "regime_means",
        "task_difficulty",
        "probe_stability",
        "c_sensitivity",
        "c_mcc_range",
        "bootstrap_tasks",
        "bootstrap_seeds",
        "adjacent_tests",
        "model_metadata",
        "metadata_groups",
        "macro_micro_agreement",
    ):
        assert t in on_disk, t
        assert len(pd.read_csv(out / "tables" / f"{t}.csv")) > 0, t
    for text in (
        "Method",
        "Seeds: 13, 17, 42",
        "max_iter 1000",
        "gradient tolerance 1e-08",
        # the versions the results table recorded (not those installed here)
        f"scikit-learn {example_results()['sklearn_version'].iloc[0]}",
        f"geneb {example_results()['geneb_version'].iloc[0]}",
        "left out of the scaling analysis: kmer-4",
        "separable adjacent ranks",
    ):
        assert text in html, text
    assert "Left out:" not in html  # everything is supported by this table


def test_metadata_groups_table(full_report):
    out = full_report.parent
    g = pd.read_csv(out / "tables" / "metadata_groups.csv")
    lb = pd.read_csv(out / "tables" / "leaderboard_full.csv").set_index("model")["macro_mcc"]
    tr = g[(g["facet"] == "architecture") & (g["value"] == "transformer")]
    assert sorted(tr["model"]) == ["big-100m", "mid-20m", "small-4m"]
    best = max(["big-100m", "mid-20m", "small-4m"], key=lambda m: lb[m])
    assert tr.loc[tr["rank_in_group"] == 1, "model"].item() == best
    assert set(g["facet"]) == {"architecture", "tokenization", "pretraining_data"}
    # "cnn" and "char" have one model only: no comparison to make
    assert "cnn" not in set(g["value"]) and "char" not in set(g["value"])


def test_leaderboard_matches_results(tmp_path):
    """The headline leaderboard is the macro MCC (seeds averaged per task, then tasks), by hand.

    Seeds are dropped unevenly (one seed left on each model's first task) so the mean over
    tasks (macro) and the mean over rows (micro) differ; a leaderboard of either kind would
    match a table where they agree."""
    df = example_results()
    first = sorted(df["task"].unique())[0]
    df = df[(df["task"] != first) | (df["seed"] == 13)].reset_index(drop=True)
    sub = df[(df["probe"] == "linear") & (df["C"] == 1.0) & (df["regime"] == "full")]
    macro, micro = {}, {}
    for model, rows in sub.groupby("model"):
        per_task = [float(np.mean(t["mcc"].to_numpy())) for _, t in rows.groupby("task")]
        macro[model] = sum(per_task) / len(per_task)
        micro[model] = float(np.mean(rows["mcc"].to_numpy()))
    assert max(abs(macro[m] - micro[m]) for m in macro) > 1e-3  # the fixture tells them apart
    from geneb.analysis.report.sections import leaderboard, method

    build_report(df, tmp_path / "r", n_boot=N_BOOT, sections=[method, leaderboard])
    lb = pd.read_csv(tmp_path / "r" / "tables" / "leaderboard_full.csv")
    order = sorted(macro, key=lambda m: -macro[m])
    assert list(lb["model"]) == order
    assert lb["macro_mcc"].to_numpy() == pytest.approx([macro[m] for m in order])
    assert list(lb["rank"]) == list(range(1, len(order) + 1))
    assert (lb["ci_low"] <= lb["macro_mcc"]).all() and (lb["macro_mcc"] <= lb["ci_high"]).all()


def _degenerate(tmp_path: Path, df: pd.DataFrame, name: str) -> tuple[str, set[str]]:
    out = tmp_path / name
    index = build_report(df, out, n_boot=N_BOOT)
    html = index.read_text(encoding="utf-8")
    check_offline(html)
    figs = {p.name for p in (out / "figures").glob("*.png")}
    for p in (out / "figures").glob("*.png"):
        check_png(p)
    return html, figs


def test_one_model(tmp_path):
    df = example_results(models={"solo-5m": (5_000_000, 0.5)})
    html, figs = _degenerate(tmp_path, df, "one")
    assert "need at least two models; the results have one (solo-5m)" in html
    assert "scaling analysis needs at least three models with a parameter count" in html
    assert "rank_changes.png" not in figs and "scaling.png" not in figs
    assert "heatmap_model_category.png" in figs and "fewshot.png" in figs


def test_no_mlp_single_c_single_regime(tmp_path):
    df = example_results(mlp=False, Cs=(1.0,), regimes=("full",))
    html, figs = _degenerate(tmp_path, df, "plain")
    assert "no MLP-probe rows" in html
    assert "a single C (1)" in html
    assert "few-shot degradation needs the full regime and at least one k-shot regime" in html
    assert "leader changes between regimes need at least two regimes" in html
    assert figs == {"heatmap_model_category.png", "scaling.png", "rank_changes.png", "tiers.png"}


def test_no_parameter_counts_and_one_category(tmp_path):
    models = {"kmer-3": (None, 0.3), "kmer-4": (None, 0.4), "kmer-5": (None, 0.45)}
    tasks = {"m1": ("dna_methylation", 0.0, 100), "m2": ("dna_methylation", 0.1, 200)}
    html, figs = _degenerate(tmp_path, example_results(models=models, tasks=tasks), "nosize")
    assert "kmer-3, kmer-4, kmer-5" in html
    assert "the results have 0." in html
    assert "rank changes across categories need at least two categories" in html
    assert "scaling.png" not in figs and "rank_changes.png" not in figs
    assert "smallest possible two-sided Wilcoxon p" in html  # 2 tasks cannot separate


def test_mlp_only(tmp_path):
    df = example_results()
    html, figs = _degenerate(tmp_path, df[df["probe"] == "mlp"], "mlp")
    assert "headline analyses use the MLP probe" in html
    assert "no linear-probe rows, so there is no C sweep" in html
    assert "no linear-probe rows, so there is nothing to compare" in html
    assert "linear_vs_mlp.png" not in figs and "mcc_vs_c.png" not in figs
    assert "heatmap_model_category.png" in figs


# A rerun removes the report's own stale figures and tables: test_report_safety.py
# (test_empty_folder_is_used_and_rerun_keeps_user_additions, on the same two builds).


def test_restrict_regimes_and_cs(tmp_path):
    out = tmp_path / "restricted"
    index = build_report(
        example_results(), out, shots=["10", "full"], Cs=[0.1, 10.0], n_boot=N_BOOT
    )
    html = index.read_text(encoding="utf-8")
    assert "headline C = 0.1" in html  # C = 1 excluded: the first given is the headline
    perf = pd.read_csv(out / "tables" / "performance_matrix.csv")
    assert set(perf["regime"].astype(str)) == {"10", "full"}
    assert set(perf.loc[perf["probe"] == "linear", "C"]) == {0.1, 10.0}


def test_cli_report(tmp_path):
    res = tmp_path / "results.parquet"
    example_results().to_parquet(res)
    out = tmp_path / "cli"
    runner = CliRunner()
    r = runner.invoke(
        app,
        [
            "report",
            "--results",
            str(res),
            "--out",
            str(out),
            "--shots",
            "1,full",
            "--C",
            "1",
            "--C",
            "10",
            "--n-boot",
            "200",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "report written to" in r.output
    assert (out / "index.html").is_file()
    assert set(pd.read_csv(out / "tables" / "performance_matrix.csv")["regime"].astype(str)) == {
        "1",
        "full",
    }
    r = runner.invoke(app, ["report", "--results", str(res), "--out", str(out), "--shots", "ful"])
    assert r.exit_code == 2
    assert "--shots: expected 'full' or a positive int" in r.output
    assert "got 'ful' (did you mean 'full'?)" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["report", "--results", str(res), "--out", str(out), "--shots", "5"])
    assert r.exit_code == 2 and "unknown regime '5'" in r.output
    r = runner.invoke(app, ["report", "--results", str(res), "--out", str(out), "--C", "abc"])
    assert r.exit_code == 2 and "--C: expected a positive number, got 'abc'" in r.output
    r = runner.invoke(app, ["report", "--results", str(tmp_path / "x.parquet"), "--out", str(out)])
    assert r.exit_code == 2 and "no results table" in r.output
    bad_info = tmp_path / "info.csv"
    bad_info.write_text("name\nx\n")
    r = runner.invoke(
        app, ["report", "--results", str(res), "--out", str(out), "--model-properties", str(bad_info)]
    )
    assert r.exit_code == 2 and "no 'model' column" in r.output
