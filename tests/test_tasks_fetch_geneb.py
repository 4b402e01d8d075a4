"""All 100 GENEB tasks fetched from a hub on 127.0.0.1 (issue 33, item 3), never the network.

The built-in catalogue entries are used as they are. The local hub serves, for each of the
100, files laid out as the real source lays them out, as far as it could be read (the note
``reproduce-tasks.md`` says which layouts were seen and which assumed): NT and NT-revised
``<task>/{train,test}.fna`` with ``>id|label`` records, the GUE mirror's
``GUE/<config>/{train,dev,test}.csv``, Genomic Benchmarks parquet files in either layout seen
(``data/train-00000-of-00001-<hash>.parquet``, ``default/train/0000.parquet``, here also split
into two shards), the Plant Genomic Benchmark's ``<task>/<species>_{train,test}.fa`` and
GENEB's own task dataset's ``tasks/<GENEB id>/{train,test}.csv`` (columns text,label). The
rows are real sequences of ../shared/data; expected contents are computed here with pandas.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _local_hub import LocalHub, point_hub_at
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import UnknownNameError
from geneb.tasks.aliases import study_names
from geneb.tasks.catalogue import load_task_catalogue, select
from geneb.tasks.fetch import FetchError, plan_fetch, run_fetch
from geneb.tasks.folders import resolve_task
from geneb.tasks.geneb_copies import geneb_copy_entries, select_copies
from geneb.tasks.geneb_list import geneb_tasks

C1, C2 = "1" * 40, "2" * 40  # the hub's commits of a floating source: before and after a push
ROWS = 12  # rows per split: enough for every class of every task


def _rows(pool: list[str], k: int, seed: int) -> tuple[list[str], list[int]]:
    """``ROWS`` real sequences and labels covering classes 0..k-1."""
    rng = np.random.default_rng(seed)
    seqs = [pool[i] for i in rng.choice(len(pool), ROWS, replace=False)]
    return seqs, [i % k for i in range(ROWS)]


def _fasta(seqs: list[str], labels: list[int], prefix: str = "r") -> bytes:
    """Records ``>id|label`` (NT's .fna convention, assumed for the Plant Genomic Benchmark)."""
    pairs = enumerate(zip(seqs, labels, strict=True))
    return "".join(f">{prefix}{i}|{lab}\n{s}\n" for i, (s, lab) in pairs).encode()


def _encode(entry: Any, path: str, seqs: list[str], labels: list[int]) -> bytes:
    """One split file in the entry's format and column names."""
    if entry.format == "fasta_label_in_id":
        return _fasta(seqs, labels)
    cols = dict(entry.columns or {"sequence": "sequence", "label": "label"})
    df = pd.DataFrame({cols["sequence"]: seqs, cols["label"]: labels})
    if path.endswith(".parquet"):
        return df.to_parquet(index=False)
    return df.to_csv(index=False).encode()


def _gb_paths(role: str, shards: bool) -> list[str]:
    if shards:  # the parquet-converter layout, split in two shards (read in path order)
        return [f"default/{role}/0000.parquet", f"default/{role}/0001.parquet"]
    return [f"data/{role}-00000-of-00001-0a1b2c3d4e5f6a7b.parquet"]


def _layout(entries: list[Any], pool: list[str]) -> tuple[dict, dict]:
    """Per hub repo, the files of every entry (path -> bytes), and what each entry holds."""
    files: dict[str, dict[str, bytes]] = {}
    expected: dict[str, dict[str, pd.DataFrame]] = {}
    for n, e in enumerate(entries):
        k = e.n_classes or 2
        served = files.setdefault(str(e.source.hub), {})
        expected[e.name] = {}
        for j, f in enumerate(e.source.files):
            seqs, labels = _rows(pool, k, seed=100 * n + j)
            expected[e.name][f.role] = pd.DataFrame({"sequence": seqs, "label": labels})
            if f.match:
                paths = _gb_paths(f.role, shards=n % 2 == 0)
                assert all(re.fullmatch(f.match, p) for p in paths), (e.name, f.match)
                half = np.array_split(np.arange(ROWS), len(paths))
                for p, rows in zip(paths, half, strict=True):
                    served[p] = _encode(e, p, [seqs[i] for i in rows], [labels[i] for i in rows])
            else:
                served[f.path] = _encode(e, f.path, seqs, labels)
    return files, expected


@pytest.fixture()
def hub(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    pool = pd.read_csv(data_dir / "gue_prom_300_tata" / "train.csv")["sequence"].tolist()
    entries = select(study_names("GENEB"), load_task_catalogue())
    files, expected = _layout(entries, pool)
    with LocalHub() as h:
        for hub_id, served in files.items():
            pinned = {e.source.revision for e in entries if e.source.hub == hub_id} - {None}
            repo = h.repo(hub_id)
            for rev in pinned:  # each pinned revision holds the pinned entries' files
                repo.commits[rev] = dict(served)
            repo.commits[C1] = dict(served)  # the current commit, for floating entries
            repo.branches["main"] = C1
        point_hub_at(monkeypatch, h.url)
        cache = tmp_path / "cache"
        monkeypatch.setenv("GENEB_CACHE", str(cache))
        monkeypatch.delenv("GENEB_DATA_DIR", raising=False)
        yield {"hub": h, "entries": entries, "files": files, "expected": expected,
               "cache": cache, "pool": pool}  # fmt: skip


def _fetched(cache: Path, name: str) -> tuple[dict, pd.DataFrame]:
    folder = cache / "tasks" / name
    return json.loads((folder / "fetch.json").read_text()), pd.read_csv(folder / "train.csv")


def test_the_plan_for_geneb_names_100_sources_and_revisions() -> None:
    entries = select(study_names("GENEB"), load_task_catalogue())
    assert len(entries) == 100
    assert {e.name for e in entries} == {t.catalogue_name for t in geneb_tasks()}
    plan = plan_fetch(entries, "/nonexistent-cache")
    assert [s.action for s in plan.steps] == ["fetch"] * 100, [s.reason for s in plan.refused()]
    by_source = Counter((str(s.entry.source.hub).split("/")[0] + "/" +
                         str(s.entry.source.hub).split("/")[1].split("_")[0],
                         s.revision or "current") for s in plan.steps)  # fmt: skip
    assert by_source == {
        ("InstaDeepAI/nucleotide", "1eb53008d1202c4de77dd963b29118ebc18d501b"): 18,
        ("InstaDeepAI/nucleotide", "c8c94743d3d2838b943398ee676247ac2f774122"): 18,
        ("leannmlindsey/GUE", "2db3b738af3c676c243350ac337b9560ab15b04b"): 30,
        ("leannmlindsey/GUE", "current"): 1,
        ("darlednik/geneb-tasks", "4edd705be573e48c585c2cf79dc320f9f43c7b04"): 17,
        ("InstaDeepAI/plant-genomic-benchmark", "current"): 7,
        ("katarinagresova/Genomic", "e0003669df0a180c8570ebe091ed91f20fa080ec"): 1,
        ("katarinagresova/Genomic", "a08d2a926909a99402c760cd75f9bbe82e0d8a3b"): 1,
        ("katarinagresova/Genomic", "9fcbfc9e47fbbd37216f81070d413d4c9ea2204f"): 1,
        ("katarinagresova/Genomic", "current"): 6,
    }
    # each GENEB id names the source it is fetched from (the rest: GENEB's own task data)
    ids = {t.catalogue_name: t.id for t in geneb_tasks()}
    for s in plan.steps:
        gid, hub = ids[s.entry.name], str(s.entry.source.hub)
        owner_repo = hub.replace("/", "_")
        assert gid.startswith(owner_repo) or gid.startswith(owner_repo.split("_Genomic")[0]) or (
            hub == "darlednik/geneb-tasks" and gid.split("_")[0] in
            ("iPro-WAEL", "deep4mc", "iDNA", "iDHS-EL")), (gid, hub)  # fmt: skip


def test_dry_run_lists_each_source_and_revision(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["tasks", "fetch", "--study", "GENEB", "--dry-run",
                                 "--cache", str(tmp_path / "c")])  # fmt: skip
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("fetch ")]
    assert len(lines) == 100
    pinned = re.compile(r"hf:\S+@[0-9a-f]{40} \(catalogue pin\)$")
    floating = re.compile(r"hf:\S+ at the hub's current commit \(no revision is published\)$")
    assert sum(bool(pinned.search(ln)) for ln in lines) == 86
    assert sum(bool(floating.search(ln)) for ln in lines) == 14
    assert "100 to fetch" in r.output and not (tmp_path / "c").exists()


def test_all_100_fetch_from_a_local_hub(hub: dict) -> None:
    notes: list[str] = []
    plan = plan_fetch(hub["entries"])
    done = run_fetch(plan, on_note=lambda step, text: notes.append(text))
    assert len(done) == 100
    for e in hub["entries"]:
        record, train = _fetched(hub["cache"], e.name)
        want = hub["expected"][e.name]["train"]
        assert train["sequence"].tolist() == want["sequence"].tolist(), e.name  # path order
        assert train["label"].tolist() == want["label"].tolist(), e.name
        served = hub["files"][str(e.source.hub)]
        for path, digest in record["hub_files"].items():  # each file's sha256, recorded
            assert digest == hashlib.sha256(served[path]).hexdigest(), (e.name, path)
        assert record["commit"] == (e.source.revision or C1), e.name
        assert (record["revision_from"] == "catalogue") == bool(e.source.revision), e.name
        task = resolve_task(e.name)  # resolves by name, and by GENEB id
        assert len(task.splits["test"]) == ROWS
    floating = [e.name for e in hub["entries"] if e.source.revision is None]
    assert len(notes) == len(floating) == 14  # one line each, naming the resolved commit
    assert all(f"current commit {C1}" in n and "fetch.json" in n for n in notes)
    gid = next(t.id for t in geneb_tasks() if t.catalogue_name == "gb_demo_human_or_worm")
    assert resolve_task(gid).name == "gb_demo_human_or_worm"


def _fetch_cli(*args: str) -> Any:
    return CliRunner().invoke(app, ["tasks", "fetch", *args])


def test_floating_source_records_its_commit_and_never_changes_silently(hub: dict) -> None:
    name = "pgb_lncrna_g_max"
    r = _fetch_cli(name)
    assert r.exit_code == 0, r.output
    note = [ln for ln in r.output.splitlines() if "no revision is published" in ln]
    assert len(note) == 1 and C1 in note[0]
    before = (hub["cache"] / "tasks" / name / "train.csv").read_bytes()
    record, _ = _fetched(hub["cache"], name)
    assert record["source"] == f"hf:InstaDeepAI/plant-genomic-benchmark@{C1}"
    # the hub moves on: new content at a new commit
    repo = hub["hub"].repo("InstaDeepAI/plant-genomic-benchmark")
    moved = dict(repo.commits[C1])
    seqs, labels = _rows(hub["pool"], 2, seed=999)
    moved["lncrna/g_max_train.fa"] = _fasta(seqs, labels, prefix="n")
    repo.commits[C2] = moved
    repo.branches["main"] = C2
    r = _fetch_cli(name)
    assert r.exit_code == 0, r.output
    warn = [ln for ln in r.output.splitlines() if ln.startswith("warning:")]
    assert len(warn) == 1 and C2 in warn[0] and C1 in warn[0] and "kept" in warn[0]
    assert (hub["cache"] / "tasks" / name / "train.csv").read_bytes() == before
    assert _fetched(hub["cache"], name)[0] == record
    # asking for the new commit refuses rather than replace the cached copy
    r = _fetch_cli(name, "--revision", C2)
    assert r.exit_code != 0 and "never replaced" in r.output and C1 in r.output
    # into another cache, --revision pins the old commit although main is at C2
    other = hub["cache"].parent / "other"
    r = _fetch_cli(name, "--revision", C1, "--cache", str(other))
    assert r.exit_code == 0, r.output
    rec = json.loads((other / "tasks" / name / "fetch.json").read_text())
    assert rec["commit"] == C1 and rec["revision_from"] == "asked"
    assert (other / "tasks" / name / "train.csv").read_bytes() == before


def test_revision_is_checked_before_any_work(hub: dict) -> None:
    r = _fetch_cli("pgb_lncrna_g_max", "--revision", "main")
    assert r.exit_code == 2 and "--revision: expected" in r.output and "40-hex" in r.output
    r = _fetch_cli("pgb_lncrna_g_max", "nt_h3", "--revision", C1)
    assert r.exit_code == 2 and "pins one hub dataset" in r.output
    assert not hub["cache"].exists()


def test_a_pattern_that_matches_nothing_is_one_line_and_keeps_nothing(hub: dict) -> None:
    repo = hub["hub"].repo("katarinagresova/Genomic_Benchmarks_demo_human_or_worm")
    repo.commits[C1] = {"README.md": b"no parquet here"}
    with pytest.raises(FetchError, match=r"no file matches .*train file.*README.md"):
        run_fetch(plan_fetch(select(["gb_demo_human_or_worm"], hub["entries"])))
    assert not (hub["cache"] / "tasks" / "gb_demo_human_or_worm").exists()


def test_unknown_study_is_one_line() -> None:
    with pytest.raises(UnknownNameError, match="unknown study 'GENE'. Did you mean 'GENEB'"):
        study_names("GENE")


def test_a_source_whose_labels_are_not_0_to_k_is_fetched_as_it_is(hub: dict) -> None:
    name, gid = "idna_abf_5mc", "iDNA_ABF_5mC"
    repo = hub["hub"].repo("darlednik/geneb-tasks")
    rev = next(e.source.revision for e in hub["entries"] if e.name == name)
    served = {}
    for split, seed in (("train", 1), ("test", 2)):
        seqs, labels = _rows(hub["pool"], 2, seed)
        coded = [2 if lab else -1 for lab in labels]  # GENEB-style integer codes
        served[split] = coded
        path = f"tasks/{gid}/{split}.csv"
        repo.commits[rev][path] = pd.DataFrame({"text": seqs, "label": coded}).to_csv(
            index=False).encode()
    run_fetch(plan_fetch(select([gid], hub["entries"])))
    task = resolve_task(gid)
    assert task.name == name and task.spec.label_names == ("-1", "2")
    for split, coded in served.items():  # ids in np.unique order, as GENEB's code sees them
        assert task.splits[split].labels.tolist() == np.searchsorted([-1, 2], coded).tolist()


def test_a_cached_floating_task_offline_is_one_note_and_served(hub: dict) -> None:
    import time

    name = "gb_demo_human_or_worm"
    assert _fetch_cli(name).exit_code == 0
    before = (hub["cache"] / "tasks" / name / "train.csv").read_bytes()
    hub["hub"].__exit__()  # the hub goes away: nothing answers on its port
    t0 = time.monotonic()
    r = _fetch_cli(name)
    assert r.exit_code == 0, r.output
    assert time.monotonic() - t0 < 10
    said = [ln for ln in r.output.splitlines() if ln.startswith("note: could not check")]
    assert len(said) == 1 and "1 cached task(s)" in said[0]
    assert (hub["cache"] / "tasks" / name / "train.csv").read_bytes() == before
    assert resolve_task(name).name == name


def test_genebs_own_copies_fetch_under_genebs_ids(hub: dict) -> None:
    """``--study-data``: GENEB's task dataset for all 100, each named by its GENEB id, which
    then resolves to GENEB's copy (not to the catalogue task the id is an alias of)."""
    copies = geneb_copy_entries()
    repo = hub["hub"].repo("darlednik/geneb-tasks")
    rev = copies[0].source.revision
    assert {e.source.revision for e in copies} == {rev} and len(copies) == 100
    served = repo.commits[rev]
    want = {}
    for n, e in enumerate(copies):
        for f in e.source.files:
            if f.path not in served:  # the 17 catalogue entries' files are the same files
                seqs, labels = _rows(hub["pool"], 2, seed=5000 + 2 * n + (f.role == "test"))
                served[f.path] = pd.DataFrame({"text": seqs, "label": labels}).to_csv(
                    index=False).encode()
        want[e.name] = pd.read_csv(io.BytesIO(served[f"tasks/{e.name}/train.csv"]))
    r = _fetch_cli("--study", "GENEB", "--study-data", "--dry-run")
    assert r.exit_code == 0, r.output
    assert r.output.count(f"download from hf:darlednik/geneb-tasks@{rev}") == 100
    assert len(run_fetch(plan_fetch(select_copies([])))) == 100
    for gid, train in want.items():
        task = resolve_task(gid)
        assert task.name == gid, gid
        assert list(task.splits["train"].sequences) == train["text"].str.upper().tolist(), gid
    # the catalogue task is still its source's: fetched separately, under its own name
    assert _fetch_cli("gue_mouse_0").exit_code == 0
    assert resolve_task("gue_mouse_0").name == "gue_mouse_0"
    assert resolve_task("leannmlindsey_GUE_mouse_0").name == "leannmlindsey_GUE_mouse_0"


def test_catalogue_entries_from_genebs_dataset_are_its_copies() -> None:
    """The 17 catalogue tasks fetched from GENEB's task dataset name the same files at the
    same revision as GENEB's copies of them (geneb_list.json ``dataset``)."""
    copies = {e.name: e for e in geneb_copy_entries()}
    ids = {t.catalogue_name: t.id for t in geneb_tasks()}
    own = [e for e in load_task_catalogue() if e.source.hub == "darlednik/geneb-tasks"]
    assert len(own) == 17
    for e in own:
        copy = copies[ids[e.name]]
        assert (e.source.revision, e.source.files) == (copy.source.revision, copy.source.files)
        assert e.columns == copy.columns and e.format == copy.format
    assert [c.name for c in select_copies(["gue_mouse_0", "iDHS-EL_DNase_I"])] == [
        "leannmlindsey_GUE_mouse_0", "iDHS-EL_DNase_I"]
