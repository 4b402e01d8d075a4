"""The report folder: geneb writes only what it owns there.

A report folder is owned when geneb created it or it holds a manifest
(:data:`MANIFEST`, the list of files the last report wrote). A report is built in a staging
folder inside the output folder and then moved into place: the files of the previous report
(those in its manifest) are replaced or removed, every other file is left alone, and a file the
new report would write over that geneb did not write is refused before anything is moved.
An existing non-empty folder without a manifest is refused up front (choose a new folder):
its files are the user's, and a report must not delete or overwrite them.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from geneb._fs import write_bytes
from geneb.errors import GenebError

#: The manifest of a report folder: which files the last report wrote there.
MANIFEST = ".geneb-report.json"
#: staging folders: ``.geneb-report-staging.partial-<host>-<pid>-<random>`` (the owner's
#: host and pid, so the next report removes those of a killed report on this host)
_STAGING_PREFIX = ".geneb-report-staging"
#: Sub-folders a report writes into (never followed when they are symlinks).
SUBDIRS = ("tables", "figures")


def _read_manifest(out: Path) -> set[str]:
    path = out / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise ValueError("'files' is not a list of paths")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise GenebError(
            f"report output {str(out)!r}: its manifest {MANIFEST} is unreadable ({e}); "
            "choose a new folder or delete the manifest's folder yourself"
        ) from None
    return {f for f in files if _is_plain_relative(f)}


def _is_plain_relative(rel: str) -> bool:
    p = Path(rel)
    return not p.is_absolute() and ".." not in p.parts and len(p.parts) >= 1


def check_output(out: Path) -> set[str]:
    """Refuse an output that a report may not write into; return the files it owns there.

    Called before any analysis runs. The returned set (relative paths) is what the previous
    report wrote (empty for a new or empty folder).
    """
    if out.is_symlink() and not out.exists():
        raise GenebError(f"report output {str(out)!r} is a dangling symlink")
    if out.exists() and not out.is_dir():
        raise GenebError(f"report output {str(out)!r} exists and is not a folder")
    if not out.exists():
        return set()
    for sub in SUBDIRS:
        if (out / sub).is_symlink():
            raise GenebError(
                f"report output {str(out)!r}: {sub}/ is a symlink; a report writes only inside "
                "its own folder"
            )
    if (out / MANIFEST).is_file():
        return _read_manifest(out)
    others = _foreign_files(out, limit=4)
    if others:
        shown = ", ".join(others[:3]) + (" ..." if len(others) > 3 else "")
        raise GenebError(
            f"report output {str(out)!r} holds files that geneb did not write ({shown}); "
            "give a new or empty folder (out): a report replaces only its own files"
        )
    return set()


def _foreign_files(out: Path, limit: int) -> list[str]:
    """Up to ``limit`` files under ``out`` (stops early: ``--out ~`` must not walk a home)."""
    found: list[str] = []
    for p in out.rglob("*"):
        rel = p.relative_to(out)
        if rel.parts[0].startswith(_STAGING_PREFIX) or p.is_dir():
            continue
        found.append(str(rel))
        if len(found) >= limit:
            break
    return sorted(found)


def staging_dir(out: Path) -> Path:
    """A fresh staging folder inside ``out`` (same file system: moves are renames), after
    removing the staging folders of reports that were killed (their process is gone)."""
    from geneb.tasks.cache import partial_prefix

    out.mkdir(parents=True, exist_ok=True)
    sweep_staging(out)
    return Path(tempfile.mkdtemp(prefix=partial_prefix(_STAGING_PREFIX[1:]), dir=out))


def sweep_staging(out: Path) -> list[Path]:
    """Remove the staging folders in ``out`` left by killed reports on this host (a live
    report's is left alone); return what went."""
    from geneb.tasks.cache import PARTIAL, sweep_partials

    return sweep_partials(out, subs=(".",), prefix=_STAGING_PREFIX + PARTIAL)


def commit(out: Path, staged: Path, owned: set[str]) -> None:
    """Move the staged report into ``out``; drop files of the previous report not rewritten.

    Refuses (and leaves ``out`` as it was) when a staged file would replace a file the previous
    report did not write. The manifest is written last.
    """
    try:
        new = sorted(
            str(p.relative_to(staged)) for p in staged.rglob("*") if p.is_file()
        )
        clash = [
            rel for rel in new
            if rel not in owned and ((out / rel).exists() or (out / rel).is_symlink())
        ]
        if clash:
            raise GenebError(
                f"report output {str(out)!r}: {', '.join(clash[:3])} exists and was not "
                "written by a previous report; move it away or choose another folder"
            )
        for rel in new:
            for parent in Path(rel).parents:
                if str(parent) != "." and (out / parent).is_symlink():
                    raise GenebError(
                        f"report output {str(out)!r}: {parent}/ is a symlink; a report writes "
                        "only inside its own folder"
                    )
        for rel in new:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged / rel, out / rel)  # replaces a symlink itself, never its target
        for rel in sorted(owned - set(new)):
            target = out / rel
            if target.is_file() or target.is_symlink():
                target.unlink()
        manifest = {"files": new, "written_by": "geneb report"}
        write_bytes(out / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode("utf-8"))
    finally:
        shutil.rmtree(staged, ignore_errors=True)


def discard(staged: Path) -> None:
    """Remove a staging folder after a failed build (the previous report stays whole)."""
    shutil.rmtree(staged, ignore_errors=True)
