"""The CLI prints plain text (never Rich markup) and turns disk errors into one line.

Issue 15: a label ``[/red]`` turned a clean error into a ``rich.errors.MarkupError`` traceback,
``AC[bold]GT`` was shown as ``ACGT``, and a full disk gave an ``OSError`` traceback.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from geneb.cli import app
from geneb.commands._common import disk_error_message

runner = CliRunner()


def _task(folder: Path, test_labels: tuple[str, str]) -> Path:
    folder.mkdir(parents=True)
    (folder / "train.csv").write_text(
        "sequence,label\nACGT,[/red]\nCCGG,AC[bold]GT\nTTAA,[/red]\nGGCA,AC[bold]GT\n"
    )
    a, b = test_labels
    (folder / "test.csv").write_text(f"sequence,label\nACGA,{a}\nCCGA,{b}\n")
    return folder


def test_markup_looking_labels_are_shown_verbatim(tmp_path):
    task = _task(tmp_path / "t[bold]1", ("[/red]", "AC[bold]GT"))
    r = runner.invoke(app, ["tasks", "show", str(task)])
    assert r.exit_code == 0, r.output
    assert "AC[bold]GT" in r.output and "[/red]" in r.output
    assert "t[bold]1" in r.output  # the path, too


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["tasks", "show", "no-such-task[/red]"], "no-such-task[/red]"),
        (["tasks", "show", "AC[bold]GT"], "AC[bold]GT"),
        (["extract", "--store", "S", "--model", "[/red]m", "--task", "syn_promoter_tata"],
         "[/red]m"),
        (["report", "--results", "[/red].parquet", "--out", "o"], "[/red].parquet"),
    ],
)
def test_errors_with_markup_looking_names_are_plain(tmp_path, monkeypatch, args, shown):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    line = r.output.strip().splitlines()[-1]
    assert line.startswith("error: ") and shown in line, r.output
    assert "MarkupError" not in r.output and "Traceback" not in r.output


def _raiser(exc: BaseException):
    def f(*args, **kwargs):
        raise exc

    return f


ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/data/out/results.parquet")


@pytest.mark.parametrize(
    ("target", "args"),
    [
        ("geneb.probe.engine.run_probes", ["probe", "--store", "s", "--results", "o.parquet"]),
        ("geneb.extract.runner.extract",
         ["extract", "--store", "s", "--model", "kmer-3", "--task", "syn_promoter_tata"]),
        ("geneb.analysis.report.build_report", ["report", "--results", "r", "--out", "o"]),
    ],
)
def test_disk_full_is_one_line_for_every_writing_command(monkeypatch, target, args):
    module, name = target.rsplit(".", 1)
    monkeypatch.setattr(__import__(module, fromlist=[name]), name, _raiser(ENOSPC))
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert r.output.strip() == "error: no space left on device: /data/out/results.parquet"


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (OSError(errno.ENOSPC, "x", "/p"), "no space left on device: /p"),
        (OSError(errno.EDQUOT, "x", "/p"), "disk quota exceeded: /p"),
        (OSError(errno.EROFS, "x", "/p"), "read-only file system: /p"),
        (PermissionError(errno.EACCES, "x", "/p"), "permission denied: /p"),
        # pyarrow/zarr style: no errno, the reason only in the text
        (OSError("Error writing bytes to file. Detail: [errno 28] No space left on device"),
         "no space left on device (Error writing bytes to file. Detail: [errno 28] No space "
         "left on device)"),
        (OSError(errno.ECONNREFUSED, "refused"), None),
        (FileNotFoundError(errno.ENOENT, "x", "/p"), None),
    ],
)
def test_disk_error_message(exc, expected):
    assert disk_error_message(exc) == expected


def test_other_os_errors_are_not_hidden(monkeypatch):
    import geneb.probe.engine as engine

    monkeypatch.setattr(engine, "run_probes", _raiser(ConnectionRefusedError(111, "refused")))
    r = runner.invoke(app, ["probe", "--store", "s", "--results", "o.parquet"])
    assert isinstance(r.exception, ConnectionRefusedError)


def test_every_command_translates_errors():
    """Every leaf command's callback is wrapped by cli_errors (it has __wrapped__)."""
    def leaves(cmd, path: str):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from leaves(sub, f"{path} {name}")
        else:
            yield path, cmd

    unwrapped = [
        path
        for path, cmd in leaves(get_command(app), "geneb")
        if path != "geneb version" and not hasattr(cmd.callback, "__wrapped__")
    ]
    assert not unwrapped, unwrapped
    n = sum(1 for _ in leaves(get_command(app), "geneb"))
    assert n >= 10  # the walk found the commands
