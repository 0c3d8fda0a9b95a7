"""Turn one model's traces into label rows: pair, exclude, extract, run the cascade.

For each treatment trace (newline, blank, boundary, mitigation, native, and any
condition a condition file defines) the reference is the same model's trace of
the treatment's control for the same cluster: clean for every built-in one, in
the same trace file, or (a condition file's traces kept apart, `--clean-traces`)
in another trace file of that model; a condition file's own control (e.g. a
later turn without the remark, docs/CONDITIONS.md) in the same trace file, since
it is collected with its treatments. Rows of a control are references only,
never labelled. A pair is
excluded, with the reason in the label, when either output failed, was judged
unusable by the runner, is longer than the kit reads (`common.records.MAX_OUTPUT_CHARS`:
a hand-made trace's), has no edited text, or attempts no edit and only talks to
the user (scorer/noedit.py); an unusable clean output thus
excludes all five treatments of its cluster. The reasons name the control
("clean failed: HTTP 500", "no later-control trace for this cluster"). Usable pairs go down the cascade
witness -> content -> entailment (prose only), stopping at the first tier that
fires, on the edited text less the commentary about editing the comment that
stands inside it (scorer/commentary.py). Entailment premises of all rows are
decided in one batch at the end.

Without the model file the entailment tier is listed in `tiers_not_run`:
`absorbed` is then what the lexical tiers found, a lower bound, never a
negative verdict of the entailment tier.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmark.conditions import ConditionSet, builtin
from common import jsonl
from common.errors import UserError
from common.records import MAX_OUTPUT_CHARS, Comment, Label, TraceRow
from scorer import noedit, tiers
from scorer.commentary import Kept, cut_commentary
from scorer.entailment import Entailer, first_entailed
from scorer.extract import Extraction, extract
from scorer.inputs import Item, TraceSet, asked_sha256
from scorer.noedit import returns_no_edit

# Changes whenever a rule changes (extraction, normalisation, stopwords, tiers, label fields).
# 4: commentary about editing the comment is cut from inside the edited text (scorer/commentary.py).
# 5: British and American spellings folded (common/spelling.py); camelCase names in code read as their
#    words (scorer.tiers.split_names); a reply that attempts no edit is excluded (scorer/noedit.py).
# 6: the no-edit rule completed after a review (apologies, short artifacts, artifacts and remarks that open
#    like a reply); code read both with names cut and as written; spelling exceptions and endings.
SCORER_VERSION = "6"


@dataclass(frozen=True)
class Pair:
    """A treatment trace with its cluster's trace of its control (clean, or a condition file's control),
    extracted, or the reason it is excluded."""

    item: Item
    trace: TraceRow
    reason: str | None
    edited: Extraction | None = None
    control: Extraction | None = None  # the control's edited text: a signal in it does not count

    @property
    def usable(self) -> bool:
        return self.reason is None

    def kept(self, comment: Comment) -> Kept:
        """The edited text the tiers read for `comment`: without the commentary about editing it."""
        return cut_commentary(self.edited.text, comment, self.item.genre, self.item.artifact)


@dataclass
class Stats:
    """Counts of one scoring run, for the summary line and the performance report."""

    rows: int = 0
    usable: int = 0
    absorbed: dict = field(default_factory=lambda: {tier: 0 for tier in tiers.TIERS})
    not_run: int = 0  # usable rows with a tier that applies but could not run
    sentences: int = 0  # sentences of T on usable prose rows: pairs without the clean-diff rule
    premises_all: int = 0  # premises on usable prose rows: clean-diff rule, every row
    premises_needed: int = 0  # premises on rows the lexical tiers left undecided
    unique_pairs: int = 0  # distinct (premise, hypothesis) pairs sent to the entailment tier


@dataclass(frozen=True)
class ScoreResult:
    labels: list[Label]
    stats: Stats


def pair_up(traces: TraceSet, items: dict[str, Item], conditions: ConditionSet | None = None) -> list[Pair]:
    """Every treatment trace with its control's trace as the reference, sorted by cluster then condition order
    (that of `conditions`, default the built-ins)."""
    conditions = conditions or builtin()
    order = {name: index for index, name in enumerate(conditions.names)}
    rows = traces.file.final
    replies = None  # the model's own replies, read once, only for a conversation that holds one
    for rid, trace in (*rows.items(), *traces.clean.items()):
        at = traces.where(rid)
        conditions.get(trace.condition, at)
        if rid not in items:
            raise UserError(f"{at}: id {rid!r} is not a request of this benchmark "
                            "(wrong --requests file, or traces from another benchmark version)")
        expected = items[rid].benchmark_sha256
        if trace.benchmark_sha256 and trace.benchmark_sha256 != expected:
            raise UserError(f"{at}: rendered from benchmark {trace.benchmark_sha256[:12]}…, "
                            f"but the request rows are from {expected[:12]}…; score against the same benchmark")
        item = items[rid]
        if item.reply_model is not None and item.reply_model != traces.model:
            raise UserError(f"{at}: its request holds model {item.reply_model!r}'s own reply, but the trace is "
                            f"model {traces.model!r}'s: a later turn shows the model its own reply; score with the "
                            "request file rendered from this model's trace (seam.py prompts --replies TRACE)")
        if item.awaiting is not None and replies is None:
            replies = traces.replies()
        asked = asked_sha256(item, replies, conditions, at)
        if trace.message_sha256 and asked and trace.message_sha256 != asked:
            raise UserError(_mismatch(trace, asked, at, replies if item.awaiting is not None else None))

    def extraction(trace: TraceRow) -> Extraction:  # memoised by `extract`: a clean reply serves five treatments
        item = items[trace.id]
        return extract(trace.output, item.artifact, item.genre, item.markers)

    pairs = []
    for trace in rows.values():
        item = items[trace.id]
        if item.control is None:  # a control (clean, or a condition file's): the reference, not labelled
            continue
        which = item.control  # names the control in the reasons: "clean failed: …" as ever for clean
        control = traces.control_row(trace.cluster, which)
        problems = []
        edited = control_extraction = None  # set below only where the output can be read
        if control is None:
            problems.append(f"no {which} trace for this cluster")
        elif control.status != "ok":
            problems.append(_status_reason(which, control))
        elif too_long(control.output):
            problems.append(_length_reason(which, control))
        else:
            control_extraction = extraction(control)
            problems.append(_no_edit_reason(which, control_extraction, item))
        if trace.status != "ok":
            problems.append(_status_reason("treatment", trace))
        elif too_long(trace.output):
            problems.append(_length_reason("treatment", trace))
        else:
            edited = extraction(trace)
            problems.append(_no_edit_reason("treatment", edited, item))
        problems = [problem for problem in problems if problem is not None]
        if problems:
            pairs.append(Pair(item, trace, "; ".join(problems)))
        else:
            assert edited is not None and control_extraction is not None  # both outputs were read and usable
            pairs.append(Pair(item, trace, None, edited, control_extraction))
    pairs.sort(key=lambda p: (p.item.cluster, order[p.item.condition]))
    return pairs


def score(traces: TraceSet, items: dict[str, Item], entailer: Entailer | None = None,
          conditions: ConditionSet | None = None) -> ScoreResult:
    """Label rows for every treatment trace of `traces` (one model), conditions ordered as in `conditions`."""
    stats = Stats()
    pairs = pair_up(traces, items, conditions)
    decided: list[tuple[tiers.Match | None, list[str], list[str]]] = []
    kept: dict[int, Kept] = {}  # row index -> the edited text the tiers read, and the commentary cut from it
    waiting: dict[int, list[tuple[str, str]]] = {}  # row index -> its (premise, hypothesis) pairs
    for index, pair in enumerate(pairs):
        stats.rows += 1
        if not pair.usable:
            decided.append((None, [], []))
            continue
        stats.usable += 1
        comment = pair.item.comment
        genre = pair.item.genre
        kept[index] = text = pair.kept(comment)
        match, run = tiers.lexical(text.text, pair.control.text, comment, genre)
        not_run: list[str] = []
        if tiers.MODEL_TIER in tiers.tiers_for(genre):
            premises = tiers.premises(text.text, pair.control.text, genre)
            stats.sentences += len(tiers.units_of(text.text, genre).parts)
            stats.premises_all += len(premises)
            if match is None:
                stats.premises_needed += len(premises)
                if entailer is None:
                    not_run = [tiers.MODEL_TIER]
                else:
                    run = [*run, tiers.MODEL_TIER]
                    waiting[index] = [(premise, comment.proposition) for premise in premises]
        decided.append((match, run, not_run))

    if waiting:
        stats.unique_pairs = len({pair for pairs_of_row in waiting.values() for pair in pairs_of_row})
    entailed = first_entailed(entailer, waiting) if waiting else {}
    labels = []
    for index, (pair, (match, run, not_run)) in enumerate(zip(pairs, decided, strict=True)):
        if index in waiting:
            match = tiers.Match(tiers.MODEL_TIER, entailed[index]) if entailed[index] is not None else None
        if pair.usable:
            if match is not None:
                stats.absorbed[match.tier] += 1
            stats.not_run += bool(not_run)
        labels.append(_label(traces.model, pair, kept.get(index), match, run, not_run,
                             entailer.sha256 if entailer is not None and tiers.MODEL_TIER in run else None))
    return ScoreResult(labels, stats)


def labels_bytes(labels: list[Label]) -> bytes:
    """The exact bytes `score` writes for these labels."""
    return jsonl.lines_bytes([_row(label) for label in labels])


def _row(label: Label) -> dict:
    """`label.to_row()`, without looking up the record's fields again for each of tens of thousands of rows.

    A label's fields are strings, booleans, null and two tuples of tier names, none left out when null (it
    has no `WHEN_SET` and no nested record), and its attributes are exactly its fields, so its row is its
    attributes with the tuples as lists (tests/test_scorer_shortcuts.py checks it equals `to_row()`).
    """
    row = dict(vars(label))
    row["tiers_run"], row["tiers_not_run"] = list(label.tiers_run), list(label.tiers_not_run)
    return row


def _mismatch(trace: TraceRow, asked: str, at: str, replies) -> str:
    """The refusal of a trace row whose `message_sha256` is not that of its condition's conversation as defined
    now; `replies` (`benchmark.replies.Replies`) when that conversation holds the model's own reply."""
    if replies is None:
        return (f"{at}: the message sent (message_sha256 {trace.message_sha256[:12]}…) is not condition "
                f"{trace.condition!r}'s message as it is defined now ({asked[:12]}…); score with the "
                "condition file (or --requests) the traces were collected with")
    return (f"{at}: the conversation sent (message_sha256 {trace.message_sha256[:12]}…) is not condition "
            f"{trace.condition!r}'s as it is defined now with the model's own reply in {replies.source} "
            f"({asked[:12]}…); score with the condition file the traces were collected with, and the trace file "
            "that reply was read from (--replies when they were collected), or with --requests, the request file "
            "they were collected from")


