"""Value types for command-line options, shared by every subcommand so that the same kind of
value is checked the same way and refused with the same words."""

from __future__ import annotations

import argparse
import math
from pathlib import Path


def _parsed(text: str, kind: type, expected: str):
    """`text` as an int or float, or the option parser's one-line refusal."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None


def _check(ok: bool, refusal: str) -> None:
    if not ok:
        raise argparse.ArgumentTypeError(refusal)


def positive_int(text: str) -> int:
    """A whole number of at least 1 (0 must not silently fall back to a default)."""
    value = _parsed(text, int, "a whole number")
    _check(value >= 1, f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """A whole number of at least 0 (a seed: 0 is a seed like any other)."""
    value = _parsed(text, int, "a whole number")
    _check(value >= 0, f"must be a whole number of at least 0, got {value}")
    return value


def port(text: str) -> int:
    """A TCP port, 0 to 65535 (0: the system picks a free one); a larger number was a traceback from bind()."""
    value = _parsed(text, int, "a port number")
    _check(0 <= value <= 65535, f"must be a port from 0 to 65535 (0 picks a free one), got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0."""
    value = _parsed(text, float, "a number")
    _check(math.isfinite(value) and value > 0, f"must be a finite number above 0, got {text}")
    return value


def probability(text: str) -> float:
    """A number strictly between 0 and 1 (a power, a confidence level)."""
    value = _parsed(text, float, "a number")
    _check(0 < value < 1, f"must be between 0 and 1 (exclusive), got {text}")
    return value


def fraction(text: str) -> float:
    """A number from 0 to 1, both included (a rate, such as a discordance)."""
    value = _parsed(text, float, "a number")
    _check(0 <= value <= 1, f"must be a number from 0 to 1, got {text}")
    return value


def names(text: str) -> list[str]:
    """A comma-separated list of names (conditions, sources), at least one."""
    found = [name.strip() for name in text.split(",") if name.strip()]
    _check(bool(found), "expected one or more comma-separated names")
    return found


def condition_file(text: str) -> str:
    """A condition file (TOML, docs/CONDITIONS.md) that exists; read and checked by the command itself.

    `seam.py run --conditions` once took condition names: a value that is no file and looks like names (no
    folder, no .toml; "clean,newline", "clean, newline", "Newline") is refused with the --only option to use
    now, spelled so that it can be pasted.

    >>> try:
    ...     condition_file("clean, newline")
    ... except argparse.ArgumentTypeError as refused:
    ...     print(str(refused).split("; ")[1])
    to keep only some conditions, use --only clean,newline
    """
    if Path(text).is_file():
        return text
    _check(not Path(text).is_dir(), f"{text} is a directory, expected a condition file (TOML)")
    if not text.endswith(".toml") and not any(sep in text for sep in "/\\"):
        listed = ",".join(name.strip() for name in text.split(",") if name.strip())
        raise argparse.ArgumentTypeError(f"expected a condition file (TOML), got {text!r}; to keep only some "
                                         f"conditions, use --only {listed}")
    raise argparse.ArgumentTypeError(f"no such condition file: {text}")


def existing_file(text: str) -> str:
    """A file that exists (a trace to read replies from): a typo must not pass for an empty trace.

    >>> try:
    ...     existing_file("no/such.jsonl")
    ... except argparse.ArgumentTypeError as refused:
    ...     print(refused)
    no such file: no/such.jsonl
    """
    _check(not Path(text).is_dir(), f"{text} is a directory, expected a file")
    _check(Path(text).is_file(), f"no such file: {text}")
    return text


class _Renamed(argparse.Action):
    """An option as it was once spelt: refused in one line naming the option to use now, with the value given."""

    def __init__(self, option_strings, dest, hint=None, **kwargs):
        super().__init__(option_strings, argparse.SUPPRESS, nargs="?", default=argparse.SUPPRESS,
                         help=argparse.SUPPRESS)
        self.hint = hint

    def __call__(self, parser, namespace, values, option_string=None):
        parser.exit(2, f"{parser.prog}: error: {option_string} {self.hint(values)}\n")


def renamed(parser: argparse.ArgumentParser, old: str, hint) -> None:
    """Refuse option `old` (hidden from --help) with `hint(value)`, the rest of a sentence that starts with `old`.

    An exact spelling also keeps argparse from taking an old option for an abbreviation of a new one
    (`--source` for `--sources`, `--cluster` for `--cluster-ids`), which would accept it silently.

    >>> parser = argparse.ArgumentParser(prog="seam.py prompts")
    >>> renamed(parser, "--source", lambda value: f"is now --sources: use --sources {value}")
    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     try:
    ...         parser.parse_args(["--source", "fissix"])
    ...     except SystemExit as stopped:
    ...         print(stopped.code, err.getvalue(), end="")
    2 seam.py prompts: error: --source is now --sources: use --sources fissix
    """
    parser.add_argument(old, action=_Renamed, hint=hint)


def _as_listed(value: str | None, metavar: str) -> str:
    return metavar if value is None else ",".join(part.strip() for part in value.split(",") if part.strip())


def selection_spellings(parser: argparse.ArgumentParser) -> None:
    """The selection options' older spellings, refused the same way by every command that selects requests
    (`prompts`, `run`): one spelling for one idea, each taking a comma list, and a hint to paste.

    `--source X` (prompts) is `--sources X`; `--condition X` (prompts) is `--only X`; `--cluster ID`
    (prompts) is `--cluster-ids ID`; `--clusters N` (run: a count) is `--first N`.
    """
    renamed(parser, "--source", lambda value: "is now --sources, which takes a comma list: use --sources "
                                              + _as_listed(value, "S[,S...]"))
    renamed(parser, "--condition", lambda value: "is now --only, which takes a comma list: use --only "
                                                 + _as_listed(value, "C[,C...]"))
    renamed(parser, "--cluster", lambda value: "is now --cluster-ids, which takes a comma list: use --cluster-ids "
                                               + _as_listed(value, "ID[,ID...]"))
    renamed(parser, "--clusters", _clusters_hint)


def _clusters_hint(value: str | None) -> str:
    """`run --clusters N` kept the first N clusters; a value that is no count was meant as cluster ids."""
    if value is None or value.strip().isdigit():
        return f"is now --first (the first N clusters): use --first {value.strip() if value else 'N'}"
    return f"is now --first N (a count); to keep given clusters, use --cluster-ids {_as_listed(value, '')}"
