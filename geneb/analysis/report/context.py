"""Everything the report's sections share, computed once from the results table.

Sections read from a :class:`ReportContext`; they never recompute the selection of cells, so
every section follows the same choices (standardisation, headline C, common tasks, regimes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from geneb.analysis.aggregates import aggregate_scores
from geneb.analysis.metadata import model_metadata
from geneb.analysis.performance import performance_matrix
from geneb.analysis.properties import Catalogue, resolve_properties
from geneb.analysis.rankings import model_rankings
from geneb.analysis.scaling import use_published_params
from geneb.analysis.table import (
    choose_main_c,
    choose_standardize,
    common_tasks,
    regime_order,
    select,
)
from geneb.analysis.uncertainty import bootstrap_over_seeds, bootstrap_over_tasks
from geneb.errors import GenebError
from geneb.protocol import BOOT_SEED
from geneb.vocabulary import CAPACITY_TIER_EDGES, N_BOOT_REPORT


@dataclass
class ReportContext:
    """The report's inputs and the shared selections and tables derived from them.

    ``df_all`` is the validated table, ``df`` the one restricted to the asked regimes and Cs.
    """

    df_all: pd.DataFrame
    df: pd.DataFrame
    info: pd.DataFrame | None
    Cs: Sequence[float] | None = None
    scaling_exclude: Sequence[str] = ()
    n_boot: int = N_BOOT_REPORT
    boot_seed: int = BOOT_SEED
    alpha: float = 0.05
    user_props: pd.DataFrame | None = None  # --model-properties, read and checked
    catalogue: Catalogue | None = None  # published facts handed in (geneb.analysis.properties)
    task_organisms: dict[str, str] | None = None  # --task-organisms, read and checked
    tier_edges: tuple[float, ...] = CAPACITY_TIER_EDGES
    #: which fits the analyses use: standardised (True), as stored (False), None: as stored
    #: when the table has such fits, else standardised (``choose_standardize``)
    standardize: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # for sections added later
    #: what `geneb report --json` prints; sections add their keys
    summary: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Paper-protocol rows (geneb probe --protocol paper) are compared with the converged
        # ones in their own section; every other analysis uses one protocol, never a mix.
        protocols = set(self.df["protocol"]) if "protocol" in self.df.columns else set()
        self.protocol: str = "converged" if "converged" in protocols or not protocols else "paper"
        if "protocol" in self.df.columns:
            self.df = self.df[self.df["protocol"] == self.protocol].reset_index(drop=True)
        self.std: bool = (
            choose_standardize(self.df) if self.standardize is None else self.standardize
        )
        df_std = self.df[self.df["standardize"] == self.std].reset_index(drop=True)
        if df_std.empty:
            raise GenebError(
                f"standardize={self.std}: the results have no "
                f"{'standardised' if self.std else 'as-stored (unstandardised)'} cells left "
                f"(expected some; got {len(self.df)} with standardize={not self.std})"
            )
        #: cells per probe with the other setting (named where a section lacks that probe)
        other = self.df[self.df["standardize"] != self.std]
        self.other_std_probes: dict[str, int] = other["probe"].value_counts().to_dict()
        self.n_other_std: int = len(self.df) - len(df_std)
        self.main_c: float | None = choose_main_c(df_std, self.Cs)
        self.data, self.dropped_tasks = common_tasks(df_std)
        self.regs: list[str] = regime_order(self.data["regime"])
        self.main_regime: str = "full" if "full" in self.regs else self.regs[-1]
        self.models: list[str] = sorted(self.data["model"].unique())
        self.categories: list[str] = sorted(self.data["category"].unique())
        self.has_linear: bool = self.main_c is not None
        self.main_sel: dict[str, Any] = (
            dict(probe="linear", C=self.main_c, standardize=self.std)
            if self.has_linear
            else dict(probe="mlp", standardize=self.std)
        )

    def other_setting(self, probe: str) -> str:
        """Where ``probe`` has fits only with the other standardisation: a clause saying so
        and how to use them ('' when it has none)."""
        n = int(self.other_std_probes.get(probe, 0))
        if not n:
            return ""
        setting, flag = ("as stored", "--no-standardize") if self.std else (
            "standardised", "--standardize")  # fmt: skip
        return (f"; {n} {probe} cells with features {setting} exist but this report uses the "
                f"other setting (geneb report {flag}, or standardize={not self.std})")

    @cached_property
    def seed_means(self) -> bool:
        """The rows are means over seeds (published figures such as GENEB's leaderboard), not
        one fit per seed: no row has a seed, so nothing can be resampled over seeds and no
        convergence was recorded."""
        return bool(self.data["seed"].isna().all())

    @cached_property
    def perf(self) -> pd.DataFrame:
        """Per (context, model, task) cell: mean and sd of MCC over seeds."""
        return performance_matrix(self.data)

    @cached_property
    def _meta_measured(self) -> pd.DataFrame:
        return model_metadata(self.data, self.info)

    @cached_property
    def props(self) -> pd.DataFrame:
        """Per model: the properties of the controlled comparisons and where each came from
        (user file, then catalogue, then measured count; :mod:`geneb.analysis.properties`)."""
        meta = self._meta_measured
        measured = {
            m: n for m, n in zip(meta["model"], meta["n_params"], strict=True) if pd.notna(n)
        }
        return resolve_properties(self.models, self.user_props, measured, self.catalogue)

    @cached_property
    def _sized(self) -> tuple[pd.DataFrame, pd.DataFrame, str]:
        """(agg, meta, note) with the parameter counts of :attr:`props`."""
        return use_published_params(aggregate_scores(self.perf), self._meta_measured, self.props)

    @cached_property
    def organisms(self) -> dict[str, str]:
        """Task -> organism class: the results' ``organism`` column, then --task-organisms."""
        out: dict[str, str] = {}
        if "organism" in self.data.columns:
            pairs = self.data[["task", "organism"]].dropna().drop_duplicates()
            out.update({t: str(o) for t, o in zip(pairs["task"], pairs["organism"], strict=True)})
        out.update(self.task_organisms or {})
        return out

    @cached_property
    def agg(self) -> pd.DataFrame:
        """Macro/micro MCC per context, scope and model (the paper's definitions), with the
        parameter count the scaling analysis uses (published where known, else measured)."""
        return self._sized[0]

    @cached_property
    def ranks(self) -> pd.DataFrame:
        return model_rankings(self.agg)

    @cached_property
    def meta(self) -> pd.DataFrame:
        """Per model: parameter count used, measured count, its source, the user's own columns."""
        return self._sized[1]

    @cached_property
    def single_task_categories(self) -> list[str]:
        """Categories with one task: the within-category task bootstrap cannot resample them,
        so its intervals leave out their task-to-task variation (said in the report)."""
        n = self.data.groupby("category")["task"].nunique()
        return sorted(n[n < 2].index.astype(str))

    @cached_property
    def params_note(self) -> str:
        """One sentence: which parameter counts (published or measured) the report used."""
        return self._sized[2]

    @cached_property
    def agg_main(self) -> pd.DataFrame:
        """Aggregates of the headline probe (every regime)."""
        return select(self.agg, **self.main_sel)

    @cached_property
    def perf_main(self) -> pd.DataFrame:
        return select(self.perf, **self.main_sel)

    @cached_property
    def boot_tasks(self) -> pd.DataFrame:
        """Bootstrap over tasks (stratified by category) of the headline probe."""
        return bootstrap_over_tasks(self.perf_main, n_boot=self.n_boot, seed=self.boot_seed)

    @cached_property
    def boot_seeds(self) -> pd.DataFrame:
        """Bootstrap over seeds of the headline probe."""
        return bootstrap_over_seeds(
            select(self.data, **self.main_sel), n_boot=self.n_boot, seed=self.boot_seed
        )
