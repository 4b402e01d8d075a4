"""`geneb extract`: embed tasks with models into a feature store (skip, resume or refuse)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from geneb.commands._common import cli_errors, console, show_progress
from geneb.vocabulary import (
    DEFAULT_DEVICE,
    DEFAULT_LAYER,
    DEFAULT_POOLING,
    DEFAULT_STORAGE_DTYPE,
    DEFAULT_STRANDS,
    DEFAULT_TRUNCATION,
)

# Options of `geneb extract`, declared once (the signature stays short).
StoreOpt = Annotated[str, typer.Option("--store", help="Feature store path (created if missing).")]
ModelOpt = Annotated[
    list[str],
    typer.Option(
        "--model",
        help="Model: kmer-K, minilm-text-control, a folder, a hub id, hf:<..>, "
        "random:<model>, or a plugin name (repeatable; see `geneb models list`).",
    ),
]
TaskOpt = Annotated[
    list[str],
    typer.Option(
        "--task", help="Task name from `geneb tasks list` or a task folder path (repeatable)."
    ),
]
SplitOpt = Annotated[
    list[str] | None,
    typer.Option("--split", help="Split(s) to embed (repeatable; default train and test)."),
]
BatchTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--batch-tokens",
        help="Token budget per batch (rows x longest); default 4096 on CPU, 65536 on CUDA.",
        show_default=False,
    ),
]
DeviceOpt = Annotated[str, typer.Option("--device", help="auto, cpu, cuda, cuda:N or mps.")]
DtypeOpt = Annotated[
    str | None,
    typer.Option("--dtype", help="Compute dtype (default float32 on CPU, bfloat16 on CUDA)."),
]
MaxLengthOpt = Annotated[
    int | None,
    typer.Option("--max-length", help="Tokens per input (default: the model's context)."),
]
PoolingOpt = Annotated[
    str,
    typer.Option(
        "--pooling",
        help="mean (all non-padding tokens), mean_nonspecial, cls (first token), "
        "last (last real token; causal models) or max (see docs/extraction.md).",
    ),
]
LayerOpt = Annotated[
    int, typer.Option("--layer", help="Hidden layer to pool (-1 = last, 0 = embeddings).")
]
LayersOpt = Annotated[
    str | None,
    typer.Option(
        "--layers",
        help="Several hidden layers from one forward, e.g. -1,-4,6: one store entry each, "
        "keyed <model>@L<layer> (the last layer, -1, keeps the bare key).",
        show_default=False,
    ),
]
TruncationOpt = Annotated[
    str,
    typer.Option(
        "--truncation",
        help="Longer than the context: truncate, or window (weighted mean of window means).",
    ),
]
StrandsOpt = Annotated[
    str,
    typer.Option(
        "--strands",
        help="forward, or both: the mean of the forward and reverse-complement embeddings.",
    ),
]
NameOpt = Annotated[
    str | None, typer.Option("--name", help="Store key for the model (one model only).")
]
WeightSeedOpt = Annotated[
    int | None, typer.Option("--weight-seed", help="Weight seed of random:<model> (default 0).")
]
TrustRemoteCodeOpt = Annotated[
    bool,
    typer.Option("--trust-remote-code", help="Allow running the model's own Python code "
                 "(with one --model; with several, name them with --trust-remote-code-for)."),
]
TrustRemoteCodeForOpt = Annotated[
    list[str] | None,
    typer.Option("--trust-remote-code-for", metavar="MODEL",
                 help="Allow running this model's own Python code (a --model as given); "
                 "repeat for several. The other models' code never runs."),
]
OverwriteOpt = Annotated[
    bool, typer.Option("--overwrite", help="Replace existing entries (stale or not).")
]
DataDirOpt = Annotated[
    str | None,
    typer.Option("--data-dir", help="Folder of task folders (default: $GENEB_DATA_DIR)."),
]
StorageDtypeOpt = Annotated[
    str, typer.Option("--storage-dtype", help="float32 or float16 in the store.")
]
BlockRowsOpt = Annotated[
    int | None,
    typer.Option(
        "--block-rows",
        help="Rows per block: sorted and batched together, then streamed to the store.",
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option("--workers", min=1, help="Spread (model, task) jobs over N local Dask "
                 "workers (one GPU each with --device cuda, via dask-cuda)."),
]
RecipeOpt = Annotated[
    str | None,
    typer.Option("--recipe", help="geneb: embed as GENEB's own code did (its batches of 4 in "
                 "file order, padding and pooling; may depend on the batch). Default: geneb's "
                 "batch-invariant embedding."),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option("--scheduler", help="Spread (model, task) jobs over the running Dask "
                 "cluster at this address (tcp://...); the store must be shared."),
]


@cli_errors(aliases={"models": "model", "tasks": "task", "splits": "split"})
def extract(
    store: StoreOpt,
    model: ModelOpt,
    task: TaskOpt,
    split: SplitOpt = None,
    batch_tokens: BatchTokensOpt = None,
    device: DeviceOpt = DEFAULT_DEVICE,
    dtype: DtypeOpt = None,
    max_length: MaxLengthOpt = None,
    pooling: PoolingOpt = DEFAULT_POOLING,
    layer: LayerOpt = DEFAULT_LAYER,
    layers: LayersOpt = None,
    truncation: TruncationOpt = DEFAULT_TRUNCATION,
    strands: StrandsOpt = DEFAULT_STRANDS,
    name: NameOpt = None,
    weight_seed: WeightSeedOpt = None,
    trust_remote_code: TrustRemoteCodeOpt = False,
    trust_remote_code_for: TrustRemoteCodeForOpt = None,
    overwrite: OverwriteOpt = False,
    data_dir: DataDirOpt = None,
    storage_dtype: StorageDtypeOpt = DEFAULT_STORAGE_DTYPE,
    block_rows: BlockRowsOpt = None,
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    recipe: RecipeOpt = None,
) -> None:
    """Embed each split of each task with each model into the store, once."""
    opts = dict(locals())  # every option, handed on under its parameter name
    _print_results(store, _run(opts))


def _run(opts: dict[str, Any]) -> list[Any]:
    """The runner (or, with --workers / --scheduler, its Dask form) on the options: both
    check them against ``extract``'s declaration before any work."""
    from geneb.extract.runner import extract as run_extract

    workers, scheduler = opts["workers"], opts["scheduler"]
    cluster: dict[str, Any] = {}
    if workers is not None or scheduler is not None:  # same options, run on a Dask cluster
        from geneb.extract import distributed

        run_extract = distributed.extract_on_cluster  # type: ignore[assignment]
        cluster = {"workers": workers, "scheduler": scheduler}
    else:  # the runner's warning names parameters: shown with this command's options
        cluster = {"on_warning": _warn}
    return run_extract(
        opts["store"],
        opts["model"],
        opts["task"],
        opts["split"] or ("train", "test"),
        progress=show_progress(),
        trust_remote_code=_trusted(opts["trust_remote_code"], opts["trust_remote_code_for"] or [],
                                   opts["model"]),
        **{k: opts[k] for k in _RUNNER_KEYS},
        **cluster,
    )


