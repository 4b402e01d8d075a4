"""Shared fixtures: paths to ../shared (skipped with a reason when absent), offline settings."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GENEB_NO_PROGRESS", "1")
# Under pytest-xdist (the README's test command runs two workers) each worker has its own
# transformers modules cache: two workers loading one family's code would write the same files
# at once. Set before any test module imports transformers (it reads the variable on import).
if os.environ.get("PYTEST_XDIST_WORKER") and "HF_MODULES_CACHE" not in os.environ:
    os.environ["HF_MODULES_CACHE"] = tempfile.mkdtemp(
        prefix=f"geneb-hf-modules-{os.environ['PYTEST_XDIST_WORKER']}-")

REPO = Path(__file__).resolve().parents[1]


def _shared() -> Path:
    env = os.environ.get("GENEB_SHARED_DIR")
    if env:
        return Path(env)
    # the checkout sits next to shared/ (…/main and …/shared; CI: a clone beside a copy)
    for cand in (REPO.parent / "shared", REPO.parent.parent / "shared"):
        if cand.is_dir():
            return cand
    return REPO.parent / "shared"


SHARED = _shared()
DATA_DIR = SHARED / "data"
MODELS_DIR = SHARED / "models"


def require_shared(path: Path, what: str) -> Path:
    """``path`` when it exists; else skip with the reason, or fail under CI.

    A fresh clone without ``../shared`` runs every test that does not need real artefacts; CI
    (``CI=true``) always has ``../shared``, so a missing folder there is a broken setup, not a
    reason to skip the real-data tests silently.
    """
    if path.exists():
        return path
    msg = f"{what} not found at {path} (set GENEB_SHARED_DIR)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI=true but {msg}", pytrace=False)
    pytest.skip(msg)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return require_shared(DATA_DIR, "real task folders")


@pytest.fixture(scope="session")
def models_dir() -> Path:
    return require_shared(MODELS_DIR, "shared model folders")


@pytest.fixture(scope="session")
def brca1_folder() -> Path:
    """The staged BRCA1 variant folder (Findlay et al. 2018; reference.fa + variants.csv)."""
    return require_shared(SHARED / "variants" / "brca1_findlay2018", "the BRCA1 variant folder")


@pytest.fixture(scope="session")
def built_report(tmp_path_factory):
    """``copy(dest, **kw)``: a copy at ``dest`` of the report ``build_report`` writes for
    ``example_results(**kw)`` (n_boot 100), each ``kw`` built once per session.

    For the tests that need *a* previous report in a folder (staging, ownership, a failed
    rebuild), not a build of their own: a report's files name each other by relative path
    only (its manifest too), so a copy is the folder that build wrote.
    """
    import shutil

    from example_results import example_results

    from geneb.analysis.report import build_report

    built: dict[tuple, Path] = {}

    def copy(dest: Path, **kw) -> Path:
        key = tuple(sorted(kw.items()))
        if key not in built:
            src = tmp_path_factory.mktemp("built_report") / "r"
            build_report(example_results(**kw), src, n_boot=100)
            built[key] = src
        shutil.copytree(built[key], dest)
        return dest

    return copy


@pytest.fixture(scope="session")
def published_report(tmp_path_factory) -> tuple[Path, float]:
    """(index.html, seconds the build took) of the whole report on ``published:geneb`` (41
    models x 100 tasks x 3 regimes, GENEB's catalogue facts, n_boot 200), built once per
    session: test_analysis_published.py checks its content and time, test_report_browser.py
    its layout in Chromium."""
    import time

    from geneb.analysis.report import build_report
    from geneb.models.catalogue import published_facts

    t0 = time.perf_counter()
    index = build_report("published:geneb", tmp_path_factory.mktemp("published") / "R",
                         n_boot=200, catalogue=published_facts)
    return index, time.perf_counter() - t0
