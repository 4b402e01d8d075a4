"""``--help`` of every command prints its text as written, and one vocabulary across commands
(issue 19 #18, #22)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from geneb.cli import app

runner = CliRunner()


def _commands(cmd: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...],
                                                                             Any]]:
    """Every (argv path, command) below ``cmd``, groups included."""
    out = [(path, cmd)]
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):  # a group's commands
        out += _commands(sub, (*path, name))
    return out


COMMANDS = _commands(get_command(app))


def _flat(text: str) -> str:
    """Without whitespace: line wrapping (also after a hyphen) must not matter."""
    return "".join(text.split())


def test_the_walk_finds_every_command() -> None:
    paths = {" ".join(p) for p, _ in COMMANDS}
    assert {"run", "probe", "report", "store export", "vep evaluate"} <= paths


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=[" ".join(p) or "geneb"
                                                       for p, _ in COMMANDS])
def test_help_text_is_printed_as_written(path: tuple[str, ...], cmd: Any) -> None:
    r = runner.invoke(app, [*path, "--help"], terminal_width=100)
    assert r.exit_code == 0, r.output
    shown = _flat(r.output)
    texts = [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]
    for text in texts:
        for bracketed in re.findall(r"\[[^\[\]\n]+\]", text):
            assert _flat(bracketed) in shown, (path, bracketed, r.output)
    for p in cmd.params:  # the whole help of each option, not just its brackets
        if getattr(p, "help", None):
            assert _flat(p.help) in shown, (path, p.name, r.output)


def test_run_help_names_the_plan_sections() -> None:
    r = runner.invoke(app, ["run", "--help"], terminal_width=100)
    assert _flat("[extract]/[probe] workers/scheduler") in _flat(r.output), r.output
