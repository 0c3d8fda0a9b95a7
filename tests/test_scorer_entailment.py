"""The entailment tier inside scoring (scorer/entailment.py): the cache, and the model opened only when needed.

A rescore whose pairs are all in the cache must not hash or open the model
(seconds for the real 1.6 GB file); the first pair the cache lacks must verify
the model against its manifest before running it. Both are shown on a copy of
the tiny fixture whose model.onnx is damaged: it can neither pass its checksum
nor load, so a run that succeeds never touched it.
"""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

import seam
from common import jsonl
from common.errors import UserError
from scorer import model_dir
from scorer.entailment import ModelEntailer, argmax
from scorer.nli_cache import NliCache

FIXTURE = Path(__file__).parent / "fixtures" / "tiny-deberta"
REFERENCE = json.loads((FIXTURE / "reference.json").read_text(encoding="utf-8"))
PAIRS = [tuple(p) for p in REFERENCE["pairs"]]
SHA256 = hashlib.sha256((FIXTURE / "MANIFEST.json").read_bytes()).hexdigest()


def damaged_copy(tmp_path) -> Path:
    """The fixture with model.onnx overwritten by bytes that are not a model (the manifest is left as it was)."""
    target = tmp_path / "damaged-model"
    shutil.copytree(FIXTURE, target)
    (target / "model.onnx").write_bytes(b"not an onnx model\n" * 100)
    return target


def score_cmd(dataset, out, *extra):
    return seam.main(["score", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl"),
                      "--out", str(out), *extra])


def test_labels_with_the_entailment_model_are_identical_across_threads_and_cache_state(dataset, tmp_path):
    model = ["--model-dir", str(FIXTURE)]
    cache = ["--cache", str(tmp_path / "cache.sqlite")]
    assert score_cmd(dataset, tmp_path / "a.jsonl", *model, *cache, "--threads", "1") == 0
    assert score_cmd(dataset, tmp_path / "b.jsonl", *model, *cache, "--threads", "2", "--batch-size", "3") == 0
    assert score_cmd(dataset, tmp_path / "c.jsonl", *model, "--no-cache", "--threads", "2") == 0
    a = (tmp_path / "a.jsonl").read_bytes()
    assert a == (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "c.jsonl").read_bytes()
    labels = [r for _, r in jsonl.read(tmp_path / "a.jsonl")]
    prose = [r for r in labels if r["genre"] == "prose" and r["usable"]]
    assert prose and all(r["tiers_not_run"] == [] for r in prose)
    assert any("entailment" in r["tiers_run"] for r in prose)
    assert {r["nli_model_sha256"] for r in prose if "entailment" in r["tiers_run"]} == {SHA256}


def test_a_rescore_the_cache_answers_never_checks_or_opens_the_model(dataset, tmp_path, capsys):
    cache = ["--cache", str(tmp_path / "cache.sqlite")]
    assert score_cmd(dataset, tmp_path / "first.jsonl", "--model-dir", str(FIXTURE), *cache) == 0
    assert "entailment cache: 0 hits, 12 computed" in capsys.readouterr().err  # cold: every pair computed
    damaged = damaged_copy(tmp_path)
    assert score_cmd(dataset, tmp_path / "again.jsonl", "--model-dir", str(damaged), *cache) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "entailment cache: 12 hits, 0 computed" in err
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "first.jsonl").read_bytes()
    labels = [r for _, r in jsonl.read(tmp_path / "again.jsonl")]
    assert {r["nli_model_sha256"] for r in labels if "entailment" in r["tiers_run"]} == {SHA256}


def test_a_cache_miss_checks_the_model_against_its_manifest_before_running_it(dataset, tmp_path, capsys):
    damaged = damaged_copy(tmp_path)
    code = score_cmd(dataset, tmp_path / "l.jsonl", "--model-dir", str(damaged), "--no-cache")
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"{damaged / 'model.onnx'}: SHA-256 " in err and "does not match MANIFEST.json" in err
    assert not (tmp_path / "l.jsonl").exists()


def test_the_entailer_opens_the_model_on_the_first_miss_only(tmp_path):
    path = tmp_path / "cache.sqlite"
    first = ModelEntailer(FIXTURE, NliCache(path), batch_size=2)
    assert first.session is None and first.sha256 == SHA256
    verdicts = first.entails(PAIRS + PAIRS[:2])
    assert first.session is not None and first.session.sha256 == SHA256
    assert (first.requested, first.cache_hits, first.computed) == (len(PAIRS), 0, len(PAIRS))
    expected = [argmax(row) == 2 for row in REFERENCE["logits"]]
    assert [verdicts[p] for p in PAIRS] == expected
    first.cache.close()

    second = ModelEntailer(damaged_copy(tmp_path), NliCache(path), batch_size=3)
    assert second.entails(PAIRS) == verdicts
    assert (second.cache_hits, second.computed) == (len(PAIRS), 0)
    assert second.logits == first.logits
    assert second.session is None
    with pytest.raises(UserError, match=r"model.onnx: SHA-256 [0-9a-f]{64} does not match MANIFEST.json"):
        second.entails([("A pair the cache has never seen.", "It is new.")])


def test_labels_json_is_checked_even_when_the_model_is_not_opened(tmp_path):
    target = tmp_path / "model"
    shutil.copytree(FIXTURE, target)
    labels = json.loads((target / "labels.json").read_text(encoding="utf-8"))
    labels["id2label"] = {"0": "ENTAILMENT", "1": "NEUTRAL", "2": "CONTRADICTION"}
    jsonl.write(target / "labels.json", [labels])
    with pytest.raises(UserError, match=r"labels.json: SHA-256 [0-9a-f]{64} does not match MANIFEST.json"):
        ModelEntailer(target, NliCache(None))


def test_a_manifest_changed_after_the_entailer_read_it_is_refused_at_the_first_miss(tmp_path):
    target = tmp_path / "model"
    shutil.copytree(FIXTURE, target)
    entailer = ModelEntailer(target, NliCache(None))
    (target / "tokenizer.json").write_text((FIXTURE / "tokenizer.json").read_text(encoding="utf-8") + " ",
                                           encoding="utf-8")
    model_dir.write_manifest(target)  # a consistent directory, but no longer the model whose identity was taken
    with pytest.raises(UserError, match="MANIFEST.json: changed while scoring"):
        entailer.entails(PAIRS[:1])


def test_argmax_takes_the_lowest_index_on_a_tie():
    assert argmax([0.1, 0.7, 0.7]) == 1
    assert argmax([-1.0, -3.0, -2.0]) == 0
