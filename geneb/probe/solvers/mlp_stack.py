"""The stacked-MLP training kernel behind ``geneb.probe.solvers.mlp_torch`` (see its docstring).

P probes' parameters in one flat buffer, trained in lockstep with batched GEMMs and one fused
Adam update; probes that stop by scikit-learn's rule are copied out and the stack compacted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from geneb.errors import GenebError

if TYPE_CHECKING:
    from torch import Tensor

_F32_EPS = float(np.finfo(np.float32).eps)


@dataclass(frozen=True)
class MLPConfig:
    """The protocol's MLP hyperparameters (built from ``geneb.probe.solvers.mlp.MLP_PARAMS``)."""

    hidden: int = 256
    alpha: float = 1e-4
    lr: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    batch_size: int = 200
    max_iter: int = 200
    tol: float = 1e-4
    n_iter_no_change: int = 10

    @classmethod
    def from_params(cls, p: dict[str, Any]) -> MLPConfig:
        """From scikit-learn ``MLPClassifier`` keyword arguments (the one source of truth)."""
        if p.get("solver", "adam") != "adam" or p.get("activation", "relu") != "relu":
            raise GenebError("the torch MLP implements solver='adam', activation='relu' only")
        if p.get("early_stopping", False):
            raise GenebError("the torch MLP implements early_stopping=False only")
        (hidden,) = tuple(p.get("hidden_layer_sizes", (256,)))
        return cls(hidden=int(hidden), alpha=float(p["alpha"]), lr=float(p["learning_rate_init"]),
                   beta1=float(p.get("beta_1", 0.9)), beta2=float(p.get("beta_2", 0.999)),
                   eps=float(p.get("epsilon", 1e-8)), batch_size=int(p["batch_size"]),
                   max_iter=int(p["max_iter"]), tol=float(p["tol"]),
                   n_iter_no_change=int(p["n_iter_no_change"]))



# --------------------------------------------------------------------------- one probe's data
@dataclass(eq=False)
class _Probe:
    """One fit: its train rows (positions), seed, classes present and final state."""

    pos: int  # index in the caller's list of fits
    idx: np.ndarray
    seed: int
    classes: np.ndarray  # classes present in the train rows, ascending
    source: int = 0  # which (standardised) design matrix the rows come from
    rng: np.random.RandomState = field(init=False)
    order: np.ndarray = field(init=False)  # sklearn's running sample order
    best: float = math.inf
    count: int = 0
    n_iter: int = 0
    stopped: bool = False
    params: dict[str, np.ndarray] | None = None
    seconds: float = 0.0

    def __post_init__(self) -> None:
        self.rng = np.random.RandomState(self.seed)
        self.order = np.arange(len(self.idx))

    @property
    def n_out(self) -> int:
        return 1 if len(self.classes) == 2 else len(self.classes)


def glorot_init(rng: np.random.RandomState, d: int, h: int, o: int) -> list[np.ndarray]:
    """W1, b1, W2, b2 exactly as scikit-learn's ``_init_coef`` draws them (float64 -> 32)."""
    out = []
    for fan_in, fan_out in ((d, h), (h, o)):
        bound = np.sqrt(6.0 / (fan_in + fan_out))
        out.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        out.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return out


# --------------------------------------------------------------------------- a stack of probes
class _Stack:
    """P probes' parameters in one flat buffer; W1/b1/W2/b2 are contiguous views of it."""

    def __init__(self, flat: Tensor, P: int, d: int, h: int, o: int) -> None:
        self.P, self.d, self.h, self.o = P, d, h, o
        self.sizes = (d * h, h, h * o, o)
        self.flat = flat
        self.views = self.split(flat)

    def split(self, flat: Tensor) -> list[Tensor]:
        shapes = ((self.d, self.h), (self.h,), (self.h, self.o), (self.o,))
        out, a = [], 0
        for size, shape in zip(self.sizes, shapes, strict=True):
            out.append(flat[a:a + self.P * size].view(self.P, *shape))
            a += self.P * size
        return out

    def select(self, flat: Tensor, keep: Tensor) -> Tensor:
        """The same layout for the probes ``keep`` (a device index tensor) only."""
        import torch

        return torch.cat([v.index_select(0, keep).reshape(-1) for v in self.split(flat)])


