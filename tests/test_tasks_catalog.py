"""Finding tasks (resolve_task, list_tasks, $GENEB_DATA_DIR) and the `geneb tasks` commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import TaskError, UnknownNameError
from geneb.tasks.folders import list_tasks, resolve_task
from geneb.tasks.loader import load_task_folder
from geneb.tasks.save import save_task_folder
from geneb.tasks.synthetic import SYNTHETIC_TASK_NAMES, build_synthetic_task

runner = CliRunner()


@pytest.fixture()
def no_env_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GENEB_DATA_DIR", raising=False)


def test_resolve_by_path_builtin_and_folder_name(data_dir: Path, no_env_data_dir) -> None:
    by_path = resolve_task(str(data_dir / "dhs_idhs_fflg"))
    by_name = resolve_task("dhs_idhs_fflg", str(data_dir))
    assert by_path.spec == by_name.spec
    assert by_path.fingerprints() == by_name.fingerprints()
    syn = resolve_task("syn_tf_ctcf")
    assert syn.spec.synthetic
    assert syn.fingerprints() == build_synthetic_task("syn_tf_ctcf").fingerprints()


def test_data_dir_from_environment(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENEB_DATA_DIR", str(data_dir))
    assert resolve_task("gue_mouse_0").spec.category == "tf_binding"


def test_unknown_name_suggests_and_lists(data_dir: Path, no_env_data_dir) -> None:
    with pytest.raises(UnknownNameError) as info:
        resolve_task("gue_mous_0", str(data_dir))
    msg = str(info.value)
    assert "Did you mean 'gue_mouse_0'" in msg
    assert "syn_splice_sites" in msg and "virus_vs_host_dvf" in msg
    with pytest.raises(UnknownNameError, match="no data dir given"):
        resolve_task("gue_mouse_0")
    with pytest.raises(TaskError, match="not found"):
        resolve_task("./no/such/folder")


def test_list_tasks_matches_loading_each_folder(data_dir: Path, no_env_data_dir) -> None:
    specs = {s.name: s for s in list_tasks(str(data_dir))}
    folders = sorted(p.name for p in data_dir.iterdir() if (p / "task.json").is_file())
    assert set(specs) == set(SYNTHETIC_TASK_NAMES) | set(folders)
    for name in ("dhs_idhs_fflg", "methyl_4mc_c_equisetifolia", "gue_splice_reconstructed"):
        assert specs[name] == load_task_folder(data_dir / name).spec
    assert set(SYNTHETIC_TASK_NAMES) == {n for n, s in specs.items() if s.synthetic}
    assert [s.name for s in list_tasks()] == list(SYNTHETIC_TASK_NAMES)


def test_list_tasks_without_task_json_loads_the_folder(tmp_path: Path, no_env_data_dir) -> None:
    task = build_synthetic_task("syn_cpg_island", n_train=40, n_test=20)
    folder = save_task_folder(task, tmp_path / "cpg_copy")
    (folder / "task.json").unlink()
    (tmp_path / "not_a_task").mkdir()
    specs = {s.name: s for s in list_tasks(str(tmp_path))}
    assert "not_a_task" not in specs
    assert specs["cpg_copy"].n_classes == 2 and specs["cpg_copy"].category == "uncategorized"


def test_cli_list_shows_every_task(data_dir: Path, no_env_data_dir) -> None:
    result = runner.invoke(app, ["tasks", "list", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    for name in [*SYNTHETIC_TASK_NAMES, "gue_tf_0", "species_human_chimp_dog"]:
        assert name in result.output
    line = next(ln for ln in result.output.splitlines() if "gue_tf_0" in ln)
    assert "20,000" in line and "1,000" in line and "tf_binding" in line
    syn = next(ln for ln in result.output.splitlines() if "syn_tf_ctcf" in ln)
    assert "yes" in syn


def test_cli_list_reports_a_broken_folder_and_goes_on(tmp_path: Path, no_env_data_dir) -> None:
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "train.csv").write_text("seq,label\nACGT,0\n")
    result = runner.invoke(app, ["tasks", "list", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "broken" in result.output and "failed to read" in result.output
    with pytest.raises(TaskError, match="missing column"):
        list_tasks(str(tmp_path))


def test_cli_list_missing_data_dir_is_a_clean_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["tasks", "list", "--data-dir", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "error:" in result.output
    assert "Traceback" not in result.output


def test_cli_show_json_matches_the_loaded_task(data_dir: Path, no_env_data_dir) -> None:
    result = runner.invoke(
        app, ["tasks", "show", "ipro_arabidopsis_tata", "--data-dir", str(data_dir), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    task = load_task_folder(data_dir / "ipro_arabidopsis_tata")
    assert report["spec"]["category"] == "promoters"
    for split, data in task.splits.items():
        info = report["splits"][split]
        assert info["fingerprint"] == data.fingerprint and info["rows"] == len(data)
        counts = [v["count"] for v in info["class_balance"].values()]
        assert counts == [int((data.labels == k).sum()) for k in range(task.spec.n_classes)]


def test_cli_show_tables_for_a_synthetic_task(no_env_data_dir) -> None:
    result = runner.invoke(app, ["tasks", "show", "syn_species_markov"])
    assert result.exit_code == 0, result.output
    assert "SYNTHETIC TASK: not real data" in result.output
    fp = build_synthetic_task("syn_species_markov").split("train").fingerprint
    flat = "".join(result.output.split())
    assert fp[:20] in flat and "species_a" in result.output


def test_cli_show_unknown_name(no_env_data_dir) -> None:
    result = runner.invoke(app, ["tasks", "show", "syn_tf_ctfc"])
    assert result.exit_code == 2
    assert "error:" in result.output and "syn_tf_ctcf" in result.output
    assert "Traceback" not in result.output


def test_resolve_by_the_name_in_task_json(tmp_path: Path, no_env_data_dir) -> None:
    task = build_synthetic_task("syn_tf_ctcf", n_train=20, n_test=10)
    save_task_folder(task, tmp_path / "folder_named_differently")
    loaded = resolve_task("syn_tf_ctcf", str(tmp_path))
    assert loaded.spec.path is None  # the built-in wins over a folder with the same name
    meta = json.loads((tmp_path / "folder_named_differently" / "task.json").read_text())
    meta["name"] = "ctcf_small"
    (tmp_path / "folder_named_differently" / "task.json").write_text(json.dumps(meta))
    found = resolve_task("ctcf_small", str(tmp_path))
    assert found.name == "ctcf_small" and found.fingerprints() == task.fingerprints()
