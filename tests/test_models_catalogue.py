"""The model catalogue: schema of `geneb models list --json`, sources for every fact, the
models of the GENEB and GFMBench-API studies, and a loader that refuses bad entries."""

from __future__ import annotations

import copy
import json

import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import GenebError
from geneb.models import catalogue as cat

REQUIRED = (
    "name", "hub_id", "family", "architecture", "tokenization", "n_params", "context_length",
    "trust_remote_code", "capabilities", "source",
)  # fmt: skip
FACTS = (
    "hub_id", "family", "architecture", "architecture_class", "tokenization",
    "pretraining_data_class", "organisms", "n_params", "context_length",
    "trust_remote_code", "extra_packages", "cuda_packages", "quirks", "capabilities", "loader",
)  # fmt: skip
#: model names as the GENEB paper and GFMBench-API write them (issue 11)
GENEB = (
    "Evo-1-131K", "MutBERT", "eccDNAMamba", "GenomeOcean-500M", "GenomeOcean-4B", "Omni-DNA-1B",
    "GENA-LM-large-T2T", "Omnina-220M", "Caduceus-Ph-1K", "Caduceus-Ps-131K",
    "BioFM-265M", "GENERator-eukaryote-1.2B", "GENERator-eukaryote-3B", "NT-2.5B-MS",
    "NT-v2-100M-MS", "Enformer", "HyenaDNA-large-1M",
    "NT-v2-50M-MS", "DNA-GPT-3B-M", "GPT2-gene-v1", "JanusDNA-72-W", "JanusDNA-72-WO",
    "SPACE",  # named in GENEB's text (issue 23)
)  # fmt: skip
#: the whole GENEB set is GENEB's 41 leaderboard records (tests/test_models_catalogue_geneb.py)
N_GENEB = 41
GFMBENCH = ("DNABERT", "DNABERT-2", "NT v3", "Caduceus-Ps", "Evo 2")


@pytest.fixture(scope="module")
def listed() -> list[dict]:
    res = CliRunner().invoke(app, ["models", "list", "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_json_schema_and_size(listed: list[dict]) -> None:
    assert len(listed) >= 40
    names = [e["name"] for e in listed]
    assert len(set(n.casefold() for n in names)) == len(names)
    for e in listed:
        assert set(REQUIRED) <= set(e), e["name"]
        assert isinstance(e["name"], str) and e["name"]
        for key in ("hub_id", "family", "source"):
            assert e[key] is None or (isinstance(e[key], str) and e[key]), (e["name"], key)
        if e["hub_id"] is not None:
            org, _, repo = e["hub_id"].partition("/")
            assert org and repo and "/" not in repo, e["hub_id"]
        assert e["architecture"] in (None, "encoder", "decoder", "state-space", "hybrid", "CNN")
        assert e["tokenization"] in (None, "BPE", "k-mer", "single base", "other")
        for key in ("n_params", "context_length"):
            v = e[key]
            assert v is None or (type(v) is int and v > 0), (e["name"], key, v)
        assert e["trust_remote_code"] in (None, True, False)
        caps = e["capabilities"]
        assert caps is None or (
            isinstance(caps, list) and set(caps) <= {"embeddings", "masked_lm", "causal_lm"}
        )
        assert e["extra_packages"] is None or all(isinstance(p, str) for p in e["extra_packages"])


def test_every_fact_has_a_source(listed: list[dict]) -> None:
    for e in listed:
        for fact in FACTS:
            if e[fact] is not None:
                url = e["sources"].get(fact)
                assert isinstance(url, str) and url.startswith("https://"), (e["name"], fact)
        assert sorted(e["checked"]) == sorted(f for f in FACTS if f in e["sources"])
        if e["n_params"] is not None:
            assert e["n_params_basis"] in ("model card", "paper", "checkpoint name")


def test_study_models_are_all_there() -> None:
    for name in GENEB:
        entry = cat.lookup(name)
        assert entry is not None and "GENEB" in entry.studies, name
    for name in GFMBENCH:
        entry = cat.lookup(name)
        assert entry is not None and "GFMBench-API" in entry.studies, name
    res = CliRunner().invoke(app, ["models", "list", "--json", "--study", "GENEB"])
    assert res.exit_code == 0 and len(json.loads(res.output)) == N_GENEB


def test_known_published_facts() -> None:
    """Spot checks against the model cards (independent of the loader)."""
    agro = cat.lookup("AgroNT")
    assert (agro.n_params, agro.context_length, agro.tokenization) == (1_000_000_000, 1024, "k-mer")
    evo = cat.lookup("Evo-1-131K")
    assert (evo.context_length, evo.trust_remote_code, evo.n_params) == (131072, True, 7 * 10**9)
    assert cat.lookup_hub_id("poetschlab/grover").name == "GROVER"
    # weights off the hub (GENEB pins a Google Drive folder): no hub id, no guess
    dna_gpt = cat.lookup("dna_gpt3b_m")
    assert dna_gpt.name == "DNA-GPT-3B-M" and dna_gpt.hub_id is None
    assert dna_gpt.context_length is None  # no source confirms it: left null


def test_table_and_info_commands() -> None:
    r = CliRunner()
    res = r.invoke(app, ["models", "list"])
    assert res.exit_code == 0 and "DNABERT-2" in res.output and "kmer-5" in res.output
    res = r.invoke(app, ["models", "list", "--study", "GENEX"])
    assert res.exit_code == 2 and "unknown study 'GENEX'" in res.output
    res = r.invoke(app, ["models", "info", "GROVER"])
    assert res.exit_code == 0 and json.loads(res.output)["hub_id"] == "PoetschLab/GROVER"
    res = r.invoke(app, ["models", "info", "kmer-99"])
    assert res.exit_code == 2 and "unknown model" in res.output


def _good() -> list[dict]:
    return copy.deepcopy(json.loads(json.dumps([cat.lookup("AgroNT").to_json()])))


def _strip(raw: list[dict]) -> list[dict]:
    for e in raw:  # the keys to_json derives (not stored in the catalogue file)
        e.pop("checked", None)
        e.pop("tokenization_class", None)
        e["sources"].pop("tokenization_class", None)
    return raw


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda e: e["sources"].pop("n_params"), "n_params = 1000000000 has no source"),
        (lambda e: e.update(architecture="transformer"),
         "architecture: expected null or one of 'encoder'"),
        (lambda e: e.update(n_params=True), "n_params: expected null or a positive int, got True"),
        (lambda e: e.update(context_length=-5),
         "context_length: expected null or a positive int, got -5"),
        (lambda e: e.update(capabilities=["fly"]),
         "capabilities[0]: expected one of 'embeddings', 'masked_lm', 'causal_lm', got 'fly'"),
        (lambda e: e.update(guess=1), "unknown keys ['guess']"),
        (lambda e: e["sources"].update(family="http://x"),
         "sources['family']: expected an https URL, got 'http://x'"),
        (lambda e: e.update(n_params_basis=None), "n_params and n_params_basis go together"),
        (
            lambda e: e.update(architecture_class="Hyena"),
            "architecture_class 'Hyena' needs architecture 'state-space', got 'encoder'",
        ),
        (lambda e: e.update(pretraining_data_class="fungi"),
         "pretraining_data_class: expected null or one of"),
        (lambda e: e["sources"].pop("organisms"), "organisms = ['48 edible plant species'] has no"),
        (lambda e: e.update(organisms=[]),
         "organisms: expected at least 1 entry, got an empty list"),
    ],
)
def test_loader_refuses_bad_entries(edit, message) -> None:
    raw = _strip(_good())
    assert cat.parse_catalogue(raw)[0].name == "AgroNT"
    edit(raw[0])
    with pytest.raises(GenebError) as e:
        cat.parse_catalogue(raw)
    assert "entry 0 ('AgroNT')" in str(e.value) and message in str(e.value)


