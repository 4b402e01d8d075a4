"""A Hugging Face hub on 127.0.0.1 for tests: the HTTP endpoints ``snapshot_download`` of
huggingface_hub 0.36 uses, serving repos built from local folders. Never the real network.

Dataset repos answer the same under ``/datasets/...`` and ``/api/datasets/...``.

- ``GET /api/models/{org}/{name}[/revision/{rev}]``: JSON with ``sha`` and ``siblings``
  (and ``/tree/{rev}``, the file list huggingface_hub >= 1 asks for instead).
- ``HEAD|GET /{org}/{name}/resolve/{rev}/{file}``: the file, with ``X-Repo-Commit``,
  ``ETag`` (the sha256 of the content, as for LFS files; the cache names the blob after it)
  and ``Content-Length``.
- 404s carry ``X-Error-Code`` (RepoNotFound, RevisionNotFound, EntryNotFound), which is how
  huggingface_hub tells them apart.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


@dataclass
class Repo:
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # commit -> files
    branches: dict[str, str] = field(default_factory=dict)  # branch -> commit
    broken: set[str] = field(default_factory=set)  # listed, but 404 when asked for

    def add(self, commit: str, folder: Path, branch: str | None = "main", **edits: bytes) -> None:
        files = {f.name: f.read_bytes() for f in sorted(folder.iterdir()) if f.is_file()}
        files.update(edits)
        self.commits[commit] = files
        if branch is not None:
            self.branches[branch] = commit

    def commit_of(self, rev: str) -> str | None:
        return self.branches.get(rev) or (rev if rev in self.commits else None)


class LocalHub:
    """Start with ``with LocalHub() as hub``; ``hub.url`` is the endpoint, ``hub.requests``
    the (method, path) of every request received."""

    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def repo(self, hub_id: str) -> Repo:
        return self.repos.setdefault(hub_id, Repo())

    def __enter__(self) -> LocalHub:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(hub: LocalHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def _send(self, code: int, body: bytes, headers: dict[str, str], head: bool) -> None:
            self.send_response(code)
            for k, v in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(k, v)
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _error(self, code: str, head: bool) -> None:
            self._send(404, code.encode(), {"X-Error-Code": code}, head)

        def _serve(self, head: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append((self.command, path))
            parts = path.strip("/").split("/")
            if parts[:1] == ["datasets"]:  # dataset repos: /datasets/{org}/{name}/resolve/...
                parts = parts[1:]
            if parts[:2] in (["api", "models"], ["api", "datasets"]) and len(parts) >= 4:
                tree = len(parts) >= 6 and parts[4] == "tree"
                rev = parts[5] if len(parts) >= 6 and parts[4] in ("revision", "tree") else "main"
                return self._api("/".join(parts[2:4]), rev, head, tree)
            if len(parts) >= 5 and parts[2] == "resolve":
                return self._file("/".join(parts[:2]), parts[3], "/".join(parts[4:]), head)
            self._error("EntryNotFound", head)

        def _api(self, hub_id: str, rev: str, head: bool, tree: bool = False) -> None:
            repo = hub.repos.get(hub_id)
            if repo is None:
                return self._error("RepoNotFound", head)
            commit = repo.commit_of(rev)
            if commit is None:
                return self._error("RevisionNotFound", head)
            files = repo.commits[commit]
            siblings = [{"rfilename": f} for f in sorted(files)]
            info: object = {"id": hub_id, "modelId": hub_id, "sha": commit, "siblings": siblings}
            if tree:  # huggingface_hub >= 1 lists the tree instead of reading the siblings
                info = [{"type": "file", "path": f, "size": len(d), "oid": _sha(d, "sha1")}
                        for f, d in sorted(files.items())]  # fmt: skip
            body = json.dumps(info).encode()
            self._send(200, body, {"Content-Type": "application/json"}, head)

        def _file(self, hub_id: str, rev: str, name: str, head: bool) -> None:
            repo = hub.repos.get(hub_id)
            if repo is None:
                return self._error("RepoNotFound", head)
            commit = repo.commit_of(rev)
            if commit is None:
                return self._error("RevisionNotFound", head)
            data = repo.commits[commit].get(name)
            if data is None or name in repo.broken:
                return self._error("EntryNotFound", head)
            etag = f'"{_sha(data)}"'
            self._send(200, data, {"X-Repo-Commit": commit, "ETag": etag}, head)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._serve(head=False)

        def do_HEAD(self) -> None:  # noqa: N802
            self._serve(head=True)

    return Handler


def _sha(data: bytes, algo: str = "sha256") -> str:
    return hashlib.new(algo, data).hexdigest()


def point_hub_at(monkeypatch: object, url: str) -> None:
    """Send every huggingface_hub call of the test to the hub at ``url``, online, quietly."""
    from huggingface_hub import constants, file_download

    template = url + "/{repo_id}/resolve/{revision}/{filename}"
    setattr_ = monkeypatch.setattr  # type: ignore[attr-defined]
    setattr_(constants, "ENDPOINT", url)
    setattr_(constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
    setattr_(file_download, "HUGGINGFACE_CO_URL_TEMPLATE", template, raising=False)
    setattr_(constants, "HF_HUB_OFFLINE", False)
    setattr_(constants, "HF_HUB_DISABLE_PROGRESS_BARS", True)
