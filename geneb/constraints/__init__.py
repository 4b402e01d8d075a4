"""Parameter constraints: small objects that say what a value must be, and check it.

Types are strict, as a user of a typed file expects: an int is not a bool, a TOML string
``"512"`` is not an int, ``"false"`` is not a bool. A failed check raises :class:`ParamError`
with ``'<where>: expected <description>, got <value>'`` and ``param`` (the parameter's name;
the CLI replaces it with its option, see ``geneb.commands._common.flag_message``).

Library functions declare their parameters beside themselves with :func:`validate_params`
(scikit-learn's pattern): ``@validate_params({"seeds": ListOf(SEED), ...})`` checks the named
arguments before the body runs; the declaration is ``fn.__geneb_params__``, from which plans
(:data:`geneb.params.PLAN_SECTIONS`) and the CLI take the same constraints. The named
parameters (:data:`SEED`, :data:`SHOT`, :data:`C_VALUE`, ...) are at the end of this module;
the vocabularies they use are in :mod:`geneb.vocabulary`; the constraint classes in
:mod:`geneb.constraints.rules` (imported from here). The JSON catalogues (models, tasks) and the
adapter options are checked with the same classes, through :func:`check_as`, which raises the
caller's error class. No numpy, no pandas.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from geneb import vocabulary as vocab
from geneb.constraints.rules import (
    Boolean,
    Constraint,
    Interval,
    ListOf,
    MappingOf,
    Nullable,
    ParamError,
    PathParam,
    Pattern,
    Regime,
    String,
    StrOptions,
    UnknownOptionError,
    param_of,
)
from geneb.errors import GenebError, did_you_mean

__all__ = [
    "BACKEND", "BATCH_TOKENS", "BOOL", "COMPUTE_DTYPE", "C_VALUE", "DEVICE", "LAYER", "LAYERS",
    "MAX_LENGTH", "N_BOOT_RULE", "POOLING", "POSITIVE_INT", "PROBE", "PROTOCOL", "RIDGE_ALPHA",
    "SCHEDULER", "SEED", "SHOT", "SIGNIFICANCE", "SPLIT", "STORAGE_DTYPE", "STRANDS", "TEXT",
    "TIER_EDGE", "TRUNCATION", "WORKERS", "ArgumentError", "Boolean", "Constraint", "Interval",
    "ListOf", "MappingOf", "Nullable", "ParamError", "PathParam", "Pattern", "Regime",
    "StrOptions", "String", "UnknownOptionError", "bind_arguments", "check_as", "param_of",
    "validate", "validate_all", "validate_params", "validated_list",
]  # fmt: skip


# ---------------------------------------------------------------- declarations
def _items(value: Any) -> list[Any] | None:
    """A list parameter's entries: a comma string (``"1,10,full"``) or an iterable, whose
    string entries may be comma lists too (repeated CLI options); None for a lone value."""
    if isinstance(value, str):
        value = [value]
    elif not isinstance(value, Iterable) or isinstance(value, (bytes, Mapping)):
        return None
    out: list[Any] = []
    for v in value:
        if isinstance(v, str):
            out += [p.strip() for p in v.split(",") if p.strip()]
        else:
            out.append(v)
    return out


def validate(constraint: Constraint, value: Any, where: str) -> Any:
    """``value`` checked against ``constraint``, in its canonical form. A :class:`ListOf` also
    takes a comma string or any iterable (string entries are read as text: ``"13"`` -> 13)
    and gives a tuple; an error names the entry (``seeds[1]: expected ...``)."""
    if isinstance(constraint, ListOf):
        items = _items(value)
        if items is not None:
            item = constraint.item
            value = [item.from_text(v) if isinstance(v, str) else v for v in items]
    return constraint.canonical(constraint.check(value, where))


def validate_all(spec: Mapping[str, Constraint], values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with each one ``spec`` names (and ``values`` holds, None aside) validated."""
    return {k: validate(spec[k], v, k) if k in spec and v is not None else v
            for k, v in values.items()}


def check_as(
    constraint: Constraint, value: Any, where: str, error: type[GenebError]
) -> Any:
    """``constraint.check(value, where)``, raising ``error`` (the caller's error class, e.g.
    ``TaskError`` for the task catalogue, which its callers catch) with the same one-line
    ``'<where>: expected ..., got ...'`` message."""
    try:
        return constraint.check(value, where)
    except ParamError as e:
        raise error(str(e)) from None


F = TypeVar("F", bound=Callable[..., Any])


class ArgumentError(ParamError, TypeError):
    """A call that does not match the function's signature (an unknown keyword, a missing or
    an extra argument); a ``TypeError`` too, as Python's own would be."""


