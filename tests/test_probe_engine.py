"""The probe engine end to end on small stores: real tasks with k-mer features, synthetic ones."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from probe_stores import gaussian_task, kmer_spectrum, write_entry, write_task_features
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef
from sklearn.preprocessing import StandardScaler
from synthetic_tasks import make_tasks
from threadpoolctl import threadpool_limits

from geneb.errors import EntryIncompleteError, GenebError, ProbeError, UnknownNameError
from geneb.probe.engine import run_probes
from geneb.results.table import read_results
from geneb.store import FeatureStore, Provenance, StoreKey

REAL_TASKS = ("dhs_idhs_fflg", "gue_splice_reconstructed")
MODELS = {"kmer-3": 3, "kmer-2": 2}
METRICS = ["mcc", "accuracy", "macro_f1", "auroc", "n_iter", "converged", "n_train"]
KEY = ["model", "task", "regime", "seed", "C"]


@pytest.fixture(scope="module")
def synthetic_dir(tmp_path_factory):
    return make_tasks(tmp_path_factory.mktemp("synthetic_tasks"))


@pytest.fixture(scope="module", params=["synthetic", "real"])
def real(request, tmp_path_factory):
    """Task folders with k-mer features: made by the tests (a fresh clone runs these) or the
    real ones of ../shared/data (skipped when absent)."""
    from geneb.tasks.folders import resolve_task

    data_dir = request.getfixturevalue("synthetic_dir" if request.param == "synthetic"
                                       else "data_dir")
    root = tmp_path_factory.mktemp(request.param)
    fs = FeatureStore(root / "store", "a")
    tasks = {name: resolve_task(name, str(data_dir)) for name in REAL_TASKS}
    for model, k in MODELS.items():
        for task in tasks.values():
            write_task_features(fs, model, task, lambda s, k=k: kmer_spectrum(s, k),
                                n_params=None if k == 3 else 1234)
    out = root / "results.parquet"
    summary = run_probes(fs.path, out, shots="1,10,full", seeds=(13, 17, 42), Cs=(0.1, 10.0),
                         backend="sklearn", workers=1, standardize=True)
    return fs, tasks, out, summary


def _sorted(df):
    return df.sort_values(KEY, na_position="first").reset_index(drop=True)


def test_real_grid_shape_and_provenance(real):
    fs, tasks, out, summary = real
    df = read_results(out)
    assert len(df) == 2 * 2 * 3 * 3 * 2 == summary.n_cells == summary.n_computed
    # full-data fits are solved once per C, not once per seed
    assert summary.n_fits == 2 * 2 * (2 * 3 * 2 + 2)
    assert df.converged.all() and (df.backend == "sklearn").all() and df.standardize.all()
    for name, task in tasks.items():
        sub = df[df.task == name]
        assert set(sub.category) == {task.spec.category}
        assert (sub.n_test == len(task.splits["test"])).all()  # the test split is whole
        assert set(sub.task_fingerprint) == {task.splits["train"].fingerprint}
    assert df[df.model == "kmer-2"].n_params.eq(1234).all()
    assert df[df.model == "kmer-3"].n_params.isna().all()


def test_kshot_rows_identical_across_models_and_exactly_k(real):
    _, tasks, out, _ = real
    df = read_results(out)
    few = df[df.regime != "full"]
    for (task, regime, seed, C), g in few.groupby(["task", "regime", "seed", "C"]):
        rows = {m: tuple(r) for m, r in zip(g.model, g.train_rows, strict=True)}
        assert len(rows) == 2 and len(set(rows.values())) == 1, (task, regime, seed, C)
        y = tasks[task].splits["train"].labels
        counts = np.bincount(y[np.asarray(rows["kmer-3"])], minlength=tasks[task].spec.n_classes)
        assert (counts == int(regime)).all()
    seeds = few[(few.model == "kmer-3") & (few.C == 0.1)].groupby(["task", "regime"])
    for _, g in seeds:
        assert len({tuple(r) for r in g.train_rows}) == 3  # one distinct sample per seed


def _ref_mcc(fs, model, task, idx, C, standardize=True):
    tr, te = fs.get(model, task, "train"), fs.get(model, task, "test")
    X, Xt = tr.embeddings[idx].astype(np.float64), te.embeddings.astype(np.float64)
    if standardize:
        sc = StandardScaler().fit(X)
        X, Xt = sc.transform(X), sc.transform(Xt)
    clf = LogisticRegression(C=C, solver="newton-cg", tol=1e-10, max_iter=100_000)
    with threadpool_limits(1):  # two busy-waiting BLAS pools on two cores crawl
        clf.fit(X, tr.labels[idx])
    return matthews_corrcoef(te.labels, clf.predict(Xt))


def test_every_full_regime_mcc_equals_an_independent_sklearn_fit(real):
    fs, _, out, _ = real
    df = read_results(out)
    full = df[df.regime == "full"]
    for (model, task, C), g in full.groupby(["model", "task", "C"]):
        assert len(g) == 3 and g.mcc.nunique() == 1  # one fit fanned out to every seed
        n = len(fs.get(model, task, "train").labels)
        assert g.n_train.iloc[0] == n
        ref = _ref_mcc(fs, model, task, np.arange(n), C)
        assert g.mcc.iloc[0] == pytest.approx(ref, abs=1e-9), (model, task, C)


def test_kshot_mcc_equals_an_independent_sklearn_fit(real):
    fs, _, out, _ = real
    df = read_results(out)
    few = df[(df.regime == "10") & (df.model == "kmer-3")]
    for r in few.itertuples():
        rows = fs.get(r.model, r.task, "train").rows
        idx = np.searchsorted(rows, np.asarray(r.train_rows))
        assert r.mcc == pytest.approx(_ref_mcc(fs, r.model, r.task, idx, r.C), abs=1e-9)


# ----------------------------------------------------------------------------- synthetic stores
@pytest.fixture()
def synth(tmp_path):
    fs = FeatureStore(tmp_path / "store", "a")
    gaussian_task(fs, "m1", "t_bin", n_train=120, n_test=60, dim=12, category="enhancers",
                  n_params=10)
    gaussian_task(fs, "m1", "t_tri", n_train=150, n_test=60, n_classes=3, dim=12, seed=1)
    gaussian_task(fs, "m2", "t_bin", n_train=120, n_test=60, dim=12, seed=2)
    return fs, tmp_path / "r.parquet"


def _run(fs, out, **kw):
    opts = dict(shots="1,10,full", seeds=(13, 17), Cs=(1.0,), backend="sklearn", workers=1)
    return run_probes(fs.path, out, **{**opts, **kw})


def _same_cells(a, b):
    a, b = _sorted(a), _sorted(b)
    pd.testing.assert_frame_equal(a[KEY + METRICS], b[KEY + METRICS])
    assert [list(x) for x in a.train_rows] == [list(x) for x in b.train_rows]


def test_category_from_provenance_else_uncategorized(synth):
    fs, out = synth
    _run(fs, out)
    df = read_results(out)
    assert set(df[(df.task == "t_bin") & (df.model == "m1")].category) == {"enhancers"}
    assert set(df[df.task == "t_tri"].category) == {"uncategorized"}


def test_rerun_computes_nothing_and_extension_only_new_cells(synth, tmp_path):
    fs, out = synth
    first = _run(fs, out)
    assert first.n_computed == first.n_cells == 3 * 3 * 2
    mtime = os.stat(out).st_mtime_ns
    again = _run(fs, out)
    assert (again.n_computed, again.n_fits, again.n_skipped) == (0, 0, again.n_cells)
    assert os.stat(out).st_mtime_ns == mtime
    more_seeds = _run(fs, out, seeds=(13, 17, 42))
    # k-shot cells of seed 42 are fitted; its full cells are copies of the seed-13 fit
    assert more_seeds.n_skipped == 18 and more_seeds.n_reused == 3
    assert more_seeds.n_fits == more_seeds.n_computed == 3 * 2
    more_C = _run(fs, out, seeds=(13, 17, 42), Cs=(1.0, 0.1))
    assert more_C.n_skipped == 27 and more_C.n_computed == 27 and more_C.n_fits == 3 * 7
    only_m2 = _run(fs, out, models=["m2"], seeds=(13, 17, 42), Cs=(1.0, 0.1))
    assert only_m2.n_computed == 0
    # the grown table equals one run of the whole grid from scratch
    fresh = tmp_path / "fresh.parquet"
    _run(fs, fresh, seeds=(13, 17, 42), Cs=(1.0, 0.1))
    _same_cells(read_results(out), read_results(fresh))


def test_interrupted_run_keeps_finished_groups_and_resumes(synth, tmp_path):
    fs, out = synth
    done = []

    def stop_after_first(model, task, n):
        done.append((model, task, n))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(fs, out, on_pair_done=stop_after_first)
    kept = read_results(out)
    assert len(done) == 1 and len(kept) == done[0][2] == 6
    assert set(zip(kept.model, kept.task, strict=True)) == {done[0][:2]}
    rest = _run(fs, out)
    assert rest.n_skipped == 6 and rest.n_computed == 12
    fresh = tmp_path / "fresh.parquet"
    _run(fs, fresh)
    _same_cells(read_results(out), read_results(fresh))


def test_killed_process_keeps_finished_groups(synth):
    fs, out = synth
    code = textwrap.dedent(f"""
        import os, signal
        from geneb.probe.engine import run_probes
        def die(model, task, n):
            os.kill(os.getpid(), signal.SIGKILL)
        run_probes({fs.path!r}, {str(out)!r}, seeds=(13, 17), backend="sklearn", workers=1,
                   on_pair_done=die)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert proc.returncode == -9
    kept = read_results(out)
    assert len(kept) == 6 and kept[["model", "task"]].drop_duplicates().shape[0] == 1
    assert not [p for p in os.listdir(out.parent) if p.endswith((".tmp", ".partial"))]
    rest = _run(fs, out)
    assert rest.n_computed == 12 and len(read_results(out)) == 18


