"""Readers for the six public corpora. Each module yields candidate items; `select` picks 50.

Every reader reads a file shipped inside a registry package (PyPI or Debian),
records what it read (`Provenance`, with the file's SHA-256), and returns its
candidates in a fixed order after applying its documented length bounds, so
that selection downstream is a pure function of the files and the seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The six sources in build order (which fixes the order of rows and of comment use), with their genre.
SOURCES = {"humaneval": "code", "fissix": "code", "wikipedia": "prose", "austen": "prose",
           "aclsum": "prose", "pyfaq": "prose"}


@dataclass(frozen=True)
class Provenance:
    """Where an item's text came from, precisely enough to check a rebuild."""

    registry: str  # "pypi" or "debian"
    package: str
    version: str
    path: str  # inside the package
    sha256: str  # of the file as read


@dataclass(frozen=True)
class SourceItem:
    """One candidate editing example, before a comment is assigned to it."""

    source: str
    item_id: str
    license: str
    partition: str  # "permissive" | "sharealike" | "noncommercial"
    genre: str  # "code" | "prose"
    register: str  # "code" | "encyclopedic" | "literary" | "scientific" | "technical"
    provenance: Provenance
    instruction: str
    artifact: str
    reference: str | None = None
    transformations: tuple[str, ...] = ()
    tests: dict | None = field(default=None, hash=False, compare=False)
    # Other files the task was made from (e.g. the misspelling dictionary for injected typos).
    extra_provenance: tuple[Provenance, ...] = ()
