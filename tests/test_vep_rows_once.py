"""Issue 28 cases 11 and 14: a non-finite score, a variant given twice, a task given twice.

Held out from the issue's replay (``inf`` in the BRCA1 CSV; the same task twice): ``-inf``,
``Infinity``, ``1e999`` (overflows to inf), in a CSV and in a VCF's INFO/SCORE; a copy of a
row with the same label and with the other label, in CSV and VCF; a plan naming one folder
twice by two spellings, and two folders holding tasks of one name. Line numbers come from the
rows written here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_vep_plan import plan_text
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import PlanError, TaskError
from geneb.pipeline.plan import load_plan
from geneb.tasks.variants import load_variant_task

SEQ = "ACGTTGCAACGGATCCTTAG" * 10  # chrT, 200 bases
HEAD = "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"


def _task(folder: Path, rows: list[tuple[int, str, int, str]], vcf: bool = False) -> Path:
    """rows: (pos, alt, label, score text); ref from SEQ."""
    folder.mkdir(parents=True)
    (folder / "reference.fa").write_text(f">chrT\n{SEQ}\n")
    if vcf:
        lines = [f"chrT\t{p}\t.\t{SEQ[p - 1]}\t{a}\t.\tPASS\tLABEL={y};SCORE={s}\n"
                 for p, a, y, s in rows]
        (folder / "variants.vcf").write_text(HEAD + "".join(lines))
    else:
        lines = [f"chrT,{p},{SEQ[p - 1]},{a},{y},{s}\n" for p, a, y, s in rows]
        (folder / "variants.csv").write_text("chrom,pos,ref,alt,label,score\n" + "".join(lines))
    return folder


def _alt(p: int) -> str:
    return "A" if SEQ[p - 1] != "A" else "C"


def _rows(n: int = 8) -> list[tuple[int, str, int, str]]:
    return [(20 + 10 * i, _alt(20 + 10 * i), i % 2, f"0.{i}") for i in range(n)]


@pytest.mark.parametrize("value", ["-inf", "Infinity", "1e999", "inf"])
@pytest.mark.parametrize("vcf", [False, True])
def test_non_finite_score_refused_naming_the_row(tmp_path, value, vcf):
    rows = _rows()
    rows[5] = (*rows[5][:3], value)
    folder = _task(tmp_path / "t", rows, vcf)
    with pytest.raises(TaskError) as e:
        load_variant_task(folder)
    line = 5 + (3 if vcf else 2)  # the header line(s) come first
    name = "variants.vcf" if vcf else "variants.csv"
    assert f"{name} line {line}" in str(e.value), str(e.value)
    assert "expected a finite number" in str(e.value) and repr(value) in str(e.value)
    r = CliRunner().invoke(app, ["vep", "score", "--task", str(folder), "--model", "kmer-2",
                                 "--scorer", "cosine", "--window", "16"])
    assert r.exit_code == 2 and "Traceback" not in r.output


@pytest.mark.parametrize(("vcf", "other_label"), [(False, False), (False, True), (True, True),
                                                  (True, False)])
def test_variant_given_twice_refused_naming_both_lines(tmp_path, vcf, other_label):
    rows = _rows()
    p, a, y, _ = rows[2]
    rows.insert(6, (p, a, 1 - y if other_label else y, "0.9"))
    folder = _task(tmp_path / "t", rows, vcf)
    with pytest.raises(TaskError) as e:
        load_variant_task(folder)
    off = 3 if vcf else 2
    msg = str(e.value)
    assert re.search(rf"line {2 + off}\b[^:]* and line {6 + off}\b", msg), msg
    assert f"chrT:{p}:{SEQ[p - 1]}:{a}" in msg
    assert ("with labels 0 and 1" in msg) == other_label and "expected each variant once" in msg


def test_same_position_other_allele_is_not_a_copy(tmp_path):
    rows = _rows()
    p, a, y, s = rows[3]
    other = next(b for b in "ACGT" if b not in (a, SEQ[p - 1]))
    rows.append((p, other, 1 - y, s))
    assert len(load_variant_task(_task(tmp_path / "t", rows))) == 9


def test_plan_refuses_a_variant_task_given_twice(tmp_path, data_dir):
    a = _task(tmp_path / "vt" / "alpha", _rows())
    spelled = tmp_path / "vt" / "." / "alpha"
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(data_dir, f'tasks = ["{a}", "{spelled}"]\nwindow = 16'))
    with pytest.raises(PlanError, match=r"vep.tasks items 1 and 2 are the same folder"):
        load_plan(plan)
    b = _task(tmp_path / "other" / "alpha", _rows(6))  # another folder, the same task name
    plan.write_text(plan_text(data_dir, f'tasks = ["{a}", "{b}"]\nwindow = 16'))
    r = CliRunner().invoke(app, ["run", str(plan)])
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "are both variant task 'alpha'" in text, text
    assert not (tmp_path / "store.zarr").exists() and not (tmp_path / "out").exists()
