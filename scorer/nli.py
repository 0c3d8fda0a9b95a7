"""Run the entailment model: onnxruntime + tokenizers, fixed threads, batched, deterministic.

Determinism is the point. The session is pinned: an explicit intra-op thread
count, one inter-op thread, sequential execution. Pairs are batched in a
fixed order (by token length, then by the pair's text), and each batch is padded
to its longest pair with an attention mask, so padded positions take no part
in a real token's attention. The tests check that a pair's logits are the same
bits alone or inside a padded batch, with 1 or 2 threads and across repeated
runs: that is what lets the cache store logits and lets a rescore with a
partly filled cache give the same labels.

The same loading code serves the real model and the tiny test fixture.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from common.errors import UserError
from scorer import model_dir

DEFAULT_THREADS = 2
DEFAULT_BATCH_SIZE = 8
INPUT_NAMES = ("attention_mask", "input_ids")


@dataclass(frozen=True)
class NliSession:
    """A verified model directory, opened: checksum, labels, tokenizer and onnxruntime session."""

    info: model_dir.ModelInfo
    tokenizer: object  # tokenizers.Tokenizer with truncation set, no padding
    session: object  # onnxruntime.InferenceSession
    threads: int

    @property
    def sha256(self) -> str:
        return self.info.sha256


def session_options(threads: int):
    """onnxruntime options that make a run's numbers independent of scheduling."""
    import onnxruntime as ort

    if threads < 1:
        raise UserError(f"--threads must be at least 1, got {threads}")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Basic optimisations only rewrite the graph without changing arithmetic (constant
    # folding, dead nodes); the fusions of the higher levels swap in other kernels.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.log_severity_level = 3
    return options


def load(directory: str | os.PathLike, threads: int = DEFAULT_THREADS) -> NliSession:
    """Verify `directory` against its manifest, then open the tokenizer and the ONNX session."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    info = model_dir.verify(directory)
    directory = Path(directory)
    # The files match their manifest, but the manifest may have been written for files that are not a
    # model at all: what the libraries refuse is one line naming the file, not their traceback.
    try:
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    except Exception as exc:  # tokenizers raises a bare Exception
        raise UserError(f"{directory / 'tokenizer.json'}: not a tokenizer the tokenizers library can read "
                        f"({_first_line(exc)})") from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    labels_json = directory / "labels.json"
    vocabulary = tokenizer.get_vocab_size(with_added_tokens=True)
    if info.pad_token_id >= vocabulary:  # numpy would overflow, or onnxruntime's embedding lookup fail mid-run
        raise UserError(f"{labels_json}: key 'pad_token_id' is {info.pad_token_id}, not a token of tokenizer.json "
                        f"(0 to {vocabulary - 1})")
    specials = len(tokenizer.encode("", "").ids)  # [CLS] [SEP] [SEP]: truncation cannot cut these
    if info.max_length <= specials:  # the tokenizers library would then silently not truncate at all
        raise UserError(f"{labels_json}: key 'max_length' is {info.max_length}, which leaves no room for text "
                        f"after the {specials} special tokens of a pair")
    tokenizer.enable_truncation(max_length=info.max_length, strategy="longest_first")
    options = session_options(threads)
    try:
        session = ort.InferenceSession(str(directory / "model.onnx"), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's InvalidProtobuf, Fail, … share no base class but Exception
        raise UserError(f"{directory / 'model.onnx'}: not a model onnxruntime can load "
                        f"({_first_line(exc, directory / 'model.onnx')})") from None
    names = tuple(sorted(i.name for i in session.get_inputs()))
    if names != INPUT_NAMES:
        raise UserError(f"{directory / 'model.onnx'}: inputs are {list(names)}, expected {list(INPUT_NAMES)}")
    width = session.get_outputs()[0].shape[-1]
    if isinstance(width, int) and width != len(info.labels):
        raise UserError(f"{directory / 'model.onnx'}: {width} outputs but labels.json names {len(info.labels)}")
    return NliSession(info, tokenizer, session, threads)


def _first_line(exc: Exception, path: Path | None = None) -> str:
    """A library's error message as one short line: its first line, without onnxruntime's error-code
    prefix or a repeat of the file's path, cut at 100 characters."""
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    if path is not None:
        text = text.replace(f"Load model from {path} failed:", "")
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : ", "", text).strip()
    return text if len(text) <= 100 else text[:100] + "…"


def encode(nli: NliSession, pairs: list[tuple[str, str]]) -> list[list[int]]:
    """Token ids of each (premise, hypothesis): [CLS] premise [SEP] hypothesis [SEP]."""
    if not pairs:
        return []
    return [e.ids for e in nli.tokenizer.encode_batch([list(p) for p in pairs])]


def batches(encoded: list[list[int]], pairs: list[tuple[str, str]], batch_size: int) -> list[list[int]]:
    """Indices of `encoded` grouped into batches: by length then text, so the grouping is fixed."""
    if batch_size < 1:
        raise UserError(f"--batch-size must be at least 1, got {batch_size}")
    order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i]), pairs[i]))
    return [order[i: i + batch_size] for i in range(0, len(order), batch_size)]


def logits(nli: NliSession, pairs: list[tuple[str, str]], batch_size: int = DEFAULT_BATCH_SIZE):
    """Logits (float32 array, one row per pair, in the order given)."""
    import numpy as np

    encoded = encode(nli, pairs)
    out = np.zeros((len(pairs), len(nli.info.labels)), dtype=np.float32)
    for group in batches(encoded, pairs, batch_size):
        width = max(len(encoded[i]) for i in group)
        ids = np.full((len(group), width), nli.info.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(group), width), dtype=np.int64)
        for row, index in enumerate(group):
            ids[row, : len(encoded[index])] = encoded[index]
            mask[row, : len(encoded[index])] = 1
        out[group] = nli.session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    return out
