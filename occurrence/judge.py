"""`seam.py occurrence judge`: ask a model, through the kit's runner, whether each unique candidate really
ends with user speech after a pasted artifact.

One request per unique candidate: the versioned prompt (occurrence/judge_prompt.md)
with the message put in its place, read from the corpus and checked against its
SHA-256. The requests go through `runner.run.run`, the same code as `seam.py
run`, so the judge has the runner's every property: any provider, bounded
retries, the key redacted, one row appended per answer, and a rerun of the same
command resuming where the last one stopped (ids with a final row are skipped;
a trace made with another prompt or another model is refused).

The trace format is the benchmark's (common.records.TraceRow), whose ids are
`<cluster>/<condition>`: a judge request's cluster is `occ-<message SHA-256>`
and its condition `clean` (the message is sent as it is, nothing is added),
and its `benchmark_sha256` holds the judge prompt file's SHA-256. The traces hold
the model's replies, which may quote the corpus: they go where the user says
and must never be committed. The judged file holds ids and verdicts only.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.files import sha256_file
from common.records import Request, without_surrogates
from common.traces import scan
from occurrence.records import JUDGE_VERDICTS, OCCURRENCE_VERSION, FileRef, Judged, JudgeHeader
from occurrence.store import CandidatesFile, read_candidates, read_judged
from occurrence.texts import read_texts

PROMPT_PATH = Path(__file__).resolve().with_name("judge_prompt.md")
CHECKOUT = Path(__file__).resolve().parents[1]  # the kit's folder: anything in it may end up committed
PLACEHOLDER = "{message}"
VERSION_LINE = re.compile(r"judge-prompt-version: (\S+)\n---\n")
CONDITION = "clean"  # the runner's trace ids name a benchmark condition; the judge sends the message as it is
WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class Prompt:
    """The judge prompt: its version, its text with one {message} placeholder, and its file's SHA-256."""

    version: str
    template: str
    sha256: str

    def render(self, message: str) -> str:
        return self.template.replace(PLACEHOLDER, message, 1)


def load_prompt(path: str | Path = PROMPT_PATH) -> Prompt:
    """Read a prompt file: a line `judge-prompt-version: V`, a line `---`, then the prompt with exactly one
    {message} placeholder."""
    path = Path(path)
    data = path.read_bytes()
    text = data.decode("utf-8")
    match = VERSION_LINE.match(text)
    if match is None:
        raise UserError(f"{path}:1: expected 'judge-prompt-version: V' and a line '---' before the prompt")
    template = text[match.end():]
    if template.count(PLACEHOLDER) != 1:
        raise UserError(f"{path}: the prompt must hold {PLACEHOLDER} exactly once, found "
                        f"{template.count(PLACEHOLDER)}")
    return Prompt(match.group(1), template, hashlib.sha256(data).hexdigest())


def parse_verdict(output: str | None) -> str:
    """A reply as yes, no or unparsable: its first word when that is yes or no; else the one of the two
    whole words YES and NO (any case) that the reply holds, if it holds only one; else unparsable.

    >>> [parse_verdict(s) for s in ["YES", "**No.**", "Answer: yes", "either yes or no", "Maybe", None]]
    ['yes', 'no', 'yes', 'unparsable', 'unparsable', 'unparsable']
    """
    if not output:
        return "unparsable"
    words = [word.lower() for word in WORD.findall(output)]
    if words and words[0] in ("yes", "no"):
        return words[0]
    said = {word for word in words if word in ("yes", "no")}
    return said.pop() if len(said) == 1 else "unparsable"


def check_traces_path(traces) -> None:
    """Refuse judge traces inside the kit's checkout: they hold the model's replies, which may quote the
    corpus, and a file there is one `git add` away from the repository (everything under data/ is released;
    a trace at the top of the checkout, where `--traces judge.jsonl` puts it, is untracked, not ignored)."""
    resolved = Path(traces).resolve()
    if resolved.is_relative_to(CHECKOUT):
        raise UserError(f"{traces}: the judge's traces hold model replies that may quote the corpus; keep them out "
                        f"of the kit's checkout {CHECKOUT} (data/ is released, and anything else there may be "
                        "committed), e.g. in /tmp or a private folder")


