"""`geneb tasks audit` on constructed tasks with planted leaks and shortcuts: counts exact,
verdicts right, the cache keyed by the task's content, the CLI's JSON keys.

Every expected count is what was planted, checked again by a direct pure-Python computation
written here (sets of strings, ``str.count``, Python k-mer sets), never by geneb's own code.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import test_tasks_fetch as fetch_tests
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef
from sklearn.preprocessing import StandardScaler
from typer.testing import CliRunner

from geneb.audit import audit_task, cached_audit
from geneb.cli import app
from geneb.tasks import load_task_folder

#: the fetch tests' served catalogue and empty cache, reused for the fetch hook
world = fetch_tests.world
JSON_KEYS = {
    "task", "exact_duplicates_across_splits", "label_conflicts_across_splits",
    "revcomp_duplicates_across_splits", "near_duplicates_across_splits",
    "composition_twin_opposite_label_fraction", "shortcut_mcc", "verdict",
}
COMP = str.maketrans("ACGT", "TGCA")


def rc(s: str) -> str:
    return s.translate(COMP)[::-1]


def rand_seq(rng: np.random.Generator, n: int) -> str:
    return "".join(rng.choice(list("ACGT"), n))


def dinuc_shuffle(s: str, rng: np.random.Generator, swaps: int = 200) -> str:
    """A dinucleotide-preserving shuffle: swap two adjacent closed walks u..u (positions
    i < j < k with s[i] == s[j] == s[k]) many times; every dinucleotide is kept."""
    for _ in range(swaps):
        u = s[int(rng.integers(len(s)))]
        pos = [p for p, c in enumerate(s) if c == u]
        if len(pos) < 3:
            continue
        i, j, k = sorted(rng.choice(pos, 3, replace=False).tolist())
        s = s[:i] + s[j:k] + s[i:j] + s[k:]
    return s


def dinucs(s: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for a, b in zip(s, s[1:], strict=False):
        out[a + b] = out.get(a + b, 0) + 1
    return out


def mutate(s: str, rng: np.random.Generator, n: int) -> str:
    chars = list(s)
    for p in rng.choice(len(s), n, replace=False).tolist():
        chars[p] = "ACGT"[("ACGT".index(chars[p]) + 1) % 4]
    return "".join(chars)


def kmer_set(s: str, k: int = 12) -> set[str]:
    return {min(s[i:i + k], rc(s[i:i + k])) for i in range(len(s) - k + 1)}


def write_task(folder: Path, train: list[tuple[str, int]], test: list[tuple[str, int]]) -> Path:
    folder.mkdir(parents=True)
    for name, rows in (("train", train), ("test", test)):
        text = "sequence,label\n" + "".join(f"{s},{y}\n" for s, y in rows)
        (folder / f"{name}.csv").write_text(text)
    (folder / "task.json").write_text(json.dumps({"name": folder.name, "category": "promoters"}))
    return folder


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """200 random train rows, 100 test rows; planted: 7 exact copies (3 with the other
    label), 5 reverse complements, 6 near copies (3 point mutations in 200 bp), 9 shuffles of
    a train row with the other label; the remaining test rows are fresh random sequences."""
    rng = np.random.default_rng(5)
    train = [(rand_seq(rng, 200), int(i % 2)) for i in range(200)]
    test: list[tuple[str, int]] = []
    src = iter(rng.permutation(200).tolist())
    for i in range(7):
        s, y = train[next(src)]
        test.append((s, 1 - y if i < 3 else y))
    for _ in range(5):
        s, y = train[next(src)]
        test.append((rc(s), y))
    for _ in range(6):
        s, y = train[next(src)]
        test.append((mutate(s, rng, 3), y))
    for _ in range(9):
        s, y = train[next(src)]
        test.append((dinuc_shuffle(s, rng), 1 - y))
    while len(test) < 100:
        test.append((rand_seq(rng, 200), int(len(test) % 2)))
    folder = write_task(tmp_path_factory.mktemp("audit") / "planted", train, test)
    return {"folder": folder, "train": train, "test": test}


def test_planted_counts_exact_and_checked_directly(planted: dict) -> None:
    train, test = planted["train"], planted["test"]
    # direct computation, independent of geneb
    tr_labels: dict[str, set[int]] = {}
    for s, y in train:
        tr_labels.setdefault(s, set()).add(y)
    exact = [(s, y) for s, y in test if s in tr_labels]
    conflicts = sum(bool(tr_labels[s] - {y}) for s, y in exact)
    revc = sum(s not in tr_labels and rc(s) in tr_labels for s, _ in test)
    sets_tr = [kmer_set(s) for s, _ in train]
    near = 0
    for s, _ in test:
        if s in tr_labels or rc(s) in tr_labels:
            continue
        q = kmer_set(s)
        near += max(len(q & t) / len(q | t) for t in sets_tr) >= 0.5
    twin_key = {}
    for s, y in train:
        twin_key.setdefault((len(s), *(s.count(b) for b in "ACGT"),
                             tuple(sorted(dinucs(s).items()))), []).append((s, y))
    opposite = sum(
        any(t != s and ty != y for t, ty in twin_key.get(
            (len(s), *(s.count(b) for b in "ACGT"), tuple(sorted(dinucs(s).items()))), []))
        for s, y in test
    )
    assert (len(exact), conflicts, revc, near, opposite) == (7, 3, 5, 6, 9)

    rec = audit_task(load_task_folder(planted["folder"]))
    assert rec["exact_duplicates_across_splits"] == 7
    assert rec["label_conflicts_across_splits"] == 3
    assert rec["revcomp_duplicates_across_splits"] == 5
    assert rec["near_duplicates_across_splits"] == 6
    assert rec["composition_twins_across_splits"] == 9
    assert rec["composition_twin_opposite_label_fraction"] == pytest.approx(9 / 100)
    assert rec["verdict"] == "fail"  # 18% of test rows are copies; 9% shuffled twins
    assert JSON_KEYS <= set(rec)


def test_near_threshold_is_exact_jaccard(tmp_path: Path) -> None:
    """Near copies just above and just below Jaccard 0.5 (checked by Python sets) are
    counted and not counted: the LSH candidates are verified with the exact similarity."""
    rng = np.random.default_rng(11)
    train = [(rand_seq(rng, 300), i % 2) for i in range(60)]
    test, expected = [], 0
    for i, n_mut in enumerate([1, 2, 4, 6, 8, 10, 12, 14, 20, 30]):
        s = mutate(train[i][0], rng, n_mut)
        a, b = kmer_set(s), kmer_set(train[i][0])
        expected += len(a & b) / len(a | b) >= 0.5
        test.append((s, train[i][1]))
    test += [(rand_seq(rng, 300), i % 2) for i in range(10)]
    assert 0 < expected < 10  # the mutation ladder crosses the threshold
    rec = audit_task(load_task_folder(write_task(tmp_path / "ladder", train, test)))
    assert rec["near_duplicates_across_splits"] == expected


def test_length_shortcut_and_clean_task(tmp_path: Path) -> None:
    """Class 1 is 150 bp, class 0 100 bp (otherwise random): the length shortcut reaches MCC 1
    and the task fails; the same task at one length passes. The length MCC equals
    scikit-learn's LogisticRegression(C=1) on standardised length (full data)."""
    rng = np.random.default_rng(3)

    def rows(n: int, long: bool) -> list[tuple[str, int]]:
        return [(rand_seq(rng, 150 if (long and i % 2) else 100), i % 2) for i in range(n)]

    short_cut = audit_task(load_task_folder(write_task(tmp_path / "len", rows(120, True),
                                                       rows(60, True))))
    assert short_cut["shortcut_mcc"]["length"] == pytest.approx(1.0)
    assert short_cut["verdict"] == "fail"
    assert any(r.startswith("fail: the length shortcut") for r in short_cut["reasons"])

    task = load_task_folder(write_task(tmp_path / "clean", rows(120, False), rows(60, False)))
    clean = audit_task(task)
    assert clean["verdict"] == "pass", clean["reasons"]
    assert clean["exact_duplicates_across_splits"] == 0
    # the GC shortcut, refit here with scikit-learn on the full train split
    tr, te = task.split("train"), task.split("test")

    def gc(seqs: tuple[str, ...]) -> np.ndarray:
        return np.array([[(s.count("G") + s.count("C")) / len(s)] for s in seqs])

    sc = StandardScaler().fit(gc(tr.sequences))
    clf = LogisticRegression(C=1.0, tol=1e-10, max_iter=10_000).fit(
        sc.transform(gc(tr.sequences)), tr.labels)
    want = matthews_corrcoef(te.labels, clf.predict(sc.transform(gc(te.sequences))))
    assert clean["shortcut_mcc"]["gc"] == pytest.approx(want, abs=1e-6)


