"""Batch invariance, measured: how a model may be batched so no row depends on its batch-mates.

A config cannot say whether padding leaks into real tokens (HyenaDNA and other convolution or
state-space models ignore ``attention_mask``; their tokenizers often pad on the left), so
when a model is loaded geneb embeds a few sequences of different lengths alone and together
and compares. The first layout that reproduces every row alone within tolerance wins:

1. ``padded``: any lengths share a batch, padded on the tokenizer's side;
2. ``padded`` on the other side (e.g. right padding for a causal model pooled over real
   tokens: padding after the last real token cannot reach it), if the adapter can switch;
3. ``equal_length``: only sequences of identical token count share a batch (no padding);
4. ``single``: one sequence per forward pass.

Tolerance: per row, max |batched - alone| <= tolerance x RMS(alone), the row's typical size
(not its largest value: a few outlier dimensions would hide a leak in all the others). The
test runs in float32 whatever the extraction dtype (``selftest_precision``): a padding leak
is a property of the model's code, and half-precision rounding is the size of the leaks to
find (measured on CPU between a batched and a lone row: up to 0.66% of a row's RMS for a
bfloat16 tiny ESM, 2.6e-3 of its largest value), so a bf16 test could not see a 1% leak in
a dimension. Only where a float32 copy of the model does not fit is the test run in the
extraction dtype, with that dtype's tolerance (``TOLERANCE``), and provenance says so. The
decision and every measured error go into provenance (``extra.batch_invariance``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

#: max |batched - alone| / RMS(alone) allowed per row, by the dtype the test computes in, and
#: why. float32: its layout-to-layout rounding is below 1e-6 of the RMS (measured on the tiny
#: models), so 1e-4 leaves 100x room and still sees a 1% leak in any dimension of at least a
#: hundredth of the row's RMS. float16 / bfloat16 (only when no float32 copy fits): four
#: units of the format's rounding (2**-11, 2**-8), above the measured 0.66% (bf16) so exact
#: models pass; leaks smaller than that are then not detectable, and provenance says so.
TOLERANCE = {"float32": 1e-4, "float16": 4 * 2.0**-11, "bfloat16": 4 * 2.0**-8}
#: the note provenance carries when the test ran in a half precision
HALF_PRECISION_NOTE = ("self-test in {dtype} (no float32 copy of the model fitted): padding "
                       "leaks below {tol:.2g} of a row's RMS are not detectable")
#: base lengths of the mixed-length probe sequences (short, so the test costs little)
MIXED_LENGTHS = (5, 12, 31, 77, 160)
EQUAL_LENGTH = 48
N_EQUAL = 8
SEED = 20261130


@dataclass(frozen=True)
class BatchPolicy:
    """How the runner may batch a model, and the measurements that decided it."""

    mode: str  # "padded", "equal_length" or "single"
    padding_side: str | None  # side used in "padded" mode (None: the adapter's own)
    tolerance: float
    errors: dict[str, float] = field(default_factory=dict)  # layout -> worst row error
    note: str = ""

    @property
    def same_length_only(self) -> bool:
        return self.mode == "equal_length"

    @property
    def one_per_batch(self) -> bool:
        return self.mode == "single"

    def describe(self) -> dict[str, Any]:
        """The provenance record (``extra.batch_invariance``)."""
        out: dict[str, Any] = {
            "mode": self.mode,
            "padding_side": self.padding_side,
            "tolerance": self.tolerance,
            "max_rel_error": {k: float(f"{v:.3g}") for k, v in self.errors.items()},
        }
        if self.note:
            out["note"] = self.note
        return out


def probe_sequences() -> tuple[list[str], list[str]]:
    """(mixed-length, equal-length) DNA probe sequences, the same on every run."""
    rng = np.random.default_rng(SEED)
    bases = np.array(list("ACGT"))
    mixed = ["".join(rng.choice(bases, n)) for n in MIXED_LENGTHS]
    equal = ["".join(rng.choice(bases, EQUAL_LENGTH)) for _ in range(N_EQUAL)]
    return mixed, equal


def row_errors(batched: np.ndarray, alone: np.ndarray) -> np.ndarray:
    """Per row: max |batched - alone| / RMS(alone) (0 for an all-zero reference row)."""
    b = np.asarray(batched, dtype=np.float64)
    a = np.asarray(alone, dtype=np.float64)
    diff = np.abs(b - a).max(axis=1)
    scale = np.sqrt((a * a).mean(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.where(scale > 0, diff / scale, np.where(diff > 0, np.inf, 0.0))
    return np.nan_to_num(err, nan=np.inf)


def tolerance_for(dtype: str) -> float:
    """The tolerance of a self-test computed in ``dtype`` (``TOLERANCE``)."""
    return TOLERANCE.get(dtype, TOLERANCE["bfloat16"])


@contextlib.contextmanager
def selftest_precision(model: Any, dtype: str) -> Iterator[str]:
    """The torch ``model`` (weights in ``dtype``) in float32 for the block, then every
    floating parameter and buffer back in the dtype it had (a round trip through float32 is
    exact; modules a class keeps in float32 stay so); yields the dtype the test computes
    in: "float32", or ``dtype`` itself when a float32 copy does not fit in memory."""
    if dtype == "float32":
        yield dtype
        return
    import torch

    tensors = [t for t in [*model.parameters(), *model.buffers()] if t.is_floating_point()]
    before = [t.dtype for t in tensors]

    def restore() -> None:
        for t, d in zip(tensors, before, strict=True):
            t.data = t.data.to(d)

    try:
        for t in tensors:
            t.data = t.data.to(torch.float32)
    except (torch.OutOfMemoryError, MemoryError):
        restore()
        yield dtype
        return
    try:
        yield "float32"
    finally:
        restore()


def choose_policy(
    mixed: Sequence[T],
    equal: Sequence[T],
    embed: Callable[[Sequence[T], str | None], np.ndarray],
    sides: Sequence[str | None],
    tolerance: float,
) -> BatchPolicy:
    """Run the self-test; ``embed(items, side)`` embeds ``items`` as ONE forward batch.

    ``mixed`` must hold items of at least two different token counts and ``equal`` items of
    one token count; ``sides`` lists the padding sides to try, the adapter's own first.
    """
    errors: dict[str, float] = {}
    own = sides[0]
    alone_mixed = np.vstack([embed([x], own) for x in mixed])
    if len(mixed) >= 2:
        for side in sides:
            key = f"padded_{side}" if side else "padded"
            err = float(row_errors(embed(mixed, side), alone_mixed).max())
            errors[key] = err
            if err <= tolerance:
                return BatchPolicy("padded", side, tolerance, errors)
    note = "" if len(mixed) >= 2 else "no two probe sequences of different token counts"
    if len(equal) >= 2:
        alone_equal = np.vstack([embed([x], own) for x in equal])
        err = float(row_errors(embed(equal, own), alone_equal).max())
        errors["equal_length"] = err
        if err <= tolerance:
            return BatchPolicy("equal_length", None, tolerance, errors, note)
    return BatchPolicy("single", None, tolerance, errors, note)


def generic_policy(embedder: Any, tolerance: float = TOLERANCE["float32"]) -> BatchPolicy:
    """The self-test through ``embedder.embed`` alone (plugins, k-mers): padding is theirs."""
    mixed, equal = probe_sequences()

    def embed(seqs: Sequence[str], side: str | None) -> np.ndarray:
        return np.asarray(embedder.embed(list(seqs)), dtype=np.float32)

    return choose_policy(mixed, equal, embed, [None], tolerance)


def policy_of(embedder: Any) -> BatchPolicy:
    """The embedder's own measured policy (``batch_policy``), else the generic self-test.

    The generic result is cached on the embedder when it allows attributes.
    """
    policy = getattr(embedder, "batch_policy", None)
    if isinstance(policy, BatchPolicy):
        return policy
    policy = generic_policy(embedder)
    try:
        embedder.batch_policy = policy
    except (AttributeError, TypeError):
        pass
    return policy
