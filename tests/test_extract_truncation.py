"""Long sequences are counted: rows truncated and tokens dropped, in provenance and one warning.

Real rows of the lncrna and species tasks (up to ~17-19 kb) against a 512-token model; the
expected counts come from the tokenizer called directly (transformers), not from geneb.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.store import FeatureStore

transformers = pytest.importorskip("transformers")

MODEL = "tiny/tiny-bert-dnabert2-bpe"  # 512 tokens: [CLS] + 510 content + [SEP]
TASKS = {"lncrna_ath_prelnc": 20, "species_human_chimp_dog": 20}


def small_task(data_dir: Path, name: str, n: int, out: Path) -> tuple[Path, dict[str, list[str]]]:
    """A task folder with the first ``n`` train and test rows of a real task (per class)."""
    d = out / f"{name}_first{n}"
    d.mkdir(parents=True)
    meta = json.loads((data_dir / name / "task.json").read_text())
    seqs: dict[str, list[str]] = {}
    for split in ("train", "test"):
        with open(data_dir / name / f"{split}.csv", newline="") as f:
            every = list(csv.DictReader(f))
        labels = sorted({r["label"] for r in every})
        per = n // len(labels)
        rows = [r for lab in labels for r in [x for x in every if x["label"] == lab][:per]]
        with open(d / f"{split}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["sequence", "label"])
            w.writerows((r["sequence"], r["label"]) for r in rows)
        seqs[split] = [r["sequence"] for r in rows]
    spec = {"name": d.name, "category": meta["category"], "n_classes": meta["n_classes"]}
    (d / "task.json").write_text(json.dumps(spec))
    return d, seqs


def expected_counts(folder: Path, seqs: list[str], room: int) -> tuple[int, int]:
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    lens = [len(tok(s, add_special_tokens=False)["input_ids"]) for s in seqs]
    return sum(n > room for n in lens), sum(max(0, n - room) for n in lens)


def test_truncated_rows_counted_and_warned_once(
    models_dir: Path, data_dir: Path, tmp_path: Path
) -> None:
    folder = models_dir / MODEL
    tasks = {name: small_task(data_dir, name, n, tmp_path) for name, n in TASKS.items()}
    store = tmp_path / "store.zarr"
    args = ["extract", "--store", str(store), "--model", str(folder), "--device", "cpu"]
    for d, _ in tasks.values():
        args += ["--task", str(d)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    warnings = [ln for ln in res.output.splitlines() if "warning:" in ln]
    assert len(warnings) == 1, res.output
    assert "truncated" in warnings[0] and "tokens dropped" in warnings[0]
    total_rows = total_tokens = 0
    for d, seqs in tasks.values():
        for split in ("train", "test"):
            rows, tokens = expected_counts(folder, seqs[split], room=510)
            total_rows, total_tokens = total_rows + rows, total_tokens + tokens
            info = CliRunner().invoke(
                app, ["store", "info", "--store", str(store), "-m", folder.name, "-t", d.name, "-s", split]
            )
            assert info.exit_code == 0, info.output
            got = json.loads(info.output)["provenance"]["extra"]["long_sequences"]
            assert got == {
                "rows": len(seqs[split]),
                "truncated_rows": rows,
                "dropped_tokens": tokens,
                "windowed_rows": 0,
            }
        assert rows > 0  # the test split really has long rows
    assert f" {total_rows} of " in warnings[0]
    assert f"{total_tokens:,} tokens dropped" in " ".join(warnings[0].split())

    # window mode embeds every token: nothing dropped, no warning
    store2 = tmp_path / "store2.zarr"
    d, seqs = tasks["lncrna_ath_prelnc"]
    args2 = args[:2] + [str(store2)] + args[3:7] + ["--task", str(d), "--truncation", "window"]
    res = CliRunner().invoke(app, args2)
    assert res.exit_code == 0 and "warning:" not in res.output, res.output
    e = FeatureStore(store2).get(folder.name, d.name, "test")
    ls = e.provenance.extra["long_sequences"]
    assert ls["dropped_tokens"] == 0 and ls["truncated_rows"] == 0
    assert ls["windowed_rows"] == expected_counts(folder, seqs["test"], room=510)[0]
