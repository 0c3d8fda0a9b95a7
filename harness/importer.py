"""`seam.py import`: a harness's logs of one model as one trace file, every prompt checked, written all or none.

The logs are inspect_ai logs (`.eval`, `.json`) or OpenAI Batch files (`.jsonl`: the input file, which holds
the prompts, and the output and error files), or lm-eval's `samples_seam_<date>.jsonl`, each read with the
`results_<date>.json` of its run (`harness.lmeval_log`), or promptfoo's output (`-o out.json`, told from an
inspect `.json` log by its content: `harness.jsonlog`); one harness per import. Each request's prompt is checked
against the kit's request for its id, the whole conversation (system prompt, earlier turns, message:
`harness.conversation.check_prompt`), the request rendered from the committed benchmark under the built-in
conditions and those of `--conditions FILE` (`Kit`: a later turn that holds the model's own reply reads it from
`--replies TRACE`, as `seam.py prompts` does); a request that appears twice (in two logs, or in two epochs of
one) is refused, unless `--epoch N` picks one epoch. The rows go to a temporary file beside `--out` as they are
read (memory stays bounded: one sample at a time) and replace nothing: `--out` must not exist, and is written only when
every log was read without a refusal (`common.files.Spool`). Rows are written as the runner writes them, with
what a log may hold of a credential redacted (`harness.rows.trace_line`).
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from common.errors import UserError
from common.files import Spool
from common.records import Request, shown
from harness import batch_log, inspect_log, jsonlog, lmeval_log, promptfoo_log
from harness.conversation import check_prompt
from harness.rows import Collected, public_url, trace_line, trace_row
from runner.config import NAME_PATTERN

if TYPE_CHECKING:
    from benchmark.replies import Replies

DATA = Path(__file__).resolve().parents[1] / "data"
LIMIT_REASON = "stopped by the output limit"


@dataclass
class Summary:
    out: Path
    model: str
    harness: str
    logs: int
    counts: Counter
    truncated: int = 0
    skipped_epochs: int = 0
    unanswered: int = 0  # batch requests with no result in the files given
    note: str = ""  # what the harness's log cannot tell, said after the counts

    def line(self) -> str:
        counts = self.counts
        parts = [f"ok {counts['ok']}", f"unusable {counts['unusable']} ({self.truncated} stopped by the output "
                 "limit)", f"failed {counts['failed']}"]
        extra = f"; {self.skipped_epochs} sample(s) of other epochs left out" if self.skipped_epochs else ""
        if self.unanswered:
            extra += (f"; {self.unanswered} request(s) of the input file have no result in the files given (pass "
                      "the batch's error file too)")
        if self.note:
            extra += f"; {self.note}"
        return (f"import: wrote {self.out}: {sum(counts.values())} rows of model {self.model} from {self.logs} "
                f"{self.harness} log(s): {', '.join(parts)}{extra}")


def check_out(out: Path, logs: list[Path]) -> None:
    resolved = out.resolve()
    if resolved == DATA.resolve() or resolved.is_relative_to(DATA.resolve()):
        raise UserError(f"--out {out}: is inside {DATA} (the release); write it in a folder of yours, e.g. runs/")
    if out.exists() or out.is_symlink():
        raise UserError(f"--out {out}: exists; the import writes a new trace file (remove it, or give another)")
    for path in logs:
        if path.resolve() == resolved:
            raise UserError(f"--out {out}: is one of the logs read")
        if not path.is_file():
            raise UserError(f"{path}: no such file" if not path.exists() else f"{path}: not a regular file")


def model_name(given: str | None, found: str | None, where: str) -> str:
    name = given or found
    if name is None or not NAME_PATTERN.fullmatch(name):
        said = f"--model {shown(given)}" if given else f"the model {shown(found)} of {where}"
        raise UserError(f"{said} cannot name a trace's model (letters, digits, '.', '_' or '-', starting with a "
                        "letter or digit): give --model NAME")
    return name


@dataclass
class Kit:
    """The kit's requests a log is checked against, by id, and why an id that is not among them is missing."""

    requests: dict[str, Request]
    replies: Replies | None = None
    unrendered: frozenset[str] = field(default_factory=frozenset)  # conditions left out: they need --replies

    def request(self, collected: Collected) -> Request:
        """The kit's request for a collected id; a one-line refusal saying why there is none."""
        request = self.requests.get(collected.id)
        if request is not None:
            return request
        condition = collected.id.rpartition("/")[2]
        said = f"{collected.where}: {shown(collected.id)}"
        if condition in self.unrendered:
            raise UserError(f"{said} holds the model's own reply to its opening request (condition {condition!r}): "
                            "give --replies TRACE, the trace the export read it from")
        if self.replies is not None and collected.id in self.replies.missed:
            raise UserError(f"{said} holds the model's own reply to its opening request, which is "
                            f"{self.replies.missed[collected.id]} in {self.replies.source}: give --replies the trace "
                            "the export read it from")
        raise UserError(f"{said} is not a request of the kit (a log of another task, or of a condition file's "
                        "conditions: give its --conditions FILE)")


