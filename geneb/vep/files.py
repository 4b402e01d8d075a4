"""Score a variant task into a table file: ``geneb vep score`` and ``geneb vep probe``.

The output path is checked before any work, the table is written all-or-nothing
(:func:`geneb.vep.io.write_scores`, as ``geneb run`` writes its [vep] tables).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from geneb.tasks.variants import load_variant_task
from geneb.vep.io import scores_path, write_scores
from geneb.vep.runner import ScoreRun


@dataclass
class WrittenScores:
    """A score table written to ``path``: its rows, the embedding bookkeeping and the time."""

    path: Path
    table: pd.DataFrame
    run: ScoreRun = field(default_factory=ScoreRun)
    seconds: float = 0.0


def vep_to_file(
    task: str | Path,
    model: str,
    *,
    supervised: bool = False,
    out: str | Path | None = None,
    window: int,
    name: str | None = None,
    **options: Any,
) -> WrittenScores:
    """Score every variant of ``task`` and write the table to ``out``: zero-shot
    (:func:`geneb.vep.runner.score_variants`) or, with ``supervised``, out-of-fold probe
    scores (:func:`geneb.vep.probe_run.probe_variants`).

    Parameters
    ----------
    task : str or Path
        A variant task folder or the name of a fetched variant set.
    model : str
        The model spec.
    supervised : bool
        The supervised probe instead of the zero-shot scorers.
    out : str or Path, optional
        The table (``.parquet`` or ``.csv``), checked before any work; default
        ``vep-<task>-<model>-w<W>.parquet`` (``vep-probe-...`` for the probe).
    window : int
        Window in bases (the command's default is the VEP window of geneb's vocabulary).
    name : str, optional
        The model's name in the table and the store.
    **options
        The other parameters of ``score_variants`` (``scorers``, ``store``, ``limit``,
        ``device``, ``batch_tokens``, ``trust_remote_code``) or of ``probe_variants``
        (``features``, ``Cs``, ``alphas``, ``folds``, ``backend``, ``standardize``,
        ``target``, and the same run options).

    Returns
    -------
    WrittenScores
        The path written, the rows, the embedding counts and the seconds it took.
    """
    from geneb.vep.probe_run import probe_variants
    from geneb.vep.runner import score_variants

    vt = load_variant_task(str(task))
    path = scores_path(out, vt.name, model, window, name=name,
                       prefix="vep-probe" if supervised else "vep")
    done = WrittenScores(path, pd.DataFrame())
    t0 = time.perf_counter()
    scorer = probe_variants if supervised else score_variants
    done.table = scorer(vt, model, window=window, name=name, run=done.run, **options)
    done.seconds = time.perf_counter() - t0
    write_scores(done.table, path)
    return done
