"""Compiled row kernels of the full-data fit: each reads a block's rows once (numba).

The numpy passes of :mod:`geneb.probe.solvers.fast_full` cost more than one read of X each:
a float64 pass over float32 rows upcasts them into a buffer first (numpy has no float32 x
float64 product; measured 3.2-4.8 float32 passes per fused pass), and a Hessian-vector
product is two BLAS calls per block (1.6-2.0 passes: the second does not run at cache speed).
These kernels do a block's whole pass row by row, each row read once and used twice while in
L1: the product with a direction accumulated in float64 (the float32 values widened, exact),
the row's loss, probability and residual, and the row's share of ``X^T r`` added to float64
accumulators. One block is one call; blocks, their order and the order within a block are
fixed, so the result has the same bits for any number of threads.

Compiled once per process (``cache=True``: numba keeps the machine code next to this file or
in its user cache, so later processes load it); :func:`available` says whether numba is here.
Reassociation is allowed (``fastmath`` reassoc/contract only, never the no-NaN/no-Inf flags)
so the row dot products vectorise: float64 sums in another order than BLAS's, of the same
accuracy.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

#: numba's fastmath flags for the kernels: reordering of float64 sums (vectorised row dot
#: products) and fused multiply-adds; NaN and Inf keep their meaning.
FASTMATH = {"reassoc", "contract"}


@lru_cache(maxsize=1)
def available() -> bool:
    """True when numba imports here (the kernels compile on first use)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


@lru_cache(maxsize=1)
def kernels() -> dict[str, Any]:
    """The compiled kernels by name (numba imported and the functions defined on first call).

    Every kernel takes ``X`` (n, p) float32 or float64 and one block ``a..b``, its directions
    and accumulators of p entries, or of p + 1 where X leaves out its last column of ones (the
    intercept's: ``_row_helpers``; no copy of a float32 design to append it); rows go in
    groups of four (the row dot products of a group share each read of the direction, the
    group's updates of the accumulators share each read and write of them: measured 1.4-1.8x
    faster than row by row, whose loops LLVM did not vectorise), the last ``(b - a) % 4`` rows
    one at a time."""
    import numba

    jit = numba.njit(nogil=True, cache=True, fastmath=FASTMATH)
    dot4, dot1, axpy4, axpy1 = _row_helpers(jit)
    group_dots, group_axpys = _group_helpers(jit, dot4, dot1, axpy4, axpy1)
    return {**_binary_kernels(jit, dot4, dot1, axpy4, axpy1, _row_terms(jit)),
            **_row_kernels(jit, dot4, dot1),
            **_multi_kernels(jit, group_dots, group_axpys),
            **_multi_hessian(jit, group_dots, group_axpys), **_int16_kernels(jit)}


