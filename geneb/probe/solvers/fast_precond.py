"""The full-data fit's preconditioner: a Cholesky factor of ``C G + penalty`` per C.

``G = X^T D X`` is the lagged data Hessian (float32 unless its rounding is too coarse);
factoring ``M = C G + penalty`` is the only O(d^3) step of a C. The factorisations are tried
cheapest first (``attempts``), and one that failed is not tried again at a larger C with the
same G, since a failed one costs as much as a good one. Mixed into
:class:`geneb.probe.solvers.fast_full._Problem`, whose attributes it uses (``pen``, ``Kp``,
``rows``, ``gram``, ``gram_dtype``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from geneb.errors import ProbeError
from geneb.probe.solvers import scratch
from geneb.probe.solvers.fast_kron import KroneckerGram, block_solver, class_weights, common_row
from geneb.probe.solvers.fast_passes import KernelPasses
from geneb.probe.solvers.numeric import cholesky_solver

#: The lagged Gram: the (K'p, K'p) upper triangle, or its Kronecker form at a P whose rows
#: are all equal (:mod:`geneb.probe.solvers.fast_kron`).
LaggedGram = np.ndarray | KroneckerGram

#: Preconditioners of at least this side are factored in float32 (see ``precond``).
FLOAT32_FACTOR_MIN = 256
#: The shifted attempts (``attempts``) add this many eps32 of C times G's largest diagonal
#: entry (float32 Grams err by ~1-10 eps32 of it, ``factor``), at most ``SHIFT_MAX`` (ten
#: times the penalty: the Hessian's smallest eigenvalue is at least the penalty's 1).
ROUNDING_SHIFT = 10.0
SHIFT_MAX = 10.0
#: Entries of a float32 multi-class Gram below this fraction of its largest one are set to
#: zero once it is built (``flush_tiny``): far below its rounding (eps32 ~1.2e-7 of the large
#: ones), but their products in the factorisations' updates are subnormal, which the CPU
#: computes ~100x slower. Measured 2026-12-02, 10,000 x 1,025 x 3 classes (side 2,050): half
#: the upper triangle is ~1e-21 (the sum-zero basis' cross block of balanced classes cancels
#: to noise), 96-197 ms per factorisation, 47-48 ms with them zeroed (a random matrix of that
#: side: 57-63 ms). Multi-class fits only: binary ones showed no such entries. Once per Gram,
#: not per factorisation: the scan cost 44 ms at side 2,050, ~0.2 s at 4,097.
FLUSH_BELOW = 1e-15
#: A lagged Gram is scaled by how far the Hessian weights have drifted since it was built
#: (``weight_drift``). Measured 2026-12-02, CG steps of a whole C path (0.01..100), lagged
#: Gram unscaled -> scaled, the same Newton iterations: at GENEB's median MCC 20,000 x 4,097:
#: 115 -> 100; 30,000 x 2,561: 102 -> 88; 100,000 x 1,025: 71 -> 64; 10,000 x 769: 73 -> 67;
#: 3 classes 30,000 x 1,025: 107 -> 110, 10,000 x 1,025: 102 -> 103. Near-separable (the
#: weights collapse along C): 20,000 x 4,097: 265 -> 140 (path 9.0 -> 5.3 s); 100,000 x
#: 1,025: 127 -> 101; 3 classes: 200 -> 178 and 214 -> 175. False: the Gram as built.
SCALE_DRIFT = True


class Preconditioner:
    """``precond``, ``factor`` and their helpers (see the module docstring)."""

    pen: np.ndarray
    Kp: int
    n: int
    multi: bool
    rows: Any
    gram_dtype: type
    X32: np.ndarray
    Q: np.ndarray
    implicit_ones: bool
    kpass: KernelPasses | None

    def _weights(self, P: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def gram(self, P: np.ndarray, dtype: type = np.float32) -> np.ndarray:
        raise NotImplementedError

    def design_gram(self, dtype: type = np.float32) -> np.ndarray:
        raise NotImplementedError

    def lagged_gram(self, P: np.ndarray, dtype: type) -> LaggedGram:
        """The data Hessian at P in ``dtype``: in Kronecker form when every row of P is the
        same (the path's start, ``fast_kron``; binary: ``p (1 - p) X^T X``), else ``gram``
        (its negligible entries flushed when multi-class float32, ``flush_tiny``)."""
        row = common_row(P)
        if row is not None:
            S = (class_weights(row, self.Q) if self.multi
                 else np.array([[row[0] * (1.0 - row[0])]]))
            return KroneckerGram(S, self.design_gram(dtype))
        self.__dict__.pop("_kron_buffers", None)  # the Kronecker factors' (p, p) buffers
        G = self.gram(P, dtype)
        if self.multi and G.dtype == np.float32:
            flush_tiny(G)
        return G

    def precond(self, C: float, G: LaggedGram) -> Callable[[np.ndarray], np.ndarray] | None:
        """``r -> M^{-1} r`` for ``M = C * G + penalty`` (one Cholesky factorisation), or None
        when no factorisation of ``attempts`` works.

        Large ones are factored in float32 (half the time and bytes; on gue_mouse_0 and
        gue_tf_0 exactly the same CG step counts as float64), in float64 when float32 breaks
        down (M too ill-conditioned), when G itself is float64 (see ``factor``) or M is small
        (the factorisation is then cheap, and a float64 one keeps mirror-symmetric problems
        exactly symmetric, so their exact ties stay exact). Only CG's speed depends on it: the
        stopping test is on the float64 gradient.

        An unshifted attempt whose pivot fails goes on with the rounding shift added to the
        rest of the diagonal (``cholesky_solver``'s ``resume_shift``) instead of starting
        again shifted: measured 2026-12-07 (realistic embeddings, GENEB's median MCC), the
        float32 factorisation at C = 10 or 100 failed on every path of width 2,560 and
        4,096 (10,000 x 4,096: 0.15 s of a 3.1 s path spent on the failed one)."""
        rounding = self.rounding_shift(C, G)
        for dtype, shifted in self.attempts(G):
            if shifted and rounding > SHIFT_MAX:
                continue
            if not shifted and self._failed(G, C, dtype):
                continue
            resume = rounding if not shifted and rounding <= SHIFT_MAX else 0.0
            solve = self._factored(C, G, dtype, add=rounding if shifted else 0.0,
                                   resume=resume)
            if solve is not None:
                return solve
            if not shifted:
                self._fails[dtype] = (G, C)
        return None

    def _factored(self, C: float, G: LaggedGram, dtype: type, add: float = 0.0,
                  rel: float = 0.0, resume: float = 0.0
                  ) -> Callable[[np.ndarray], np.ndarray] | None:
        """The float64 solve of ``M = C G + penalty`` factored in ``dtype`` (``add`` and
        ``rel``: ``_precond_matrix``'s shifts; ``resume``: the shift a failed pivot adds to
        the rest of the diagonal before the factorisation goes on, ``cholesky_solver``), or
        None when M does not factor."""
        if isinstance(G, KroneckerGram):
            buffers = self.__dict__.setdefault("_kron_buffers", {}).setdefault(dtype, [])
            return block_solver(G, C, self.pen, dtype, add, rel, buffers,
                                lambda M: _cholesky_or_none(M, self.rows.run, resume))
        M = self._precond_matrix(C, G, dtype, rel)
        if add:
            M[np.diag_indices_from(M)] += dtype(add)
        solve = _cholesky_or_none(M, self.rows.run, resume)
        if solve is None:
            return None
        return _in_float64(solve) if dtype == np.float32 else solve

    def attempts(self, G: LaggedGram) -> list[tuple[type, bool]]:
        """(dtype, shifted) factorisations ``precond`` tries in turn: a float32 G of at least
        ``FLOAT32_FACTOR_MIN`` rows in float32, unshifted then shifted by its rounding
        (``rounding_shift``), then the same in float64; a small one in float64 only; a
        float64 G unshifted (``factor`` damps it further if need be).

        The shift is within G's own error, so the preconditioner is about as good as an
        unshifted one would be; recomputing G in float64 instead costs 2-5 float32 Grams
        (20,000 x 4,097: 3.3-6.7 s against 1.3-1.6 s). float32 first: a float32 factor of
        side 4,097 took 0.29-0.34 s, a float64 one 0.5-0.8 s."""
        if G.dtype != np.float32:
            return [(np.float64, False)]
        side = len(G.A) if isinstance(G, KroneckerGram) else len(G)  # of each factorisation
        if side < FLOAT32_FACTOR_MIN:
            return [(np.float64, False), (np.float64, True)]
        return [(np.float32, False), (np.float32, True), (np.float64, False), (np.float64, True)]

    def _failed(self, G: LaggedGram, C: float, dtype: type) -> bool:
        """Whether the unshifted factorisation in ``dtype`` already failed with this G at a
        C <= ``C``: M grows with C along the path, so it would fail again, and a failed one
        costs as much as a good one (20,000 x 4,097: ~0.3 s in float32, 0.6-0.8 s in
        float64; 30,000 x 2,561 lost 92 ms at C = 100 after C = 10 failed)."""
        seen = self._fails.get(dtype)
        return seen is not None and seen[0] is G and C >= seen[1]

    @property
    def _fails(self) -> dict[type, tuple[LaggedGram, float]]:
        """(G, C) of the last failed unshifted factorisation per dtype (``_failed``)."""
        fails: dict[type, tuple[LaggedGram, float]] = self.__dict__.setdefault("_fail_log", {})
        return fails

    def _precond_matrix(self, C: float, G: np.ndarray, dtype: type,
                        shift: float = 0.0) -> np.ndarray:
        """``C * G + penalty`` (+ ``shift`` on the diagonal, relative to its largest entry) in
        ``dtype``, upper triangle filled."""
        M = self._matrix_buffer(dtype, len(G))
        np.multiply(G, dtype(C), out=M, dtype=dtype)
        M[np.diag_indices_from(M)] += np.tile(self.pen, self.Kp).astype(dtype)
        M[np.diag_indices_from(M)] += dtype(max(1e-10, shift)) * np.abs(np.diag(M)).max()
        return M

    def _matrix_buffer(self, dtype: type, side: int) -> np.ndarray:
        """The one (side, side) preconditioner matrix of ``dtype`` that every factorisation of
        this fit overwrites (the factor of the last one is the only one in use: ``factor``
        returns it and the previous one is dropped). A new array per C cost 20-120 ms of page
        faults at side 4,097 (67 MB), more than half a float32 factorisation. One buffer at a
        time: one of the other dtype is dropped (the fallbacks of ``attempts``)."""
        M: np.ndarray | None = self.__dict__.get("_matrix")
        if M is None or M.dtype != dtype or len(M) != side:
            self.__dict__["_matrix"] = None  # freed before the new one is allocated
            M = self.__dict__["_matrix"] = scratch.empty((side, side), dtype)
        return M

    def rounding_shift(self, C: float, G: LaggedGram) -> float:
        """C times the rounding of a float32 G (``ROUNDING_SHIFT`` eps32 of its largest
        diagonal entry, ``factor``); 0 for a float64 G."""
        if G.dtype != np.float32:
            return 0.0
        eps32 = float(np.finfo(np.float32).eps)
        top = G.diag_max() if isinstance(G, KroneckerGram) else float(np.abs(np.diag(G)).max())
        return ROUNDING_SHIFT * eps32 * C * top

    def factor(self, C: float, P: np.ndarray, G: LaggedGram | None
               ) -> tuple[LaggedGram, Callable[[np.ndarray], np.ndarray]]:
        """The preconditioner at C and the Gram it is built from (``G``, or a new one at P).

        ``M = C G + penalty`` is positive definite in exact arithmetic, but G's rounding errors
        are multiplied by C. In float32 they are ~1-10 eps32 of G's largest diagonal entry
        (measured on k-mer spectra); in a direction the data leave unconstrained (fewer rows
        than features, or collinear features such as k-mer frequencies, which sum to one) only
        the penalty (1) stands against them, so past C ~ 1 / (10 eps32 max G_ii) M is
        indefinite (seen at C = 1000 on 421 x 1024 standardised kmer-5 spectra). Then a
        shift of that size is added (``attempts``) and, when even that does not factor or
        the shift would exceed ``SHIFT_MAX``, the Gram is recomputed in float64 (errors
        ~1e-16 C max G_ii) and kept in float64 for the rest of the path (C only grows along
        it). Should even that not factor (C ~ 1e12), the diagonal is damped by a shift growing
        tenfold (Nocedal & Wright, Alg. 3.3) until it does: the preconditioner only steers CG,
        so the shift costs CG steps, never accuracy.
        """
        scale = 1.0
        if G is None:
            G = self.lagged_gram(P, self.gram_dtype)
        elif SCALE_DRIFT:
            scale = self.weight_drift(P, G)
        solve = self.precond(C * scale, G)
        if solve is None and G.dtype == np.float32:
            self.gram_dtype = np.float64
            G = self.lagged_gram(P, np.float64)
            solve = self.precond(C, G)
        shift = 1e-8
        while solve is None:  # a shift above |M| makes M + shift I well conditioned
            if shift > 1e3:  # only a non-finite G gets here
                raise ProbeError(f"full-data fit at C={C:g}: the data Hessian is not finite "
                                 "(non-finite features or probabilities); nothing was fitted")
            solve = self._factored(C, G, np.float64, rel=shift)
            shift *= 10.0
        return G, solve

    def weight_drift(self, P: np.ndarray, G: LaggedGram) -> float:
        """``tr(X^T D_P X) / tr(G)``: the scalar that matches the lagged Gram G's trace to that
        of the data Hessian at P, whose weights (p (1 - p) when binary) shrink as the fit
        sharpens along C; the preconditioner is then ``C scale G + penalty``. ``tr(X^T D X) =
        sum_i D_i ||x_i||^2`` costs one dot product with the rows' squared norms (``row_sq``,
        one pass per fit). 1 when G has no positive trace."""
        trace = G.trace() if isinstance(G, KroneckerGram) else float(np.trace(G, dtype=np.float64))
        if not trace > 0.0:
            return 1.0
        return float(self._trace_weights(P) @ self.row_sq) / trace

    def _trace_weights(self, P: np.ndarray) -> np.ndarray:
        """Per-row weights of the data Hessian's trace: p (1 - p) (binary), the sum of the
        diagonal blocks' weights (multi-class)."""
        if not self.multi:
            return self._weights(P)
        Q = self.Q
        PQ = P @ Q
        out: np.ndarray = P @ (Q * Q).sum(1) - (PQ * PQ).sum(1)
        return out

    @property
    def row_sq(self) -> np.ndarray:
        """Squared norms of the float32 design's rows (with its column of ones, implicit or
        not) in float64, computed once per fit over fixed row blocks (the same bits for any
        thread count)."""
        sq: np.ndarray | None = self.__dict__.get("_row_sq")
        if sq is None:
            X = self.X32
            if self.kpass is not None and self.kpass.X is X:  # one compiled pass
                parts = [self.kpass.row_squares()]
            else:  # (3-4 ms at 10,000 x 768 against ~0.5 ms compiled)
                parts = self.rows.map(
                    lambda a, b: np.einsum("ij,ij->i", X[a:b], X[a:b], dtype=np.float64))
            sq = self.__dict__["_row_sq"] = np.concatenate(parts) + float(self.implicit_ones)
        return sq


def flush_tiny(G: np.ndarray) -> None:
    """Zero the entries of G below ``FLUSH_BELOW`` of its largest magnitude, in place, in
    row blocks (no G-sized temporary)."""
    rows = range(0, len(G), 256)
    limit = FLUSH_BELOW * max((float(np.abs(G[r:r + 256]).max()) for r in rows), default=0.0)
    for r in rows:
        block = G[r:r + 256]
        block[np.abs(block) < limit] = 0.0


def _in_float64(solve: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """A float32 factor's solve taking and returning float64 vectors."""
    def solve64(r: np.ndarray) -> np.ndarray:
        out: np.ndarray = solve(r.astype(np.float32)).astype(np.float64)
        return out

    return solve64


def _cholesky_or_none(M: np.ndarray, run: Callable[..., Any], resume: float = 0.0
                      ) -> Callable[[np.ndarray], np.ndarray] | None:
    """``cholesky_solver(M)`` (``resume``: its ``resume_shift``), or None when M is not
    positive definite even so (the factorisation is the test)."""
    try:
        return cholesky_solver(M, run, resume_shift=resume)
    except np.linalg.LinAlgError:
        return None
