"""``geneb demo``: the whole pipeline offline on the built-in synthetic suite."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geneb.commands._common import cli_errors, show_progress
from geneb.constraints import PathParam


@cli_errors
def demo(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("geneb-demo"),
    n_train: Annotated[int, typer.Option(help="Train rows per synthetic task.")] = 500,
    n_test: Annotated[int, typer.Option(help="Test rows per synthetic task.")] = 300,
    minilm: Annotated[
        bool, typer.Option(help="Include the MiniLM off-domain control when installed.")
    ] = True,
) -> None:
    """Run extract -> probe -> report on the synthetic starter suite (offline, minutes).

    Models: k-mer baselines, a random-weight control on a small transformer built on the fly,
    and the MiniLM text control when its package is installed. Full GENEB grid (1/10/full shots,
    5 seeds), a short C sweep and the MLP check. The data are synthetic, not real.
    """
    from geneb.pipeline.demo import run_demo

    # checked before any work by the library's declarations (write_demo_inputs), except the
    # output folder, which run_demo resolves: a file there is refused here
    PathParam("not_file").check_exists(out, "out")
    res = run_demo(
        out,
        progress=show_progress(),
        log=typer.echo,
        n_train=n_train,
        n_test=n_test,
        with_minilm=None if minilm else False,
    )
    typer.echo(f"demo finished in {res.seconds:.1f} s")
    typer.echo(f"report: {res.report}")
    typer.echo(f"rerun or extend: geneb run {res.plan}")
