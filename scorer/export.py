"""`nli-export`: turn a DeBERTa (v1) MNLI checkpoint into the scorer's model directory.

This is the only place that touches torch and transformers, and only on a
machine with internet, once. The scorer itself runs the exported ONNX file with
onnxruntime and `tokenizers`, so scoring needs neither. The tiny test fixture
(scripts/make_tiny_nli_fixture.py) goes through the same functions, so the
tested export path is the one used for the real model.

Why the tokenizer is rebuilt here: DeBERTa v1 encodes a sentence pair as
`[CLS] A [SEP] B [SEP]`. Some tokenizer versions (transformers 5.x's
DebertaTokenizer, tokenizers' RobertaProcessing) produce the RoBERTa layout
`[CLS] A [SEP] [SEP] B [SEP]` instead, which is wrong for this model. So the
saved tokenizer.json carries an explicit pair template, and the export checks
the layout on a known pair before writing anything.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from common import jsonl
from common.errors import UserError
from scorer import model_dir

DEFAULT_MODEL = "microsoft/deberta-large-mnli"
# Verified token ids of microsoft/deberta-large(-mnli) for the pair ("Hello", "World").
KNOWN_PAIR = ("Hello", "World")
KNOWN_PAIR_IDS = {DEFAULT_MODEL: [1, 31414, 2, 10988, 2], "microsoft/deberta-large": [1, 31414, 2, 10988, 2]}
CHECK_PAIRS = (
    ("The cat sat on the mat.", "A cat is sitting."),
    ("This goes to the whole team after lunch.", "The text will be shared with the team."),
    ("Rainfall was unusually low in the spring of that year, and the harvest failed.",
     "The harvest was good."),
)
OPSET = 18


def pair_tokenizer(tokenizer_json: str, cls_token: str = "[CLS]", sep_token: str = "[SEP]"):
    """A `tokenizers.Tokenizer` from `tokenizer_json` with the DeBERTa v1 pair template.

    Padding and truncation are switched off in the saved file: the scorer sets
    truncation itself and pads by batch with an attention mask.
    """
    from tokenizers import Tokenizer, processors

    tokenizer = Tokenizer.from_str(tokenizer_json)
    ids = {token: tokenizer.token_to_id(token) for token in (cls_token, sep_token)}
    missing = [token for token, i in ids.items() if i is None]
    if missing:
        raise UserError(f"tokenizer has no {', '.join(missing)} token")
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{cls_token} $A {sep_token}",
        pair=f"{cls_token} $A {sep_token} $B {sep_token}",
        special_tokens=[(cls_token, ids[cls_token]), (sep_token, ids[sep_token])],
    )
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def check_pair_layout(tokenizer, cls_id: int, sep_id: int) -> None:
    """Refuse a tokenizer whose pair encoding is not exactly [CLS] A [SEP] B [SEP]."""
    pair = tokenizer.encode(*KNOWN_PAIR).ids
    first = tokenizer.encode(KNOWN_PAIR[0], add_special_tokens=False).ids
    second = tokenizer.encode(KNOWN_PAIR[1], add_special_tokens=False).ids
    expected = [cls_id, *first, sep_id, *second, sep_id]
    if pair != expected:
        raise UserError(f"tokenizer pair layout is {pair}, expected [CLS] A [SEP] B [SEP] = {expected}")


def export_onnx(model, path: Path, example_ids, example_mask) -> None:
    """Export a transformers sequence classifier to ONNX with dynamic batch and length.

    Inputs are `input_ids` and `attention_mask` (int64, [batch, length]); DeBERTa v1
    has no token_type_ids (type_vocab_size 0). The example batch must have at least
    two rows and two columns so that neither axis is frozen to size 1.
    Node metadata (source file paths, stack traces) is removed so the file does
    not depend on where it was made.
    """
    import onnx
    import torch

    class Logits(torch.nn.Module):
        """Just the logits, so the graph has one named output."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask).logits

    wrapped = Logits(model.eval()).eval()
    batch = torch.export.Dim("batch")
    length = torch.export.Dim("length", max=int(model.config.max_position_embeddings))
    with torch.no_grad():
        program = torch.onnx.export(
            wrapped, (example_ids, example_mask), dynamo=True, opset_version=OPSET,
            input_names=["input_ids", "attention_mask"], output_names=["logits"],
            dynamic_shapes=({0: batch, 1: length}, {0: batch, 1: length}),
        )
    proto = program.model_proto
    for node in proto.graph.node:
        node.doc_string = ""
        del node.metadata_props[:]
    proto.graph.doc_string = ""
    del proto.metadata_props[:]
    onnx.save_model(proto, str(path), save_as_external_data=False)


