"""`geneb vep`: variant-effect prediction (score, probe, evaluate, capabilities)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geneb.commands._common import cli_errors, console, err_console
from geneb.vocabulary import (
    DEFAULT_ALPHA_SWEEP,
    DEFAULT_C_SWEEP,
    DEFAULT_DEVICE,
    DEFAULT_VEP_WINDOW,
    N_BOOT_METRIC,
    as_list_text,
)

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


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
    from geneb.vep.files import vep_to_file

    done = vep_to_file(task, model, scorers=scorer, out=out, window=window, name=name,
                       store=store, limit=limit, device=device, batch_tokens=batch_tokens,
                       trust_remote_code=trust_remote_code)
    df, run = done.table, done.run
    for s, g in df.groupby("scorer", sort=False):
        bad = g.loc[g["status"] != "ok", "status"].value_counts()
        why = ", ".join(f"{k}: {v}" for k, v in bad.items())
        console.print(f"{s}: {int((g['status'] == 'ok').sum())}/{len(g)} variants scored"
                      + (f" (not scored: {why})" if why else ""), highlight=False)
    console.print(f"wrote {done.path} ({len(df)} rows) in {done.seconds:.1f} s; forwards "
                  f"{run.forwards}, windows embedded {run.embedded}, reused from the store "
                  f"{run.reused}", highlight=False)


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
    C: Annotated[list[str] | None, typer.Option(  # noqa: N803
        "--C", help="C sweep: comma list or repeated; chosen per fold by inner block CV. Default "
        f"{as_list_text(DEFAULT_C_SWEEP)}.", show_default=False)] = None,
    folds: Annotated[int | None, typer.Option("--folds", help="Folds of contiguous genomic "
                                              "blocks (one chromosome; default 5).")] = None,
    store: Annotated[str | None, typer.Option("--store", help="Feature store keeping the "
                                              "window embeddings for reuse.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N variants.")
                     ] = None,
    name: NameOpt = None,
    backend: Annotated[str, typer.Option("--backend", help="Logistic-regression solver, as "
                                         "for geneb probe. Default sklearn, not auto: the "
                                         "reference solver, fast enough for a few thousand "
                                         "variants, and immune to the fast solver's failure "
                                         "on some window embeddings (docs/vep.md).")
                   ] = "sklearn",
    standardize: Annotated[bool, typer.Option("--standardize", help="Standardise features on "
                                              "each fit's training rows.")] = False,
    target: Annotated[str, typer.Option("--target", help="label (logistic probe of 0/1) or "
                                        "score (ridge regression of the task's score column)."
                                        )] = "label",
    alpha: Annotated[list[str] | None, typer.Option(
        "--alpha", help="Ridge penalty sweep (--target score): comma list or repeated; chosen "
        "per fold by inner block "
        f"CV. Default {as_list_text(DEFAULT_ALPHA_SWEEP)}.", show_default=False)] = None,
    device: DeviceOpt = DEFAULT_DEVICE,
    batch_tokens: BatchTokensOpt = None,
    trust_remote_code: TrustOpt = False,
) -> None:
    """Supervised VEP: a logistic-regression probe on window embeddings, out-of-fold scores."""
    from geneb.vep.files import vep_to_file

    sweeps = {k: v for k, v in (("features", features), ("Cs", C), ("alphas", alpha)) if v}
    done = vep_to_file(task, model, supervised=True, out=out, window=window, folds=folds,
                       store=store, limit=limit, name=name, device=device,
                       batch_tokens=batch_tokens, trust_remote_code=trust_remote_code,
                       backend=backend, standardize=standardize, target=target, **sweeps)
    df, run = done.table, done.run
    n_folds = int(df["fold"].max()) + 1
    console.print(f"{int((df['status'] == 'ok').sum())}/{len(df)} rows scored out of fold "
                  f"({n_folds} folds by {df['folds'].iloc[0]}); wrote {done.path} in "
                  f"{done.seconds:.1f} s; windows embedded {run.embedded}, "
                  f"reused from the store {run.reused}", highlight=False)


@app.command("evaluate")
@cli_errors
def evaluate(
    scores: Annotated[list[Path], typer.Argument(help="Score tables from `geneb vep score`.")],
    out: Annotated[Path | None, typer.Option("--out", help="Folder for vep_metrics.csv, ROC "
                                             "figure and vep_report.html.")] = None,
    n_boot: Annotated[int | None, typer.Option(
        "--n-boot", help="Bootstrap resamples of each interval (>= 100; default "
        f"{N_BOOT_METRIC}).",
        show_default=False)] = None,
    boot_seed: Annotated[int | None, typer.Option(
        "--boot-seed", help="Seed of the bootstrap (default 0).", show_default=False)] = None,
) -> None:
    """AUROC / AUPRC (/ Spearman) per (task, model, scorer, window) with bootstrap CIs."""
    from geneb.pipeline.vep_evaluate import evaluate_scores

    given = {k: v for k, v in (("n_boot", n_boot), ("boot_seed", boot_seed)) if v is not None}
    done = evaluate_scores(scores, out=out, **given)
    for note in done.notes:
        err_console.print(f"warning: {note}", highlight=False, soft_wrap=True)
    if done.files:
        console.print(f"wrote {', '.join(str(f) for f in done.files)}", highlight=False)
    metrics = done.metrics
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
