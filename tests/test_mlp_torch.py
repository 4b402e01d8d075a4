"""The torch MLP probe against scikit-learn's MLPClassifier (the independent reference)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef
from sklearn.neural_network import MLPClassifier

from geneb.errors import GenebError
from geneb.models.device import resolve_device
from geneb.probe.preprocess import standardize_pair
from geneb.probe.solvers import resolve_backend
from geneb.probe.solvers.base import PROBE_DEVICES, ProbeFit, ProbeProblem
from geneb.probe.solvers.mlp import MLP_PARAMS, MLPProbe, TorchMLPProbe
from geneb.probe.solvers.mlp_torch import MLPConfig, fit_mlps


def _data(n: int = 450, d: int = 48, K: int = 2, n_test: int = 120, seed: int = 0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.2, size=(K, d))
    y = np.arange(n) % K
    X = (centers[y] + rng.normal(size=(n, d))).astype(np.float32)
    yt = np.arange(n_test) % K
    Xt = (centers[yt] + rng.normal(size=(n_test, d))).astype(np.float32)
    return X, y.astype(np.int64), Xt, yt


def _sk(X, y, Xt, seed, **over):
    params = {**MLP_PARAMS, "batch_size": min(200, len(y)), **over}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = MLPClassifier(random_state=seed, **params).fit(X, y)
    return clf


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("standardize", [False, True])
def test_first_epochs_equal_sklearn(K, standardize):
    """Same init, same shuffles, same loss/gradient/Adam: 3 epochs agree to float32 rounding,
    for a multi-batch cell (450 rows) and few-shot cells of different sizes in one stack."""
    X, y, Xt, _ = _data(K=K)
    cfg = MLPConfig(max_iter=3)
    small_a = np.flatnonzero(y < K)[: 6 * K]
    small_b = np.flatnonzero(y < K)[10 : 10 + 3 * K]
    cells = [ProbeFit("full", None, 7, 1.0, np.arange(len(y))),
             ProbeFit("6", 6, 11, 1.0, small_a), ProbeFit("3", 3, 5, 1.0, small_b)]
    fits = fit_mlps(ProbeProblem(X, y, Xt, K, standardize=standardize), cells, cfg=cfg)
    for cell, fit in zip(cells, fits, strict=True):
        Xc, Xtc = X[cell.train_idx], Xt
        if standardize:
            Xc, Xtc = standardize_pair(Xc, Xt, dtype=np.float32)
        ref = _sk(Xc, y[cell.train_idx], Xtc, cell.seed, max_iter=3)
        np.testing.assert_allclose(fit.proba, ref.predict_proba(Xtc), atol=2e-6)
        assert fit.n_iter == ref.n_iter_ == 3 and not fit.converged


def test_full_protocol_close_to_sklearn_and_stops_by_its_rule():
    X, y, Xt, yt = _data(n=420, d=32, K=3)
    cells = [ProbeFit("full", None, s, 1.0, np.arange(len(y))) for s in (13, 17)]
    fits = fit_mlps(ProbeProblem(X, y, Xt, 3), cells, cfg=MLPConfig.from_params(MLP_PARAMS))
    for cell, fit in zip(cells, fits, strict=True):
        ref = _sk(X, y, Xt, cell.seed)
        assert fit.converged == (ref.n_iter_ < MLP_PARAMS["max_iter"])
        assert abs(fit.n_iter - ref.n_iter_) <= 2  # the rule on the same loss curve
        np.testing.assert_allclose(fit.proba, ref.predict_proba(Xt), atol=2e-3)
        assert np.allclose(fit.proba.sum(1), 1.0)


def test_a_cell_does_not_depend_on_its_stack():
    """Stacking and dropping converged probes changes no cell's answer."""
    X, y, Xt, _ = _data(n=300, d=24)
    problem = ProbeProblem(X, y, Xt, 2, standardize=True)
    rng = np.random.default_rng(3)
    cells = [ProbeFit("full", None, s, 1.0, np.arange(300)) for s in (1, 2, 3)]
    cells += [ProbeFit("5", 5, s, 1.0, np.sort(np.concatenate(
        [rng.choice(np.flatnonzero(y == c), 5, replace=False) for c in (0, 1)])))
        for s in (4, 5, 6, 7)]
    cfg = MLPConfig(max_iter=60, tol=3e-3)  # every probe stops by the rule, at its own epoch
    together = fit_mlps(problem, cells, cfg=cfg)
    assert len({f.n_iter for f in together}) > 2  # probes really stopped at different epochs
    sharded = fit_mlps(problem, cells, cfg=cfg, threads=2)  # two stacks in two threads
    for a, b in zip(together, sharded, strict=True):
        assert a.n_iter == b.n_iter
        np.testing.assert_allclose(a.proba, b.proba, atol=1e-5)
    for cell, fit in zip(cells, together, strict=True):
        alone = fit_mlps(problem, [cell], cfg=cfg)[0]
        assert alone.n_iter == fit.n_iter and alone.converged == fit.converged
        np.testing.assert_allclose(alone.proba, fit.proba, atol=1e-5)


