"""`seam.py occurrence pilot`: try a judge model on a sample that was already answered on the blinded page.

Before a judge runs over every candidate (hours of a model's time), it is worth
knowing how often it says what the human check said. The pilot sends the
answered sample's messages through the judge's own path (the same prompt, the
same request ids, `runner.run.run`), and compares each verdict with the
answer in force: agreement, and the precision and recall of the judge's "yes"
against the human "yes" (unsure answers and unanswered cases are left out and
counted). Because the requests are the judge's, a pilot trace file can be given
to the full `judge` run later as its `--traces`: what the pilot asked is not
asked again.

The result is counts only (no message text); `table` gives it as a small table.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from common.errors import UserError
from occurrence.judge import PROMPT_PATH, check_trace, check_traces_path, load_prompt, make_request, parse_verdict
from occurrence.store import read_sample
from occurrence.texts import read_texts
from stats.rates import proportion


@dataclass(frozen=True)
class Pilot:
    """How a judge's verdicts on an answered sample compare with the answers."""

    model: str
    compared: int  # cases with a human yes/no and a judge yes/no
    agree: int
    both_yes: int  # judge yes, human yes
    judge_yes: int
    human_yes: int
    left_out: int  # unsure answers, unanswered cases, unparsable or unanswered verdicts

    @property
    def agreement(self):
        return proportion(self.agree, self.compared)

    @property
    def precision(self):
        """Of the judge's yes, the share the human said yes to."""
        return proportion(self.both_yes, self.judge_yes)

    @property
    def recall(self):
        """Of the human yes, the share the judge said yes to."""
        return proportion(self.both_yes, self.human_yes)


def compare(answers: dict[str, str], verdicts: dict[str, str], model: str) -> Pilot:
    """Compare human answers with judge verdicts, both keyed by message SHA-256.

    >>> p = compare({"a": "yes", "b": "no", "c": "yes", "d": "unsure"},
    ...             {"a": "yes", "b": "yes", "c": "no", "d": "yes"}, "m")
    >>> (p.compared, p.agree, p.both_yes, p.judge_yes, p.human_yes, p.left_out)
    (3, 1, 1, 2, 2, 1)
    """
    pairs = [(answer, verdicts.get(digest)) for digest, answer in answers.items()]
    kept = [(answer, verdict) for answer, verdict in pairs if answer in ("yes", "no") and verdict in ("yes", "no")]
    return Pilot(model=model, compared=len(kept), agree=sum(answer == verdict for answer, verdict in kept),
                 both_yes=sum(answer == verdict == "yes" for answer, verdict in kept),
                 judge_yes=sum(verdict == "yes" for _, verdict in kept),
                 human_yes=sum(answer == "yes" for answer, _ in kept), left_out=len(pairs) - len(kept))


def pilot(sample_path, *, corpus, config_path, traces, log=None, policy=None,
          prompt_path: str | Path = PROMPT_PATH) -> Pilot:
    """Ask the judge about every answered case of the sample (resuming from `traces`), and compare."""
    from common.traces import read_final
    from runner.config import load_config
    from runner.run import run

    log = sys.stderr if log is None else log
    check_traces_path(traces)
    sample = read_sample(sample_path)
    latest = sample.latest()
    cases = [case for case in sample.cases if case.case in latest]
    if not cases:
        raise UserError(f"{sample_path}: no answered case to compare with; answer it first (occurrence annotate)")
    config = load_config(config_path)
    prompt = load_prompt(prompt_path)
    check_trace(traces, config.name, prompt, move_torn=False)
    wanted = {(case.corpus, case.index, case.turn): case.message_sha256 for case in cases}
    texts = read_texts(sample.header.corpora, corpus, wanted)
    requests = [make_request(digest, texts[key], prompt) for key, digest in wanted.items()]
    del texts
    run(config, requests, traces, log=log, policy=policy)
    final = read_final(traces).final
    verdicts = {}
    for request in requests:
        row = final.get(request.id)
        if row is not None and row.status == "ok":
            verdicts[request.cluster.removeprefix("occ-")] = parse_verdict(row.output)
    answers = {case.message_sha256: latest[case.case].answer for case in cases}
    return compare(answers, verdicts, config.name)


def table(results: list[Pilot]) -> str:
    """One line per judge model: agreement, precision and recall of its yes, with 95% Wilson intervals."""
    def shown(p) -> str:
        if not p.n:
            return "-"
        interval = p.confidence_interval
        return f"{p.count}/{p.n} = {p.statistic:.2f} [{interval.low:.2f}, {interval.high:.2f}]"

    lines = ["| judge | compared | agreement | precision of yes | recall of yes | left out |",
             "|---|---:|---:|---:|---:|---:|"]
    for result in results:
        lines.append(f"| {result.model} | {result.compared} | {shown(result.agreement)} | "
                     f"{shown(result.precision)} | {shown(result.recall)} | {result.left_out} |")
    return "\n".join(lines)
