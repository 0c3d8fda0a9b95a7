"""The tables the page is made of, each read once (`stats.schema.read_table`, against the vocabularies of
stats/specs.py, validity/specs.py and review/specs.py), so that the page never reads a column by a name no spec
defines and a malformed table is one line naming the file, the line and what was expected.

A folder of `seam.py tables` and `seam.py validity` (or of `seam.py compare`, whose tables have an `origin`
column first) is read whole by `read_folder`; a CSV file no spec names is left out of the page and listed in
`unknown`, for the command to warn about. The review reports (`--review`) are read by `read_reviews`, each
table against review/specs.py, with the readers its provenance names; unlike a folder of tables, a review
report holds only the kit's files, so a review_*.csv no spec names is an error there, not a warning. The
occurrence audit's report (`--occurrence`) is read the same way by `read_occurrence`, against
occurrence/specs.py, with what its provenance says of the corpus, the judge and the readers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from occurrence import specs as occurrence_specs
from review import specs as review_specs
from stats import specs as absorption_specs
from stats.render import Table
from stats.schema import read_notes, read_table
from validity import specs as validity_specs

ABSORPTION = {spec.name: spec for spec in absorption_specs.TABLES}
VALIDITY = {spec.name: spec for spec in validity_specs.TABLES}
REVIEW = {spec.name: spec for spec in review_specs.TABLES}
REVIEW_PROVENANCE = "review_provenance.json"
OCCURRENCE = {spec.name: spec for spec in occurrence_specs.TABLES}
OCCURRENCE_PROVENANCE = "occurrence_provenance.json"


@dataclass(frozen=True)
class Folder:
    """A folder of tables as read: by name, in file-name order."""

    path: Path
    absorption: dict[str, Table]  # the tables of `seam.py tables` it holds
    validity: dict[str, Table]  # those of `seam.py validity`
    notes: tuple[str, ...] | None  # notes.md's notes; None without one
    unknown: tuple[Path, ...] = ()  # CSV files no spec names

    @property
    def rates(self) -> Table | None:
        return self.absorption.get(absorption_specs.RATES.name)


def read_folder(path: Path) -> Folder:
    """Every table in `path` that a vocabulary defines, and its notes, each file read once."""
    path = Path(path)
    absorption, validity, unknown = {}, {}, []
    for file in sorted(path.glob("*.csv")):
        if file.stem in ABSORPTION:
            absorption[file.stem] = read_table(file, ABSORPTION[file.stem])
        elif file.stem in VALIDITY:
            validity[file.stem] = read_table(file, VALIDITY[file.stem])
        else:
            unknown.append(file)
    notes = read_notes(path / "notes.md") if (path / "notes.md").is_file() else None
    return Folder(path, absorption, validity, notes, tuple(unknown))


@dataclass(frozen=True)
class Review:
    """One review report as read: its folder's name, who read the cases (as its provenance names the reader),
    and its tables by file name, in file-name order."""

    name: str
    readers: tuple[str, ...]  # the reviewer, and with `--second` the second reviewer; none before any answer
    tables: tuple[tuple[str, Table], ...]


def read_reviews(path: Path | None) -> list[Review]:
    """Each review report in `path` (a subfolder with review_estimates.csv), in name order, every table read
    against its spec (a review_*.csv no spec names is a one-line error, as a malformed table is)."""
    if path is None:
        return []
    return [Review(_folder_name(folder, path), _readers(folder / REVIEW_PROVENANCE),
                   _report_tables(folder, "review", REVIEW))
            for folder in sorted(found.parent for found in Path(path).glob("*/review_estimates.csv"))]


def _folder_name(folder: Path, option: Path | str) -> str:
    """A review report's folder name, which the page shows: refused when it is not UTF-8. A file system allows
    any bytes but "/" and NUL in a name; Python holds one that is not UTF-8 with surrogate escapes ("bad\\udcff"),
    which the page's UTF-8 cannot carry. The message shows the name's bytes escaped, never raw."""
    try:
        folder.name.encode("utf-8")
    except UnicodeEncodeError:
        raw = os.fsencode(folder.name)
        at = _first_bad_byte(raw)
        raise UserError(f"--review {_printable(option)}: the folder name '{_printable(folder.name)}' is not UTF-8 "
                        f"(byte 0x{raw[at]:02X} at {at + 1}); rename it: the page names each review report by "
                        "its folder") from None
    return folder.name


def _first_bad_byte(raw: bytes) -> int:
    """Where `raw` stops being UTF-8 (it is not)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return 0


