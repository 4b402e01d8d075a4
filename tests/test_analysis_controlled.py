"""GENEB's controlled comparisons (issue 23) on a constructed results table.

Seven models, three tasks in two categories, regimes full and 10-shot, C = 1. Every count,
mean and sign-test p below is worked out by hand in the comments from the per-task MCCs of
:data:`FULL` (not from geneb's output). The properties come from a user file, except the
architecture, tokenization and pretraining data of Caduceus-Ps-131K (from the model
catalogue: Mamba/SSM, single-nucleotide, human) and NT-2.5B-MS's, which the file overrides.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from geneb.analysis.domain import smaller_beats_larger_in_domain
from geneb.analysis.properties import read_model_properties, resolve_properties
from geneb.cli import app
from geneb.models.catalogue import published_facts
from geneb.results.schema import RESULT_COLUMNS, RESULTS_SCHEMA, RESULTS_SCHEMA_VERSION

CAD, NT = "Caduceus-Ps-131K", "NT-2.5B-MS"
#: per-task MCC in the full regime: (t1, t2 [promoters], t3 [enhancers])
FULL = {
    "m-a": (0.5, 0.3, 0.2),  # promoters 0.40, enhancers 0.20, macro 0.30
    "m-b": (0.6, 0.4, 0.3),  # 0.50, 0.30, macro 0.40
    "m-c": (0.7, 0.5, 0.6),  # 0.60, 0.60, macro 0.60
    CAD: (0.2, 0.2, 0.5),  # 0.20, 0.50, macro 0.35
    NT: (0.8, 0.6, 0.12),  # 0.70, 0.12, macro 0.41
    "m-f": (0.5, 0.4, 0.85),  # 0.45, 0.85, macro 0.65
    "m-u": (0.1, 0.1, 0.1),  # macro 0.10
}
#: 10-shot MCC = full MCC x this factor, so the relative drop is 1 - factor
SHOT10 = {"m-a": 0.5, "m-b": 0.8, "m-c": 0.9, CAD: 0.6, NT: 0.7, "m-f": 0.8, "m-u": 1.0}
TASKS = (("t1", "promoters"), ("t2", "promoters"), ("t3", "enhancers"))
HEADER = "model,n_params,architecture_class,tokenization_class,pretraining_data_class,organisms"
PROPS_CSV = f"""{HEADER},source
m-a,50000000,transformer encoder,single-nucleotide,human,Homo sapiens,hand-made fixture
m-b,60000000,transformer encoder,k-mer,human,,
m-c,300000000,transformer encoder,single-nucleotide,multi-species,,
Caduceus-Ps-131K,2e9,,,,,
NT-2.5B-MS,5000000000,transformer decoder,k-mer,multi-species,,
m-f,100000000,transformer encoder,k-mer,multi-species,,
m-u,10000000,,single-nucleotide,plant,,
"""
PROPS_TOML = """
[models."m-a"]
n_params = 50000000
architecture_class = "transformer encoder"
tokenization_class = "single-nucleotide"
pretraining_data_class = "human"
organisms = ["Homo sapiens"]
source = "hand-made fixture"

[models."Caduceus-Ps-131K"]
n_params = 2e9
"""
ORGANISMS_CSV = "task,organism\nt1,human\nt2,mammal\nt3,prokaryote\n"


def _row(model: str, task: str, cat: str, regime: str, seed: int, mcc: float) -> dict:
    k = None if regime == "full" else int(regime)
    return dict(
        schema_version=RESULTS_SCHEMA_VERSION, model=model, task=task, category=cat,
        regime=regime, k=k, seed=seed, C=1.0, probe="linear", backend="sklearn",
        standardize=False, take_all=False, mcc=mcc, accuracy=0.5, macro_f1=0.5, auroc=0.5,
        n_classes=2, n_train=2 * (k or 500), n_test=100, n_iter=5, converged=True,
        fit_seconds=0.01, train_rows=[] if k is None else list(range(2 * k)), n_params=None,
        store_fingerprint=f"fp-{model}-{task}", task_fingerprint=f"tf-{task}",
        geneb_version="0.1.0", sklearn_version="1.9.1", created="2026-11-29T00:00:00+00:00",
    )  # fmt: skip


def results_table() -> pd.DataFrame:
    """Two seeds per cell; 10-shot seeds at +-0.01 around the cell's value (mean exact)."""
    rows = []
    for m, vals in FULL.items():
        for (task, cat), v in zip(TASKS, vals, strict=True):
            rows += [_row(m, task, cat, "full", s, v) for s in (13, 17)]
            rows += [_row(m, task, cat, "10", s, v * SHOT10[m] + d) for s, d in ((13, 0.01), (17, -0.01))]  # fmt: skip  # noqa: E501
    df = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    return pa.Table.from_pandas(df, schema=RESULTS_SCHEMA, preserve_index=False).to_pandas()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("controlled")
    out = {"results": d / "results.parquet", "props": d / "props.csv", "org": d / "org.csv"}
    results_table().to_parquet(out["results"])
    out["props"].write_text(PROPS_CSV)
    out["org"].write_text(ORGANISMS_CSV)
    out["toml"] = d / "props.toml"
    out["toml"].write_text(PROPS_TOML)
    out["dir"] = d
    return out


