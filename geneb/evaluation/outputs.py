"""What a model's methods may return to ``task.evaluate(model)``, checked before any metric.

One home for the output contract of the task API (geneb's methods and GFMBench-API's): every
value a model returns goes through :func:`model_array`, which refuses, in one ``GenebError``
naming the method and what was expected, anything that is not a numeric array of the expected
shape: strings, arbitrary objects, ragged lists, generators and iterators (a model must return
the whole batch, not a lazy stream), complex numbers, NaN or infinite values, values beyond
float32's range (|x| > 3.4e38: geneb stores and probes embeddings in float32, and 1e308
overflows the probe's arithmetic), an empty width (an ``(n, 0)`` embedding has nothing to
probe). Arrays, lists of rows, tuples, numpy scalars and objects with ``__array__`` (torch
tensors on the CPU) are accepted.

``predict`` on a classification task (:func:`class_probabilities`) may return

- ``(n, K)`` class probabilities: each in [0, 1], each row summing to 1 (within 1e-5, the
  tolerance GFMBench-API asserts);
- ``(n,)`` class ids: integers in ``0..K-1`` (metrics from hard classes; no AUROC);
- on a binary task, ``(n,)`` probabilities of class 1 (values in [0, 1], not all 0 or 1):
  read as ``[1 - p, p]``, never cast to class ids.

Anything else is refused. On a regression task ``predict`` returns ``(n,)`` finite values.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from geneb.errors import GenebError

#: The largest magnitude accepted in a model's output (float32's largest finite value).
MAX_ABS = float(np.finfo(np.float32).max)
#: How far a row of class probabilities may sum from 1 (GFMBench-API's assertion).
PROBA_SUM_TOL = 1e-5


def _describe(value: Any) -> str:
    return type(value).__name__


def _as_numeric(value: Any, method: str, expected: str) -> np.ndarray:
    """``value`` as a float64 array, or a GenebError saying what it was instead."""
    if value is None:
        raise GenebError(f"model.{method} returned None; expected {expected}")
    if isinstance(value, (str, bytes)):
        raise GenebError(f"model.{method} returned a {_describe(value)}; expected {expected}")
    if isinstance(value, (Iterator, set, frozenset, dict)) or (
        not isinstance(value, (np.ndarray, np.generic, list, tuple, int, float))
        and not hasattr(value, "__array__")
    ):
        raise GenebError(
            f"model.{method} returned a {_describe(value)}; expected {expected} "
            "(a numpy array or a list of rows, the whole batch at once)"
        )
    try:
        raw = np.asarray(value)
    except ValueError as e:  # ragged rows (numpy >= 1.24 refuses them)
        raise GenebError(f"model.{method} returned rows of unequal length or mixed types "
                         f"({str(e).splitlines()[0][:100]}); expected {expected}") from None
    except TypeError as e:  # e.g. a tensor on a GPU
        raise GenebError(f"model.{method} returned a {_describe(value)} numpy cannot read "
                         f"({str(e).splitlines()[0][:100]}); expected {expected} on the "
                         "CPU") from None
    if raw.dtype.kind not in "biuf":
        what = {"U": "strings", "S": "bytes", "O": "objects (ragged or mixed rows)",
                "c": "complex numbers"}.get(raw.dtype.kind, f"dtype {raw.dtype}")
        raise GenebError(f"model.{method} returned {what}; expected {expected}")
    return raw.astype(np.float64)


def _check_values(arr: np.ndarray, method: str) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        kind = "NaN" if np.isnan(arr[bad]).any() else "infinite"
        raise GenebError(f"model.{method} returned {int(bad.sum())} {kind} value(s) of "
                         f"{arr.size}; expected finite numbers")
    big = np.abs(arr) > MAX_ABS
    if big.any():
        raise GenebError(f"model.{method} returned {int(big.sum())} value(s) beyond float32's "
                         f"range (largest {float(np.abs(arr).max()):.3g}); expected "
                         f"|x| <= {MAX_ABS:.3g}")


def model_array(value: Any, method: str, shape: tuple[int | None, ...], what: str = "",
                ) -> np.ndarray:
    """A model's output as a checked float64 array of ``shape`` (``None``: any size >= 1).

    Parameters
    ----------
    value : object
        What the model's method returned.
    method : str
        The method's name, for messages (``embed``, ``infer_sequence_to_sequence``, ...).
    shape : tuple of int or None
        The expected shape; ``None`` in a position accepts any size of at least 1.
    what : str
        What the array holds, for messages (``"embeddings"``).

    Returns
    -------
    numpy.ndarray
        float64, of ``shape``, finite and within float32's range.
    """
    dims = ", ".join("d" if s is None else str(s) for s in shape)
    free = " with d >= 1" if None in shape else ""
    expected = (f"shape ({dims}{',' if len(shape) == 1 else ''}){free}"
                f"{' ' + what if what else ''}")
    arr = _as_numeric(value, method, expected)
    ok = arr.ndim == len(shape) and all(
        (s is None and n >= 1) or n == s for n, s in zip(arr.shape, shape, strict=False))
    if not ok:
        raise GenebError(f"model.{method} returned shape {arr.shape}; expected {expected}")
    _check_values(arr, method)
    return arr


def class_probabilities(value: Any, method: str, n: int, n_classes: int,
                        ) -> tuple[np.ndarray, np.ndarray | None]:
    """``(proba (n, K), class ids or None)`` of a classifier's output (module docstring).

    Class ids come back with one-hot ``proba`` (hard classes rank nothing: callers drop AUROC).
    """
    arr = _as_numeric(value, method, f"shape ({n}, {n_classes}) class probabilities or "
                                      f"({n},) class ids")
    if arr.ndim == 2:
        arr = model_array(arr, method, (n, n_classes), "class probabilities")
        check_probabilities(arr, method, rows_sum_to_one=True)
        return arr, None
    arr = model_array(arr, method, (n,), "class ids or P(class 1)")
    integral = bool(np.all(arr == np.round(arr)))
    if integral:
        if arr.min() < 0 or arr.max() >= n_classes:
            raise GenebError(f"model.{method} returned class ids in {arr.min():g}..{arr.max():g}"
                             f"; expected ids in 0..{n_classes - 1}")
        ids = arr.astype(np.int64)
        return np.eye(n_classes)[ids], ids
    if n_classes != 2:
        raise GenebError(f"model.{method} returned non-integer values of shape ({n},) on a "
                         f"{n_classes}-class task; expected ({n}, {n_classes}) class "
                         f"probabilities or ({n},) class ids")
    check_probabilities(arr, method, rows_sum_to_one=False)
    return np.stack([1.0 - arr, arr], axis=1), None


def check_probabilities(arr: np.ndarray, method: str, *, rows_sum_to_one: bool) -> None:
    """Refuse probabilities outside [0, 1] (and rows not summing to 1 when asked)."""
    if arr.min() < 0 or arr.max() > 1:
        raise GenebError(f"model.{method} returned probabilities in [{arr.min():.3g}, "
                         f"{arr.max():.3g}]; expected values in [0, 1]")
    if rows_sum_to_one:
        sums = arr.sum(axis=1)
        if not np.allclose(sums, 1.0, atol=PROBA_SUM_TOL, rtol=0):
            raise GenebError(f"model.{method} returned class probabilities whose rows sum to "
                             f"{sums.min():.6g}..{sums.max():.6g}; expected each row to sum "
                             f"to 1 (within {PROBA_SUM_TOL:g})")
