"""Parameter constraints (geneb.params) and the plan cases of issue 15: every bad value is
refused before any work, naming the section and key, with strict types."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from geneb import constraints as cs
from geneb.cli import app
from geneb.errors import GenebError, PlanError
from geneb.pipeline.plan import load_plan

GOOD = """
store = "work/store.zarr"
out = "work/out"

[[models]]
model = "kmer-3"

[tasks]
names = ["syn_promoter_tata"]

[probe]
shots = ["1", "full"]
seeds = [13, 17]
C = [0.1, 1]
probes = ["linear"]
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "plan.toml"
    p.write_text(text)
    return p


# ---------------------------------------------------------------- the constraint objects


@pytest.mark.parametrize(
    ("constraint", "good", "bad"),
    [
        (cs.SEED, [0, 13, 2**40], [-1, 1.0, True, "13", None]),
        (cs.C_VALUE, [1e-9, 1, 0.5, 100], [0, -1, float("inf"), float("nan"), True, "1"]),
        (cs.POSITIVE_INT, [1, 512], [0, -5, 1.5, "512", False]),
        (cs.LAYER, [-1, 0, 12], ["last", 1.0, True]),
        (cs.BOOL, [True, False], ["false", "true", 0, 1, None]),
        (cs.POOLING, ["mean", "mean_nonspecial", "cls", "last", "max"], ["min", "MEAN", 1]),
        (cs.STORAGE_DTYPE, ["float32", "float16"], ["float64", "bfloat16"]),
        (cs.SHOT, ["full", "1", "10", 1, 10], ["0", 0, "one", -1, "FULL", True]),
        (cs.SCHEDULER, ["tcp://h:8786", "host:8786"], [5, "big", ""]),
        (cs.DEVICE, ["auto", "cpu", "cuda", "cuda:1", "mps"], ["gpu", "cuda:", 0]),
    ],
)
def test_constraints_accept_and_refuse(constraint, good, bad):
    for v in good:
        assert constraint.is_satisfied_by(v), v
        assert constraint.check(v, "x") == v
    for v in bad:
        assert not constraint.is_satisfied_by(v), v
        with pytest.raises(cs.ParamError, match=r"^x: expected .*, got "):
            constraint.check(v, "x")


def test_interval_descriptions_and_bounds():
    assert cs.SEED.description == "a non-negative int"
    assert cs.C_VALUE.description == "a positive number"
    assert cs.POSITIVE_INT.description == "a positive int"
    assert cs.Interval(float, 0, 1, closed="neither").description == "a number in (0, 1)"
    half_open = cs.Interval(float, 0, 1, closed="left")
    assert half_open.is_satisfied_by(0) and not half_open.is_satisfied_by(1)


def test_list_names_the_entry():
    with pytest.raises(cs.ParamError) as e:
        cs.ListOf(cs.SEED).check([1, 2, -3], "seeds")
    assert str(e.value) == "seeds[2]: expected a non-negative int, got -3"
    assert cs.ListOf(cs.C_VALUE).check(1, "C") == [1]  # a lone value is a list of one
    with pytest.raises(cs.ParamError, match="at least 1 entry"):
        cs.ListOf(cs.SEED).check([], "seeds")


def test_errors_are_geneb_errors():
    assert issubclass(cs.ParamError, GenebError)


# ---------------------------------------------------------------- issue 15: plan cases

CASES = [
    ("C = [0.1, 1]", "C = [-1]", "[probe] C[0]: expected a positive number, got -1"),
    ("seeds = [13, 17]", "seeds = [-3]", "[probe] seeds[0]: expected a non-negative int, got -3"),
    ('model = "kmer-3"', 'model = "kmer-3"\npooling = "min"',
     "[[models]] #1 pooling: expected one of 'mean', 'mean_nonspecial', 'cls', 'max', 'last', "
     "got 'min'"),
    ('model = "kmer-3"', 'model = "kmer-3"\nstorage_dtype = "float64"',
     "[[models]] #1 storage_dtype: expected one of 'float32', 'float16', got 'float64'"),
    ('model = "kmer-3"', 'model = "kmer-3"\nbatch_tokens = "big"',
     "[[models]] #1 batch_tokens: expected a positive int, got 'big'"),
    ('model = "kmer-3"', 'model = "kmer-3"\nlayer = "last"',
     "[[models]] #1 layer: expected an int, got 'last'"),
    ('model = "kmer-3"', 'model = "kmer-3"\nmax_length = "512"',
     "[[models]] #1 max_length: expected a positive int, got '512'"),
    ('model = "kmer-3"', 'model = "kmer-3"\ntrust_remote_code = "false"',
     "[[models]] #1 trust_remote_code: expected a bool (true or false), got 'false'"),
    ('probes = ["linear"]', 'probes = ["linear"]\nscheduler = 5',
     "[probe] scheduler: expected a Dask scheduler address"),
    ('probes = ["linear"]', 'probes = ["linear"]\n[extract]\nbatch_tokens = "big"',
     "[extract] batch_tokens: expected a positive int, got 'big'"),
    ('probes = ["linear"]', 'probes = ["linear"]\n[report]\nC = [0.5]',
     "[report] C[0]: expected one of the probed [probe] C values (0.1, 1), got 0.5"),
    ('probes = ["linear"]', 'probes = ["linear"]\n[report]\nshots = ["10"]',
     "[report] shots[0]: expected one of the probed [probe] shots (1, full), got '10'"),
    ('probes = ["linear"]', 'probes = ["linear"]\n[report]\nenabled = "yes"',
     "[report] enabled: expected a bool (true or false), got 'yes'"),
    ("seeds = [13, 17]", "seed = 13", "unknown key 'seed' in [probe]. Did you mean 'seeds'?"),
    ('names = ["syn_promoter_tata"]', 'name = ["syn_promoter_tata"]',
     "unknown key 'name' in [tasks]"),
    ('model = "kmer-3"', 'model = "kmer-3"\nmax_len = 3', "unknown key 'max_len' in [[models]] #1"),
    ('out = "work/out"', 'out = 5', "out: expected a path (a non-empty string), got 5"),
]


