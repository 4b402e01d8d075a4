"""Issue 28 cases 1 and 2: a window the model cannot see whole is never scored.

Held-out from the issue's replay (tiny-bert-char-mlm, window 4096 and 10,000,000): a 6-mer
ESM tokenizer, the BPE DNABERT-2 tokenizer, a causal character LM, windows per model.
Token counts come from the model's own tokenizer called directly (plain transformers), never
from geneb; the advice a refusal gives is followed and must work.
"""

from __future__ import annotations

import re
import resource
import time
from pathlib import Path

import numpy as np
import pytest
from test_vep_scorers import brca1  # noqa: F401 - fixture
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import GenebError
from geneb.tasks.variants import load_variant_task
from geneb.vep.context import WindowTooLong
from geneb.vep.runner import score_variants


def _tokens(folder: Path, text: str) -> int:
    from transformers import AutoTokenizer

    return len(AutoTokenizer.from_pretrained(str(folder))(text)["input_ids"])


@pytest.mark.parametrize(("model", "window", "scorers"), [
    ("tiny-lm/tiny-esm-nt-6mer-mlm", 8192, ["cosine", "l2"]),
    ("tiny-lm/tiny-esm-nt-6mer-mlm", 7000, ["llr"]),
    ("tiny-lm/tiny-llama-char-clm", 5000, ["cosine"]),
    ("tiny/tiny-bert-dnabert2-bpe", 40000, ["l2"]),
])
def test_window_longer_than_context_refused_and_advice_works(brca1, models_dir, model,  # noqa: F811
                                                            window, scorers):
    folder = models_dir / model
    with pytest.raises(WindowTooLong) as e:
        score_variants(brca1, str(folder), scorers, window=window, limit=6)
    msg = str(e.value)
    assert msg.startswith("window: ") and f"{window:,} bases do not fit" in msg, msg
    advised = int(re.search(r"\(window=(\d+)\)", msg).group(1))
    assert 2 <= advised < window and advised % 2 == 0
    # independent: the model's tokenizer on the advised window of the task's bases
    vt = load_variant_task(brca1)
    seq = max(vt.records, key=lambda r: len(r.seq)).seq
    limit = int(re.search(r"at most ([\d,]+) tokens", msg).group(1).replace(",", ""))
    assert _tokens(folder, seq[:advised]) <= limit < _tokens(folder, seq[: advised + 2])
    df = score_variants(brca1, str(folder), scorers, window=advised, limit=6)
    assert (df["status"] == "ok").all(), df["status"].value_counts()


def test_cli_refuses_before_any_model_work(brca1, models_dir, tmp_path):  # noqa: F811
    out = tmp_path / "s.parquet"
    r = CliRunner().invoke(app, ["vep", "score", "--task", str(brca1), "--model",
                                 str(models_dir / "tiny-lm" / "tiny-bert-char-mlm"), "--scorer",
                                 "cosine", "--window", "3000", "--out", str(out)])
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    assert text.startswith("error: --window: 3,000 bases do not fit"), text
    assert "(--window 1024)" in text and not out.exists()


def test_huge_window_refused_before_any_work_in_bounded_time_and_memory(brca1,  # noqa: F811
                                                                         models_dir):
    vt = load_variant_task(brca1)
    longest = max(len(r.seq) for r in vt.records)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    # beyond the reference: refused before the model loads
    for w in (longest + 2 - longest % 2, 50_000_000):
        with pytest.raises(GenebError, match=rf"window: expected at most {longest:,} bases"):
            score_variants(vt, "kmer-4", ["cosine"], window=w)
    # inside the reference but far beyond the model: the probe tokenises a few bases only
    with pytest.raises(WindowTooLong):
        score_variants(vt, str(models_dir / "tiny-lm" / "tiny-esm-nt-6mer-mlm"), ["llr"],
                       window=longest // 2 * 2 - 10)
    assert time.perf_counter() - t0 < 30
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 500, grown_mb


def test_windows_near_the_limit_checked_one_by_one(tmp_path, models_dir):
    """A 6-mer tokenizer splits N runs into single tokens: a window over an N run needs more
    tokens than the reference's clean start, so it passes the up-front probe and must get
    status window_longer_than_model_context; the others are scored."""
    folder = models_dir / "tiny-lm" / "tiny-esm-nt-6mer-mlm"
    rng = np.random.default_rng(7)
    seq = list("".join(rng.choice(list("ACGT"), 20000)))
    seq[12000:12300] = "N" * 300
    seq = "".join(seq)
    task = tmp_path / "nrun"
    task.mkdir()
    (task / "reference.fa").write_text(f">chrT\n{seq}\n")
    rows = ["chrT,4001,{r},{a},0", "chrT,5001,{r2},{a2},1", "chrT,12500,{r3},{a3},1",
            "chrT,16001,{r4},{a4},0"]
    lines = ["chrom,pos,ref,alt,label"]
    for row, pos in zip(rows, (4001, 5001, 12500, 16001), strict=True):
        ref = seq[pos - 1]
        alt = "A" if ref != "A" else "C"
        lines.append(re.sub(r"\{r\d?\}", ref, re.sub(r"\{a\d?\}", alt, row)))
    (task / "variants.csv").write_text("\n".join(lines) + "\n")
    window = 5600
    half = window // 2
    limit = 1000  # the tokenizer's model_max_length (ESM: 1002 positions)
    want = []
    for pos in (4001, 5001, 12500, 16001):
        p = pos - 1
        want.append("ok" if _tokens(folder, seq[p - half : p + half]) <= limit else
                    "window_longer_than_model_context")
    assert want.count("ok") == 3  # the test's own premise
    df = score_variants(task, str(folder), ["cosine"], window=window)
    assert df["status"].tolist() == want
    assert np.isnan(df["score"].to_numpy()[np.array(want) != "ok"]).all()


def test_plan_skips_a_model_whose_context_is_shorter_than_the_window(
        tmp_path, data_dir, models_dir, brca1):  # noqa: F811
    """`geneb run`: the model that cannot see the window whole is skipped for VEP with one
    line (naming the window that fits, in the plan's key); the k-mer model is scored."""
    from test_vep_plan import plan_text

    bert = models_dir / "tiny-lm" / "tiny-bert-char-mlm"
    text = plan_text(data_dir, f'tasks = ["{brca1}"]\nwindow = 2048\nlimit = 20\n'
                     'scorers = ["cosine"]')
    text = text.replace('[[models]]\nmodel = "kmer-2"\n',
                        f'[[models]]\nmodel = "kmer-2"\n\n[[models]]\nmodel = "{bert}"\n'
                        'name = "bert"\n')
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    r = CliRunner().invoke(app, ["run", str(plan)])
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "vep bert on brca1_findlay2018: cosine skipped (window: 2,048 bases do not fit" in out
    assert "the largest window that fits is 1,024 bases" in out
    got = sorted(p.name for p in (tmp_path / "out" / "vep").glob("*.parquet"))
    assert got == ["brca1_findlay2018__kmer-2__w2048.parquet"]