def _row_helpers(jit: Any) -> tuple[Any, Any, Any, Any]:
    """``dot4, dot1, axpy4, axpy1``: a group's (or one row's) dot products and accumulator
    updates, their values passed as scalars (registers). Measured 2026-12-02 (one thread, a
    block of 1,024 rows, Hessian product / one sgemv of the block): 256 columns 2.65 -> 1.44,
    768: 1.97-2.87 -> 1.81, 1,024: 1.93 -> 1.59 against the former helpers that went through
    small arrays and a list of groups (the same operations in the same order: the same
    bits)."""

    @jit
    def dot4(X, i, w, zero):  # type: ignore[no-untyped-def]
        """X[i + t] . w for t < 4, summed in the type of ``zero`` (0.0: float64;
        ``np.float32(0)``: twice the lanes, no widening). A w one longer than X's rows: X's
        implicit last column of ones (``implicit_ones``)."""
        d = X.shape[1]
        x0, x1, x2, x3 = X[i], X[i + 1], X[i + 2], X[i + 3]
        e0 = e1 = e2 = e3 = zero
        for j in range(d):
            wj = w[j]
            e0 += x0[j] * wj
            e1 += x1[j] * wj
            e2 += x2[j] * wj
            e3 += x3[j] * wj
        if w.shape[0] > d:
            e0 += w[d]
            e1 += w[d]
            e2 += w[d]
            e3 += w[d]
        return e0, e1, e2, e3

    @jit
    def dot1(X, i, w, zero):  # type: ignore[no-untyped-def]
        """X[i] . w (``dot4`` for one row)."""
        d = X.shape[1]
        x0 = X[i]
        e0 = zero
        for j in range(d):
            e0 += x0[j] * w[j]
        if w.shape[0] > d:
            e0 += w[d]
        return e0

    @jit
    def axpy4(X, i, r0, r1, r2, r3, acc):  # type: ignore[no-untyped-def]
        """acc += sum_t r_t X[i + t] (an acc one longer than X's rows: X's implicit last
        column of ones, like ``dot4``)."""
        d = X.shape[1]
        x0, x1, x2, x3 = X[i], X[i + 1], X[i + 2], X[i + 3]
        for j in range(d):
            acc[j] += (x0[j] * r0 + x1[j] * r1) + (x2[j] * r2 + x3[j] * r3)
        if acc.shape[0] > d:
            acc[d] += (r0 + r1) + (r2 + r3)

    @jit
    def axpy1(X, i, r0, acc):  # type: ignore[no-untyped-def]
        """acc += r0 X[i] (``axpy4`` for one row)."""
        d = X.shape[1]
        x0 = X[i]
        for j in range(d):
            acc[j] += x0[j] * r0
        if acc.shape[0] > d:
            acc[d] += r0

    return dot4, dot1, axpy4, axpy1


def _row_terms(jit: Any) -> Any:
    """``row_terms``: one binary row's stored eta_d, eta, P and its (loss, residual).

    The log-loss ``log(1 + e^v)`` and the probability share one ``exp(-|v|)`` (the same
    values as computing it twice: a third fewer transcendental calls per row; the row terms
    were ~20% of a fused pass at 10,000 x 768, measured 2026-12-03)."""

    @jit
    def row_terms(k, e, base, has_base, y, eta_d, eta, P):  # type: ignore[no-untyped-def]
        """Row k's eta_d, eta, P stored; returns (its loss, its residual P - y)."""
        eta_d[k] = e
        v = e + base[k] if has_base else e
        eta[k] = v
        z = np.exp(-abs(v))
        P[k] = 1.0 / (1.0 + z) if v >= 0.0 else z / (1.0 + z)
        return max(v, 0.0) + np.log1p(z) - y[k] * v, P[k] - y[k]

    return row_terms


def _binary_kernels(jit: Any, dot4: Any, dot1: Any, axpy4: Any, axpy1: Any, row_terms: Any
                    ) -> dict[str, Any]:
    """The passes of a binary fit (one weight row)."""

    @jit
    def fused_binary(X, a, b, w, base, has_base, y, eta_d, eta, P, acc):  # type: ignore[no-untyped-def]
        """Rows a..b: eta_d = X w, eta = base + eta_d (eta_d when not has_base), P, and
        acc += X^T (P - y). Returns the rows' summed log-loss."""
        loss = 0.0
        full = a + (b - a) // 4 * 4
        for i in range(a, full, 4):
            e0, e1, e2, e3 = dot4(X, i, w, 0.0)
            l0, r0 = row_terms(i, e0, base, has_base, y, eta_d, eta, P)
            l1, r1 = row_terms(i + 1, e1, base, has_base, y, eta_d, eta, P)
            l2, r2 = row_terms(i + 2, e2, base, has_base, y, eta_d, eta, P)
            l3, r3 = row_terms(i + 3, e3, base, has_base, y, eta_d, eta, P)
            loss += l0
            loss += l1
            loss += l2
            loss += l3
            axpy4(X, i, r0, r1, r2, r3, acc)
        for i in range(full, b):
            li, ri = row_terms(i, dot1(X, i, w, 0.0), base, has_base, y, eta_d, eta, P)
            loss += li
            axpy1(X, i, ri, acc)
        return loss

    @jit
    def xtr_binary(X, a, b, R, acc):  # type: ignore[no-untyped-def]
        """acc += X[a:b]^T R[a:b]."""
        full = a + (b - a) // 4 * 4
        for i in range(a, full, 4):
            axpy4(X, i, R[i], R[i + 1], R[i + 2], R[i + 3], acc)
        for i in range(full, b):
            axpy1(X, i, R[i], acc)

    @jit
    def hvp_binary(X, a, b, v, D, acc, zero=0.0):  # type: ignore[no-untyped-def]
        """acc += X[a:b]^T (D[a:b] * X[a:b] v), summed in the type of ``zero`` (``dot4``)."""
        full = a + (b - a) // 4 * 4
        for i in range(a, full, 4):
            e0, e1, e2, e3 = dot4(X, i, v, zero)
            axpy4(X, i, e0 * D[i], e1 * D[i + 1], e2 * D[i + 2], e3 * D[i + 3], acc)
        for i in range(full, b):
            axpy1(X, i, dot1(X, i, v, zero) * D[i], acc)

    return {"fused_binary": fused_binary, "xtr_binary": xtr_binary, "hvp_binary": hvp_binary}