@pytest.mark.parametrize(("old", "new", "expected"), CASES)
def test_plan_values_refused_with_section_and_key(tmp_path, old, new, expected):
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(PlanError) as err:
        load_plan(path)
    assert str(err.value) == f"{path}: {expected}" or str(err.value).startswith(
        f"{path}: {expected}"
    ), str(err.value)


def test_report_c_scalar_is_a_list_of_one(tmp_path):
    plan = load_plan(write(tmp_path, GOOD + "\n[report]\nC = 1\n"))
    assert plan.report_Cs == (1.0,)


def test_out_that_is_an_existing_file_is_refused(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "out").write_text("not a folder")
    with pytest.raises(PlanError, match=r"out: expected a folder \(new or existing\), got .*"
                       r"which is an existing file"):
        load_plan(write(tmp_path, GOOD))


@pytest.mark.parametrize(("old", "new"), [(c[0], c[1]) for c in CASES[:2] + CASES[10:11]])
def test_cli_run_refuses_before_any_work(tmp_path, old, new):
    """`geneb run` on the bad plans of issue 15: exit 2, one line, no store and no results."""
    path = write(tmp_path, GOOD.replace(old, new, 1))
    r = CliRunner().invoke(app, ["run", str(path)])
    assert r.exit_code == 2, r.output
    assert r.output.startswith("error: ") and "Traceback" not in r.output
    assert not (tmp_path / "work").exists()


def test_cli_run_refuses_a_foreign_report_folder_before_work(tmp_path):
    report = tmp_path / "work" / "out" / "report"
    (report / "tables").mkdir(parents=True)
    (report / "tables" / "mine.csv").write_text("a\n1\n")
    r = CliRunner().invoke(app, ["run", str(write(tmp_path, GOOD))])
    assert r.exit_code == 2 and "did not write" in r.output, r.output
    assert not (tmp_path / "work" / "store.zarr").exists()
    assert (report / "tables" / "mine.csv").read_text() == "a\n1\n"


# ---------------------------------------------------------------- CLI options


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["probe", "--C", "-1"], "error: --C: expected a positive number, got -1"),
        (["probe", "--seeds", "13,-3"], "error: --seeds: expected a non-negative int, got -3"),
        (["probe", "--shots", "0"], "error: --shots: expected 'full' or a positive int"),
        (["probe", "--backend", "gpu"], "error: --backend: expected one of"),
        (["probe", "--scheduler", "5"], "error: --scheduler: expected a Dask scheduler"),
        (["extract", "--batch-tokens", "0"], "error: --batch-tokens: expected a positive int"),
        (["extract", "--pooling", "min"], "error: --pooling: expected one of 'mean'"),
        (["extract", "--storage-dtype", "float64"], "error: --storage-dtype: expected one of"),
        (["extract", "--max-length", "0"], "error: --max-length: expected a positive int"),
        (["report", "--C", "0"], "error: --C: expected a positive number, got 0"),
        (["report", "--shots", "0"], "error: --shots: expected 'full' or a positive int"),
        (["report", "--n-boot", "5"], "error: --n-boot: expected an int >= 100, got 5"),
        (["demo", "--n-train", "0"], "error: --n-train: expected a positive int, got 0"),
    ],
)
def test_cli_options_checked_before_work(tmp_path, args, expected):
    store = tmp_path / "store"
    base = {
        "probe": ["--store", str(store), "--results", str(tmp_path / "r.parquet")],
        "extract": ["--store", str(store), "--model", "kmer-3", "--task", "syn_promoter_tata"],
        "report": ["--results", str(tmp_path / "r.parquet"), "--out", str(tmp_path / "rep")],
        "demo": ["--out", str(tmp_path / "rep")],
    }[args[0]]
    r = CliRunner().invoke(app, [args[0], *base, *args[1:]])
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines()[-1].startswith(expected), r.output
    assert not store.exists() and not (tmp_path / "rep").exists()
