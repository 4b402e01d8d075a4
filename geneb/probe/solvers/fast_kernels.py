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
    intercept's: ``dots``, ``axpys``; no copy of a float32 design to append it); rows go in
    groups of ``GROUP`` (the row dot products of a group share each read of the direction, the
    group's updates of the accumulators share each read and write of them: measured 1.4-1.8x
    faster than row by row, whose loops LLVM did not vectorise), the last ``(b - a) % GROUP``
    rows one at a time."""
    import numba

    jit = numba.njit(nogil=True, cache=True, fastmath=FASTMATH)

    @jit
    def dots(X, i, m, w, out, zero=0.0):  # type: ignore[no-untyped-def]
        """out[t] = X[i + t] . w for t < m (m = GROUP, or 1 for a remainder row), summed in
        the type of ``zero`` (float64; ``np.float32(0)``: twice the lanes, no widening). A
        w one longer than X's rows: X's implicit last column of ones (``implicit_ones``)."""
        d = X.shape[1]
        if m == 4:
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
            out[0], out[1], out[2], out[3] = e0, e1, e2, e3
        else:
            x0 = X[i]
            e0 = zero
            for j in range(d):
                e0 += x0[j] * w[j]
            if w.shape[0] > d:
                e0 += w[d]
            out[0] = e0

    @jit
    def axpys(X, i, m, r, acc):  # type: ignore[no-untyped-def]
        """acc += sum_t r[t] X[i + t] for t < m (an acc one longer than X's rows: X's
        implicit last column of ones, like ``dots``)."""
        d = X.shape[1]
        if m == 4:
            x0, x1, x2, x3 = X[i], X[i + 1], X[i + 2], X[i + 3]
            r0, r1, r2, r3 = r[0], r[1], r[2], r[3]
            for j in range(d):
                acc[j] += (x0[j] * r0 + x1[j] * r1) + (x2[j] * r2 + x3[j] * r3)
            if acc.shape[0] > d:
                acc[d] += (r0 + r1) + (r2 + r3)
        else:
            x0 = X[i]
            r0 = r[0]
            for j in range(d):
                acc[j] += x0[j] * r0
            if acc.shape[0] > d:
                acc[d] += r0

    @jit
    def groups(a, b):  # type: ignore[no-untyped-def]
        """(start, rows) of the groups of rows a..b: groups of 4, then single rows."""
        out = []
        full = a + (b - a) // 4 * 4
        for i in range(a, full, 4):
            out.append((i, 4))
        for i in range(full, b):
            out.append((i, 1))
        return out

    @jit
    def log1pexp(e):  # type: ignore[no-untyped-def]
        return max(e, 0.0) + np.log1p(np.exp(-abs(e)))

    @jit
    def expit(e):  # type: ignore[no-untyped-def]
        if e >= 0.0:
            return 1.0 / (1.0 + np.exp(-e))
        z = np.exp(e)
        return z / (1.0 + z)

    @jit
    def fused_binary(X, a, b, w, base, has_base, y, eta_d, eta, P, acc):  # type: ignore[no-untyped-def]
        """Rows a..b: eta_d = X w, eta = base + eta_d (eta_d when not has_base), P, and
        acc += X^T (P - y). Returns the rows' summed log-loss."""
        loss = 0.0
        e = np.empty(4)
        r = np.empty(4)
        for i, m in groups(a, b):
            dots(X, i, m, w, e)
            for t in range(m):
                k = i + t
                eta_d[k] = e[t]
                v = e[t] + base[k] if has_base else e[t]
                eta[k] = v
                loss += log1pexp(v) - y[k] * v
                P[k] = expit(v)
                r[t] = P[k] - y[k]
            axpys(X, i, m, r, acc)
        return loss

    @jit
    def xtr_binary(X, a, b, R, acc):  # type: ignore[no-untyped-def]
        """acc += X[a:b]^T R[a:b]."""
        r = np.empty(4)
        for i, m in groups(a, b):
            for t in range(m):
                r[t] = R[i + t]
            axpys(X, i, m, r, acc)

    @jit
    def hvp_binary(X, a, b, v, D, acc, zero=0.0):  # type: ignore[no-untyped-def]
        """acc += X[a:b]^T (D[a:b] * X[a:b] v), summed in the type of ``zero`` (``dots``)."""
        e = np.full(4, zero)
        for i, m in groups(a, b):
            dots(X, i, m, v, e, zero)
            for t in range(m):
                e[t] *= D[i + t]
            axpys(X, i, m, e, acc)

    @jit
    def eta_rows(X, a, b, W, out):  # type: ignore[no-untyped-def]
        """out[a:b] = X[a:b] W^T (W (K, p), out (n, K))."""
        e = np.empty(4)
        for i, m in groups(a, b):
            for k in range(W.shape[0]):
                dots(X, i, m, W[k], e)
                for t in range(m):
                    out[i + t, k] = e[t]

    @jit
    def fused_multi(X, a, b, W, base, has_base, Y, eta_d, eta, P, acc):  # type: ignore[no-untyped-def]
        """Multi-class ``fused_binary``: W (K, p); eta_d, eta, P, Y (n, K); acc (K, p)."""
        K = W.shape[0]
        loss = 0.0
        E = np.empty((K, 4))
        R = np.empty((K, 4))
        for i, m in groups(a, b):
            for k in range(K):
                dots(X, i, m, W[k], E[k])
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
            for k in range(K):
                axpys(X, i, m, R[k], acc[k])
        return loss

    @jit
    def xtr_multi(X, a, b, Rn, acc):  # type: ignore[no-untyped-def]
        """acc (K, p) += (X[a:b]^T Rn[a:b])^T, Rn (n, K)."""
        K = Rn.shape[1]
        R = np.empty((K, 4))
        for i, m in groups(a, b):
            for k in range(K):
                for t in range(m):
                    R[k, t] = Rn[i + t, k]
                axpys(X, i, m, R[k], acc[k])

    @jit
    def hvp_multi(X, a, b, W, P, acc, zero=0.0):  # type: ignore[no-untyped-def]
        """acc (K, p) += X^T s, pu = P * (X W^T), s = pu - P * rowsum(pu), rows a..b, summed
        in the type of ``zero`` (``dots``)."""
        K = W.shape[0]
        E = np.full((K, 4), zero)
        for i, m in groups(a, b):
            for k in range(K):
                dots(X, i, m, W[k], E[k], zero)
            for t in range(m):
                tot = zero
                for k in range(K):
                    E[k, t] *= P[i + t, k]
                    tot += E[k, t]
                for k in range(K):
                    E[k, t] -= P[i + t, k] * tot
            for k in range(K):
                axpys(X, i, m, E[k], acc[k])

    return {"fused_binary": fused_binary, "xtr_binary": xtr_binary, "eta_rows": eta_rows,
            "hvp_binary": hvp_binary, "fused_multi": fused_multi, "xtr_multi": xtr_multi,
            "hvp_multi": hvp_multi}
