"""Extraction over a Dask cluster: (model, tasks) jobs spread over workers, one store.

Why this shape: loading a model is the expensive, memory-hungry step, so a job is one model
on a *set* of tasks; the worker that runs it loads the model once and works through those
tasks with the ordinary runner (``geneb.extract.runner.extract``), so every guarantee of a
single process holds unchanged:

* each (model, task, split) entry is written under the store's per-entry lock
  (``geneb.store.locking``: an ``flock`` on the entry's directory, released by the kernel
  when a worker dies), and a second run or job touching the same entry fails with
  ``EntryLockedError`` instead of interleaving rows;
* rows are verified on disk block by block, so a job whose worker was killed is resumed
  where its verified rows end, whether Dask retries it on another worker or the command is
  rerun; finished entries are skipped; stale entries are refused (per job, i.e. per model
  and task set, as the single-process runner refuses per model).

Jobs: each model's tasks are split into ``ceil(workers / models)`` chunks (at most one per
task), so a cluster with more workers than models still has work for every worker while no
worker loads a model more than once per chunk. Results come back in the order of a
single-process run (models, then tasks, then splits).

Clusters: ``scheduler="tcp://host:8786"`` uses a running cluster (the store must be on a file
system every worker sees); ``workers=N`` starts a local one: CPU worker processes with one
thread each, or, when ``device`` asks for CUDA, ``dask_cuda.LocalCUDACluster`` with one
worker per GPU, also for ``device="auto"`` on a GPU machine (``geneb.cluster``: ``cuda:N``
places one worker on the N-th GPU; each worker runs on its own GPU as ``cuda``).
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from geneb.cluster import as_completed, dask_client, job_device
from geneb.constraints import validate_all
from geneb.errors import GenebError, ModelError
from geneb.extract.runner import EXTRACT_PARAMS, ExtractResult, extract
from geneb.models.trust import trusted_models
from geneb.vocabulary import DEFAULT_DEVICE

if TYPE_CHECKING:
    from distributed import Client, Future

#: How long to wait for an existing scheduler to answer (checked before any work).


def plan_jobs(models: Sequence[str], tasks: Sequence[str], n_workers: int
              ) -> list[tuple[str, list[str]]]:
    """(model, task chunk) jobs: every model's tasks in ``ceil(n_workers / models)`` chunks
    (contiguous, in the given order; never more chunks than tasks)."""
    per_model = max(1, min(len(tasks), math.ceil(n_workers / max(1, len(models)))))
    jobs = []
    for m in models:
        size = math.ceil(len(tasks) / per_model)
        for a in range(0, len(tasks), size):
            jobs.append((m, list(tasks[a:a + size])))
    return jobs


def _job(store: str, model: str, tasks: list[str], splits: tuple[str, ...],
         kwargs: dict[str, Any]) -> list[ExtractResult]:
    """Runs on a worker: load ``model`` once, extract every split of every task in ``tasks``."""
    return extract(store, model, tasks, splits, **kwargs)


def extract_on_cluster(
    store: str | os.PathLike[str],
    models: str | Sequence[str],
    tasks: str | Sequence[str],
    splits: Sequence[str] = ("train", "test"),
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    client: Client | None = None,
    data_dir: str | None = None,
    device: str = DEFAULT_DEVICE,
    name: str | None = None,
    **kwargs: Any,
) -> list[ExtractResult]:
    """``geneb.extract.runner.extract`` with its (model, task) work spread over Dask workers.

    Give exactly one of ``scheduler`` (a running cluster), ``workers`` (a local cluster of
    that many workers, closed at the end) or ``client`` (a connected Dask client, kept open:
    several calls can share one cluster). ``models`` and ``tasks`` are specs/names as the
    runner takes them (strings: they travel to the workers); every other keyword goes to the
    runner unchanged.
    Bad arguments, unknown tasks and missing splits fail here, before any job starts.
    """
    task_list = [tasks] if isinstance(tasks, str) else list(tasks)
    splits_t = tuple([splits] if isinstance(splits, str) else splits)
    if sum(x is not None for x in (scheduler, workers, client)) != 1:
        raise GenebError("give exactly one of workers (a local cluster) or scheduler (an "
                         f"existing one), got workers={workers!r} and scheduler={scheduler!r}")
    if workers is not None and workers < 1:
        raise GenebError(f"workers must be >= 1, got {workers}")
    given = [models] if isinstance(models, str) else list(models)
    trust = dict(zip(given, trusted_models(kwargs.pop("trust_remote_code", False), given),
                     strict=True))  # per model, named as given (before folders go absolute)
    model_list = _checked_models(models, name)
    trusted = dict(zip(model_list, (trust[m] for m in given), strict=True))
    if not task_list:
        raise ModelError("tasks: no task given", param="tasks")
    if not isinstance(store, (str, os.PathLike)):
        raise GenebError("store must be a path on a cluster (workers open it themselves)")
    store_s = os.fspath(store)
    store_s = store_s if "://" in store_s else os.path.abspath(store_s)
    resolved = _resolved_tasks(task_list, splits_t, data_dir)
    if data_dir is not None:
        data_dir = os.path.abspath(data_dir)
    # the runner's declaration, checked here: a bad option fails before any cluster starts
    job_kwargs = validate_all(EXTRACT_PARAMS, dict(kwargs, device=device, name=name,
                                                   data_dir=data_dir))
    # bars from many workers would interleave: one bar here counts the finished jobs
    progress = bool(job_kwargs.pop("progress", False))
    with dask_client(scheduler=scheduler, workers=workers, client=client,
                     device=device) as client:
        job_kwargs["device"] = job_device(device, client)  # a GPU worker's own GPU: "cuda"
        # nthreads, gather and cancel: distributed's Client methods are unannotated
        n_workers = max(1, len(client.nthreads()) or (workers or 1))  # type: ignore[no-untyped-call]
        jobs = plan_jobs(model_list, resolved, n_workers)
        run = uuid.uuid4().hex[:8]
        futures = [client.submit(_job, store_s, m, ts, splits_t,
                                 {**job_kwargs, "trust_remote_code": trusted[m]}, pure=False,
                                 key=f"geneb-extract-{run}-{i}")
                   for i, (m, ts) in enumerate(jobs)]
        try:
            _count_done(futures, progress)
            results: list[list[ExtractResult]] = client.gather(  # type: ignore[no-untyped-call]
                futures)
        except BaseException:
            client.cancel(futures)  # type: ignore[no-untyped-call]
            raise
    return [r for job in results for r in job]


def _count_done(futures: list[Future[list[ExtractResult]]], progress: bool) -> None:
    """A ticking bar of the finished extraction jobs (on a terminal only); returns when all
    are done (a failed job is raised by the gather after)."""
    if not progress:
        return
    from geneb._progress import progress_bar

    bar = progress_bar(len(futures), True, desc="extracting", unit="job")
    try:
        for _ in as_completed(futures):
            bar.update(1)
    finally:
        bar.close()


def _checked_models(models: str | Sequence[str], name: str | None) -> list[str]:
    """The model specs as the workers get them: strings, local folders made absolute."""
    model_list = [models] if isinstance(models, str) else list(models)
    if not model_list:
        raise ModelError("models: no model given", param="models")
    if not all(isinstance(m, str) for m in model_list):
        raise ModelError("models must be spec strings on a cluster (they are loaded by the "
                         "workers), got a built embedder")
    # a local model folder travels as an absolute path (workers may run elsewhere)
    model_list = [os.path.abspath(m) if os.path.isdir(m) else m for m in model_list]
    if name is not None and len(model_list) != 1:
        raise ModelError(f"name: {name!r} names one model, but {len(model_list)} were given",
                         param="name")
    return model_list


def _resolved_tasks(task_list: list[str], splits: tuple[str, ...], data_dir: str | None
                    ) -> list[str]:
    """Tasks resolved here: a typo or a missing split fails before any worker loads a model;
    the workers get absolute task folders so they need no data_dir of their own."""
    from geneb.tasks.folders import resolve_task

    resolved = []
    for t in task_list:
        task = resolve_task(str(t), data_dir)
        for s in splits:
            task.split(s)
        resolved.append(os.path.abspath(t) if os.path.isdir(t) else str(t))
    return resolved
