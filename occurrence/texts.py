"""Read messages back from the corpus by where they are, for the judge and the annotation page only.

The occurrence files name a message by (corpus file, conversation position,
turn) and the SHA-256 of its text. Reading it back, each corpus file given must
be one the screen read (same SHA-256, the order given does not matter), read
the same way (format, archive member), and each message found must have the
checksum recorded: anything else is a `UserError`, never a different message
shown or judged. The texts live in memory only, for as long as the command runs.
"""

from __future__ import annotations

from pathlib import Path

from common.errors import UserError
from common.files import sha256_file
from occurrence.corpus import open_corpus
from occurrence.records import CorpusRef
from occurrence.screen import message_sha256
from occurrence.shapes import conversation
from occurrence.stream import Reader


def match_corpora(refs: tuple[CorpusRef, ...], paths) -> dict[int, Path]:
    """Which file given is which corpus of the header (by SHA-256): corpus position -> path."""
    found: dict[int, Path] = {}
    for raw in paths:
        path = Path(raw)
        if not path.is_file():
            raise UserError(f"--corpus {path}: no such corpus file")
        digest = sha256_file(path)
        matches = [number for number, ref in enumerate(refs) if ref.sha256 == digest]
        if not matches:
            names = ", ".join(f"{ref.file} ({ref.sha256[:12]}…)" for ref in refs)
            raise UserError(f"--corpus {path}: not a corpus these candidates were screened from (SHA-256 "
                            f"{digest[:12]}…; expected {names})")
        found.update((number, path) for number in matches)
    return found


def read_texts(refs: tuple[CorpusRef, ...], paths, wanted: dict[tuple[int, int, int], str], *,
               fmt: str | None = None) -> dict[tuple[int, int, int], str]:
    """The text of each message in `wanted` ((corpus, index, turn) -> expected SHA-256), checked.

    Each corpus file is read only as far as its last wanted conversation.
    """
    located = match_corpora(refs, paths)
    parts = sorted({key[0] for key in wanted})
    missing = [refs[part].file for part in parts if part not in located]
    if missing:
        raise UserError(f"the corpus file(s) {', '.join(missing)} are needed too: give every file the candidates "
                        "were screened from to --corpus")
    texts: dict[tuple[int, int, int], str] = {}
    for part in parts:
        ref = refs[part]
        if fmt is not None and fmt != ref.format:
            raise UserError(f"--format {fmt}, but {ref.file} was screened as {ref.format}")
        needed = {key[1:]: digest for key, digest in wanted.items() if key[0] == part}
        last = max(index for index, _ in needed)
        corpus = open_corpus(located[part], ref.member)
        try:
            for index, item in enumerate(Reader(corpus)):
                if index > last:
                    break
                turns = {turn for position, turn in needed if position == index}
                if not turns:
                    continue
                chat = conversation(item.value, ref.format, index, f"{corpus.name}:{item.line}")
                for turn in turns:
                    where = f"{corpus.name}:{item.line}: conversation {index} ({chat.id}), turn {turn}"
                    if turn >= len(chat.turns):
                        raise UserError(f"{where}: no such turn; is this the corpus the candidates came from?")
                    text = chat.turns[turn].text
                    if message_sha256(text) != needed[index, turn]:
                        raise UserError(f"{where}: the message's SHA-256 differs from the one recorded; is this the "
                                        "corpus the candidates came from?")
                    texts[part, index, turn] = text
        finally:
            corpus.close()
    absent = [key for key in wanted if key not in texts]
    if absent:
        part, index, turn = absent[0]
        raise UserError(f"{refs[part].file}: has no conversation {index} (turn {turn}) and {len(absent) - 1} more "
                        "wanted messages; is this the corpus the candidates came from?")
    return texts
