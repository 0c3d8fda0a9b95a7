"""Adjudicated false positives (`seam.py tables --exclusions FILE`): labels a human found not absorbed.

The file is JSON Lines, one row per adjudicated label: `id` (`<cluster>/<condition>`),
`model` and `reason`, nothing else (docs/FORMATS.md). Each row must name one of
the kit's positives (a usable label with absorbed=true): anything else is a
mistake in the file and is refused with its file and line.

Such a label is counted as **not absorbed**, not dropped. A human read the output
and found the comment not absorbed, so the pair is a known negative: dropping it
would remove a usable pair from the rate's denominator (biasing the rate up) and
from its paired contrasts. This is how the paper applied its two known false
positives (2.0% -> 1.3%: the numerator falls, the denominator stays). Every
table then says so in its notes, and provenance.json lists the rows and the
file's SHA-256. Without the option nothing changes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.records import shown
from stats.labels import LabelSet

FIELDS = ("id", "model", "reason")
LISTED = 10  # exclusions named in each table's note; provenance.json lists them all


@dataclass(frozen=True)
class Exclusion:
    """One adjudicated false positive, with the "file:line" it was read at."""

    id: str
    model: str
    reason: str
    where: str


@dataclass(frozen=True)
class Exclusions:
    """The rows of an exclusions file, its name and the SHA-256 of its bytes."""

    name: str
    sha256: str
    rows: tuple[Exclusion, ...]

    def apply(self, labels: LabelSet) -> LabelSet:
        """The labels with every listed label counted as not absorbed.

        >>> from stats.labels import label_set_of
        >>> from stats.synthetic import label_row
        >>> labels = label_set_of([label_row("m", "humaneval-000", "newline", True)])
        >>> found = Exclusions("x.jsonl", "0" * 64, (Exclusion("humaneval-000/newline", "m", "a note", "x:1"),))
        >>> found.apply(labels).outcome("m", "newline"), labels.outcome("m", "newline")
        ({'humaneval-000': False}, {'humaneval-000': True})
        """
        outcomes = dict(labels.outcomes)
        for row in self.rows:
            cluster, _, condition = row.id.rpartition("/")
            current = labels.outcomes.get((row.model, condition), {}).get(cluster, "missing")
            if current == "missing":
                raise UserError(f"{row.where}: no label for model {shown(row.model)}, id {shown(row.id)} in the "
                                "labels given")
            if current is not True:
                state = "is excluded (not usable)" if current is None else "is already not absorbed"
                raise UserError(f"{row.where}: {row.model} {row.id} {state}; an adjudicated false positive must be "
                                "one of the kit's positives (usable, absorbed=true)")
            outcomes[row.model, condition] = {**outcomes[row.model, condition], cluster: False}
        return replace(labels, outcomes=outcomes)

    def note(self) -> str:
        """The note every table carries.

        >>> Exclusions("fp.jsonl", "ab" * 32, (Exclusion("a-001/blank", "m", "why", "fp.jsonl:1"),)).note()[:73]
        'Adjudicated false positives: 1 label listed in fp.jsonl (SHA-256 abababab'
        """
        named = [f"{row.model} {row.id}" for row in self.rows[:LISTED]]
        more = len(self.rows) - len(named)
        listing = ", ".join(named) + (f" and {more} more (provenance.json lists all)" if more else "")
        count = f"{len(self.rows)} label{'s' if len(self.rows) != 1 else ''}"
        return (f"Adjudicated false positives: {count} listed in {self.name} (SHA-256 {self.sha256[:12]}…) are "
                "counted as not absorbed, a human having found the comment not absorbed; the pairs stay, so "
                f"rates keep their denominators and contrasts their pairs: {listing}.")

    def provenance(self) -> dict:
        """What provenance.json records of the file.

        >>> Exclusions("fp.jsonl", "0" * 64, ()).provenance()["treatment"]
        'counted as not absorbed'
        """
        return {"file": self.name, "sha256": self.sha256, "treatment": "counted as not absorbed",
                "rows": [{"id": row.id, "model": row.model, "reason": row.reason} for row in self.rows]}


def load_exclusions(path: str | Path) -> Exclusions:
    """Read an exclusions file; a malformed row is one line naming file, line and field.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "fp.jsonl").write_text('{"id":"a-001/blank","model":"m","reason":"a note to the user"}\\n')
    ...     found = load_exclusions(Path(tmp, "fp.jsonl"))
    >>> found.name, [(row.model, row.id) for row in found.rows]
    ('fp.jsonl', [('m', 'a-001/blank')])
    """
    path = Path(path)
    rows: list[Exclusion] = []
    seen: dict[tuple[str, str], str] = {}
    for number, row in jsonl.read(path):
        where = f"{path}:{number}"
        extra = sorted(set(row) - set(FIELDS))
        if extra:
            raise UserError(f"{where}: unknown field(s) {', '.join(map(repr, extra))}, expected exactly "
                            f"{', '.join(FIELDS)}")
        values = {}
        for name in FIELDS:
            value = row.get(name)
            if not isinstance(value, str) or not value.strip():
                raise UserError(f"{where}: field {name!r} is {shown(value)}, expected a non-empty string")
            values[name] = value
        cluster, slash, condition = values["id"].rpartition("/")
        if not slash or not cluster or not condition:
            raise UserError(f"{where}: field 'id' is {shown(values['id'])}, expected <cluster>/<condition>")
        key = (values["model"], values["id"])
        if key in seen:
            raise UserError(f"{where}: {values['model']} {values['id']} is listed twice (first at {seen[key]})")
        seen[key] = where
        rows.append(Exclusion(values["id"], values["model"], values["reason"], where))
    if not rows:
        raise UserError(f"{path}: holds no exclusions; leave out --exclusions")
    return Exclusions(path.name, hashlib.sha256(path.read_bytes()).hexdigest(), tuple(rows))
