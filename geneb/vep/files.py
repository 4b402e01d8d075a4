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


def score_to_file(
    task: str | Path,
    model: str,
    scorers: list[str],
    *,
    out: str | Path | None = None,
    window: int,
    name: str | None = None,
    **options: Any,
) -> WrittenScores:
    """Zero-shot scores of every variant of ``task`` (:func:`geneb.vep.runner.score_variants`)
    written to ``out``.

    Parameters
    ----------
    task : str or Path
        A variant task folder or the name of a fetched variant set.
    model : str
        The model spec.
    scorers : list of str
        ``cosine``, ``l2`` and/or ``llr``.
    out : str or Path, optional
        The table (``.parquet`` or ``.csv``); default ``vep-<task>-<model>-w<W>.parquet``.
    window : int
        Window in bases (the command's default is the VEP window of geneb's vocabulary).
    name : str, optional
        The model's name in the table and the store.
    **options
        ``score_variants``' other parameters (``store``, ``limit``, ``device``,
        ``batch_tokens``, ``trust_remote_code``).

    Returns
    -------
    WrittenScores
        The path written, the rows, the embedding counts and the seconds scoring took.
    """
    from geneb.vep.runner import score_variants

    vt = load_variant_task(str(task))
    path = scores_path(out, vt.name, model, window, name=name)
    done = WrittenScores(path, pd.DataFrame())
    t0 = time.perf_counter()
    done.table = score_variants(vt, model, scorers, window=window, name=name, run=done.run,
                                **options)
    done.seconds = time.perf_counter() - t0
    write_scores(done.table, path)
    return done


def probe_to_file(
    task: str | Path,
    model: str,
    *,
    out: str | Path | None = None,
    window: int,
    name: str | None = None,
    **options: Any,
) -> WrittenScores:
    """Out-of-fold supervised scores of ``task`` (:func:`geneb.vep.probe_run.probe_variants`)
    written to ``out``.

    Parameters
    ----------
    task : str or Path
        A variant task folder or the name of a fetched variant set.
    model : str
        The model spec.
    out : str or Path, optional
        The table (``.parquet`` or ``.csv``); default
        ``vep-probe-<task>-<model>-w<W>.parquet``.
    window : int
        Window in bases (the command's default is the VEP window of geneb's vocabulary).
    name : str, optional
        The model's name in the table and the store.
    **options
        ``probe_variants``' other parameters (``features``, ``Cs``, ``alphas``, ``folds``,
        ``store``, ``limit``, ``backend``, ``standardize``, ``target``, ``device``,
        ``batch_tokens``, ``trust_remote_code``).

    Returns
    -------
    WrittenScores
        The path written, the rows, the embedding counts and the seconds it took.
    """
    from geneb.vep.probe_run import probe_variants

    vt = load_variant_task(str(task))
    path = scores_path(out, vt.name, model, window, name=name, prefix="vep-probe")
    done = WrittenScores(path, pd.DataFrame())
    t0 = time.perf_counter()
    done.table = probe_variants(vt, model, window=window, name=name, run=done.run, **options)
    done.seconds = time.perf_counter() - t0
    write_scores(done.table, path)
    return done
