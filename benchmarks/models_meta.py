"""Metadata without loading: ``get_model_meta`` vs ``get_embedder`` on the same model.

What a plan check, ``geneb models info`` or the scaling analysis pays to learn what a model is,
against what building it costs (the baseline), measured in one process on the same folder
model, medians of ``--repeats`` interleaved runs. Also the catalogue: resolving every short
name. Run on an otherwise idle machine:

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/models_meta.py \\
        --model ../shared/models/tiny/tiny-bert-dnabert2-bpe [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _time(fn, repeats: int) -> float:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="a model folder (or any spec)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    from geneb.models import catalogue
    from geneb.models.registry import get_embedder, get_model_meta

    get_embedder(args.model, device="cpu")  # warm: imports, file cache
    meta_s, build_s = [], []
    for _ in range(args.repeats):  # interleaved so load drifts hit both
        meta_s.append(_time(lambda: get_model_meta(args.model), 1))
        build_s.append(_time(lambda: get_embedder(args.model, device="cpu"), 1))
    names = catalogue.names()
    cat_s = _time(lambda: [get_model_meta(n) for n in names], args.repeats)
    m, b = statistics.median(meta_s), statistics.median(build_s)
    print(
        json.dumps(
            {
                "model": args.model,
                "get_model_meta_ms": round(m * 1e3, 3),
                "get_embedder_ms": round(b * 1e3, 1),
                "build_over_meta": round(b / m, 1),
                "catalogue_entries": len(names),
                "meta_all_catalogue_ms": round(cat_s * 1e3, 2),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
