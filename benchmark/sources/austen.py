"""Jane Austen: paragraphs of the six novels, to be simplified for a modern reader.

What is read: the R lazy-load database of the Debian package r-cran-janeaustenr
(`/usr/lib/R/site-library/janeaustenr/data/Rdata.rdx`, the index, and
`Rdata.rdb`, the data), decoded by `rlazyload` and `rdata` without R. Each of its six objects
(emma, mansfieldpark, northangerabbey, persuasion, prideprejudice,
sensesensibility) is a character vector holding one novel as the lines of its
Project Gutenberg text.

How an item is made: a paragraph is a run of non-blank lines between blank
lines (a line of spaces counts as blank), numbered from 0 in each novel. A
paragraph is a candidate when it has MIN_WORDS..MAX_WORDS words and is narrative
or dialogue: not a heading (a first line starting with CHAPTER or VOLUME or
written in capitals), not indented (the indented paragraphs are letters and
verse set off from the narrative), and free of editorial marks (`*` footnote
markers, `[` notes). The paragraph is pasted exactly as the source has it,
hard-wrapped at about 70 characters: that is what a reader copying from the
Gutenberg text gets; the `_underscores_` Gutenberg uses for italics and its
double spaces after some full stops are kept for the same reason. Nothing is
transformed, so `transformations` is empty. There is no reference.
`provenance` is the data file (`Rdata.rdb`); `extra_provenance` holds the index
(`Rdata.rdx`), which decides where each novel is read from.

Instruction templates (one per item, drawn with
`random.Random("seam-v1:austen:<item_id>")`):
  "Simplify this paragraph for a modern reader."
  "Rewrite this passage in plain modern English, keeping its meaning."
  "Make this paragraph easier to read for someone today."

Item ids: `<novel>:para-NNNN` (paragraph number, four digits). Order: novels in
the database's index order (alphabetical), paragraphs in text order. All
candidates (about 2,900) are returned; the selection of 50 happens downstream.

Licence: the novels are in the public domain ("LicenseRef-public-domain",
partition "permissive"); the package that carries them is MIT-licensed
(Julia Silge; Debian packaging by Andreas Tille).

Length bounds: 80-300 words is one substantial paragraph (about 6-25 source
lines), the size someone would paste to ask for a modern rendering; shorter
paragraphs are mostly single lines of dialogue, longer ones are page-long.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from benchmark.sources import Provenance, SourceItem, locate, rdata, rlazyload

SOURCE = "austen"
PACKAGE = "r-cran-janeaustenr"
INDEX_PATH = "/usr/lib/R/site-library/janeaustenr/data/Rdata.rdx"
DATA_PATH = "/usr/lib/R/site-library/janeaustenr/data/Rdata.rdb"
NOVELS = ("emma", "mansfieldpark", "northangerabbey", "persuasion", "prideprejudice", "sensesensibility")
MIN_WORDS = 80
MAX_WORDS = 300
LICENSE = "LicenseRef-public-domain"
PARTITION = "permissive"

INSTRUCTIONS = (
    "Simplify this paragraph for a modern reader.",
    "Rewrite this passage in plain modern English, keeping its meaning.",
    "Make this paragraph easier to read for someone today.",
)

_HEADING = re.compile(r"(?:CHAPTER|Chapter|VOLUME|Volume)\b")
_EDITORIAL = re.compile(r"[*\[\]]")


@dataclass(frozen=True)
class Paragraph:
    novel: str
    number: int
    lines: tuple[str, ...]

    @property
    def item_id(self) -> str:
        return f"{self.novel}:para-{self.number:04d}"

    @property
    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.lines)


def paragraphs(novel: str, lines: tuple[str, ...]) -> list[Paragraph]:
    """Runs of non-blank lines, numbered from 0."""
    found, current = [], []
    for line in (*lines, ""):
        if line.strip():
            current.append(line)
        elif current:
            found.append(Paragraph(novel, len(found), tuple(current)))
            current = []
    return found


def paragraph_problem(paragraph: Paragraph) -> str | None:
    """Why a paragraph is not a candidate (None if it is one)."""
    words = len(paragraph.text.split())
    if not MIN_WORDS <= words <= MAX_WORDS:
        return f"{words} words, outside {MIN_WORDS}-{MAX_WORDS}"
    first = paragraph.lines[0].strip()
    letters = [c for c in first if c.isalpha()]
    if _HEADING.match(first) or (letters and all(c.isupper() for c in letters)):
        return "a heading"
    if any(line[:1].isspace() for line in paragraph.lines):
        return "indented (a letter or verse)"
    if _EDITORIAL.search(paragraph.text):
        return "holds an editorial mark (* or [)"
    return None


def read_novels() -> tuple[list[tuple[str, tuple[str, ...]]], Provenance, Provenance]:
    """(novel, lines) in index order, and the provenances of the data file and of the index file."""
    index_path, index_provenance = locate.debian_file(PACKAGE, INDEX_PATH)
    data_path, provenance = locate.debian_file(PACKAGE, DATA_PATH)
    index = rlazyload.read_lazyload_index(index_path.read_bytes(), str(index_path))
    data = data_path.read_bytes()
    novels = []
    for name, where in index.variables:
        value = rlazyload.read_lazyload_object(data, where, str(data_path))
        if not (isinstance(value, rdata.RVector) and value.kind == "character"):
            raise rdata.RDataError(f"{data_path}: object {name!r} is not a character vector")
        if any(line is None or isinstance(line, bytes) for line in value.values):
            raise rdata.RDataError(f"{data_path}: object {name!r} has missing or undecodable lines")
        novels.append((name, value.values))
    found = tuple(name for name, _ in novels)
    if found != NOVELS:
        raise rdata.RDataError(f"{index_path}: expected the novels {', '.join(NOVELS)}, "
                               f"found {', '.join(found)}")
    return novels, provenance, index_provenance


def candidates() -> list[SourceItem]:
    """Every narrative or dialogue paragraph within the bounds, novel by novel."""
    novels, provenance, index_provenance = read_novels()
    items = []
    for novel, lines in novels:
        for paragraph in paragraphs(novel, lines):
            if paragraph_problem(paragraph) is not None:
                continue
            rng = random.Random(f"seam-v1:{SOURCE}:{paragraph.item_id}")
            items.append(SourceItem(
                source=SOURCE, item_id=paragraph.item_id, license=LICENSE, partition=PARTITION,
                genre="prose", register="literary", provenance=provenance,
                instruction=rng.choice(INSTRUCTIONS), artifact=paragraph.text, reference=None,
                extra_provenance=(index_provenance,),
            ))
    return items
