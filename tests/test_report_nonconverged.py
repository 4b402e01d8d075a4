"""Issue 19 case 19: the report's "fits that did not converge" table.

It showed seed ``13.000`` and n_iter ``200.000`` and had no probe column (MLP rows read as
logistic regressions). Now integers are integers and probe and backend are columns, on the
page and in the CSV.
"""

from __future__ import annotations

import re

import pandas as pd
from example_results import example_results

from geneb.analysis.report import build_report


def _results() -> pd.DataFrame:
    df = example_results(regimes=("10", "full"), Cs=(1.0,))
    df["backend"] = df["probe"].map({"linear": "fast", "mlp": "torch"})
    df["n_iter"] = 7
    bad = (df["regime"] == "10") & (df["seed"] == 13) & (df["task"] == df["task"].iloc[0])
    df.loc[bad, "converged"] = False
    df.loc[bad & (df["probe"] == "mlp"), "n_iter"] = 200
    return df


def _table_after(html: str, caption: str) -> str:
    start = html.index(caption)
    return html[start:html.index("</table>", start)]


def test_nonconverged_table_shows_integers_probe_and_backend(tmp_path):
    df = _results()
    n_bad = int((~df["converged"]).sum())
    mlp_bad = df[~df["converged"] & (df["probe"] == "mlp")]
    assert n_bad > len(mlp_bad) > 0  # both probes among the non-converged fits
    index = build_report(df, tmp_path / "r", n_boot=100)
    table = _table_after(index.read_text(), f"{n_bad} cells did not converge")
    # header cells may carry line-break hints (<wbr>) or attributes: compare their text
    heads = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th[^>]*>(.*?)</th>", table)]
    assert {"seed", "probe", "backend", "n_iter"} <= set(heads), heads
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", table)]
    assert "13" in cells and "200" in cells and "7" in cells
    assert not any(re.fullmatch(r"\d+\.\d+", c) and c.split(".")[0] in ("13", "200", "7")
                   for c in cells), cells  # no 13.000 / 200.000
    assert "mlp" in cells and "torch" in cells and "linear" in cells and "fast" in cells
    csv = pd.read_csv(tmp_path / "r" / "tables" / "nonconverged.csv")
    assert len(csv) == n_bad
    assert csv["seed"].dtype.kind == "i" and csv["n_iter"].dtype.kind == "i"
    assert sorted(csv.loc[csv.probe == "mlp", "n_iter"].unique()) == [200]
    assert set(csv.backend) == {"fast", "torch"}


def test_only_mlp_fits_keep_the_probe_column(tmp_path):
    """A constant column is normally dropped from the page; here probe never is."""
    df = _results()
    df.loc[df["probe"] == "linear", "converged"] = True
    n_bad = int((~df["converged"]).sum())
    index = build_report(df, tmp_path / "r", n_boot=100)
    table = _table_after(index.read_text(), f"{n_bad} cells did not converge")
    heads = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th[^>]*>(.*?)</th>", table)]
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", table)]
    assert "probe" in heads and "mlp" in cells
    assert "torch" in cells


def test_nonconverged_rows_never_read_converged(tmp_path):
    """Issue 28 ("Also"): the protocol column read "converged" on non-converged rows, and
    nothing said why a first run's MLP fits stop at their limit."""
    df = _results()
    df.loc[(df["probe"] == "mlp") & (df["regime"] == "10"), "converged"] = False  # held out
    n_mlp = int((~df["converged"] & (df["probe"] == "mlp")).sum())
    index = build_report(df, tmp_path / "r", n_boot=100)
    html = index.read_text()
    csv = pd.read_csv(tmp_path / "r" / "tables" / "nonconverged.csv")
    assert "protocol" not in csv.columns and set(csv["asked_protocol"]) == {"converged"}
    assert f"{n_mlp} are MLP cells, which often stop there on few-shot rows" in html
    assert "asked_protocol is the protocol each fit was run under, not a verdict" in html
