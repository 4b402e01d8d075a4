"""A user's results to compare with GENEB's published leaderboard: two models (alpha, beta) on
staged GENEB tasks named by catalogue name or by GENEB id, regimes full and 10, GENEB's five
seeds, the paper protocol; alpha also has one task beta lacks (so it is not in the common set),
converged-protocol rows (never compared) and a task GENEB does not have. ``gue_mouse_0`` carries
the catalogue's category (tf_binding); GENEB files it under mouse_enhancers."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
from example_results import _row

from geneb.results.schema import RESULT_COLUMNS, RESULTS_SCHEMA
from geneb.vocabulary import DEFAULT_SEEDS

#: task as the user names it -> the category on the user's rows
USER_TASKS: dict[str, str] = {
    "gue_emp_h3": "histone_modifications",
    "leannmlindsey_GUE_emp_H3K4me3": "histone_modifications",  # a GENEB id
    "gue_mouse_0": "tf_binding",  # the catalogue's category; GENEB: mouse_enhancers
    "gue_prom_300_tata": "promoters",
    "gue_prom_core_all": "promoters",
    "gue_splice_reconstructed": "splice_sites",  # alpha only
    "my_private_task": "enhancers",  # not GENEB's
}
#: the GENEB ids of the common set (in GENEB's order) and GENEB's category of each
COMMON: dict[str, str] = {
    "leannmlindsey_GUE_emp_H3": "histone_modifications",
    "leannmlindsey_GUE_emp_H3K4me3": "histone_modifications",
    "leannmlindsey_GUE_prom_300_tata": "promoters",
    "leannmlindsey_GUE_prom_core_all": "promoters",
    "leannmlindsey_GUE_mouse_0": "mouse_enhancers",
}
#: the user's name of each common task
USER_NAME: dict[str, str] = {
    "leannmlindsey_GUE_emp_H3": "gue_emp_h3",
    "leannmlindsey_GUE_emp_H3K4me3": "leannmlindsey_GUE_emp_H3K4me3",
    "leannmlindsey_GUE_prom_300_tata": "gue_prom_300_tata",
    "leannmlindsey_GUE_prom_core_all": "gue_prom_core_all",
    "leannmlindsey_GUE_mouse_0": "gue_mouse_0",
}
MODELS = {"alpha": (0.9, 10_000_000), "beta": (0.3, 20_000_000)}


def user_mcc(model: str, i: int, j: int, regime: str) -> float:
    """The MCC of ``model`` on the i-th task of USER_TASKS, seed index j."""
    return MODELS[model][0] - 0.02 * i + 0.001 * j - (0.2 if regime != "full" else 0.0)


def compare_rows(names: dict[str, str] | None = None) -> pd.DataFrame:
    """The user's table (``names``: rename models, e.g. to hostile strings)."""
    rows = []
    for model, (_, params) in MODELS.items():
        for i, (task, cat) in enumerate(USER_TASKS.items()):
            if model == "beta" and task == "gue_splice_reconstructed":
                continue
            for regime in ("full", "10"):
                k = None if regime == "full" else 10
                for j, seed in enumerate(DEFAULT_SEEDS):
                    r = _row(model, task, cat, regime, k, seed, 1.0, "linear",
                             user_mcc(model, i, j, regime), 100, params)
                    rows.append({**r, "protocol": "paper"})
                    if model == "alpha" and regime == "full":
                        rows.append({**r, "protocol": "converged", "mcc": 0.99})
    df = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    df["model"] = df["model"].replace(names or {})
    return pa.Table.from_pandas(df, schema=RESULTS_SCHEMA, preserve_index=False).to_pandas()