def _row_kernels(jit: Any, dot4: Any, dot1: Any) -> dict[str, Any]:
    """Per-row outputs of any fit: ``eta_rows`` (X W^T) and ``row_squares``."""

    @jit
    def eta_rows(X, a, b, W, out):  # type: ignore[no-untyped-def]
        """out[a:b] = X[a:b] W^T (W (K, p), out (n, K))."""
        full = a + (b - a) // 4 * 4
        for i in range(a, full, 4):
            for k in range(W.shape[0]):
                out[i, k], out[i + 1, k], out[i + 2, k], out[i + 3, k] = dot4(X, i, W[k], 0.0)
        for i in range(full, b):
            for k in range(W.shape[0]):
                out[i, k] = dot1(X, i, W[k], 0.0)

    @jit
    def row_squares(X, a, b, out):  # type: ignore[no-untyped-def]
        """out[i] = ||X[i]||^2 for rows a..b, summed in float64."""
        for i in range(a, b):
            x = X[i]
            s = 0.0
            for j in range(X.shape[1]):
                s += float(x[j]) * x[j]
            out[i] = s

    return {"eta_rows": eta_rows, "row_squares": row_squares}


def _group_helpers(jit: Any, dot4: Any, dot1: Any, axpy4: Any, axpy1: Any
                   ) -> tuple[Any, Any]:
    """``group_dots, group_axpys``: a group's (four rows or one) products with K directions,
    their values in a (K, 4) array."""

    @jit
    def group_dots(X, i, m, W, E, zero):  # type: ignore[no-untyped-def]
        """E[k, t] = X[i + t] . W[k] for t < m (4, or 1 for a remainder row)."""
        for k in range(W.shape[0]):
            if m == 4:
                E[k, 0], E[k, 1], E[k, 2], E[k, 3] = dot4(X, i, W[k], zero)
            else:
                E[k, 0] = dot1(X, i, W[k], zero)

    @jit
    def group_axpys(X, i, m, R, acc):  # type: ignore[no-untyped-def]
        """acc[k] += sum_t R[k, t] X[i + t] for t < m."""
        for k in range(R.shape[0]):
            if m == 4:
                axpy4(X, i, R[k, 0], R[k, 1], R[k, 2], R[k, 3], acc[k])
            else:
                axpy1(X, i, R[k, 0], acc[k])

    return group_dots, group_axpys


