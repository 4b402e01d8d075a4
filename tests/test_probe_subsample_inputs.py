"""`geneb probe-subsample` and `report --subsampling` on bad inputs (issue 28, case 24): an
``--out`` that cannot be written is refused before the first fit; names a spreadsheet would
run are escaped in the curve CSV as in the report's tables; a curve file with impossible
cells (MCC outside [-1, 1], negative or fractional sizes, a size above n_train, a fit twice)
is one line naming the line, before any work.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest
from probe_stores import gaussian_task
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import ProbeError
from geneb.probe.subsample import read_curve
from geneb.store import FeatureStore

HEADER = "model,task,n_train,size,seed,C,mcc"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("sub") / "store"
    fs = FeatureStore(path, "a")
    for model in ("=HYPERLINK(\"x\")", "+plain"):  # names a spreadsheet would run
        gaussian_task(fs, model, "@task", n_train=400, n_test=100, n_classes=2, dim=6, sep=1.0)
    return str(path)


def cli(store: str, *extra: str, model: str = "+plain") -> tuple[int, str, float]:
    args = ["probe-subsample", "--store", store, "--model", model, "--task", "@task",
            "--sizes", "40,200", "--seeds", "13,17", "--backend", "sklearn", *extra]  # fmt: skip
    t0 = time.perf_counter()
    res = CliRunner().invoke(app, args)
    return res.exit_code, " ".join(res.output.split()), time.perf_counter() - t0


def test_out_is_checked_before_any_fit(store: str, tmp_path: Path, monkeypatch) -> None:
    import geneb.probe.subsample as sub

    def no_fit(*a, **k):
        raise AssertionError("a fit ran before --out was checked")

    monkeypatch.setattr(sub, "subsample_curve", no_fit)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    for out, msg in [(folder, "is a folder; expected the path of a CSV file"),
                     (tmp_path / "no" / "such" / "c.csv", "does not exist")]:  # fmt: skip
        code, text, _ = cli(store, "--out", str(out))
        assert code == 2 and text.startswith("error: --out:") and msg in text, text
        assert "Traceback" not in text
    assert list(folder.iterdir()) == []


def test_curve_cells_are_escaped_as_the_reports(store: str, tmp_path: Path) -> None:
    out = tmp_path / "curve.csv"
    code, text, _ = cli(store, "--out", str(out), "--model", '=HYPERLINK("x")')
    assert code == 0, text
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["model"] for r in rows} == {"'+plain", "'=HYPERLINK(\"x\")"}
    assert {r["task"] for r in rows} == {"'@task"}
    for r in rows:  # no cell a spreadsheet would run
        assert not any(v.startswith(("=", "+", "-", "@")) for k, v in r.items() if k != "mcc")
    assert len(read_curve(out)) == 8  # and the report reads it back


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("m,t,1000,100,13,1.0,5", "line 3: mcc must be a number between -1 and 1, got '5'"),
        ("m,t,1000,-50,13,1.0,0.5", "line 3: size must be a whole number >= 1, got '-50'"),
        ("m,t,1000,12.5,13,1.0,0.5", "line 3: size must be a whole number >= 1, got '12.5'"),
        ("m,t,1000,100,13,0,0.5", "line 3: C must be a number > 0, got '0'"),
        ("m,t,1000,100,1.5,1.0,0.5", "line 3: seed must be a whole number >= 0, got '1.5'"),
        ("m,t,1000,5000,13,1.0,0.5", "line 3: size 5000 is above n_train 1000"),
        ("m,t,1000,200,13,1.0,0.7", "line 3: (m, t, size 200, seed 13, C 1) appears twice"),
        ("m,t,1000,100,13,1.0,nan", "line 3: mcc must be a number between -1 and 1"),
        (",t,1000,100,17,1.0,0.5", "line 3: empty model or task"),
    ],
)
def test_impossible_curve_cells_are_refused(tmp_path: Path, row: str, message: str) -> None:
    p = tmp_path / "curve.csv"
    p.write_text(f"{HEADER}\nm,t,1000,200,13,1.0,0.6\n{row}\n")
    with pytest.raises(ProbeError) as e:
        read_curve(p)
    assert message in str(e.value), str(e.value)
