"""Many models with properties (issue 28, case 22): the pair tables of the report list the
largest margins and counts, not every pair, so their size grows linearly with the models,
and the counts are over every pair (checked against a double loop written here over the
report's own leaderboard and the properties file). Timing: benchmarks/report_many_models.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from example_results import example_results

from geneb.analysis.report import build_report
from geneb.analysis.scaling import TOP_PAIRS
from geneb.models import catalogue as cat


def build(tmp_path: Path, n: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    models = {f"x{i:03d}": (int(10 ** rng.uniform(5, 11)), float(rng.uniform(0.2, 0.8)))
              for i in range(n)}  # fmt: skip
    df = example_results(models=models, regimes=("full",), seeds=(13,), Cs=(1.0,), mlp=False,
                         rng_seed=seed)  # fmt: skip
    arch, tok = cat.ARCHITECTURE_CLASSES, cat.TOKENIZATION_CLASSES
    lines = ["model,n_params,architecture_class,tokenization_class,pretraining_data_class"]
    for i, (m, (p, _)) in enumerate(models.items()):
        lines.append(f"{m},{p},{arch[i % 3]},{tok[i % 2]},{('human', 'eukaryotic')[i % 2]}")
    props = tmp_path / f"props{n}.csv"
    props.write_text("\n".join(lines) + "\n")
    orgs = tmp_path / "orgs.csv"
    orgs.write_text("task,organism\n" + "".join(f"{t},human\n" for t in df["task"].unique()))
    out = tmp_path / f"r{n}"
    build_report(df, out, model_properties=props, task_organisms=orgs, n_boot=100)
    return out


def brute_force(out: Path, props: Path) -> tuple[int, int, list[float]]:
    """(pairs with size ratio >= 5, pairs where the smaller is ahead, the largest margins of
    those) on the overall leaderboard, by a double loop."""
    board = pd.read_csv(out / "tables" / "leaderboard_full.csv").set_index("model")["macro_mcc"]
    size = pd.read_csv(props).set_index("model")["n_params"]
    n_pairs = n_wins = 0
    margins = []
    for a in board.index:
        for b in board.index:
            if size[b] >= 5 * size[a]:
                n_pairs += 1
                n_wins += bool(board[a] > board[b])
                if board[a] > board[b]:
                    margins.append(board[a] - board[b])
    return n_pairs, n_wins, sorted(margins, reverse=True)[:TOP_PAIRS]


@pytest.mark.slow  # two reports of 60 and 180 models: ~40 s
def test_pair_tables_grow_linearly_and_counts_cover_every_pair(tmp_path: Path) -> None:
    sizes = {}
    for n in (60, 180):
        out = build(tmp_path, n, seed=n)
        tables = out / "tables"
        sizes[n] = sum(p.stat().st_size for p in tables.glob("*.csv"))
        pairs = pd.read_csv(tables / "smaller_beats_larger.csv")
        groups = pairs.groupby(["regime", "scope"]).size()
        assert groups.max() <= TOP_PAIRS
        for key in ("all", "in_domain"):
            assert len(pd.read_csv(tables / f"smaller_beats_larger_{key}.csv")) <= TOP_PAIRS
        # the in-domain set's pair table too: the largest margins per regime, counts over all
        ind = pd.read_csv(tables / "in_domain_set_pairs.csv")
        ind_counts = pd.read_csv(tables / "in_domain_set_counts.csv")
        for regime, got in ind.groupby("regime"):
            row = ind_counts[(ind_counts["models"] == "in-domain set")
                             & (ind_counts["regime"].astype(str) == str(regime))].iloc[0]
            assert len(got) == min(TOP_PAIRS, int(row["n_smaller_better"])), regime
        n_pairs, n_wins, top = brute_force(out, tmp_path / f"props{n}.csv")
        head = pd.read_csv(tables / "scaling_headline.csv").set_index("scope").loc["overall"]
        assert (int(head["n_pairs_size_ratio"]), int(head["n_smaller_better"])) == (n_pairs,
                                                                                    n_wins)
        counts = pd.read_csv(tables / "smaller_beats_larger_counts.csv").iloc[0]
        assert int(counts["n_pairs_all"]) == n_pairs and int(counts["n_smaller_better_all"]) \
            == n_wins  # every task is human: 'all' compares the same tasks
        html = (out / "index.html").read_text()
        assert f"in {n_wins} of {n_pairs} pairs with a size ratio of at least 5" in html
        # the listed pairs are the largest margins among the winners
        overall = pairs[pairs["scope"] == "overall"]
        margin = overall["macro_mcc_smaller"] - overall["macro_mcc_larger"]
        assert np.allclose(sorted(margin, reverse=True), top)
    assert sizes[180] / sizes[60] < 4.5, sizes  # linear: 3x; every pair listed: 9x
