"""What ``geneb tasks fetch`` will download and unpack, and for how long: declared once, here.

Why: a fetch runs on files somebody else serves. A 1 MB zip can declare (or hide behind a
lying header) a 1 GiB member; a server can drip one byte every two seconds forever. So every
file a fetch writes (a URL download, an archive member, a decompressed ``.gz``) is bounded by
``max_bytes``; a file unpacked from a smaller one is also bounded by ``max_ratio`` times the
packed size (a zip bomb expands 1000-fold, DNA text about 4-fold); and every URL download must
complete within ``deadline_s``. Declared sizes are checked before anything is unpacked, and the
real byte count is checked while streaming, since headers can lie.

Each limit is overridable by an environment variable (documented in docs/tasks.md) or by a
:class:`FetchLimits` given to :func:`geneb.tasks.fetch.run_fetch`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from _typeshed import SupportsRead, SupportsWrite

from geneb.constraints import Interval
from geneb.errors import TaskError

ENV_MAX_BYTES = "GENEB_FETCH_MAX_BYTES"
ENV_MAX_RATIO = "GENEB_FETCH_MAX_RATIO"
ENV_DEADLINE = "GENEB_FETCH_DEADLINE"
#: the largest file a fetch writes (a whole human genome, 3.1 GiB unpacked, needs more)
DEFAULT_MAX_BYTES = 2 * 1024**3
#: unpacked size / packed size beyond which a member or .gz is refused
DEFAULT_MAX_RATIO = 100.0
#: unpacked files up to this size are never refused for their ratio (tiny archives compress well)
RATIO_FLOOR = 64 * 1024**2
#: seconds one URL download may take, first byte to last
DEFAULT_DEADLINE_S = 3600.0
#: a server silent this long (no byte) is given up on, whatever the deadline left
READ_TIMEOUT_S = 30.0

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


def format_bytes(n: float) -> str:
    """``1.0 GiB``-style sizes for messages."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def parse_size(text: str, where: str) -> int:
    """``"2G"``, ``"512MiB"``, ``"1073741824"`` -> bytes (binary units); errors name ``where``."""
    m = _SIZE.match(text)
    if m is None or float(m[1]) <= 0:
        raise TaskError(
            f"{where}: expected a size > 0 such as 4G, 512M or 1073741824, got {text!r}"
        )
    return int(float(m[1]) * _UNITS[m[2].upper()])


#: the checks of the numeric variables (geneb's one constraint vocabulary)
RATIO = Interval(float, 0, None, closed="neither")
SECONDS = Interval(float, 0, None, closed="neither")


def _number(text: str, where: str, constraint: Interval) -> float:
    return float(constraint.check(constraint.from_text(text), where))


class _Overrides(TypedDict, total=False):
    max_bytes: int
    max_ratio: float
    deadline_s: float


@dataclass(frozen=True)
class FetchLimits:
    """Bounds on one fetch (see the module docstring for why each exists)."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_ratio: float = DEFAULT_MAX_RATIO
    deadline_s: float = DEFAULT_DEADLINE_S

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> FetchLimits:
        """The defaults, overridden by ``GENEB_FETCH_MAX_BYTES`` / ``_RATIO`` / ``_DEADLINE``."""
        env = os.environ if environ is None else environ
        kw: _Overrides = {}
        if env.get(ENV_MAX_BYTES, "").strip():
            kw["max_bytes"] = parse_size(env[ENV_MAX_BYTES], ENV_MAX_BYTES)
        if env.get(ENV_MAX_RATIO, "").strip():
            kw["max_ratio"] = _number(env[ENV_MAX_RATIO], ENV_MAX_RATIO, RATIO)
        if env.get(ENV_DEADLINE, "").strip():
            kw["deadline_s"] = _number(env[ENV_DEADLINE], ENV_DEADLINE, SECONDS)
        return cls(**kw)

    def unpack_limit(self, packed_bytes: int) -> tuple[int, str]:
        """The most bytes a file unpacked from ``packed_bytes`` may have, and why (for messages)."""
        by_ratio = max(RATIO_FLOOR, int(self.max_ratio * packed_bytes))
        if by_ratio < self.max_bytes:
            return by_ratio, (
                f"{self.max_ratio:g} x the {format_bytes(packed_bytes)} it comes from; "
                f"{ENV_MAX_RATIO} raises it"
            )
        return self.max_bytes, f"the fetch size cap; {ENV_MAX_BYTES} raises it"


def copy_capped(src: SupportsRead[bytes], dst: SupportsWrite[bytes], limit: int, what: str,
                why: str) -> int:
    """Stream ``src`` into ``dst``; stop with a ``TaskError`` once more than ``limit`` bytes came.

    ``what`` names the file in the message, ``why`` says where the limit comes from.
    """
    n = 0
    while block := src.read(min(1 << 20, limit + 1 - n)):
        n += len(block)
        if n > limit:
            raise TaskError(
                f"{what}: unpacks to more than {format_bytes(limit)} ({why}); refused, "
                f"nothing was kept"
            )
        dst.write(block)
    return n
