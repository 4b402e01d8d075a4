"""How task loading seeds its subsample of an over-large train split (the GENEB row cap).

The sampling itself is ``geneb.protocol.stratified_positions`` (one implementation for task
loading and the probe engine); loading seeds it with ``default_rng(name_seed(task name))``.
"""

from __future__ import annotations

import hashlib

SUBSAMPLE_METHOD = (
    "stratified without replacement: per-class quotas by largest remainder (at least one row "
    "per class), rows drawn with numpy default_rng(seed), kept in file order"
)


def name_seed(name: str) -> int:
    """A fixed seed derived from a task name, so the same task always keeps the same rows."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "little")
