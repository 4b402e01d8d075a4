"""`geneb vep`: variant-effect prediction (score, probe, evaluate, capabilities)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from geneb.commands._common import cli_errors, console, err_console
from geneb.errors import GenebError
from geneb.vocabulary import (
    DEFAULT_ALPHA_SWEEP,
    DEFAULT_C_SWEEP,
    DEFAULT_DEVICE,
    DEFAULT_VEP_WINDOW,
    N_BOOT_METRIC,
    as_list_text,
)

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


def _check_out(out: Path, suffixes: tuple[str, ...]) -> None:
    if out.suffix not in suffixes:
        raise GenebError(f"--out {str(out)!r}: expected a file ending in {' or '.join(suffixes)}")
    if not out.parent.is_dir() and str(out.parent) not in ("", "."):
        raise GenebError(f"--out {str(out)!r}: folder {str(out.parent)!r} does not exist")


def write_table(df, out: Path) -> None:  # noqa: ANN001 - pandas DataFrame
    """Write a table all-or-nothing: a temporary file renamed into place."""
    from geneb._fs import write_with

    if out.suffix == ".csv":
        write_with(out, lambda tmp: df.to_csv(tmp, index=False))
    else:
        write_with(out, lambda tmp: df.to_parquet(tmp, index=False))


def _task_and_out(task: str, model: str, name: str | None, window: int, out: Path | None,
                  prefix: str) -> tuple[Any, Path]:
    """The variant task (checked before any work) and the output path (default
    ``<prefix>-<task>-<model>-w<W>.parquet``), refused when its suffix is not a table's."""
    from geneb.store.keys import safe_name
    from geneb.tasks.variants import load_variant_task

    vt = load_variant_task(task)
    if out is None:
        label = name or Path(model.removeprefix("hf:")).name or model
        out = Path(f"{prefix}-{safe_name(vt.name)}-{safe_name(label)}-w{window}.parquet")
    _check_out(out, (".parquet", ".csv"))
    return vt, out


# Options shared by `vep score` and `vep probe` (both embed the same windows): declared once.
TaskOpt = Annotated[str, typer.Option("--task", help="Variant task folder (variants.csv or "
                                      "variants.vcf[.gz] + reference.fa).")]
ModelOpt = Annotated[str, typer.Option("--model", help="kmer-K, a transformers folder or hub "
                                       "id, hf:<..>, random:<..> or a plugin name.")]
NameOpt = Annotated[str | None, typer.Option("--name", help="Model name in the output and the "
                                             "store.")]
DeviceOpt = Annotated[str, typer.Option("--device", help="auto, cpu, cuda, cuda:N or mps.")]
BatchTokensOpt = Annotated[int | None, typer.Option(
    "--batch-tokens", help="Token budget per batch (rows x longest); default 16384 on CPU "
    "(larger than extract's 4096: the windows have one length, so no padding), 65536 on "
    "CUDA.", show_default=False)]
TrustOpt = Annotated[bool, typer.Option("--trust-remote-code", help="Allow running a model's "
                                        "own Python code.")]


@app.command("score")
@cli_errors(aliases={"scorers": "scorer"})
def score(
    task: TaskOpt,
    model: ModelOpt,
    scorer: Annotated[list[str], typer.Option("--scorer", help="cosine, l2 (embeddings) or llr "
                                              "(language-model head); repeatable.")],
    window: Annotated[int, typer.Option("--window", help="Window in bases (even).")] = (
        DEFAULT_VEP_WINDOW),
    out: Annotated[Path | None, typer.Option("--out", help="Output table (.parquet or .csv); "
                                             "default vep-<task>-<model>-w<W>.parquet.")] = None,
    store: Annotated[str | None, typer.Option("--store", help="Feature store keeping the "
                                              "window embeddings (cosine/l2) for reuse.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Score only the first N variants "
                                              "(quick checks, CI).")] = None,
    name: NameOpt = None,
    device: DeviceOpt = DEFAULT_DEVICE,
    batch_tokens: BatchTokensOpt = None,
    trust_remote_code: TrustOpt = False,
) -> None:
    """Score every variant of a task: one row per (variant, scorer), never dropped."""
    import time

    from geneb.vep.runner import ScoreRun, score_variants

    vt, out = _task_and_out(task, model, name, window, out, "vep")
    run = ScoreRun()
    t0 = time.perf_counter()
    df = score_variants(vt, model, scorer, window=window, store=store, limit=limit, name=name,
                        device=device, batch_tokens=batch_tokens,
                        trust_remote_code=trust_remote_code, run=run)
    secs = time.perf_counter() - t0
    write_table(df, out)
    for s, g in df.groupby("scorer", sort=False):
        bad = g.loc[g["status"] != "ok", "status"].value_counts()
        why = ", ".join(f"{k}: {v}" for k, v in bad.items())
        console.print(f"{s}: {int((g['status'] == 'ok').sum())}/{len(g)} variants scored"
                      + (f" (not scored: {why})" if why else ""), highlight=False)
    console.print(f"wrote {out} ({len(df)} rows) in {secs:.1f} s; forwards {run.forwards}, "
                  f"windows embedded {run.embedded}, reused from the store {run.reused}",
                  highlight=False)