def _multi_kernels(jit: Any, group_dots: Any, group_axpys: Any) -> dict[str, Any]:
    """The fused pass and ``X^T R`` of a multi-class fit: W (K, p), per-class columns of
    (n, K) arrays."""

    @jit
    def fused_multi(X, a, b, W, base, has_base, Y, eta_d, eta, P, acc):  # type: ignore[no-untyped-def]
        """Multi-class ``fused_binary``: W (K, p); eta_d, eta, P, Y (n, K); acc (K, p)."""
        K = W.shape[0]
        loss = 0.0
        E = np.empty((K, 4))
        R = np.empty((K, 4))
        i = a
        while i < b:  # groups of four while four rows are left, then single rows
            m = 4 if i + 4 <= b else 1
            group_dots(X, i, m, W, E, 0.0)
            for t in range(m):
                row = i + t
                top = -np.inf
                for k in range(K):
                    v = E[k, t] + base[row, k] if has_base else E[k, t]
                    eta_d[row, k] = E[k, t]
                    eta[row, k] = v
                    top = max(top, v)
                z = 0.0
                for k in range(K):
                    z += np.exp(eta[row, k] - top)
                lse = top + np.log(z)
                for k in range(K):
                    loss += Y[row, k] * (lse - eta[row, k])
                    P[row, k] = np.exp(eta[row, k] - lse)
                    R[k, t] = P[row, k] - Y[row, k]
            group_axpys(X, i, m, R, acc)
            i += m
        return loss

    @jit
    def xtr_multi(X, a, b, Rn, acc):  # type: ignore[no-untyped-def]
        """acc (K, p) += (X[a:b]^T Rn[a:b])^T, Rn (n, K)."""
        K = Rn.shape[1]
        R = np.empty((K, 4))
        i = a
        while i < b:
            m = 4 if i + 4 <= b else 1
            for k in range(K):
                for t in range(m):
                    R[k, t] = Rn[i + t, k]
            group_axpys(X, i, m, R, acc)
            i += m

    return {"fused_multi": fused_multi, "xtr_multi": xtr_multi}


def _multi_hessian(jit: Any, group_dots: Any, group_axpys: Any) -> dict[str, Any]:
    """The multi-class data-Hessian product, in a basis of the classes' coefficients."""

    @jit
    def hvp_multi(X, a, b, V, Q, P, acc, zero=0.0):  # type: ignore[no-untyped-def]
        """acc (K', p) += (X^T s Q)^T for the direction V (K', p) in the basis Q (K, K'):
        e = X V^T Q^T (n, K), pu = P * e, s = pu - P * rowsum(pu), rows a..b, summed in the
        type of ``zero`` (``dot4``). K' dot products and K' accumulator updates per row: with
        Q the sum-zero basis (K' = K - 1) two thirds of the work of 3 classes in full (Q the
        identity: the product in full)."""
        Kr = V.shape[0]
        K = Q.shape[0]
        E = np.full((Kr, 4), zero)
        S = np.full((Kr, 4), zero)
        pu = np.full(K, zero)
        i = a
        while i < b:
            m = 4 if i + 4 <= b else 1
            group_dots(X, i, m, V, E, zero)
            for t in range(m):
                tot = zero
                for k in range(K):
                    e = zero
                    for c in range(Kr):
                        e += Q[k, c] * E[c, t]
                    pu[k] = P[i + t, k] * e
                    tot += pu[k]
                for c in range(Kr):
                    sc = zero
                    for k in range(K):
                        sc += Q[k, c] * (pu[k] - P[i + t, k] * tot)
                    S[c, t] = sc
            group_axpys(X, i, m, S, acc)
            i += m

    return {"hvp_multi": hvp_multi}


def _int16_kernels(jit: Any) -> dict[str, Any]:
    """The int16 copy of a float32 design (``fast_int16``): its columns' ranges and sums, then
    the rounded values and their spread, each one read of the rows."""

    @jit
    def column_range(X, a, b, lo, hi, total):  # type: ignore[no-untyped-def]
        """lo/hi: the running min/max of X[a:b]'s columns; total += their sums (float64)."""
        for i in range(a, b):
            x = X[i]
            for j in range(X.shape[1]):
                v = x[j]
                lo[j] = min(lo[j], v)
                hi[j] = max(hi[j], v)
                total[j] += v

    @jit
    def quantise_rows(X, a, b, centre, inverse, mean_q, out, spread):  # type: ignore[no-untyped-def]
        """out[a:b] = round((X[a:b] - centre) * inverse) (int16; within its range by the
        caller's scale); spread[j] += |out[i, j] - mean_q[j]| (float64)."""
        for i in range(a, b):
            x, o = X[i], out[i]
            for j in range(X.shape[1]):
                q = np.rint((x[j] - centre[j]) * inverse[j])
                o[j] = np.int16(q)
                spread[j] += abs(q - mean_q[j])

    return {"column_range": column_range, "quantise_rows": quantise_rows}
