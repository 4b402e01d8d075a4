"""GPU check: one short run on a GPU machine that fails loudly, prepared on the CPU.

Two steps of one script (``gpu_check_steps.py`` holds them):

1. On the CPU, beforehand: ``python benchmarks/gpu_check.py --reference`` computes every
   reference (float64 ``fast`` fits of the GENEB grid on gue_mouse_0 k-mer 5 spectra or a
   synthetic stand-in, the engine's rows, a tiny model's float32 embeddings, the model
   itself) into ``--refs`` (default ``benchmarks/gpu_refs``, git-ignored: carried to the GPU
   machine with the run, never committed).
2. On the GPU: ``python benchmarks/gpu_check.py`` (``--device cuda``) runs the checks
   against them: the torch backend (and cuML when usable) on the same fits (probabilities
   within ``PROBA_TOL``, argmax on every decided row, converged wherever the reference
   converged: geneb's float64 gradient test), the engine end to end with
   ``backend="auto"`` and two workers, CUDA extraction of the tiny model in float32 and
   bfloat16 (error against the CPU float32 embeddings, provenance dtype), and peak and
   leftover GPU memory after N multi-class full-data pairs; ``--mlp`` adds the MLP
   benchmark on CUDA (its exit status is a check). Exit status 1 when any check fails.

The real-size shapes (``real_size.py``'s default ones; small ones in the dry run) are checked
too: the torch backend (and cuML) against the CPU `fast` backend's full-regime fits
(``gpu_check_real_size.py``; the reference step then takes the C path of each shape).

``--cpu`` is the dry run of both steps here (small sizes, device cpu, < 2 minutes);
``--inject-error CHECK`` perturbs one check's reference, to see the script fail.

    python benchmarks/gpu_check.py --reference [--refs DIR] [--size gpu]   # CPU, before
    python benchmarks/gpu_check.py [--refs DIR] [--mlp] [--json out.json]  # on the GPU
    python benchmarks/gpu_check.py --cpu [--inject-error linear]           # dry run here

``--cuda-families`` checks the CUDA-only families instead (the catalogue's ``cuda_packages``:
Caduceus/PlantCaduceus ``mamba-ssm``, Evo 1 ``flash-attn``, Evo 2 ``evo2``): per package, one
JSON line with whether it imports, its kernel against a plain-torch reference on random
inputs (no weights: the hub is unreachable from the GPU machine, so the real checkpoints are
not run), and what geneb's readiness check says for the first model that needs it.

    python benchmarks/gpu_check.py --cuda-families [--json out.json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _kernel_mamba_ssm() -> float:
    """mamba_ssm's CUDA selective scan against its own pure-torch reference."""
    import torch
    from mamba_ssm.ops.selective_scan_interface import selective_scan_fn, selective_scan_ref

    g = torch.Generator(device="cuda").manual_seed(0)
    b, d, n, L = 2, 32, 8, 64

    def r(*shape):
        return torch.randn(*shape, device="cuda", generator=g)

    args = (r(b, d, L), torch.rand(b, d, L, device="cuda", generator=g),
            -torch.rand(d, n, device="cuda", generator=g), r(b, n, L), r(b, n, L), r(d))
    return float((selective_scan_fn(*args) - selective_scan_ref(*args)).abs().max())


def _kernel_flash_attn() -> float:
    """flash_attn's causal attention against torch's scaled_dot_product_attention (bf16)."""
    import torch
    from flash_attn import flash_attn_func

    q, k, v = torch.randn(3, 2, 128, 4, 64, device="cuda", dtype=torch.bfloat16).unbind(0)
    ref = torch.nn.functional.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True).transpose(1, 2)
    return float((flash_attn_func(q, k, v, causal=True) - ref).abs().max())


KERNELS = {"mamba_ssm": _kernel_mamba_ssm, "flash_attn": _kernel_flash_attn}
ALSO_IMPORT = {"evo2": ("vortex",)}  # Evo 2 runs on the vortex kernels it installs


