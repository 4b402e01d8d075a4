"""Shared fixtures: paths to ../shared (skipped with a reason when absent), offline settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GENEB_NO_PROGRESS", "1")

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
