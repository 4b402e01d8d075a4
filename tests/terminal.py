"""Commands run in a fresh process on a pseudo-terminal opened here (``pty``), as a user's
shell runs them: the progress tests (test_progress_tty.py) and the demo (test_demo.py)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time


def run_on_terminal(args: list[str], env: dict[str, str], columns: int | None = None,
                    timeout: float = 240,
                    command: list[str] | None = None) -> tuple[int, str]:  # fmt: skip
    """``geneb args`` (``command``: how geneb is started, ``python -m geneb`` unless given)
    with stdin, stdout and stderr on a new pseudo-terminal (of ``columns`` columns; None: one
    that reports no size); returns (exit code, everything it printed)."""
    master, slave = pty.openpty()
    if columns is not None:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    start = command if command is not None else [sys.executable, "-m", "geneb"]
    proc = subprocess.Popen([*start, *args], stdin=slave, stdout=slave, stderr=slave, env=env,
                            close_fds=True)  # fmt: skip
    os.close(slave)
    out, t0 = b"", time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            out += data
        elif proc.poll() is not None:
            break
    proc.kill() if proc.poll() is None else None
    os.close(master)
    return proc.wait(), out.decode(errors="replace")


def environment(**extra: str) -> dict[str, str]:
    """This process's environment without CI / GENEB_NO_PROGRESS (progress allowed), this
    interpreter's path, and ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GENEB_NO_PROGRESS")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.update(extra)
    return env
