"""``benchmarks/gpu_check.py --cpu``: the dry run of the GPU check passes on the CPU within two
minutes, and an injected error makes it fail with a non-zero exit status, naming the check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_dry_run_passes_and_fails_on_an_injected_error(data_dir: Path, models_dir: Path):
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "gpu_check.py"), "--cpu",
         "--data-dir", str(data_dir), "--models-dir", str(models_dir),
         "--inject-error", "memory"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    seconds = time.perf_counter() - t0
    lines = [json.loads(s) for s in p.stdout.splitlines() if s.startswith("{")]
    summary = lines[-1]
    assert p.returncode == 1, p.stdout + p.stderr
    # every other check ran and passed: the dry run itself is green
    assert summary["failed"] == ["memory after 4 pairs"], summary
    checks = {r["check"]: r for r in lines if "check" in r}
    assert {"linear torch", "engine auto, 2 workers", "extract float32",
            "extract bfloat16", "real_size 600x64x2 torch", "real_size 400x96x3 torch"
            } <= set(checks)
    assert seconds < 120, seconds
