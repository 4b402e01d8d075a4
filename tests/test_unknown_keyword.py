"""An unknown keyword to a public function (``import geneb``'s exports) is a ``GenebError``
naming the function and the nearest valid parameter (difflib), before any work."""

from __future__ import annotations

import difflib
import inspect

import pytest

import geneb
from geneb.constraints import ArgumentError

FUNCTIONS = [n for n in geneb.__all__
             if callable(getattr(geneb, n)) and not isinstance(getattr(geneb, n), type)]


def _takes_options(name: str) -> bool:
    """``get_embedder(spec, **options)``: the model's options are checked by the model."""
    return any(p.kind is p.VAR_KEYWORD
               for p in inspect.signature(getattr(geneb, name)).parameters.values())


def _parameters(name: str) -> list[str]:
    sig = inspect.signature(getattr(geneb, name))
    return [p.name for p in sig.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def test_every_exported_function_is_declared() -> None:
    """The check lives in ``geneb.constraints.validate_params``: every export goes through it."""
    assert len(FUNCTIONS) >= 10
    for name in FUNCTIONS:
        target = getattr(getattr(geneb, name), "__wrapped__", None)
        fn = getattr(geneb, name)
        declared = hasattr(fn, "__geneb_params__") or hasattr(target, "__geneb_params__")
        assert declared, f"{name} is not declared with geneb.constraints.validate_params"


@pytest.mark.parametrize("name", [n for n in FUNCTIONS if not _takes_options(n)])
def test_a_misspelt_keyword_names_the_function_and_the_parameter(name: str) -> None:
    params = _parameters(name)
    wanted = params[-1]
    typo = wanted[:-1] + ("x" if wanted[-1] != "x" else "y") + "z"  # one edit and one extra
    assert difflib.get_close_matches(typo, params, n=1, cutoff=0.5) == [wanted]  # reference
    with pytest.raises(geneb.GenebError) as e:
        getattr(geneb, name)(**{typo: 1})
    assert str(e.value) == (f"{name}() got an unexpected keyword argument {typo!r}; "
                            f"did you mean {wanted!r}?")
    assert isinstance(e.value, TypeError)  # still what Python itself would raise


@pytest.mark.parametrize("name", [n for n in FUNCTIONS if _takes_options(n)])
def test_a_misspelt_model_option_names_the_options(name: str) -> None:
    with pytest.raises(geneb.GenebError, match=r"^option 'devcie' does not apply to model "
                       r"'kmer-3' \(it accepts: device, trust_remote_code\); did you mean "
                       r"'device'\?"):
        getattr(geneb, name)("kmer-3", devcie="cpu")
    assert difflib.get_close_matches("devcie", ["device", "trust_remote_code"]) == ["device"]


def test_the_issue_example() -> None:
    with pytest.raises(ArgumentError, match=r"^run_probes\(\) got an unexpected keyword "
                       r"argument 'C'; did you mean 'Cs'\?$"):
        geneb.run_probes("no-store", "no-table", C=[0.1, 1])


def test_a_keyword_far_from_every_parameter_lists_them() -> None:
    with pytest.raises(ArgumentError, match=r"^open_store\(\) got an unexpected keyword "
                       r"argument 'zzzzzz'; expected one of \['path', 'mode'\]$"):
        geneb.open_store("s.zarr", zzzzzz=1)


def test_a_missing_argument_names_the_function() -> None:
    with pytest.raises(ArgumentError, match=r"^read_results\(\): missing a required "
                       r"argument: 'path'$"):
        geneb.read_results()
