"""A small character-level BERT built on the fly, offline, for the demo's ``random:`` control.

The demo must run on a fresh machine with no model hub, so it cannot download a DNA model.
It builds a tokenizer (one token per base, [CLS] ... [SEP]) and a 2-layer BERT with seeded
random weights and saves both with ``save_pretrained``; the folder then loads like any
transformers model and goes through the same ``hf``/``random:`` adapters as real models.
"""

from __future__ import annotations

from pathlib import Path

BASES = ("A", "C", "G", "T", "N")
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def build_char_bert(
    folder: str | Path,
    *,
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 4,
    max_length: int = 512,
    seed: int = 0,
) -> Path:
    """Write a tokenizer + randomly initialised BertModel to ``folder`` (idempotent)."""
    import torch
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    folder = Path(folder)
    if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    vocab = {t: i for i, t in enumerate(SPECIALS)}
    for b in BASES:
        vocab[b] = len(vocab)
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.normalizer = normalizers.Sequence([normalizers.Replace(b.lower(), b) for b in BASES])
    tk.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tk.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tk,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=max_length,
    )
    cfg = BertConfig(  # type: ignore[no-untyped-call]
        vocab_size=len(vocab),
        hidden_size=hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=hidden_size * 2,
        max_position_embeddings=max_length + 2,
        pad_token_id=vocab["[PAD]"],
    )
    from transformers.utils import logging as hf_logging

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertModel(cfg, add_pooling_layer=False)  # type: ignore[no-untyped-call]
    tok.save_pretrained(folder)
    was_enabled = hf_logging.is_progress_bar_enabled()
    # quiet: the demo prints its own steps
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        model.save_pretrained(folder)
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
    return folder
