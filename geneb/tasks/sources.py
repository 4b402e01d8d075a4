"""Where a catalogue entry's data come from: a hub dataset at a revision, or URLs with sha256.

Split from :mod:`geneb.tasks.catalogue` (which reads and validates the whole catalogue) so
that the rule "what makes a source verifiable" has one home: ``Source.unpinned`` says, in one
line, which fact is missing (a revision, a sha256, a download location, or the one fact the
catalogue names in ``source.missing``). A reference genome published without a sha256 is the
one gap the user can fill: ``geneb tasks fetch NAME --reference FILE``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from geneb.errors import TaskError


@dataclass(frozen=True)
class FileSource:
    """One file to download: from a hub dataset (``path``) or a URL (``url`` + ``sha256``).

    ``member`` names a file inside a downloaded .zip / .tar.gz archive.
    """

    role: str
    path: str | None = None
    url: str | None = None
    sha256: str | None = None
    member: str | None = None


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

    def describe(self) -> str:
        """One line for tables and task.json: ``hub:org/name@rev`` or the first URL."""
        if self.hub:
            return f"hf:{self.hub}@{self.revision or 'UNPINNED'}"
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
        if self.hub:
            if not self.revision:
                return f"hub dataset {self.hub} has no pinned revision in the catalogue"
            if not self.files:
                return f"hub dataset {self.hub}: the files to download are not known"
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


def opt_str(obj: Mapping[str, Any], key: str, where: str) -> str | None:
    """``obj[key]``: a string, or None when absent or null (anything else is an error)."""
    v = obj.get(key)
    if v is not None and not isinstance(v, str):
        raise TaskError(f"{where}: {key!r} must be a string or null, got {v!r}")
    return v


def parse_source(raw: Any, where: str) -> Source:
    """Validate a catalogue entry's ``source`` object; errors name the entry and the key."""
    if not isinstance(raw, dict):
        raise TaskError(f"{where}: 'source' must be an object, got {raw!r}")
    hub = opt_str(raw, "hub", where)
    revision = opt_str(raw, "revision", where)
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
            files.append(
                FileSource(
                    role,
                    path=opt_str(f, "path", where),
                    url=opt_str(f, "url", where),
                    sha256=opt_str(f, "sha256", where),
                    member=opt_str(f, "member", where),
                )
            )
        else:
            raise TaskError(f"{where}: file {role!r} must be a path or an object, got {f!r}")
    ref = raw.get("reference")
    if isinstance(ref, dict):
        files.append(
            FileSource(
                "reference",
                path=opt_str(ref, "path", where),
                url=opt_str(ref, "url", where),
                sha256=opt_str(ref, "sha256", where),
                member=opt_str(ref, "member", where),
            )
        )
    if revision is not None and (
        len(revision) != 40 or not all(c in "0123456789abcdef" for c in revision)
    ):
        raise TaskError(
            f"{where}: 'source.revision' must be a full 40-hex commit, got {revision!r}"
        )
    for f in files:
        if f.sha256 is not None and (
            len(f.sha256) != 64 or not all(c in "0123456789abcdef" for c in f.sha256)
        ):
            raise TaskError(
                f"{where}: sha256 of {f.role!r} must be 64 hex digits, got {f.sha256!r}"
            )
    missing = opt_str(raw, "missing", where)
    return Source(hub=hub, revision=revision, files=tuple(files), raw=raw, missing=missing)
