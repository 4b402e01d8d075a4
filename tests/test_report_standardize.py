"""A results table with both standardised and as-stored fits (issue 28, case 25): the report
says which it uses and how to choose (`--standardize` / ``standardize=``), never that a probe
has no rows while fits of it exist with the other setting.

Reference: the macro-MCC computed here from the rows with pandas (mean over seeds, then tasks
within a category, then categories), independent of geneb's aggregation.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from example_results import example_results
from typer.testing import CliRunner

from geneb.analysis.report import build_report
from geneb.cli import app
from geneb.errors import GenebError

N_BOOT = 100


def both_settings(shift: float = 0.07) -> pd.DataFrame:
    """Every fit twice: as stored, and standardised with the MCC shifted by ``shift``."""
    raw = example_results(rng_seed=3)
    std = raw.copy()
    std["standardize"] = True
    std["mcc"] = (std["mcc"] + shift).clip(upper=1.0)
    return pd.concat([raw, std], ignore_index=True)


def macro(df: pd.DataFrame, standardize: bool) -> pd.Series:
    sel = df[(df["probe"] == "linear") & (df["C"] == 1.0) & (df["regime"] == "full")
             & (df["standardize"] == standardize)]  # fmt: skip
    per_task = sel.groupby(["model", "category", "task"])["mcc"].mean()
    return per_task.groupby(["model", "category"]).mean().groupby("model").mean()


def left_outs(html: str) -> list[str]:
    return re.findall(r"Left out:[^<]*", html)


# standardize=True: test_cli_standardize_flag (the same checks, through the CLI)
@pytest.mark.parametrize("standardize", [None, False])
def test_the_chosen_setting_is_the_one_analysed(tmp_path: Path, standardize: bool | None) -> None:
    df = both_settings()
    out = tmp_path / "r"
    html = build_report(df, out, n_boot=N_BOOT, standardize=standardize).read_text()
    used = bool(standardize)  # default: as stored, since the table has such fits
    board = pd.read_csv(out / "tables" / "leaderboard_full.csv").set_index("model")["macro_mcc"]
    ref = macro(df, used)
    assert (board.sort_index() - ref.sort_index()).abs().max() < 1e-12
    assert "standardised on the probe train rows" in html if used else "Features as stored" in html
    flag = "--no-standardize" if used else "--standardize"
    assert f"{len(df) // 2} cells with the other setting are not used (geneb report {flag}" in html


def test_mlp_only_standardised_is_named_not_denied(tmp_path: Path) -> None:
    df = example_results(rng_seed=5)
    df.loc[df["probe"] == "mlp", "standardize"] = True  # the table: 135 rows there
    n_mlp = int((df["probe"] == "mlp").sum())
    html = build_report(df, tmp_path / "a", n_boot=N_BOOT).read_text()
    assert "no MLP-probe rows (run geneb probe --probe mlp)" not in html
    assert any(f"{n_mlp} mlp cells with features standardised exist" in t and "--standardize" in t
               for t in left_outs(html)), left_outs(html)  # fmt: skip
    # asked for the standardised fits: the MLP is the headline, linear is named as elsewhere
    html = build_report(df, tmp_path / "b", n_boot=N_BOOT, standardize=True).read_text()
    n_lin = int((df["probe"] == "linear").sum())
    assert any(f"{n_lin} linear cells with features as stored exist" in t
               for t in left_outs(html)), left_outs(html)  # fmt: skip


def test_a_setting_with_no_fits_is_refused_before_any_work(tmp_path: Path) -> None:
    df = example_results(rng_seed=7)  # as stored only
    out = tmp_path / "none"
    with pytest.raises(GenebError, match=r"standardize=True: the results have no standardised"):
        build_report(df, out, n_boot=N_BOOT, standardize=True)
    assert not out.exists()
    res = tmp_path / "results.parquet"
    df.to_parquet(res)
    r = CliRunner().invoke(app, ["report", "-r", str(res), "-o", str(out), "--standardize",
                                 "--n-boot", "100"])  # fmt: skip
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "no standardised cells" in text and "Traceback" not in text, text
    assert not out.exists()


def test_cli_standardize_flag(tmp_path: Path) -> None:
    df = both_settings(shift=-0.05)
    res = tmp_path / "results.parquet"
    df.to_parquet(res)
    out = tmp_path / "cli"
    r = CliRunner().invoke(app, ["report", "-r", str(res), "-o", str(out), "--standardize",
                                 "--n-boot", "100"])  # fmt: skip
    assert r.exit_code == 0, r.output
    board = pd.read_csv(out / "tables" / "leaderboard_full.csv").set_index("model")["macro_mcc"]
    assert (board.sort_index() - macro(df, True).sort_index()).abs().max() < 1e-12
    html = (out / "index.html").read_text()
    assert "standardised on the probe train rows" in html
    assert f"{len(df) // 2} cells with the other setting are not used (geneb report " \
        "--no-standardize" in html