def cuda_families() -> list[dict]:
    """One row per CUDA-only package of the catalogue (see module doc)."""
    import torch

    from geneb.errors import GenebError
    from geneb.models.catalogue import load_catalogue
    from geneb.models.cuda_only import module_of
    from geneb.models.registry import check_spec

    by_pkg: dict[str, list[str]] = {}
    for e in load_catalogue():
        for p in e.cuda_packages or ():
            by_pkg.setdefault(p, []).append(e.name)
    rows = []
    for pkg, models in by_pkg.items():
        row: dict = {"package": pkg, "models": models, "cuda": torch.cuda.is_available(),
                     "weights": "not run: the hub is unreachable from this machine"}
        for mod in (module_of(pkg), *ALSO_IMPORT.get(module_of(pkg), ())):
            try:
                m = importlib.import_module(mod)
                row[f"import {mod}"] = f"ok {getattr(m, '__version__', '')}".strip()
            except Exception as e:  # noqa: BLE001 - reported, not raised
                row[f"import {mod}"] = f"failed: {type(e).__name__}: {str(e)[:200]}"
        kernel = KERNELS.get(module_of(pkg))
        if kernel is not None and row["cuda"] and row[f"import {module_of(pkg)}"][:2] == "ok":
            try:
                row["kernel_max_abs_diff_vs_reference"] = kernel()
            except Exception as e:  # noqa: BLE001
                row["kernel"] = f"failed: {type(e).__name__}: {str(e)[:200]}"
        try:
            check_spec(models[0], trust_remote_code=True)
            row["geneb_check_spec"] = "ready"
        except GenebError as e:
            row["geneb_check_spec"] = str(e)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> int:
    import subprocess
    import sys
    import tempfile

    sys.path.insert(0, str(REPO / "benchmarks"))
    import gpu_check_steps as steps

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--refs", default=str(REPO / "benchmarks" / "gpu_refs"))
    ap.add_argument("--reference", action="store_true", help="the CPU reference step only")
    ap.add_argument("--cpu", action="store_true", help="dry run of both steps on the CPU")
    ap.add_argument("--size", choices=sorted(steps.SIZES), default=None,
                    help="reference sizes (default: gpu; small with --cpu)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--data-dir", default=os.environ.get("GENEB_DATA_DIR")
                    or str(REPO.parent / "shared" / "data"))
    ap.add_argument("--models-dir", default=str(REPO.parent / "shared" / "models"))
    ap.add_argument("--inject-error", choices=sorted(steps.CHECKS), default=None)
    ap.add_argument("--json")
    ap.add_argument("--cuda-families", action="store_true",
                    help="check the CUDA-only families' packages and kernels instead")
    ap.add_argument("--mlp", action="store_true",
                    help="also run the torch MLP benchmark on CUDA (benchmarks/mlp_probe.py "
                         "--device cuda); its exit status is a check")
    args = ap.parse_args()
    if args.cuda_families:
        rows = cuda_families()
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
        return 0
    t0 = time.perf_counter()
    data_dir = Path(args.data_dir) if Path(args.data_dir).is_dir() else None
    models_dir = Path(args.models_dir) if Path(args.models_dir).is_dir() else None
    with tempfile.TemporaryDirectory() as tmp:
        refs = Path(tmp) / "refs" if args.cpu else Path(args.refs)
        if args.cpu or args.reference:
            cfg = steps.reference(refs, args.size or ("small" if args.cpu else "gpu"),
                                  data_dir, models_dir)
            print(json.dumps({"reference": str(refs), **cfg}, default=str), flush=True)
            if args.reference:
                return 0
        if not (refs / "config.json").exists():
            print(f"no references in {refs}: run --reference on the CPU first", flush=True)
            return 1
        device = "cpu" if args.cpu else args.device
        rows = steps.run_checks(refs, device, args.inject_error)
    if args.mlp:
        rc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "mlp_probe.py"),
                             "--device", device, "--data-dir", args.data_dir],
                            check=False).returncode
        rows.append({"check": "mlp benchmark", "ok": rc == 0, "exit_status": rc})
        print(json.dumps(rows[-1]), flush=True)
    failed = [r["check"] for r in rows if not r["ok"]]
    print(json.dumps({"summary": "FAILED" if failed else "ok", "failed": failed,
                      "checks": len(rows), "seconds": round(time.perf_counter() - t0, 1)}),
          flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