class _StackedAdam:
    """scikit-learn's Adam over one flat parameter buffer (fused kernel when torch has it)."""

    def __init__(self, cfg: MLPConfig, flat: Tensor) -> None:
        import torch

        self.cfg = cfg
        self.m = torch.zeros_like(flat)
        self.v = torch.zeros_like(flat)
        self.t = 0
        self.step_t = torch.zeros((), dtype=torch.float32, device=flat.device)
        self.fused = hasattr(torch, "_fused_adam_")

    def step(self, flat: Tensor, grad: Tensor) -> None:
        import torch

        c = self.cfg
        self.t += 1
        # sklearn: lr*sqrt(1-b2^t)/(1-b1^t) * m/(sqrt(v)+eps) == torch Adam with this eps
        eps_t = c.eps / math.sqrt(1.0 - c.beta2 ** self.t)
        if self.fused:
            self.step_t.add_(1)
            torch._fused_adam_([flat], [grad], [self.m], [self.v], [], [self.step_t],
                               lr=c.lr, beta1=c.beta1, beta2=c.beta2, weight_decay=0.0,
                               eps=eps_t, amsgrad=False, maximize=False)
            return
        self.m.mul_(c.beta1).add_(grad, alpha=1 - c.beta1)
        self.v.mul_(c.beta2).addcmul_(grad, grad, value=1 - c.beta2)
        lr_t = c.lr * math.sqrt(1 - c.beta2 ** self.t) / (1 - c.beta1 ** self.t)
        flat.addcdiv_(self.m, self.v.sqrt().add_(c.eps), value=-lr_t)

    def select(self, stack: _Stack, keep: Tensor) -> None:
        self.m = stack.select(self.m, keep)
        self.v = stack.select(self.v, keep)


