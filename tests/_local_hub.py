"""A Hugging Face hub on 127.0.0.1 for tests: the HTTP endpoints ``snapshot_download`` of
huggingface_hub 0.36 uses, serving repos built from local folders. Never the real network.

Dataset repos answer the same under ``/datasets/...`` and ``/api/datasets/...``.

- ``GET /api/models/{org}/{name}[/revision/{rev}]``: JSON with ``sha`` and ``siblings``, each
  with ``size``, ``blobId`` (the git blob sha1) and, for LFS files (weights: ``LFS_SUFFIXES``),
  ``lfs.sha256`` (and ``/tree/{rev}``, the file list huggingface_hub >= 1 asks for instead).
- ``HEAD|GET /{org}/{name}/resolve/{rev}/{file}``: the file, with ``X-Repo-Commit``,
  ``ETag`` (the sha256 of the content for LFS files, else the git blob sha1: the cache names
  the blob after it) and ``Content-Length``.

Faults a test can set on a repo: ``served`` (other bytes than listed: a tampered file),
``drip`` (file -> (bytes, seconds): sent in pieces that far apart), ``huge`` (file -> size:
listed and served as that many zero bytes without holding them) and ``declared`` (file -> the
size the metadata claims, whatever is served).
- 404s carry ``X-Error-Code`` (RepoNotFound, RevisionNotFound, EntryNotFound), which is how
  huggingface_hub tells them apart.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


@dataclass
class Repo:
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # commit -> files
    branches: dict[str, str] = field(default_factory=dict)  # branch -> commit
    broken: set[str] = field(default_factory=set)  # listed, but 404 when asked for
    served: dict[str, bytes] = field(default_factory=dict)  # served instead of the listed bytes
    drip: dict[str, tuple[int, float]] = field(default_factory=dict)
    huge: dict[str, int] = field(default_factory=dict)
    declared: dict[str, int] = field(default_factory=dict)

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
            siblings = [_sibling(repo, f, d) for f, d in sorted(files.items())]
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
            etag = f'"{_etag(name, data)}"'
            headers = {"X-Repo-Commit": commit, "ETag": etag}
            body = repo.served.get(name, data)
            if name in repo.huge or name in repo.drip:
                size = repo.huge.get(name, len(body))
                return self._stream(body, size, repo.drip.get(name), headers, head)
            self._send(200, body, headers, head)

        def _stream(self, body: bytes, size: int, drip: tuple[int, float] | None,
                    headers: dict[str, str], head: bool) -> None:  # fmt: skip
            """``size`` bytes (``body``, or zeros past its end), in pieces ``drip`` apart."""
            piece, pause = drip or (1 << 20, 0.0)
            self.send_response(200)
            for k, v in {**headers, "Content-Length": str(size)}.items():
                self.send_header(k, v)
            self.end_headers()
            if head:
                return
            try:
                for start in range(0, size, piece):
                    chunk = body[start : start + piece]
                    self.wfile.write(chunk + b"\0" * (min(piece, size - start) - len(chunk)))
                    self.wfile.flush()
                    time.sleep(pause)
            except OSError:  # the client gave up
                pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._serve(head=False)

        def do_HEAD(self) -> None:  # noqa: N802
            self._serve(head=True)

    return Handler


#: files the hub stores with git LFS (their metadata carries a sha256)
LFS_SUFFIXES = (".safetensors", ".bin", ".npy", ".pt", ".onnx")


def _etag(name: str, data: bytes) -> str:
    return _sha(data) if name.endswith(LFS_SUFFIXES) else git_sha1(data)


def git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _sibling(repo: Repo, name: str, data: bytes) -> dict[str, object]:
    size = repo.declared.get(name, repo.huge.get(name, len(data)))
    out: dict[str, object] = {"rfilename": name, "size": size, "blobId": git_sha1(data)}
    if name.endswith(LFS_SUFFIXES):
        out["lfs"] = {"sha256": _sha(data), "size": size, "pointerSize": 134}
    return out


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
