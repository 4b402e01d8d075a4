"""Realistic embeddings for the real-size probe benchmark: statistics fitted to real ones.

Three statistics of a (model, task) embedding matrix decide how hard its logistic probe is:

* ``alpha``: the spectrum's power law. The eigenvalues of the within-class covariance,
  sorted, decay as ``lambda_i ~ i^-alpha`` (least squares of log lambda on log i over ranks
  2 .. r/2, r = min(rows, width): the head is one outlier direction, the tail is sampling
  noise of a finite sample);
* ``offset``: the shared mean, ``||mean||^2 / trace(covariance)`` (embeddings are not centred:
  unstandardised, the intercept column is nearly collinear with the data);
* ``separation``: between-class over within-class variance, ``trace(S_B) / trace(S_W)``;
* ``scale``: the mean per-feature variance (unstandardised, C acts on this scale).

``fit_statistics`` measures them on real embeddings extracted here with geneb's extractor
(the real HyenaDNA checkpoint with its own code, the family fixtures, k-mer spectra) on small
samples of staged tasks; ``tests/realistic_embeddings.generate`` draws embeddings of any
(rows, width, classes) with those statistics (its ``FITTED``, the medians printed here).

    .venv/bin/python benchmarks/real_size_fit.py --rows 800      # fit, print JSON
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from realistic_embeddings import FITTED  # noqa: E402 (tests/ put on the path above)

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
#: (store name, model spec, trust the model's own code) fitted by ``--fit``; the fixtures'
#: code is their family's published code, run here because this benchmark names it
FIT_MODELS = (
    ("hyenadna-tiny-1k", str(SHARED / "models" / "real" / "hyenadna-tiny-1k-anticapt"), True),
    ("dnabert2-tiny", str(SHARED / "models" / "families" / "dnabert2-117m-tiny"), True),
    ("gena-lm-tiny", str(SHARED / "models" / "families" / "gena-lm-bert-t2t-tiny"), True),
    ("kmer-5", "kmer-5", False),
    ("kmer-6", "kmer-6", False),
)
FIT_TASKS = ("gue_tf_0", "gue_mouse_0", "gue_emp_h3")
def sample_task(task: str, rows: int, out: Path, data_dir: Path) -> Path:
    """A task folder with ``rows`` train and ``rows // 4`` test rows of ``task`` (drawn at
    random, seed 0, kept in file order)."""
    src = data_dir / task
    dst = out / task
    dst.mkdir(parents=True, exist_ok=True)
    meta = json.loads((src / "task.json").read_text())
    for split, n in (("train", rows), ("test", max(50, rows // 4))):
        header, *body = (src / f"{split}.csv").read_text().splitlines()
        pick = np.sort(np.random.default_rng(0).permutation(len(body))[:n])
        lines = [header] + [body[i] for i in pick]
        (dst / f"{split}.csv").write_text("\n".join(lines) + "\n")
        meta[f"n_{split}"] = len(lines) - 1
    (dst / "task.json").write_text(json.dumps(meta))
    return dst


def fit_statistics(X: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """``alpha``, ``offset``, ``separation``, ``scale`` of one embedding matrix (see module)."""
    X = np.asarray(X, dtype=np.float64)
    classes = np.unique(y)
    means = np.stack([X[y == k].mean(0) for k in classes])
    within = X - means[np.searchsorted(classes, y)]
    tr_w = float((within**2).sum() / len(X))
    grand = X.mean(0)
    counts = np.array([(y == k).sum() for k in classes], dtype=np.float64)
    tr_b = float((counts[:, None] * (means - grand) ** 2).sum() / len(X))
    lam = np.linalg.svd(within, compute_uv=False) ** 2 / len(X)
    lam = lam[lam > lam[0] * 1e-12]
    r = len(lam)
    ranks = np.arange(2, max(4, r // 2) + 1)
    ranks = ranks[ranks <= r]
    slope = np.polyfit(np.log(ranks), np.log(lam[ranks - 1]), 1)[0]
    tr_t = tr_w + tr_b
    return {"alpha": float(-slope), "offset": float((grand**2).sum() / tr_t),
            "separation": tr_b / tr_w, "scale": tr_t / X.shape[1]}


def extract_samples(rows: int, workdir: Path, data_dir: Path) -> list[dict]:
    """Embed small samples of ``FIT_TASKS`` with ``FIT_MODELS``; statistics per pair."""
    from geneb.api import open_store, read_entry
    from geneb.extract.runner import extract

    folders = [str(sample_task(t, rows, workdir, data_dir)) for t in FIT_TASKS]
    store = str(workdir / "fit.zarr")
    out = []
    for name, spec, trust in FIT_MODELS:
        try:
            extract(store, spec, folders, splits=("train",), name=name,
                    trust_remote_code=trust, device="cpu")
        except Exception as exc:  # a fixture that does not load here is reported, not fatal
            out.append({"model": name, "error": f"{type(exc).__name__}: {exc}"[:200]})
            continue
        fs = open_store(store)
        for task in FIT_TASKS:
            entry = read_entry(fs, name, task, "train")
            out.append({"model": name, "task": task, "rows": int(len(entry.labels)),
                        "width": int(entry.embeddings.shape[1]),
                        **fit_statistics(entry.embeddings, np.asarray(entry.labels))})
    return out


def summarise(pairs: list[dict]) -> dict[str, dict[str, float]]:
    """Median of each statistic over the neural models' pairs and over the k-mer pairs."""
    groups = {"neural": [p for p in pairs if "alpha" in p and not p["model"].startswith("kmer")],
              "kmer": [p for p in pairs if "alpha" in p and p["model"].startswith("kmer")]}
    return {g: {k: float(np.median([p[k] for p in ps])) for k in FITTED}
            for g, ps in groups.items() if ps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=800, help="train rows sampled per task")
    ap.add_argument("--data-dir", default=os.environ.get("GENEB_DATA_DIR",
                                                         str(SHARED / "data")))
    ap.add_argument("--json", help="write the per-pair statistics here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="geneb-realfit-"))
    try:
        pairs = extract_samples(args.rows, work, Path(args.data_dir))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {"pairs": pairs, "median": summarise(pairs)}
    for p in pairs:
        print(json.dumps(p))
    print(json.dumps(result["median"], indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
