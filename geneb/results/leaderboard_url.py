"""``geneb leaderboard import URL``: a newer ``leaderboard_tasks.json`` fetched from a URL pinned
at a commit (a GitHub blob or raw URL, or any URL whose path holds the 40-hex commit), checked
and cached like a file (:func:`geneb.results.published.import_leaderboard`).

Pinned, so the cached numbers say exactly which version of the leaderboard they are; a URL of
a branch (``.../main/...``) is refused. The body is read with a size cap and a timeout; nothing
is cached unless it downloads whole and passes every check.
"""

from __future__ import annotations

import os
import re
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from geneb.errors import LeaderboardError
from geneb.results.leaderboard_file import Leaderboard
from geneb.results.published import import_leaderboard

#: GENEB's leaderboard_tasks.json is 2.5 MB; a body larger than this is not one.
MAX_BYTES = 64 << 20
TIMEOUT_S = 60.0
_COMMIT = re.compile(r"(?<![0-9a-f])[0-9a-f]{40}(?![0-9a-f])")
_BLOB = re.compile(r"^https://github\.com/([^/]+)/([^/]+)/blob/([0-9a-f]{40})/(.+)$")


def is_url(text: str) -> bool:
    """Whether ``text`` is an http(s) URL (else a file path)."""
    return text.startswith(("http://", "https://"))


def pinned(url: str) -> tuple[str, dict[str, str]]:
    """(the URL to download, its source facts): GitHub blob URLs become raw ones."""
    m = _BLOB.match(url)
    if m:
        owner, repo, commit, path = m.groups()
        raw = f"https://raw.githubusercontent.com/{owner}/{repo}/{commit}/{path}"
        return raw, {"repository": f"{owner}/{repo}", "commit": commit, "url": url}
    commit = _COMMIT.search(url)
    if commit is None:
        raise LeaderboardError(f"{url}: expected a URL pinned at a commit (40 hex digits in its "
                               "path, e.g. https://github.com/darlednik/GENEB/blob/<commit>/"
                               "leaderboard/leaderboard_tasks.json)")
    parts = url.split("/")
    i = parts.index(commit.group(0)) if commit.group(0) in parts else -1
    repo = "/".join(parts[i - 2:i]) if i >= 5 else url
    return url, {"repository": repo, "commit": commit.group(0), "url": url}


def import_leaderboard_url(url: str, cache: str | os.PathLike[str] | None = None
                           ) -> tuple[Path, Leaderboard]:
    """Download the leaderboard at a pinned ``url`` and import it (nothing kept on failure)."""
    raw, source = pinned(url)
    with tempfile.TemporaryDirectory(prefix="geneb-leaderboard-") as tmp:
        path = Path(tmp) / "leaderboard_tasks.json"
        try:
            with urllib.request.urlopen(raw, timeout=TIMEOUT_S) as resp:  # noqa: S310
                body = resp.read(MAX_BYTES + 1)
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", None) or e
            raise LeaderboardError(f"{url}: download failed ({type(e).__name__}: {reason}); "
                                   "nothing was cached") from None
        if len(body) > MAX_BYTES:
            raise LeaderboardError(f"{url}: more than {MAX_BYTES >> 20} MiB; not a leaderboard "
                                   "file, nothing was cached")
        path.write_bytes(body)
        try:
            return import_leaderboard(path, cache, source=source)
        except LeaderboardError as e:  # name the URL, not the temporary file
            raise LeaderboardError(str(e).replace(repr(str(path)), url).replace(
                str(path), url)) from None


def import_leaderboard_from(file_or_url: str | os.PathLike[str],
                            cache: str | os.PathLike[str] | None = None
                            ) -> tuple[Path, Leaderboard]:
    """``geneb leaderboard import``: a pinned URL (:func:`import_leaderboard_url`) or a file
    (:func:`geneb.results.published.import_leaderboard`)."""
    text = str(file_or_url)
    return import_leaderboard_url(text, cache) if is_url(text) else import_leaderboard(text, cache)
