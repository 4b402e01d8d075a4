"""`geneb leaderboard`: GENEB's published leaderboard per regime and category; `geneb
leaderboard import FILE` keeps a newer `leaderboard_tasks.json` in the cache."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from geneb.commands._common import cli_errors
from geneb.commands.models import _fmt_params

app = typer.Typer(invoke_without_command=True, add_completion=False,
                  help="GENEB's published leaderboard (41 models x 100 tasks x 3 regimes).")


def _flag(r: dict[str, Any]) -> str:
    return "official" if r["official"] else (r["submitted"] or "-")


@app.callback()
@cli_errors
def show(
    ctx: typer.Context,
    regime: Annotated[str | None, typer.Option(
        "--shots", help="One regime: full, 10 or 1 (default: each in turn).")] = None,
    category: Annotated[str | None, typer.Option(
        "--category", help="Rank by one category's mean (a geneb category slug or GENEB's "
                           "name, e.g. promoters or 'Histone Mod.').")] = None,
    sort: Annotated[str, typer.Option(
        "--sort", help="Overall score to rank by: macro (GENEB's headline) or micro.")] = "macro",
    source: Annotated[str, typer.Option(
        "--source", help="published:geneb (the imported one, else the packaged one), "
                         "published:geneb-9642d48, or published:FILE.json.")] = "published:geneb",
    as_json: Annotated[bool, typer.Option("--json", help="Print the ranking as JSON.")] = False,
) -> None:
    """Show the published leaderboard: rank, model, parameters, official or self-reported,
    macro- and micro-MCC (or one category's mean), per regime."""
    if ctx.invoked_subcommand is not None:
        return
    from geneb.results.leaderboard_view import leaderboard_summary

    summary = leaderboard_summary(source, regime=regime, category=category, sort=sort)
    if as_json:
        typer.echo(json.dumps(summary, indent=1))
        return
    typer.echo(f"source: {summary['source']}; ranked by "
               f"{summary['category'] if summary['category'] != 'overall' else summary['sort']}"
               "-MCC (each task value GENEB's mean over 5 seeds)")
    for name, rows in summary["regimes"].items():
        typer.echo(f"\nregime {name}")
        head = "score"
        typer.echo(f"{'rank':>4}  {'model':<36} {'params':>7}  {'flag':<13} {head:>8} "
                   f"{'macro':>7} {'micro':>7} {'tasks':>5}")
        for r in rows:
            typer.echo(f"{r['rank']:>4}  {r['model']:<36} {_fmt_params(r['params']):>7}  "
                       f"{_flag(r):<13} {r['score']:>8.4f} {r['macro_mcc']:>7.4f} "
                       f"{r['micro_mcc']:>7.4f} {r['n_tasks']:>5}")


@app.command("import")
@cli_errors
def import_(
    file: Annotated[str, typer.Argument(
        help="A leaderboard_tasks.json of GENEB's shape: a file, or a URL pinned at a commit "
             "(https://github.com/darlednik/GENEB/blob/<commit>/leaderboard/"
             "leaderboard_tasks.json).")],
) -> None:
    """Check a newer leaderboard file and keep it as published:geneb (nothing is cached when
    a check fails)."""
    from geneb.results.leaderboard_url import import_leaderboard_from

    path, board = import_leaderboard_from(file)
    models = {r.model for recs in board.records.values() for r in recs}
    typer.echo(f"{file}: {len(board.tasks)} tasks, {len(models)} models, regimes "
               f"{', '.join(board.records)}; cached as published:geneb in {path}")
