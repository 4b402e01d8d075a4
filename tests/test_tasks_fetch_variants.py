"""``geneb tasks fetch`` of the catalogue's variant suites, from a hub on 127.0.0.1.

The built-in catalogue entries are used as they are (hub id, pinned revision, file paths,
column names): a local hub serves, at those revisions, files laid out like the real ones
(TraitGym's ``<dataset>/test.parquet`` with chrom/pos/ref/alt and a boolean label; the
long-range benchmark's CSVs with CHROM/POS/ALT, label or INT_LABEL, split and no REF). The
reference genome the user gives (``--reference``) is a small synthetic genome, gzipped and
soft-masked. Expected windows and bases are computed here from the genome's strings.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _local_hub import LocalHub, point_hub_at
from typer.testing import CliRunner

import geneb
from geneb.cli import app
from geneb.errors import TaskError
from geneb.tasks.catalogue import load_task_catalogue, select
from geneb.tasks.fetch import FetchError, plan_fetch, run_fetch
from geneb.tasks.reference import UserReference
from geneb.tasks.variants import load_variant_task

TG = "traitgym_mendelian_traits"
EQTL = "lrb_variant_effect_causal_eqtl"
CLINVAR_LRB = "lrb_variant_effect_pathogenic_clinvar"
FLANK = 50
CHROMS = {"1": 3000, "2": 2500, "X": 1200}


def _genome(seed: int = 0) -> dict[str, str]:
    rng = np.random.default_rng(seed)
    return {c: "".join(rng.choice(list("ACGT"), n)) for c, n in CHROMS.items()}


def _fasta(genome: dict[str, str], names: str, path: Path) -> Path:
    """``names``: ``ucsc`` (chr1) or ``ensembl`` (1); 60-column lines, a soft-masked stretch."""
    text = ""
    for c, seq in genome.items():
        masked = seq[:100] + seq[100:400].lower() + seq[400:]
        name = f"chr{c}" if names == "ucsc" else c
        text += f">{name} synthetic\n" + "".join(
            masked[i : i + 60] + "\n" for i in range(0, len(masked), 60)
        )
    text += ">chrUn_extra\nACGT\n"
    data = text.encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def _variants(genome: dict[str, str], n: int = 40, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n):
        c = list(CHROMS)[k % 3]
        pos = int(rng.integers(1, CHROMS[c] + 1)) if k else 3  # one near the chromosome start
        ref = genome[c][pos - 1]
        alt = str(rng.choice([b for b in "ACGT" if b != ref]))
        rows.append({"chrom": c, "pos": pos, "ref": ref, "alt": alt, "label": bool(k % 10 == 0),
                     "consequence": "intron_variant"})  # fmt: skip
    return pd.DataFrame(rows)


def _expected_windows(df: pd.DataFrame, genome: dict[str, str]) -> dict[str, str]:
    """Record name -> sequence: every base within FLANK of a variant, as contiguous runs."""
    out = {}
    for c in CHROMS:
        covered = np.zeros(CHROMS[c] + 2, bool)
        for p in df.loc[df["chrom"] == c, "pos"]:
            covered[max(1, p - FLANK) : min(CHROMS[c], p + FLANK) + 1] = True
        runs, start = [], None
        for i in range(1, CHROMS[c] + 2):
            if covered[i] and start is None:
                start = i
            if not covered[i] and start is not None:
                runs.append((start, i - 1))
                start = None
        for s, e in runs:
            out[f"{c}:{s}-{e}"] = genome[c][s - 1 : e]
    return out


def _read_fasta(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    name = ""
    for line in path.read_text().splitlines():
        if line.startswith(">"):
            name = line[1:]
            out[name] = ""
        else:
            out[name] += line
    return out


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """The catalogue's TraitGym and long-range entries served at their pinned revisions."""
    genome = _genome()
    tg = _variants(genome)
    lrb = _variants(genome, n=30, seed=2)
    eqtl = pd.DataFrame({"CHROM": "chr" + lrb["chrom"], "POS": lrb["pos"], "ALT": lrb["alt"],
                         "label": lrb["label"].astype(int), "tissue": "Whole_Blood",
                         "split": np.where(np.arange(len(lrb)) % 4 == 0, "test", "train"),
                         "distance_to_nearest_TSS": 10})  # fmt: skip
    coding = pd.DataFrame({"CHROM": "chr" + lrb["chrom"], "POS": lrb["pos"], "ALT": lrb["alt"],
                           "INT_LABEL": 1 - lrb["label"].astype(int), "split": "train"})
    entries = {e.name: e for e in load_task_catalogue()}
    with LocalHub() as h:
        files = {
            TG: {"mendelian_traits_matched_9/test.parquet": tg.to_parquet(index=False)},
            EQTL: {"variant_effect_causal_eqtl/All_Tissues.csv": eqtl.to_csv(index=False).encode()},
            CLINVAR_LRB: {
                "variant_effect_pathogenic/vep_pathogenic_coding.csv": coding.to_csv(index=False)
                .encode()
            },
        }
        for name, served in files.items():
            src = entries[name].source
            h.repo(str(src.hub)).commits.setdefault(str(src.revision), {}).update(served)
        point_hub_at(monkeypatch, h.url)
        cache = tmp_path / "cache"
        monkeypatch.setenv("GENEB_CACHE", str(cache))
        yield {"hub": h, "genome": genome, "tg": tg, "eqtl": eqtl, "lrb": lrb, "cache": cache,
               "entries": entries, "tmp": tmp_path, "coding": coding}  # fmt: skip


