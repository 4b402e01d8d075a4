"""Feature-store I/O against np.save/np.load, measured in the same run (issue 2 benchmark).

Writes and reads a 100,000 x 1,024 float32 matrix (Gaussian, seed 0) through the store and
through numpy, and times fetching 20 random rows (store: ``get_rows``; numpy: ``np.load`` with
``mmap_mode='r'`` then fancy indexing). Every figure is the median of ``--repeats`` runs; the
ratio column is store / numpy throughput (>1 = store faster). Page cache is warm for reads of
both; dirty pages are flushed (``os.sync``, untimed) before each timed write and the order
alternates between repeats, because on a shared machine background writeback otherwise
decides the write figures. Targets (issue 2): write >= 0.8x, full read >= 0.9x, 20 random
rows < 10 ms.

    .venv/bin/python benchmarks/store_io.py [--rows 100000 --dim 1024 --batch 4096 --repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from geneb.store import FeatureStore, Provenance, StoreKey


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=4096, help="rows per writer.append call")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float16"])
    ap.add_argument("--dir", default=None, help="scratch folder (default: a temp folder)")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args()

    x = np.random.default_rng(0).standard_normal((args.rows, args.dim), dtype=np.float32)
    x = x.astype(args.dtype, copy=False)
    labels = np.arange(args.rows) % 2
    mb = x.nbytes / 1e6
    key = StoreKey("bench/model", "bench_task", "train")
    prov = Provenance("bench/model", "none", "bench_task", "none", storage_dtype=args.dtype)
    rng = np.random.default_rng(1)
    scratch = Path(tempfile.mkdtemp(prefix="geneb-bench-", dir=args.dir))
    res: dict[str, list[float]] = {k: [] for k in ("np_w", "st_w", "np_r", "st_r", "np_k", "st_k")}
    try:
        for rep in range(args.repeats):
            npy, zs = scratch / f"m{rep}.npy", scratch / f"s{rep}.zarr"

            def store_write(zs=zs) -> None:
                st = FeatureStore(zs, mode="a")
                with st.writer(
                    key, provenance=prov, labels=labels, rows=np.arange(args.rows),
                    dim=args.dim, storage_dtype=args.dtype,
                ) as w:
                    for a in range(0, args.rows, args.batch):
                        w.append(x[a : a + args.batch])

            # interleaved, order alternating, dirty pages flushed before each timed write,
            # so background writeback and other processes hit both alike
            writes = [("np_w", lambda npy=npy: np.save(npy, x)), ("st_w", store_write)]
            for name, fn in writes if rep % 2 == 0 else writes[::-1]:
                os.sync()
                res[name].append(_timed(fn))
            got: dict[str, np.ndarray] = {}

            def np_read(npy=npy, got=got) -> None:
                got["n"] = np.load(npy)

            def st_read(zs=zs, got=got) -> None:
                got["s"] = FeatureStore(zs).get(key.model, key.task, key.split).embeddings

            reads = [("np_r", np_read), ("st_r", st_read)]
            for name, fn in reads if rep % 2 == 0 else reads[::-1]:
                res[name].append(_timed(fn))
            assert np.array_equal(got["n"], x) and np.array_equal(got["s"], x)
            del got
            mm = np.load(npy, mmap_mode="r")
            st = FeatureStore(zs)
            nk, sk = [], []
            for _ in range(15):
                idx = rng.choice(args.rows, 20, replace=False)
                nk.append(_timed(lambda idx=idx, mm=mm: np.array(mm[idx])))
                sk.append(
                    _timed(lambda idx=idx, st=st: st.get_rows(key.model, key.task, key.split, idx))
                )
                if not np.array_equal(
                    st.get_rows(key.model, key.task, key.split, idx).embeddings, mm[idx]
                ):
                    raise AssertionError("store rows differ from numpy rows")
            res["np_k"].append(statistics.median(nk))
            res["st_k"].append(statistics.median(sk))
            del mm
            if rep:  # keep the page cache / disk from filling up with old copies
                shutil.rmtree(scratch / f"s{rep - 1}.zarr", ignore_errors=True)
                (scratch / f"m{rep - 1}.npy").unlink(missing_ok=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    med = {k: statistics.median(v) for k, v in res.items()}
    out = {
        "matrix": f"{args.rows} x {args.dim} {args.dtype} ({mb:.0f} MB), append batch {args.batch}",
        "write_MBps": {"numpy": mb / med["np_w"], "store": mb / med["st_w"]},
        "read_MBps": {"numpy": mb / med["np_r"], "store": mb / med["st_r"]},
        "write_ratio": med["np_w"] / med["st_w"],
        "read_ratio": med["np_r"] / med["st_r"],
        "rows20_ms": {"numpy_mmap": med["np_k"] * 1e3, "store": med["st_k"] * 1e3},
        "repeats": args.repeats,
        "raw_s": res,
    }
    from geneb.store.feature_store import layout_for

    shard, inner = layout_for(args.rows, args.dim, x.itemsize)
    out["layout"] = {"shard_rows": shard, "inner_rows": inner}
    print(f"matrix: {out['matrix']}; median of {args.repeats}")
    print(f"store layout: shards of {shard} rows, inner chunks of {inner} rows, crc32c")
    print(f"{'':18}{'numpy':>12}{'store':>12}{'ratio':>9}   target")
    print(
        f"{'write MB/s':18}{out['write_MBps']['numpy']:12,.0f}{out['write_MBps']['store']:12,.0f}"
        f"{out['write_ratio']:9.2f}   >= 0.8"
    )
    print(
        f"{'full read MB/s':18}{out['read_MBps']['numpy']:12,.0f}{out['read_MBps']['store']:12,.0f}"
        f"{out['read_ratio']:9.2f}   >= 0.9"
    )
    print(
        f"{'20 random rows ms':18}{out['rows20_ms']['numpy_mmap']:12.2f}"
        f"{out['rows20_ms']['store']:12.2f}{'':9}   < 10 ms"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
