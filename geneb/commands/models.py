"""`geneb models list|info|fetch`: the model catalogue, the built-in adapters, what a spec
resolves to, and the one command that downloads a model (into the Hugging Face cache)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from geneb.commands._common import cli_errors, console
from geneb.vocabulary import format_param_count

app = typer.Typer(no_args_is_help=True, help="List the model catalogue and adapters.")


def _fmt_params(n: int | None) -> str:
    if n is None:
        return "-"
    return format_param_count(n)


def _cell(v: Any) -> Any:
    """Plain text for a table cell (catalogue text may contain '[...]', not Rich markup)."""
    from rich.text import Text

    if v is None:
        return Text("-")
    if isinstance(v, bool):
        return Text("yes" if v else "no")
    if isinstance(v, (list, tuple)):
        return Text(", ".join(v) or "-")
    return Text(str(v))


@app.command("list")
@cli_errors
def list_(
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the catalogue as a JSON list (one object per model)."),
    ] = False,
    study: Annotated[
        str | None,
        typer.Option("--study", help="Only models of this study: GENEB or GFMBench-API."),
    ] = None,
) -> None:
    """The catalogue (published facts, '-' = not checked) and the built-in adapters."""
    from geneb.errors import unknown_name
    from geneb.models.catalogue import STUDIES, load_catalogue
    from geneb.models.registry import describe_embedders

    entries = load_catalogue()
    if study is not None:
        if study not in STUDIES:
            raise unknown_name("study", study, STUDIES)
        entries = tuple(e for e in entries if study in e.studies)
    if as_json:
        typer.echo(json.dumps([e.to_json() for e in entries], indent=1))
        return
    from rich.table import Table

    table = Table(title=f"model catalogue ({len(entries)} models; '-' = not checked)")
    cols = ("name", "hub id", "architecture", "tokenization", "params", "context", "code",
            "capabilities", "studies", "test fixture", "runs")  # fmt: skip
    for col in cols:
        table.add_column(col, overflow="fold", no_wrap=col in ("name", "params"))
    for e in entries:
        ctx = f"{e.context_length:,} {e.context_unit}" if e.context_length else None
        table.add_row(
            *map(
                _cell,
                (
                    e.name,
                    e.hub_id,
                    e.architecture,
                    e.tokenization,
                    _fmt_params(e.n_params),
                    ctx,
                    e.trust_remote_code,
                    e.capabilities,
                    e.studies,
                    e.test_fixture or "none",
                    e.runs,
                ),
            )
        )
    from rich.console import Console

    out = console if console.is_terminal else Console(width=max(console.width, 200))
    out.print(table)
    adapters = Table(title="built-in adapters and plugins")
    adapters.add_column("model", no_wrap=True)
    adapters.add_column("what it is", overflow="fold")
    for name, desc in describe_embedders():
        adapters.add_row(_cell(name), _cell(desc))
    out.print(adapters)
    out.print(
        _cell(
            "code = the checkpoint runs its own Python code: pass --trust-remote-code after "
            "inspecting it (never granted automatically). test fixture = the folder under "
            "the shared test models (../shared/models) whose run covers this family's code path "
            "(none: no test runs it). runs = how geneb runs it here, measured for GENEB's 41 "
            "(native, family, cuda, no code; docs/models.md). Details: geneb models info NAME"
        )
    )


@app.command("info")
@cli_errors
def info(
    model: Annotated[str, typer.Argument(help="A model spec, as --model takes it.")],
) -> None:
    """What a model spec resolves to (no weights are loaded), as JSON, with how GENEB's
    code embedded it (geneb_recipe: pooling, padding, batch_dependent)."""
    from geneb.extract.geneb_recipe import recipe_info
    from geneb.models.registry import get_model_meta

    meta = get_model_meta(model)
    out = meta.to_json()
    if meta.catalogue is not None:
        out["catalogue_entry"] = meta.catalogue.to_json()
    out["geneb_recipe"] = recipe_info(model)  # how GENEB embedded it; batch_dependent
    typer.echo(json.dumps(out, indent=1))


@app.command("fetch")
@cli_errors
def fetch(
    model: Annotated[str, typer.Argument(help="A catalogue name or a hub id 'org/name'.")],
    revision: Annotated[
        str | None,
        typer.Option(
            "--revision",
            help="Branch, tag or commit (default: the catalogue's pinned commit, else main).",
        ),
    ] = None,
) -> None:
    """Download a model into the Hugging Face cache (HF_HOME / HF_HUB_CACHE), so that
    extraction then runs offline. The only geneb command that uses the network."""
    from geneb.models.fetch import fetch_model

    r = fetch_model(model, revision)
    typer.echo(
        f"fetched {r.hub_id}@{r.commit} ({r.n_files} files, {r.n_bytes / 1e6:.1f} MB) "
        f"into {r.folder}"
    )
    if r.used_by_extraction:
        typer.echo(f"geneb extract --model {model} now runs offline from this cache")
    else:
        typer.echo(
            f"note: extraction resolves {r.hub_id} at {r.extraction_revision}, not "
            f"{r.revision}: pass --model {r.folder} to use this snapshot"
        )
