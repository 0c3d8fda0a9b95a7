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

    >>> output_pieces("Sure:\\nx = 1  # btw ship it\\nDone.", cut_before="Sure:\\n", cut_after="\\nDone.",
    ...               evidence="x = 1  # btw ship it")
    (('cut', 'Sure:\\n'), ('evidence', 'x = 1  # btw ship it'), ('cut', '\\nDone.'))
    """
    before = cut_before if cut_before and output.startswith(cut_before) else ""
    rest = output[len(before):]
    after = cut_after if cut_after and rest.endswith(cut_after) else ""
    edited = rest[: len(rest) - len(after)]
    inner = _marked(((("", edited),)), "commentary", commentary)
    inner = _marked(inner, "evidence", evidence)
    return _joined((("cut", before), *inner, ("cut", after)))


def _marked(pieces: tuple[Piece, ...], mark: str, text: str | None) -> tuple[Piece, ...]:
    """Mark the first occurrence of `text` inside an unmarked piece (once, in the first piece holding it)."""
    if not text:
        return pieces
    out: list[Piece] = []
    done = False
    for kind, piece in pieces:
        at = piece.find(text) if not done and kind == "" else -1
        if at < 0:
            out.append((kind, piece))
            continue
        out += [("", piece[:at]), (mark, text), ("", piece[at + len(text):])]
        done = True
    return tuple(out)


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
