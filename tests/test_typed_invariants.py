"""The checks that replaced unchecked assumptions when the package was made ``mypy --strict``
clean: each refuses, with a one-line error naming what is wrong, a value that used to pass on
until an AttributeError or TypeError somewhere deeper."""

from __future__ import annotations

import numpy as np
import pytest

from geneb.constraints import SEED, ListOf, validate_params, validated_list
from geneb.errors import CorruptEntryError, ProbeError, TaskError
from geneb.probe.solvers.base import FitResult, ProbeFit, ProbeProblem
from geneb.tasks.windows import OK, Windows


def test_validated_list_is_the_decorators_tuple():
    @validate_params({"seeds": ListOf(SEED)})
    def seeds_of(seeds: str | list[int]) -> tuple[int, ...]:
        return validated_list(seeds, int)

    assert seeds_of("13, 17") == (13, 17)  # the comma string, parsed by the decorator
    assert seeds_of([42]) == (42,)
    with pytest.raises(TypeError, match="tuple of int"):
        validated_list("13,17", int)  # a value that skipped the decorator
    with pytest.raises(TypeError, match="tuple of int"):
        validated_list(("13",), int)


def test_alternate_windows_only_of_variants_that_have_one():
    win = Windows(window=4, status=np.array([OK, "window_outside_reference", OK], dtype=object),
                  ref_id=np.array([0, -1, 0]), ref_windows=["ACGT"],
                  alt_windows=["ACCT", None, "AGGT"], ref_keys=[(0, 0)])
    assert win.alts_of(np.array([0, 2])) == ["ACCT", "AGGT"]
    with pytest.raises(TaskError, match="variant 1 has no window"):
        win.alts_of([0, 1])


def test_fit_without_probabilities_names_itself():
    fit = FitResult(proba=None, n_iter=1, converged=True, fit_seconds=0.0, backend="svd")
    with pytest.raises(ProbeError, match="no class probabilities .*svd"):
        fit.class_proba()
    proba = np.full((2, 2), 0.5)
    assert FitResult(proba, 1, True, 0.0).class_proba() is proba


def test_ridge_fit_without_alpha_is_refused():
    from geneb.probe.solvers.ridge import RidgeSolver

    rng = np.random.default_rng(0)
    problem = ProbeProblem(X_train=rng.normal(size=(6, 2)), y_train=rng.normal(size=6),
                           X_test=rng.normal(size=(3, 2)), n_classes=0)
    fit = ProbeFit(regime="full", k=None, seed=0, C=float("nan"), train_idx=np.arange(6))
    with pytest.raises(ProbeError, match="needs alpha"):
        RidgeSolver().solve(problem, [fit])


def test_zarr_group_where_the_embeddings_array_belongs():
    import zarr

    from geneb.store import FeatureStore, Provenance, StoreKey

    url = "memory://geneb-typed-invariants"
    key = StoreKey("m", "t", "train")
    st = FeatureStore(url, "a")
    with st.writer(key, provenance=Provenance("m", "rev", "t", "sha256:f"),
                   labels=np.zeros(3, np.int64), rows=np.arange(3), dim=2) as w:
        w.append(np.ones((3, 2), np.float32))
    g = zarr.open_group(url, mode="a")[key.path]
    assert isinstance(g, zarr.Group)
    del g["embeddings"]
    g.create_group("embeddings")
    with pytest.raises(CorruptEntryError, match="embeddings .* is a group, expected an array"):
        FeatureStore(url).get("m", "t", "train")
