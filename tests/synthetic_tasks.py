"""Small task folders made by the tests themselves, laid out like ../shared/data (train.csv,
test.csv, task.json), so the solver, protocol and engine proofs run in a fresh clone.

Sequences of each class are drawn from a class-specific base composition (close to the others,
so the k-mer spectra overlap like real ones and the probes have something to learn, but not
trivially); the same names as the real tasks the tests use, with the same class counts."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np

#: name -> (classes, train rows, test rows, category), mirroring the real tasks' shapes
SPECS: dict[str, tuple[int, int, int, str]] = {
    "dhs_idhs_fflg": (2, 420, 104, "chromatin_accessibility"),
    "gue_splice_reconstructed": (3, 2400, 600, "splice_sites"),
    "gue_emp_h3k4me3": (2, 2400, 600, "histone_modification"),
}


def make_task(root: Path, name: str, n_classes: int, n_train: int, n_test: int,
              category: str, *, length: int = 120) -> Path:
    """Write one task folder under ``root`` (deterministic in ``name``)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    comp = rng.dirichlet(np.full(4, 8.0), size=n_classes)  # per-class base frequencies
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    letters = np.array(list("ACGT"))
    for split, n in (("train", n_train), ("test", n_test)):
        y = np.arange(n) % n_classes
        rng.shuffle(y)
        lines = ["sequence,label"]
        for c in y:
            # each sequence has its own composition around its class's (real sequences vary
            # in GC content and length far more than the classes differ)
            p = rng.dirichlet(comp[c] * 12.0)
            n_bp = int(rng.integers(length // 2, 2 * length))
            seq = "".join(letters[rng.choice(4, size=n_bp, p=p)])
            lines.append(f"{seq},{int(c)}")
        (folder / f"{split}.csv").write_text("\n".join(lines) + "\n")
    meta = {"name": name, "category": category, "n_classes": n_classes,
            "source": "synthetic (made by the test suite)", "license": "CC0-1.0",
            "n_train": n_train, "n_test": n_test, "length_min": length // 2,
            "length_max": 2 * length - 1,
            "alphabet": "ACGT"}
    (folder / "task.json").write_text(json.dumps(meta, indent=1))
    return folder


def make_tasks(root: Path) -> Path:
    """Every task of ``SPECS`` under ``root``; returns ``root`` (a data dir)."""
    for name, (k, n_tr, n_te, cat) in SPECS.items():
        make_task(root, name, k, n_tr, n_te, cat)
    return root
