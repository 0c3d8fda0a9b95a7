"""Write a file so that a crash leaves either the old file or the new one, never half of either."""

from __future__ import annotations

from pathlib import Path


def write_bytes(path: str | Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def write_text(path: str | Path, text: str) -> None:
    """UTF-8, with the "\\n" line ends given (no platform translation)."""
    write_bytes(path, text.encode("utf-8"))