def _leftovers(cache: Path) -> list[str]:
    return [str(p) for p in cache.rglob("*") if ".partial-" in p.name] if cache.exists() else []


def test_traitgym_fetch_with_a_user_reference(hub: dict) -> None:
    ref = _fasta(hub["genome"], "ucsc", hub["tmp"] / "GRCh38.fa.gz")
    plan = plan_fetch(select([TG], tuple(hub["entries"].values())), None,
                      UserReference(ref, FLANK))  # fmt: skip
    assert [s.action for s in plan.steps] == ["fetch"]
    run_fetch(plan)
    folder = hub["cache"] / "variants" / TG
    got = pd.read_csv(folder / "variants.csv", dtype={"chrom": str})
    tg = hub["tg"]
    assert got[["chrom", "pos", "ref", "alt"]].equals(tg[["chrom", "pos", "ref", "alt"]])
    assert got["label"].tolist() == tg["label"].astype(int).tolist()
    assert got["consequence"].tolist() == tg["consequence"].tolist()
    # only the windows around the variants, upper-cased, named in the table's convention
    assert _read_fasta(folder / "reference.fa") == _expected_windows(tg, hub["genome"])
    record = json.loads((folder / "fetch.json").read_text())
    user = record["user_reference"]
    assert user["sha256"] == hashlib.sha256(ref.read_bytes()).hexdigest()
    assert user["bytes"] == ref.stat().st_size and user["flank"] == FLANK
    assert user["chromosomes"] == {"1": "chr1", "2": "chr2", "X": "chrX"}
    assert record["source"] == f"hf:songlab/TraitGym@{hub['entries'][TG].source.revision}"
    task = load_variant_task(TG)  # the fetched set resolves by name, as a folder does
    assert task.folder == folder and len(task) == len(tg)
    zs = geneb.load_task(TG)
    assert zs.attributes()["n_variants"] == len(tg)
    assert _leftovers(hub["cache"]) == []
    out = hub["tmp"] / "scores.csv"
    r = CliRunner().invoke(app, ["vep", "score", "--task", TG, "--model", "kmer-2", "--scorer",
                                 "cosine", "--window", "64", "--limit", "5", "--out", str(out)])
    assert r.exit_code == 0, r.output
    scored = pd.read_csv(out, dtype={"chrom": str})
    assert scored["pos"].tolist() == tg["pos"].head(5).tolist()
    # the variant at position 3 has no 32 bases of left flank on its chromosome
    assert scored["status"].tolist() == ["window_outside_reference"] + ["ok"] * 4
    # a second fetch is a no-op (same pinned source)
    again = plan_fetch(select([TG], tuple(hub["entries"].values())), None,
                       UserReference(ref, FLANK))  # fmt: skip
    assert [s.action for s in again.steps] == ["skip"]