# --------------------------------------------------------------------------- training
class _Group:
    """Probes trained in lockstep: the same number of rows per batch at every step."""

    def __init__(self, probes: list[_Probe], X: Tensor, Y: Tensor, row_w: Tensor | None,
                 cfg: MLPConfig, device: str) -> None:
        import torch

        self.probes = probes
        self.cfg = cfg
        self.device = device
        self.X, self.Y, self.row_w = X, Y, row_w  # see train_group for the layouts
        P, o = len(probes), probes[0].n_out
        d, h = X.shape[-1], cfg.hidden
        init = [glorot_init(p.rng, d, h, o) for p in probes]
        flat = torch.cat([torch.from_numpy(np.stack([w[i] for w in init])).reshape(-1)
                          for i in range(4)]).to(device)
        self.stack = _Stack(flat, P, d, h, o)
        self.grad = torch.zeros_like(flat)
        self.gviews = self.stack.split(self.grad)
        self.adam = _StackedAdam(cfg, flat)
        self.active = list(range(P))  # positions in ``probes`` of the probes still training

    # one mini-batch step for every active probe; returns the (P,) summed batch loss
    def step(self, Xb: Tensor, Yb: Tensor, w: Tensor | None, n_b: int | Tensor,
             l2_coef: float | Tensor) -> Tensor:
        import torch

        W1, b1, W2, b2 = self.stack.views
        gW1, gb1, gW2, gb2 = self.gviews
        binary = self.stack.o == 1
        Z1 = torch.baddbmm(b1.unsqueeze(1), Xb, W1)
        A1 = Z1.clamp_min_(0.0)
        Z2 = torch.baddbmm(b2.unsqueeze(1), A1, W2)
        prob = torch.sigmoid(Z2) if binary else torch.softmax(Z2, dim=-1)
        pc = prob.clamp(_F32_EPS, 1.0 - _F32_EPS)
        if binary:
            ce = -(Yb * pc.log() + (1.0 - Yb) * (1.0 - pc).log())
        else:
            ce = -(Yb * pc.log())
        if w is None:
            ce_sum = ce.sum(dim=(1, 2), dtype=torch.float64)
            delta = (prob - Yb).mul_(1.0 / n_b)  # n_b: python int (all probes alike)
        else:
            assert not isinstance(n_b, int)  # weighted rows come with per-probe row counts
            ce_sum = (ce * w).sum(dim=(1, 2), dtype=torch.float64) * n_b.view(-1)
            delta = (prob - Yb).mul_(w)  # w = mask / n_p: padded rows contribute nothing
        # ||W||^2 before the update (sklearn adds it to the batch loss)
        sq = (torch.linalg.vector_norm(W1.reshape(W1.shape[0], -1), dim=1) ** 2
              + torch.linalg.vector_norm(W2.reshape(W2.shape[0], -1), dim=1) ** 2)
        loss: Tensor = ce_sum + 0.5 * self.cfg.alpha * sq.to(torch.float64)
        torch.sum(delta, dim=1, out=gb2)
        dA1 = torch.bmm(delta, W2.transpose(1, 2))
        dA1.mul_(A1 > 0)
        torch.sum(dA1, dim=1, out=gb1)
        if isinstance(l2_coef, float):
            torch.baddbmm(W2, A1.transpose(1, 2), delta, beta=l2_coef, out=gW2)
            torch.baddbmm(W1, Xb.transpose(1, 2), dA1, beta=l2_coef, out=gW1)
        else:
            torch.bmm(A1.transpose(1, 2), delta, out=gW2)
            gW2.addcmul_(W2, l2_coef)
            torch.bmm(Xb.transpose(1, 2), dA1, out=gW1)
            gW1.addcmul_(W1, l2_coef)
        self.adam.step(self.stack.flat, self.grad)
        return loss

    def end_epoch(self, losses: np.ndarray, n_rows: Sequence[int], t0: float) -> bool:
        """sklearn's stopping rule per active probe; drop stopped ones. True if any left."""
        import torch

        c = self.cfg
        keep = []
        for j, (i, total) in enumerate(zip(self.active, losses, strict=True)):
            p = self.probes[i]
            loss = float(total) / n_rows[j]
            p.n_iter += 1
            if loss > p.best - c.tol:
                p.count += 1
            else:
                p.count = 0
            if loss < p.best:
                p.best = loss
            if p.count > c.n_iter_no_change or p.n_iter >= c.max_iter:
                p.stopped = p.count > c.n_iter_no_change and p.n_iter < c.max_iter
                p.params = {k: v[j].detach().cpu().numpy().copy()
                            for k, v in zip(("W1", "b1", "W2", "b2"), self.stack.views,
                                            strict=True)}
                p.seconds = time.perf_counter() - t0
            else:
                keep.append(j)
        if len(keep) == len(self.active):
            return True
        self.active = [self.active[j] for j in keep]
        if not keep:
            return False
        k = torch.tensor(keep, dtype=torch.int64, device=self.device)
        st = self.stack
        new = _Stack(st.select(st.flat, k), len(keep), st.d, st.h, st.o)
        self.adam.select(st, k)
        self.stack = new
        self.grad = torch.zeros_like(new.flat)
        self.gviews = new.split(self.grad)
        self.keep_rows(k)
        return True

    def keep_rows(self, k: Tensor) -> None:
        """Hook for the per-probe data of the few-shot stack (kept in step with ``active``)."""


def _train_small(probes: list[_Probe], Xs: list[np.ndarray], Ys: list[np.ndarray],
                 cfg: MLPConfig, device: str) -> None:
    """Probes with n <= batch size: one full batch per epoch, rows zero-padded to the longest."""
    import torch

    P = len(probes)
    nmax = max(len(x) for x in Xs)
    d, o = Xs[0].shape[1], Ys[0].shape[1]
    X = np.zeros((P, nmax, d), np.float32)
    Y = np.zeros((P, nmax, o), np.float32)
    w = np.zeros((P, nmax, 1), np.float32)
    n = np.array([len(x) for x in Xs], np.int64)
    for i, (x, y) in enumerate(zip(Xs, Ys, strict=True)):
        X[i, :len(x)], Y[i, :len(x)], w[i, :len(x)] = x, y, 1.0 / len(x)
    g = _SmallGroup(probes, torch.from_numpy(X).to(device), torch.from_numpy(Y).to(device),
                    torch.from_numpy(w).to(device), torch.from_numpy(n).to(device), cfg, device)
    t0 = time.perf_counter()
    for _ in range(cfg.max_iter):
        loss = g.step(g.X, g.Y, g.row_w, g.n_f, g.l2)
        n_rows = [len(g.probes[i].idx) for i in g.active]
        if not g.end_epoch(loss.cpu().numpy(), n_rows, t0):
            break


