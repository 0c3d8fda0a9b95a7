"""ACL abstracts: scientific abstracts to be made more concise.

What is read: the 250 paper files `aclsum/dataset/paper_jsons/<ACL Anthology id>.json`
of the PyPI package aclsum 0.1.2 (S2ORC format; the `abstract` field), in
sorted file-name order. The JSON's own `paper_id` and `year` fields are not
used: for new-style ids `paper_id` holds only the year ("2020") and `year` is
empty, so the file name is the paper id.

How an item is made: the abstract, as extracted from the PDF by S2ORC, with
its white space normalised (line breaks and runs of spaces become one space: an
abstract copied from a paper's web page is one paragraph line). PDF extraction
leaves footnote markers and sometimes the footnote itself: a trailing marker
(". 1" or "diversity 1 .") is removed and recorded; an abstract followed by
footnote or front-matter text (a marker then more text, or the symbols * † ‡)
is skipped, since no user would paste that. Other extraction artefacts (words
joined at line-break hyphens such as "stateof-the-art", subscripts split off as
in "F 1") are kept as they are: they are what the corpus holds, and they do not
stand in the way of shortening an abstract.

The instruction asks for a more concise version; one of INSTRUCTIONS is drawn
per item with `random.Random("seam-v1:aclsum:<paper id>")`:
  "Make this abstract more concise."
  "Tighten this abstract so it says the same in fewer words."
  "Please shorten this abstract without dropping any of its findings."
No reference: the package's summaries (`{train,val,test}.jsonl`) are written
from the whole paper in three aspects (challenge, approach, outcome); they are
not edits of the abstract.

Licence and partition, by the paper's year as read from its Anthology id:
papers from 2016 on are CC BY 4.0 ("permissive"); earlier ones CC BY-NC-SA 3.0
("noncommercial"), following the ACL Anthology's licensing. New-style ids
(`2020.acl-main.1`) begin with the year; old-style ids (`P16-1001`, `D07-1016`,
`W96-0206`) carry two digits after the venue letter, 65-99 meaning 19xx and
00-64 meaning 20xx (the Anthology starts in 1965 and switched id style in 2020).

Length bounds: MIN_WORDS..MAX_WORDS words (80-250) keeps ordinary one-paragraph
abstracts and drops the shortest (which leave little to condense) and the
longest (which run to several paragraphs), so every item is a paste of 4-15
lines' worth of text. Item ids are the Anthology ids; order is file-name order.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from benchmark.sources import SourceItem, locate
from common.errors import UserError

SOURCE = "aclsum"
PACKAGE = "aclsum"
PAPER_DIR = "aclsum/dataset/paper_jsons"
MIN_WORDS = 80
MAX_WORDS = 250
FIRST_OPEN_YEAR = 2016
PERMISSIVE_LICENSE = "CC-BY-4.0"
NONCOMMERCIAL_LICENSE = "CC-BY-NC-SA-3.0"

INSTRUCTIONS = (
    "Make this abstract more concise.",
    "Tighten this abstract so it says the same in fewer words.",
    "Please shorten this abstract without dropping any of its findings.",
)

_NEW_STYLE_ID = re.compile(r"(\d{4})\.[a-z0-9]+(?:-[a-z0-9]+)*\.\d+")
_OLD_STYLE_ID = re.compile(r"[A-Z](\d{2})-\d{4}")
_TRAILING_MARKER = re.compile(r"(?<=[.!?)])\s+\d{1,2}$|\s+\d{1,2}\s+(?=[.]$)")
_LEAKED_FOOTNOTE = re.compile(r"[.!?]\s+\d{1,2}\s+\S|[*\u2020\u2021]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Licence:
    year: int
    license: str
    partition: str


def paper_year(paper_id: str) -> int:
    """The publication year encoded in an ACL Anthology id (new or old style)."""
    new = _NEW_STYLE_ID.fullmatch(paper_id)
    if new:
        return int(new.group(1))
    old = _OLD_STYLE_ID.fullmatch(paper_id)
    if old:
        two_digits = int(old.group(1))
        return 1900 + two_digits if two_digits >= 65 else 2000 + two_digits
    raise ValueError(f"{paper_id!r} is not an ACL Anthology id (expected e.g. 2020.acl-main.1 or P16-1001)")


def licence_for(paper_id: str) -> Licence:
    """CC BY 4.0 from 2016 on, CC BY-NC-SA 3.0 before (the ACL Anthology's rule)."""
    year = paper_year(paper_id)
    if year >= FIRST_OPEN_YEAR:
        return Licence(year, PERMISSIVE_LICENSE, "permissive")
    return Licence(year, NONCOMMERCIAL_LICENSE, "noncommercial")


def clean_abstract(abstract: str) -> tuple[str | None, tuple[str, ...]]:
    """(paste-ready abstract or None if unusable, transformations applied)."""
    transformations = []
    text = _SPACES.sub(" ", abstract).strip()
    if text != abstract:
        transformations.append("normalised white space to single spaces")
    marker = _TRAILING_MARKER.search(text)
    if marker:
        text = text[:marker.start()] + text[marker.end():]
        transformations.append(f'removed the trailing footnote marker "{marker.group().strip()}"')
    if _LEAKED_FOOTNOTE.search(text):
        return None, ()
    return text, tuple(transformations)


def read_abstract(path: Path) -> str:
    try:
        paper = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: cannot read the paper JSON: {exc}") from None
    abstract = paper.get("abstract") if isinstance(paper, dict) else None
    if not isinstance(abstract, str):
        raise UserError(f"{path}: expected an S2ORC paper object with a string 'abstract'")
    return abstract


def paper_files() -> list[str]:
    """Paths (inside the package) of the paper JSON files, in sorted name order.

    Listed from the installed distribution's RECORD, so nothing is globbed from disk.
    """
    try:
        files = metadata.distribution(PACKAGE).files or []
    except metadata.PackageNotFoundError:
        raise locate.MissingSource(f"source package {PACKAGE!r} (PyPI) is not installed; install the build "
                                   f"sources with: {locate.BUILD_INSTALL_HINT}") from None
    papers = sorted(str(f.as_posix()) for f in files
                    if str(f.as_posix()).startswith(PAPER_DIR + "/") and f.name.endswith(".json"))
    if not papers:
        raise locate.MissingSource(f"{PACKAGE} is installed but lists no files under {PAPER_DIR}; "
                                   f"reinstall with: {locate.BUILD_INSTALL_HINT}")
    return papers


def candidates() -> list[SourceItem]:
    """All abstracts within the bounds that survive cleaning, in file-name order."""
    items = []
    for relpath in paper_files():
        path, provenance = locate.pypi_file(PACKAGE, relpath)
        paper_id = path.stem
        try:
            licence = licence_for(paper_id)
        except ValueError as exc:
            raise UserError(f"{path}: {exc}") from None
        artifact, transformations = clean_abstract(read_abstract(path))
        if artifact is None or not MIN_WORDS <= len(artifact.split()) <= MAX_WORDS:
            continue
        rng = random.Random(f"seam-v1:{SOURCE}:{paper_id}")
        items.append(SourceItem(
            source=SOURCE, item_id=paper_id, license=licence.license, partition=licence.partition,
            genre="prose", register="scientific", provenance=provenance,
            instruction=rng.choice(INSTRUCTIONS), artifact=artifact, reference=None,
            transformations=transformations,
        ))
    return items
