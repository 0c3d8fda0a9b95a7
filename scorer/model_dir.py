"""The entailment model directory: where it lives, what it holds, and its checksum check.

A model directory holds `model.onnx`, `tokenizer.json`, `labels.json` (the
label map and input facts) and `MANIFEST.json` (the SHA-256 of each of those).
The scorer refuses a directory whose files do not match their manifest, so a
truncated download or an edited file can never silently change labels: every
file is checked (`verify`) before the model is opened, and labels.json, which
turns cached logits into verdicts, before any use (`identify`). The model's
identity everywhere (labels, cache keys) is the SHA-256 of the manifest's
bytes, which covers every file at once.

Only the standard library is used here, so `seam.py score` can decide whether
the entailment tier can run before importing onnxruntime.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.files import sha256_file as file_sha256
from common.records import shown

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MODEL_DIR = ROOT / "models" / "deberta-large-mnli"
ENV_VAR = "SEAM_NLI_MODEL"
MANIFEST = "MANIFEST.json"
REQUIRED_FILES = ("model.onnx", "tokenizer.json", "labels.json")
ENTAILMENT = "ENTAILMENT"
MAX_LENGTH = 4096  # tokens; DeBERTa takes 512: a sane cap, far below what the tokenizer or numpy overflow at


@dataclass(frozen=True)
class ModelInfo:
    """What `labels.json` says about the model, plus the verified checksum."""

    directory: Path
    sha256: str  # SHA-256 of MANIFEST.json, which lists the SHA-256 of every file
    labels: tuple[str, ...]  # label names by output index
    entailment_index: int
    max_length: int  # longest token sequence the model accepts, specials included
    pad_token_id: int


def locate(explicit: str | os.PathLike | None = None) -> Path | None:
    """The model directory to use, or None when there is none (the tier then does not run).

    An explicit path (the `--model-dir` option or `$SEAM_NLI_MODEL`) must exist:
    the user asked for it, so its absence is an error, not a silent skip.
    The default location may be absent: the model is an optional download.
    """
    chosen = explicit or os.environ.get(ENV_VAR)
    if chosen:
        path = Path(chosen)
        if not path.is_dir():
            source = "--model-dir" if explicit else f"${ENV_VAR}"
            raise UserError(f"{path}: no such model directory (from {source}); "
                            "create it with 'python seam.py nli-export'")
        return path
    return DEFAULT_MODEL_DIR if DEFAULT_MODEL_DIR.is_dir() else None


def write_manifest(directory: Path) -> str:
    """Write MANIFEST.json for the required files; return its SHA-256 (the model's identity)."""
    files = {name: file_sha256(directory / name) for name in REQUIRED_FILES}
    jsonl.write(directory / MANIFEST, [{"files": files}])
    return file_sha256(directory / MANIFEST)


def verify(directory: str | os.PathLike) -> ModelInfo:
    """Check every file against MANIFEST.json and read labels.json; refuse any mismatch.

    Hashing model.onnx (1.6 GB) takes seconds, so this runs only before the
    model is opened (scorer.nli.load), never for a rescore the cache answers.
    """
    return _checked(Path(directory), None)


def identify(directory: str | os.PathLike) -> ModelInfo:
    """The model's identity and labels, checking only MANIFEST.json and labels.json (both small).

    Enough to turn cached logits into verdicts: the cache is keyed by the
    manifest's SHA-256, so a cached pair was computed by the model the manifest
    names, whatever model.onnx holds now. The model file itself is checked by
    `verify` when it is first needed.
    """
    return _checked(Path(directory), ("labels.json",))


def _checked(directory: Path, only: tuple[str, ...] | None) -> ModelInfo:
    """Check the files of the manifest (or `only` those) against it, then read labels.json."""
    manifest_path = directory / MANIFEST
    if not manifest_path.is_file():
        raise UserError(f"{manifest_path}: missing; a model directory needs {MANIFEST} "
                        "(made by 'python seam.py nli-export')")
    manifest = _read_json(manifest_path)
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise UserError(f"{manifest_path}: expected {{\"files\": {{name: sha256}}}}")
    missing = [name for name in REQUIRED_FILES if name not in files]
    if missing:
        raise UserError(f"{manifest_path}: does not list {', '.join(missing)}")
    for name, expected in sorted(files.items()):
        if only is not None and name not in only:
            continue
        path = directory / name
        if not path.is_file():
            raise UserError(f"{path}: listed in {MANIFEST} but missing")
        actual = file_sha256(path)
        if actual != expected:
            raise UserError(f"{path}: SHA-256 {actual} does not match {MANIFEST} ({expected}); "
                            "the file changed or is incomplete; re-run 'python seam.py nli-export'")
    return _model_info(directory, file_sha256(manifest_path))


def _model_info(directory: Path, sha256: str) -> ModelInfo:
    path = directory / "labels.json"
    info = _read_json(path)
    try:
        id2label = info["id2label"]
        labels = tuple(str(id2label[str(i)]).upper() for i in range(len(id2label)))
        max_length, pad_token_id = info["max_length"], info["pad_token_id"]
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{path}: expected id2label (\"0\".. \"N-1\"), max_length and pad_token_id "
                        f"({type(exc).__name__}: {exc})") from None
    if not _integer(max_length) or not 1 <= max_length <= MAX_LENGTH:
        raise UserError(f"{path}: key 'max_length' is {shown(max_length)}, expected an integer from 1 to "
                        f"{MAX_LENGTH} (the longest token sequence the model accepts)")
    if not _integer(pad_token_id) or pad_token_id < 0:  # its upper bound is the tokenizer's (scorer.nli.load)
        raise UserError(f"{path}: key 'pad_token_id' is {shown(pad_token_id)}, expected an integer >= 0 "
                        "(a token id)")
    if ENTAILMENT not in labels:
        raise UserError(f"{path}: no {ENTAILMENT} label in {list(labels)}")
    return ModelInfo(directory, sha256, labels, labels.index(ENTAILMENT), max_length, pad_token_id)


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read_json(path: Path) -> dict:
    return jsonl.load_file(path)
