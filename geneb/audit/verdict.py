"""The verdict of an audit: pass, warn or fail, and the reasons (the rule is in docs/tasks.md).

``leaked`` = test rows with an exact copy, a reverse-complement copy or a near-duplicate in
train (the three counts are disjoint), as a share of the test rows.

FAIL when any of:
  - leaked >= ``LEAK_FAIL`` (5%);
  - composition-twin opposite-label fraction >= ``TWIN_FAIL`` (5%: shuffled negatives);
  - the length or GC-content shortcut reaches MCC >= ``TRIVIAL_SHORTCUT_FAIL`` (0.5) on test
    in the full-data regime (one number per row separates the classes).
WARN when none of these but any of:
  - leaked >= ``LEAK_WARN`` (0.5%);
  - composition-twin opposite-label fraction >= ``TWIN_WARN`` (1%);
  - a label conflict: a test row whose copy in train (either strand) has another label, or
    a sequence with two labels inside one split;
  - any shortcut (length, GC, 1/2/3-mer composition) reaches MCC >= ``SHORTCUT_WARN`` (0.3)
    in the full-data regime (composition can be real biology: a model must beat it).
PASS otherwise. The leak and twin thresholds are seqleak's (overlap.exact, construction.shuffle).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LEAK_WARN = 0.005
LEAK_FAIL = 0.05
TWIN_WARN = 0.01
TWIN_FAIL = 0.05
TRIVIAL_SHORTCUTS: tuple[str, ...] = ("length", "gc")
TRIVIAL_SHORTCUT_FAIL = 0.5
SHORTCUT_WARN = 0.3
#: A model "beats" a shortcut on a task when its MCC exceeds the best shortcut's by this much
#: (the report flags tasks where no model does).
SHORTCUT_MARGIN = 0.05

VERDICTS: tuple[str, ...] = ("pass", "warn", "fail")


def verdict(audit: Mapping[str, Any]) -> tuple[str, list[str]]:
    """(verdict, reasons) of one audit record (the keys of ``geneb tasks audit --json``);
    each reason starts with the level it triggers (``fail: `` or ``warn: ``)."""
    n_test = max(1, int(audit["n_test"]))
    leaked = (
        audit["exact_duplicates_across_splits"]
        + audit["revcomp_duplicates_across_splits"]
        + audit["near_duplicates_across_splits"]
    )
    share = leaked / n_test
    twin = float(audit["composition_twin_opposite_label_fraction"])
    sc = audit["shortcut_mcc"]
    fail: list[str] = []
    warn: list[str] = []
    if share >= LEAK_FAIL:
        fail.append(f"{leaked} of {n_test} test rows ({share:.1%}) are copies or near copies "
                    f"of train rows (fail at {LEAK_FAIL:.0%})")
    elif share >= LEAK_WARN:
        warn.append(f"{leaked} of {n_test} test rows ({share:.1%}) are copies or near copies "
                    f"of train rows (warn at {LEAK_WARN:.1%})")
    if twin >= TWIN_FAIL:
        fail.append(f"{twin:.1%} of test rows have a composition twin of the other label in "
                    f"train (shuffled negatives; fail at {TWIN_FAIL:.0%})")
    elif twin >= TWIN_WARN:
        warn.append(f"{twin:.1%} of test rows have a composition twin of the other label in "
                    f"train (warn at {TWIN_WARN:.0%})")
    for name in TRIVIAL_SHORTCUTS:
        if sc[name] >= TRIVIAL_SHORTCUT_FAIL:
            fail.append(f"the {name} shortcut alone reaches test MCC {sc[name]:.3f} "
                        f"(fail at {TRIVIAL_SHORTCUT_FAIL})")
    conflicts = (
        audit["label_conflicts_across_splits"]
        + audit["revcomp_label_conflicts_across_splits"]
        + sum(
            w["label_conflicts"] for w in audit["within_split"].values()
        )
    )
    if conflicts:
        warn.append(f"{conflicts} label conflict(s): the same sequence with different labels")
    best = max(sc, key=lambda k: sc[k])
    if sc[best] >= SHORTCUT_WARN and not (best in TRIVIAL_SHORTCUTS
                                          and sc[best] >= TRIVIAL_SHORTCUT_FAIL):
        warn.append(f"the {best} shortcut reaches test MCC {sc[best]:.3f} (warn at "
                    f"{SHORTCUT_WARN}); a model must beat it")
    reasons = [f"fail: {r}" for r in fail] + [f"warn: {r}" for r in warn]
    return ("fail" if fail else "warn" if warn else "pass"), reasons
