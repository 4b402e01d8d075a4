"""The scorers: embedding distances (``cosine``, ``l2``) and the log-likelihood ratio (``llr``).

Each returns, for every variant of a ``Windows`` (row i = variant i), a float64 score (NaN when
not scored) and a status (``ok`` or the reason it was not scored). Orientation (``ORIENTATION``)
says how to turn a score into "higher means label 1": distances as they are, LLR negated (a
variant the model finds less likely than the reference is predicted damaging).
"""

from __future__ import annotations

import numpy as np

from geneb.tasks.windows import OK, Windows
from geneb.vep.likelihood import (
    NOT_ALIGNABLE,
    TOKENS_CHANGED,
    TOO_LONG,
    LMScorer,
    Tokenised,
    masked_positions,
)

#: +1: higher score = more likely label 1; -1: lower score = more likely label 1.
#: ``probe-*``: the supervised probe's out-of-fold probability of label 1
#: (``geneb.vep.supervised.PROBE_SCORERS``).
#: ``ridge-*``: the out-of-fold prediction of the task's ``score`` (low = loss of function in
#: BRCA1-like tasks, hence -1).
ORIENTATION = {"cosine": 1, "l2": 1, "llr": -1, "probe-diff": 1, "probe-concat": 1,
               "ridge-diff": -1, "ridge-concat": -1}
INDEL_MASKED = "indel_not_supported_by_masked_marginal"
ZERO_EMBEDDING = "zero_embedding"


def distances(ref: np.ndarray, alt: np.ndarray, scorer: str) -> np.ndarray:
    """Row-wise ``1 - cos(ref, alt)`` or ``||ref - alt||`` in float64 (NaN for a zero vector)."""
    a = np.asarray(ref, dtype=np.float64)
    b = np.asarray(alt, dtype=np.float64)
    if scorer == "l2":
        l2: np.ndarray = np.linalg.norm(a - b, axis=1)
        return l2
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.einsum("ij,ij->i", a, b) / (na * nb)
    return np.where((na > 0) & (nb > 0), 1.0 - cos, np.nan)


def distance_scores(
    win: Windows, ok: np.ndarray, ref_emb: np.ndarray, alt_emb: np.ndarray, scorer: str
) -> tuple[np.ndarray, np.ndarray]:
    """Scores of the variants ``ok`` (indices), given the embeddings of all distinct reference
    windows (row j = ``win.ref_windows[j]``) and of the alternate windows of ``ok`` in order."""
    n = len(win.status)
    score = np.full(n, np.nan)
    status = win.status.copy()
    d = distances(ref_emb[win.ref_id[ok]], alt_emb, scorer)
    score[ok] = d
    status[ok[np.isnan(d)]] = ZERO_EMBEDDING
    return score, status


def _too_long(lm: LMScorer, toks: list[Tokenised]) -> np.ndarray:
    if lm.max_tokens is None:
        return np.zeros(len(toks), dtype=bool)
    return np.array([len(t.ids) > lm.max_tokens for t in toks], dtype=bool)


def llr_scores(lm: LMScorer, win: Windows, alleles: list[tuple[str, str]]) -> tuple[
    np.ndarray, np.ndarray
]:
    """LLR of every variant (see ``geneb.vep.likelihood``); ``alleles[i] = (ref, alt)``."""
    n = len(win.status)
    score = np.full(n, np.nan)
    status = win.status.copy()
    ok = np.flatnonzero(status == OK)
    used_refs = np.unique(win.ref_id[ok])
    ref_toks: dict[int, Tokenised] = dict(
        zip(used_refs.tolist(), lm.tokenise([win.ref_windows[j] for j in used_refs]), strict=True)
    )
    if lm.kind == "masked_lm":
        same = np.array([len(alleles[i][0]) == len(alleles[i][1]) for i in ok], dtype=bool)
        status[ok[~same]] = INDEL_MASKED
        ok = ok[same]
    alt_toks = lm.tokenise(win.alts_of(ok))
    long_alt = _too_long(lm, alt_toks)
    long_ref = _too_long(lm, [ref_toks[int(win.ref_id[i])] for i in ok])
    status[ok[long_alt | long_ref]] = TOO_LONG
    keep = ~(long_alt | long_ref)
    ok, alt_toks = ok[keep], [t for t, k in zip(alt_toks, keep, strict=True) if k]
    if lm.kind == "causal_lm":
        refs = sorted({int(win.ref_id[i]) for i in ok})
        ll_ref = dict(zip(refs, lm.log_likelihoods([ref_toks[j] for j in refs]), strict=True))
        ll_alt = lm.log_likelihoods(alt_toks)
        for k, i in enumerate(ok):
            score[i] = ll_alt[k] - ll_ref[int(win.ref_id[i])]
        return score, status
    half = win.window // 2
    groups: dict[tuple[int, tuple[int, ...]], list[tuple[int, Tokenised]]] = {}
    for i, at in zip(ok.tolist(), alt_toks, strict=True):
        rt = ref_toks[int(win.ref_id[i])]
        mask = masked_positions(rt, half, half + len(alleles[i][0]))
        if not mask or at.starts is None:
            status[i] = NOT_ALIGNABLE
            continue
        outside = np.ones(len(rt.ids), dtype=bool)
        outside[list(mask)] = False
        if len(at.ids) != len(rt.ids) or not np.array_equal(at.ids[outside], rt.ids[outside]):
            status[i] = TOKENS_CHANGED
            continue
        groups.setdefault((int(win.ref_id[i]), mask), []).append((i, at))
    keys = list(groups)
    lps = lm.masked_logprobs([ref_toks[j] for j, _ in keys], [m for _, m in keys])
    for (j, mask), lp in zip(keys, lps, strict=True):
        rows = np.arange(len(mask))
        ref_ids = ref_toks[j].ids[list(mask)]
        lp_ref = lp[rows, ref_ids].astype(np.float64).sum()
        for i, at in groups[(j, mask)]:
            score[i] = lp[rows, at.ids[list(mask)]].astype(np.float64).sum() - lp_ref
    return score, status
