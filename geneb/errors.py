"""One error family for everything a user can get wrong.

Every error is a ``GenebError`` (a ``ValueError``), so callers can catch bad input in one place
and the CLI can print it without a traceback. Messages say what was expected and what came.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class GenebError(ValueError):
    """Base of all user-facing geneb errors.

    Library messages never name CLI flags: the CLI replaces a leading parameter name by the
    option's flag (``--batch-tokens: ...``, see ``geneb.commands._common.cli_errors``).

    Parameters
    ----------
    *args : object
        The message (one line: what was expected and what came), as for ``ValueError``.
    param : str or None
        The Python parameter the error is about, when it is about one; the message then
        starts with that name (``"batch_tokens: expected a positive int, got 0"``).
    """

    def __init__(self, *args: object, param: str | None = None) -> None:
        super().__init__(*args)
        self.param = param

    def __reduce__(self) -> tuple[object, ...]:  # keep ``param`` across processes (Dask)
        return (_rebuild, (type(self), self.args, self.param))


def _rebuild(cls: type[GenebError], args: tuple[object, ...], param: str | None) -> GenebError:
    return cls(*args, param=param)


class TaskError(GenebError):
    """A task folder, file, row or value is not what geneb expects."""


class StoreError(GenebError):
    """The feature store, or one entry of it, cannot be used as asked."""


class EntryIncompleteError(StoreError):
    """An entry exists but was never verified and marked complete."""


class StaleEntryError(StoreError):
    """An entry was written from another task fingerprint or model revision."""


class EntryLockedError(StoreError):
    """Another process is writing the same entry."""


class CorruptEntryError(StoreError):
    """A chunk failed its checksum or an array has the wrong shape."""


class ModelError(GenebError):
    """A model cannot be found, loaded or run as asked."""


class ProbeError(GenebError):
    """The probe protocol cannot be applied to these embeddings or settings."""


class LeaderboardError(GenebError):
    """A published leaderboard or submission file is malformed or inconsistent."""


class PlanError(GenebError):
    """A run plan file names something unknown or is malformed."""


class UnknownNameError(GenebError):
    """A name (task, model, key, option) is not one of the valid ones."""


def did_you_mean(name: str, valid: Iterable[str], n: int = 3) -> list[str]:
    """Close matches of ``name`` among ``valid``, best first.

    Parameters
    ----------
    name : str
        What was given.
    valid : iterable of str
        The valid names.
    n : int
        At most this many matches (default 3).

    Returns
    -------
    list of str
        The matches (difflib ratio 0.5 or more), best first; empty when none is close.
    """
    return difflib.get_close_matches(name, list(valid), n=n, cutoff=0.5)


def unknown_name(kind: str, name: str, valid: Iterable[str]) -> UnknownNameError:
    """Build the error for an unknown name: list the valid ones and suggest near matches.

    Parameters
    ----------
    kind : str
        What the name names (``"model"``, ``"task"``), as the message says it.
    name : str
        The unknown name.
    valid : iterable of str
        The valid names (the first 40, sorted, are listed).

    Returns
    -------
    UnknownNameError
        To raise; its message names the near matches (``Did you mean ...?``).
    """
    valid = sorted(set(valid))
    close = did_you_mean(name, valid)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    shown = ", ".join(valid[:40]) + (" ..." if len(valid) > 40 else "")
    return UnknownNameError(f"unknown {kind} {name!r}.{hint} Valid {kind}s: {shown or '(none)'}")