class _SmallGroup(_Group):
    def __init__(self, probes: list[_Probe], X: Tensor, Y: Tensor, w: Tensor, n: Tensor,
                 cfg: MLPConfig,
                 device: str) -> None:
        super().__init__(probes, X, Y, w, cfg, device)
        self.n_f = n.to(X.dtype).view(-1, 1, 1)
        self.l2 = cfg.alpha / self.n_f

    def keep_rows(self, k: Tensor) -> None:
        assert self.row_w is not None  # a small group always weighs its rows (_train_small)
        self.X = self.X.index_select(0, k)
        self.Y = self.Y.index_select(0, k)
        self.row_w = self.row_w.index_select(0, k)
        self.n_f = self.n_f.index_select(0, k)
        self.l2 = self.cfg.alpha / self.n_f


def _train_large(probes: list[_Probe], local: list[int], sources: list[np.ndarray],
                 Ysrc: list[np.ndarray], cfg: MLPConfig, device: str) -> None:
    """Probes with the same n > batch size: per-probe shuffled mini-batches of one layout.

    ``sources[local[i]]`` is the (n, d) design matrix of ``probes[i]`` (rows in the probe's
    own train order) and ``Ysrc[local[i]]`` its (n, O) targets; identical rows share one.
    """
    import torch

    n = len(probes[0].idx)
    bs = min(cfg.batch_size, n)
    Xflat = torch.from_numpy(np.concatenate(sources)).to(device)  # (S*n, d)
    Yflat = torch.from_numpy(np.concatenate(Ysrc)).to(device)
    g = _Group(probes, Xflat, Yflat, None, cfg, device)
    d = Xflat.shape[1]
    t0 = time.perf_counter()
    for _ in range(cfg.max_iter):
        act = [g.probes[i] for i in g.active]
        base = [local[i] * n for i in g.active]
        for p in act:  # sklearn: sample_idx = shuffle(sample_idx) every epoch
            perm = np.arange(n)
            p.rng.shuffle(perm)
            p.order = p.order[perm]
        order = np.stack([p.order + b for p, b in zip(act, base, strict=True)])
        rows = torch.from_numpy(order).to(device)
        P = len(act)
        total = None
        for b0 in range(0, n, bs):
            b1 = min(n, b0 + bs)
            r = rows[:, b0:b1].reshape(-1)
            Xb = Xflat.index_select(0, r).view(P, b1 - b0, d)
            Yb = Yflat.index_select(0, r).view(P, b1 - b0, -1)
            loss = g.step(Xb, Yb, None, b1 - b0, cfg.alpha / (b1 - b0))
            total = loss if total is None else total.add_(loss)
        assert total is not None  # n >= 1 rows: at least one batch ran
        if not g.end_epoch(total.cpu().numpy(), [n] * P, t0):
            break



def _targets(y: np.ndarray, classes: np.ndarray) -> npt.NDArray[np.float32]:
    if len(classes) == 2:
        binary: npt.NDArray[np.float32] = (y == classes[1]).astype(np.float32)[:, None]
        return binary
    one_hot: npt.NDArray[np.float32] = (y[:, None] == classes[None, :]).astype(np.float32)
    return one_hot


def _train_probes(probes: list[_Probe], designs: list[np.ndarray], y: np.ndarray,
                  cfg: MLPConfig, device: str) -> None:
    """Train ``probes`` as stacks: few-shot ones together, larger ones by row count."""
    import torch

    with torch.no_grad():  # grad mode is per thread
        small: dict[int, list[_Probe]] = {}
        large: dict[tuple[int, int], list[_Probe]] = {}
        for p in probes:
            if len(p.idx) <= cfg.batch_size:
                small.setdefault(p.n_out, []).append(p)
            else:
                large.setdefault((len(p.idx), p.n_out), []).append(p)
        for group in small.values():
            _train_small(group, [designs[p.source] for p in group],
                         [_targets(y[p.idx], p.classes) for p in group], cfg, device)
        for group in large.values():
            used = sorted({p.source for p in group})
            remap = {s: j for j, s in enumerate(used)}
            first = {p.source: p for p in reversed(group)}
            _train_large(group, [remap[p.source] for p in group], [designs[s] for s in used],
                         [_targets(y[first[s].idx], first[s].classes) for s in used], cfg,
                         device)
