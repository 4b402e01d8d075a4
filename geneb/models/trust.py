"""The trust boundary: no code from a model folder runs unless the user asked for it.

A model folder (or a hub snapshot) can make transformers import its own Python files in
several ways: an ``auto_map`` entry under any key, in ``config.json`` or in
``tokenizer_config.json``; a ``model_type`` transformers does not know; a tokenizer class
transformers does not ship. geneb reads those files as plain JSON *before* calling
transformers and refuses, naming the model and the reason, unless ``trust_remote_code=True``
was given for that model. Every transformers call then also gets ``trust_remote_code``
explicitly (never left to a prompt or a default), so this check is not the only guard.
Loading such a model with a built-in class instead would silently give wrong embeddings,
so there is no fallback.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from geneb.errors import ModelError
from geneb.models.packages import provided_by_package, provided_tokenizer_class

#: JSON files transformers reads when loading a model, a tokenizer or a processor.
CODE_BEARING_FILES = (
    "config.json",
    "tokenizer_config.json",
    "processor_config.json",
    "preprocessor_config.json",
)


class TrustOptionError(ModelError, TypeError):
    """``trust_remote_code`` was given as something other than a bool (e.g. the string "false")."""


def check_trust_flag(value: Any, where: str = "trust_remote_code") -> bool:
    """``value`` itself if it is a real bool; anything else (``"false"``, 0, None) is refused.

    ``bool("false")`` is True: a string must never switch code execution on.
    """
    if isinstance(value, bool):
        return value
    raise TrustOptionError(
        f"{where} must be a bool (True or False), got {type(value).__name__} {value!r}"
    )


def trusted_models(value: Any, models: Sequence[Any],
                   where: str = "trust_remote_code") -> list[bool]:  # fmt: skip
    """Per model of ``models``, whether its own code may run.

    Parameters
    ----------
    value : bool or list of str
        A bool applies to every model; a list names the models (as given in ``models``)
        whose code may run, and only those: trust is never given to a model not named.
    models : sequence
        The model specs (strings) or built embedders of one call.
    where : str
        The parameter's name in messages.

    Returns
    -------
    list of bool
        One flag per model, in order.
    """
    if isinstance(value, bool):
        return [value] * len(models)
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        names = [m for m in models if isinstance(m, str)]
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise TrustOptionError(
                f"{where}: {unknown[0]!r} is not one of the models given "
                f"({', '.join(map(repr, names)) or 'none'}); name a model whose own code may run",
                param=where,
            )
        return [isinstance(m, str) and m in set(value) for m in models]
    raise TrustOptionError(
        f"{where} must be a bool or a list of the models whose code may run, got "
        f"{type(value).__name__} {value!r}"
    )


def _read_json(path: Path, source: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelError(f"model {source!r}: cannot read {path.name} as JSON: {e}") from e
    if not isinstance(data, dict):
        raise ModelError(
            f"model {source!r}: {path.name} must hold a JSON object, got {type(data).__name__}"
        )
    return data


def _known_model_type(model_type: str) -> bool:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return model_type in CONFIG_MAPPING_NAMES


def _known_tokenizer_class(name: str) -> bool:
    from transformers.models.auto.tokenization_auto import tokenizer_class_from_name

    try:
        if tokenizer_class_from_name(name) is not None:
            return True
        base = name.removesuffix("Fast")
        return base != name and tokenizer_class_from_name(base) is not None
    except Exception:  # an odd name must not turn into "known"
        return False


def custom_code_reasons(folder: Path, source: str) -> list[str]:
    """Why loading ``folder`` would import the folder's own code (empty: it would not)."""
    reasons: list[str] = []
    for fname in CODE_BEARING_FILES:
        path = folder / fname
        if not path.is_file():
            continue
        data = _read_json(path, source)
        auto_map = data.get("auto_map")
        if "auto_map" in data and not isinstance(auto_map, dict):
            raise ModelError(
                f"model {source!r}: {fname} auto_map must be a JSON object (or absent), got "
                f"{json.dumps(auto_map)}"
            )
        if auto_map:
            keys = sorted(auto_map) if isinstance(auto_map, dict) else [str(auto_map)]
            reasons.append(f"{fname} auto_map {', '.join(keys)}")
        if fname == "config.json":
            mt = data.get("model_type")
            if isinstance(mt, str) and mt and provided_by_package(mt):
                pass  # an installed package's classes (geneb.models.packages), not folder code
            elif isinstance(mt, str) and mt and not _known_model_type(mt):
                reasons.append(f"config.json model_type {mt!r} is not a transformers model")
        tc = data.get("tokenizer_class")
        known = _known_tokenizer_class(tc) if isinstance(tc, str) and tc else True
        if not known and not provided_tokenizer_class(str(tc)):  # LucaOne's: its package
            reasons.append(f"{fname} tokenizer_class {tc!r} is not a transformers tokenizer")
    return reasons


def enforce_trust(folder: Path, source: str, trust_remote_code: bool) -> list[str]:
    """Refuse (before transformers is called) a model that needs code the user did not allow.

    Returns the reasons found (recorded in provenance when the user did trust the model).
    """
    reasons = custom_code_reasons(folder, source)
    if reasons and not trust_remote_code:
        raise ModelError(
            f"model {source!r} needs its own Python code ({'; '.join(reasons)}). geneb runs "
            "no code from a model folder unless asked for that model: read the code, then "
            "pass trust_remote_code=True (trust_remote_code = true for it in a plan)"
        )
    return reasons


def register_package_classes(folder: Path, source: str) -> None:
    """Register the classes of the package that provides this folder's ``model_type`` (GPN).

    Called by the loader after :func:`enforce_trust`, before transformers reads the config.
    """
    from geneb.models.packages import register_package_model_type

    path = folder / "config.json"
    if not path.is_file():
        return
    mt = _read_json(path, source).get("model_type")
    if isinstance(mt, str) and provided_by_package(mt):
        register_package_model_type(mt, source)
