"""Plan files: every mistake is caught before any work, with the offending key named."""

from __future__ import annotations

from pathlib import Path

import pytest

from geneb.errors import PlanError
from geneb.pipeline.plan import load_plan

GOOD = """
store = "work/store.zarr"
out = "work/out"

[[models]]
model = "kmer-3"

[[models]]
model = "kmer-4"
name = "k4"

[tasks]
names = ["syn_tata"]

[probe]
shots = ["1", 10, "full"]
seeds = [13, 17]
C = [0.1, 1]
probes = ["linear", "mlp"]
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "plan.toml"
    p.write_text(text)
    return p


def test_good_plan_resolves_paths_relative_to_the_plan(tmp_path):
    plan = load_plan(write(tmp_path, GOOD))
    assert plan.store == tmp_path / "work/store.zarr"
    assert plan.results_path == tmp_path / "work/out/results.parquet"
    assert [m.model for m in plan.models] == ["kmer-3", "kmer-4"]
    assert plan.models[1].name == "k4"
    assert plan.probe.shots == ("1", "10", "full")
    assert plan.probe.seeds == (13, 17)
    assert plan.probe.Cs == (0.1, 1.0)
    assert plan.probe.probes == ("linear", "mlp")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('[probe]\nshots', '[probe]\nshot', "unknown key 'shot' in [probe]. Did you mean 'shots'"),
        ('out = "work/out"', 'ouput = "work/out"', "unknown key 'ouput'"),
        ('name = "k4"', 'nmae = "k4"', "unknown key 'nmae' in [[models]] #2"),
        ('names = ["syn_tata"]', 'name = ["syn_tata"]', "unknown key 'name' in [tasks]"),
        ('probes = ["linear", "mlp"]', 'probes = ["linear", "svm"]', "'svm'"),
        ('shots = ["1", 10, "full"]', 'shots = ["one"]', "'one'"),
        ('seeds = [13, 17]', 'seeds = ["a"]', "[probe] seeds[0]: expected a non-negative int"),
        ('[[models]]\nmodel = "kmer-3"\n', '[[models]]\nmodel = "kmer-4"\nname = "k4"\n', "twice"),
    ],
)
def test_plan_mistakes_are_named(tmp_path, old, new, expected):
    assert old in GOOD
    with pytest.raises(PlanError) as err:
        load_plan(write(tmp_path, GOOD.replace(old, new, 1)))
    assert expected in str(err.value)


def test_missing_folder_and_bad_toml(tmp_path):
    with pytest.raises(PlanError, match=r"\[tasks\] folders\[0\]: expected an existing folder"):
        load_plan(write(tmp_path, GOOD.replace('names = ["syn_tata"]', 'folders = ["nope"]')))
    with pytest.raises(PlanError, match="not valid TOML"):
        load_plan(write(tmp_path, "store = "))
    with pytest.raises(PlanError, match="missing required key 'models'"):
        load_plan(write(tmp_path, 'store = "s"\nout = "o"\n[tasks]\nnames=["a"]\n'))


def test_collection_expands_to_task_folders(tmp_path):
    for name in ("b_task", "a_task"):
        (tmp_path / "coll" / name).mkdir(parents=True)
    text = GOOD.replace('names = ["syn_tata"]', 'collections = ["coll"]')
    plan = load_plan(write(tmp_path, text))
    assert [Path(t).name for t in plan.tasks] == ["a_task", "b_task"]


def test_results_path_that_is_a_foreign_folder_is_refused_before_any_work(tmp_path):
    """``out/results.parquet`` is a folder of parts; a folder of other files there is not."""
    from geneb.pipeline.execute import run_plan

    plan = load_plan(write(tmp_path, GOOD.replace('names = ["syn_tata"]',
                                                  'names = ["syn_tf_ctcf"]')))
    foreign = plan.results_path
    foreign.mkdir(parents=True)
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(PlanError, match="not a geneb results table"):
        run_plan(plan)
    assert not (tmp_path / "work" / "store.zarr").exists()
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]


def test_a_probe_the_protocol_lacks_is_refused_before_any_work(tmp_path):
    """``[probe] protocol = "paper"`` with the MLP: refused by ``check_probes`` (the rule of
    ``geneb probe``, one function for both) before extraction, naming the section."""
    from geneb.pipeline.execute import dry_run, run_plan

    plan = load_plan(write(tmp_path, GOOD + 'protocol = "paper"\n'))
    for call in (dry_run, run_plan):
        with pytest.raises(PlanError, match=r"\[probe\] protocol='paper' is the paper's "
                           r"logistic regression: it applies to probe='linear', got "
                           r"probe='mlp'"):
            call(plan)
    assert not (tmp_path / "work").exists()


def test_workers_override_the_plan(tmp_path):
    plan = load_plan(write(tmp_path, GOOD), workers=3)
    assert (plan.extract_workers, plan.probe.workers) == (3, 3)
    assert (plan.extract_scheduler, plan.probe.scheduler) == (None, None)
    with pytest.raises(PlanError, match="give workers or scheduler, not both"):
        load_plan(write(tmp_path, GOOD), workers=2, scheduler="tcp://h:1")
