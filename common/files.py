"""File helpers: atomic writes (a crash leaves the old file or the new one, never half of either),
checksums, and reading the CSV tables back."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

from common.errors import UserError


def make_parent(path: str | Path) -> None:
    """Create the folder a file goes into; a file standing where a folder must be is the user's to fix."""
    parent = Path(path).parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UserError(f"{path}: cannot create the folder {parent}: a file is in the way") from None


def write_bytes(path: str | Path, data: bytes) -> None:
    path = Path(path)
    make_parent(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def write_text(path: str | Path, text: str) -> None:
    """UTF-8, with the "\\n" line ends given (no platform translation)."""
    write_bytes(path, text.encode("utf-8"))


def sha256_file(path: str | Path) -> str:
    """SHA-256 of a file, read in blocks so that a 1.6 GB model file does not fill memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_csv(path: str | Path) -> list[dict[str, str]]:
    """The rows of a CSV table the kit wrote, as dicts keyed by its header."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))
