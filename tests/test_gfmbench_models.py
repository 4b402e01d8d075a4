"""GFMBench-API's model interface in geneb's task API (issue 34.1, 34.4): a model class written
here against GFMBench-API's signatures (base_gfm_model.py @ bab164e; no gfmbench_api import),
evaluated by geneb on a real classification task and on BRCA1, gives the metrics of the same
model written with geneb's own methods, and GFMBench's metric names carry the numbers that
GFMBench-API's metric classes compute (recomputed here with scikit-learn, their library)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, matthews_corrcoef, roc_auc_score

import geneb
from geneb.errors import GenebError

W = 64
KMERS = ["".join(p) for p in itertools.product("ACGT", repeat=2)]
CODE = {b: i for i, b in enumerate("ACGT")}
RNG = np.random.default_rng(11)
P_EMB = RNG.normal(size=(5, 8))  # per-base embedding of A, C, G, T, N
MARKOV = RNG.dirichlet(np.ones(4), size=5)  # p(base | previous base), row 4: no previous
HEAD = RNG.normal(size=(16, 3))
MASK_HEAD = RNG.normal(size=(8, 4))


def _onehot_states(s: str) -> np.ndarray:
    """(L, 8): each position's embedding mixed with its neighbours' (context matters)."""
    e = P_EMB[["ACGTN".find(b) for b in s]]
    return np.tanh(e + 0.5 * np.roll(e, 1, 0) + 0.25 * np.roll(e, -1, 0))


def _rep(s: str) -> np.ndarray:
    h = _onehot_states(s)
    return np.concatenate([h.mean(0), h[len(h) // 2]])


def _probs(s: str) -> np.ndarray:
    prev = [4] + ["ACGT".find(b) for b in s[:-1]]
    return np.array([MARKOV[p, CODE.get(b, 0)] for p, b in zip(prev, s, strict=True)])


def _kmer(s: str) -> np.ndarray:
    return np.array([s.count(k) / max(1, len(s) - 1) for k in KMERS])


def _label_probs(seqs, k):
    z = np.array([_kmer(s) for s in seqs]) @ HEAD[:, :k] * 8
    p = np.exp(z - z.max(1, keepdims=True))
    return p / p.sum(1, keepdims=True)


def _masked4(s: str, pos: int) -> np.ndarray:
    z = _onehot_states(s[:pos] + "N" + s[pos + 1:])[pos] @ MASK_HEAD
    return np.exp(z) / np.exp(z).sum()


class GfmStyleModel:
    """A user's model for GFMBench-API: its five methods, its argument names, numpy out."""

    def __init__(self, device: str = "cpu", num_labels: int = 2) -> None:
        self.num_labels = num_labels

    def infer_sequence_to_labels_probs(self, sequences, conditional_input=None):
        return _label_probs(sequences, self.num_labels)

    def infer_sequence_to_sequence(self, sequences, conditional_input=None):
        n = max(len(s) for s in sequences)
        probs = np.ones((len(sequences), n))
        emb = np.zeros((len(sequences), n, 8))
        for i, s in enumerate(sequences):
            probs[i, : len(s)] = _probs(s)
            emb[i, : len(s)] = _onehot_states(s)
        return probs, emb, np.array([_rep(s) for s in sequences])

    def sequence_pos_to_prob_pos(self, sequences, pos):
        return np.full(len(sequences), pos)

    def infer_masked_sequence_to_token_probs(self, sequences, variant_pos, variant_letters,
                                             reference_letters, conditional_input=None):
        p = np.array([_masked4(s, variant_pos) for s in sequences])
        rows = np.arange(len(sequences))
        return (p[rows, [CODE[a] for a in variant_letters]],
                p[rows, [CODE[r] for r in reference_letters]])

    def infer_variant_ref_sequences_to_labels_probs(self, variant_sequences, ref_sequences,
                                                    conditional_input=None):
        return None