def bind_arguments(
    fn: Callable[..., Any], sig: inspect.Signature, args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
) -> inspect.BoundArguments:
    """``sig.bind(*args, **kwargs)``; a mismatch is an :class:`ArgumentError` naming ``fn``
    and, for an unknown keyword, the nearest valid parameter
    (``run_probes() got an unexpected keyword argument 'C'; did you mean 'Cs'?``)."""
    name = getattr(fn, "__name__", "function")
    named = [p.name for p in sig.parameters.values()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    unknown = [] if takes_any else [k for k in kwargs if k not in named]
    if unknown:
        close = did_you_mean(unknown[0], named, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; expected one of {named}"
        raise ArgumentError(
            f"{name}() got an unexpected keyword argument {unknown[0]!r}{hint}")
    try:
        return sig.bind(*args, **kwargs)
    except TypeError as e:
        raise ArgumentError(f"{name}(): {e}") from None


def validate_params(spec: Mapping[str, Constraint]) -> Callable[[F], F]:
    """Declare a function's parameter constraints beside it and check them before its body
    runs (as ``sklearn.utils._param_validation.validate_params``).

    Each named argument, defaults included, is replaced by :func:`validate`'s canonical form;
    None passes where the parameter's default is None. The declaration is kept as
    ``fn.__geneb_params__`` (plans and the CLI read their constraints from it). A call that
    does not fit the signature (an unknown keyword) is an :class:`ArgumentError` naming the
    function and the nearest parameter (:func:`bind_arguments`); every function ``import
    geneb`` exports is declared with it, an empty ``spec`` where nothing else is checked.
    """

    def decorate(fn: F) -> F:
        sig = inspect.signature(fn)
        missing = [n for n in spec if n not in sig.parameters]
        if missing:
            raise TypeError(f"{fn.__qualname__} has no parameter(s) {missing}")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = bind_arguments(fn, sig, args, kwargs)
            bound.apply_defaults()
            for name, constraint in spec.items():
                value = bound.arguments[name]
                if value is None and sig.parameters[name].default is None:
                    continue
                bound.arguments[name] = validate(constraint, value, name)
            return fn(*bound.args, **bound.kwargs)

        wrapper.__geneb_params__ = MappingProxyType(dict(spec))  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


_Item = TypeVar("_Item")


def validated_list(value: object, item: type[_Item]) -> tuple[_Item, ...]:
    """A :class:`ListOf` parameter inside a :func:`validate_params` function, typed as what it
    is there: the decorator has replaced the comma string, iterable or lone value by its
    canonical tuple of ``item`` (``"1,10"`` -> ``("1", "10")`` for shots).

    Parameters
    ----------
    value : object
        The parameter as the function body received it.
    item : type
        The type of each canonical entry (``str`` for shots, ``int`` for seeds, ``float``).

    Returns
    -------
    tuple
        ``value`` itself, typed; ``TypeError`` when it skipped the decorator (not a tuple of
        ``item``).
    """
    if not isinstance(value, tuple) or not all(isinstance(v, item) for v in value):
        raise TypeError(f"expected the tuple of {item.__name__} validate_params makes of a "
                        f"list parameter, got {value!r}")
    return value


# ---------------------------------------------------------------- named parameters
# One declaration per concept: library functions declare their arguments with these, plans
# (geneb.params.PLAN_SECTIONS) and CLI options check against the same objects.
SEED = Interval(int, 0, None)
POSITIVE_INT = Interval(int, 1, None)
SIGNIFICANCE = Interval(float, 0, 1, closed="neither")  # a significance level (0.05)
C_VALUE = Interval(float, 0, None, closed="neither")  # inverse L2 strength of the probe
RIDGE_ALPHA = Interval(float, 0, None, closed="neither")  # ridge penalty (regression tasks)
SHOT = Regime()
BATCH_TOKENS = POSITIVE_INT
MAX_LENGTH = POSITIVE_INT
WORKERS = POSITIVE_INT
LAYER = Interval(int, None, None)
LAYERS = ListOf(LAYER)  # several hidden layers from one forward: one store entry each
#: Bootstrap resamples of a confidence interval: fewer than 100 give intervals too coarse to
#: report, so the library (``build_report``), plans and ``geneb report --n-boot`` refuse them.
N_BOOT_RULE = Interval(int, 100, None)
TIER_EDGE = Interval(float, 0, None, closed="neither")  # a parameter count cutting two tiers
POOLING = StrOptions(vocab.POOLINGS)
TRUNCATION = StrOptions(vocab.TRUNCATIONS)
STRANDS = StrOptions(vocab.STRANDS)
STORAGE_DTYPE = StrOptions(vocab.STORAGE_DTYPES)
COMPUTE_DTYPE = StrOptions(vocab.COMPUTE_DTYPES)
DEVICE = Pattern(r"auto|cpu|mps|cuda(:[0-9]+)?", "auto, cpu, cuda, cuda:N or mps")
PROBE = StrOptions(vocab.PROBES)
BACKEND = StrOptions(vocab.BACKENDS)
PROTOCOL = StrOptions(vocab.PROTOCOLS)
SCHEDULER = Pattern(
    r"(tcp|tls|inproc|ucx|ws|wss)://\S+|[^\s:/]+:[0-9]+",
    "a Dask scheduler address (tcp://host:port or host:port)",
)
SPLIT = String()
BOOL = Boolean()
TEXT = Pattern(r"(?s).*", "a string")  # any string, the empty one included (free text)