def test_mlp_probe_rows(synth):
    fs, out = synth
    s = _run(fs, out, probe="mlp", tasks=["t_tri"], shots="10,full", Cs=(1.0, 10.0))
    df = read_results(out)
    assert len(df) == s.n_computed == 2 * 2  # C does not multiply MLP cells
    assert df.C.isna().all() and (df.probe == "mlp").all() and (df.backend == "sklearn").all()
    assert s.n_fits == 4  # the MLP depends on the seed: full-data fits are not shared
    again = _run(fs, out, probe="mlp", tasks=["t_tri"], shots="10,full")
    assert again.n_computed == 0


def test_take_all_is_recorded(synth):
    fs, out = synth
    with pytest.raises(ProbeError, match=r"class 0 has only 60 train row\(s\), fewer than k=70"):
        _run(fs, out, shots="70", tasks=["t_bin"])
    assert not out.exists()
    _run(fs, out, shots="70", tasks=["t_bin"], take_all=True, models=["m1"])
    df = read_results(out)
    assert df.take_all.all() and (df.n_train == 120).all()


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("split,row,col,value,message", [
    ("test", 7, 3, np.nan, r"m2/t_bin/test .*non-finite embedding \(nan\) at entry row 7 "
                           r"\(task file row 7\), feature 3"),
    # finite, but its float32 square overflows: refused like a NaN, not probed into
    # unconverged MCC-0 cells
    ("train", 11, 2, -1e30, r"m2/t_bin/train .*out of range \(expected \|values\| <= 1e\+16 "
                            r".*\(-1e\+30\) at entry row 11 .*feature 2"),
])
def test_unprobeable_embedding_named_and_nothing_written(synth, split, row, col, value,
                                                         message):
    fs, out = synth
    key = StoreKey("m2", "t_bin", split)
    fs.root[key.path]["embeddings"][row, col] = value
    # a chunk rewritten outside geneb no longer matches the digests recorded at completion
    # (the store refuses it as replaced); drop them to reach the probe's own value check
    attrs = fs.root[key.path].attrs.asdict()
    attrs.pop("shard_digests")
    fs.root[key.path].attrs.put(attrs)
    with pytest.raises(ProbeError, match=message):
        _run(fs, out)
    assert not out.exists()


