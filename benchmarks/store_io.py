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


def _prewarm(mb: int) -> None:
    """Touch and free ``mb`` MB right before a timed step (untimed). On a VM that hands freed
    memory back to the host, the first touch of such pages costs up to 10x (seen here: 400 MB
    writes taking 0.06 s or 1.2 s at random); this gives both sides the same warm pages."""
    if mb > 0:
        np.ones(mb * 1024 * 1024 // 8)


_CPU: dict[str, list[float]] = {}


def _timed(fn, cpu_key: str | None = None) -> float:
    """Wall seconds of ``fn()``; with ``cpu_key`` also record the process CPU seconds (all
    threads; independent of how busy the machine is, unlike the wall time)."""
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    t = time.perf_counter() - t0
    if cpu_key is not None:
        _CPU.setdefault(cpu_key, []).append(time.process_time() - c0)
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=4096, help="rows per writer.append call")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--warmup", type=int, default=1,
        help="untimed rounds first: on a VM, memory touched for the first time (page cache, "
        "fresh arrays) can cost 10x; both sides get the same warm-up",
    )
    ap.add_argument("--dtype", default="float32", choices=["float32", "float16"])
    ap.add_argument("--dir", default=None, help="scratch folder (default: a temp folder)")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    ap.add_argument("--prewarm-mb", type=int, default=1024,
                    help="memory touched and freed before each timed step (0: off)")
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
        for rep in range(-args.warmup, args.repeats):  # rep < 0: warm-up, not recorded
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
                _prewarm(args.prewarm_mb)
                t = _timed(fn, name if rep >= 0 else None)
                if rep >= 0:
                    res[name].append(t)
            got: dict[str, np.ndarray] = {}

            def np_read(npy=npy, got=got) -> None:
                got["n"] = np.load(npy)

            def st_read(zs=zs, got=got) -> None:
                got["s"] = FeatureStore(zs).get(key.model, key.task, key.split).embeddings

            reads = [("np_r", np_read), ("st_r", st_read)]
            for name, fn in reads if rep % 2 == 0 else reads[::-1]:
                _prewarm(args.prewarm_mb)
                t = _timed(fn, name if rep >= 0 else None)
                if rep >= 0:
                    res[name].append(t)
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
            if rep >= 0:
                res["np_k"].append(statistics.median(nk))
                res["st_k"].append(statistics.median(sk))
            del mm
            if rep > -args.warmup:  # keep the page cache / disk from filling with old copies
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
        "warmup": args.warmup,
        "prewarm_mb": args.prewarm_mb,
        "dir": str(scratch.parent),
        "raw_s": res,
        "cpu_ms": {k: 1e3 * statistics.median(v) for k, v in _CPU.items()},
        "load_avg_1min": os.getloadavg()[0],
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
    cpu = out["cpu_ms"]
    print(
        f"{'CPU ms (all threads)':18} write {cpu['np_w']:.0f} vs {cpu['st_w']:.0f}, "
        f"read {cpu['np_r']:.0f} vs {cpu['st_r']:.0f}  (numpy vs store; load avg "
        f"{out['load_avg_1min']:.1f} on {os.cpu_count()} cores)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
