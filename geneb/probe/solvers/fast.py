"""``fast``: the CPU default backend. Same optimum as scikit-learn, far fewer seconds.

- Few-shot fits (few rows, n < d): the optimal weights lie in the span of the fit's own
  (standardised) train rows, so a thin SVD ``X = U S V^T`` turns each fit into an exact
  problem on ``r <= n`` features ``U S`` with the same penalty (V is orthonormal) and the
  intercept kept separate. All such fits of a batch (every regime, seed and C) are padded
  into one array and solved by ONE batched Newton solve (``batched_newton``).
- Full-data fits: identical ones (same rows, same C; e.g. one per seed) are solved once;
  each distinct row set is solved along its ascending C path with warm starts by a
  preconditioned inexact Newton method whose only O(n d^2) step runs in float32
  (``fast_full``); gradients and the stopping test are float64.
- Threads: BLAS is pinned to one thread (threadpoolctl) for everything here. A full-data fit
  spreads its own fixed row blocks and Gram panels over ``fit_threads`` Python threads (or
  ``blas_threads`` / ``$GENEB_BLAS_THREADS`` when larger) and adds the partial sums in block
  order, so the answer has the same bits for any thread count (OpenBLAS's threads change the
  last bits, and their busy-waiting made a full fit 3.5x slower on two shared cores). The
  engine gives ``fit_threads`` the run's cores when it solves in-process, and one in a Dask
  worker (parallelism across pairs (model, task) instead), so workers never oversubscribe.

Every fit reports Newton iterations and whether max |grad| of sklearn's scaled objective
reached ``problem.tol``; a fit that did not is returned with ``converged=False``.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb._threads import thread_limit
from geneb.errors import ProbeError
from geneb.probe.preprocess import Standardizer
from geneb.probe.solvers.base import FitResult, ProbeFit, ProbeProblem, check_problem, second_order
from geneb.probe.solvers.batched_newton import NumpyOps, batched_newton
from geneb.probe.solvers.fast_full import solve_path
from geneb.probe.solvers.fast_passes import use_kernels
from geneb.probe.solvers.fast_path import PathFit
from geneb.probe.solvers.fast_predict import TestRows
from geneb.probe.solvers.fast_rowspace import solve_path_row_space, use_row_space
from geneb.probe.solvers.numeric import expit, softmax
from geneb.probe.solvers.row_blocks import RowBlocks

#: A fit is solved in the reduced (row-space) form when it has at most this many train rows
#: and fewer rows than features; larger fits go through the full-data path.
FEW_SHOT_MAX_ROWS = 256
#: Array elements per batched Newton chunk (~160 MB of float64 Hessians and intermediates).
FEW_SHOT_CHUNK_ELEMS = 2e7


def _rows_key(idx: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(idx, dtype=np.int64).tobytes(),
                           digest_size=16).digest()


def full_fit_blas_threads(explicit: int | None = None) -> int | None:
    """Threads asked for full-data fits: ``explicit``, else ``$GENEB_BLAS_THREADS``, else None
    (the fit's own blocked threads are used; BLAS stays single-threaded)."""
    if explicit is not None:
        if explicit < 1:
            raise ProbeError(f"blas_threads must be >= 1, got {explicit}")
        return explicit
    env = os.environ.get("GENEB_BLAS_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ProbeError(f"GENEB_BLAS_THREADS must be an integer, got {env!r}") from None
    return None


#: Relative size below which a logit (binary) or a gap to the top logit (multi-class) is a tie.
#: Exact ties are common (1-shot standardised k-mer spectra: a test row sharing no k-mer with
#: either train row has a logit exactly equal to a zero intercept) and would otherwise be
#: decided by rounding noise (~1e-16 relative here); snapped to exact ties, every backend
#: breaks them the same way (argmax: lowest class). Real small logits on gue_mouse_0 sit at
#: 1e-9 relative and above, so 1e-11 separates the two.
TIE_RTOL = 1e-11


def snap_ties(logits: np.ndarray, magnitude: np.ndarray) -> np.ndarray:
    """Set logits (binary) or logit gaps to the max (multi-class) below ``TIE_RTOL`` times
    ``magnitude`` (a bound on the summed |terms|: ``|X| @ |W|^T + |b|``) to exact ties."""
    thr = TIE_RTOL * magnitude
    if logits.shape[-1] == 1:
        return np.where(np.abs(logits) <= thr, 0.0, logits)
    top = logits.max(axis=-1, keepdims=True)
    gap = top - logits
    return np.where(gap <= thr.max(axis=-1, keepdims=True), top, logits)


def proba_from_logits(logits: np.ndarray, multi: bool,
                      magnitude: np.ndarray | None = None) -> np.ndarray:
    """(..., n, K') logits -> (..., n, K) probabilities (binary: [1 - p, p])."""
    if magnitude is not None:
        logits = snap_ties(logits, magnitude)
    if multi:
        return softmax(logits, axis=-1)
    p1 = expit(logits[..., 0])
    return np.stack([1.0 - p1, p1], axis=-1)


class FastBackend:
    """Batched exact few-shot solves + warm-started full-data paths; see the module docstring."""

    name = "fast"
    precision = "float64"  # gradients and the stopping test; float32 only steers steps

    def __init__(self, blas_threads: int | None = None, few_shot_max_rows: int = FEW_SHOT_MAX_ROWS,
                 fit_threads: int | None = None, **_: Any) -> None:
        self.blas_threads = blas_threads
        #: Cores for a full-data fit's bit-reproducible parallel steps (see ``_fit_threads``;
        #: None: one). The engine sets it to the cores a run was given when it solves
        #: in-process, never in a one-thread Dask worker.
        self.fit_threads = fit_threads
        self.few_shot_max_rows = few_shot_max_rows
        self.ops: Any = NumpyOps()

    # --- public -------------------------------------------------------------------------
    def solve(self, problem: ProbeProblem, fits: Sequence[ProbeFit]) -> list[FitResult]:
        """Solve every fit; identical fits (same rows and C) are solved once and shared."""
        check_problem(problem, fits)
        d = problem.X_train.shape[1]
        uniq: dict[tuple[bytes, float], ProbeFit] = {}
        fit_keys = []
        for c in fits:
            key = (_rows_key(c.train_idx), float(c.C))
            uniq.setdefault(key, c)
            fit_keys.append(key)
        rows_w = problem.n_classes - 1 if problem.n_classes > 2 else 1  # weight rows solved
        few = [k for k, c in uniq.items()
               if len(c.train_idx) <= min(self.few_shot_max_rows, d - 1)
               and second_order(len(c.train_idx), rows_w)]  # row space: <= n features
        few_set = set(few)
        full = [k for k in uniq if k not in few_set]
        solved: dict[tuple[bytes, float], FitResult] = {}
        if few:
            with thread_limit(1):
                solved.update(self._solve_few(problem, {k: uniq[k] for k in few}))
        groups: dict[bytes, list[float]] = {}
        for rk, C in full:
            groups.setdefault(rk, []).append(C)
        for rk, Cs in groups.items():
            idx = next(uniq[(rk, C)].train_idx for C in Cs)
            # BLAS single-threaded; the fit spreads its own fixed blocks over _fit_threads()
            solve_full = self._solve_full if second_order(d, rows_w) else self._solve_large
            with thread_limit(1):
                path_fits = (self._solve_reduced(problem, idx, sorted(Cs), rows_w)
                             or solve_full(problem, idx, sorted(Cs)))
                for C, fit in zip(sorted(Cs), path_fits, strict=True):
                    solved[(rk, C)] = fit
        return [solved[k] for k in fit_keys]

    # --- few-shot: row-space reduction + one batched Newton solve -----------------------
    def _solve_few(self, problem: ProbeProblem, fits: dict[Any, ProbeFit]
                   ) -> dict[Any, FitResult]:
        t0 = time.perf_counter()
        ops = self.ops
        keys = list(fits)
        K = problem.n_classes
        multi = K > 2
        Kp = K if multi else 1
        B = len(keys)
        d = problem.X_train.shape[1]
        ns = np.array([len(fits[k].train_idx) for k in keys])
        n_max = int(ns.max())
        means, scales, U_all, S_all, Vt_all = self._few_bases(problem, fits, keys, ns)
        S_np = [ops.to_numpy(s) for s in S_all]
        ranks = np.array([max(1, int((s > s[0] * max(n, d) * np.finfo(float).eps).sum()))
                          if s[0] > 0 else 1 for s, n in zip(S_np, ns, strict=True)])
        r_max = int(ranks.max())
        p = r_max + 1
        Za = ops.zeros((B, n_max, p))
        Vt_pad = ops.zeros((B, r_max, d))
        Yoh = np.zeros((B, n_max, Kp))
        for b, k in enumerate(keys):
            n, r = int(ns[b]), int(ranks[b])
            Za[b, :n, :r] = U_all[b][:, :r] * S_all[b][:r]
            Za[b, :n, -1] = 1.0
            Vt_pad[b, :r] = Vt_all[b][:r]
            yb = problem.y_train[fits[k].train_idx]
            if multi:
                Yoh[b, np.arange(n), yb] = 1.0
            else:
                Yoh[b, :n, 0] = yb
        Y = ops.asarray(Yoh)
        swn = (np.arange(n_max)[None, :] < ns[:, None]).astype(np.float64)
        sw = ops.asarray(swn)
        Cv = ops.asarray(np.array([fits[k].C for k in keys], dtype=np.float64))
        pen_np = np.ones((B, p))
        pen_np[:, -1] = 0.0
        pen = ops.asarray(pen_np)
        # chunks bound the memory of the stacked Hessians (B x (K'p)^2) and their einsum
        per = (Kp * p) ** 2 + n_max * Kp * Kp * p
        step = max(1, int(FEW_SHOT_CHUNK_ELEMS // per))
        parts = [batched_newton(ops, Za[a:a + step], Y[a:a + step], sw[a:a + step],
                                Cv[a:a + step], pen[a:a + step], multi=multi, tol=problem.tol,
                                max_iter=problem.max_iter, norm="l2")
                 for a in range(0, B, step)]
        theta = parts[0].theta if len(parts) == 1 else ops.cat([r.theta for r in parts])
        n_iter = np.concatenate([r.n_iter for r in parts])
        converged = np.concatenate([r.converged for r in parts])
        proba = _few_proba(ops, problem, theta, Vt_pad, r_max, means, scales, multi)
        per_fit = (time.perf_counter() - t0) / B
        return {k: FitResult(proba=proba[b], n_iter=int(n_iter[b]),
                             converged=bool(converged[b]), fit_seconds=per_fit)
                for b, k in enumerate(keys)}

    def _few_bases(
        self, problem: ProbeProblem, fits: dict[Any, ProbeFit], keys: list[Any], ns: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, list[Any], list[Any], list[Any]]:
        """Per fit: the standardisation (means, scales) and thin SVD (U, S, Vt) of its rows.

        Each distinct row set is standardised on its own rows and decomposed once (SVDs
        batched per row count), shared by its fits of every C (same matrix, same bits)."""
        ops = self.ops
        B = len(keys)
        d = problem.X_train.shape[1]
        means = np.zeros((B, d))
        scales = np.ones((B, d))
        rows_of = [k[0] for k in keys]
        first: dict[bytes, int] = {}
        for b, rk in enumerate(rows_of):
            first.setdefault(rk, b)
        uniq_b = list(first.values())
        Xs: dict[int, np.ndarray] = {}
        for b in uniq_b:
            Xc = problem.X_train[fits[keys[b]].train_idx]
            if problem.standardize:
                st = Standardizer.fit(Xc)
                means[b], scales[b] = st.mean, st.scale
                Xs[b] = st.transform(Xc, np.float64)
            else:
                Xs[b] = Xc.astype(np.float64)
        U_all, S_all, Vt_all = [None] * B, [None] * B, [None] * B
        ns_u = ns[uniq_b]
        for n in np.unique(ns_u):
            sel = [uniq_b[j] for j in np.flatnonzero(ns_u == n)]
            U, S, Vt = ops.svd(ops.asarray(np.stack([Xs[b] for b in sel])))
            for j, b in enumerate(sel):
                U_all[b], S_all[b], Vt_all[b] = U[j], S[j], Vt[j]
        for b, rk in enumerate(rows_of):
            b0 = first[rk]
            if b0 != b:
                means[b], scales[b] = means[b0], scales[b0]
                U_all[b], S_all[b], Vt_all[b] = U_all[b0], S_all[b0], Vt_all[b0]
        return means, scales, U_all, S_all, Vt_all

    # --- full data: warm-started C path -------------------------------------------------
    def _fit_threads(self) -> int:
        """Cores for a full-data fit: the larger of ``fit_threads`` and an explicit
        ``blas_threads`` / ``$GENEB_BLAS_THREADS``; one when neither is given."""
        return max(self.fit_threads or 1, full_fit_blas_threads(self.blas_threads) or 1)

    def _design(self, problem: ProbeProblem, idx: np.ndarray, float64: bool = True,
                test64: bool = True, float32: bool = True) -> tuple[np.ndarray, np.ndarray, Any]:
        """Float64 and float32 designs (features, then ones) of the rows, and the float64
        test features. ``float64=False`` (unstandardised float32 features only, where the
        float64 design equals the float32 one): an empty (0, 0) float64 design, the solver
        upcasts the float32 one's row blocks (a third of the memory of holding both).
        ``test64=False``: the test features as ``TestRows`` (float64 block by block) instead
        of a float64 copy. ``float32=False``: an empty (0, 0) float32 design.

        Written in place (no hstack copy of a large matrix), in column slabs spread over the
        fit's threads: every column is standardised on its own (numpy reduces a C-ordered
        matrix over axis 0 row after row, for a column slab as for the whole), so the values
        are bitwise those of ``Standardizer.transform`` for any number of slabs.
        """
        X = _train_rows(problem, idx)
        n, d = X.shape
        Xa = np.empty((n, d + 1) if float64 else (0, 0))
        Xa32 = np.empty((n, d + 1) if float32 else (0, 0), dtype=np.float32)
        threads = self._fit_threads()
        edges = [d * i // threads for i in range(threads + 1)]
        slabs = [(c0, c1) for c0, c1 in zip(edges[:-1], edges[1:], strict=True) if c1 > c0]

        def slab(c0: int, c1: int) -> Standardizer | None:
            st = None
            if problem.standardize:
                st = Standardizer.fit_transform_into(X[:, c0:c1], Xa[:, c0:c1])
            elif not float64:
                Xa32[:, c0:c1] = X[:, c0:c1]
                return st
            else:
                Xa[:, c0:c1] = X[:, c0:c1]
            if float32:
                Xa32[:, c0:c1] = Xa[:, c0:c1]
            return st

        runner = RowBlocks(0, threads)  # only its thread pool: the tasks are column slabs
        try:
            parts = runner.run(slab, slabs)
        finally:
            runner.close()
        Xa[:, -1:] = 1.0
        Xa32[:, -1:] = 1.0
        st = None
        if problem.standardize:
            st = Standardizer(mean=np.concatenate([s.mean for s in parts]),
                              scale=np.concatenate([s.scale for s in parts]))
        if not test64:
            return Xa, Xa32, TestRows(problem.X_test, st)
        Xt = (st.transform(problem.X_test, np.float64) if st is not None
              else problem.X_test.astype(np.float64))
        return Xa, Xa32, Xt

    def _solve_full(self, problem: ProbeProblem, idx: np.ndarray, Cs: list[float]
                    ) -> list[FitResult]:
        t0 = time.perf_counter()
        exact32 = not problem.standardize and problem.X_train.dtype == np.float32
        implicit = exact32 and use_kernels(len(idx), problem.X_train.shape[1] + 1)
        if implicit:  # the features themselves, no copy with a column of ones
            Xa, Xt = None, TestRows(problem.X_test, None)
            Xa32 = _train_rows(problem, idx)
        else:
            Xa, Xa32, Xt = self._design(problem, idx, float64=not exact32, test64=False)
        prep = time.perf_counter() - t0
        path = solve_path(None if exact32 else Xa, Xa32, problem.y_train[idx], problem.n_classes,
                          Cs, tol=problem.tol, max_iter=problem.max_iter,
                          threads=self._fit_threads(), implicit_ones=implicit)
        return self._path_fits(path, Xt, problem.n_classes > 2, prep)

    def _solve_reduced(self, problem: ProbeProblem, idx: np.ndarray, Cs: list[float],
                       rows_w: int) -> list[FitResult]:
        """Fewer rows than features: the path in their row space (``fast_rowspace``); []
        where that does not apply or its exact check failed (the primal path then runs)."""
        n, t0 = len(idx), time.perf_counter()
        if not use_row_space(n, problem.X_train.shape[1], rows_w):
            return []
        if not problem.standardize and problem.X_train.dtype == np.float32:  # exact values
            X, Xt = _train_rows(problem, idx), TestRows(problem.X_test, None)
        else:
            Xa, _, Xt = self._design(problem, idx, test64=False, float32=False)
            X = Xa[:, :-1]
        path = solve_path_row_space(X, problem.y_train[idx], problem.n_classes, Cs,
                                    tol=problem.tol, max_iter=problem.max_iter,
                                    threads=self._fit_threads())
        prep = time.perf_counter() - t0 - sum(f.seconds for f in path or [])
        return [] if path is None else self._path_fits(path, Xt, problem.n_classes > 2, prep)

    def _solve_large(self, problem: ProbeProblem, idx: np.ndarray, Cs: list[float]
                     ) -> list[FitResult]:
        """Fits with more coefficients than a Hessian may have (``second_order``): L-BFGS
        along the C path (``fast_lbfgs``), memory linear in the coefficients."""
        from geneb.probe.solvers.fast_lbfgs import solve_path_lbfgs

        t0 = time.perf_counter()
        Xa, _, Xt = self._design(problem, idx, test64=False)
        prep = time.perf_counter() - t0
        path = solve_path_lbfgs(Xa, problem.y_train[idx], problem.n_classes, Cs,
                                tol=problem.tol, max_iter=problem.max_iter,
                                threads=self._fit_threads())
        return self._path_fits(path, Xt, problem.n_classes > 2, prep)

    @staticmethod
    def _path_fits(path: list[PathFit], Xt: np.ndarray | TestRows, multi: bool, prep: float
                   ) -> list[FitResult]:
        """Test probabilities of each fit of a C path (``prep``: design seconds, shared),
        over blocks of test rows (``TestRows``: no float64 copy of the whole test set)."""
        if not path:
            return []
        rows = Xt if isinstance(Xt, TestRows) else TestRows(Xt, None)
        Kp = path[0].theta.shape[0]  # every fit's weight rows side by side: one product
        logits, mags = rows.products(np.concatenate([pf.theta[:, :-1] for pf in path]).T)
        out = []
        for i, pf in enumerate(path):
            b, cols = pf.theta[:, -1], slice(i * Kp, (i + 1) * Kp)
            out.append(FitResult(proba=proba_from_logits(logits[:, cols] + b, multi,
                                                         mags[:, cols] + np.abs(b)),
                                 n_iter=pf.n_iter, converged=pf.converged,
                                 fit_seconds=pf.seconds + prep / len(path)))
        return out


def _train_rows(problem: ProbeProblem, idx: np.ndarray) -> np.ndarray:
    """The train features of rows ``idx``: ``X_train`` itself (no copy) when idx is every row
    in order, else the selected rows."""
    n_all = len(problem.X_train)
    every_row = len(idx) == n_all and bool((idx == np.arange(n_all)).all())
    return problem.X_train if every_row else problem.X_train[idx]


def _few_proba(ops: Any, problem: ProbeProblem, theta: Any, Vt_pad: Any, r_max: int,
               means: np.ndarray, scales: np.ndarray, multi: bool) -> np.ndarray:
    """Test-set probabilities of the B few-shot fits: solved coefficients mapped back from
    the SVD basis to raw features (ties snapped, see ``proba_from_logits``), over blocks of
    test rows (``TestRows``)."""
    W_std = ops.to_numpy(ops.einsum("bkr,brd->bkd", theta[..., :r_max], Vt_pad))
    bias = ops.to_numpy(theta[..., -1])  # (B, K')
    W_raw = W_std / scales[:, None, :]
    b_raw = bias - (W_raw * means[:, None, :]).sum(-1)
    B, Kp, d = W_raw.shape
    logits, mag = TestRows(problem.X_test, None).products(W_raw.reshape(B * Kp, d).T)
    mag_b = np.abs(bias) + (np.abs(W_raw) * np.abs(means)[:, None, :]).sum(-1)  # (B, K')
    return proba_from_logits(logits.reshape(-1, B, Kp).transpose(1, 0, 2) + b_raw[:, None, :],
                             multi, mag.reshape(-1, B, Kp).transpose(1, 0, 2) + mag_b[:, None, :])
