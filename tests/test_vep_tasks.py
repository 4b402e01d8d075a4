"""Variant task folders (CSV and VCF), validation messages, windows (edges, indels), metrics."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from geneb.errors import GenebError, TaskError
from geneb.tasks.variants import load_variant_task
from geneb.tasks.windows import OK, OUTSIDE, make_windows

RNG = np.random.default_rng(7)
SEQ = "".join(RNG.choice(list("ACGT"), 300))
START = 101  # the record chrT:101-400


_WRONG = [b for b in "ACGT" if b != SEQ[99]]  # a ref that is not the base at pos 200


def _task(tmp: Path, rows: list[dict], header: str = f"chrT:{START}-{START + 299}") -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "reference.fa").write_text(f">{header} test\n" + SEQ[:150] + "\n" + SEQ[150:] + "\n")
    pd.DataFrame(rows).to_csv(tmp / "variants.csv", index=False)
    return tmp


def _snv(pos: int, alt: str | None = None, label: object = 1, **kw: object) -> dict:
    ref = SEQ[pos - START]
    alt = alt or next(b for b in "ACGT" if b != ref)
    return {"chrom": "chrT", "pos": pos, "ref": ref, "alt": alt, "label": label, **kw}


def test_csv_task_loads_and_keeps_extra_columns(tmp_path):
    t = load_variant_task(_task(tmp_path, [_snv(200, extra="x"), _snv(210, label=0, extra="y")]))
    assert list(t.table["label"]) == [1, 0] and list(t.table["extra"]) == ["x", "y"]
    assert list(t.table["offset"]) == [99, 109]


@pytest.mark.parametrize(
    ("row", "expect"),
    [
        ({"ref": _WRONG[0], "alt": _WRONG[1]}, r"line 3 \(row 1\): ref '.' does not match"),
        ({"pos": 401}, r"line 3 \(row 1\): chrT:401 .* outside the reference"),
        ({"alt": "R"}, r"line 3 \(row 1\): alt allele 'R' \(expected letters A, C, G, T, N"),
        ({"label": ""}, r"line 3 \(row 1\): missing label"),
        ({"label": 2}, r"line 3 \(row 1\): label '2' \(expected 0 or 1\)"),
        ({"pos": "x"}, r"line 3 \(row 1\): pos 'x' is not a 1-based position"),
        ({"chrom": "chr9"}, r"line 3 \(row 1\): chrom 'chr9' has no record"),
    ],
)
def test_bad_rows_are_named(tmp_path, row, expect):
    bad = _snv(200) | row
    folder = _task(tmp_path, [_snv(150), bad])
    with pytest.raises(TaskError, match=expect) as e:
        load_variant_task(folder)
    assert "variants.csv" in str(e.value)


def test_bad_rows_exit_2_and_write_nothing(tmp_path):
    from typer.testing import CliRunner

    from geneb.cli import app

    folder = _task(tmp_path / "t", [_snv(150), _snv(200) | {"alt": "Z"}])
    out = tmp_path / "o.parquet"
    res = CliRunner().invoke(app, ["vep", "score", "--task", str(folder), "--model", "kmer-2",
                                   "--scorer", "cosine", "--out", str(out),
                                   "--store", str(tmp_path / "s.zarr")])
    assert res.exit_code == 2, res.output
    assert "error:" in res.output and "alt allele 'Z'" in res.output
    assert "Traceback" not in res.output
    assert not out.exists() and not (tmp_path / "s.zarr").exists()


def test_region_length_mismatch(tmp_path):
    folder = _task(tmp_path, [_snv(150)], header="chrT:101-500")
    with pytest.raises(TaskError, match="names 400 bases .* its sequence has 300"):
        load_variant_task(folder)


def _vcf(lines: list[str]) -> str:
    head = "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
    return head + "".join(line + "\n" for line in lines)


@pytest.mark.parametrize("gz", [False, True])
def test_vcf_task_labels_from_clnsig(tmp_path, gz):
    (tmp_path / "reference.fa").write_text(">chrT\n" + SEQ + "\n")  # whole chromosome from 1
    r = [SEQ[p - 1] for p in (50, 60, 70)]
    alts = [next(b for b in "ACGT" if b != x) for x in r]
    text = _vcf([
        f"chrT\t50\trs1\t{r[0]}\t{alts[0]}\t.\tPASS\tCLNSIG=Pathogenic;SCORE=-1.5",
        f"chrT\t60\trs2\t{r[1]}\t{alts[1]},N\t.\tPASS\tCLNSIG=Likely_benign",
        f"chrT\t70\trs3\t{r[2]}\t{alts[2]}\t.\tPASS\tLABEL=1;CLNSIG=Uncertain_significance",
    ])
    if gz:
        with gzip.open(tmp_path / "variants.vcf.gz", "wt") as f:
            f.write(text)
    else:
        (tmp_path / "variants.vcf").write_text(text)
    t = load_variant_task(tmp_path)
    assert list(t.table["pos"]) == [50, 60, 60, 70]  # multi-allelic line -> one row per allele
    assert list(t.table["alt"]) == [alts[0], alts[1], "N", alts[2]]
    assert list(t.table["label"]) == [1, 0, 0, 1]  # LABEL wins over CLNSIG
    assert t.table["score"].iloc[0] == -1.5 and np.isnan(t.table["score"].iloc[1])
    assert list(t.table["offset"]) == [49, 59, 59, 69]


def test_vcf_unmapped_clnsig_is_an_error(tmp_path):
    (tmp_path / "reference.fa").write_text(">chrT\n" + SEQ + "\n")
    (tmp_path / "variants.vcf").write_text(_vcf([
        f"chrT\t50\t.\t{SEQ[49]}\tN\t.\tPASS\tCLNSIG=Conflicting_interpretations_of_pathogenicity"
    ]))
    with pytest.raises(TaskError, match=r"variants.vcf line 3: CLNSIG='Conflicting"):
        load_variant_task(tmp_path)


def test_windows_at_edges_are_kept_with_a_reason(tmp_path):
    t = load_variant_task(_task(tmp_path, [_snv(105), _snv(250), _snv(398)]))
    w = make_windows(t, 20)
    assert list(w.status) == [OUTSIDE, OK, OUTSIDE]
    assert w.ref_of(1) == SEQ[149 - 10 : 149 + 10] and len(w.alt_windows[1]) == 20
    assert w.alt_windows[1][10] == t.table["alt"][1] and w.alt_windows[1][11:] == SEQ[150:159]
    with pytest.raises(GenebError, match="even number"):
        make_windows(t, 21)


def test_indel_windows_keep_length(tmp_path):
    p = 200
    o = p - START
    dele = {"chrom": "chrT", "pos": p, "ref": SEQ[o : o + 3], "alt": SEQ[o], "label": 1}
    ins = {"chrom": "chrT", "pos": p, "ref": SEQ[o], "alt": SEQ[o] + "GGGG", "label": 0}
    t = load_variant_task(_task(tmp_path, [dele, ins]))
    w = make_windows(t, 20)
    assert (w.status == OK).all()
    assert w.alt_windows[0] == SEQ[o - 10 : o + 1] + SEQ[o + 3 : o + 12]
    assert w.alt_windows[1] == SEQ[o - 10 : o + 1] + "GGGG" + SEQ[o + 1 : o + 6]
    assert all(len(a) == 20 for a in w.alt_windows)


def test_masked_llr_reports_indels_and_score_rows_never_dropped(tmp_path, models_dir):
    from geneb.vep.runner import score_variants

    p, o = 200, 200 - START
    rows = [_snv(105), {"chrom": "chrT", "pos": p, "ref": SEQ[o : o + 2], "alt": SEQ[o],
                        "label": 1}, _snv(250, label=0)]
    path = models_dir / "tiny-lm" / "tiny-bert-char-mlm"
    df = score_variants(_task(tmp_path, rows), str(path), ["llr"], window=40)
    assert list(df["status"]) == [OUTSIDE, "indel_not_supported_by_masked_marginal", OK]
    assert df["score"].isna().tolist() == [True, True, False]


def test_auroc_auprc_match_sklearn():
    from sklearn.metrics import average_precision_score, roc_auc_score

    from geneb.vep.evaluate import auprc, auroc

    for seed in range(5):
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 2, 300)
        s = np.round(rng.normal(size=300) + 0.5 * y, 1)  # ties on purpose
        assert auroc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
        assert auprc(y, s) == pytest.approx(average_precision_score(y, s), abs=1e-12)
    assert np.isnan(auroc(np.ones(5), np.arange(5)))


def test_evaluate_orients_llr_and_gives_intervals():
    from sklearn.metrics import roc_auc_score

    from geneb.vep.evaluate import evaluate

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    s = rng.normal(size=200) - y  # damaging variants get lower LLRs
    base = {"task": "t", "model": "m", "window": 8, "label": y, "status": "ok",
            "variant": np.arange(200), "task_score": -s + rng.normal(size=200)}
    df = pd.concat([pd.DataFrame(base | {"scorer": "llr", "score": s,
                                         "orientation": "lower=label1"}),
                    pd.DataFrame(base | {"scorer": "l2", "score": -s,
                                         "orientation": "higher=label1"})])
    m = evaluate(df, n_boot=200).set_index("scorer")
    assert m.loc["llr", "auroc"] == pytest.approx(roc_auc_score(y, -s))
    assert m.loc["llr", "auroc"] == pytest.approx(m.loc["l2", "auroc"])
    assert m.loc["llr", "auroc"] > 0.7
    assert m.loc["llr", "auroc_lo"] < m.loc["llr", "auroc"] < m.loc["llr", "auroc_hi"]
    assert m.loc["llr", "spearman"] > 0.3 and m.loc["llr", "n_scored"] == 200


@pytest.mark.timeout(120)
def test_all_windows_outside_with_a_store(tmp_path):
    from geneb.vep.runner import score_variants

    folder = _task(tmp_path / "t", [_snv(105), _snv(398)])
    # 280 bases fit in the 300-base record, but neither variant is far enough from its ends
    df = score_variants(folder, "kmer-2", ["cosine", "l2"], window=280,
                        store=tmp_path / "s.zarr")
    assert len(df) == 4 and (df["status"] == OUTSIDE).all() and df["score"].isna().all()
    # longer than the record: no variant could get a window, refused before any work
    with pytest.raises(GenebError, match="window: expected at most 300 bases"):
        score_variants(folder, "kmer-2", ["cosine"], window=1000, store=tmp_path / "s2.zarr")
    assert not (tmp_path / "s2.zarr").exists()
