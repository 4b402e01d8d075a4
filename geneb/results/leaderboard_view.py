"""The published leaderboard per regime and category (``geneb leaderboard``).

Scores come from each record's task values, averaged as GENEB averages
(:mod:`geneb.protocol`): overall macro- and micro-MCC, or one category's mean (which equal the
published ``macro_MCC``, ``micro_MCC`` and ``cat_MCC`` exactly: tests/test_published_source.py).
"""

from __future__ import annotations

from typing import Any

from geneb.constraints import Nullable, StrOptions, validate_params
from geneb.errors import GenebError
from geneb.protocol import category_means, macro_micro
from geneb.results.leaderboard_file import GENEB_CATEGORY_SLUGS, GENEB_REGIMES
from geneb.results.published import leaderboard, source_label

SORTS: tuple[str, ...] = ("macro", "micro")
OVERALL = "overall"


@validate_params({"regime": Nullable(StrOptions(tuple(GENEB_REGIMES.values()))),
                  "sort": StrOptions(SORTS)})
def leaderboard_summary(source: str = "published:geneb", *, regime: str | None = None,
                        category: str | None = None, sort: str = "macro") -> dict[str, Any]:
    """The leaderboard of ``source``, ranked per regime (all regimes when ``regime`` is None).

    ``category``: a geneb category slug (or GENEB's name of it) to rank by that category's
    mean instead of the overall score; ``sort``: ``macro`` or ``micro`` (overall only).
    Returns ``{"source", "category", "sort", "regimes": {regime: [{rank, model, display,
    params, official, submitted, zero_shot, score, macro_mcc, micro_mcc, n_tasks,
    categories: {slug: mean MCC}}]}}``.
    """
    board = leaderboard(source)
    slug = _category(category)
    names = {GENEB_REGIMES[k]: k for k in board.records}
    if regime is not None and regime not in names:
        raise GenebError(f"regime: {source} has regime(s) {', '.join(names)}; got {regime!r}",
                         param="regime")
    cats = [GENEB_CATEGORY_SLUGS[c] for c in board.categories]
    cat_of = dict(zip(board.task_ids, cats, strict=True))
    out: dict[str, list[dict[str, Any]]] = {}
    for name, key in names.items():
        if regime is not None and name != regime:
            continue
        rows: list[dict[str, Any]] = []
        for rec in board.records[key]:
            ids = list(rec.task_ids or board.task_ids)
            rc = [cat_of[t] for t in ids]
            macro, micro = macro_micro(rec.task_mcc, rc)
            score, n = (macro if sort == "macro" else micro), len(ids)
            cat_names, means = category_means(rec.task_mcc, rc)
            per_cat = {c: float(m) for c, m in zip(cat_names, means.tolist(), strict=True)}
            if slug is not None:
                if slug not in per_cat:
                    continue
                score, n = per_cat[slug], rc.count(slug)
            rows.append({"model": rec.model, "display": rec.display, "params": rec.params,
                         **{f: rec.facts.get(f) for f in ("official", "submitted", "zero_shot")},
                         "score": float(score), "macro_mcc": macro, "micro_mcc": micro,
                         "n_tasks": n, "categories": per_cat})
        rows.sort(key=lambda r: (-r["score"], r["model"]))
        out[name] = [{"rank": i + 1, **r} for i, r in enumerate(rows)]
    return {"source": source_label(board), "category": slug or OVERALL, "sort": sort,
            "regimes": out}


def _category(category: str | None) -> str | None:
    if category is None or category == OVERALL:
        return None
    if category in GENEB_CATEGORY_SLUGS:
        return GENEB_CATEGORY_SLUGS[category]
    if category in GENEB_CATEGORY_SLUGS.values():
        return category
    from geneb.errors import unknown_name

    raise unknown_name("category", category, [OVERALL, *GENEB_CATEGORY_SLUGS.values()])
