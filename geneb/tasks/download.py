"""One URL download for ``geneb tasks fetch``: streamed, bounded, verified, or nothing kept.

Why not a download library: the fetch needs three things at once that none gives together:
the catalogue's sha256 checked before the file gets its name; a size cap and an overall
deadline enforced *while* the bytes arrive (a server can lie about Content-Length or drip one
byte every two seconds; see :mod:`geneb.tasks.limits`); and a partial file whose name says
which process owns it, so a fetch killed outright is cleaned up by the next one
(:func:`geneb.tasks.cache.sweep_partials`).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import socket
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from geneb._fs import write_with
from geneb.errors import TaskError
from geneb.tasks.cache import partial_prefix
from geneb.tasks.limits import ENV_DEADLINE, ENV_MAX_BYTES, READ_TIMEOUT_S, FetchLimits
from geneb.tasks.limits import format_bytes as _size


class DeadlineExceeded(Exception):
    """A download outlived its deadline (its socket was shut down by the watch's timer)."""


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def honour_umask(path: Path) -> None:
    """Give ``path`` the mode the umask says (temporary files and folders are made 0600/0700)."""
    umask = os.umask(0)
    os.umask(umask)
    path.chmod((0o777 if path.is_dir() else 0o666) & ~umask)


class _Watch:
    """The sockets of one download, shut down once its deadline passes.

    Why not a check between reads only: a blocked read (a server that drips its headers, or
    goes silent) would outlive the deadline by a whole read timeout. Shutting the socket down
    from a timer wakes that read on any thread, without signals.
    """

    def __init__(self) -> None:
        self.socks: list[socket.socket] = []
        self.expired = False
        self.lock = threading.Lock()

    def add(self, sock: socket.socket) -> None:
        with self.lock:
            self.socks.append(sock)
            if self.expired:
                self._shut(sock)

    def expire(self) -> None:
        with self.lock:
            self.expired = True
            for sock in self.socks:
                self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _opener(watch: _Watch) -> urllib.request.OpenerDirector:
    """urllib's opener (proxies, redirects) whose connections register with ``watch``."""

    class Http(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            watch.add(self.sock)

    class Https(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            watch.add(self.sock)

    context = _ssl_context()

    class HttpHandler(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Http, req)

    class HttpsHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Https, req, context=context)

    return urllib.request.build_opener(HttpHandler(), HttpsHandler(context=context))


def _ssl_context() -> ssl.SSLContext:

    try:
        import certifi  # what requests uses; system stores are sometimes empty

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:
        return ssl.create_default_context()


def _stream(url: str, out: Any, limits: FetchLimits, watch: _Watch,
            headers: Mapping[str, str] | None = None) -> tuple[str, int]:  # fmt: skip
    """Write the body of ``url`` to ``out``; return (sha256, bytes). Raises on any limit.
    ``headers`` (a token) go to ``url`` only, never to where it redirects."""
    h = hashlib.sha256()
    n = 0
    timeout = min(READ_TIMEOUT_S, limits.deadline_s)
    req = urllib.request.Request(url, headers={"User-Agent": "geneb-tasks-fetch"})
    for key, value in (headers or {}).items():
        req.add_unredirected_header(key, value)
    with _opener(watch).open(req, timeout=timeout) as resp:
        declared = resp.headers.get("Content-Length")
        expected = int(declared) if declared and declared.isdigit() else None
        if expected is not None and expected > limits.max_bytes:
            raise TaskError(
                f"{url}: the server announces {_size(expected)}, over the fetch size cap "
                f"{_size(limits.max_bytes)} ({ENV_MAX_BYTES} raises it); nothing was downloaded"
            )
        read = getattr(resp, "read1", resp.read)  # read1: whatever arrived, never waits to fill
        while True:
            block = read(1 << 20)
            if watch.expired:
                raise DeadlineExceeded
            if not block:
                break
            n += len(block)
            if n > limits.max_bytes:
                raise TaskError(
                    f"{url}: more than {_size(limits.max_bytes)} arrived, over the fetch size "
                    f"cap ({ENV_MAX_BYTES} raises it); nothing was kept"
                )
            h.update(block)
            out.write(block)
    if expected is not None and n != expected:
        raise TaskError(
            f"{url}: download failed (connection closed after {n:,} of {expected:,} bytes); "
            f"nothing was kept"
        )
    return h.hexdigest(), n


def _late(url: str, limits: FetchLimits) -> TaskError:
    return TaskError(
        f"{url}: download not complete after {limits.deadline_s:g} s, the per-file deadline "
        f"({ENV_DEADLINE} raises it); nothing was kept"
    )


def download(url: str, sha256: str | None, dest: Path, limits: FetchLimits, *,
             headers: Mapping[str, str] | None = None,
             checksum_of: str = "the catalogue's") -> Path:  # fmt: skip
    """``dest``, holding the body of ``url`` whose sha256 is ``sha256``; nothing kept on failure.

    ``sha256`` None: the caller verifies the bytes its own way (a git blob id) before keeping
    them; ``checksum_of`` says whose sha256 it is in messages; ``headers``: extra request
    headers (a token), sent to ``url`` only, not to redirects. An existing ``dest`` with the
    right digest is reused (a second split from the same archive
    downloads nothing). The bytes go to a partial file next to ``dest`` named after this
    process, renamed to ``dest`` only once complete and verified.
    """
    if dest.is_file() and sha256_file(dest) == sha256:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f"{partial_prefix(dest.name)}{os.urandom(4).hex()}"
    watch = _Watch()
    timer = threading.Timer(limits.deadline_s, watch.expire)
    timer.daemon = True
    timer.start()

    def fill(t: Path) -> None:
        with t.open("wb") as out:
            digest, n = _stream(url, out, limits, watch, headers)
        if sha256 is not None and digest != sha256:
            raise TaskError(
                f"{url}: the downloaded file does not match {checksum_of} sha256 {sha256} "
                f"(got {digest}, {n:,} bytes); it was discarded"
            )

    try:
        write_with(dest, fill, tmp=tmp)  # created 0666 & ~umask, fsynced, renamed
        return dest
    except DeadlineExceeded:
        raise _late(url, limits) from None
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as e:
        if isinstance(e, TaskError):
            raise
        if watch.expired:  # the socket was shut at the deadline mid-read
            raise _late(url, limits) from None
        reason = getattr(e, "reason", None) or e
        unreachable = isinstance(e, urllib.error.URLError) and not isinstance(
            e, urllib.error.HTTPError
        )
        hint = "; offline, or the server is down?" if unreachable else ""
        raise TaskError(
            f"{url}: download failed ({type(e).__name__}: {reason}{hint}); nothing was kept"
        ) from None
    finally:
        timer.cancel()
        tmp.unlink(missing_ok=True)
