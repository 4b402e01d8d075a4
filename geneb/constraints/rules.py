"""The constraint classes of :mod:`geneb.constraints`: small objects that say what a value
must be and check it (import them from :mod:`geneb.constraints`).

Types are strict, as a user of a typed file expects: an int is not a bool, a JSON/TOML string
``"512"`` is not an int, ``"false"`` is not a bool. A failed check raises :class:`ParamError`
with ``'<where>: expected <description>, got <value>'``. The same classes check function
parameters, plan tables, CLI options and the JSON catalogues (:class:`Nullable` for
``null``, :class:`MappingOf` for objects). No numpy, no pandas.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

from geneb.errors import GenebError, UnknownNameError, did_you_mean


class ParamError(GenebError):
    """A parameter value has the wrong type or is out of range; the message names it."""


class UnknownOptionError(ParamError, UnknownNameError):
    """A name that is not one of the allowed ones (a :class:`StrOptions` value)."""


class Constraint:
    """One rule a value must satisfy; ``description`` completes "expected ..."."""

    description: str = "a value"

    def is_satisfied_by(self, value: Any) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def from_text(self, text: str) -> Any:
        """The value a CLI string stands for (strings stay strings; see subclasses)."""
        return text

    def hint(self, value: Any) -> str:
        """A did-you-mean suffix for a refused value (empty when there is none)."""
        return ""

    def canonical(self, value: Any) -> Any:
        """The one form of a checked value a library function works with (``1`` -> ``1.0``
        for a number, ``10`` -> ``"10"`` for a regime)."""
        return value

    error: type[ParamError] = ParamError

    def check(self, value: Any, where: str) -> Any:
        """Return ``value`` or raise ``ParamError('<where>: expected ..., got ...')``."""
        if not self.is_satisfied_by(value):
            raise self.error(
                f"{where}: expected {self.description}, got {value!r}{self.hint(value)}",
                param=param_of(where),
            )
        return value


_PARAM = re.compile(r"([A-Za-z_]\w*)(\[\d+\])?")


def param_of(where: str) -> str | None:
    """The Python parameter a ``where`` names (``"seeds[2]"`` -> ``"seeds"``); None for a plan
    location (``"[probe] seeds[0]"``) or an option flag."""
    m = _PARAM.fullmatch(where)
    return m.group(1) if m else None


def _is_int(v: Any) -> bool:
    return isinstance(v, Integral) and not isinstance(v, bool)


def _is_real(v: Any) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(float(v))


@dataclass(frozen=True)
class Interval(Constraint):
    """An int (``type=int``) or finite number (``type=float``) in an interval.

    ``closed`` is ``"both"``, ``"left"``, ``"right"`` or ``"neither"``; None bounds are open.
    """

    type: type
    low: float | None
    high: float | None
    closed: str = "both"

    def is_satisfied_by(self, value: Any) -> bool:
        if not (_is_int(value) if self.type is int else _is_real(value)):
            return False
        lo_ok = self.low is None or (
            value >= self.low if self.closed in ("both", "left") else value > self.low
        )
        hi_ok = self.high is None or (
            value <= self.high if self.closed in ("both", "right") else value < self.high
        )
        return lo_ok and hi_ok

    @property
    def description(self) -> str:  # type: ignore[override]
        kind = "int" if self.type is int else "number"
        lo_in = self.closed in ("both", "left")
        hi_in = self.closed in ("both", "right")
        if self.high is None and self.low == 1 and kind == "int" and lo_in:
            return "a positive int"
        if self.high is None and self.low == 0:
            return f"a non-negative {kind}" if lo_in else f"a positive {kind}"
        if self.high is None and self.low is not None:
            return f"an {kind} >= {self.low:g}" if lo_in else f"an {kind} > {self.low:g}"
        if self.low is None and self.high is None:
            return f"an {kind}" if kind == "int" else "a finite number"
        lb = "[" if lo_in else "("
        hb = "]" if hi_in else ")"
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        return f"{'an' if kind == 'int' else 'a'} {kind} in {lb}{lo}, {hi}{hb}"

    def from_text(self, text: str) -> Any:
        s = text.strip()
        try:
            return int(s) if self.type is int else float(s)
        except ValueError:
            return text

    def canonical(self, value: Any) -> Any:
        return int(value) if self.type is int else float(value)


@dataclass(frozen=True)
class StrOptions(Constraint):
    """A string among ``options``."""

    options: tuple[str, ...]
    error = UnknownOptionError

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options

    @property
    def description(self) -> str:  # type: ignore[override]
        return "one of " + ", ".join(repr(o) for o in self.options)

    def hint(self, value: Any) -> str:
        close = did_you_mean(value, self.options) if isinstance(value, str) else []
        return f" (did you mean {close[0]!r}?)" if close else ""


@dataclass(frozen=True)
class Pattern(Constraint):
    """A string matching a regular expression (whole string); ``description`` says what."""

    regex: str
    description: str = "a string"

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str) and re.fullmatch(self.regex, value) is not None


@dataclass(frozen=True)
class Boolean(Constraint):
    """Strictly ``True`` or ``False`` (a string ``"false"`` is refused, not read as true)."""

    description: str = "a bool (true or false)"

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, bool)


@dataclass(frozen=True)
class String(Constraint):
    """A non-empty string (names, hub ids, addresses)."""

    description: str = "a non-empty string"

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str) and value.strip() != ""


@dataclass(frozen=True)
class PathParam(Constraint):
    """A path given as a non-empty string. ``kind`` is what must be there once resolved:
    ``"file"``, ``"dir"``, ``"not_file"`` (absent or a folder: an output folder) or None."""

    kind: str | None = None

    @property
    def description(self) -> str:  # type: ignore[override]
        return "a path (a non-empty string)"

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str) and value.strip() != ""

    def check_exists(self, path: Any, where: str) -> None:
        """Check the resolved path ``path`` (a ``pathlib.Path``) against :attr:`kind`."""
        if self.kind == "file" and not path.is_file():
            raise ParamError(f"{where}: expected an existing file, got {str(path)!r}",
                             param=param_of(where))
        if self.kind == "dir" and not path.is_dir():
            raise ParamError(f"{where}: expected an existing folder, got {str(path)!r}",
                             param=param_of(where))
        if self.kind == "not_file" and path.exists() and not path.is_dir():
            raise ParamError(
                f"{where}: expected a folder (new or existing), got {str(path)!r}, "
                "which is an existing file", param=param_of(where)
            )


@dataclass(frozen=True)
class ListOf(Constraint):
    """A list of values each satisfying ``item`` (a lone value counts as a list of one when
    ``scalar_ok``); at least ``min_len`` entries. Errors name the entry: ``seeds[2]``."""

    item: Constraint
    min_len: int = 1
    scalar_ok: bool = True
    unique: bool = False  # canonical form: each value once, in the order given

    def canonical(self, value: Any) -> Any:
        out = [self.item.canonical(v) for v in value]
        return tuple(dict.fromkeys(out)) if self.unique else tuple(out)

    @property
    def description(self) -> str:  # type: ignore[override]
        return f"a list of {self.item.description}"

    def is_satisfied_by(self, value: Any) -> bool:
        vals = (list(value) if isinstance(value, (list, tuple))
                else [value] if self.scalar_ok else None)
        return (
            vals is not None
            and len(vals) >= self.min_len
            and all(self.item.is_satisfied_by(v) for v in vals)
        )

    def check(self, value: Any, where: str) -> list[Any]:
        if isinstance(value, tuple):  # the canonical form (a tuple) passes its own check
            value = list(value)
        if not isinstance(value, list):
            if not self.scalar_ok:
                raise ParamError(f"{where}: expected {self.description}, got {value!r}",
                                 param=param_of(where))
            value = [value]
        if len(value) < self.min_len:
            raise ParamError(f"{where}: expected at least {self.min_len} entr"
                             f"{'y' if self.min_len == 1 else 'ies'}, got an empty list",
                             param=param_of(where))
        return [self.item.check(v, f"{where}[{i}]") for i, v in enumerate(value)]


@dataclass(frozen=True)
class Regime(Constraint):
    """A probe regime: ``"full"`` or a shot count k >= 1 (an int, or its digits as a string)."""

    description: str = "'full' or a positive int k (shots per class)"

    def hint(self, value: Any) -> str:
        close = did_you_mean(value, ["full"]) if isinstance(value, str) else []
        return " (did you mean 'full'?)" if close else ""

    def is_satisfied_by(self, value: Any) -> bool:
        if _is_int(value):
            return bool(value >= 1)
        return isinstance(value, str) and (
            value == "full" or (value.isdigit() and int(value) >= 1)
        )

    def from_text(self, text: str) -> Any:
        return text.strip().lower()

    def canonical(self, value: Any) -> Any:
        return "full" if value == "full" else str(int(value))  # "010" and 10 -> "10"


def _delegates(item: Constraint, value: Any) -> bool:
    """Whether ``item`` should check ``value`` itself: a container of the right kind, whose
    own check names the bad entry (``capabilities[1]``, ``sources['family']``)."""
    return (isinstance(item, ListOf) and isinstance(value, (list, tuple))) or (
        isinstance(item, MappingOf) and isinstance(value, dict)
    )


@dataclass(frozen=True)
class Nullable(Constraint):
    """``None`` (JSON ``null``: a fact nobody checked, an option left unset) or ``item``.

    ``null`` is how the message spells None: ``"null"`` in a JSON file, ``"None"`` for a
    Python argument.
    """

    item: Constraint
    null: str = "null"

    @property
    def description(self) -> str:  # type: ignore[override]
        return f"{self.null} or {self.item.description}"

    @property
    def error(self) -> type[ParamError]:  # type: ignore[override]
        return self.item.error

    def is_satisfied_by(self, value: Any) -> bool:
        return value is None or self.item.is_satisfied_by(value)

    def hint(self, value: Any) -> str:
        return self.item.hint(value)

    def canonical(self, value: Any) -> Any:
        return None if value is None else self.item.canonical(value)

    def check(self, value: Any, where: str) -> Any:
        if value is None:
            return None
        if _delegates(self.item, value):
            return self.item.check(value, where)
        return super().check(value, where)


@dataclass(frozen=True)
class MappingOf(Constraint):
    """A JSON object (a ``dict``) whose keys satisfy ``key`` and values ``value``, with at
    least ``min_len`` entries. Errors name the entry: ``sources['family']``."""

    key: Constraint
    value: Constraint
    min_len: int = 0

    @property
    def description(self) -> str:  # type: ignore[override]
        return f"an object of {self.key.description} -> {self.value.description}"

    def is_satisfied_by(self, value: Any) -> bool:
        return (
            isinstance(value, dict)
            and len(value) >= self.min_len
            and all(self.key.is_satisfied_by(k) and self.value.is_satisfied_by(v)
                    for k, v in value.items())
        )

    def check(self, value: Any, where: str) -> dict[Any, Any]:
        if not isinstance(value, dict) or len(value) < self.min_len:
            super().check(value, where)  # raises: not an object, or too few entries
        return {self.key.check(k, f"{where} key"): self.value.check(v, f"{where}[{k!r}]")
                for k, v in value.items()}
