"""`build_report` on many models with a properties file (issue 28, case 22): time, peak RSS
and the size of the tables, which must grow linearly with the models (pair tables list the
largest margins and counts, not every pair). Target: 1,000 models in < 60 s.

    .venv/bin/python benchmarks/report_many_models.py 200 1000

Synthetic results (tests/example_results.py: 6 tasks, regimes 10 and full, seeds 13 and 17,
linear C = 1), sizes log-uniform 1e6-1e10, the catalogue's property vocabularies cycled, every
task human; n_boot 200.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from example_results import example_results  # noqa: E402

from geneb.analysis.report import build_report  # noqa: E402
from geneb.models import catalogue as cat  # noqa: E402


def one(n: int, folder: Path) -> str:
    rng = np.random.default_rng(0)
    models = {f"m{i:04d}": (int(10 ** rng.uniform(6, 10)), float(rng.uniform(0.3, 0.7)))
              for i in range(n)}  # fmt: skip
    df = example_results(models=models, regimes=("10", "full"), seeds=(13, 17), Cs=(1.0,),
                         mlp=False)  # fmt: skip
    arch, tok = cat.ARCHITECTURE_CLASSES, cat.TOKENIZATION_CLASSES
    pdc = cat.PRETRAINING_DATA_CLASSES
    lines = ["model,n_params,architecture_class,tokenization_class,pretraining_data_class"]
    for i, (m, (p, _)) in enumerate(models.items()):
        lines.append(f"{m},{p},{arch[i % len(arch)]},{tok[(i // 3) % len(tok)]},"
                     f"{pdc[(i // 7) % len(pdc)]}")  # fmt: skip
    props = folder / f"props{n}.csv"
    props.write_text("\n".join(lines) + "\n")
    orgs = folder / "orgs.csv"
    orgs.write_text("task,organism\n" + "".join(f"{t},human\n" for t in df["task"].unique()))
    out = folder / f"report{n}"
    t0 = time.perf_counter()
    build_report(df, out, model_properties=props, task_organisms=orgs, n_boot=200)
    secs = time.perf_counter() - t0
    tables = sorted((p.stat().st_size, p.name) for p in (out / "tables").glob("*.csv"))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return (f"models={n} rows={len(df)} seconds={secs:.1f} peak_rss_MiB={rss:.0f} "
            f"tables_MB={sum(s for s, _ in tables) / 1e6:.1f} "
            f"largest={tables[-1][1]} ({tables[-1][0] / 1e6:.1f} MB)")  # fmt: skip


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(a) for a in sys.argv[1:]] or [200, 1000]:
            print(one(n, Path(tmp)), flush=True)