def _printable(name: Path | str) -> str:
    """A file name as text for a message: bytes that are not UTF-8 as escapes (\\xff)."""
    return os.fsencode(str(name)).decode("utf-8", "backslashreplace")


def _report_tables(folder: Path, stage: str, specs: dict) -> tuple[tuple[str, Table], ...]:
    """Every `<stage>_*.csv` of a report folder `seam.py <stage> report` wrote, by file name in name order, each
    read against its spec: the folder holds only the command's files, so a table no spec names is an error."""
    tables = []
    for file in sorted(folder.glob(f"{stage}_*.csv")):
        if file.stem not in specs:
            raise UserError(f"{file}: not a table of 'seam.py {stage} report' (expected one of "
                            f"{', '.join(sorted(specs))})")
        tables.append((file.name, read_table(file, specs[file.stem])))
    return tuple(tables)


def _readers(path: Path) -> tuple[str, ...]:
    """Who read a review report's cases, as its provenance names them: `reviewer` (null before any answer) and,
    with a second reviewer, `second.second`. `seam.py review report` always writes the provenance, so a folder
    without one is not a report of the kit's: an error, as a malformed table is."""
    provenance = jsonl.load_file(path, "the review report's provenance (a JSON object)")
    second = provenance.get("second")
    if second is not None and not isinstance(second, dict):
        raise UserError(f"{path}: 'second' is {jsonl.kind(second)}, expected the second reviewer's record or null")
    readers = []
    for key, value in (("reviewer", provenance.get("reviewer")), ("second.second", (second or {}).get("second"))):
        if value is not None and not isinstance(value, str):
            raise UserError(f"{path}: {key!r} is {jsonl.kind(value)}, expected a reader's name (text) or null")
        if value is not None:
            readers.append(_unicode(value, path, key))
    return tuple(readers)


def _unicode(text: str, where: Path, key: str) -> str:
    """`text`, refused when it holds a lone surrogate: JSON can spell one ("\\ud800"), but it is no Unicode
    text and the page's UTF-8 cannot carry it."""
    lone = jsonl.LONE_SURROGATE.search(text)
    if lone:
        raise UserError(f"{where}: {key!r} holds a lone surrogate (U+{ord(lone.group()):04X} at character "
                        f"{lone.start() + 1}), expected Unicode text")
    return text


@dataclass(frozen=True)
class Occurrence:
    """The occurrence audit's report as read: what its provenance says of the corpus, the judge and the readers,
    its statement of what the counts are not, and its tables by file name, in file-name order."""

    corpora: tuple[str, ...]
    judge: str | None
    readers: tuple[str, ...]  # the sample's reviewer, and with `--second` the second reader; none before answers
    statement: str
    tables: tuple[tuple[str, Table], ...]


def read_occurrence(path: Path | None) -> Occurrence | None:
    """The report `seam.py occurrence report --out DIR` wrote in `path`, every table read against its spec (an
    occurrence_*.csv no spec names, or a folder without the provenance, is a one-line error)."""
    if path is None:
        return None
    path = Path(path)
    provenance = jsonl.load_file(path / OCCURRENCE_PROVENANCE, "the occurrence report's provenance (a JSON object)")
    tables = _report_tables(path, "occurrence", OCCURRENCE)
    if not tables:
        raise UserError(f"{path}: no occurrence_*.csv in it (write the report with 'seam.py occurrence report')")
    where = path / OCCURRENCE_PROVENANCE
    corpora = provenance.get("corpora")
    if not isinstance(corpora, list) or not all(isinstance(c, dict) and isinstance(c.get("file"), str)
                                                for c in corpora):
        raise UserError(f"{where}: 'corpora' is not a list of corpus records with a file name")
    files = tuple(_unicode(c["file"], where, f"corpora[{index}].file") for index, c in enumerate(corpora))
    records = {}
    for key in ("judged", "answers", "second"):
        records[key] = provenance.get(key) or {}
        if not isinstance(records[key], dict):
            raise UserError(f"{where}: {key!r} is {jsonl.kind(records[key])}, expected a record or null")
    texts = {}
    for key, value in (("judged.model", records["judged"].get("model")),
                       ("answers.reviewer", records["answers"].get("reviewer")),
                       ("second.reviewer", records["second"].get("reviewer")),
                       ("statement", provenance.get("statement"))):
        if value is not None and not isinstance(value, str):
            raise UserError(f"{where}: {key!r} is {jsonl.kind(value)}, expected text or null")
        texts[key] = None if value is None else _unicode(value, where, key)
    readers = tuple(name for name in (texts["answers.reviewer"], texts["second.reviewer"]) if name is not None)
    return Occurrence(files, texts["judged.model"], readers, texts["statement"] or "", tables)
