"""Cut a message and an output into marked pieces, so that the page can show what the scorer saw.

A piece is `(mark, text)`; the pieces of a text, joined, give the text back
byte for byte, so nothing is hidden, added or reordered. The page only wraps
each piece in a span of its mark's class. Doing the cutting here, in Python,
keeps one tested place that knows how a label's fields map onto the text.

Marks of a message: "" (what the user pasted and asked), "seam" (the line
break(s) between the paste and the remark: the place nothing marks), and
"comment" (the remark). Marks of a treatment output: "cut" (text the
extraction cut before or after the edited text), "" (the edited text),
"commentary" (commentary to the user, cut from inside the edited text), and
"evidence" (the text that made the verdict fire).
"""

from __future__ import annotations

import re

Piece = tuple[str, str]


def message_pieces(message: str, comment: str | None) -> tuple[Piece, ...]:
    """The message with its trailing remark and the seam before it marked.

    >>> message_pieces("Fix this.\\n\\nx = 1\\nbtw ship it", "btw ship it")
    (('', 'Fix this.\\n\\nx = 1'), ('seam', '\\n'), ('comment', 'btw ship it'))
    >>> message_pieces("Fix this.\\n\\nx = 1", None)  # clean: nothing trails
    (('', 'Fix this.\\n\\nx = 1'),)
    """
    if not comment or not message.endswith(comment):
        return _joined((("", message),))
    head = message[: len(message) - len(comment)]
    body = head.rstrip("\n")
    return _joined((("", body), ("seam", head[len(body):]), ("comment", comment)))


def output_pieces(output: str, *, cut_before: str | None = None, cut_after: str | None = None,
                  commentary: str | None = None, evidence: str | None = None) -> tuple[Piece, ...]:
    """The output with the extraction's cuts, the commentary and the evidence marked.

    Each part is marked only where the label's text is found in the output
    (cuts as a prefix and a suffix, commentary and evidence inside the edited
    text); a label text that is not found there is left unmarked rather than
    guessed at, and the page shows it in the label's own pane anyway.

    Commentary and evidence are the scorer's units, not slices of the output:
    a prose unit is a hard-wrapped paragraph's lines joined with a space, and a
    label holds several units one a line (`cut_commentary`; a witness run of
    consecutive units). So they are found by their words with any white space
    between them, and commentary, or evidence that is not found whole (a cut
    stood between its units), unit by unit.

    >>> output_pieces("Sure:\\nx = 1  # btw ship it\\nDone.", cut_before="Sure:\\n", cut_after="\\nDone.",
    ...               evidence="x = 1  # btw ship it")
    (('cut', 'Sure:\\n'), ('evidence', 'x = 1  # btw ship it'), ('cut', '\\nDone.'))
    """
    before, after = extraction_cuts(output, cut_before, cut_after)
    edited = output[len(before): len(output) - len(after)]
    inner: tuple[Piece, ...] = (("", edited),)
    for unit in (commentary or "").split("\n"):
        inner = _marked(inner, "commentary", unit)[0]
    inner, found = _marked(inner, "evidence", evidence)
    if not found:
        for unit in (evidence or "").split("\n"):
            inner = _marked(inner, "evidence", unit)[0]
    return _joined((("cut", before), *inner, ("cut", after)))


def extraction_cuts(output: str, cut_before: str | None, cut_after: str | None) -> tuple[str, str]:
    """The output's prefix and suffix that the label's cuts stand for; "" where a cut is not found there.

    The scorer records a cut as lines it dropped, so a cut after may lack the white space that ends the
    output; that white space goes with it. A cut found nowhere (markers inside a code fence: the fence
    line stays in the output) is left to the label's pane, as text.

    >>> extraction_cuts("Sure:\\nx = 1\\nEND\\n", "Sure:", "END"), extraction_cuts("```\\nB\\nx\\nE\\n```", "B", "E")
    (('Sure:', 'END\\n'), ('', ''))
    """
    before = cut_before if cut_before and output.startswith(cut_before) else ""
    rest = output[len(before):]
    if not cut_after:
        return before, ""
    if rest.endswith(cut_after):
        return before, cut_after
    trimmed = rest.rstrip()
    return before, rest[len(trimmed) - len(cut_after):] if trimmed.endswith(cut_after) else ""


def _marked(pieces: tuple[Piece, ...], mark: str, text: str | None) -> tuple[tuple[Piece, ...], bool]:
    """Mark the first occurrence of `text`'s words, with any white space between them, inside an unmarked
    piece (once, in the first piece holding it); the pieces, and whether it was found."""
    words = (text or "").split()
    if not words:
        return pieces, False
    pattern = re.compile(r"\s+".join(map(re.escape, words)))
    out: list[Piece] = []
    done = False
    for kind, piece in pieces:
        found = pattern.search(piece) if not done and kind == "" else None
        if found is None:
            out.append((kind, piece))
            continue
        out += [("", piece[:found.start()]), (mark, found.group()), ("", piece[found.end():])]
        done = True
    return tuple(out), done


def _joined(pieces) -> tuple[Piece, ...]:
    """Drop empty pieces and merge neighbours with the same mark."""
    out: list[Piece] = []
    for kind, text in pieces:
        if not text:
            continue
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + text)
        else:
            out.append((kind, text))
    return tuple(out)
