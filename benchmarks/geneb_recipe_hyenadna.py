"""What GENEB's HyenaDNA recipe does to the numbers (issue 33, item 4): docs/models.md.

On the real HyenaDNA checkpoint (../shared/models/real/hyenadna-tiny-1k-anticapt, its own
code: trust_remote_code given here), each task of ``--tasks`` is embedded twice with geneb's
runner: GENEB's recipe (``recipe="geneb"``: plain mean over every position of left-padded
batches of 4 rows in file order) and geneb's batch-invariant embedding (the default). Per row:
the relative L2 difference ||a - b|| / ||b|| and the cosine of the two vectors. Then the paper
protocol (GENEB's draws, ``LogisticRegression(max_iter=1000)``) on both stores: per regime
(1, 10, full) the MCC averaged over the five seeds, and its difference.

    PYTHONPATH=$PWD nice python benchmarks/geneb_recipe_hyenadna.py --data-dir ../shared/data \\
        [--tasks dhs_idhs_fflg,lncrna_ath_prelnc,species_human_chimp_dog] [--out figures.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

MODEL = Path(__file__).resolve().parents[2] / "shared" / "models" / "real" / (
    "hyenadna-tiny-1k-anticapt")
TASKS = "dhs_idhs_fflg,lncrna_ath_prelnc,species_human_chimp_dog"


def row_differences(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Per-row relative L2 difference and cosine of GENEB's (a) and geneb's (b) vectors."""
    rel = np.linalg.norm(a - b, axis=1) / np.maximum(np.linalg.norm(b, axis=1), 1e-12)
    cos = (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1),
                                      1e-12)
    return {"rows": len(a), "rows_changed_1e-4": int((rel > 1e-4).sum()),
            "rel_l2_median": float(np.median(rel)), "rel_l2_p90": float(np.quantile(rel, 0.9)),
            "rel_l2_max": float(rel.max()), "cosine_min": float(cos.min()),
            "cosine_median": float(np.median(cos))}


def measure(task_dir: Path, model: Path, work: Path) -> dict[str, object]:
    from geneb.extract.runner import extract
    from geneb.probe.engine import run_probes
    from geneb.results.table import read_results
    from geneb.store import FeatureStore

    out: dict[str, object] = {"task": task_dir.name}
    mcc = {}
    for label, recipe in (("geneb_recipe", "geneb"), ("batch_invariant", None)):
        store = work / f"{task_dir.name}-{label}"
        extract(str(store), str(model), str(task_dir), recipe=recipe, trust_remote_code=True,
                name="hyenadna")
        res = work / f"{task_dir.name}-{label}-results"
        run_probes(store, res, protocol="paper", workers=1)
        df = read_results(res)
        mcc[label] = df.groupby("regime").mcc.mean().to_dict()
    for split in ("train", "test"):
        a = FeatureStore(work / f"{task_dir.name}-geneb_recipe", "r").get(
            "hyenadna", task_dir.name, split).embeddings
        b = FeatureStore(work / f"{task_dir.name}-batch_invariant", "r").get(
            "hyenadna", task_dir.name, split).embeddings
        out[f"rows_{split}"] = row_differences(np.asarray(a), np.asarray(b))
    out["paper_mcc"] = {r: {"geneb_recipe": mcc["geneb_recipe"][r],
                            "batch_invariant": mcc["batch_invariant"][r],
                            "difference": mcc["geneb_recipe"][r] - mcc["batch_invariant"][r]}
                        for r in sorted(mcc["geneb_recipe"])}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--tasks", default=TASKS)
    ap.add_argument("--model", default=str(MODEL))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.tasks.split(","):
            figures.append(measure(Path(args.data_dir) / name, Path(args.model), Path(tmp)))
            print(json.dumps(figures[-1], indent=1), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