def test_incomplete_entry_and_missing_split(synth):
    fs, out = synth
    prov = Provenance(model_id="m3", revision="x", task_id="t_bin", task_fingerprint="f")
    w = fs.writer(StoreKey("m3", "t_bin", "train"), provenance=prov,
                  labels=np.zeros(300, dtype=np.int64), rows=np.arange(300), dim=12)
    with pytest.raises(RuntimeError), w:
        w.append(np.zeros((256, 12), np.float32))
        raise RuntimeError("killed extraction")
    with pytest.raises(EntryIncompleteError, match=r"m3/t_bin/train .*incomplete"):
        _run(fs, out, models=["m3"])
    write_entry(fs, "m4", "t_bin", "train", np.ones((4, 12)), np.array([0, 1, 0, 1]))
    with pytest.raises(ProbeError, match=r"no 'test' split for model 'm4' on task 't_bin'"):
        _run(fs, out, models=["m4"])
    assert not out.exists()


def test_unknown_model_and_task_suggest(synth):
    fs, out = synth
    with pytest.raises(UnknownNameError, match=r"unknown model in the store 'm_1'.*'m1'"):
        _run(fs, out, models=["m_1"])
    with pytest.raises(UnknownNameError, match=r"Did you mean 't_bin'"):
        _run(fs, out, tasks=["t_bni"])
    with pytest.raises(GenebError, match="no embeddings of model 'm2' on task 't_tri'"):
        _run(fs, out, models=["m2"], tasks=["t_tri"])
    with pytest.raises(GenebError, match="probe: expected one of 'linear', 'mlp', got 'svm'"):
        _run(fs, out, probe="svm")
    assert not out.exists()


