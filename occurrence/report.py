"""`seam.py occurrence report`: what each stage of the audit counted, and how many of the checked positives a
human confirmed.

    occurrence_pipeline   every count in pipeline order: conversations read, tails cut short, user turns
                          screened, candidates, unique candidates, the judge's verdicts, the human answers,
                          and the confirmed share with its 95% Wilson interval
    occurrence_shapes     unique candidates by artifact kind and by what separates the remark from it
    occurrence_features   unique candidates on which each feature of the screen fired

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
from occurrence import SCREEN_VERSION, specs
from occurrence.records import OCCURRENCE_VERSION
from occurrence.segment import ARTIFACT_KINDS, FEATURES, SEPARATORS
from occurrence.store import CandidatesFile, JudgedFile, SampleFile, read_candidates, read_judged, read_sample
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
        yes, no = answers.count("yes"), answers.count("no")
        result = proportion(yes, yes + no)
        ci = result.confidence_interval
        rows += [_plain(f"sampled for the human check (from {sample.header.population_size} unique "
                        f"{sample.header.population} positives, seed {sample.header.seed})", len(sample.cases)),
                 _plain("human: answered", len(answers)), _plain("human: yes", yes), _plain("human: no", no),
                 _plain("human: unsure", answers.count("unsure")),
                 ("human-confirmed share", yes, yes + no, result.statistic, ci.low, ci.high)]
    notes = (PREVALENCE_NOTE, UNIQUE_NOTE) + ((SHARE_NOTE,) if sample is not None else ())
    return specs.PIPELINE.table("Occurrence audit: the pipeline's counts", rows, notes)


def _strata_rows(sample: SampleFile, judged: JudgedFile | None) -> list[tuple]:
    """A sample of the judge's yes and no: the confirmed share among its yes, and among its no the share a
    person said yes to (what the judge missed), each with a Wilson interval."""
    if judged is None:
        raise UserError(f"{sample.path}: a sample of the judge's yes and no verdicts is reported with its judged file "
                        "(--judged)")
    verdict = {row.message_sha256: row.verdict for row in judged.judged}
    latest = sample.latest()
    rows = []
    for stratum, label, share in (("yes", "judge yes", "human-confirmed share of the judge's yes"),
                                  ("no", "judge no", "judge's miss rate (human yes among its no)")):
        cases = [case for case in sample.cases if verdict.get(case.message_sha256) == stratum]
        answers = [latest[case.case].answer for case in cases if case.case in latest]
        yes, no = answers.count("yes"), answers.count("no")
        result = proportion(yes, yes + no)
        ci = result.confidence_interval
        rows += [_plain(f"sampled for the human check: {label} (seed {sample.header.seed})", len(cases)),
                 _plain(f"human on {label}: answered", len(answers)), _plain(f"human on {label}: yes", yes),
                 _plain(f"human on {label}: no", no), _plain(f"human on {label}: unsure", answers.count("unsure")),
                 (share, yes, yes + no, result.statistic, ci.low, ci.high)]
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


def build(candidates_path, *, judged: str | None = None, answers: str | None = None) -> OccurrenceReport:
    """Every table, the provenance and the summary lines printed on the terminal."""
    candidates = read_candidates(candidates_path)
    verdicts = read_judged(judged) if judged is not None else None
    sample = read_sample(answers) if answers is not None else None
    _check_sources(candidates, verdicts, sample, Path(judged) if judged is not None else None)
    pipeline = pipeline_table(candidates, verdicts, sample)
    tables = (pipeline, shapes_table(candidates), features_table(candidates))
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
        "confidence": 0.95, "interval": "Wilson score", "statement": PREVALENCE_NOTE,
    }
    summary = [f"occurrence: {header.conversations:,} conversations, {header.user_turns:,} user turns screened, "
               f"{header.candidates:,} candidates, {header.unique_candidates:,} unique"]
    if verdicts is not None:
        answered = verdicts.header.judged - verdicts.header.unanswered
        summary.append(f"judge ({verdicts.header.model}): yes {verdicts.header.yes:,} of {answered:,} unique "
                       f"candidates answered ({verdicts.header.unanswered:,} unanswered)")
    if sample is not None:
        share = pipeline.rows[-1]
        summary.append(f"human-confirmed: {share[1]} of {share[2]} = {interval_text(share[3], share[4], share[5])} %")
    summary.append("these counts do not estimate prevalence")
    return OccurrenceReport(tables, provenance, tuple(summary))


def write(report: OccurrenceReport, out: Path) -> list[Path]:
    """Write each table as CSV and Markdown, and occurrence_provenance.json, all or nothing."""
    return write_report(out, report.tables, ("occurrence_provenance.json", jsonl.dumps(report.provenance)),
                        "occurrence report files")
