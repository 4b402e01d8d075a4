"""A tiny BERT with its own model code (loaded with ``trust_remote_code=True``) whose forward
a test writes: for models that leak padding in ways a real checkpoint would."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

TEMPLATE = """
import torch
from transformers import BertConfig, BertModel
from transformers.modeling_outputs import BaseModelOutput


class CustomConfig(BertConfig):
    model_type = "{model_type}"


class CustomBert(BertModel):
    config_class = CustomConfig

    def __init__(self, config, add_pooling_layer=False):
        super().__init__(config, add_pooling_layer=False)

    def forward(self, input_ids=None, attention_mask=None, **kw):
{body}
        return BaseModelOutput(last_hidden_state=h)
"""


def custom_bert(models_dir: Path, dst: Path, body: str, model_type: str) -> Path:
    """A copy of ``tiny/tiny-bert-dnabert2-bpe`` at ``dst`` whose forward runs ``body``
    (Python lines that set ``h``, the last hidden state, from ``input_ids``,
    ``attention_mask`` and ``kw``)."""
    shutil.copytree(models_dir / "tiny" / "tiny-bert-dnabert2-bpe", dst)
    code = TEMPLATE.format(model_type=model_type,
                           body=textwrap.indent(textwrap.dedent(body).strip(), " " * 8))
    (dst / "custom_bert.py").write_text(code)
    cfg = json.loads((dst / "config.json").read_text())
    cfg["model_type"] = model_type
    cfg["auto_map"] = {"AutoConfig": "custom_bert.CustomConfig",
                       "AutoModel": "custom_bert.CustomBert"}
    (dst / "config.json").write_text(json.dumps(cfg))
    return dst
