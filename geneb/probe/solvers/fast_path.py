"""The C path of a full-data fit: inexact Newton at each C, warm starts, a lagged Gram.

Drives a problem of :mod:`geneb.probe.solvers.fast_full` (loss, gradient, Hessian products,
the Gram preconditioner) along the ascending C values:

* each C (up to ``CONTINUATION_MAX_C``) starts from the previous solution moved along the
  path's tangent (first-order continuation: ``d theta / d log C = H^{-1} (penalty * theta)``
  at the previous optimum, one preconditioned CG solve), kept only when it lowers the new
  C's objective below the plain warm start's;
* each Newton system ``H delta = -g`` is solved by CG, to a relative residual set by the
  forcing term (``FORCING_EXPONENT``) and by what the stopping test needs
  (``TARGET_FORCING``), preconditioned with the Cholesky factor of the lagged Gram scaled to
  the current weights (``fast_precond.SCALE_DRIFT``); the Gram is rebuilt only when a solve
  needed more than ``STALE_CG`` steps AND the CG steps since it was built cost as much as a
  new one (``GRAM_COST_DIVISOR``, ``KERNEL_GRAM_STEPS``) AND the rest of the path can
  repay it (``SYSTEMS_PER_C``);
* an Armijo backtracking line search on the float64 objective; the stopping test is sklearn's
  (max |gradient| / (C n) <= tol), in float64.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from geneb.probe.solvers.numeric import pcg

#: CG steps of one Newton system above which the lagged Gram counts as stale ...
STALE_CG = 5
#: ... and is rebuilt once the CG steps since it was built cost as much as a new one: a Gram
#: of p columns (K' weight rows: K'^2 blocks) costs about ``K'^2 p / GRAM_COST_DIVISOR``
#: Hessian-vector products (each two float32 passes over X) while the float32 design fits in
#: ``CACHE_BYTES`` (measured 2026-12-01: 10,000 x 769, 0.40 s per Gram, 3.6 ms per product,
#: ~110 products), ``DRAM_SLOWDOWN`` times fewer beyond (passes then run at memory speed).
#: Kept at 10 with the chunked Gram (``fast_gram``, 2026-12-02), from counts (Grams / products,
#: the same Newton iterations either way): 30,000 x 1,025: 4 / 73 at 10, 3 / 87 at 5 (about
#: the same cost); 30,000 x 2,561: 4 / 111 at 10, 3 / 163 at 5 (5 measured 6.62x the limit
#: against 5.74x for the former solver in one process), 2 / 383 at 2.5.
#: Counted in steps, never seconds: the iterates (and bits) do not depend on the machine's
#: load. ``inf``: the former rule (rebuild after any solve of more than ``STALE_CG`` steps).
GRAM_COST_DIVISOR = 8.0
CACHE_BYTES = 32 * 2**20
DRAM_SLOWDOWN = 10.0
#: With the compiled passes (``fast_passes``) a Gram and its factorisation cost
#: ``K'^2 p / KERNEL_GRAM_STEPS + (K' p)^2 / (KERNEL_FACTOR_STEPS n)`` products: a product
#: reads the design ~1.3-1.5 times (float32 products), a Gram runs at ~230 G multiply-adds/s
#: against ~4-6e9 design values per second for a product, a float64 Cholesky of side m at
#: ~35 G/s. The Gram term's divisor was chosen from whole paths (2026-12-02, realistic
#: embeddings at GENEB's median MCC, path / limit at 25 / 40 / 55): 30,000 x 2,561: 2.71 (1
#: Gram) / 3.80 (2) / 3.68 (2); 30,000 x 1,025 x 3: 2.95 / 2.93 / 3.03; near-separable
#: 100,000 x 1,025: 3.75 / 3.45 / 4.04.
KERNEL_GRAM_STEPS = 25.0
KERNEL_FACTOR_STEPS = 25.0
#: ... and only when it can still pay for itself on what is left of the path: the last
#: solve's CG steps times the Newton systems still to come (``SYSTEMS_LEFT_IN_C`` in this C,
#: ``SYSTEMS_PER_C`` per later C: 3 Newton systems and the tangent's at GENEB's median MCC)
#: must reach the Gram's cost. Measured 2026-12-02, 100,000 x 1,025 at GENEB's median MCC:
#: the Gram was rebuilt after the first system of C = 100 (6 CG steps) for one more system
#: of 1 step: 0.63 s (a Gram) to save 5 products (~55 ms).
SYSTEMS_LEFT_IN_C = 2
SYSTEMS_PER_C = 4
#: First-order continuation along C (False: plain warm starts from the previous C), up to
#: this C: beyond it (outside GENEB's sweep 0.01..100) the optimum is flat in some directions
#: and the gradient test loose, and on 421 x 1,024 standardised kmer-5 a continued path
#: stopped at C = 1e6 with an objective 7e-5 above scikit-learn's (plain warm starts: below).
CONTINUATION = True
CONTINUATION_MAX_C = 1e4
#: Relative CG tolerance of the tangent solve (it only moves a starting point). Measured
#: 2026-12-02, Hessian products of whole C paths at 1e-2 / 0.1 / 0.3 (Newton iterations the
#: same or one fewer): GENEB's median MCC 10,000 x 769: 56 / 52 / 50; 20,000 x 4,097: 101 /
#: 90 / 84; 100,000 x 1,025: 55 / 52 / 52; 30,000 x 2,561: 82 / 77 / 76; 3 classes 10,000 x
#: 1,025: 107 / 101 / 100, 30,000 x 1,025: 114 / 109 / 104; p90 20,000 x 4,097: 130 / - /
#: 112; near-separable 20,000 x 4,097: 121 / - / 112, 3 classes 30,000 x 1,025: 168 / - /
#: 151. 0.5 was no better than 0.3.
TANGENT_RTOL = 0.3
#: Newton systems are solved to a relative residual ``min(0.1, gnorm ** FORCING_EXPONENT)``
#: (Eisenstat-Walker style forcing: superlinear convergence for exponent 0.5).
FORCING_EXPONENT = 0.5
#: ... but never tighter than ``TARGET_FORCING * tol / gnorm``: a residual that small already
#: takes the gradient past the stopping test in one step, so near the optimum the system is
#: not solved further than the test needs (0: the forcing term alone). Measured 2026-12-02,
#: CG steps of whole C paths at 0 / 0.1 / 0.3 / 1.0 (the same Newton iterations throughout):
#: 20,000 x 4,097: 100 / 90 / 86 / 85; 30,000 x 2,561: 88 / 86 / 85 / 78; 100,000 x 1,025:
#: 64 / 60 / 58 / 58; 3 classes 30,000 x 1,025 (their Gram then unscaled): 113 / 107 / 105 /
#: 101. 0.3, not 1.0: a step that misses the test costs a whole Newton iteration (a pass and
#: a CG solve, 10-20 products), and 0.3 -> 1.0 saved 0-7 products per path.
TARGET_FORCING = 0.3


@dataclass(frozen=True, eq=False)
class PathFit:
    """One C of the path: coefficients (K', p) with the intercept last, and how it went."""

    C: float
    theta: np.ndarray
    n_iter: int
    converged: bool
    grad_norm: float
    seconds: float


class _Lagged:
    """The lagged Gram, its factor at the current C, and the CG steps since it was built."""

    def __init__(self, prob: Any) -> None:
        self.prob = prob
        self.G: np.ndarray | None = None
        self.cho: Any = None
        self.cg_since = 0
        self.stale = False
        #: Cs of the path after the current one (``run_path`` sets it)
        self.cs_after = 0
        if getattr(prob, "kpass", None) is not None:
            side = prob.Kp * prob.p  # the Hessian's: its Cholesky is redone with each Gram
            self.gram_cost = (prob.Kp**2 * prob.p / KERNEL_GRAM_STEPS
                              + side**2 / (KERNEL_FACTOR_STEPS * prob.n))
        else:
            slow = DRAM_SLOWDOWN if prob.n * prob.p * 4 > CACHE_BYTES else 1.0
            self.gram_cost = prob.Kp**2 * prob.p / (GRAM_COST_DIVISOR * slow)

    def solve(self, C: float, P: np.ndarray, g: np.ndarray, rtol: float,
              reuse_stale: bool = False) -> np.ndarray:
        """CG for ``H delta = -g`` at (C, P), (re)factoring first when needed. A Gram found
        stale is rebuilt before the next Newton system, but ``reuse_stale`` (the tangent
        solve, which only moves a starting point) still uses it: dropping the tangent when
        the last system of a C flagged the Gram stale cost 2-3 more Newton iterations at the
        next C (100,000 x 1,024: 6, 3, 3, 5, 5 instead of 6, 3, 3, 3, 2)."""
        if self.stale and not reuse_stale:
            self.G, self.cho, self.stale = None, None, False
        if self.G is None or self.cho is None:
            self.cg_since = 0 if self.G is None else self.cg_since
            self.G, self.cho = self.prob.factor(C, P, self.G)
        delta, ncg = pcg(partial(self.prob.hvp, C, P), g, self.cho, rtol)
        self.cg_since += ncg
        systems_left = SYSTEMS_LEFT_IN_C + SYSTEMS_PER_C * self.cs_after
        if (ncg > STALE_CG and self.cg_since >= self.gram_cost
                and ncg * systems_left >= self.gram_cost):
            self.stale = True  # the lagged Gram no longer pays for itself
        return delta


@dataclass
class _State:
    """The iterate and what the last pass computed at it (``_Problem.fused``): linear
    predictor, loss, P and ``XtR = X^T (P - Y)`` (C-free, so a new C reuses all of it)."""

    theta: np.ndarray
    eta: np.ndarray
    loss: float
    P: np.ndarray
    XtR: np.ndarray

    @classmethod
    def at(cls, theta: np.ndarray, ev: Any) -> _State:
        return cls(theta, ev.eta, ev.loss, ev.P, ev.XtR)

    def objective(self, prob: Any, C: float) -> float:
        return C * self.loss + float(prob.penalty(self.theta))


def run_path(prob: Any, theta: np.ndarray, Cs: Sequence[float], *, tol: float,
             max_iter: int) -> list[PathFit]:
    """Every C of ``Cs`` in ascending order from ``theta`` (K', p); see the module doc."""
    lag = _Lagged(prob)
    out: list[PathFit] = []
    tangent: np.ndarray | None = None
    prev_C = 0.0
    Cs = sorted(float(c) for c in Cs)
    st = _State.at(theta, prob.fused(theta))
    for i, C in enumerate(Cs):
        t0 = time.perf_counter()
        lag.cho = None  # a new C: the Gram is kept, its factor is not
        lag.cs_after = len(Cs) - i - 1
        if tangent is not None:
            st = _start(prob, C, st, np.log(C / prev_C) * tangent)
        (n_iter, converged, gnorm), st = _newton(prob, lag, C, st, tol=tol, max_iter=max_iter)
        tangent = None
        if (CONTINUATION and converged and i + 1 < len(Cs) and Cs[i + 1] <= CONTINUATION_MAX_C
                and lag.cho is not None):
            tangent = lag.solve(C, st.P, -(prob.pen * st.theta), TANGENT_RTOL, reuse_stale=True)
        out.append(PathFit(C=C, theta=prob.full(st.theta), n_iter=n_iter, converged=converged,
                           grad_norm=gnorm, seconds=time.perf_counter() - t0))
        prev_C = C
    return out


def _start(prob: Any, C: float, st: _State, move: np.ndarray) -> _State:
    """The state to start C from: the warm start moved along the tangent (``move``) when
    that lowers C's objective, else the warm start itself (one fused pass)."""
    moved = _State.at(st.theta + move, prob.fused(move, st.eta))
    return moved if moved.objective(prob, C) < st.objective(prob, C) else st


def _newton(prob: Any, lag: _Lagged, C: float, st: _State, *, tol: float, max_iter: int
            ) -> tuple[tuple[int, bool, float], _State]:
    """Inexact Newton at one C: ((iterations, converged, grad norm), final state).

    Each step's pass ``X delta`` also evaluates the full step (``_Problem.fused``): when
    Armijo accepts it, the gradient there costs no further pass."""
    it = 0
    f = st.objective(prob, C)
    while True:
        g = prob.gradient(C, st.theta, st.XtR)
        gnorm = prob.grad_norm(C, g)
        if gnorm <= tol:
            return (it, True, gnorm), st
        if it >= max_iter:
            return (it, False, gnorm), st
        delta = lag.solve(C, st.P, g, min(0.1, max(1e-6, gnorm**FORCING_EXPONENT,
                                                    TARGET_FORCING * tol / gnorm)))
        slope = float((g * delta).sum())
        if slope >= 0:  # not a descent direction (CG breakdown): refresh and retry
            lag.G, lag.cho, lag.stale = None, None, False
            delta, slope = -g / (C * prob.n), -float((g * g).sum()) / (C * prob.n)
        ev = prob.fused(delta, st.eta)
        step, accepted = 1.0, False
        f_t = C * ev.loss + prob.penalty(st.theta + delta)
        new: _State | None = None
        for _ in range(60):
            if f_t <= f + 1e-4 * step * slope + 1e-12 * abs(f):
                accepted = True
                break
            step *= 0.5
            eta_t = st.eta + step * ev.eta_d
            loss_t, P_t = prob.loss_terms(eta_t)
            new = _State(st.theta + step * delta, eta_t, loss_t, P_t, st.XtR)
            f_t = new.objective(prob, C)
        it += 1
        if not accepted:  # no decrease at working precision
            return (it, gnorm <= tol, gnorm), st
        if step == 1.0:
            st = _State.at(st.theta + delta, ev)
        else:
            assert new is not None
            st = _State(new.theta, new.eta, new.loss, new.P, prob.xtr(new.P))
        f = f_t
        if it % 10 == 0:  # refresh the linear predictor against drift
            st = _State.at(st.theta, prob.fused(st.theta))
            f = st.objective(prob, C)
