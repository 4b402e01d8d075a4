"""Trust names the models it applies to (issue 28, case 28): with several --model, the bare
--trust-remote-code is refused in one line (it would let every model run its own code), and
--trust-remote-code-for MODEL (repeatable) lets only the named models' code run: the other
custom-code folder is refused before any work and its code never runs.

The detector is the marker file each folder's ``evil.py`` writes when imported
(tests/test_extract_trust.py): it appears exactly for the folders that were trusted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_extract_trust import CASES, TASK, _folder, marker_of
from typer.testing import CliRunner

from geneb.cli import app
from geneb.extract.runner import extract
from geneb.models.trust import TrustOptionError

pytest.importorskip("transformers")


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["extract", *args])
    return res.exit_code, " ".join(res.output.split())


def test_bare_flag_with_several_models_is_refused(models_dir: Path, data_dir: Path,
                                                  tmp_path: Path) -> None:
    a = _folder(models_dir, tmp_path, "model-a", *CASES["automap-automodel"])
    store = tmp_path / "s.zarr"
    code, out = run("--store", str(store), "--model", "kmer-3", "--model", str(a), "--task",
                    str(data_dir / TASK), "--trust-remote-code")  # fmt: skip
    assert code == 2 and out.startswith("error: --trust-remote-code with 2 --model"), out
    assert "--trust-remote-code-for kmer-3" in out and "Traceback" not in out
    assert not marker_of(a).exists() and not store.exists()


def test_only_the_named_model_runs_its_code(models_dir: Path, data_dir: Path,
                                            tmp_path: Path) -> None:
    a = _folder(models_dir, tmp_path, "model-a", *CASES["automap-automodel"])
    b = _folder(models_dir, tmp_path, "model-b", *CASES["automap-automodel"])
    store = tmp_path / "s.zarr"
    common = ["--store", str(store), "--model", str(a), "--model", str(b), "--task",
              str(data_dir / TASK), "--split", "test"]  # fmt: skip
    code, out = run(*common, "--trust-remote-code-for", str(a))
    assert code == 2 and "model-b" in out and "--trust-remote-code" in out, out
    assert not marker_of(a).exists() and not marker_of(b).exists()  # refused before any load
    assert not store.exists()
    code, out = run(*common, "--trust-remote-code-for", "elsewhere/model-c")
    assert code == 2 and "'elsewhere/model-c' is not one of the --model given" in out, out
    code, out = run(*common, "--trust-remote-code-for", str(a), "--trust-remote-code-for",
                    str(b))  # fmt: skip
    assert code == 0, out
    assert marker_of(a).exists() and marker_of(b).exists()


def test_library_list_form(models_dir: Path, data_dir: Path, tmp_path: Path) -> None:
    a = _folder(models_dir, tmp_path, "model-a", *CASES["automap-automodel"])
    store = tmp_path / "s.zarr"
    with pytest.raises(TrustOptionError, match=r"'other' is not one of the models given"):
        extract(store, ["kmer-3", str(a)], str(data_dir / TASK), "test",
                trust_remote_code=["other"])  # fmt: skip
    res = extract(store, ["kmer-3", str(a)], str(data_dir / TASK), "test",
                  trust_remote_code=[str(a)])  # fmt: skip
    assert len(res) == 2 and marker_of(a).exists()