def check_trace(traces, model: str, prompt: Prompt, *, move_torn: bool, torn_ok: bool = False) -> None:
    """Refuse, in the judge's own words, a trace file this run must not extend: one with a torn last line
    (unless `move_torn`), another model's, or one asked with another judge prompt. (The runner refuses the
    same, but names `seam.py run` and its --out, which the judge does not have.)"""
    path = Path(traces)
    trace = scan(path)
    if trace.torn is not None and not move_torn and not torn_ok:
        raise UserError(f"{path}:{trace.torn.line}: the last line is torn ({trace.torn.size} bytes without a final "
                        "newline, left by a crash mid-write; never an answer); rerun the same command with "
                        "--move-torn to move it aside")
    for row_id, row in trace.final.items():
        where = trace.where[row_id]
        if row.model != model:
            raise UserError(f"{where}: this trace holds the answers of model {row.model!r}, the config is "
                            f"{model!r}; give another --traces")
        if row.benchmark_sha256 != prompt.sha256:
            raise UserError(f"{where}: asked with another judge prompt (SHA-256 {row.benchmark_sha256[:12]}…); this "
                            f"is version {prompt.version} ({prompt.sha256[:12]}…): give a new --traces")


def request_id(digest: str) -> str:
    """The trace id of the judge request for the message with SHA-256 `digest`."""
    return f"occ-{digest}/{CONDITION}"


def make_request(digest: str, message: str, prompt: Prompt) -> Request:
    """The runner's request for one message; a lone surrogate in it (JSON allows one, UTF-8 cannot send it)
    goes to the model as U+FFFD."""
    rendered = without_surrogates(prompt.render(message))
    return Request(id=request_id(digest), cluster=f"occ-{digest}", source="occurrence", genre="prose",
                   license="unknown", condition=CONDITION, message=rendered, artifact="", comment=None,
                   comment_id=None, witness=None, proposition=None, benchmark_sha256=prompt.sha256)


@dataclass(frozen=True)
class Judgement:
    header: JudgeHeader
    rows: tuple[Judged, ...]
    stopped: str | None  # why the runner stopped early, if it did

    def lines(self) -> list[dict]:
        return [self.header.to_row(), *(row.to_row() for row in self.rows)]


def judge(candidates_path, *, corpus, fmt: str | None, config_path, traces, out, limit: int | None = None,
          part: tuple[int, int] | None = None, collect_only: bool = False, retry_unusable: bool = False,
          retry_failed: bool = False, move_torn: bool = False, log=None, policy=None,
          prompt_path: str | Path = PROMPT_PATH) -> Judgement:
    """Ask about the unique candidates (the first `limit`), append the answers to the first of `traces`, and
    write `out`: every unique candidate, with the verdict of any trace file given or of `out` itself
    (`carried`), else unanswered, so that no run, with or without a limit, drops a verdict it had.

    `part` = (k, n) asks only every n-th candidate, from the k-th on (1-based), so that n runs, each with its
    own server and trace file (the others' given after it, to be read), share the work; `collect_only`
    asks nothing and only writes `out`."""
    from runner.config import load_config
    from runner.run import run

    log = sys.stderr if log is None else log
    traces = [traces] if isinstance(traces, str | Path) else list(traces)
    for path in traces:
        check_traces_path(path)
    file = read_candidates(candidates_path)
    every = file.unique()
    unique = every[:limit]
    if not unique:
        raise UserError(f"{candidates_path}: no candidates to judge")
    config = load_config(config_path)
    prompt = load_prompt(prompt_path)
    check_trace(traces[0], config.name, prompt, move_torn=move_torn)
    for path in traces[1:]:  # another part's, being appended to as this runs: a torn last line is its writer's
        check_trace(path, config.name, prompt, move_torn=False, torn_ok=True)
    prior = carried(out, file, config.name, prompt)
    answered = answered_in(traces)
    mine = unique if part is None else unique[part[0] - 1::part[1]]
    ask = [c for c in mine if c.message_sha256 not in prior and request_id(c.message_sha256) not in answered]
    stopped = None
    if ask and not collect_only:
        texts = read_texts(file.header.corpora, corpus, {c.key: c.message_sha256 for c in ask}, fmt=fmt)
        requests = [make_request(c.message_sha256, texts[c.key], prompt) for c in ask]
        del texts
        stopped = run(config, requests, traces[0], retry_unusable=retry_unusable, retry_failed=retry_failed,
                      move_torn=move_torn, log=log, policy=policy).stopped
    prior = {**prior, **carried(out, file, config.name, prompt)}  # what another part wrote meanwhile
    result = collect(file, every, traces, config.name, prompt, prior)
    result = Judgement(result.header, result.rows, stopped)
    jsonl.write(out, result.lines(), "judged rows")
    if stopped:
        raise UserError(f"the judge's run stopped early: {stopped}; wrote what was answered to {out}; fix "
                        "it, then rerun with --retry-failed")
    return result


