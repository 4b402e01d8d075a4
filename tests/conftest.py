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


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA_DIR.is_dir():
        pytest.skip(f"real task folders not found at {DATA_DIR} (set GENEB_SHARED_DIR)")
    return DATA_DIR


@pytest.fixture(scope="session")
def models_dir() -> Path:
    if not MODELS_DIR.is_dir():
        pytest.skip(f"shared model folders not found at {MODELS_DIR} (set GENEB_SHARED_DIR)")
    return MODELS_DIR
