"""The entailment path on the tiny DeBERTa fixture: numbers, determinism, checksum, tokenizer, cache.

tests/fixtures/tiny-deberta was made by scripts/make_tiny_nli_fixture.py with torch,
which also recorded torch's logits for a few pairs; these tests need only onnxruntime.
"""

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from common.errors import UserError
from scorer import export, model_dir, nli
from scorer.nli_cache import NliCache

FIXTURE = Path(__file__).parent / "fixtures" / "tiny-deberta"
REFERENCE = json.loads((FIXTURE / "reference.json").read_text(encoding="utf-8"))
PAIRS = [tuple(p) for p in REFERENCE["pairs"]]


@pytest.fixture(scope="module")
def one_thread():
    return nli.load(FIXTURE, threads=1)


@pytest.fixture(scope="module")
def two_threads():
    return nli.load(FIXTURE, threads=2)


def test_tokenizer_reproduces_the_recorded_input_ids(one_thread):
    assert nli.encode(one_thread, PAIRS) == REFERENCE["input_ids"]


def test_onnxruntime_logits_equal_recorded_torch_logits_within_1e_5(one_thread):
    got = nli.logits(one_thread, PAIRS, batch_size=1)
    want = np.array(REFERENCE["logits"], dtype=np.float32)
    assert got.shape == want.shape == (len(PAIRS), 3)
    assert np.abs(got - want).max() < 1e-5
    assert len(set(np.argmax(want, axis=1).tolist())) > 1, "fixture should produce more than one label"


def test_pair_layout_is_cls_a_sep_b_sep(one_thread):
    tok = one_thread.tokenizer
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    for premise, hypothesis in PAIRS:
        a = tok.encode(premise, add_special_tokens=False).ids
        b = tok.encode(hypothesis, add_special_tokens=False).ids
        assert tok.encode(premise, hypothesis).ids == [cls, *a, sep, *b, sep]
    assert (cls, sep) == (1, 2)


def test_roberta_pair_layout_is_refused_and_the_export_template_fixes_it():
    from tokenizers import Tokenizer, processors

    roberta = Tokenizer.from_file(str(FIXTURE / "tokenizer.json"))
    roberta.post_processor = processors.RobertaProcessing(("[SEP]", 2), ("[CLS]", 1))
    assert roberta.encode("Hello", "World").ids.count(2) == 3  # [CLS] A [SEP] [SEP] B [SEP]
    with pytest.raises(UserError, match="pair layout"):
        export.check_pair_layout(roberta, 1, 2)
    fixed = export.pair_tokenizer(roberta.to_str())
    export.check_pair_layout(fixed, 1, 2)
    assert fixed.encode("Hello", "World").ids.count(2) == 2


def test_model_takes_no_token_type_ids(one_thread):
    assert sorted(i.name for i in one_thread.session.get_inputs()) == ["attention_mask", "input_ids"]


def test_logits_are_bitwise_identical_across_threads_runs_and_batch_composition(one_thread, two_threads):
    alone = np.stack([nli.logits(one_thread, [pair], batch_size=1)[0] for pair in PAIRS])
    again = np.stack([nli.logits(one_thread, [pair], batch_size=1)[0] for pair in PAIRS])
    batched = nli.logits(one_thread, PAIRS, batch_size=len(PAIRS))
    threaded = nli.logits(two_threads, PAIRS, batch_size=len(PAIRS))
    reversed_batches = nli.logits(two_threads, PAIRS[::-1], batch_size=4)[::-1]
    for other in (again, batched, threaded, reversed_batches):
        assert other.tobytes() == alone.tobytes()


