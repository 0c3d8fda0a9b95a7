#!/usr/bin/env python3
"""Make tests/fixtures/tiny-deberta: a randomly initialised DeBERTa v1 NLI model, a few hundred KB.

The real entailment model (microsoft/deberta-large-mnli, ~1.6 GB) cannot be
downloaded where the tests run, so the tests exercise the scorer's real loading
and inference code on this tiny model of the same architecture instead:
relative (c2p + p2c) attention, no absolute position input, no token types,
three NLI labels, a byte-level BPE tokenizer with the [CLS] A [SEP] B [SEP]
pair template. It goes through the same export code as `seam.py nli-export`.

The script also records the torch logits of a few sentence pairs, which the
tests compare with onnxruntime's. Weights are drawn with a fixed seed and
scaled up from the usual initialisation so that logits are of order one and a
1e-5 comparison means something.

Development only: needs torch and transformers (see the pins in the scorer's
report / requirements-export.txt). Run from the repository root:

    python scripts/make_tiny_nli_fixture.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import jsonl  # noqa: E402
from scorer import export  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "tiny-deberta"
SEED = 20240601
VOCAB_SIZE = 420
SPECIAL_TOKENS = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]  # ids 0..4, as in DeBERTa's vocabulary
LABELS = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}  # deberta-large-mnli's order

# A small fixed corpus for the BPE merges: the kind of text the scorer feeds the model.
CORPUS = [
    "Here is the revised text with the typos fixed.",
    "This goes to the whole team after lunch, so keep it short.",
    "The committee met on Tuesday and approved the new budget for the library.",
    "Elizabeth walked to Netherfield through the wet fields and arrived with muddy stockings.",
    "We propose a summarisation model that reads the whole paper before writing the abstract.",
    "Python lists are mutable sequences; tuples cannot be changed after they are created.",
    "def add(a, b):\n    # return the sum of two numbers\n    return a + b",
    "Note: the report will be shared with the whole department next week.",
    "The river flooded the lower town twice in the nineteenth century.",
    "I left out your remark about the newsletter because it is not part of the text.",
    "Hello World",
]

# Pairs whose torch logits the tests compare with onnxruntime's: short and long,
# longer than the export's example batch, and with non-ASCII text.
PAIRS = [
    ("Hello", "World"),
    ("The cat sat on the mat.", "A cat is sitting."),
    ("This goes to the whole team after lunch.", "The text will be shared with the team."),
    ("Note: the report will be shared with the whole department next week, after the committee "
     "has approved the budget for the library and the river stopped flooding the lower town.",
     "The report is shared widely."),
    ("Elizabeth walked to Netherfield through the wet fields — “muddy”, said Miss Bingley.",
     "Someone's stockings were muddy."),
    ("x", "y"),
]


def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(CORPUS, trainer=trainer)
    return export.pair_tokenizer(tokenizer.to_str())


def build_model(tokenizer):
    """Random weights, then the classifier bias shifted so the three labels all occur.

    A random network puts nearly every input in one class; centring the logits
    on the corpus pairs makes the argmax vary, so the tests see ENTAILMENT and
    the other labels come out of the real inference path.
    """
    import torch
    from transformers import DebertaConfig, DebertaForSequenceClassification

    torch.manual_seed(SEED)
    config = DebertaConfig(
        vocab_size=tokenizer.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=128, type_vocab_size=0,
        relative_attention=True, max_relative_positions=-1, pos_att_type=["c2p", "p2c"],
        position_biased_input=False, hidden_act="gelu", pooler_hidden_act="gelu", pooler_hidden_size=32,
        pooler_dropout=0.0, layer_norm_eps=1e-7, pad_token_id=0,
        num_labels=3, id2label=LABELS, label2id={v: k for k, v in LABELS.items()},
    )
    model = DebertaForSequenceClassification(config).eval()
    generator = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, parameter in sorted(model.named_parameters()):
            if parameter.dim() > 1:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.3)
            elif name.endswith("LayerNorm.weight"):
                parameter.copy_(1 + 0.2 * torch.randn(parameter.shape, generator=generator))
            else:
                parameter.copy_(0.3 * torch.randn(parameter.shape, generator=generator))
        centring = [(a, b) for a in CORPUS for b in CORPUS if a != b]
        mean = torch.tensor(export.torch_logits(model, tokenizer, centring)).mean(dim=0)
        model.classifier.bias.sub_(mean)
    return model


def main() -> int:
    import torch
    import transformers

    tokenizer = build_tokenizer()
    export.check_pair_layout(tokenizer, tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]"))
    model = build_model(tokenizer)
    source = {"model": "tiny random DeBERTa v1 (scripts/make_tiny_nli_fixture.py)", "seed": SEED,
              "torch": torch.__version__, "transformers": transformers.__version__}
    result = export.write_model_dir(OUT, model, tokenizer, source=source, check_pairs=PAIRS, tolerance=1e-5)
    jsonl.write(OUT / "reference.json", [{
        "note": "torch logits of each pair alone (batch 1, no padding), recorded by "
                "scripts/make_tiny_nli_fixture.py",
        "torch": torch.__version__, "transformers": transformers.__version__,
        "pairs": [list(p) for p in PAIRS],
        "input_ids": [tokenizer.encode(p, h).ids for p, h in PAIRS],
        "logits": result["torch_logits"],
    }])
    sizes = {p.name: p.stat().st_size for p in sorted(OUT.iterdir())}
    print(f"wrote {OUT}: {sizes}; onnxruntime vs torch max |diff| {result['max_abs_diff']:.2e}; "
          f"model sha256 {result['sha256']}")
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