# ----------------------------------------------------------------------------- Dask
@pytest.mark.slow
def test_local_cluster_matches_in_process(synth, tmp_path):
    fs, out = synth
    s = _run(fs, out, workers=2)
    assert s.n_pairs == 3
    ref = tmp_path / "ref.parquet"
    _run(fs, ref, workers=1)
    _same_cells(read_results(out), read_results(ref))


@pytest.mark.slow
def test_fast_backend_same_numbers_in_dask_workers_and_in_process(tmp_path):
    """A one-pair run solves in-process with every core (fixed row blocks, ordered sums); a
    several-pair run solves each pair in a one-thread Dask worker. Full-data fits on 2,600
    rows (three row blocks) must give identical cells both ways, with every C of the path."""
    fs = FeatureStore(tmp_path / "store", "a")
    gaussian_task(fs, "m1", "t_big", n_train=2600, n_test=300, dim=48, sep=0.6)
    gaussian_task(fs, "m1", "t_big3", n_train=2600, n_test=300, n_classes=3, dim=48, sep=0.6,
                  seed=4)
    opts = dict(shots="1,10,full", seeds=(13, 17), Cs=(0.01, 1.0, 100.0), backend="fast",
                standardize=True)
    dask_out = tmp_path / "dask.parquet"
    s = run_probes(fs.path, dask_out, workers=2, **opts)
    assert s.n_pairs == 2
    solo = []
    for task in ("t_big", "t_big3"):
        out = tmp_path / f"{task}.parquet"
        run_probes(fs.path, out, tasks=[task], workers=2, **opts)  # one pair: in-process
        solo.append(read_results(out))
    a = read_results(dask_out)
    assert a.converged.all() and len(a) == 2 * 3 * 2 * 3
    _same_cells(a, pd.concat(solo, ignore_index=True))


def test_backend_gets_one_batch_per_pair_with_distinct_fits(synth, monkeypatch):
    import geneb.probe.solvers as solvers
    from geneb.probe.solvers.sklearn_backend import SklearnBackend

    calls = []

    class Spy(SklearnBackend):
        def solve(self, problem, cells):
            calls.append((problem.X_train.shape, [(c.regime, c.seed, c.C) for c in cells]))
            assert problem.X_train.flags.c_contiguous and problem.X_train.dtype == np.float32
            return super().solve(problem, cells)

    monkeypatch.setattr(solvers, "get_backend", lambda name, **kw: Spy())
    fs, out = synth
    s = _run(fs, out, tasks=["t_tri"], seeds=(13, 17, 42), Cs=(0.1, 1.0))
    assert len(calls) == 1 and calls[0][0] == (150, 12)
    cells = calls[0][1]
    assert len(cells) == len(set(cells)) == s.n_fits == 2 * 3 * 2 + 2  # full: once per C
    assert s.n_computed == 3 * 3 * 2
