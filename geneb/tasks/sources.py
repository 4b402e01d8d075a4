"""Where a catalogue entry's data come from: a hub dataset at a revision, or URLs with sha256.

Split from :mod:`geneb.tasks.catalogue` (which reads and validates the whole catalogue) so
that the rule "what makes a source verifiable" has one home: ``Source.unpinned`` says, in one
line, which fact is missing (a sha256, a download location, or the one fact the catalogue
names in ``source.missing``). A hub dataset without a pinned revision is *floating*: it can be
fetched, at the hub's current commit, which the fetch records (:mod:`geneb.tasks.fetch`).
A reference genome published without a sha256 is the one gap the user can fill:
``geneb tasks fetch NAME --reference FILE``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from geneb import constraints as c
from geneb.errors import TaskError


@dataclass(frozen=True)
class FileSource:
    """One file to download: from a hub dataset (``path``) or a URL (``url`` + ``sha256``).

    ``member`` names a file inside a downloaded .zip / .tar.gz archive. ``match`` (hub files
    only) is a regular expression for the file's path, for a hub layout whose file names are
    not known ahead (``data/train-00000-of-00001-<hash>.parquet``): the files of the fetched
    commit it matches, in path order (shards of one split are read as one table).
    """

    role: str
    path: str | None = None
    url: str | None = None
    sha256: str | None = None
    member: str | None = None
    match: str | None = None


@dataclass(frozen=True)
class Source:
    """Where an entry's data come from: a hub dataset at a revision, or plain URLs."""

    hub: str | None = None
    revision: str | None = None
    files: tuple[FileSource, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)
    #: the one fact, in words, whose absence makes the source unverifiable (catalogue
    #: ``source.missing``), when the layout alone cannot say it
    missing: str | None = None

    @property
    def floating(self) -> bool:
        """A hub dataset whose catalogue entry pins no revision: a fetch resolves the hub's
        current commit and records it (``geneb tasks fetch`` says so)."""
        return bool(self.hub) and not self.revision

    def describe(self, commit: str | None = None) -> str:
        """One line for tables and task.json: ``hf:org/name@rev`` (``commit``: the one a fetch
        resolved, for a floating source) or the first URL."""
        if self.hub:
            return f"hf:{self.hub}@{commit or self.revision or 'UNPINNED'}"
        if self.raw.get("github"):
            return f"github:{self.raw['github']}@{self.raw.get('commit') or 'UNPINNED'}"
        urls = [f.url for f in self.files if f.url]
        return urls[0] if urls else "(unknown)"

    def unpinned(self, reference_given: bool = False) -> str | None:
        """Why this source cannot be fetched verifiably, or None when every file is pinned.

        A reference genome without a published sha256 does not block a fetch when the user
        gives their own copy (``reference_given``, ``geneb tasks fetch --reference``)."""
        if self.missing:
            return self.missing
        for f in self.files:
            if f.role == "reference" and f.url and not f.sha256 and not reference_given:
                return (
                    f"no sha256 published for {f.url} (the reference genome); give "
                    f"reference=PATH, a local copy of it, to fetch"
                )
        if self.hub:  # no revision: the fetch resolves the hub's current commit (floating)
            if not self.files:
                return f"hub dataset {self.hub}: the files to download are not known"
            for f in self.files:
                if not (f.url or f.path or f.match):
                    return f"hub dataset {self.hub}: {f.role} file has no path or match"
            return self._unpinned_urls()
        if not self.files:
            return "no download location is known"
        for f in self.files:
            if not f.url:
                return f"{f.role} file has no URL in the catalogue"
        return self._unpinned_urls()

    def _unpinned_urls(self) -> str | None:
        for f in self.files:
            if f.url and not f.sha256 and f.role != "reference":
                return f"no sha256 published for {f.url} ({f.role} file)"
        return None

    def needs_reference(self) -> bool:
        """Whether the reference genome must come from the user (no sha256 to check one)."""
        return any(f.role == "reference" and f.url and not f.sha256 for f in self.files)


_OPT_STR = c.Nullable(c.TEXT)
#: a full commit hash: what ``revision`` (catalogue or ``geneb tasks fetch --revision``) must be
REVISION = c.Pattern(r"[0-9a-f]{40}", "a full 40-hex commit")
_REVISION = c.Nullable(REVISION)
_SHA256 = c.Nullable(c.Pattern(r"[0-9a-f]{64}", "64 hex digits"))


def opt_str(
    obj: Mapping[str, Any], key: str, where: str, constraint: c.Constraint = _OPT_STR
) -> str | None:
    """``obj[key]``: a string (``constraint``), or None when absent or null (anything else is
    a ``TaskError``: ``<where>: <key>: expected null or a string, got 3``)."""
    value: str | None = c.check_as(constraint, obj.get(key), f"{where}: {key}", TaskError)
    return value


def _file(role: str, f: Mapping[str, Any], where: str) -> FileSource:
    where = f"{where}: file {role!r}"
    match = opt_str(f, "match", where)
    if match is not None:
        try:
            re.compile(match)
        except re.error as e:
            raise TaskError(f"{where}: match: not a regular expression ({e}): {match!r}") from None
    return FileSource(role, path=opt_str(f, "path", where), url=opt_str(f, "url", where),
                      sha256=opt_str(f, "sha256", where, _SHA256),
                      member=opt_str(f, "member", where), match=match)


def parse_source(raw: Any, where: str) -> Source:
    """Validate a catalogue entry's ``source`` object; errors name the entry and the key."""
    if not isinstance(raw, dict):
        raise TaskError(f"{where}: 'source' must be an object, got {raw!r}")
    at = f"{where}: source"
    hub = opt_str(raw, "hub", at)
    revision = opt_str(raw, "revision", at, _REVISION)
    files: list[FileSource] = []
    spec = raw.get("files")
    if spec is not None and not isinstance(spec, dict):
        raise TaskError(f"{where}: 'source.files' must be an object of role -> file, got {spec!r}")
    for role, f in (spec or {}).items():
        if isinstance(f, str):
            if not hub:
                raise TaskError(f"{where}: file {role!r} is a path but the source has no 'hub'")
            files.append(FileSource(role, path=f))
        elif isinstance(f, dict):
            files.append(_file(role, f, at))
        else:
            raise TaskError(f"{where}: file {role!r} must be a path or an object, got {f!r}")
    ref = raw.get("reference")
    if isinstance(ref, dict):
        files.append(_file("reference", ref, at))
    missing = opt_str(raw, "missing", at)
    return Source(hub=hub, revision=revision, files=tuple(files), raw=raw, missing=missing)