def torch_logits(model, tokenizer, pairs) -> list[list[float]]:
    """The torch model's logits for each pair alone (batch 1, no padding): the reference."""
    import torch

    rows = []
    with torch.no_grad():
        for premise, hypothesis in pairs:
            ids = torch.tensor([tokenizer.encode(premise, hypothesis).ids], dtype=torch.long)
            logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
            rows.append([float(x) for x in logits[0].tolist()])
    return rows


def write_model_dir(out: Path, model, tokenizer, *, source: dict, check_pairs=CHECK_PAIRS,
                    tolerance: float = 1e-3) -> dict:
    """Export `model` and `tokenizer` into `out`, check onnxruntime against torch, write the manifest.

    Everything is written to a temporary directory first and moved into place
    only when the check passes, so `out` never holds a half-made model.
    Returns what was checked: the largest logit difference and the model sha256.
    """
    import torch

    from scorer import nli

    config = model.config
    id2label = {str(i): str(config.id2label[i]) for i in range(config.num_labels)}
    pad_id = config.pad_token_id if config.pad_token_id is not None else 0
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
    try:
        tokenizer.save(str(work / "tokenizer.json"))
        jsonl.write(work / "labels.json", [{
            "id2label": id2label, "max_length": int(config.max_position_embeddings),
            "pad_token_id": int(pad_id), "source": source,
        }])
        encoded = [tokenizer.encode(p, h).ids for p, h in check_pairs[:2]]
        width = max(len(ids) for ids in encoded)
        example_ids = torch.full((len(encoded), width), pad_id, dtype=torch.long)
        example_mask = torch.zeros((len(encoded), width), dtype=torch.long)
        for row, ids in enumerate(encoded):
            example_ids[row, : len(ids)] = torch.tensor(ids)
            example_mask[row, : len(ids)] = 1
        export_onnx(model, work / "model.onnx", example_ids, example_mask)
        sha256 = model_dir.write_manifest(work)

        expected = torch_logits(model, tokenizer, check_pairs)
        session = nli.load(work, threads=1)
        actual = nli.logits(session, list(check_pairs), batch_size=len(check_pairs))
        worst = max(abs(a - e) for got, want in zip(actual.tolist(), expected, strict=True)
                    for a, e in zip(got, want, strict=True))
        if worst > tolerance:
            raise UserError(f"onnxruntime logits differ from torch by {worst:.2e} (> {tolerance}); "
                            "the export is wrong, nothing was written")
        if out.exists():
            shutil.rmtree(out)
        work.chmod(0o755)  # mkdtemp made it private
        work.rename(out)
    finally:
        if work.exists():
            shutil.rmtree(work)
    return {"max_abs_diff": worst, "sha256": sha256, "torch_logits": expected}


def run(model_name: str, out: Path, revision: str | None = None) -> int:
    """The `nli-export` command: download, rebuild the tokenizer, export, check, write."""
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError:
        raise UserError("nli-export needs torch and transformers, which the scorer itself does not: "
                        "pip install -r requirements-export.txt (on a machine with internet)") from None
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    print(f"downloading {model_name} (revision {revision or 'default'})", file=sys.stderr)
    try:
        hf_tokenizer = AutoTokenizer.from_pretrained(model_name, revision=revision)
        model = AutoModelForSequenceClassification.from_pretrained(model_name, revision=revision).eval()
    except OSError as exc:
        raise UserError(f"cannot load {model_name}: {str(exc).splitlines()[0]} (nli-export needs internet "
                        "access to huggingface.co, or --model /path/to/a/local/checkpoint)") from None
    if getattr(model.config, "model_type", None) != "deberta":
        raise UserError(f"{model_name}: model_type is {model.config.model_type!r}; nli-export "
                        "supports DeBERTa v1 ('deberta') models only")
    backend = getattr(hf_tokenizer, "backend_tokenizer", None) or getattr(hf_tokenizer, "_tokenizer", None)
    if backend is None:
        raise UserError(f"{model_name}: no fast (tokenizers) tokenizer available")
    tokenizer = pair_tokenizer(backend.to_str())
    check_pair_layout(tokenizer, tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]"))
    known = KNOWN_PAIR_IDS.get(model_name)
    if known is not None and tokenizer.encode(*KNOWN_PAIR).ids != known:
        raise UserError(f"{model_name}: {KNOWN_PAIR} encodes as {tokenizer.encode(*KNOWN_PAIR).ids}, "
                        f"expected {known}")
    source = {"model": model_name, "revision": revision, "transformers": transformers.__version__,
              "torch": sys.modules["torch"].__version__}
    print(f"exporting to {out}", file=sys.stderr)
    result = write_model_dir(Path(out), model, tokenizer, source=source)
    print(f"wrote {out}: onnxruntime matches torch within {result['max_abs_diff']:.2e}; "
          f"model sha256 {result['sha256']}")
    return 0