@app.command("probe")
@cli_errors(aliases={"Cs": "C", "alphas": "alpha"})
def probe(
    task: TaskOpt,
    model: ModelOpt,
    window: Annotated[int, typer.Option("--window", help="Window in bases (even).")] = (
        DEFAULT_VEP_WINDOW),
    out: Annotated[Path | None, typer.Option("--out", help="Output table (.parquet or .csv); "
                                             "default vep-probe-<task>-<model>-w<W>.parquet.")
                   ] = None,
    features: Annotated[list[str] | None, typer.Option("--features", help="diff (alt - ref) "
                                                       "or concat ([ref, alt, alt - ref]); "
                                                       "repeatable; default both.")] = None,
    C: Annotated[str | None, typer.Option(  # noqa: N803
        "--C", help="C sweep, comma-separated; chosen per fold by inner block CV. Default "
        f"{as_list_text(DEFAULT_C_SWEEP)}.", show_default=False)] = None,
    folds: Annotated[int | None, typer.Option("--folds", help="Folds of contiguous genomic "
                                              "blocks (one chromosome; default 5).")] = None,
    store: Annotated[str | None, typer.Option("--store", help="Feature store keeping the "
                                              "window embeddings for reuse.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N variants.")
                     ] = None,
    name: NameOpt = None,
    backend: Annotated[str, typer.Option("--backend", help="Logistic-regression solver "
                                         "(as for geneb probe; default sklearn, the "
                                         "reference).")] = "sklearn",
    standardize: Annotated[bool, typer.Option("--standardize", help="Standardise features on "
                                              "each fit's training rows.")] = False,
    target: Annotated[str, typer.Option("--target", help="label (logistic probe of 0/1) or "
                                        "score (ridge regression of the task's score column)."
                                        )] = "label",
    alpha: Annotated[str | None, typer.Option(
        "--alpha", help="Ridge alpha sweep (--target score), chosen per fold by inner block "
        f"CV. Default {as_list_text(DEFAULT_ALPHA_SWEEP)}.", show_default=False)] = None,
    device: DeviceOpt = DEFAULT_DEVICE,
    batch_tokens: BatchTokensOpt = None,
    trust_remote_code: TrustOpt = False,
) -> None:
    """Supervised VEP: a logistic-regression probe on window embeddings, out-of-fold scores."""
    import time

    from geneb.vep.capabilities import FEATURES
    from geneb.vep.probe_run import probe_variants
    from geneb.vep.runner import ScoreRun

    vt, out = _task_and_out(task, model, name, window, out, "vep-probe")
    run = ScoreRun()
    t0 = time.perf_counter()
    sweeps = {k: v for k, v in (("Cs", C), ("alphas", alpha)) if v is not None}
    df = probe_variants(vt, model, features=features or list(FEATURES), window=window,
                        folds=folds, store=store, limit=limit, name=name, device=device,
                        batch_tokens=batch_tokens, trust_remote_code=trust_remote_code,
                        backend=backend, standardize=standardize, target=target,
                        run=run, **sweeps)
    write_table(df, out)
    n_folds = int(df["fold"].max()) + 1
    console.print(f"{int((df['status'] == 'ok').sum())}/{len(df)} rows scored out of fold "
                  f"({n_folds} folds by {df['folds'].iloc[0]}); wrote {out} in "
                  f"{time.perf_counter() - t0:.1f} s; windows embedded {run.embedded}, "
                  f"reused from the store {run.reused}", highlight=False)


@app.command("evaluate")
@cli_errors
def evaluate(
    scores: Annotated[list[Path], typer.Argument(help="Score tables from `geneb vep score`.")],
    out: Annotated[Path | None, typer.Option("--out", help="Folder for vep_metrics.csv, ROC "
                                             "figure and vep_report.html.")] = None,
    n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples (0: none).")] = (
        N_BOOT_METRIC
    ),
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
) -> None:
    """AUROC / AUPRC (/ Spearman) per (task, model, scorer, window) with bootstrap CIs."""
    from geneb.analysis.report.vep_section import vep_page
    from geneb.vep.evaluate import evaluate as run_eval
    from geneb.vep.io import read_scores

    if n_boot < 0:
        raise GenebError(f"--n-boot must be >= 0, got {n_boot}")
    df = read_scores(scores)
    from geneb.vep.evaluate import common_variants

    for note in common_variants(df)[1]:
        err_console.print(f"warning: {note}", highlight=False, soft_wrap=True)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        from geneb.vep.summary import summarise

        html, files = vep_page(summarise(df, n_boot=n_boot, seed=seed), out)
        metrics = __import__("pandas").read_csv(out / "tables" / "vep_metrics.csv")
        console.print(f"wrote {', '.join(str(f) for f in files)}", highlight=False)
    else:
        metrics = run_eval(df, n_boot=n_boot, seed=seed)
    cols = ["task", "model", "scorer", "window", "n_scored", "n_left_out", "auroc", "auroc_lo",
            "auroc_hi", "auprc"] + [c for c in ("spearman", "pearson", "r2") if c in metrics]
    console.print(metrics[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"),
                  highlight=False)
    for r in metrics[metrics["skipped"].fillna("") != ""].itertuples(index=False):
        console.print(f"{r.task} {r.model} {r.scorer} w{r.window}: NaN {r.skipped}",
                      highlight=False, soft_wrap=True)


@app.command("capabilities")
@cli_errors
def capabilities(
    model: Annotated[str, typer.Option("--model", help="Model spec (as for --model).")],
    trust_remote_code: Annotated[bool, typer.Option("--trust-remote-code")] = False,
) -> None:
    """What a model supports (embeddings, masked-LM head, causal-LM head) and its scorers."""
    from geneb.vep.capabilities import detect

    console.print(f"{model}: {detect(model, trust_remote_code=trust_remote_code).describe()}",
                  highlight=False)
