"""Issue 19 case 5: one rule for repeated options, for every command.

``geneb probe --probe linear --probe mlp`` ran only the MLP, silently (click keeps the last
value of a single-valued option). Now list options (``--probe``, ``--shots``, ``--seeds``,
``--C``, ``--model``, ...) use every value given, and a single-valued option given twice is
refused, naming both uses, before any work.
"""

from __future__ import annotations

import pytest
import typer.main
from probe_stores import gaussian_task
from typer.testing import CliRunner

from geneb.cli import app
from geneb.results.table import read_results
from geneb.store import FeatureStore


@pytest.fixture()
def store(tmp_path):
    fs = FeatureStore(tmp_path / "store", "a")
    gaussian_task(fs, "m", "t", n_train=60, n_test=30, dim=6)
    return fs


def _probe(store, out, *args):
    return CliRunner().invoke(app, ["probe", "--store", str(store.path), "--results", str(out),
                                    "--workers", "1", *args])


def test_repeated_probe_runs_both(store, tmp_path):
    out = tmp_path / "r.parquet"
    r = _probe(store, out, "--probe", "linear", "--probe", "mlp", "--shots", "10",
               "--shots", "full", "--seeds", "13", "--seeds", "17", "--backend", "sklearn")
    assert r.exit_code == 0, r.output
    df = read_results(out)
    assert sorted(df.probe.unique()) == ["linear", "mlp"]
    for probe in ("linear", "mlp"):  # every value of the repeated list options was used
        d = df[df.probe == probe]
        assert set(d.regime) == {"10", "full"} and set(d.seed) == {13, 17}
    assert "linear: " in r.output and "mlp: " in r.output
    r = _probe(store, tmp_path / "r2.parquet", "--probe", "linear,mlp", "--shots", "10",
               "--seeds", "13", "--backend", "sklearn")  # a comma list is the same
    assert r.exit_code == 0 and set(read_results(tmp_path / "r2.parquet").probe) == {
        "linear", "mlp"}


@pytest.mark.parametrize("args,shown", [
    (["--backend", "fast", "--backend", "sklearn"], "'--backend fast', '--backend sklearn'"),
    (["--protocol=paper", "--protocol", "converged"], "'--protocol=paper', '--protocol "
                                                      "converged'"),
    (["--standardize", "--standardize"], "'--standardize', '--standardize'"),
    (["--workers", "1"], "'--workers 1', '--workers 1'"),  # _probe gives --workers 1 already
])
def test_a_single_valued_option_given_twice_is_refused(store, tmp_path, args, shown):
    out = tmp_path / "r.parquet"
    r = _probe(store, out, *args)
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.replace("│", " ").split())
    assert f"given 2 times ({shown}); it takes one value, so give it once" in text, r.output
    assert "Traceback" not in r.output and not out.exists()


def test_every_command_follows_the_rule(tmp_path):
    """Walk every command of the CLI: each single-valued option given twice is refused (a
    usage error, exit 2), whatever the command."""
    root = typer.main.get_command(app)
    checked = 0

    def walk(group, path):
        nonlocal checked
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):
                walk(cmd, [*path, name])
                continue
            for p in cmd.params:
                single = getattr(p, "param_type_name", "") == "option" and not p.multiple
                if not single or p.name == "help":
                    continue
                opt = p.opts[0]
                one = [opt] if p.is_flag else [opt, "x"]
                r = CliRunner().invoke(app, [*path, name, *one, *one])
                assert r.exit_code == 2, (path, name, opt, r.output)
                assert "given 2 times" in r.output, (path, name, opt, r.output)
                checked += 1

    walk(root, [])
    assert checked > 30
