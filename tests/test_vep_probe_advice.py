"""Issue 28 cases 13 and 15: the supervised VEP probe's fold advice works when followed, in
the vocabulary of where it is read; all-zero window features get status ``zero_embedding``.

Held out from the issue's replay (BRCA1 with one block, a two-chromosome task, a plan told
"or a single C value"): a synthetic chromosome with four clusters of variants (so block counts
are known by construction), every advice followed through the library, the CLI and a plan;
k-mer models whose k exceeds the window (kmer-4 at window 2, kmer-5 at window 4).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_vep_plan import plan_text
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import GenebError
from geneb.vep.probe_run import plan_variant_probe, probe_variants

CLUSTERS = (10_000, 16_000, 22_000, 28_000)  # 6,000 apart: 4 blocks at windows <= 6,000


def _task(root: Path, chroms: tuple[str, ...] = ("chrT",)) -> Path:
    rng = np.random.default_rng(2)
    seqs = {c: "".join(rng.choice(list("ACGT"), 40_000)) for c in chroms}
    rows = ["chrom,pos,ref,alt,label"]
    k = 0
    for c, seq in seqs.items():
        for centre in CLUSTERS:
            for pos in range(centre, centre + 200, 10):  # 20 variants 10 bases apart
                ref = seq[pos - 1]
                rows.append(f"{c},{pos},{ref},{'A' if ref != 'A' else 'C'},{k % 2}")
                k += 1
    root.mkdir(parents=True)
    (root / "reference.fa").write_text("".join(f">{c}\n{s}\n" for c, s in seqs.items()))
    (root / "variants.csv").write_text("\n".join(rows) + "\n")
    return root


def _run_refused(plan: Path) -> str:
    """`geneb run` refusing the plan before any work: its one error line."""
    r = CliRunner().invoke(app, ["run", str(plan)])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert not (plan.parent / "store.zarr").exists()
    return " ".join(r.output.split())


def _follow(msg: str) -> dict:
    """The library arguments the first way of a message's advice names."""
    m = re.search(r"\b(folds|window)=(\d+)", msg)
    assert m, msg
    got = {m.group(1): int(m.group(2))}
    if "with a single C (Cs=1.0)" in msg[m.start():].split(" or ")[0]:
        got["Cs"] = [1.0]
    return got


@pytest.mark.parametrize(("window", "folds"), [(4096, 5), (8192, None), (8192, 3), (1000, 6)])
def test_block_advice_followed_works(tmp_path, window, folds):
    task = _task(tmp_path / "t")
    with pytest.raises(GenebError) as e:
        plan_variant_probe(task, window=window, folds=folds)
    msg = str(e.value)
    assert "folds=..." not in msg and "window=..." not in msg, msg
    args = {"window": window, "folds": folds, **_follow(msg)}
    plan = plan_variant_probe(task, **args)  # the advice, followed, plans
    assert len(np.unique(plan.fold[plan.fold >= 0])) >= 2


def test_sweep_advice_never_names_two_folds_alone(tmp_path):
    task = _task(tmp_path / "t")
    with pytest.raises(GenebError) as e:
        plan_variant_probe(task, window=4096, folds=2)  # the default C sweep needs 3
    msg = str(e.value)
    assert "use folds=3 or a single C (Cs=1.0)" in msg, msg
    plan_variant_probe(task, window=4096, folds=3)
    plan_variant_probe(task, window=4096, folds=2, Cs=[1.0])


def test_cli_and_plan_vocabulary(tmp_path, data_dir):
    task = _task(tmp_path / "t")
    r = CliRunner().invoke(app, ["vep", "probe", "--task", str(task), "--model", "kmer-2",
                                 "--window", "4096", "--folds", "5",
                                 "--out", str(tmp_path / "p.parquet")])
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "use --folds 4" in text and "folds=" not in text, text
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(data_dir, f'tasks = ["{task}"]\nwindow = 4096\nprobe = ["diff"]\n'
                              "folds = 2"))
    msg = _run_refused(plan)
    assert "[vep] folds = 3" in msg and "Cs" not in msg and "--" not in msg, msg
    two = _task(tmp_path / "two", ("chrA", "chrB"))
    plan.write_text(plan_text(data_dir, f'tasks = ["{two}"]\nwindow = 1000\nprobe = ["diff"]\n'
                              "folds = 4"))
    assert "remove folds from [vep]" in _run_refused(plan)
    plan.write_text(plan_text(data_dir, f'tasks = ["{two}"]\nwindow = 1000\nprobe = ["diff"]'))
    msg = _run_refused(plan)  # 2 chromosomes = 2 folds; [vep] sweeps C: it has no C key
    assert "third chromosome" in msg and "Cs" not in msg and "single C" not in msg, msg
    r = CliRunner().invoke(app, ["vep", "probe", "--task", str(two), "--model", "kmer-2",
                                 "--window", "1000", "--folds", "3",
                                 "--out", str(tmp_path / "p.parquet")])
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "do not give a fold count (--folds)" in text, text


@pytest.mark.parametrize(("model", "window"), [("kmer-4", 2), ("kmer-5", 4)])
def test_all_zero_features_are_zero_embedding(tmp_path, model, window):
    task = _task(tmp_path / "t")
    df = probe_variants(task, model, window=window, features=["diff"], folds=4, Cs=[1.0])
    assert (df["status"] == "zero_embedding").all() and df["score"].isna().all()
    assert sorted(set(df["fold"])) == [0, 1, 2, 3]  # the planned folds are kept
    # the zero-shot scorer says the same of the same windows
    from geneb.vep.runner import score_variants

    zs = score_variants(task, model, ["cosine"], window=window)
    assert (zs["status"] == "zero_embedding").all()


def test_some_zero_rows_are_left_out_and_said(tmp_path):
    """An N run under the last cluster: its 2-base windows hold no A/C/G/T 2-mer (zero
    features); those variants get zero_embedding, the others are probed and scored."""
    task = _task(tmp_path / "t")
    ref = (task / "reference.fa").read_text().split("\n")
    seq = ref[1][: CLUSTERS[-1] - 5] + "N" * 210 + ref[1][CLUSTERS[-1] + 205:]
    (task / "reference.fa").write_text(f"{ref[0]}\n{seq}\n")
    rows = pd.read_csv(task / "variants.csv")
    last = rows["pos"] >= CLUSTERS[-1]
    rows.loc[last, "ref"] = "N"
    rows.to_csv(task / "variants.csv", index=False)
    df = probe_variants(task, "kmer-2", window=2, features=["diff"], folds=3, Cs=[1.0])
    assert (df.loc[last.to_numpy(), "status"] == "zero_embedding").all()
    assert (df.loc[~last.to_numpy(), "status"] == "ok").all()
    assert np.isfinite(df.loc[~last.to_numpy(), "score"]).all()
