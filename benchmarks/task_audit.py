"""Task-audit speed and memory: ``geneb tasks audit`` vs ``seqleak audit`` (issue 22).

Part 1, in one run on the same machine: the audit of every task folder under ``--data`` in ONE
``geneb tasks audit`` command (fresh cache, ``--refresh``: everything computed), against
``seqleak audit`` on the same train/test files, one command per task (seqleak audits one task
per call), (a) with its default checks and (b) with only the checks geneb also makes
(overlap.exact, overlap.near, construction.shuffle, shortcut.length, shortcut.composition,
shortcut.kmer). Each tool runs as a subprocess; wall time and the children's CPU time
(user + system, less sensitive to other load on a shared machine) are reported, and the
ratios seqleak / geneb (> 1: geneb faster). The composition-twin counts of both tools are
printed side by side (issue 22's figure: 663 of 810 on gue_mouse_0).

Part 2: memory and time of ``geneb tasks audit`` on synthetic tasks of 25,000, 50,000 and
100,000 train rows (200 bp, random, 10% test rows, 1% of them near copies of train rows):
peak RSS of the audit process (``wait4``) and wall time, to show the near-duplicate search
is not quadratic (time ~ linear in rows) and the memory bounded.

    python benchmarks/task_audit.py --data ../shared/data [--skip-seqleak] [--rows 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SAME_CHECKS = ("overlap.exact,overlap.near,construction.shuffle,shortcut.length,"
               "shortcut.composition,shortcut.kmer")


def run(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, float | str]:
    """Run ``cmd``; wall seconds, CPU seconds and peak RSS (MiB) of that child alone."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out_chunks = []
    assert proc.stdout is not None
    for chunk in iter(lambda: proc.stdout.read(1 << 16), b""):
        out_chunks.append(chunk)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # seqleak exits 1 on FAIL verdicts
        raise SystemExit(f"{' '.join(cmd[:3])} failed: {err[-2000:]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mib": ru.ru_maxrss / 1024,
            "stdout": b"".join(out_chunks).decode()}


def geneb_env(cache: Path) -> dict[str, str]:
    return {**os.environ, "GENEB_CACHE": str(cache), "GENEB_NO_PROGRESS": "1"}


def part1(data: Path, skip_seqleak: bool, work: Path) -> dict:
    tasks = sorted(p for p in data.iterdir() if (p / "train.csv").is_file())
    g = run([sys.executable, "-m", "geneb", "tasks", "audit", *map(str, tasks), "--json",
             "--refresh"], env=geneb_env(work / "cache"))
    recs = {r["task"]: r for r in map(json.loads, g["stdout"].splitlines())}
    print(f"geneb tasks audit, {len(tasks)} tasks in one command: wall {g['wall']:.1f} s, "
          f"CPU {g['cpu']:.1f} s, peak RSS {g['rss_mib']:.0f} MiB")
    result = {"n_tasks": len(tasks), "geneb": {k: g[k] for k in ("wall", "cpu", "rss_mib")}}
    if skip_seqleak or shutil.which("seqleak") is None:
        return result
    for label, extra in (("default checks", []), ("geneb's checks", ["--checks", SAME_CHECKS])):
        wall = cpu = 0.0
        twins = {}
        for t in tasks:
            out = work / f"sl-{t.name}.json"
            s = run(["seqleak", "audit", "--train", str(t / "train.csv"), "--test",
                     str(t / "test.csv"), "--out", str(out), "--quiet", *extra])
            wall += float(s["wall"])
            cpu += float(s["cpu"])
            ch = json.loads(out.read_text())["checks"]["construction.shuffle"]
            twins[t.name] = round(ch["value"] * ch["n"]) if ch["value"] is not None else None
        print(f"seqleak audit ({label}), one command per task: wall {wall:.1f} s, CPU "
              f"{cpu:.1f} s; ratio seqleak/geneb: wall {wall / g['wall']:.2f}x, CPU "
              f"{cpu / g['cpu']:.2f}x")
        result[f"seqleak ({label})"] = {"wall": wall, "cpu": cpu,
                                        "wall_ratio": wall / g["wall"],
                                        "cpu_ratio": cpu / g["cpu"]}
    print("composition twins (test rows with a twin in train): task, seqleak, geneb "
          "(of which opposite label)")
    for name, n in twins.items():
        r = recs[name]
        print(f"  {name:28} {n!s:>6} {r['composition_twins_across_splits']:>6} "
              f"({r['composition_twin_opposite_label']} of {r['n_test']})")
    return result


def synthetic(folder: Path, n_train: int, seed: int = 0) -> Path:
    """Random 200 bp rows, two labels; 1% of the test rows are near copies of train rows."""
    rng = np.random.default_rng(seed)
    n_test = n_train // 10
    letters = np.frombuffer(b"ACGT", dtype=np.uint8)
    tr = letters[rng.integers(0, 4, size=(n_train, 200))]
    te = letters[rng.integers(0, 4, size=(n_test, 200))]
    k = n_test // 100
    te[:k] = tr[:k]
    te[:k, rng.integers(0, 200, size=3)] = letters[rng.integers(0, 4, size=3)]
    folder.mkdir(parents=True)
    for name, arr in (("train", tr), ("test", te)):
        seqs = arr.view(f"S{arr.shape[1]}").ravel().astype(str)
        labels = rng.integers(0, 2, size=len(seqs))
        text = "sequence,label\n" + "".join(f"{s},{y}\n" for s, y in zip(seqs, labels,
                                                                         strict=True))
        (folder / f"{name}.csv").write_text(text)
    return folder


def part2(rows: list[int], work: Path) -> list[dict]:
    out = []
    for n in rows:
        folder = synthetic(work / f"syn{n}", n)
        g = run([sys.executable, "-m", "geneb", "tasks", "audit", str(folder), "--json",
                 "--refresh"], env=geneb_env(work / "cache"))
        rec = json.loads(g["stdout"])
        print(f"synthetic {n:>7,} train rows x 200 bp: wall {g['wall']:.1f} s, CPU "
              f"{g['cpu']:.1f} s, peak RSS {g['rss_mib']:.0f} MiB; near duplicates found "
              f"{rec['near_duplicates_across_splits']} + exact copies "
              f"{rec['exact_duplicates_across_splits']} (planted {n // 1000} with 3 random "
              "substitutions; an unchanged one is an exact copy)")
        out.append({"rows": n, "wall": g["wall"], "cpu": g["cpu"], "rss_mib": g["rss_mib"],
                    "near": rec["near_duplicates_across_splits"]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--skip-seqleak", action="store_true")
    ap.add_argument("--rows", default="25000,50000,100000")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        res = {"part1": part1(a.data, a.skip_seqleak, work),
               "part2": part2([int(x) for x in a.rows.split(",") if x], work)}
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
