"""`seam.py occurrence report`: what each stage of the audit counted, how many of the checked positives a
human confirmed, and (for a sample of the judge's no verdicts too) how many genuine ones the judge missed.

    occurrence_pipeline   every count in pipeline order: conversations read, tails cut short, user turns
                          screened, candidates, unique candidates, the judge's verdicts, the human answers,
                          and the confirmed share with its 95% Wilson interval
    occurrence_shapes     unique candidates by artifact kind and by what separates the remark from it
    occurrence_features   unique candidates on which each feature of the screen fired
    occurrence_readers    (--second) two readers' answers to the same draw crossed, with their raw
                          agreement and Cohen's kappa on the definite ones

as CSV and Markdown (`stats.render`), with occurrence_provenance.json (the
corpora's and every input file's SHA-256, the versions and the seed). The
confirmed share is yes / (yes + no) among the answered cases: unsure answers
are counted, and left out of the share. Same files in, same bytes out.

None of these numbers estimates prevalence. The screen is a retrieval rule
aimed at one shape, with misses it does not measure, run on whatever corpus was
at hand; the share confirmed describes the pipeline's positives, not how often
users write this way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.files import sha256_file
from common.seams.segment import ARTIFACT_KINDS, FEATURES, SEPARATORS
from occurrence import SCREEN_VERSION, specs
from occurrence.records import ANSWERS, OCCURRENCE_VERSION
from occurrence.store import CandidatesFile, JudgedFile, SampleFile, read_candidates, read_judged, read_sample
from stats.agreement import cross
from stats.rates import proportion
from stats.render import Table, interval_text, write_report

PREVALENCE_NOTE = ("These counts do not estimate prevalence. The screen is a retrieval rule aimed at one message "
                   "shape (instruction, pasted artifact, short remark after it): it misses messages it was not "
                   "written for, and nothing here measures those misses; the corpus is whatever sample was at "
                   "hand. The confirmed share describes this pipeline's positives, not how often users write "
                   "this way.")
SHARE_NOTE = ("Confirmed share: human yes / (yes + no) among the answered cases of the sample, with a 95% Wilson "
              "score interval; unsure answers are counted above and left out of the share.")
UNIQUE_NOTE = ("Unique: one per message SHA-256 (the same text repeated in the corpus counts once), as the "
               "judge, the sample and these shares count them.")

@dataclass(frozen=True)
class OccurrenceReport:
    tables: tuple[Table, ...]
    provenance: dict
    summary: tuple[str, ...]


def _plain(stage: str, count: int) -> tuple:
    return (stage, count, None, None, None, None)


def pipeline_table(candidates: CandidatesFile, judged: JudgedFile | None, sample: SampleFile | None) -> Table:
    header = candidates.header
    cut = [ref.truncated for ref in header.corpora if ref.truncated is not None]
    rows = [_plain("corpus files read", len(header.corpora)),
            _plain("conversations read (complete)", header.conversations),
            _plain("corpus files cut short at their end (read up to the cut)", len(cut)),
            _plain("bytes skipped in those cut-short tails", sum(t.bytes for t in cut)),
            _plain("conversations skipped for size (a line over 64 MiB)", sum(ref.oversized for ref in header.corpora)),
            _plain("turns read", header.turns),
            _plain("user turns screened", header.user_turns),
            _plain("candidates (screen positives)", header.candidates),
            _plain("unique candidates", header.unique_candidates)]
    if judged is not None:
        rows += [_plain("unique candidates in the judged file", judged.header.judged),
                 _plain("judge: yes", judged.header.yes), _plain("judge: no", judged.header.no),
                 _plain("judge: unparsable reply", judged.header.unparsable),
                 _plain("judge: unanswered (not asked yet, or no usable reply)", judged.header.unanswered)]
    if sample is not None and sample.header.population == "judged-yes-and-no":
        rows += _strata_rows(sample, judged)
    elif sample is not None:
        latest = sample.latest()
        answers = [latest[case.case].answer for case in sample.cases if case.case in latest]
        rows += [_plain(f"sampled for the human check (from {sample.header.population_size} unique "
                        f"{sample.header.population} positives, seed {sample.header.seed})", len(sample.cases)),
                 _plain("human: answered", len(answers)), _plain("human: yes", answers.count("yes")),
                 _plain("human: no", answers.count("no")), _plain("human: unsure", answers.count("unsure")),
                 _share_row("human-confirmed share", answers)]
    notes = (PREVALENCE_NOTE, UNIQUE_NOTE) + ((SHARE_NOTE,) if sample is not None else ())
    return specs.PIPELINE.table("Occurrence audit: the pipeline's counts", rows, notes)


STRATA = (("yes", "judge yes", "human-confirmed share of the judge's yes"),
          ("no", "judge no", "judge's miss rate (human yes among its no)"))


def _stratum_answers(sample: SampleFile, judged: JudgedFile, stratum: str) -> tuple[int, list[str]]:
    """How many cases of the sample the judge gave this verdict, and the answers given to them."""
    verdict = {row.message_sha256: row.verdict for row in judged.judged}
    latest = sample.latest()
    cases = [case for case in sample.cases if verdict.get(case.message_sha256) == stratum]
    return len(cases), [latest[case.case].answer for case in cases if case.case in latest]


def _share_row(label: str, answers: list[str]) -> tuple:
    """(label, yes, yes + no, share, ci low, ci high): the share of yes among the definite answers (Wilson)."""
    yes, no = answers.count("yes"), answers.count("no")
    result = proportion(yes, yes + no)
    return (label, yes, yes + no, result.statistic, result.confidence_interval.low, result.confidence_interval.high)


def _strata_rows(sample: SampleFile, judged: JudgedFile | None) -> list[tuple]:
    """A sample of the judge's yes and no: the confirmed share among its yes, and among its no the share a
    person said yes to (what the judge missed), each with a Wilson interval."""
    if judged is None:
        raise UserError(f"{sample.path}: a sample of the judge's yes and no verdicts is reported with its judged file "
                        "(--judged)")
    rows = []
    for stratum, label, share in STRATA:
        drawn, answers = _stratum_answers(sample, judged, stratum)
        rows += [_plain(f"sampled for the human check: {label} (seed {sample.header.seed})", drawn),
                 _plain(f"human on {label}: answered", len(answers)),
                 _plain(f"human on {label}: yes", answers.count("yes")),
                 _plain(f"human on {label}: no", answers.count("no")),
                 _plain(f"human on {label}: unsure", answers.count("unsure")), _share_row(share, answers)]
    return rows


def shapes_table(candidates: CandidatesFile) -> Table:
    unique = candidates.unique()
    rows = tuple((kind, separator, sum(c.artifact_kind == kind and c.separator == separator for c in unique))
                 for kind in ARTIFACT_KINDS for separator in SEPARATORS)
    notes = ("Artifact: fenced (inside Markdown code fences), code (unfenced lines, half or more of them code), "
             "prose (40 words or more, mostly not code). Remark after: a blank line, or a single line break "
             "(docs/OCCURRENCE.md).",)
    return specs.SHAPES.table("Unique candidates by artifact and separator", rows, notes)


def features_table(candidates: CandidatesFile) -> Table:
    unique = candidates.unique()
    rows = tuple((name, sum(name in c.features for c in unique), len(unique),
                  sum(name in c.features for c in unique) / len(unique) if unique else float("nan"))
                 for name in FEATURES)
    notes = ("Each feature is one rule of the screen (docs/OCCURRENCE.md); the remark_* markers are recorded "
             "whether or not they decided.",)
    return specs.FEATURES.table("Features of the unique candidates", rows, notes)


def readers_table(first: SampleFile, second: SampleFile, judged: JudgedFile | None) -> tuple[Table, dict]:
    """Two readers' answers to the same draw crossed, with raw agreement (Wilson) and Cohen's kappa on the cases
    both answered yes or no (`stats.agreement`), and the second reader's own shares beside the first's."""
    a, b = first.latest(), second.latest()
    crossing = cross({n: row.answer for n, row in a.items()}, {n: row.answer for n, row in b.items()}, ANSWERS)
    answered = f"{second.reviewer} answered {len(b)} of {len(second.cases)} cases, {first.reviewer} {len(a)}."
    if first.header.population == "judged-yes-and-no" and judged is not None:
        shares = [_share_row(label, _stratum_answers(second, judged, stratum)[1]) for stratum, _, label in STRATA]
    else:
        shares = [_share_row("human-confirmed share", [row.answer for row in b.values()])]
    notes = (crossing.summary("yes or no", "those"), answered,
             *(f"By {second.reviewer}, {row[0]}: {row[1]} of {row[2]} = {interval_text(row[3], row[4], row[5])} %."
               for row in shares),
             "Kappa is computed on the cases both readers answered yes or no (unsure left out); it is not weighted "
             "by stratum.",
             "Disagreements, by case: " + (", ".join(f"{n} ({one} vs {other})"
                                                     for n, one, other in crossing.disagreements) or "none") + ".")
    columns = specs.READERS.headed(first=f"{first.reviewer} \\ {second.reviewer}")
    rows = tuple((answer, *crossing.table[i]) for i, answer in enumerate(ANSWERS))
    record = {"file": second.path.name, "sha256": sha256_file(second.path), "reviewer": second.reviewer,
              **crossing.record()}
    return specs.READERS.table("Two readers' answers crossed", rows, notes, columns=columns), record


def _check_second(first: SampleFile, second: SampleFile) -> None:
    """A second reader's file must be a copy of the same draw (a second `occurrence sample` with the same files
    and seed writes one), answered by someone else; the first must have answers to cross."""
    if first.path.resolve() == second.path.resolve() or sha256_file(first.path) == sha256_file(second.path):
        raise UserError(f"{second.path}: the same file as --answers; --second is another reader's copy of the draw")
    mine, theirs = first.header.to_row(), second.header.to_row()
    differ = [key for key in sorted(set(mine) | set(theirs)) if mine.get(key) != theirs.get(key)]
    if differ:
        raise UserError(f"{second.path}: not a copy of the draw in {first.path}: its header differs in "
                        f"{', '.join(differ)}")
    for mine_case, their_case in zip(first.cases, second.cases, strict=True):  # n is in the header: same length
        if mine_case != their_case:
            raise UserError(f"{second.path}: not a copy of the draw in {first.path}: case {mine_case.case} differs")
    for file in (first, second):
        if file.reviewer is None:
            raise UserError(f"{file.path}: no answers yet; two readers are crossed once both have answered")
    if second.reviewer == first.reviewer:
        raise UserError(f"{second.path}: answered by {second.reviewer}, as {first.path} is; --second is another "
                        "reader's copy")


def _check_sources(candidates: CandidatesFile, judged: JudgedFile | None, sample: SampleFile | None,
                   judged_path: Path | None) -> None:
    digest = sha256_file(candidates.path)
    if judged is not None and judged.header.candidates.sha256 != digest:
        raise UserError(f"{judged.path}: judged from candidates {judged.header.candidates.sha256[:12]}…, not from "
                        f"{candidates.path} ({digest[:12]}…)")
    if sample is not None:
        if sample.header.candidates.sha256 != digest:
            raise UserError(f"{sample.path}: drawn from candidates {sample.header.candidates.sha256[:12]}…, not "
                            f"from {candidates.path} ({digest[:12]}…)")
        if sample.header.judged is not None:
            if judged_path is None:
                raise UserError(f"{sample.path}: drawn from the judge's yes verdicts; give that judged file with "
                                "--judged")
            if sample.header.judged.sha256 != sha256_file(judged_path):
                raise UserError(f"{sample.path}: drawn from judged file {sample.header.judged.sha256[:12]}…, not "
                                f"from {judged_path}")


def build(candidates_path, *, judged: str | None = None, answers: str | None = None,
          second: str | None = None) -> OccurrenceReport:
    """Every table, the provenance and the summary lines printed on the terminal."""
    if second is not None and answers is None:
        raise UserError(f"--second {second}: a second reader's copy of the --answers sample; give --answers too")
    candidates = read_candidates(candidates_path)
    verdicts = read_judged(judged) if judged is not None else None
    sample = read_sample(answers) if answers is not None else None
    _check_sources(candidates, verdicts, sample, Path(judged) if judged is not None else None)
    pipeline = pipeline_table(candidates, verdicts, sample)
    tables = (pipeline, shapes_table(candidates), features_table(candidates))
    readers = None
    if second is not None:
        other = read_sample(second)
        _check_second(sample, other)
        readers_tbl, readers = readers_table(sample, other, verdicts)
        tables += (readers_tbl,)
    header = candidates.header
    provenance = {
        "occurrence_version": OCCURRENCE_VERSION, "screen_version": SCREEN_VERSION,
        "corpora": [ref.to_row() for ref in header.corpora],
        "candidates": {"file": candidates.path.name, "sha256": sha256_file(candidates.path)},
        "judged": None if verdicts is None else {
            "file": verdicts.path.name, "sha256": sha256_file(verdicts.path), "model": verdicts.header.model,
            "prompt_version": verdicts.header.prompt_version, "prompt_sha256": verdicts.header.prompt_sha256},
        "answers": None if sample is None else {
            "file": sample.path.name, "sha256": sha256_file(sample.path), "reviewer": sample.reviewer,
            "seed": sample.header.seed, "population": sample.header.population},
        "second": readers,
        "confidence": 0.95, "interval": "Wilson score", "statement": PREVALENCE_NOTE,
    }
    summary = [f"occurrence: {header.conversations:,} conversations, {header.user_turns:,} user turns screened, "
               f"{header.candidates:,} candidates, {header.unique_candidates:,} unique"]
    if verdicts is not None:
        answered = verdicts.header.judged - verdicts.header.unanswered
        summary.append(f"judge ({verdicts.header.model}): yes {verdicts.header.yes:,} of {answered:,} unique "
                       f"candidates answered ({verdicts.header.unanswered:,} unanswered)")
    for row in pipeline.rows:
        if row[2] is not None:  # the shares: the confirmed one, and with a stratified sample the miss rate too
            summary.append(f"{row[0]}: {row[1]} of {row[2]} = {interval_text(row[3], row[4], row[5])} %")
    if readers is not None:
        summary.append(f"second reader ({readers['reviewer']}): {tables[-1].notes[0][0].lower()}"
                       f"{tables[-1].notes[0][1:]}")
    summary.append("these counts do not estimate prevalence")
    return OccurrenceReport(tables, provenance, tuple(summary))


def write(report: OccurrenceReport, out: Path) -> list[Path]:
    """Write each table as CSV and Markdown, and occurrence_provenance.json, all or nothing."""
    return write_report(out, report.tables, ("occurrence_provenance.json", jsonl.dumps(report.provenance)),
                        "occurrence report files")
