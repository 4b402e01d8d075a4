"""One type-checking system (issue 20): the adapter options, the model catalogue and the task
catalogue are checked with :mod:`geneb.constraints`, and a wrong type or a wrong value gives
one line that names where (model / file and entry), the key, what was expected and what came.

The expected messages are written out by hand, so a change of wording or of where the check
happens fails here.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from geneb.constraints import (
    POSITIVE_INT,
    TEXT,
    ListOf,
    MappingOf,
    Nullable,
    ParamError,
    StrOptions,
)
from geneb.errors import GenebError, ModelError, TaskError
from geneb.models import catalogue as cat
from geneb.models.registry import check_options, get_model_meta
from geneb.tasks.catalogue import CATALOGUE_FILE, load_task_catalogue

POOLINGS = "'mean', 'mean_nonspecial', 'cls', 'max', 'last'"


def _one_line(err: pytest.ExceptionInfo[BaseException]) -> str:
    msg = str(err.value)
    assert "\n" not in msg
    return msg


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("max_length", "512", "expected None or a positive int, got '512'"),  # type
        ("max_length", 0, "expected None or a positive int, got 0"),  # value
        ("trust_remote_code", "false", "expected a bool (true or false), got 'false'"),
        ("pooling", 1, f"expected one of {POOLINGS}, got 1"),
        ("pooling", "avg", f"expected one of {POOLINGS}, got 'avg'"),
        ("layers", (1, "2"), "expected an int, got '2'"),
    ],
)
def test_model_options(option: str, value: object, message: str) -> None:
    meta = get_model_meta("GROVER")
    with pytest.raises(ModelError) as e:
        check_options(meta, {option: value})
    where = f"option {option!r} of model 'GROVER'"
    if option == "layers":
        where += "[1]"  # the entry of the list
    assert _one_line(e) == f"{where}: {message}"


def _models_entry() -> dict:
    raw = copy.deepcopy(cat.lookup("AgroNT").to_json())
    for key in ("checked", "tokenization_class"):
        raw.pop(key)
    raw["sources"].pop("tokenization_class", None)
    return raw


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("n_params", "1B", "expected null or a positive int, got '1B'"),  # type
        ("n_params", 0, "expected null or a positive int, got 0"),  # value
        ("loader", ["transformers"], "expected null or one of 'transformers', 'package', 'external', "
                                     "got ['transformers']"),
        ("loader", "pip", "expected null or one of 'transformers', 'package', 'external', got 'pip'"),
        ("revision", "main", "expected null or a full 40-hex commit, got 'main'"),
    ],
)
def test_model_catalogue(key: str, value: object, message: str) -> None:
    raw = _models_entry()
    assert cat.parse_catalogue([raw])[0].name == "AgroNT"  # the unedited entry passes
    raw[key] = value
    with pytest.raises(GenebError) as e:
        cat.parse_catalogue([raw], where="mine.json")
    assert _one_line(e) == f"mine.json: entry 0 ('AgroNT'): {key}: {message}"


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("n_train", "10", "expected null or a non-negative int, got '10'"),  # type
        ("n_train", -1, "expected null or a non-negative int, got -1"),  # value
        ("kind", 3, "expected one of 'classification', 'variants', got 3"),
        ("kind", "regression", "expected one of 'classification', 'variants', got 'regression'"),
        ("license", ["MIT"], "expected null or a string, got ['MIT']"),
    ],
)
def test_task_catalogue(tmp_path: Path, key: str, value: object, message: str) -> None:
    entry = json.loads(CATALOGUE_FILE.read_text())["tasks"][0]
    entry[key] = value
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [entry]}))
    with pytest.raises(TaskError) as e:  # what the callers of the catalogue catch
        load_task_catalogue(path)
    where = f"task catalogue {path.resolve()} entry 1 ({entry['name']})"
    assert _one_line(e) == f"{where}: {key}: {message}"


def test_nullable_and_mapping() -> None:
    """The two constraints the JSON files needed, against hand-written cases."""
    count = Nullable(POSITIVE_INT)
    assert count.check(None, "n") is None and count.check(3, "n") == 3
    assert count.is_satisfied_by(None) and not count.is_satisfied_by(True)
    with pytest.raises(ParamError, match=r"^n: expected null or a positive int, got True$"):
        count.check(True, "n")
    caps = Nullable(ListOf(StrOptions(("a", "b")), min_len=0, scalar_ok=False))
    assert caps.check([], "caps") == [] and caps.check(("a",), "caps") == ["a"]
    with pytest.raises(ParamError, match=r"^caps\[1\]: expected one of 'a', 'b', got 'c'$"):
        caps.check(["a", "c"], "caps")  # the entry is named
    urls = MappingOf(StrOptions(("x",)), TEXT)
    assert urls.check({"x": "u"}, "src") == {"x": "u"}
    with pytest.raises(ParamError, match=r"^src key: expected one of 'x', got 'y'$"):
        urls.check({"y": "u"}, "src")
    with pytest.raises(ParamError, match=r"^src\['x'\]: expected a string, got 1$"):
        urls.check({"x": 1}, "src")
    with pytest.raises(ParamError, match=r"^src: expected an object of .*, got \['x'\]$"):
        urls.check(["x"], "src")
