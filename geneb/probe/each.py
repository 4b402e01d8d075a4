"""Several probes in turn into one results table: what ``geneb probe --probe linear,mlp`` and
a plan's ``[probe] probes`` both run.

Every probe is checked with the run's backend and protocol before the first one runs, so a
combination that does not exist (``protocol="paper"`` with the MLP) is refused before any
work, not after the linear probe has run for an hour.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from geneb.constraints import ListOf, validate_params
from geneb.probe import engine
from geneb.probe.engine import PROBE_PARAMS, ProbeRunSummary
from geneb.probe.solvers import resolve_backend
from geneb.protocol import DEFAULT_PROTOCOL
from geneb.store import FeatureStore

#: ``run_each_probe``'s own parameters; the others are ``run_probes``' (checked there).
EACH_PARAMS = {
    "probes": ListOf(PROBE_PARAMS["probe"], unique=True),
    "backend": PROBE_PARAMS["backend"],
    "protocol": PROBE_PARAMS["protocol"],
}


@validate_params(EACH_PARAMS)
def check_probes(
    probes: str | Iterable[str] = ("linear",),
    backend: str = "auto",
    protocol: str = DEFAULT_PROTOCOL,
) -> list[str]:
    """Check that every probe exists with ``backend`` and ``protocol`` (and can be built here).

    Parameters
    ----------
    probes : str or iterable of str
        ``"linear"`` and/or ``"mlp"`` (a comma string accepted); each once, in order.
    backend : str
        The solver backend for every probe (``"auto"`` chooses per probe).
    protocol : str
        ``"converged"`` or ``"paper"`` (the paper protocol is the linear probe's only).

    Returns
    -------
    list of str
        The probes, in the order they run.
    """
    out = list(probes)
    for probe in out:
        resolve_backend(backend, probe, protocol)  # a ProbeError naming what does not exist
    return out


@validate_params(EACH_PARAMS)
def run_each_probe(
    store: str | os.PathLike[str] | FeatureStore,
    results: str | os.PathLike[str],
    *,
    probes: str | Sequence[str] = ("linear",),
    backend: str = "auto",
    protocol: str = DEFAULT_PROTOCOL,
    on_probe_done: Callable[[str, ProbeRunSummary, int], None] | None = None,
    **grid: Any,
) -> list[tuple[str, ProbeRunSummary]]:
    """:func:`geneb.probe.engine.run_probes` once per probe, in turn, into one results table;
    every probe is checked (:func:`check_probes`) before the first runs.

    Parameters
    ----------
    store : str, os.PathLike or FeatureStore
        The feature store holding the embeddings.
    results : str or os.PathLike
        The results table the rows are added to.
    probes : str or sequence of str
        The probes to run, in turn (default the linear probe only).
    backend, protocol : str
        As for ``run_probes``; the same for every probe.
    on_probe_done : callable, optional
        Called as ``on_probe_done(probe, summary, n_probes)`` after each probe's run.
    **grid
        The other parameters of ``run_probes`` (``models``, ``tasks``, ``shots``, ``seeds``,
        ``Cs``, ``alphas``, ``workers``, ``scheduler``, ``standardize``, ``take_all``,
        ``progress``); an unknown one is refused by ``run_probes`` before any work.

    Returns
    -------
    list of (str, ProbeRunSummary)
        Each probe with what its run did.
    """
    done: list[tuple[str, ProbeRunSummary]] = []
    checked = check_probes(probes, backend, protocol)
    for probe in checked:
        # looked up at call time: a caller (or a test) that replaces engine.run_probes is used
        summary = engine.run_probes(store, results, probe=probe, backend=backend,
                                    protocol=protocol, **grid)
        done.append((probe, summary))
        if on_probe_done is not None:
            on_probe_done(probe, summary, len(checked))
    return done