class GenebStyleModel:
    """The same model written with geneb's methods."""

    def __init__(self, num_labels: int = 2) -> None:
        self.num_labels = num_labels

    def embed(self, seqs):
        return np.array([_rep(s) for s in seqs])

    def log_likelihood(self, seqs):
        return np.array([np.log(_probs(s) + 1e-10).sum() for s in seqs])

    def masked_log_probs(self, seqs, positions):
        return np.log(np.array([_masked4(s, p) for s, p in zip(seqs, positions, strict=True)]))

    def predict(self, seqs):
        return _label_probs(seqs, self.num_labels)


@pytest.fixture(scope="module")
def cls_task(data_dir: Path):
    p = data_dir / "dhs_idhs_fflg"
    if not p.is_dir():
        pytest.skip(f"task not found at {p}")
    return geneb.load_task(str(p))


@pytest.fixture(scope="module")
def brca1(brca1_folder: Path) -> str:
    return str(brca1_folder)


def test_classification_task_gfmbench_model_equals_geneb_model(cls_task):
    k = cls_task.spec.n_classes
    gfm = cls_task.evaluate(GfmStyleModel(num_labels=k), batch_size=7)
    own = cls_task.evaluate(GenebStyleModel(num_labels=k))
    for m in ("mcc", "accuracy", "macro_f1", "auroc", "predict_mcc", "predict_accuracy",
              "predict_auroc"):
        assert gfm[m] == pytest.approx(own[m], abs=1e-12), m
    te = cls_task.split("test")
    p = _label_probs(te.sequences, k)
    assert gfm["classification_mcc"] == pytest.approx(
        matthews_corrcoef(te.labels, p.argmax(1)), abs=1e-12)
    assert gfm["classification_auroc"] == pytest.approx(roc_auc_score(te.labels, p[:, 1]),
                                                        abs=1e-9)
    assert gfm["classification_auprc"] == pytest.approx(
        average_precision_score(te.labels, p[:, 1]), abs=1e-9)
    assert gfm["classification_accuracy"] == gfm["predict_accuracy"]
    assert set(gfm["skipped"]) == {
        "sequence_pos_to_prob_pos", "infer_masked_sequence_to_token_probs",
        "infer_variant_ref_sequences_to_labels_probs", "infer_sequence_to_sequence.sequence_probs",
        "infer_sequence_to_sequence.sequence_embeddings"}


