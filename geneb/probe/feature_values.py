"""Which feature values the probe accepts: finite ones of magnitude at most
``FEATURE_ABS_MAX``, checked before any work (store entries and ``probe_arrays`` alike).

Why a magnitude bound: the probes run float32 products over the rows (the lagged Gram
``X^T D X``, the Hessian-vector products), and a feature of magnitude ~1e19 squares past
float32's largest value (3.4e38). Measured 2026-12-02 with one outlier in an otherwise normal
design: at 1e30 every full-regime cell came back unconverged with MCC 0.0 (the Gram overflowed
to inf); at 1e18 the cells of 5,000 x 1,024 converged (those of 2,000 x 64 were unconverged,
and recorded so, from an outlier of 1e12 on: conditioning, not overflow). The bound keeps the
sum of squares of 100,000 rows (the full regime's cap) with weights <= 1 below float32's
largest value: 1e5 x (1e16)^2 = 1e37. No real embedding comes near it (the checkpoints and
fixtures here stay below 1e4); a value past it is a broken extraction or a unit error, named
before anything is probed.
"""

from __future__ import annotations

import numpy as np

#: Largest |feature value| the probes accept (see the module docstring).
FEATURE_ABS_MAX = 1e16
#: Rows checked at a time (the check's temporaries stay small next to the matrix).
CHECK_ROWS = 8192
#: What ``first_unprobeable`` says was expected, by the kind of value refused.
EXPECTED_FINITE = "finite values"
EXPECTED_IN_RANGE = f"|values| <= {FEATURE_ABS_MAX:g} (float32 products of larger ones overflow)"


def first_unprobeable(a: np.ndarray) -> tuple[int, int, str] | None:
    """The first value the probe refuses, in row-major order: ``(row, column, what was
    expected)``, or None when every value is accepted.

    Parameters
    ----------
    a : ndarray of shape (n, d)
        Features in any numeric dtype (checked before any cast to float32, so a float64
        value that would overflow float32 is named, not turned into inf).

    Returns
    -------
    tuple of (int, int, str) or None
        Row, column, and ``EXPECTED_FINITE`` or ``EXPECTED_IN_RANGE``.
    """
    if not np.issubdtype(a.dtype, np.floating) and not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"expected a numeric array, got {a.dtype}")
    # a float type whose largest value is below the bound (float16): every finite value is
    # in range, and the bound itself would overflow to inf in that type (inf <= inf)
    narrow = (np.issubdtype(a.dtype, np.floating)
              and float(np.finfo(a.dtype).max) < FEATURE_ABS_MAX)
    for r0 in range(0, len(a), CHECK_ROWS):
        block = np.asarray(a[r0:r0 + CHECK_ROWS])
        # False for NaN and inf; two comparisons, not abs (abs of the most negative integer
        # wraps around)
        ok = (np.isfinite(block) if narrow
              else (block >= -FEATURE_ABS_MAX) & (block <= FEATURE_ABS_MAX))
        if not ok.all():
            r, c = (int(v) for v in np.argwhere(~ok)[0])
            value = block[r, c]
            return r0 + r, c, EXPECTED_IN_RANGE if np.isfinite(value) else EXPECTED_FINITE
    return None
