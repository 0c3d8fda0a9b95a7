"""The `guard` subcommand: mark the seam of user messages (JSON Lines or one plain message), or serve the guard
as an HTTP proxy in front of a model (`guard serve`)."""

from __future__ import annotations

import argparse

EXAMPLES = (
    "examples:\n"
    "  # JSON Lines in ({\"id\", \"message\"} per line), JSON Lines out\n"
    "  python seam.py guard messages.jsonl --out guarded.jsonl\n"
    "  # one plain message, stdin to stdout (what was done goes to stderr)\n"
    "  printf 'Fix the typos:\\n\\nTeh cat sat on teh mat all day.\\nIt was hapy there.\\nbtw send it to Ann' \\\n"
    "      | python seam.py guard --text\n"
    "  # other marker lines, and the benchmark's mitigation sentence after the instruction\n"
    "  python seam.py guard messages.jsonl --open '<document>' --close '</document>' --mitigation\n")


def add_commands(subparsers) -> None:
    """Add `guard` to seam.py's subcommands.

    >>> parser = argparse.ArgumentParser(prog="seam.py")
    >>> add_commands(parser.add_subparsers())
    >>> args = parser.parse_args(["guard", "in.jsonl", "--out", "out.jsonl"])
    >>> args.input, args.out, args.text
    ('in.jsonl', 'out.jsonl', False)
    """
    parser = subparsers.add_parser(
        "guard",
        help="mark the unmarked seam in user messages (boundary lines around the paste a remark follows)",
        description="Find where a pasted text ends and the user's own remark after it begins, in a message\n"
                    "that does not say, and put the benchmark's boundary lines around the paste, so that a\n"
                    "model sees the remark as the user's. A message with no seam found is passed unchanged.\n"
                    "JSON Lines in: {\"id\", \"message\"} per line; out: {\"id\", \"marked\", \"artifact_start\",\n"
                    "\"artifact_end\", \"message\"} (offsets are Python string offsets into the message given,\n"
                    "-1 when not marked). With --text, one plain message in and the message to send out.\n"
                    "docs/GUARD.md: what it does, how often it is right, where it errs.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", nargs="?", default="-", metavar="INPUT",
                        help="a JSON Lines file of messages, or - for standard input (the default)")
    parser.add_argument("--out", metavar="FILE", default=None,
                        help="write here (atomically: a crash or a full disk leaves no half file) instead of "
                             "standard output")
    parser.add_argument("--text", action="store_true",
                        help="INPUT is one plain message (UTF-8); write the message to send, byte for byte")
    parser.add_argument("--open", metavar="LINE", default=None,
                        help="the line put before the paste (default: -----BEGIN TEXT-----)")
    parser.add_argument("--close", metavar="LINE", default=None,
                        help="the line put after the paste (default: -----END TEXT-----)")
    wording = parser.add_mutually_exclusive_group()
    wording.add_argument("--sentence", metavar="TEXT", default=None,
                         help="a sentence added after the instruction where the guard marks")
    wording.add_argument("--mitigation", action="store_true",
                         help="add the benchmark's mitigation sentence (a marked SEAM newline message then "
                              "becomes its mitigation message)")
    parser.set_defaults(func=run_guard)


def run_guard(args) -> int:
    from guard import batch

    options = batch.options(open_line=args.open, close_line=args.close, sentence=args.sentence,
                            mitigation=args.mitigation)
    if args.text:
        return batch.guard_text(args.input, args.out, options)
    return batch.guard_lines(args.input, args.out, options)
