"""The model families as a user runs them: `geneb extract`, `geneb run`, `geneb vep score`,
model-code failures as one line, and DNABERT-2 on a CPU with `triton` importable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_families import (
    FAMILIES,
    NEEDS_TF4,
    TF_MAJOR,
    assert_rows_close,
    folder,
    real_sequences,
    reference,
)
from test_run_real_model import capped_task

pytestmark = pytest.mark.families
REPO = Path(__file__).resolve().parents[1]


def geneb_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "geneb", *args], capture_output=True, text=True, env=full_env,
        cwd=REPO, timeout=600,
    )


def copy_model(src: Path, dst: Path, skip: tuple[str, ...] = ()) -> Path:
    dst.mkdir(parents=True)
    for p in src.iterdir():
        if p.is_file() and p.name not in skip:
            (dst / p.name).write_bytes(p.read_bytes())
    return dst


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def _null_auto_map(models_dir: Path, tmp: Path) -> tuple[Path, list[str]]:
    d = copy_model(models_dir / FAMILIES["gena"], tmp / "null-auto-map")
    cfg = json.loads((d / "config.json").read_text())
    cfg["auto_map"] = None
    (d / "config.json").write_text(json.dumps(cfg))
    return d, ["auto_map must be a JSON object"]


def _code_import_error(models_dir: Path, tmp: Path) -> tuple[Path, list[str]]:
    d = copy_model(models_dir / FAMILIES["gena"], tmp / "import-error")
    code = d / "modeling_bert.py"
    code.write_text("import geneb_no_such_package_xyz\n" + code.read_text())
    return d, ["loading its model code and weights failed", "geneb_no_such_package_xyz"]


def _refused_pickle(models_dir: Path, tmp: Path) -> tuple[Path, list[str]]:
    """A pytorch_model.bin holding a global that torch's weights-only unpickler refuses."""
    import datetime

    import torch

    d = copy_model(models_dir / "tiny" / "tiny-bert-dnabert2-bpe", tmp / "pickle",
                   skip=("model.safetensors",))
    torch.save({"when": datetime.datetime(2024, 1, 1)}, d / "pytorch_model.bin")
    return d, ["cannot load the weights", "UnpicklingError"]


@pytest.mark.parametrize("case", [_null_auto_map, _code_import_error, _refused_pickle])
def test_model_code_failures_are_one_line(case, models_dir: Path, tmp_path: Path) -> None:
    model, expect = case(models_dir, tmp_path)
    store = tmp_path / "store.zarr"
    proc = geneb_cli("extract", "--store", str(store), "--model", str(model),
                     "--trust-remote-code", "--task", "syn_cpg_island")
    line = one_error_line(proc)
    assert model.name in line
    for text in expect:
        assert text in line, line
    assert not store.exists(), "nothing may be written"


def test_dnabert2_with_triton_importable_takes_the_pytorch_path(
    models_dir: Path, data_dir: Path, tmp_path: Path
) -> None:
    """With `triton` importable, DNABERT-2's code takes its Triton attention, which asserts
    ``q.is_cuda`` on a CPU. geneb hides GPU-kernel packages from model code on a CPU run."""
    if TF_MAJOR >= 5:
        pytest.skip("DNABERT-2 code needs transformers 4.x")
    site = os.environ.get("GENEB_TRITON_SITE", "")
    if not site:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI=true but GENEB_TRITON_SITE is not set (.ci/run installs triton)")
        pytest.skip("set GENEB_TRITON_SITE to a folder with triton installed (pip --target)")
    path = folder(models_dir, "dnabert2")
    seqs = real_sequences(data_dir, 8)
    out = tmp_path / "emb.npy"
    script = (
        "import sys, numpy as np, importlib.util, geneb\n"
        "assert importlib.util.find_spec('triton') is not None, 'triton not importable'\n"
        f"e = geneb.get_embedder({str(path)!r}, trust_remote_code=True, device='cpu')\n"
        f"np.save({str(out)!r}, e.embed({seqs!r}))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([site, str(REPO)])}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_rows_close(np.load(out), reference(path, "dnabert2", seqs))


def _plan(models: list[tuple[str, Path, bool]], task: Path) -> str:
    tables = "".join(
        f'\n[[models]]\nmodel = "{p}"\nname = "{n}"\ntrust_remote_code = {str(t).lower()}\n'
        for n, p, t in models
    )
    return f"""store = "store.zarr"
out = "out"
{tables}
[tasks]
folders = ["{task}"]

[probe]
shots = ["full"]
seeds = [13]
C = [1.0]
backend = "fast"
workers = 1
standardize = true
"""


@pytest.mark.slow
def test_geneb_run_with_every_family(models_dir: Path, data_dir: Path, tmp_path: Path) -> None:
    fams = [f for f in sorted(FAMILIES) if not (TF_MAJOR >= 5 and f in NEEDS_TF4)]
    models = [(f, folder(models_dir, f), f != "gpn") for f in fams]
    task = capped_task(data_dir, "dhs_idhs_fflg", 10, tmp_path / "tasks")
    plan = tmp_path / "plan.toml"
    plan.write_text(_plan(models, task))
    proc = geneb_cli("run", str(plan))
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert sorted(res["model"].unique()) == fams
    assert (tmp_path / "out" / "report" / "index.html").is_file()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_vep_score_runs_every_family(family: str, models_dir: Path, tmp_path: Path) -> None:
    if TF_MAJOR >= 5 and family in NEEDS_TF4:
        pytest.skip("family code needs transformers 4.x")
    variants = models_dir.parent / "variants" / "brca1_findlay2018"
    scorers = ["cosine", "l2"] + (["llr"] if family != "hyena" else [])
    out = tmp_path / "scores.csv"
    args = ["vep", "score", "--task", str(variants), "--model", str(folder(models_dir, family)),
            "--limit", "4", "--window", "64", "--out", str(out)]
    for s in scorers:
        args += ["--scorer", s]
    if family != "gpn":
        args.append("--trust-remote-code")
    if family == "hyena":  # a fresh process, as a user runs it (hyena also runs under tf 5.x)
        proc = geneb_cli(*args)
        assert proc.returncode == 0, proc.stderr[-3000:]
    else:  # the same command in this process: an interpreter start less per family
        from typer.testing import CliRunner

        from geneb.cli import app

        r = CliRunner().invoke(app, args)
        assert r.exit_code == 0, r.output[-3000:]
    df = pd.read_csv(out)
    assert sorted(df["scorer"].unique()) == sorted(scorers)
    ok = df[df["status"] == "ok"]
    assert set(ok["scorer"]) == set(scorers), df[["scorer", "status"]].value_counts()
