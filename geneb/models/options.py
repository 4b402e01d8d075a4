"""Adapter options, declared as data and checked once (the registry calls :func:`check_options`).

Each adapter kind accepts a fixed set of options; an option a model does not accept is
refused with a message naming the option, the model and what it accepts (no ``**kwargs``
swallowing anywhere), unless it is at its default: the CLI and plans pass every option, so
a default means "not set". Every known option's value is checked against its constraint
(:data:`MODEL_OPTION_PARAMS`; a string is not a bool, ``pooling`` is one of the poolings).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any, Protocol

from geneb import constraints as c
from geneb.errors import ModelError
from geneb.vocabulary import (
    DEFAULT_DEVICE,
    DEFAULT_LAYER,
    DEFAULT_POOLING,
    DEFAULT_STRANDS,
    DEFAULT_TRUNCATION,
)

ANY_OPTION = "**"  # in an options tuple: the adapter accepts any keyword option

#: Every option an adapter may take, with the value that means "not set".
OPTION_DEFAULTS: dict[str, Any] = {
    "device": DEFAULT_DEVICE,
    "dtype": None,
    "max_length": None,
    "pooling": DEFAULT_POOLING,
    "layer": DEFAULT_LAYER,
    "layers": None,  # several hidden layers from one forward, one store entry each
    "truncation": DEFAULT_TRUNCATION,
    "trust_remote_code": False,
    "seed": None,
    "strands": DEFAULT_STRANDS,
}
#: Options every model takes, whatever its adapter (applied around it by the registry).
UNIVERSAL_OPTIONS: tuple[str, ...] = ("strands",)
#: What each option's value must be, declared once: ``extract`` (``EXTRACT_PARAMS``), plans and
#: the CLI take these entries. None also passes where the default is None (left unset), as in
#: :func:`geneb.constraints.validate_params`.
MODEL_OPTION_PARAMS: dict[str, c.Constraint] = {
    "device": c.DEVICE,
    "dtype": c.COMPUTE_DTYPE,
    "max_length": c.MAX_LENGTH,
    "pooling": c.POOLING,
    "layer": c.LAYER,
    "layers": c.LAYERS,
    "truncation": c.TRUNCATION,
    "trust_remote_code": c.BOOL,
    "seed": c.SEED,
    "strands": c.STRANDS,
}
_CHECKS: dict[str, c.Constraint] = {
    k: c.Nullable(v, null="None") if OPTION_DEFAULTS[k] is None else v
    for k, v in MODEL_OPTION_PARAMS.items()
}
_NEURAL = (
    "device", "dtype", "max_length", "pooling", "layer", "layers", "truncation",
    "trust_remote_code",
)  # fmt: skip
#: Options each adapter kind accepts. ``device`` and ``trust_remote_code`` are run-wide (a
#: device to run on, a permission): every adapter takes them; kmer-K computes on the CPU.
ADAPTER_OPTIONS: dict[str, tuple[str, ...]] = {
    "kmer": ("device", "trust_remote_code"),
    "control": _NEURAL,
    "folder": _NEURAL,
    "hub": _NEURAL,
    "catalogue": _NEURAL,
    "random": (*_NEURAL, "seed"),
}


class _Described(Protocol):
    @property
    def spec(self) -> str: ...

    @property
    def options(self) -> tuple[str, ...]: ...


def check_options(meta: _Described, options: dict[str, Any]) -> dict[str, Any]:
    """Check ``options`` against what the model accepts; return those that apply and are set.

    Every known option is checked against :data:`MODEL_OPTION_PARAMS` (``"option 'max_length'
    of model 'X': expected ..., got ..."``; a string is not a bool). An option the model
    does not accept is refused unless it is at its default ("not set"): the message names the
    option, the model and what it accepts.
    """
    out: dict[str, Any] = {}
    for opt, value in options.items():
        if opt in _CHECKS:
            c.check_as(_CHECKS[opt], value, f"option {opt!r} of model {meta.spec!r}", ModelError)
        if opt in meta.options or ANY_OPTION in meta.options or opt in UNIVERSAL_OPTIONS:
            if opt not in OPTION_DEFAULTS or value != OPTION_DEFAULTS[opt]:
                out[opt] = value
            continue
        if opt in OPTION_DEFAULTS and value == OPTION_DEFAULTS[opt]:
            continue  # not set
        accepts = ", ".join(meta.options) or "no options"
        near = difflib.get_close_matches(opt, meta.options, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ModelError(
            f"option {opt!r} does not apply to model {meta.spec!r} (it accepts: {accepts})"
            f"{hint}; models that take different options go in separate runs or plan model "
            "entries"
        )
    if options.get("layers") is not None:  # values, duplicates, and not with ``layer``
        check_layers(options["layers"], options.get("layer", DEFAULT_LAYER))
    return out


_LAYER_LIST = c.ListOf(c.LAYER, scalar_ok=False)  # in Python, ``layers=3`` is not a list


def check_layers(
    layers: Sequence[int] | None, layer: int = DEFAULT_LAYER
) -> tuple[int, ...] | None:
    """The ``layers`` option as a tuple (None: not set), checked before any model loads.

    ``layers`` and a non-default ``layer`` cannot both be set: they would disagree on which
    layer the bare model key holds.
    """
    if layers is None:
        return None
    out = tuple(int(x) for x in c.check_as(_LAYER_LIST, layers, "layers", ModelError))
    dup = sorted({x for x in out if out.count(x) > 1})
    if dup:
        raise ModelError(f"layers lists {dup[0]} twice: {list(out)}")
    if layer != DEFAULT_LAYER:
        raise ModelError(f"give layer ({layer}) or layers ({list(out)}), not both")
    return out
