"""Writing a probe run's rows: one results part per finished pair (model, task).

A pair's rows are its planned cell rows (identity and provenance, from ``geneb.probe.plan``)
joined with the metrics its fits returned. Each pair is appended as one part as soon as it is
done (``geneb.results.ResultsTable.append``), so the cost does not depend on the table's size
and a killed run keeps every finished pair.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geneb.probe.plan import Pair
from geneb.results.table import ResultsTable


@dataclass
class ResultWriter:
    """Appends each finished pair to the table at ``out``; counts rows and time spent."""

    out: Path
    on_pair_done: Callable[[str, str, int], None] | None = None
    n_rows: int = 0
    n_parts: int = 0
    seconds: float = 0.0
    #: (model, task) -> rows written whose fit did not converge
    not_converged: dict[tuple[str, str], int] = field(default_factory=dict)

    def rows(self, rows: list[dict[str, Any]]) -> None:
        """Append ready rows (e.g. reused full-data rows) as one part."""
        if not rows:
            return
        t0 = time.perf_counter()
        ResultsTable(self.out).append(rows)
        self._took(time.perf_counter() - t0)
        self.n_rows += len(rows)
        for r in rows:
            if r.get("converged") is False or r.get("converged") == 0:
                key = (str(r.get("model")), str(r.get("task")))
                self.not_converged[key] = self.not_converged.get(key, 0) + 1

    def pair(self, pair: Pair, fit_results: list[dict[str, Any]]) -> None:
        """Join the pair's cells with their fits' metrics and append them as one part."""
        by_id = {r["fit_id"]: r for r in fit_results}
        rows = []
        for base, fid in pair.cells:
            r = by_id[fid]
            rows.append({**base, **{k: v for k, v in r.items() if k != "fit_id"}})
        self.rows(rows)
        if self.on_pair_done is not None:
            self.on_pair_done(pair.model, pair.task, len(rows))

    def _took(self, s: float) -> None:
        self.seconds += s
        self.n_parts += 1
