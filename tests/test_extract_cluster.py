"""Extraction over a Dask cluster: a local cluster of 2 CPU worker processes (1 thread each)
writing one store gives entries byte-identical to a single-process run, and a worker killed
mid-job (SIGKILL) is resumed to complete, identical entries."""

from __future__ import annotations

import functools
import os
import signal
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geneb.errors import GenebError
from geneb.extract.distributed import extract_on_cluster, plan_jobs
from geneb.extract.runner import extract
from geneb.store import FeatureStore

TASKS = ("dhs_idhs_fflg", "methyl_4mc_c_equisetifolia")
TINY = "tiny-bert-dnabert2-bpe"


def _kill_once(marker: str, model: str, key, done: int, n: int) -> None:
    """on_block hook run in a worker: the first time the entry of ``model`` has some rows
    on disk, SIGKILL this worker process (mid-job: the nanny restarts it)."""
    if key.model == model and done < n and not os.path.exists(marker):
        Path(marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)


def _entries(path: Path) -> dict:
    fs = FeatureStore(path, "r")
    out = {}
    for k in fs.keys():
        assert fs.status(k) == "complete", k
        e = fs.get(k.model, k.task, k.split)
        out[(k.model, k.task, k.split)] = (e.embeddings.tobytes(), e.labels.tobytes(),
                                          e.rows.tobytes(), e.provenance.identity())
    return out


def test_plan_jobs_split_tasks_when_workers_outnumber_models():
    assert plan_jobs(["a", "b"], ["t1", "t2", "t3"], 2) == [("a", ["t1", "t2", "t3"]),
                                                             ("b", ["t1", "t2", "t3"])]
    assert plan_jobs(["a"], ["t1", "t2", "t3"], 2) == [("a", ["t1", "t2"]), ("a", ["t3"])]
    assert plan_jobs(["a"], ["t1"], 8) == [("a", ["t1"])]


def test_bad_arguments_fail_before_any_cluster(tmp_path, data_dir):
    with pytest.raises(GenebError, match="exactly one of workers"):
        extract_on_cluster(tmp_path / "s", "kmer-3", "x", workers=2, scheduler="tcp://a:1")
    with pytest.raises(GenebError, match="workers must be >= 1, got 0"):
        extract_on_cluster(tmp_path / "s", "kmer-3", "x", workers=0)
    with pytest.raises(GenebError, match="unknown task 'dhs_idhs_fflgg'"):
        extract_on_cluster(tmp_path / "s", "kmer-3", "dhs_idhs_fflgg", workers=2,
                           data_dir=str(data_dir))
    assert not (tmp_path / "s").exists()


@pytest.mark.slow  # 27 s measured (pytest --durations=0)
@pytest.mark.timeout(240)
def test_cluster_equals_single_process_and_resumes_a_killed_worker(tmp_path, data_dir,
                                                                   models_dir):
    import cloudpickle
    import torch
    from distributed import Client, LocalCluster

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the hook runs on workers
    model = str(models_dir / "tiny" / TINY)
    tasks = [str(data_dir / t) for t in TASKS]
    opts = dict(block_rows=32, batch_tokens=2048, device="cpu")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in a 1-thread worker: the same kernels, the same bits
    try:
        ref = extract(tmp_path / "ref", ["kmer-4", model], tasks, **opts)
    finally:
        torch.set_num_threads(threads)
    marker = tmp_path / "killed.pid"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        pids_before = set(client.run(os.getpid).values())
        res = extract_on_cluster(
            tmp_path / "cl", ["kmer-4", model], tasks, client=client,
            on_block=functools.partial(_kill_once, str(marker), TINY), **opts)
        assert marker.exists(), "the hook never killed a worker"
        assert int(marker.read_text()) in pids_before  # a worker process really died
        # the killed job was retried by Dask and resumed where its verified rows ended
        assert any(r.action == "resume" for r in res), [(str(r.key), r.action) for r in res]
        # results in single-process order
        assert [str(r.key) for r in res] == [str(r.key) for r in ref]
        again = extract_on_cluster(tmp_path / "cl", ["kmer-4", model], tasks, client=client,
                                   **opts)
        assert {r.action for r in again} == {"skip"}
    assert _entries(tmp_path / "cl") == _entries(tmp_path / "ref")
    assert FeatureStore(tmp_path / "cl").verify() == []


@pytest.mark.timeout(180)
def test_cli_extract_with_workers(tmp_path, data_dir):
    from geneb.cli import app

    r = CliRunner().invoke(app, ["extract", "--store", str(tmp_path / "s"), "--model",
                                 "kmer-3", "--task", str(data_dir / TASKS[0]), "--task",
                                 str(data_dir / TASKS[1]), "--workers", "2"])
    assert r.exit_code == 0, r.output
    ref = extract(tmp_path / "ref", "kmer-3", [str(data_dir / t) for t in TASKS])
    assert len(ref) == 4
    assert _entries(tmp_path / "s") == _entries(tmp_path / "ref")
    bad = CliRunner().invoke(app, ["extract", "--store", str(tmp_path / "s"), "--model",
                                   "kmer-3", "--task", "nope", "--workers", "2",
                                   "--scheduler", "tcp://127.0.0.1:1"])
    assert bad.exit_code == 2 and "exactly one of workers" in bad.output


def _plan(tmp_path: Path, data_dir: Path, extract_table: str = "") -> Path:
    folders = ", ".join(f'"{data_dir / t}"' for t in TASKS)
    plan = tmp_path / "plan.toml"
    plan.write_text(f"""
store = "store.zarr"
out = "out"
[[models]]
model = "kmer-2"
[tasks]
folders = [{folders}]
[probe]
shots = ["10", "full"]
seeds = [13]
C = [1.0]
probes = ["linear", "mlp"]
standardize = true
[report]
enabled = false
{extract_table}
""")
    return plan


@pytest.mark.timeout(240)
def test_geneb_run_with_workers(tmp_path, data_dir):
    """`geneb run --workers 2`: extraction and probing (the torch MLP included) on a local
    cluster; the store equals a single-process extraction, the MLP rows say backend torch."""
    import pandas as pd

    from geneb.cli import app

    r = CliRunner().invoke(app, ["run", str(_plan(tmp_path, data_dir)), "--workers", "2"])
    assert r.exit_code == 0, r.output
    ref = extract(tmp_path / "ref", "kmer-2", [str(data_dir / t) for t in TASKS])
    assert len(ref) == 4
    assert _entries(tmp_path / "store.zarr") == _entries(tmp_path / "ref")
    res = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert len(res) == 2 * 2 * 2  # tasks x regimes x probes
    assert set(res.loc[res.probe == "mlp", "backend"]) == {"torch"}


def test_plan_extract_cluster_keys(tmp_path, data_dir):
    from geneb.errors import PlanError
    from geneb.pipeline.plan import load_plan

    p = load_plan(_plan(tmp_path, data_dir, "[extract]\nworkers = 3\n"))
    assert p.extract_workers == 3 and p.extract_scheduler is None
    p = load_plan(_plan(tmp_path, data_dir, '[extract]\nscheduler = "tcp://h:8786"\n'))
    assert p.extract_scheduler == "tcp://h:8786" and p.extract_workers is None
    with pytest.raises(PlanError, match=r"\[extract\] workers, scheduler: give one of them"):
        load_plan(_plan(tmp_path, data_dir,
                        '[extract]\nworkers = 2\nscheduler = "tcp://h:8786"\n'))
    with pytest.raises(PlanError, match=r"\[extract\] workers: expected .*, got 0"):
        load_plan(_plan(tmp_path, data_dir, "[extract]\nworkers = 0\n"))