def test_not_fetched_variant_set_says_how_to_fetch_it(hub: dict) -> None:
    with pytest.raises(TaskError, match=rf"run geneb tasks fetch {TG} --reference GENOME.fa"):
        load_variant_task(TG)
    with pytest.raises(TaskError, match="bend_vep_disease.*cannot be fetched .no sha256 published"):
        load_variant_task("bend_vep_disease")


def test_long_range_table_without_ref_gets_the_reference_base(hub: dict) -> None:
    ref = _fasta(hub["genome"], "ensembl", hub["tmp"] / "hg38.fa")  # 1, 2, X vs chr1, ...
    done = run_fetch(plan_fetch(select([EQTL, CLINVAR_LRB], tuple(hub["entries"].values())),
                                None, UserReference(ref, FLANK)))  # fmt: skip
    assert [r["name"] for r in done] == [EQTL, CLINVAR_LRB]
    coding = pd.read_csv(hub["cache"] / "variants" / CLINVAR_LRB / "variants.csv")
    assert coding["label"].tolist() == hub["coding"]["INT_LABEL"].tolist()
    got = pd.read_csv(hub["cache"] / "variants" / EQTL / "variants.csv")
    eqtl, genome = hub["eqtl"], hub["genome"]
    expected_ref = [genome[c[3:]][p - 1] for c, p in zip(eqtl["CHROM"], eqtl["POS"], strict=True)]
    assert got["ref"].tolist() == expected_ref
    assert got["chrom"].tolist() == eqtl["CHROM"].tolist()
    assert got["label"].tolist() == eqtl["label"].tolist()
    assert got["split"].tolist() == eqtl["split"].tolist()  # published split kept per row
    record = json.loads((hub["cache"] / "variants" / EQTL / "fetch.json").read_text())
    assert record["user_reference"]["ref_from_reference"] is True
    assert record["user_reference"]["chromosomes"]["chr1"] == "1"


def test_without_reference_the_missing_fact_is_named_and_nothing_is_asked(hub: dict) -> None:
    url = hub["entries"][TG].source.files[-1].url
    r = CliRunner().invoke(app, ["tasks", "fetch", TG])
    assert r.exit_code == 2, r.output
    assert f"no sha256 published for {url} (the reference genome)" in r.output
    assert "--reference PATH" in r.output
    assert hub["hub"].requests == [] and not hub["cache"].exists()


def test_wrong_reference_is_refused_naming_the_row_and_nothing_is_kept(hub: dict) -> None:
    other = _fasta(_genome(seed=9), "ucsc", hub["tmp"] / "other.fa.gz")
    plan = plan_fetch(select([TG], tuple(hub["entries"].values())), None,
                      UserReference(other, FLANK))  # fmt: skip
    with pytest.raises(FetchError, match=r"converted variants.csv line \d+ .*does not match the "
                       r"reference.*nothing was cached"):  # fmt: skip
        run_fetch(plan)
    assert not (hub["cache"] / "variants").exists() or not any(
        (hub["cache"] / "variants").iterdir()
    )
    assert _leftovers(hub["cache"]) == []


