"""An audit record as stored: sealed by a digest of its own content, checked before it is used.

A stored record (the audit cache, ``geneb tasks audit --out``) carries ``audit_key`` (the task
content it was computed from, ``geneb.audit.cache.audit_key``) and ``record_digest``, a sha256
of the record's canonical JSON (every key but ``record_digest`` and ``cached``). A record is
used only when it is a JSON object of the expected shape (every key the table, the report and
``--json`` read, with the expected types), its digest matches its content, and its verdict is
the one the rule (``geneb.audit.verdict``) gives for its own counts: an edited verdict, a
damaged file or a record of another shape is never shown.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from geneb.audit.verdict import VERDICTS, verdict

NOT_SEALED = ("record_digest", "cached")

_INT_KEYS = ("n_train", "n_test", "exact_duplicates_across_splits",
             "label_conflicts_across_splits", "revcomp_duplicates_across_splits",
             "revcomp_label_conflicts_across_splits", "near_duplicates_across_splits",
             "near_duplicates_not_assessable", "composition_twins_across_splits",
             "composition_twin_opposite_label")
_NUMBER_KEYS = ("composition_twin_opposite_label_fraction", "best_shortcut_mcc")


def record_digest(record: Mapping[str, Any]) -> str:
    """sha256 of the record's canonical JSON, without the keys ``NOT_SEALED``."""
    body = {k: v for k, v in record.items() if k not in NOT_SEALED}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def seal(record: dict[str, Any]) -> dict[str, Any]:
    """The record as stored: without ``cached``, with its ``record_digest``."""
    body = {k: v for k, v in record.items() if k not in NOT_SEALED}
    body["record_digest"] = record_digest(body)
    return body


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _shape_problem(rec: Any) -> str | None:
    """What is wrong with the record's shape (None: every key used downstream is typed)."""
    if not isinstance(rec, dict):
        return f"expected a JSON object, got {type(rec).__name__}"
    need: dict[str, type | tuple[type, ...]] = {
        "task": str, "verdict": str, "reasons": list, "best_shortcut": str,
        "shortcut_mcc": dict, "shortcut_mcc_by_regime": dict, "fingerprints": dict,
        "within_split": dict, "audit_key": str, "record_digest": str,
    }
    for key, typ in need.items():
        if not isinstance(rec.get(key), typ):
            want = getattr(typ, "__name__", typ)
            return f"key {key!r}: expected {want}, got {rec.get(key)!r:.60}"
    for key in _INT_KEYS:
        if not isinstance(rec.get(key), int) or isinstance(rec.get(key), bool) or rec[key] < 0:
            return f"key {key!r}: expected a count, got {rec.get(key)!r:.60}"
    for key in _NUMBER_KEYS:
        if not _number(rec.get(key)):
            return f"key {key!r}: expected a number, got {rec.get(key)!r:.60}"
    if rec["verdict"] not in VERDICTS:
        return f"key 'verdict': expected one of {', '.join(VERDICTS)}, got {rec['verdict']!r:.60}"
    if not all(isinstance(r, str) for r in rec["reasons"]):
        return "key 'reasons': expected a list of strings"
    scores = [rec["shortcut_mcc"], *rec["shortcut_mcc_by_regime"].values()]
    if not all(isinstance(d, dict) and all(_number(v) for v in d.values()) for d in scores):
        return "key 'shortcut_mcc(_by_regime)': expected numbers by shortcut"
    return None


def record_problem(rec: Any) -> str | None:
    """Why a stored record cannot be used (None: it can): its shape, its digest, its verdict."""
    shape = _shape_problem(rec)
    if shape is not None:
        return shape
    if rec["record_digest"] != record_digest(rec):
        return "its content does not match its record_digest (edited or damaged)"
    try:
        again, reasons = verdict(rec)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        return f"its counts cannot be judged ({type(e).__name__}: {e})"
    if again != rec["verdict"] or reasons != rec["reasons"]:
        return (f"its verdict {rec['verdict']!r} is not the rule's for its own counts "
                f"({again!r})")
    return None


def read_record(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(record, None) when ``path`` holds a usable record, else (None, why not)."""
    try:
        rec = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 text (byte {e.start})"
    except json.JSONDecodeError as e:
        return None, f"not JSON (line {e.lineno} column {e.colno}: {e.msg})"
    except OSError as e:
        return None, f"unreadable ({e.strerror or type(e).__name__})"
    why = record_problem(rec)
    return (rec, None) if why is None else (None, why)