def carried(out, file: CandidatesFile, model: str, prompt: Prompt) -> dict[str, Judged]:
    """The verdicts an earlier run of the same judge wrote to `out` (yes, no or unparsable), by message SHA-256:
    they are kept and not asked again, so that a run resumes from its judged file (which is committed as it
    grows) even where its trace file (which is not) was lost. An `out` of another model, prompt or
    candidates file is refused: its verdicts would be overwritten."""
    path = Path(out)
    if not path.exists():
        return {}
    earlier = read_judged(path)
    header = earlier.header
    if (header.model, header.prompt_sha256, header.candidates.sha256) != (model, prompt.sha256,
                                                                          sha256_file(file.path)):
        raise UserError(f"{path}: holds the verdicts of model {header.model!r} with prompt "
                        f"{header.prompt_sha256[:12]}… on {header.candidates.path}; this run is {model!r} with "
                        f"{prompt.sha256[:12]}… on {Path(file.path).name}: give another --out")
    return {row.message_sha256: row for row in earlier.judged if row.verdict != "unanswered"}


def answered_in(traces) -> set[str]:
    """The request ids with an answer (a final `ok` row) in any of these trace files (a torn last line, being
    written by another part, is not read)."""
    return {row_id for path in traces for row_id, row in scan(path).final.items() if row.status == "ok"}


def collect(file: CandidatesFile, unique, traces, model: str, prompt: Prompt,
            prior: dict[str, Judged] | None = None) -> Judgement:
    """The verdicts of the candidates from the judge's trace files (their final rows; an answer in any file
    counts), or, for a candidate no trace has an answer for, from `prior` (`carried`)."""
    traces = [traces] if isinstance(traces, str | Path) else list(traces)
    final = {}
    for path in traces:
        if Path(path).exists():
            for row_id, row in scan(path).final.items():  # a torn last line is another part's, mid-write
                if row_id not in final or (final[row_id].status != "ok" and row.status == "ok"):
                    final[row_id] = row
    prior = prior or {}
    rows = []
    for candidate in unique:
        row = final.get(request_id(candidate.message_sha256))
        earlier = prior.get(candidate.message_sha256)
        if earlier is not None and (row is None or row.status != "ok"):
            rows.append(earlier)
            continue
        if row is None or row.status != "ok":
            verdict = "unanswered"
        elif row.model != model:
            raise UserError(f"{traces}: the answer for {request_id(candidate.message_sha256)} is {row.model}'s, "
                            f"not {model}'s")
        else:
            verdict = parse_verdict(row.output)
        rows.append(Judged(kind="judged", corpus=candidate.corpus, conversation=candidate.conversation,
                           index=candidate.index, turn=candidate.turn, message_sha256=candidate.message_sha256,
                           verdict=verdict, status=None if row is None else row.status))
    counts = {verdict: sum(row.verdict == verdict for row in rows) for verdict in JUDGE_VERDICTS}
    header = JudgeHeader(kind="header", occurrence_version=OCCURRENCE_VERSION, created_by=JudgeHeader.CREATED_BY,
                         candidates=FileRef(Path(file.path).name, sha256_file(file.path)), model=model,
                         prompt_version=prompt.version, prompt_sha256=prompt.sha256, judged=len(rows), **counts)
    return Judgement(header, tuple(rows), None)