def test_reference_without_a_needed_chromosome_names_it(hub: dict) -> None:
    genome = {c: s for c, s in hub["genome"].items() if c != "X"}
    ref = _fasta(genome, "ucsc", hub["tmp"] / "noX.fa")
    plan = plan_fetch(select([TG], tuple(hub["entries"].values())), None,
                      UserReference(ref, FLANK))  # fmt: skip
    with pytest.raises(FetchError, match=r"no record for chromosome 'X' \(looked for X, chrX"):
        run_fetch(plan)
    assert not (hub["cache"] / "variants" / TG).exists()


def test_truncated_gzip_reference_is_refused(hub: dict) -> None:
    good = _fasta(hub["genome"], "ucsc", hub["tmp"] / "g.fa.gz").read_bytes()
    cut = hub["tmp"] / "cut.fa.gz"
    cut.write_bytes(good[: len(good) // 2])
    plan = plan_fetch(select([TG], tuple(hub["entries"].values())), None,
                      UserReference(cut, FLANK))  # fmt: skip
    with pytest.raises(FetchError, match="not a complete gzip file"):
        run_fetch(plan)
    assert not (hub["cache"] / "variants" / TG).exists()


def _plan_eqtl_served_as(hub: dict, table: pd.DataFrame) -> Any:
    """The eQTL entry's fetch plan, its hub file replaced by ``table``, with the right genome."""
    entry = hub["entries"][EQTL]
    hub["hub"].repo(str(entry.source.hub)).commits[str(entry.source.revision)][
        "variant_effect_causal_eqtl/All_Tissues.csv"
    ] = table.to_csv(index=False).encode()
    ref = _fasta(hub["genome"], "ucsc", hub["tmp"] / "g.fa")
    return plan_fetch([entry], None, UserReference(ref, FLANK))


def test_bad_label_in_the_served_table_names_file_and_row(hub: dict) -> None:
    bad = hub["eqtl"].copy()
    bad["label"] = bad["label"].astype(str)
    bad.loc[5, "label"] = "maybe"
    plan = _plan_eqtl_served_as(hub, bad)
    with pytest.raises(FetchError, match=r"All_Tissues.csv line 7 \(row 5\): label 'maybe'"):
        run_fetch(plan)
    assert not (hub["cache"] / "variants" / EQTL).exists()


def test_table_without_ref_whose_alt_is_the_genome_base_is_refused(hub: dict) -> None:
    """No REF column: ref comes from the genome; an ALT equal to it (a table made on another
    genome) is refused by the converted folder's load, naming the row; nothing is kept."""
    bad = hub["eqtl"].copy()
    c, p = bad.loc[3, "CHROM"][3:], int(bad.loc[3, "POS"])
    bad.loc[3, "ALT"] = hub["genome"][c][p - 1]
    plan = _plan_eqtl_served_as(hub, bad)
    with pytest.raises(FetchError, match=r"converted variants.csv line 5 \(row 3\): alt equals "
                       rf"ref \('{bad.loc[3, 'ALT']}'\)"):  # fmt: skip
        run_fetch(plan)
    assert not (hub["cache"] / "variants" / EQTL).exists() and _leftovers(hub["cache"]) == []


EXPECTED_REFUSALS = {
    "clinvar": "which ClinVar release and filters the benchmark used is not published",
    "brca1_findlay2018": "no sha256 published for the Evo 2 repository's notebooks/brca1/",
    "bend_vep_expression": "no sha256 published for https://sid.erda.dk/share_redirect/"
    "aNQa0Oz2lY/data/variant_effects/variant_effects_expression.bed",
    "bend_vep_disease": "no sha256 published for https://sid.erda.dk/share_redirect/"
    "aNQa0Oz2lY/data/variant_effects/variant_effects_disease.bed",
}
NEEDS_REFERENCE = {
    "traitgym_mendelian_traits": "Homo_sapiens.GRCh38.dna_sm.primary_assembly.fa.gz",
    "traitgym_complex_traits": "Homo_sapiens.GRCh38.dna_sm.primary_assembly.fa.gz",
    "lrb_variant_effect_causal_eqtl": "goldenPath/hg38/bigZips/hg38.fa.gz",
    "lrb_variant_effect_pathogenic_clinvar": "goldenPath/hg38/bigZips/hg38.fa.gz",
    "lrb_variant_effect_pathogenic_omim": "goldenPath/hg38/bigZips/hg38.fa.gz",
}


def test_every_variant_entry_is_fetchable_or_names_its_missing_fact() -> None:
    variants = {e.name: e for e in load_task_catalogue() if e.kind == "variants"}
    assert set(variants) == set(EXPECTED_REFUSALS) | set(NEEDS_REFERENCE)
    for name, fact in EXPECTED_REFUSALS.items():
        why = variants[name].fetchable(reference_given=True)
        assert why is not None and fact in why and "\n" not in why, (name, why)
    for name, ref_file in NEEDS_REFERENCE.items():
        why = variants[name].fetchable()
        assert why is not None and "no sha256 published for" in why and ref_file in why
        assert "reference=PATH" in why
        assert variants[name].fetchable(reference_given=True) is None, name
        src = variants[name].source
        assert src.hub and src.revision and len(src.revision) == 40


def test_reference_options_are_checked_before_anything(hub: dict, tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["tasks", "fetch", TG, "--flank", "100"])
    assert r.exit_code == 2 and "--flank is given without --reference" in r.output
    r = runner.invoke(app, ["tasks", "fetch", TG, "--reference", str(tmp_path / "nope.fa")])
    assert r.exit_code == 2 and "is not a file" in r.output
    ref = _fasta(hub["genome"], "ucsc", tmp_path / "g.fa")
    r = runner.invoke(app, ["tasks", "fetch", "nt_h3", "--reference", str(ref)])
    assert r.exit_code == 2 and "none of the asked entries needs one" in r.output
    r = runner.invoke(app, ["tasks", "fetch", TG, "--reference", str(ref), "--flank", "0"])
    assert r.exit_code == 2 and "--flank" in r.output
    assert hub["hub"].requests == []


@pytest.mark.parametrize("block", [7, 61, 1 << 22])
@pytest.mark.parametrize("layout", ["wrapped", "one_line_crlf_no_final_newline"])
def test_windows_are_cut_exactly_whatever_the_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int, layout: str
) -> None:
    """Headers and lines split across read blocks, CRLF, unwrapped records, no final newline."""
    import geneb.tasks.reference as reference

    monkeypatch.setattr(reference, "BLOCK_BYTES", block)
    genome = _genome(seed=3)
    df = _variants(genome, n=12, seed=4)
    path = tmp_path / "g.fa"
    if layout == "wrapped":
        _fasta(genome, "ucsc", path)
    else:
        text = "\r\n".join(f">chr{c} x\r\n{s.lower()}" for c, s in genome.items())
        path.write_bytes(text.encode())
    needs: dict[str, list[tuple[int, int]]] = {}
    for c, p in zip(df["chrom"], df["pos"], strict=True):
        needs.setdefault(c, []).append((max(1, p - FLANK), p + FLANK))
    out = tmp_path / "out.fa"
    info = reference.extract_windows(UserReference(path, FLANK), needs, out)
    assert _read_fasta(out) == _expected_windows(df, genome)
    assert info["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_cli_fetch_with_reference_prints_its_sha256(hub: dict) -> None:
    ref = _fasta(hub["genome"], "ucsc", hub["tmp"] / "GRCh38.fa.gz")
    r = CliRunner().invoke(app, ["tasks", "fetch", TG, "--reference", str(ref), "--flank", "50"])
    assert r.exit_code == 0, r.output
    assert f"fetched {TG} (variants {len(hub['tg'])})" in r.output
    assert hashlib.sha256(ref.read_bytes()).hexdigest() in r.output
    folder = hub["cache"] / "variants" / TG
    assert _read_fasta(folder / "reference.fa") == _expected_windows(hub["tg"], hub["genome"])
