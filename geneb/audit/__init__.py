"""Task health: leaks and shortcuts found before anyone reads a leaderboard.

``audit_task(task)`` checks one loaded task (exact, reverse-complement and near duplicates from
test into train, composition twins, shortcut baselines probed like models) and gives a verdict;
``cached_audit`` stores it under ``$GENEB_CACHE/audit`` keyed by the task's fingerprints;
``geneb tasks audit`` is the command. Definitions and the verdict rule: docs/tasks.md.
"""

from geneb.audit.cache import audit_file_name, audit_key, cached_audit, find_audits
from geneb.audit.run import AUDIT_VERSION, audit_task
from geneb.audit.verdict import SHORTCUT_MARGIN, VERDICTS, verdict

__all__ = [
    "AUDIT_VERSION",
    "SHORTCUT_MARGIN",
    "VERDICTS",
    "audit_file_name",
    "audit_key",
    "audit_task",
    "cached_audit",
    "find_audits",
    "verdict",
]