def kit_requests(conditions: str | None, replies: str | None = None) -> Kit:
    """Every request of the kit by id: the committed benchmark under the built-in conditions and the file's, a
    later turn holding the model's own reply read from the `replies` trace (without one, such conditions are left
    out, and an id of theirs refused saying so)."""
    from benchmark import conditions as condition_sets
    from benchmark import dataset
    from benchmark.replies import Replies

    defined = condition_sets.load(conditions)
    read = Replies.read(replies) if replies else None
    unrendered = frozenset() if read else frozenset(c.name for c in defined.conditions if c.needs_replies)
    names = [name for name in defined.names if name not in unrendered]
    rendered = dataset.requests(conditions=names, defined=defined, replies=read)
    return Kit({request.id: request for request in rendered}, read, unrendered)


def import_logs(logs: list[str], out: str | Path, *, model: str | None = None, conditions: str | None = None,
                epoch: int | None = None, replies: str | None = None, log=None) -> Summary:
    log = sys.stderr if log is None else log
    out, paths = Path(out), [Path(path) for path in logs]
    check_out(out, paths)
    if model is not None:
        model_name(model, None, "")
    kinds = {_kind(path) for path in paths}
    if not kinds <= {"inspect", "batch", "promptfoo", "lm-eval"}:
        bad = next(path for path in paths if path.suffix not in (".eval", ".json", ".jsonl"))
        raise UserError(f"{bad}: expected an inspect log (.eval or .json), an OpenAI Batch file (.jsonl), a "
                        "promptfoo output (.json) or lm-eval's samples_seam_<date>.jsonl")
    if len(kinds) > 1:
        raise UserError(f"the logs given are of two harnesses or more ({', '.join(sorted(kinds))}); import one "
                        "model's logs of one harness at a time")
    kit = kit_requests(conditions, replies)
    spool = Spool(out, "trace")
    try:
        if kinds == {"inspect"}:
            summary = _inspect(paths, kit, spool, model, epoch)
        elif kinds == {"promptfoo"}:
            summary = _promptfoo(paths, kit, spool, model, epoch)
        elif kinds == {"lm-eval"}:
            summary = _lmeval(paths, kit, spool, model, epoch)
        else:
            summary = _batch(paths, kit, spool, model)
        if not spool.lines:
            raise UserError(f"no samples in {', '.join(map(str, paths))}; nothing to import")
        if kit.replies is not None and kit.replies.model is not None and summary.model != kit.replies.model:
            # as `seam.py run` refuses it: a later turn shows the model its own reply, not another's
            raise UserError(f"--replies {kit.replies.source}: its rows are model {kit.replies.model!r}, the imported "
                            f"rows model {summary.model!r}: a later turn holds the model's own reply, so --replies "
                            f"takes that model's trace (and --model names it as the export did)")
        summary.out = out
        spool.commit(b"")
    except BaseException:
        spool.discard()
        raise
    print(summary.line(), file=log)
    return summary


def _kind(path: Path) -> str:
    """Which harness wrote a log: by its suffix, and for .json by its content (promptfoo's output or inspect's)."""
    if lmeval_log.is_lmeval(path):  # by lm-eval's names: samples_<task>_<date>.jsonl, results_<date>.json
        return "lm-eval"
    if path.suffix == ".json":
        return jsonlog.kind(path)
    return {".eval": "inspect", ".jsonl": "batch"}.get(path.suffix, path.suffix)


def _write(spool: Spool, collected: Collected, kit: Kit, seen: dict[str, str], model: str, summary: Summary,
           url: str | None) -> None:
    request = kit.request(collected)
    if collected.id in seen:
        raise UserError(f"{collected.where}: {collected.id} again (first in {seen[collected.id]}); each request is "
                        "imported once: give each log once (several epochs: --epoch N)")
    seen[collected.id] = collected.where
    check_prompt(collected, request)
    row = trace_row(collected, request, model, url=url)
    spool.add(trace_line(row).encode("utf-8"))
    summary.counts[row.status] += 1
    summary.truncated += bool(row.reason and row.reason.startswith(LIMIT_REASON))


def _inspect(paths: list[Path], kit: Kit, spool: Spool, model: str | None, epoch: int | None) -> Summary:
    seen: dict[str, str] = {}
    summary = Summary(Path(), "", "inspect_ai", len(paths), Counter())
    first = None
    for path in paths:
        header, samples = inspect_log.read_log(path)
        header.check_task()
        if first is None:
            first = header
            summary.model = model_name(model, inspect_log.served_name(header.model), str(path))
        elif header.model != first.model:
            raise UserError(f"{path}: a log of {shown(header.model)}, but {first.path} is of {shown(first.model)}; "
                            "import one model at a time")
        base = public_url(header.base_url)  # without credentials or query, before the endpoint is added
        url = f"{base.rstrip('/')}/chat/completions" if base else None
        for where, sample in samples:
            collected = inspect_log.collected(sample, where, header)
            if epoch is not None and collected.epoch != epoch:
                summary.skipped_epochs += 1
                continue
            if epoch is None and collected.epoch != 1:
                raise UserError(f"{where}: a sample of epoch {collected.epoch}: the task ran several epochs, and "
                                "SEAM asks each request once; pass --epoch N to import one of them")
            _write(spool, collected, kit, seen, summary.model, summary, url)
    if epoch is not None and not seen:
        raise UserError(f"no sample of epoch {epoch} in {', '.join(map(str, paths))}")
    summary.harness = named_with_version("inspect_ai", [first.version] if first else [])
    return summary


