"""Issue 28 case 16: ``geneb run --dry-run`` lists the [vep] work, and writes nothing.

Held out from the issue's replay: two models, a limit, a supervised probe, and a second dry
run after a real run (the windows then come from the store).
"""

from __future__ import annotations

from test_vep_plan import brca1, plan_text  # noqa: F401 - fixture
from typer.testing import CliRunner

from geneb.cli import app


def test_dry_run_lists_vep_work(tmp_path, data_dir, brca1):  # noqa: F811
    text = plan_text(data_dir, f'tasks = ["{brca1}"]\nwindow = 64\nlimit = 800\nprobe = ["diff"]'
                     "\nfolds = 3")
    text = text.replace('[[models]]\nmodel = "kmer-2"\n',
                        '[[models]]\nmodel = "kmer-2"\n\n[[models]]\nmodel = "kmer-3"\n')
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    r = CliRunner().invoke(app, ["run", str(plan), "--dry-run"])
    assert r.exit_code == 0, r.output
    lines = [" ".join(ln.split()) for ln in r.output.splitlines() if ln.startswith("vep ")]
    assert len(lines) == 2, r.output
    for model, line in zip(("kmer-2", "kmer-3"), lines, strict=True):
        assert line.startswith(f"vep {model} / brca1_findlay2018: 800 variants at window 64"), line
        assert "windows embed;" in line and "score cosine, l2, llr" in line
        assert "probe diff (3 folds by blocks)" in line
    assert not (tmp_path / "store.zarr").exists() and not (tmp_path / "out").exists()
    plan.write_text(text.replace('\n[[models]]\nmodel = "kmer-3"\n', ""))
    assert CliRunner().invoke(app, ["run", str(plan)]).exit_code == 0
    again = CliRunner().invoke(app, ["run", str(plan), "--dry-run"])
    assert "windows reuse (complete)" in " ".join(again.output.split()), again.output
