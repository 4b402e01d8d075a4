"""The report's user files (``--model-properties``, ``--task-organisms``) on
rows a reader could misread (issue 28, cases 20 and 21): a parameter count no model has, or
one past int64, and a line with more or fewer fields than the header are one line naming the
file and the line, before any work; nothing is written.

References: the line numbers are counted by hand in each file written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from example_results import example_results
from typer.testing import CliRunner

from geneb.analysis.domain import read_task_organisms
from geneb.analysis.properties import read_model_properties
from geneb.cli import app
from geneb.errors import GenebError


@pytest.mark.parametrize("count", ["5e15", str(2**64), "1e400", "-3", "0", "1.5", "nan"])
def test_implausible_parameter_counts_are_refused_naming_the_line(tmp_path: Path,
                                                                  count: str) -> None:
    p = tmp_path / "props.csv"
    p.write_text(f"model,n_params\nmid-20m,2e7\n\nbig-100m,{count}\n")  # line 4, after a blank
    with pytest.raises(GenebError) as e:
        read_model_properties(p)
    msg = str(e.value)
    assert f"{p}: line 4 ('big-100m'): n_params must be a positive whole number" in msg, msg
    assert repr(count) in msg


def test_exact_counts_are_kept_exactly(tmp_path: Path) -> None:
    p = tmp_path / "props.csv"
    p.write_text("model,n_params\na,9999999999999\nb,8.6e7\n")  # digits: never through float
    got = read_model_properties(p).set_index("model")["n_params"]
    assert got["a"] == 9_999_999_999_999 and got["b"] == 86_000_000


def test_toml_count_past_int64_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "props.toml"
    p.write_text('[models."tiny-1m"]\nn_params = 9223372036854775807\n')
    with pytest.raises(GenebError, match=r"\[models.'tiny-1m'\].*n_params must be"):
        read_model_properties(p)


@pytest.mark.parametrize(
    ("line", "fields"),
    [("kmer-4,5,7,8", 4), ("big-100m,1e8,transformer", 3), ("small-4m", 1), ('"a,b",1,2', 3)],
)
def test_a_line_with_other_field_counts_is_refused(tmp_path: Path, line: str,
                                                   fields: int) -> None:
    p = tmp_path / "props.csv"
    p.write_text(f"model,n_params\n\"mid,20m\",2e7\n{line}\n")  # a quoted comma is one field
    with pytest.raises(GenebError) as e:
        read_model_properties(p)
    assert f"{p}: line 3: {fields} fields, expected 2 as in the header (model,n_params)" in str(
        e.value)  # fmt: skip


def test_the_other_user_files_count_fields_too(tmp_path: Path) -> None:
    info = tmp_path / "info.csv"
    info.write_text("model,architecture\nmid-20m,transformer\nbig-100m,transformer,extra\n")
    with pytest.raises(GenebError, match=r"line 3: 3 fields, expected 2"):
        read_model_properties(info)
    orgs = tmp_path / "orgs.csv"
    orgs.write_text("task,organism\n\nprom_a,human\nprom_b,human,plant\n")
    with pytest.raises(GenebError, match=r"line 4: 3 fields, expected 2"):
        read_task_organisms(orgs)
    orgs.write_text("task,organism\n\nprom_a,human\nprom_a,plant\n")
    with pytest.raises(GenebError, match=r"line 4: task 'prom_a' listed twice"):
        read_task_organisms(orgs)
    info.write_text("model,model\na,b\n")
    with pytest.raises(GenebError, match=r"line 1: column\(s\) \['model'\] named twice"):
        read_model_properties(info)


@pytest.mark.parametrize("content", ["model,n_params\ntiny-1m,3e38\n",
                                     "model,n_params\nkmer-4,2,7,8\n"])
def test_report_cli_refuses_before_any_work(tmp_path: Path, content: str) -> None:
    res = tmp_path / "results.parquet"
    example_results().to_parquet(res)
    props = tmp_path / "props.csv"
    props.write_text(content)
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["report", "-r", str(res), "-o", str(out),
                                 "--model-properties", str(props)])  # fmt: skip
    text = r.output.strip()
    assert r.exit_code == 2 and len(text.splitlines()) == 1 and "Traceback" not in text, text
    assert "line 2" in text
    assert not out.exists()