@pytest.fixture(scope="module")
def report(files) -> dict:
    args = ["report", "-r", str(files["results"]), "-o", str(files["dir"] / "rep"), "--n-boot",
            "200", "--model-properties", str(files["props"]), "--task-organisms",
            str(files["org"]), "--json"]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def _full(rows: list[dict], **where) -> list[dict]:
    return [r for r in rows if r.get("regime") == "full" and all(r[k] == v for k, v in where.items())]  # fmt: skip  # noqa: E501


def test_properties_user_file_overrides_catalogue(report) -> None:
    props = {r["model"]: r for r in report["model_properties"]}
    cad, nt = props[CAD], props[NT]
    # catalogue facts where the file leaves the cell empty; the file's count where it gives one
    assert (cad["architecture_class"], cad["tokenization_class"]) == ("Mamba/SSM", "single-nucleotide")  # fmt: skip  # noqa: E501
    assert cad["pretraining_data_class_source"] == "published (https://arxiv.org/abs/2403.03234)"
    assert cad["n_params"] == 2e9 and cad["n_params_source"].startswith("user file ")
    # the file overrides the catalogue (encoder, 2.5B) for the model it names
    assert (nt["architecture_class"], nt["n_params"]) == ("transformer decoder", 5e9)
    assert props["m-a"]["organisms"] == ["Homo sapiens"]
    assert props["m-a"]["architecture_class_source"] == "hand-made fixture"
    assert props["m-u"]["architecture_class"] is None


def test_matched_pairs_by_hand(report) -> None:
    items = report["matched_pairs"]
    keys = {"property", "model_a", "model_b", "value_a", "value_b", "category", "regime"}
    assert all(keys | {"mcc_a", "mcc_b"} == set(r) for r in items)
    # pairs (differ in exactly one of the three): tokenization (m-b,m-a), (m-f,m-c);
    # pretraining (m-a,m-c), (m-b,m-f); architecture (CAD,m-a), (NT,m-f); NT-m-c differs in 2,
    # m-u has no architecture. 6 pairs x 3 categories (2 + 'all') x 2 regimes = 36 items.
    assert len(items) == 36
    pairs = {(r["property"], r["model_a"], r["model_b"]) for r in items}
    assert pairs == {
        ("tokenization_class", "m-b", "m-a"), ("tokenization_class", "m-f", "m-c"),
        ("pretraining_data_class", "m-a", "m-c"), ("pretraining_data_class", "m-b", "m-f"),
        ("architecture_class", CAD, "m-a"), ("architecture_class", NT, "m-f"),
    }  # fmt: skip
    (it,) = _full(items, model_a="m-f", model_b="m-c", category="all")
    assert (it["value_a"], it["value_b"]) == ("k-mer", "single-nucleotide")
    assert it["mcc_a"] == pytest.approx(0.65) and it["mcc_b"] == pytest.approx(0.60)
    (it,) = _full(items, model_a=NT, category="enhancers")
    assert (it["mcc_a"], it["mcc_b"]) == (pytest.approx(0.12), pytest.approx(0.85))