def test_cache_keyed_by_content(planted: dict, tmp_path: Path) -> None:
    task = load_task_folder(planted["folder"])
    first = cached_audit(task, cache=tmp_path)
    again = cached_audit(task, cache=tmp_path)
    assert (first["cached"], again["cached"]) == (False, True)
    assert again["verdict"] == first["verdict"]
    # one test label changed: another fingerprint, so a fresh audit
    copy = tmp_path / "edited"
    copy.mkdir()
    for f in ("train.csv", "task.json"):
        (copy / f).write_text((planted["folder"] / f).read_text())
    lines = (planted["folder"] / "test.csv").read_text().splitlines()
    s, y = lines[1].split(",")
    lines[1] = f"{s},{1 - int(y)}"
    (copy / "test.csv").write_text("\n".join(lines) + "\n")
    edited = cached_audit(load_task_folder(copy), cache=tmp_path)
    assert edited["cached"] is False
    assert edited["label_conflicts_across_splits"] == first["label_conflicts_across_splits"] - 1


def test_cli_json_out_and_errors(planted: dict, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENEB_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["tasks", "audit", str(planted["folder"]), "--json",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    lines = [json.loads(line) for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and JSON_KEYS <= set(lines[0])
    assert set(lines[0]["shortcut_mcc"]) == {"length", "gc", "kmer1", "kmer2", "kmer3"}
    assert json.loads((out / "planted.json").read_text())["verdict"] == "fail"
    assert list((tmp_path / "cache" / "audit").glob("planted-*.json"))
    table = CliRunner().invoke(app, ["tasks", "audit", str(planted["folder"])])
    assert table.exit_code == 0 and "FAIL" in table.output
    bad = CliRunner().invoke(app, ["tasks", "audit", str(tmp_path / "missing")])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    (tmp_path / "afile").write_text("x")
    clash = CliRunner().invoke(app, ["tasks", "audit", str(planted["folder"]),
                                     "--out", str(tmp_path / "afile")])
    assert clash.exit_code == 2 and "--out" in clash.output


def test_report_section_and_shortcut_gap(planted: dict, tmp_path: Path) -> None:
    """The report reads the audits (never runs one): the task-health section, the per-task
    and per-category MCC minus best-shortcut tables (checked by hand from the results and the
    audit file), and the flag for a task no model beats a shortcut on by the margin."""
    import pandas as pd
    from example_results import example_results

    from geneb.analysis.report import build_report
    from geneb.audit import SHORTCUT_MARGIN

    rng = np.random.default_rng(8)
    length_task = write_task(
        tmp_path / "lenq",
        [(rand_seq(rng, 150 if i % 2 else 100), i % 2) for i in range(80)],
        [(rand_seq(rng, 150 if i % 2 else 100), i % 2) for i in range(40)],
    )
    audits = tmp_path / "audits"
    res = CliRunner().invoke(app, ["tasks", "audit", str(planted["folder"]), str(length_task),
                                   "--out", str(audits), "--json"],
                             env={"GENEB_CACHE": str(tmp_path / "cache")})
    assert res.exit_code == 0, res.output
    recs = {r["task"]: r for r in map(json.loads, res.output.splitlines())}
    tasks = {"planted": ("promoters", 0.0, 100), "lenq": ("promoters", 0.1, 40),
             "other": ("enhancers", 0.0, 50)}
    df = example_results(tasks=tasks, mlp=False, Cs=(1.0,))
    fps = {t: load_task_folder(f).split("train").fingerprint
           for t, f in (("planted", planted["folder"]), ("lenq", length_task))}
    df["task_fingerprint"] = df["task"].map(fps).fillna("sha256:unaudited")
    index = build_report(df, tmp_path / "report", n_boot=200, audits=audits)
    html = index.read_text()
    assert "Task health: leaks and shortcuts" in html and "Not audited (1): other" in html
    per_task = pd.read_csv(index.parent / "tables" / "shortcut_gap_task.csv")
    full = df[(df["regime"] == "full") & (df["probe"] == "linear")]
    want = full.groupby(["model", "task"])["mcc"].mean()
    assert set(per_task["task"]) == {"planted", "lenq"}
    for r in per_task.itertuples():
        sc = max(recs[r.task]["shortcut_mcc"].values())
        assert r.mcc == pytest.approx(want[(r.model, r.task)])
        assert r.mcc_minus_shortcut == pytest.approx(want[(r.model, r.task)] - sc)
    per_cat = pd.read_csv(index.parent / "tables" / "shortcut_gap_category.csv")
    assert set(per_cat["category"]) == {"promoters"}
    m0 = per_cat.iloc[0]
    assert m0["mcc_minus_shortcut"] == pytest.approx(
        per_task[per_task["model"] == m0["model"]]["mcc_minus_shortcut"].mean())
    # the length task (shortcut MCC 1) is flagged; planted only if no model clears the margin
    best = per_task.groupby("task")["mcc_minus_shortcut"].max()
    assert best["lenq"] < SHORTCUT_MARGIN
    flag_line = html[html.index("Flagged:"):].split("</p>")[0]
    assert "lenq" in flag_line
    assert ("planted" in flag_line) == (best["planted"] < SHORTCUT_MARGIN)


def test_fetch_prints_the_verdicts(world: dict) -> None:
    """`geneb tasks fetch` audits what it fetched (into the fetch's cache) and prints the
    verdicts; gue_prom_300_tata has exact and near copies of train rows in test (warn)."""
    result = fetch_tests.fetch_cli(world, "loc_prom")
    assert result.exit_code == 0, result.output
    rec = audit_task(load_task_folder(world["cache"] / "tasks" / "loc_prom"))
    assert rec["verdict"] == "warn" and rec["exact_duplicates_across_splits"] == 6
    assert f"audit loc_prom: WARN ({rec['reasons'][0]}" in " ".join(result.output.split())
    assert len(list((world["cache"] / "audit").glob("loc_prom-*.json"))) == 1


@pytest.mark.parametrize("k", [1, 2, 3, 5, 7, 12, 13])
def test_canonical_kmers_against_python(k: int) -> None:
    """The near-duplicate k-mers (built by doubling) equal a direct Python enumeration:
    every window of A/C/G/T only, as min(code, code of its reverse complement)."""
    from geneb.audit.near import canonical_kmers

    def code(s: str) -> int:
        v = 0
        for ch in s:
            v = v * 4 + "ACGT".index(ch)
        return v

    rng = np.random.default_rng(k)
    seqs = ["".join(rng.choice(list("ACGTN"), n, p=[0.24] * 4 + [0.04]))
            for n in (3, 30, 100, k, k + 1)]
    rows, codes = canonical_kmers(seqs, k)
    want = [(i, min(code(s[j:j + k]), code(rc(s[j:j + k]))))
            for i, s in enumerate(seqs) for j in range(len(s) - k + 1) if "N" not in s[j:j + k]]
    assert list(zip(rows.tolist(), codes.tolist(), strict=True)) == want


def test_valid_split_copies(planted: dict, tmp_path: Path) -> None:
    """A valid split holding 4 train rows (1 as reverse complement) and 2 test rows."""
    folder = tmp_path / "withvalid"
    folder.mkdir()
    for f in ("train.csv", "test.csv", "task.json"):
        (folder / f).write_text((planted["folder"] / f).read_text())
    rng = np.random.default_rng(2)
    rows = [planted["train"][i] for i in (150, 151, 152)] + [(rc(planted["train"][153][0]), 1)]
    rows += [planted["test"][90], planted["test"][91]] + [(rand_seq(rng, 200), i % 2)
                                                          for i in range(6)]
    (folder / "valid.csv").write_text("sequence,label\n" + "".join(f"{s},{y}\n" for s, y in rows))
    rec = audit_task(load_task_folder(folder))
    assert rec["valid_split"]["valid_in_train"]["exact"] == 3
    assert rec["valid_split"]["valid_in_train"]["revcomp"] == 1
    assert rec["valid_split"]["test_in_valid"]["exact"] == 2
    assert audit_task(load_task_folder(planted["folder"]))["valid_split"] is None