def _promptfoo(paths: list[Path], kit: Kit, spool: Spool, model: str | None, epoch: int | None) -> Summary:
    if epoch is not None:
        raise UserError(f"--epoch {epoch}: promptfoo's outputs have no epochs (SEAM asks each request once; an "
                        "eval run with --repeat is refused)")
    seen: dict[str, str] = {}
    summary = Summary(Path(), "", "promptfoo", len(paths), Counter())
    first: tuple[str, Path] | None = None
    versions = []
    for path in paths:
        header, results = promptfoo_log.read_output(path)
        versions.append(header.version)
        repeated: dict[str, str] = {}
        for where, result in results:
            collected = promptfoo_log.collected(result, where, header)
            provider = collected.harness["model"]
            if first is None:
                first = (provider, path)
                summary.model = model_name(model, promptfoo_log.served_name(provider), str(path))
            elif provider != first[0]:
                raise UserError(f"{where}: a result of the provider {shown(provider)}, but {first[1]} has results of "
                                f"{shown(first[0])}; import one model at a time")
            if collected.id in repeated:
                raise UserError(f"{where}: {collected.id} again (first at {repeated[collected.id]}): the eval asked "
                                "it more than once (promptfoo eval --repeat N); SEAM asks each request once")
            repeated[collected.id] = where.rsplit(": ", 1)[-1]
            _write(spool, collected, kit, seen, summary.model, summary, None)
    summary.harness = named_with_version("promptfoo", versions)
    return summary


def _batch(paths: list[Path], kit: Kit, spool: Spool, model: str | None) -> Summary:
    kinds = {path: batch_log.kind_of(path) for path in paths}
    inputs = [path for path, kind in kinds.items() if kind == "input"]
    if not inputs:
        raise UserError("no Batch API input file among the files given: the output file holds no prompts, and the "
                        "import checks each against the kit's message; give the batch's input file too "
                        "(DIR/batch_input.jsonl of seam.py export)")
    asked = batch_log.read_inputs(inputs)
    models = {body.body.get("model") for body in asked.values()}
    if len(models) > 1:
        raise UserError(f"the input file(s) ask {len(models)} models ({', '.join(sorted(map(str, models)))}); "
                        "import one model at a time")
    summary = Summary(Path(), model_name(model, _one(models), str(inputs[0])), "OpenAI Batch API", len(paths),
                      Counter())
    seen: dict[str, str] = {}
    for path in (path for path, kind in kinds.items() if kind == "results"):
        for collected in batch_log.results(path, asked, summary.model):
            _write(spool, collected, kit, seen, summary.model, summary, batch_log.ENDPOINT)
    summary.unanswered = len(set(asked) - set(seen))
    return summary


def _one(values: set) -> str | None:
    value = next(iter(values), None)
    return value if isinstance(value, str) else None


def _lmeval(paths: list[Path], kit: Kit, spool: Spool, model: str | None, epoch: int | None) -> Summary:
    """lm-eval's samples files, each read with its run's results file (`harness.lmeval_log`)."""
    if epoch is not None:
        raise UserError(f"--epoch {epoch}: lm-eval's samples have no epochs (the exported task asks each request once)")
    found = lmeval_log.runs(paths)
    if not found:
        raise UserError(f"no lm-eval samples file among {', '.join(map(str, paths))}; give the samples_seam_<date>"
                        ".jsonl that --log_samples wrote (its results_<date>.json is read from beside it)")
    first = found[0][1]
    for _, run in found[1:]:
        if run.model != first.model:
            raise UserError(f"{run.path}: a run of {shown(run.model)}, but {first.path} is of {shown(first.model)}; "
                            "import one model at a time")
    summary = Summary(Path(), model_name(model, first.model, str(first.path)), "lm-eval", len(found), Counter(),
                      note="lm-eval keeps no finish reason: a reply cut by the output limit is counted ok")
    seen: dict[str, str] = {}
    for path, run in found:
        for collected in lmeval_log.samples(path, run):
            _write(spool, collected, kit, seen, summary.model, summary, None)
    summary.harness = named_with_version("lm-eval", [run.version for _, run in found])
    return summary


def named_with_version(harness: str, versions: list) -> str:
    """The harness as the summary line names it: with its version when every log gives the same one.

    >>> named_with_version("lm-eval", ["0.4.13", "0.4.13"]), named_with_version("promptfoo", ["0.118.0", None])
    ('lm-eval 0.4.13', 'promptfoo')
    """
    found = set(versions)
    return f"{harness} {versions[0]}" if len(found) == 1 and versions[0] else harness