@pytest.mark.parametrize(
    "prop, value_a, category, n, mean_diff, k_a, k_b, p",
    [
        # (m-b,m-a) 0.40-0.30 = +0.10, (m-f,m-c) 0.65-0.60 = +0.05: mean 0.075, 2 of 2;
        # two-sided sign test: P(X=0) + P(X=2) = 0.25 + 0.25
        ("tokenization_class", "k-mer", "all", 2, 0.075, 2, 0, 0.5),
        # promoters: 0.50-0.40 = +0.10, 0.45-0.60 = -0.15: mean -0.025, 1 vs 1 -> p = 1
        ("tokenization_class", "k-mer", "promoters", 2, -0.025, 1, 1, 1.0),
        # (m-a,m-c) 0.30-0.60 = -0.30, (m-b,m-f) 0.40-0.65 = -0.25: multi-species 2 of 2
        ("pretraining_data_class", "human", "all", 2, -0.275, 0, 2, 0.5),
        # enhancers: 0.20-0.60 = -0.40, 0.30-0.85 = -0.55
        ("pretraining_data_class", "human", "enhancers", 2, -0.475, 0, 2, 0.5),
        ("architecture_class", "Mamba/SSM", "all", 1, 0.05, 1, 0, 1.0),  # 0.35 - 0.30
        ("architecture_class", "transformer decoder", "all", 1, -0.24, 0, 1, 1.0),  # .41-.65
        ("architecture_class", "transformer decoder", "promoters", 1, 0.25, 1, 0, 1.0),
    ],
)
def test_matched_pair_summary_by_hand(report, prop, value_a, category, n, mean_diff, k_a, k_b, p):
    (row,) = _full(report["matched_pairs_summary"], property=prop, value_a=value_a, category=category)  # fmt: skip  # noqa: E501
    assert (row["n_pairs"], row["k_a"], row["k_b"], row["ties"]) == (n, k_a, k_b, 0)
    assert row["mean_diff"] == pytest.approx(mean_diff)
    assert row["sign_p"] == pytest.approx(p)


def test_capacity_tiers_by_hand(report) -> None:
    tiers = report["tiers"]
    assert tiers["labels"] == ["<=200M", "200M-1B", ">1B"] and tiers["edges"] == [2e8, 1e9]
    scores = {r["tier"]: r for r in _full(tiers["scores"])}
    # <=200M: m-u .10, m-a .30, m-b .40, m-f .65 -> 1.45 / 4; 200M-1B: m-c .60; >1B: .35, .41
    assert {t: r["n_models"] for t, r in scores.items()} == {"<=200M": 4, "200M-1B": 1, ">1B": 2}
    assert scores["<=200M"]["mean_macro_mcc"] == pytest.approx(0.3625)
    assert scores["200M-1B"]["mean_macro_mcc"] == pytest.approx(0.60)
    assert scores[">1B"]["mean_macro_mcc"] == pytest.approx(0.38)
    gains = {(r["tier_low"], r["tier_high"]): r for r in _full(tiers["gains"])}
    expected = {("<=200M", "200M-1B"): 0.2375, ("<=200M", ">1B"): 0.0175, ("200M-1B", ">1B"): -0.22}
    for key, gain in expected.items():
        g = gains[key]
        assert g["gain"] == pytest.approx(gain) and g["ci_low"] <= gain <= g["ci_high"]
    # one model in 200M-1B: its resampled mean is always .60, so the interval of the >1B gain
    # lies within [.35 - .60, .41 - .60] (the >1B tier's resampled means span .35 to .41)
    g = gains[("200M-1B", ">1B")]
    assert -0.25 - 1e-12 <= g["ci_low"] and g["ci_high"] <= -0.19 + 1e-12
    few = {r["tier"]: r for r in tiers["fewshot"] if r["regime"] == "10"}
    # relative drop = 1 - factor: (.5 + .2 + .2 + 0) / 4; .1; (.4 + .3) / 2
    assert few["<=200M"]["mean_drop_rel"] == pytest.approx(0.225)
    assert few["200M-1B"]["mean_drop_rel"] == pytest.approx(0.10)
    assert few[">1B"]["mean_drop_rel"] == pytest.approx(0.35)


def test_smaller_beats_larger_in_domain_by_hand(report) -> None:
    sbl = report["smaller_beats_larger"]
    # pairs with larger >= 5 x smaller: m-u(10M) x 6, m-a(50M) x {m-c, CAD, NT},
    # m-b(60M) x {m-c (300M = 5 x 60M), CAD, NT}, m-f(100M) x {CAD, NT}, m-c x {CAD, NT}: 16.
    # All tasks: m-b .40 > CAD .35; m-f .65 > .35, .41; m-c .60 > .35, .41 -> 5 of 16.
    assert sbl["all"]["counts"]["full"] == {"n_pairs": 16, "n_smaller_better": 5}
    # In domain (t1 human, t2 mammal, t3 prokaryote): m-u's plant data covers no task -> its 6
    # pairs are excluded. Human models share only t1 with anyone: m-a .5 > CAD .2, m-b .6 >
    # CAD .2, m-f .5 > CAD .2, m-c .7 > CAD .2; m-a, m-b lose to NT (.8) and m-c (.7) on t1;
    # multi-species pairs use all tasks: m-f .65 > NT .41, m-c .60 > NT .41 -> 6 of 10.
    assert sbl["in_domain"]["counts"]["full"] == {"n_pairs": 10, "n_smaller_better": 6}
    excluded = _full(sbl["in_domain"]["excluded"])
    assert len(excluded) == 6 and {r["smaller_model"] for r in excluded} == {"m-u"}
    assert {r["reason"] for r in excluded} == {"no task is in the domain of both models"}
    (pair,) = _full(sbl["in_domain"]["pairs"], smaller_model="m-a", larger_model=CAD)
    assert pair["n_tasks"] == 1 and pair["macro_mcc_smaller"] == pytest.approx(0.5)


