"""`seam.py occurrence sample`: a seeded simple random sample of unique positives for the human check.

The population is every unique candidate of the screen (rows with repeat 1),
or with a judged file the unique candidates the judge said yes to. The draw is
decided by SHA-256, never by a platform's random generator: the messages with
the smallest SHA-256("seam-occurrence:<seed>:<message SHA-256>") are drawn, in
that order, which is also the order the annotation page shows them. Same files
and seed, same sample, on any machine; a larger n keeps every message a smaller
n drew. With --negatives, the judge's no verdicts are a second stratum drawn
the same way, and the two are shown mixed by a second, independent key
(`shown_key`), so that a case's position says nothing of its stratum. The sample
file records the seed, the population and the checksums of the files it was
drawn from, and holds no feature and no verdict per case: the page that shows
the cases has nothing of the screen's or the judge's to reveal.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.files import sha256_file
from occurrence.records import OCCURRENCE_VERSION, Case, FileRef, SampleHeader
from occurrence.store import read_candidates, read_judged

DESIGN_BOTH = ("Stratified random sample without replacement of unique messages, by the judge's verdict: n_yes of "
               "those it answered yes and n_no of those it answered no (the report counts each stratum), each "
               "stratum drawn as the messages with the smallest SHA-256('seam-occurrence:<seed>:<message_sha256>'); "
               "the two are shown mixed, in the order of a second, independent key "
               "SHA-256('seam-occurrence-shown:<seed>:<message_sha256>'), so that neither the page nor a case's "
               "position tells the strata apart. No feature, offset or verdict is stored per case; the report "
               "joins the verdicts from the judged file.")
DESIGN = ("Simple random sample without replacement of unique messages (the first candidate row of each message "
          "SHA-256): every unique screened positive, or with a judged file every one the judge answered yes. "
          "The messages with the smallest SHA-256('seam-occurrence:<seed>:<message_sha256>') are drawn, and "
          "shown in that order. No feature, offset or verdict is stored per case.")


def order_key(seed: int, digest: str) -> bytes:
    return hashlib.sha256(f"seam-occurrence:{seed}:{digest}".encode()).digest()


def shown_key(seed: int, digest: str) -> bytes:
    """The order a stratified sample is shown in: independent of the drawing key, because ordering by that key
    would put the larger stratum's draws first (the smallest of many keys are smaller than the smallest of few:
    50 drawn of 1,667 lie in the bottom 3 % of the key space, 100 of 211 reach half of it)."""
    return hashlib.sha256(f"seam-occurrence-shown:{seed}:{digest}".encode()).digest()


def mix(strata: list[list[str]], seed: int) -> list[str]:
    """The drawn checksums of every stratum, shown in the order of `shown_key`.

    >>> few, many = [f"{i:064x}" for i in range(200)], [f"{i:064x}" for i in range(200, 2000)]
    >>> strata = [draw(few, 50, seed=1), draw(many, 50, seed=1)]
    >>> first_half = set(mix(strata, seed=1)[:50]); len(first_half & set(few)), len(first_half & set(many))
    (26, 24)
    >>> by_drawing_key = sorted(strata[0] + strata[1], key=lambda digest: order_key(1, digest))
    >>> first_half = set(by_drawing_key[:50]); len(first_half & set(few)), len(first_half & set(many))
    (3, 47)
    """
    return sorted((digest for stratum in strata for digest in stratum), key=lambda digest: shown_key(seed, digest))


def draw(digests: list[str], n: int, seed: int) -> list[str]:
    """`n` of the message checksums, by the seeded SHA-256 order.

    >>> pool = [f"{i:064x}" for i in range(20)]
    >>> draw(pool, 3, seed=1) == draw(pool, 5, seed=1)[:3], draw(pool, 3, seed=1) == draw(pool, 3, seed=2)
    (True, False)
    """
    return sorted(digests, key=lambda digest: order_key(seed, digest))[:n]


@dataclass(frozen=True)
class Sample:
    header: SampleHeader
    cases: tuple[Case, ...]

    def rows(self) -> list[dict]:
        return [self.header.to_row(), *(case.to_row() for case in self.cases)]


def draw_file(candidates_path, *, judged: str | None, n: int, seed: int, negatives: int = 0) -> Sample:
    """The sample drawn from a candidates file (and a judged file, whose yes verdicts are the population; with
    `negatives`, that many of its no verdicts too, to measure what the judge missed)."""
    if negatives and judged is None:
        raise UserError("--negatives draws the judge's no verdicts: give --judged too")
    file = read_candidates(candidates_path)
    unique = {candidate.message_sha256: candidate for candidate in file.unique()}
    judged_ref = None
    if judged is not None:
        verdicts = read_judged(judged)
        candidates_sha256 = sha256_file(file.path)
        if verdicts.header.candidates.sha256 != candidates_sha256:
            raise UserError(f"{judged}: judged from candidates {verdicts.header.candidates.sha256[:12]}…, not from "
                            f"{candidates_path} ({candidates_sha256[:12]}…)")
        population = [row.message_sha256 for row in verdicts.judged if row.verdict == "yes"]
        rejected = [row.message_sha256 for row in verdicts.judged if row.verdict == "no"]
        judged_ref = FileRef(Path(judged).name, sha256_file(judged))
    else:
        population = list(unique)
    if not population:
        raise UserError(f"{judged or candidates_path}: no positives to draw from")
    drawn = draw(population, n, seed)
    if negatives:
        if not rejected:
            raise UserError(f"{judged}: no no verdicts to draw --negatives from")
        drawn = mix([drawn, draw(rejected, negatives, seed)], seed)
        population = [*population, *rejected]
    chosen = [unique[digest] for digest in drawn]
    cases = tuple(Case(kind="case", case=number, corpus=c.corpus, conversation=c.conversation, index=c.index,
                       turn=c.turn, message_sha256=c.message_sha256) for number, c in enumerate(chosen, start=1))
    header = SampleHeader(kind="header", occurrence_version=OCCURRENCE_VERSION, created_by=SampleHeader.CREATED_BY,
                          seed=seed, n=n + negatives, population=("judged-yes-and-no" if negatives else
                                                               "judged" if judged else "screened"),
                          population_size=len(population), design=DESIGN_BOTH if negatives else DESIGN,
                          candidates=FileRef(file.path.name, sha256_file(file.path)), judged=judged_ref,
                          corpora=file.header.corpora)
    return Sample(header, cases)


def write(sample: Sample, out: str | Path) -> None:
    """Create the sample file; never overwrite one (it may hold answers)."""
    out = Path(out)
    if out.exists():
        raise UserError(f"{out}: exists; a sample file is never overwritten (it may hold answers): choose another "
                        "--out")
    jsonl.write(out, sample.rows(), "sample")
