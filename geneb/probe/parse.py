"""Parsing the probe parameters of ``run_probes`` (shots, seeds, C) into checked tuples.

The values themselves (GENEB's regimes, seeds and C sweep) are defined in ``geneb.protocol``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from geneb.errors import ProbeError
from geneb.protocol import DEFAULT_ALPHA_SWEEP, DEFAULT_C_SWEEP, DEFAULT_SEEDS, REGIMES

__all__ = ["parse_Cs", "parse_alphas", "parse_positive", "parse_seeds", "parse_shots"]


def parse_shots(shots: str | Iterable[str | int]) -> tuple[str, ...]:
    """``"1,10,full"`` or ``["1", 10, "full"]`` -> ``("1", "10", "full")``; k must be >= 1."""
    items = shots.split(",") if isinstance(shots, str) else list(shots)
    out: list[str] = []
    for raw in items:
        s = str(raw).strip().lower()
        if not s:
            continue
        if s != "full":
            try:
                k = int(s)
            except ValueError:
                raise ProbeError(
                    f"invalid shot regime {raw!r}: expected a positive integer k or 'full' "
                    f"(GENEB uses {','.join(REGIMES)})"
                ) from None
            if k < 1:
                raise ProbeError(f"invalid shot regime {raw!r}: k must be >= 1")
            s = str(k)
        if s not in out:
            out.append(s)
    if not out:
        raise ProbeError(f"no shot regime given (expected e.g. {','.join(REGIMES)})")
    return tuple(out)


def parse_seeds(seeds: str | Iterable[int | str]) -> tuple[int, ...]:
    """Comma list or iterable of non-negative integer seeds, duplicates dropped, order kept."""
    items = seeds.split(",") if isinstance(seeds, str) else list(seeds)
    out: list[int] = []
    for raw in items:
        if isinstance(raw, str) and not raw.strip():
            continue
        try:
            v = int(str(raw).strip())
        except ValueError:
            raise ProbeError(f"invalid seed {raw!r}: expected a non-negative integer") from None
        if v < 0:
            raise ProbeError(f"invalid seed {raw!r}: expected a non-negative integer")
        if v not in out:
            out.append(v)
    if not out:
        raise ProbeError(f"no seed given (GENEB uses {','.join(map(str, DEFAULT_SEEDS))})")
    return tuple(out)


def parse_positive(values: str | Iterable[float | str], name: str,
                   default: Iterable[float]) -> tuple[float, ...]:
    """Comma list or iterable of positive, finite numbers (duplicates dropped, order kept):
    the one check of a penalty sweep (``C`` of logistic regression, ``alpha`` of ridge)."""
    items = values.split(",") if isinstance(values, str) else list(values)
    out: list[float] = []
    for raw in items:
        if isinstance(raw, str) and not raw.strip():
            continue
        try:
            v = float(str(raw).strip())
        except ValueError:
            raise ProbeError(f"invalid {name} {raw!r}: expected a positive number") from None
        if not np.isfinite(v) or v <= 0:
            raise ProbeError(f"invalid {name} {raw!r}: expected a positive, finite number")
        if v not in out:
            out.append(v)
    if not out:
        raise ProbeError(f"no {name} given (the default sweep is "
                         f"{','.join(map(str, default))})")
    return tuple(out)


def parse_Cs(Cs: str | Iterable[float | str]) -> tuple[float, ...]:  # noqa: N802 - C is the name
    """Inverse regularisation strengths of the logistic probe (GENEB sweep by default)."""
    return parse_positive(Cs, "C", DEFAULT_C_SWEEP)


def parse_alphas(alphas: str | Iterable[float | str]) -> tuple[float, ...]:
    """Ridge penalties of the regression probe."""
    return parse_positive(alphas, "alpha", DEFAULT_ALPHA_SWEEP)