def test_loader_refuses_duplicate_names() -> None:
    raw = _strip(_good() + _good())
    with pytest.raises(GenebError, match="name 'AgroNT' of 'AgroNT' is already 'AgroNT'"):
        cat.parse_catalogue(raw)


#: GENEB model names as issue 23 writes them -> catalogue name (None: not in the catalogue)
ISSUE23 = {
    "Evo-1-131K": "Evo-1-131K", "HyenaDNA-large-1M": "HyenaDNA-large-1M",
    "GenomeOcean-500M": "GenomeOcean-500M", "GenomeOcean-4B": "GenomeOcean-4B",
    "GENERator-eukaryote-1.2B": "GENERator-eukaryote-1.2B",
    "GENERator-eukaryote-3B": "GENERator-eukaryote-3B", "eccDNAMamba": "eccDNAMamba",
    "Omni-DNA-1B": "Omni-DNA-1B", "MutBERT": "MutBERT", "GENA-LM-large-t2t": "GENA-LM-large-T2T",
    "Caduceus-Ps-131K": "Caduceus-Ps-131K", "Caduceus-Ph-1K": "Caduceus-Ph-1K",
    "BioFM-265M": "BioFM-265M", "Omnina-220M": "Omnina-220M", "NT-v2-50M-MS": "NT-v2-50M-MS",
    "NT-v2-100M-MS": "NT-v2-100M-MS", "NT-2.5B-MS": "NT-2.5B-MS", "GPT2-gene-v1": "GPT2-gene-v1",
    "DNA-GPT-3B-M": "DNA-GPT-3B-M", "SPACE": "SPACE", "JanusDNA-72-W": "JanusDNA-72-W",
    "JanusDNA-72-WO": "JanusDNA-72-WO",
}  # fmt: skip
PROPERTY_KEYS = (
    "n_params", "architecture_class", "tokenization_class", "pretraining_data_class", "organisms"
)  # fmt: skip


def test_issue23_properties_in_models_list(listed: list[dict]) -> None:
    by_name = {e["name"]: e for e in listed}
    for written, name in ISSUE23.items():
        entry = cat.lookup(written)
        assert entry is not None and entry.name == name and "GENEB" in entry.studies, written
    for e in listed:
        assert set(PROPERTY_KEYS) <= set(e), e["name"]
        for key in PROPERTY_KEYS:  # every stated property has its source beside it
            assert e[key] is None or e["sources"][key].startswith("https://"), (e["name"], key)
    # the parameter counts the GENEB paper states (issue 23)
    stated = {"MutBERT": 86e6, "eccDNAMamba": 537e6, "BioFM-265M": 265e6, "Omnina-220M": 220e6,
              "Evo-1-131K": 7e9}  # fmt: skip
    assert {n: by_name[n]["n_params"] for n in stated} == stated
    geneb = [e for e in listed if "GENEB" in e["studies"]]
    # every GENEB model has its leaderboard count and the three comparison classes (GENEB's
    # model table where no model card states them)
    assert len(geneb) == N_GENEB and all(e["n_params"] is not None for e in geneb)
    for key in ("architecture_class", "tokenization_class", "pretraining_data_class"):
        assert all(e[key] is not None for e in geneb), key
    assert by_name["Caduceus-Ps-131K"]["tokenization_class"] == "single-nucleotide"
    assert by_name["HyenaDNA-large-1M"]["architecture_class"] == "Hyena"