def _trusted(bare: bool, named: list[str], models: list[str]) -> list[str]:
    """The models whose code may run, each named: the bare flag names the one --model and is
    refused with several (trust is never given to a model nobody named)."""
    from geneb.errors import ModelError

    if bare and len(models) != 1:
        raise ModelError(
            f"--trust-remote-code with {len(models)} --model given would let every one run its "
            "own code: name each model whose code may run with --trust-remote-code-for MODEL "
            f"(e.g. --trust-remote-code-for {models[0]})"
        )
    unknown = [m for m in named if m not in models]
    if unknown:
        raise ModelError(f"--trust-remote-code-for: {unknown[0]!r} is not one of the --model "
                         f"given ({', '.join(map(repr, models))})")  # fmt: skip
    return [*models[:1]] * bare + named


def _warn(line: str) -> None:
    from geneb.commands._common import command_options, flag_message

    typer.echo(flag_message(line, command_options(extract)), err=True)


#: Options handed to the runner unchanged, under their own names.
_RUNNER_KEYS = (
    "batch_tokens", "device", "dtype", "max_length", "pooling", "layer", "name", "overwrite",
    "data_dir", "storage_dtype", "truncation", "strands",
    "weight_seed", "block_rows", "layers", "recipe",
)  # fmt: skip


def _print_results(store: str, results: list[Any]) -> None:
    """One row per entry: what happened and how fast."""
    from rich.table import Table

    table = Table(title=f"geneb extract -> {store}")
    for col in ("entry", "action", "rows", "dim", "seq/s", "tok/s"):
        table.add_column(col, no_wrap=col != "entry", overflow="fold")
    for r in results:
        table.add_row(
            str(r.key),
            r.action,
            str(r.n_rows),
            str(r.dim),
            f"{r.seq_per_s:.1f}" if r.rows_embedded else "-",
            f"{r.tokens_per_s:.0f}" if r.rows_embedded else "-",
        )
    console.print(table)