def test_padding_inside_a_batch_does_not_change_a_pairs_logits(one_thread):
    ids = nli.encode(one_thread, PAIRS[:2])
    short, long_ = sorted(ids, key=len)
    width = len(long_) + 7  # more padding than any batch of these pairs would need
    batch = np.zeros((2, width), dtype=np.int64)
    mask = np.zeros_like(batch)
    for row, seq in enumerate((short, long_)):
        batch[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    padded = one_thread.session.run(None, {"input_ids": batch, "attention_mask": mask})[0]
    for row, seq in enumerate((short, long_)):
        alone = one_thread.session.run(None, {"input_ids": np.array([seq]), "attention_mask": np.ones((1, len(seq)),
                                                                                                       np.int64)})[0]
        assert padded[row].tobytes() == alone[0].tobytes()


def test_long_pairs_are_truncated_to_the_models_length(one_thread):
    premise = "The river flooded the lower town twice. " * 80
    ids = nli.encode(one_thread, [(premise, "It flooded.")])[0]
    assert len(ids) == one_thread.info.max_length
    assert ids[0] == 1 and ids[-1] == 2 and ids.count(2) == 2
    assert nli.logits(one_thread, [(premise, "It flooded.")]).shape == (1, 3)


def copy_fixture(tmp_path):
    target = tmp_path / "model"
    shutil.copytree(FIXTURE, target)
    return target


def test_checksum_check_refuses_a_changed_model_file(tmp_path):
    target = copy_fixture(tmp_path)
    data = bytearray((target / "model.onnx").read_bytes())
    data[len(data) // 2] ^= 0x01
    (target / "model.onnx").write_bytes(bytes(data))
    with pytest.raises(UserError, match=r"model.onnx: SHA-256 [0-9a-f]{64} does not match MANIFEST.json"):
        nli.load(target)


def test_checksum_check_refuses_a_changed_tokenizer_missing_file_or_manifest(tmp_path):
    target = copy_fixture(tmp_path)
    (target / "tokenizer.json").write_text((FIXTURE / "tokenizer.json").read_text() + " ")
    with pytest.raises(UserError, match="tokenizer.json: SHA-256"):
        model_dir.verify(target)
    (target / "tokenizer.json").unlink()
    with pytest.raises(UserError, match="tokenizer.json: listed in MANIFEST.json but missing"):
        model_dir.verify(target)
    (target / "MANIFEST.json").unlink()
    with pytest.raises(UserError, match="MANIFEST.json: missing"):
        model_dir.verify(target)


def test_model_identity_is_the_manifest_checksum(one_thread):
    assert one_thread.sha256 == model_dir.file_sha256(FIXTURE / "MANIFEST.json")
    assert one_thread.info.labels == ("CONTRADICTION", "NEUTRAL", "ENTAILMENT")
    assert one_thread.info.entailment_index == 2


def test_locating_the_model_directory(tmp_path, monkeypatch):
    monkeypatch.delenv(model_dir.ENV_VAR, raising=False)
    monkeypatch.setattr(model_dir, "DEFAULT_MODEL_DIR", tmp_path / "absent")
    assert model_dir.locate(None) is None
    monkeypatch.setenv(model_dir.ENV_VAR, str(FIXTURE))
    assert model_dir.locate(None) == FIXTURE
    with pytest.raises(UserError, match="no such model directory"):
        model_dir.locate(tmp_path / "nowhere")


def test_cache_keys_include_the_model_checksum(tmp_path):
    cache = NliCache(tmp_path / "c.sqlite")
    cache.put("a" * 64, {("p", "h"): [0.5, 1.5, -2.0]})
    assert cache.get("a" * 64, [("p", "h"), ("q", "h")]) == {("p", "h"): [0.5, 1.5, -2.0]}
    assert cache.get("b" * 64, [("p", "h")]) == {}
    assert len(cache) == 1


def test_a_corrupt_cache_file_is_a_user_error(tmp_path):
    (tmp_path / "c.sqlite").write_bytes(b"this is not a database, just some bytes " * 10)
    with pytest.raises(UserError, match="c.sqlite: not a usable cache file"):
        NliCache(tmp_path / "c.sqlite")


def test_nli_export_says_it_needs_torch_and_transformers(monkeypatch, capsys):
    import seam

    monkeypatch.setitem(sys.modules, "torch", None)  # as if not installed
    assert seam.main(["nli-export", "--out", "unused"]) == 2
    assert "nli-export needs torch and transformers" in capsys.readouterr().err
