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
    texts = [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params
                                if not getattr(p, "hidden", False)]
    for text in texts:
        for bracketed in re.findall(r"\[[^\[\]\n]+\]", text):
            assert _flat(bracketed) in shown, (path, bracketed, r.output)
    for p in cmd.params:  # the whole help of each shown option, not just its brackets
        if getattr(p, "help", None) and not getattr(p, "hidden", False):
            assert _flat(p.help) in shown, (path, p.name, r.output)


def test_run_help_names_the_plan_sections() -> None:
    r = runner.invoke(app, ["run", "--help"], terminal_width=100)
    assert _flat("[extract]/[probe] workers/scheduler") in _flat(r.output), r.output


# ------------------------------------------------------------------ one vocabulary
def test_report_takes_shots(monkeypatch, tmp_path) -> None:
    seen: list[object] = []

    def fake_build_report(results, out, **kw):  # noqa: ANN001, ANN003, ANN202
        seen.append(kw["shots"])
        return out

    monkeypatch.setattr("geneb.analysis.report.build_report", fake_build_report)
    for args in (["--shots", "1,full"], ["--shots", "1", "--shots", "FULL"]):
        r = runner.invoke(app, ["report", "--results", "r", "--out", str(tmp_path), *args])
        assert r.exit_code == 0, r.output
    assert seen == [["1", "full"]] * 2
    r = runner.invoke(app, ["report", "--results", "r", "--out", "o", "--shots", "0"])
    assert r.exit_code == 2 and "error: --shots: expected" in r.output, r.output
    r = runner.invoke(app, ["report", "--results", "r", "--out", "o", "--regime", "1"])
    assert r.exit_code == 2 and "--regime" in r.output, r.output  # the old name is gone


def test_batch_token_defaults_are_documented_as_they_are() -> None:
    from geneb.extract import batching
    from geneb.vep import runner as vep_runner

    docs = {" ".join(path): next(p.help for p in cmd.params if "--batch-tokens" in p.opts)
            for path, cmd in COMMANDS
            if any("--batch-tokens" in getattr(p, "opts", []) for p in cmd.params)}
    assert set(docs) == {"extract", "vep score", "vep probe"}
    cpu = {"extract": batching.CPU_BATCH_TOKENS, "vep score": vep_runner.CPU_BATCH_TOKENS,
           "vep probe": vep_runner.CPU_BATCH_TOKENS}
    for command, text in docs.items():
        assert f"default {cpu[command]} on CPU" in text, (command, text)
        assert f"{batching.GPU_BATCH_TOKENS} on CUDA" in text, (command, text)
    assert vep_runner.vep_batch_tokens("cpu") == vep_runner.CPU_BATCH_TOKENS
    assert vep_runner.vep_batch_tokens("cuda") == batching.GPU_BATCH_TOKENS


def test_version_option() -> None:
    import tomllib
    from pathlib import Path

    want = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.output.strip() == want["project"]["version"]
    assert runner.invoke(app, ["version"]).output == r.output


def test_store_info_takes_the_options_of_store_export(tmp_path) -> None:
    import json

    import numpy as np

    from geneb.store import FeatureStore, Provenance, StoreKey

    key = StoreKey("m", "t", "train")
    st = FeatureStore(tmp_path / "S", mode="a")
    with st.writer(key, provenance=Provenance("m", "r", "t", "sha256:x"),
                   labels=np.array([0, 1]), rows=np.array([0, 1]), dim=2) as w:
        w.append(np.ones((2, 2), dtype=np.float32))
    store = str(tmp_path / "S")
    new = runner.invoke(app, ["store", "info", "--store", store, "--model", "m", "--task", "t",
                              "--split", "train"])
    short = runner.invoke(app, ["store", "info", "--store", store, "-m", "m", "-t", "t",
                                "-s", "train"])
    assert new.exit_code == 0, new.output
    assert new.output == short.output
    assert json.loads(new.output)["shape"] == [2, 2]
    for args, msg in ((["m", "t", "train"], "unexpected extra argument"),
                      (["--model", "m", "--task", "t"], "--split: expected")):
        r = runner.invoke(app, ["store", "info", "--store", store, *args])
        assert r.exit_code == 2 and msg in r.output, r.output


def test_plan_report_shots(tmp_path) -> None:
    from geneb.errors import PlanError
    from geneb.pipeline.plan import load_plan

    base = ('store = "s"\nout = "o"\n[[models]]\nmodel = "kmer-3"\n[tasks]\n'
            'names = ["syn_tata"]\n[probe]\nshots = ["1", "full"]\n[report]\n')
    p = tmp_path / "plan.toml"
    p.write_text(base + 'shots = ["full"]\n')
    assert load_plan(p).report_shots == ("full",)
    p.write_text(base + 'regimes = ["1"]\n')  # the old name is an unknown key now
    with pytest.raises(PlanError, match="regimes"):
        load_plan(p)