def test_zero_shot_brca1_gfmbench_model_equals_geneb_model(brca1):
    task = geneb.load_task(brca1, window=W)
    gfm = task.evaluate(GfmStyleModel())
    own = task.evaluate(GenebStyleModel())
    for m in ("cosine_auroc", "cosine_auprc", "l2_auroc", "l2_auprc", "llr_auroc", "llr_auprc",
              "llr_spearman", "masked_llr_auroc", "masked_llr_auprc", "masked_llr_n_scored"):
        assert gfm[m] == pytest.approx(own[m], abs=1e-12), m
    pairs = {"l2_auprc": "sequence_embeddings_l2_auprc", "llr_auroc": "sum_probs_llr_auroc",
             "masked_llr_auprc": "snv_variant_effect_prediction_masked_llr_auprc"}
    for g, name in pairs.items():
        assert gfm[name] == gfm[g]
    # GFMBench's own rules, recomputed: -cosine similarity of the representatives (eps 1e-10),
    # sum of log(p + eps) LLR, -cos at the SNV's output position of sequence_embeddings
    win, ok = task.windows, task.ok_rows()
    y = task.variants.table["label"].to_numpy()[ok]
    refs = [win.ref_windows[j] for j in win.ref_id[ok]]
    alts = [win.alt_windows[i] for i in ok]
    rr, ra = np.array([_rep(s) for s in refs]), np.array([_rep(s) for s in alts])

    def neg_cos(a, b):
        a = a / (np.linalg.norm(a, axis=1, keepdims=True) + 1e-10)
        b = b / (np.linalg.norm(b, axis=1, keepdims=True) + 1e-10)
        return -(a * b).sum(1)

    assert gfm["sequence_embeddings_cosinesim_auroc"] == pytest.approx(
        roc_auc_score(y, neg_cos(ra, rr)), abs=1e-9)
    llr = [np.log(_probs(a) + 1e-10).sum() - np.log(_probs(r) + 1e-10).sum()
           for a, r in zip(alts, refs, strict=True)]
    assert gfm["sum_probs_llr_auprc"] == pytest.approx(
        average_precision_score(y, -np.array(llr)), abs=1e-9)
    at = np.array([_onehot_states(s)[W // 2] for s in refs])
    at_alt = np.array([_onehot_states(s)[W // 2] for s in alts])
    assert gfm["snv_variant_effect_cosinesim_auroc"] == pytest.approx(
        roc_auc_score(y, neg_cos(at_alt, at)), abs=1e-9)
    assert gfm["position_cosine_n_scored"] == len(ok)
    assert "infer_sequence_to_labels_probs" in gfm["skipped"]


def test_supervised_brca1_gfmbench_representative_is_the_probe(brca1):
    task = geneb.load_task(brca1, window=W, supervised=True)
    gfm = task.evaluate(GfmStyleModel(), Cs=[1.0])
    own = task.evaluate(GenebStyleModel(), Cs=[1.0])
    assert gfm["auroc"] == pytest.approx(own["auroc"], abs=1e-12)
    assert "returned None" in gfm["skipped"]["infer_variant_ref_sequences_to_labels_probs"]


class NothingModel:
    def infer_sequence_to_sequence(self, sequences, conditional_input=None):
        return None, None, None

    def infer_sequence_to_labels_probs(self, sequences, conditional_input=None):
        return None


def test_none_answers_are_skipped_with_the_reason(cls_task):
    res = cls_task.evaluate(NothingModel())
    assert set(res) == {"skipped"}
    sk = res["skipped"]
    assert "returned None" in sk["infer_sequence_to_labels_probs"]
    assert "returned None" in sk["infer_sequence_to_sequence.sequence_representative"]
    assert "the model has no" in sk["infer_masked_sequence_to_token_probs"]


@pytest.mark.parametrize("bad, msg", [
    (lambda s: (None, None, [["x"] * 3 for _ in s]), r"sequence_representative\) returned strings"),
    (lambda s: (np.full((len(s), 5), 2.0), None, None), r"sequence_probs\) returned probabilities"),
    (lambda s: (None, np.zeros((len(s), 5)), None), r"sequence_embeddings\) returned shape"),
    (lambda s: "nope", "returned a str; expected a tuple"),
])
def test_bad_gfmbench_outputs_are_one_error(cls_task, bad, msg):
    m = type("M", (), {"infer_sequence_to_sequence": lambda self, s, c=None: bad(s)})()
    with pytest.raises(GenebError, match=msg):
        cls_task.evaluate(m)


def test_bad_label_probs_and_batch_size(cls_task):
    m = type("M", (), {"infer_sequence_to_labels_probs":
                       lambda self, s, c=None: np.full((len(s), 2), 0.6)})()
    with pytest.raises(GenebError, match="infer_sequence_to_labels_probs returned class "
                                         "probabilities whose rows sum"):
        cls_task.evaluate(m)
    with pytest.raises(GenebError, match="batch_size must be a positive int"):
        cls_task.evaluate(GfmStyleModel(), batch_size=0)


def test_positions_missing_or_all_minus_one_are_skipped(brca1):
    task = geneb.load_task(brca1, window=W)

    class NoPositions(GfmStyleModel):
        sequence_pos_to_prob_pos = None

    class Unknown(GfmStyleModel):
        def sequence_pos_to_prob_pos(self, sequences, pos):
            return np.full(len(sequences), -1)

    res = task.evaluate(NoPositions())
    assert "position_cosine_auroc" not in res and "cosine_auroc" in res
    assert "has no sequence_pos_to_prob_pos" in res["skipped"]["sequence_pos_to_prob_pos"]
    res = task.evaluate(Unknown())
    assert "-1 for all" in res["skipped"]["sequence_pos_to_prob_pos"]


def test_methods_without_conditional_input_are_called_without_it(cls_task):
    """GFMBench's own Evo 2 example omits conditional_input in some signatures."""
    k = cls_task.spec.n_classes

    class NoConditional:
        def infer_sequence_to_labels_probs(self, sequences):
            return _label_probs(sequences, k)

    res = cls_task.evaluate(NoConditional())
    own = cls_task.evaluate(GenebStyleModel(num_labels=k))
    assert res["classification_mcc"] == own["predict_mcc"]
