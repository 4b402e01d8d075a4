"""One name per concept (docs/glossary.md): every command's ``--help`` spells each concept's
option as the glossary says, and no removed name is left in a command or a public function."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

import geneb
from geneb.cli import app

GLOSSARY = Path(__file__).resolve().parents[1] / "docs" / "glossary.md"
runner = CliRunner()


def _rows() -> list[dict[str, list[str]]]:
    """The names table: per concept, the backticked names of each column."""
    lines = [ln for ln in GLOSSARY.read_text().splitlines() if ln.startswith("|")]
    head = [c.strip().lower() for c in lines[0].strip("|").split("|")]
    rows = []
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        rows.append({h: re.findall(r"`([^`]+)`", c) for h, c in zip(head, cells, strict=True)}
                    | {"name": [cells[0]]})
    return rows


ROWS = _rows()


def _commands(cmd: Any = None, path: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every leaf command by its path (``"store ls"``)."""
    cmd = get_command(app) if cmd is None else cmd
    if not hasattr(cmd, "commands"):
        return {" ".join(path): cmd}
    out: dict[str, Any] = {}
    for name, sub in cmd.commands.items():
        out.update(_commands(sub, (*path, name)))
    return out


COMMANDS = _commands()


def _help(path: str) -> str:
    r = runner.invoke(app, [*path.split(), "--help"], terminal_width=200)
    assert r.exit_code == 0, r.output
    return r.output


def _options(path: str) -> set[str]:
    """The option flags ``--help`` of the command shows."""
    return set(re.findall(r"(?<![\w-])(--[A-Za-z][\w-]*)", _help(path)))


def test_the_table_is_read() -> None:
    names = [r["name"][0] for r in ROWS]
    assert len(ROWS) >= 12 and "results table" in names and "regimes" in names
    for r in ROWS:  # every command the table names exists
        assert set(r["commands"]) <= set(COMMANDS), (r["name"], set(r["commands"]) - set(COMMANDS))


@pytest.mark.parametrize("row", [r for r in ROWS if r["commands"]], ids=lambda r: r["name"][0])
def test_each_command_spells_the_option_as_the_glossary(row: dict[str, list[str]]) -> None:
    flags = [o for o in row["option"] if o.startswith("--")]
    assert flags, row
    for path in row["commands"]:
        shown = _options(path)
        assert any(f in shown for f in flags), (path, flags, sorted(shown))


def _removed() -> list[tuple[str, str]]:
    return [(r["name"][0], n) for r in ROWS for n in r["removed names"]]


@pytest.mark.parametrize(("concept", "name"), _removed(), ids=[n for _, n in _removed()])
def test_no_removed_name_is_left(concept: str, name: str) -> None:
    fn = re.fullmatch(r"([\w.]+)\((\w+)\)", name)
    if fn:  # a Python parameter: a public function (or a dotted library function)
        target = (getattr(geneb, fn.group(1)) if "." not in fn.group(1) else
                  getattr(importlib.import_module(fn.group(1).rpartition(".")[0]),
                          fn.group(1).rpartition(".")[2]))
        assert fn.group(2) not in inspect.signature(target).parameters, (concept, name)
        return
    *words, last = name.split()
    path = " ".join(words)
    assert path in COMMANDS, name
    if last.startswith("--"):  # an option that is gone from this command
        assert last not in _options(path), (concept, name)
    else:  # a positional argument that became an option
        args = [p for p in COMMANDS[path].params if p.param_type_name == "argument"]
        assert not args, (concept, name, [p.name for p in args])


def test_no_command_has_an_option_for_two_concepts() -> None:
    """``--seed`` (weights) and ``--seed`` (bootstrap) were one flag for two things: now
    no flag of the table belongs to two concepts."""
    owner: dict[str, str] = {}
    for r in ROWS:
        for f in (o for o in r["option"] if o.startswith("--")):
            assert owner.setdefault(f, r["name"][0]) == r["name"][0], f
    every = set().union(*(_options(p) for p in COMMANDS))
    assert "--seed" not in every  # the ambiguous flag is gone from every command


def test_n_boot_has_one_rule() -> None:
    for args in (["report", "--results", "r", "--out", "o", "--n-boot", "99"],
                 ["vep", "evaluate", "x.csv", "--n-boot", "0"]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2 and "--n-boot: expected an int >= 100, got" in r.output, (
            args, r.output)