def test_in_domain_unknown_pretraining_is_excluded(files) -> None:
    perf = results_table()
    perf = perf[perf["regime"] == "full"].groupby(["regime", "model", "task", "category"])
    perf = perf["mcc"].mean().rename("mcc_mean").reset_index()
    user = read_model_properties(files["props"])
    props = resolve_properties(sorted(FULL), user, catalogue=published_facts)
    props.loc[props["model"] == "m-a", "pretraining_data_class"] = None
    res = smaller_beats_larger_in_domain(perf, props, {"t1": "human", "t2": "mammal"})
    reasons = set(res["excluded"].loc[res["excluded"]["smaller_model"] == "m-a", "reason"])
    assert reasons == {"pretraining-data class unknown for m-a"}
    # m-a's 3 pairs and m-u's 6 leave 7 in-domain pairs
    assert len(res["in_domain"]) == 7 and len(res["all"]) == 16


def test_toml_file_same_schema(files) -> None:
    csv = read_model_properties(files["props"]).set_index("model")
    toml = read_model_properties(files["toml"]).set_index("model")
    for key in ("n_params", "architecture_class", "tokenization_class", "pretraining_data_class"):
        assert toml.loc["m-a", key] == csv.loc["m-a", key]
    assert toml.loc["m-a", "organisms"] == ("Homo sapiens",)
    assert toml.loc[CAD, "n_params"] == 2_000_000_000


@pytest.mark.parametrize(
    "text, message",
    [
        ("model,architecture_class\nm,transformer\n", "line 2 ('m'): architecture_class must be"),
        ("model,n_params\nm,-3\n",
         "n_params must be a positive whole number at most 1e+13, got '-3'"),
        ("model,size\nm,3\n", "line 2: unknown key(s) ['size']"),
        ("name,n_params\nm,3\n", "no 'model' column"),
        ("model,n_params\nm,3\nm,4\n", "line 3: model 'm' listed twice"),
    ],
)
def test_bad_properties_file_is_refused(files, tmp_path, text, message) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    args = ["report", "-r", str(files["results"]), "-o", str(tmp_path / "o"),
            "--model-properties", str(bad)]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()  # refused before any work


def test_bad_tier_edges_and_organisms(files, tmp_path) -> None:
    base = ["report", "-r", str(files["results"]), "-o", str(tmp_path / "o")]
    res = CliRunner().invoke(app, [*base, "--tier-edges", "1e9,2e8"])
    assert res.exit_code == 2 and "--tier-edges: expected increasing values" in res.output
    org = tmp_path / "org.csv"
    org.write_text("task,organism\nt1,martian\n")
    res = CliRunner().invoke(app, [*base, "--task-organisms", str(org)])
    assert res.exit_code == 2 and "line 2: organism must be one of" in res.output


def test_plan_reads_and_checks_the_properties_file_before_any_work(tmp_path) -> None:
    from geneb.errors import PlanError
    from geneb.pipeline.execute import validate
    from geneb.pipeline.plan import load_plan

    (tmp_path / "props.csv").write_text("model,tokenization_class\nkmer-3,6-mer\n")
    (tmp_path / "org.csv").write_text("task,organism\nsyn_tata,human\n")
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(
        'store = "work/store.zarr"\nout = "work/out"\n[[models]]\nmodel = "kmer-3"\n'
        '[tasks]\nnames = ["syn_tata"]\n[probe]\nshots = ["full"]\nseeds = [13]\n'
        '[report]\nmodel_properties = "props.csv"\ntask_organisms = "org.csv"\n'
    )
    plan = load_plan(plan_file)
    assert plan.model_properties == tmp_path / "props.csv"
    assert plan.task_organisms == tmp_path / "org.csv"
    with pytest.raises(PlanError, match=r"\[report\] .*props.csv: line 2 \('kmer-3'\): "
                       r"tokenization_class must be one of"):  # fmt: skip
        validate(plan)
    assert not (tmp_path / "work").exists()
