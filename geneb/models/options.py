"""Adapter options, declared as data and checked once (the registry calls :func:`check_options`).

Each adapter kind accepts a fixed set of options; an option a model does not accept is
refused with a message naming the option, the model and what it accepts (no ``**kwargs``
swallowing anywhere), unless it is at its default: the CLI and plans pass every option, so
a default means "not set". Types are checked for every known option (a string is not a bool).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any, Protocol

from geneb.errors import ModelError

ANY_OPTION = "**"  # in an options tuple: the adapter accepts any keyword option

#: Every option an adapter may take, with the value that means "not set".
OPTION_DEFAULTS: dict[str, Any] = {
    "device": "auto",
    "dtype": None,
    "max_length": None,
    "pooling": "mean",
    "layer": -1,
    "layers": None,  # several hidden layers from one forward, one store entry each
    "truncation": "truncate",
    "trust_remote_code": False,
    "seed": None,
    "strands": "forward",
}
#: Options every model takes, whatever its adapter (applied around it by the registry).
UNIVERSAL_OPTIONS: tuple[str, ...] = ("strands",)
#: Python types each option accepts (None: may be left unset).
OPTION_TYPES: dict[str, tuple[type, ...]] = {
    "device": (str,),
    "dtype": (str, type(None)),
    "max_length": (int, type(None)),
    "pooling": (str,),
    "layer": (int,),
    "layers": (list, tuple, type(None)),
    "truncation": (str,),
    "trust_remote_code": (bool,),
    "seed": (int, type(None)),
    "strands": (str,),
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
    spec: str
    options: tuple[str, ...]


def check_options(meta: _Described, options: dict[str, Any]) -> dict[str, Any]:
    """Check ``options`` against what the model accepts; return those that apply and are set.

    Types are checked for every known option (a string is not a bool). An option the model
    does not accept is refused unless it is at its default ("not set"): the message names the
    option, the model and what it accepts.
    """
    out: dict[str, Any] = {}
    for opt, value in options.items():
        types = OPTION_TYPES.get(opt)
        if types is not None and (
            not isinstance(value, types) or (isinstance(value, bool) and bool not in types)
        ):
            want = " or ".join("unset" if t is type(None) else t.__name__ for t in types)
            raise ModelError(f"option {opt!r} of model {meta.spec!r} must be {want}, got {value!r}")
        if opt in meta.options or ANY_OPTION in meta.options or opt in UNIVERSAL_OPTIONS:
            if opt not in OPTION_DEFAULTS or value != OPTION_DEFAULTS[opt]:
                out[opt] = value
            continue
        if opt in OPTION_DEFAULTS and value == OPTION_DEFAULTS[opt]:
            continue  # not set
        accepts = ", ".join(meta.options) or "no options"
        raise ModelError(
            f"option {opt!r} does not apply to model {meta.spec!r} (it accepts: {accepts}); "
            "models that take different options go in separate runs or plan model entries"
        )
    if options.get("layers") is not None:  # values, duplicates, and not with ``layer``
        check_layers(options["layers"], options.get("layer", -1))
    return out


def check_layers(layers: Sequence[int] | None, layer: int = -1) -> tuple[int, ...] | None:
    """The ``layers`` option as a tuple (None: not set), checked before any model loads.

    ``layers`` and a non-default ``layer`` cannot both be set: they would disagree on which
    layer the bare model key holds.
    """
    if layers is None:
        return None
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Sequence):
        raise ModelError(f"layers must be a list of ints, got {layers!r}")
    out = tuple(layers)
    if not out:
        raise ModelError("layers must name at least one hidden layer, got an empty list")
    bad = [x for x in out if isinstance(x, bool) or not isinstance(x, numbers.Integral)]
    if bad:
        raise ModelError(f"layers must be ints, got {bad[0]!r} in {list(out)}")
    out = tuple(int(x) for x in out)
    dup = sorted({x for x in out if out.count(x) > 1})
    if dup:
        raise ModelError(f"layers lists {dup[0]} twice: {list(out)}")
    if layer != -1:
        raise ModelError(f"give layer ({layer}) or layers ({list(out)}), not both")
    return out