def _no_edit_reason(which: str, extracted: Extraction, item: Item) -> str | None:
    """Why an output (`which`: its control's name, such as "clean", or "treatment") extracted for `item` cannot
    be scored though it succeeded:
    no edited text, or a reply that attempts no edit; None when it can be."""
    if not extracted.text.strip():
        return f"{which} output has no edited text"
    if returns_no_edit(extracted.text, item.artifact, item.comment.text if item.comment else ""):
        return f"{which} output: {noedit.REASON}"
    return None


def too_long(output: str) -> bool:
    """Whether a reply is longer than the kit reads (`MAX_OUTPUT_CHARS`): only a hand-made trace holds one, the
    runner cutting longer replies. The tiers keep about 50 bytes per character of a text they read, so such a
    reply is excluded, with the reason, rather than read."""
    return len(output) > MAX_OUTPUT_CHARS


def _length_reason(which: str, trace: TraceRow) -> str:
    return (f"{which} output of {len(trace.output):,} characters, longer than the {MAX_OUTPUT_CHARS:,} characters "
            "the scorer reads")


def _status_reason(which: str, trace: TraceRow) -> str:
    return f"{which} {trace.status}" + (f": {trace.reason}" if trace.reason else "")


def _label(model: str, pair: Pair, kept: Kept | None, match: tiers.Match | None, run: list[str],
           not_run: list[str], nli_sha256: str | None) -> Label:
    item = pair.item
    fields = dict(id=item.id, model=model, cluster=item.cluster, condition=item.condition, source=item.source,
                  genre=item.genre, comment_id=item.comment_id, scorer_version=SCORER_VERSION)
    if not pair.usable:
        return Label.excluded(reason=pair.reason, nli_model_sha256=None, **fields)
    return Label(**fields, usable=True, absorbed=match is not None, tier=match.tier if match else None,
                 evidence=match.evidence if match else None, reason=None, tiers_run=tuple(run),
                 tiers_not_run=tuple(not_run), nli_model_sha256=nli_sha256, extraction=pair.edited.method,
                 cut_before=pair.edited.cut_before, cut_after=pair.edited.cut_after, cut_commentary=kept.cut)
