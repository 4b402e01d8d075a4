"""The translation contract (issue 20): library errors name Python parameters, the CLI names
its options. An error about one parameter carries ``param`` and starts with that name; the
CLI (``geneb.commands._common.cli_errors``) replaces it with the flag."""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path
from typing import Annotated

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from geneb.cli import app
from geneb.commands._common import command_options, flag_message
from geneb.constraints import ParamError
from geneb.errors import GenebError, ModelError
from geneb.extract.batching import token_budget_batches
from geneb.tasks.windows import check_window

GENEB = Path(__file__).resolve().parents[1] / "geneb"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def test_library_errors_name_the_parameter():
    with pytest.raises(ModelError) as e:
        token_budget_batches(np.array([3, 4]), 0)
    assert str(e.value) == "batch_tokens: expected a positive int, got 0"
    assert e.value.param == "batch_tokens"
    with pytest.raises(GenebError) as e:
        check_window(3)
    assert str(e.value).startswith("window: expected an even number") and e.value.param == "window"


def test_param_survives_pickling():
    """Errors raised on a Dask worker keep the parameter they are about."""
    e = pickle.loads(pickle.dumps(ParamError("seeds[1]: expected x, got y", param="seeds")))
    assert type(e) is ParamError and e.param == "seeds" and str(e) == "seeds[1]: expected x, got y"


def _cmd(
    batch_tokens: Annotated[int, typer.Option("--batch-tokens")] = 1,
    C: Annotated[str, typer.Option("--C")] = "1",  # noqa: N803
    overwrite: Annotated[bool, typer.Option("--overwrite")] = False,
    probe_kind: Annotated[str, typer.Option("--probe")] = "linear",
) -> None:
    """A command's declarations, as Typer reads them."""


def test_flag_message_translates_leading_name_and_mentions():
    opts = command_options(_cmd)
    assert opts["probe_kind"] == ("--probe", False) and opts["overwrite"] == ("--overwrite", True)
    aliases = {"Cs": "C", "probe": "probe_kind"}

    def msg(text: str, param: str | None = None) -> str:
        return flag_message(GenebError(text, param=param), opts, aliases)

    assert msg("batch_tokens: expected a positive int, got 0", "batch_tokens") == (
        "--batch-tokens: expected a positive int, got 0")
    assert msg("Cs[1]: expected a positive number, got -1", "Cs") == (
        "--C: expected a positive number, got -1")
    assert msg("stale entry; pass overwrite=True to replace") == (
        "stale entry; pass --overwrite to replace")
    assert msg("it applies to probe='linear', got probe='mlp'") == (
        "it applies to --probe 'linear', got --probe 'mlp'")
    assert msg("out of memory; lower the token budget per batch (batch_tokens)") == (
        "out of memory; lower the token budget per batch (--batch-tokens)")
    # names the command has no option for, and a flag's False, stay as they are
    assert msg("window: expected an even number", "window") == "window: expected an even number"
    assert msg("k=10; overwrite=False") == "k=10; overwrite=False"


def test_same_error_through_the_cli_names_the_flag(tmp_path):
    """One library check (the runner's), two readers: Python sees ``name``, the CLI ``--name``."""
    from geneb.extract.runner import extract

    with pytest.raises(ModelError) as e:
        extract(tmp_path / "s", ["kmer-3", "kmer-4"], ["syn_promoter_tata"], name="x")
    assert str(e.value).startswith("name: 'x' names one model, but 2 were given")
    assert "--" not in str(e.value)
    r = CliRunner().invoke(app, ["extract", "--store", str(tmp_path / "s"), "--model", "kmer-3",
                                 "--model", "kmer-4", "--task", "syn_promoter_tata",
                                 "--name", "x"])
    assert r.exit_code == 2
    assert r.output.strip() == "error: --name: 'x' names one model, but 2 were given", r.output
    assert not (tmp_path / "s").exists()


#: Strings outside the CLI that contain "--" for a reason other than naming an option in an
#: error: (path under geneb/, the flag). Each says why it stays.
ALLOWED = {
    # provenance: where max_length came from is recorded in stored entries as this string
    ("models/adapters/hf.py", "--max-length"),
    # a shell command line for the user to copy (`huggingface-cli download ... --revision`)
    ("models/hub.py", "--revision"),
    # whole command lines to run next (`geneb probe --results ...`, `probe-subsample --out`)
    ("results/table.py", "--results"),
    ("probe/subsample.py", "--out"),
    ("tasks/variants.py", "--reference"),  # `geneb tasks fetch NAME --reference GENOME.fa`
    ("tasks/folders.py", "--study-data"),  # `geneb tasks fetch --study-data GENEB_ID`
    # text of the HTML report, which documents the report's own inputs
    ("analysis/report/sections/controlled.py", "--model-properties"),
    ("analysis/report/sections/scaling.py", "--model-properties"),
    ("analysis/report/sections/stability.py", "--probe"),
    # which fits the report analyses (`geneb report --standardize / --no-standardize`)
    ("analysis/report/context.py", "--standardize"),
    ("analysis/report/context.py", "--no-standardize"),
    ("analysis/report/sections/method.py", "--standardize"),
    ("analysis/report/sections/method.py", "--no-standardize"),
    ("analysis/scaling.py", "--model-properties"),
    # notes printed by `geneb vep capabilities` / `geneb models info` (not errors)
    ("vep/capabilities.py", "--trust-remote-code"),
    # a pip flag in an install line (ai2-olmo goes in without its numpy<2 pin), not geneb's
    ("models/packages.py", "--no-deps"),
}


def _strings(tree: ast.AST) -> list[ast.Constant]:
    """Every string constant that is not a docstring."""
    docs: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            docs.add(id(node.value))
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docs]


def test_no_library_message_names_a_cli_flag():
    found = set()
    for path in sorted(GENEB.rglob("*.py")):
        rel = path.relative_to(GENEB).as_posix()
        if rel.startswith("commands/") or rel == "cli.py":
            continue
        for node in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            for flag in FLAG.findall(node.value):
                found.add((rel, flag, node.lineno))
    bad = sorted(f for f in found if f[:2] not in ALLOWED)
    assert not bad, f"library strings naming CLI flags (name the parameter instead): {bad}"
    stale = ALLOWED - {f[:2] for f in found}
    assert not stale, f"allowed but no longer present (drop from ALLOWED): {stale}"


def test_cli_warning_names_the_option():
    """The runner's truncation warning names ``truncation``; `geneb extract` shows its flag."""
    from geneb.commands.extract import extract as extract_command

    line = "warning: 3 of 9 rows were truncated; truncation='window' embeds them whole"
    assert flag_message(line, command_options(extract_command)) == (
        "warning: 3 of 9 rows were truncated; --truncation 'window' embeds them whole")
