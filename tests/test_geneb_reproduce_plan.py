"""``examples/geneb-reproduce.toml``: GENEB's protocol as GENEB ran it, as a plan.

The example itself is dry-run (it names the staged tasks and the real HyenaDNA checkpoint of
../shared); a copy on small slices of the same tasks runs for real: every cell is the paper
protocol on GENEB's k-shot rows, from embeddings made by GENEB's recipe."""

from __future__ import annotations

import numpy as np
import pandas as pd
from conftest import DATA_DIR, MODELS_DIR, REPO, require_shared
from typer.testing import CliRunner

from geneb.cli import app
from geneb.pipeline.execute import dry_run, run_plan
from geneb.pipeline.plan import load_plan
from geneb.protocol import paper_kshot_rows
from geneb.results.table import read_results
from geneb.store import FeatureStore

EXAMPLE = REPO / "examples" / "geneb-reproduce.toml"
TASKS = ("gue_mouse_0", "gue_prom_300_tata")


def test_example_dry_run():
    require_shared(MODELS_DIR / "real" / "hyenadna-tiny-1k-anticapt", "real HyenaDNA")
    plan = load_plan(EXAMPLE)
    assert plan.probe.protocol == "paper" and plan.probe.Cs == (1.0,)
    assert plan.models[0].options["recipe"] == "geneb"
    # named by GENEB's task ids, resolved to the staged folders that are those tasks
    assert plan.tasks == ("leannmlindsey_GUE_mouse_0", "leannmlindsey_GUE_prom_300_tata")
    d = dry_run(plan)
    assert d.cells_total == len(TASKS) * (2 * 5 + 5)
    r = CliRunner().invoke(app, ["run", str(EXAMPLE), "--dry-run"])
    assert r.exit_code == 0, r.output


def test_example_runs_on_small_slices(tmp_path):
    model = require_shared(MODELS_DIR / "real" / "hyenadna-tiny-1k-anticapt", "real HyenaDNA")
    for name in TASKS:  # 24 train, 12 test rows per class: a fast, real copy of each task
        src = require_shared(DATA_DIR / name, "real task data")
        (tmp_path / name).mkdir()
        for split, n in (("train", 24), ("test", 12)):
            d = pd.read_csv(src / f"{split}.csv")
            d.groupby("label").head(n).to_csv(tmp_path / name / f"{split}.csv", index=False)
    text = EXAMPLE.read_text().replace("../../shared/models/real/hyenadna-tiny-1k-anticapt",
                                       str(model))
    # the slices are not GENEB's tasks (their sizes differ): named as folders, not GENEB ids
    text = text.replace('names = ["leannmlindsey_GUE_mouse_0", "leannmlindsey_GUE_prom_300_tata"]',
                        f"folders = {list(TASKS)}")
    text = "\n".join(line for line in text.splitlines() if not line.startswith("data_dir"))
    text = text.replace("enabled = true", "enabled = false")
    text = text.replace("../work/geneb-reproduce/", "")
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(text)
    summary = run_plan(load_plan(plan_file))
    assert summary.probe_computed == len(TASKS) * 15
    df = read_results(tmp_path / "out" / "results.parquet")
    assert (df.protocol == "paper").all() and set(df.task) == set(TASKS)
    fs = FeatureStore(tmp_path / "store.zarr", "r")
    for name in TASKS:
        tr = fs.get("hyenadna-tiny-1k", name, "train")
        prov = fs.provenance(tr.key)
        assert prov.recipe == "geneb" and prov.extra["label_values"] == [0, 1]
        labels = pd.read_csv(tmp_path / name / "train.csv").label.to_numpy()
        for row in df[(df.task == name) & (df.regime != "full")].itertuples():
            rng = np.random.RandomState(int(row.seed))  # GENEB's draw, written out
            want = np.concatenate([rng.choice(np.where(labels == c)[0], min(int(row.k), 24),
                                              replace=False) for c in np.unique(labels)])
            assert list(row.train_rows) == want.tolist()
            got = paper_kshot_rows(tr.labels, tr.rows, k=int(row.k), seed=int(row.seed),
                                   label_values=[0, 1])
            assert got.file_rows.tolist() == want.tolist()
