"""Protocol invariants: which rows each probe sees, independent of model and entry order."""

from __future__ import annotations

import numpy as np
import pytest

from geneb import protocol
from geneb.constraints import ParamError, validate
from geneb.errors import ProbeError
from geneb.probe.engine import PROBE_PARAMS

FP = "sha256:" + "ab" * 32


def _labels(n=300, k=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, k, n).astype(np.int64), np.arange(n, dtype=np.int64) * 2 + 5


@pytest.mark.parametrize("k", [1, 10])
def test_exactly_k_rows_per_class_and_distinct(k):
    y, rows = _labels()
    s = protocol.kshot_rows(y, rows, k=k, seed=42, task_fingerprint=FP, n_classes=3)
    counts = np.bincount(y[s.positions], minlength=3)
    assert counts.tolist() == [k, k, k]
    assert len(np.unique(s.positions)) == 3 * k
    assert np.array_equal(s.file_rows, rows[s.positions])
    assert np.all(np.diff(s.file_rows) > 0)  # ascending file rows
    assert not s.took_all


def test_same_rows_whatever_the_entry_order():
    """Two models' entries may list the rows in another order: the file rows must not change."""
    y, rows = _labels()
    perm = np.random.default_rng(1).permutation(len(y))
    a = protocol.kshot_rows(y, rows, k=10, seed=13, task_fingerprint=FP, n_classes=3)
    b = protocol.kshot_rows(y[perm], rows[perm], k=10, seed=13, task_fingerprint=FP, n_classes=3)
    assert np.array_equal(a.file_rows, b.file_rows)
    assert np.array_equal(perm[b.positions], a.positions)


def test_five_seeds_five_distinct_samples_and_no_chaining():
    y, rows = _labels()
    seeds = (13, 17, 42, 123, 997)
    samples = [
        tuple(protocol.kshot_rows(y, rows, k=10, seed=s, task_fingerprint=FP, n_classes=3)
              .file_rows)
        for s in seeds
    ]
    assert len(set(samples)) == 5
    # drawing seed 42 alone (no earlier draws) gives the same rows: one RNG per (task, k, seed)
    alone = protocol.kshot_rows(y, rows, k=10, seed=42, task_fingerprint=FP, n_classes=3)
    assert tuple(alone.file_rows) == samples[2]
    other_task = protocol.kshot_rows(y, rows, k=10, seed=42, task_fingerprint=FP + "x",
                                     n_classes=3)
    assert tuple(other_task.file_rows) != samples[2]
    other_k = protocol.kshot_rows(y, rows, k=1, seed=42, task_fingerprint=FP, n_classes=3)
    assert set(other_k.file_rows) != set(samples[2][:3])


def test_rng_is_a_hash_of_task_k_seed():
    import hashlib

    blob = f"geneb-probe-v1|{FP}|10|42".encode()
    expect = np.random.default_rng(int.from_bytes(hashlib.sha256(blob).digest()[:16], "little"))
    assert protocol.sample_rng(FP, 10, 42).random() == expect.random()


def test_too_few_rows_is_an_error_unless_take_all():
    y = np.array([0] * 20 + [1] * 4 + [2] * 30)
    rows = np.arange(len(y))
    with pytest.raises(ProbeError, match=r"task 'tiny': class 1 has only 4 train row\(s\).*k=10"):
        protocol.kshot_rows(y, rows, k=10, seed=1, task_fingerprint=FP, n_classes=3, task="tiny")
    s = protocol.kshot_rows(y, rows, k=10, seed=1, task_fingerprint=FP, n_classes=3,
                            take_all=True)
    assert s.took_all
    assert np.bincount(y[s.positions], minlength=3).tolist() == [10, 4, 10]


def test_full_regime_all_rows_below_cap():
    y, rows = _labels(50)
    s = protocol.full_rows(y[::-1], rows[::-1], task_fingerprint=FP, n_classes=3)
    assert sorted(s.file_rows.tolist()) == sorted(rows.tolist())


def test_full_regime_stratified_subsample_above_cap():
    rng = np.random.default_rng(3)
    y = rng.choice(3, size=5000, p=[0.7, 0.25, 0.05]).astype(np.int64)
    rows = np.arange(len(y))
    cap = 1000
    s = protocol.full_rows(y, rows, task_fingerprint=FP, n_classes=3, cap=cap)
    assert len(s.positions) == cap == len(np.unique(s.positions))
    expect = np.bincount(y, minlength=3) * cap / len(y)
    got = np.bincount(y[s.positions], minlength=3)
    assert np.all(np.abs(got - expect) < 1.0)
    again = protocol.full_rows(y, rows, task_fingerprint=FP, n_classes=3, cap=cap)
    assert np.array_equal(s.positions, again.positions)
    # the full regime does not depend on the seed
    for seed in (13, 997):
        d = protocol.draw("full", y, rows, seed=seed, task_fingerprint=FP, n_classes=3, cap=cap)
        assert np.array_equal(d.positions, s.positions)


def test_default_cap_is_geneb_100k():
    import inspect

    from geneb.tasks.loader import load_task_folder

    assert protocol.TRAIN_ROW_CAP == 100_000
    assert inspect.signature(load_task_folder).parameters["train_row_cap"].default == 100_000


@pytest.mark.parametrize(
    "name,arg,msg",
    [  # run_probes' own declaration (what geneb.probe.parse checked before, issue 20)
        ("shots", "1,ten", r"shots\[1\]: expected 'full' or a positive int k"),
        ("shots", "0", r"shots\[0\]: expected 'full' or a positive int k .*got '0'"),
        ("seeds", "13,-1", r"seeds\[1\]: expected a non-negative int, got -1"),
        ("Cs", "1,0", r"Cs\[1\]: expected a positive number, got 0"),
        ("Cs", "abc", r"Cs\[0\]: expected a positive number, got 'abc'"),
        ("Cs", "", "Cs: expected at least 1 entry, got an empty list"),
    ],
)
def test_parse_errors(name, arg, msg):
    with pytest.raises(ParamError, match=msg) as e:
        validate(PROBE_PARAMS[name], arg, name)
    assert e.value.param == name


def test_parse_ok():
    assert validate(PROBE_PARAMS["shots"], "1, 10,full,10", "shots") == ("1", "10", "full")
    assert validate(PROBE_PARAMS["shots"], [1, "010", "FULL"], "shots") == ("1", "10", "full")
    assert validate(PROBE_PARAMS["seeds"], [13, "17"], "seeds") == (13, 17)
    assert validate(PROBE_PARAMS["Cs"], "0.01,0.1,1,10,100", "Cs") == (0.01, 0.1, 1.0, 10.0, 100.0)