def test_class_absent_from_train_rows_matches_sklearn_backend():
    """3-class task, a cell whose rows hold classes 0 and 2 only: one logistic output, and
    class 1 gets probability 0, as through scikit-learn."""
    X, y, Xt, _ = _data(n=300, d=16, K=3)
    idx = np.flatnonzero(y != 1)[:40]
    cell = ProbeFit("full", None, 9, float("nan"), idx)
    problem = ProbeProblem(X, y, Xt, 3)
    mine = TorchMLPProbe(device="cpu").solve(problem, [cell])[0]
    ref = MLPProbe().solve(problem, [cell])[0]
    assert (mine.proba[:, 1] == 0).all()
    np.testing.assert_allclose(mine.proba, ref.proba, atol=2e-3)
    assert mine.n_iter == ref.n_iter


def test_device_resolution(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto", PROBE_DEVICES) == "cpu"
    with pytest.raises(GenebError, match="torch sees no CUDA device"):
        resolve_device("cuda:1", PROBE_DEVICES)
    with pytest.raises(GenebError, match="Valid devices: auto, cpu, cuda, cuda:N$"):
        resolve_device("tpu", PROBE_DEVICES)
    with pytest.raises(GenebError, match="unknown device 'mps'"):  # the probe has no MPS
        resolve_device("mps", PROBE_DEVICES)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto", PROBE_DEVICES) == "cuda"
    assert resolve_device("cuda:1", PROBE_DEVICES) == "cuda:1"


def test_every_tensor_lives_on_the_requested_device(monkeypatch):
    """The CUDA path cannot run here: check that fit_mlps moves all data to ``device`` and
    brings results back (a fake device name routed to the CPU records every transfer)."""
    import torch

    seen: list[str] = []
    real_to = torch.Tensor.to

    def to(self, *args, **kw):
        dev = args[0] if args else kw.get("device")
        if isinstance(dev, str):
            seen.append(dev)
            dev = "cpu" if dev == "fake:0" else dev
            args = (dev, *args[1:]) if args else args
            if "device" in kw:
                kw["device"] = dev
        return real_to(self, *args, **kw)

    monkeypatch.setattr(torch.Tensor, "to", to)
    monkeypatch.setattr(torch, "zeros", _on_cpu(torch.zeros, seen))
    monkeypatch.setattr(torch, "tensor", _on_cpu(torch.tensor, seen))
    X, y, Xt, _ = _data(n=260, d=8)
    fits = fit_mlps(ProbeProblem(X, y, Xt, 2), [
        ProbeFit("full", None, 1, 1.0, np.arange(260)),
        ProbeFit("3", 3, 2, 1.0, np.array([0, 1, 2, 3, 4, 5]))], cfg=MLPConfig(max_iter=15),
        device="fake:0")
    assert seen and set(seen) == {"fake:0"}
    assert all(np.isfinite(f.proba).all() for f in fits)


def _on_cpu(fn, seen):
    def wrapped(*a, **kw):
        dev = kw.get("device")
        if isinstance(dev, str):
            seen.append(dev)
            kw["device"] = "cpu"
        return fn(*a, **kw)

    return wrapped


def test_backend_names():
    assert resolve_backend("auto", "mlp") == "torch"
    assert resolve_backend("fast", "mlp") == "torch"
    assert resolve_backend("sklearn", "mlp") == "sklearn"
    with pytest.raises(GenebError, match="Did you mean 'torch'"):
        resolve_backend("torh", "mlp")
    with pytest.raises(GenebError, match="early_stopping=False only"):
        MLPConfig.from_params({**MLP_PARAMS, "early_stopping": True})


def test_real_task_mcc_matches_sklearn_per_regime(data_dir):
    """A real task (dhs_idhs_fflg, k-mer 4, standardised): per regime, mean MCC over seeds of
    the torch backend within 0.02 (full) / 0.05 (10-shot) of scikit-learn's."""
    from geneb.models.adapters.kmer import kmer_spectrum
    from geneb.protocol import draw

    tr = pd.read_csv(data_dir / "dhs_idhs_fflg" / "train.csv")
    te = pd.read_csv(data_dir / "dhs_idhs_fflg" / "test.csv")
    X = kmer_spectrum(tr.sequence.tolist(), 4).astype(np.float32)
    Xt = kmer_spectrum(te.sequence.tolist(), 4).astype(np.float32)
    y, yt = tr.label.to_numpy(np.int64), te.label.to_numpy(np.int64)
    problem = ProbeProblem(X, y, Xt, 2, standardize=True)
    seeds = (13, 17, 42, 123, 997)
    rows = np.arange(len(y))
    for regime, tol in (("10", 0.05), ("full", 0.02)):
        cells = [ProbeFit(regime, None if regime == "full" else 10, s, float("nan"),
                          draw(regime, y, rows, seed=s, task_fingerprint="t", n_classes=2
                                ).positions) for s in seeds]
        mine = TorchMLPProbe(device="cpu").solve(problem, cells)
        ref = MLPProbe().solve(problem, cells)
        m1 = [matthews_corrcoef(yt, f.proba.argmax(1)) for f in mine]
        m2 = [matthews_corrcoef(yt, f.proba.argmax(1)) for f in ref]
        assert abs(np.mean(m1) - np.mean(m2)) <= tol, (regime, m1, m2)


def test_engine_dispatches_the_mlp_by_backend(tmp_path):
    """run_probes: the MLP runs on torch by default and on scikit-learn with
    backend='sklearn'; each records its backend; the two agree on every cell."""
    from probe_stores import gaussian_task

    from geneb.probe.engine import run_probes
    from geneb.results.table import read_results
    from geneb.store import FeatureStore

    fs = FeatureStore(tmp_path / "s.zarr", "a")
    gaussian_task(fs, "m", "t", n_train=240, n_test=80, n_classes=3, dim=12, sep=1.5)
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    sa = run_probes(fs, a, probe="mlp", shots="10,full", seeds="13,17", workers=1)
    sb = run_probes(fs, b, probe="mlp", backend="sklearn", shots="10,full", seeds="13,17",
                    workers=1)
    assert sa.backend == "torch" and sb.backend == "sklearn" and sa.n_computed == 4
    da, db = read_results(a), read_results(b)
    assert set(da.backend) == {"torch"} and set(db.backend) == {"sklearn"}
    key = ["regime", "seed"]
    da, db = da.sort_values(key).reset_index(drop=True), db.sort_values(key).reset_index(drop=True)
    np.testing.assert_allclose(da.mcc, db.mcc, atol=0.03)
    assert (abs(da.n_iter - db.n_iter) <= 2).all()
