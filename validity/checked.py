"""The outputs with the offline checks that apply to each, and what every validity table says about the data.

Every table is built from the same `Checked` outputs, so the tables agree on
which output is usable and what its edited text is. The conditions they are
read under (`Options.conditions`: the built-ins, and a condition file's when
one was given) decide three things per output: the markers its reply is cut at
and its echoes counted by (the condition's own, as the scorer's extraction
has them), the control it is compared with (`ConditionSet.control_of`: clean,
or e.g. later-control for later-turn), and whether a check means anything for
it at all (a later turn edits the model's own earlier reply, not the artifact,
so "unchanged from the artifact" is left empty for it rather than counted).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmark.conditions import ConditionSet, builtin
from common.plural import plural
from common.records import MAX_OUTPUT_CHARS, Cluster, TraceRow
from scorer.markercut import BOUNDARY
from stats.settings import TableSettings
from validity import provenance, similarity, syntax
from validity.inputs import edited_text, markers_of, readable


@dataclass(frozen=True)
class Options:
    confidence: float = 0.95
    alpha: float = 0.05
    max_days: float = provenance.DEFAULT_MAX_DAYS
    conditions: ConditionSet | None = None  # None: the built-in conditions only

    @property
    def stats(self) -> TableSettings:
        return TableSettings(confidence_level=self.confidence, alpha=self.alpha)

    @property
    def defined(self) -> ConditionSet:
        """The conditions the outputs are read under: the built-ins, then a condition file's."""
        return self.conditions or builtin()


@dataclass(frozen=True)
class Checked:
    """One output with the checks that apply to it (None where a check does not apply or it is unusable)."""

    output: TraceRow  # the final trace row
    source: str
    genre: str
    edited: str | None  # the extracted edited text of a usable output
    syntax: syntax.SyntaxCheck | None  # code clusters: the edited text
    reply_syntax: syntax.ReplyCheck | None  # code clusters: the reply as returned (the same outputs)
    chrf: float | None  # clusters with a reference edit
    unchanged: bool | None  # None also for a later turn, which does not edit the artifact itself
    has_reference: bool

    @property
    def usable(self) -> bool:
        return self.edited is not None


def check_outputs(outputs: list[TraceRow], clusters: dict[str, Cluster],
                  conditions: ConditionSet | None = None) -> list[Checked]:
    """Run the offline checks (syntax, similarity) on every output, each read with its condition's markers."""
    defined = conditions or builtin()
    checked = []
    for item in outputs:
        cluster = clusters[item.cluster]
        condition = defined.get(item.condition)
        markers = markers_of(condition)
        edited = edited_text(item, cluster, markers)
        code = cluster.genre == "code"
        reference = cluster.reference
        parsed = code and edited is not None and syntax.parsable(item.output)
        checked.append(Checked(
            output=item, source=cluster.source, genre=cluster.genre, edited=edited,
            syntax=syntax.check(item.output, edited, markers) if parsed else None,
            reply_syntax=syntax.check_reply(item.output, markers) if parsed else None,
            chrf=similarity.chrf(edited, reference) if reference and edited is not None else None,
            unchanged=(similarity.unchanged(edited, cluster.artifact)
                       if edited is not None and not condition.later else None),
            has_reference=bool(reference)))
    return checked


def order(conditions, options: Options) -> tuple[str, ...]:
    """The conditions given, in the order of `options.defined` (the benchmark's, then the file's)."""
    return options.defined.order(conditions)


def data_notes(checked: list[Checked], options: Options | None = None) -> list[str]:
    """Gaps every table shares: conditions a model lacks, a missing control (clean, or a file's own)."""
    options = options or Options()
    defined = options.defined
    notes = []
    models = sorted({c.output.model for c in checked})
    present = order({c.output.condition for c in checked}, options)
    for model in models:
        have = {c.output.condition for c in checked if c.output.model == model}
        absent = [c for c in present if c not in have]
        if absent:
            notes.append(f"Model {model} has no outputs for condition(s): {', '.join(absent)}.")
    needed: dict[str, list[str]] = {}
    for name in present:
        control = defined.control_of(name)
        if control is not None and control not in present:
            needed.setdefault(control, []).append(name)
    for control, treatments in needed.items():
        notes.append("No clean outputs: no contrast with clean can be computed." + (
            " A condition file's treatments are compared with the model's clean outputs in its built-in trace "
            "file: give it beside the study's." if any(not defined.get(t).builtin for t in treatments) else "")
                     if control == "clean" else
                     f"No {control} outputs: {', '.join(treatments)} cannot be compared with {control}, "
                     f"{plural(len(treatments), 'its', 'their')} control.")
    unread = sum(c.output.status == "ok" and c.output.output is not None and not readable(c.output.output)
                 for c in checked)
    if unread:
        notes.append(f"{unread:,} {plural(unread, 'output is', 'outputs are')} longer than the "
                     f"{MAX_OUTPUT_CHARS:,} characters the kit reads: unusable here, as in the labels.")
    return notes


def parse_notes(checked: list[Checked]) -> list[str]:
    """The syntax tables' own note: usable code outputs too long to parse (`syntax.MAX_PARSED_CHARS`)."""
    unparsed = sum(c.genre == "code" and c.usable and c.syntax is None for c in checked)
    if not unparsed:
        return []
    return [f"{unparsed:,} usable {plural(unparsed, 'output')} of a code cluster {plural(unparsed, 'was', 'were')} "
            f"not parsed: longer than {syntax.MAX_PARSED_CHARS:,} characters, more than the syntax check parses "
            "(ast.parse keeps a few hundred bytes per character); left out of n."]


def marker_notes(checked: list[Checked], options: Options) -> list[str]:
    """What a marker line is for the condition file's conditions among the code outputs (none for the built-ins,
    whose markers are BEGIN TEXT and END TEXT, as the method note says)."""
    present = order({c.output.condition for c in checked if c.genre == "code"}, options)
    own, fenced = [], []
    for name in present:
        condition = options.defined.get(name)
        if condition.builtin:
            continue
        if markers_of(condition).texts != BOUNDARY.texts:
            own.append(f"{name} ({' / '.join(condition.markers)})")
        elif any(m.startswith(("```", "~~~")) for m in condition.markers):
            fenced.append(name)
    notes = []
    if own:
        notes.append("A condition file's condition is read with its own marker lines as well, as the extraction "
                     "cuts at them (restyled or not, as common/markers.py compares): " + "; ".join(own) + ".")
    if fenced:
        notes.append(f"{', '.join(fenced)}: {plural(len(fenced), 'its markers are', 'their markers are')} code "
                     "fences, which models put around code under every condition: not counted as an echo (only "
                     "BEGIN TEXT and END TEXT lines are); a fence wrapping the whole reply is counted in "
                     "validity_syntax_as_returned (fenced).")
    return notes


def later_notes(checked: list[Checked], options: Options) -> list[str]:
    """The similarity table's note on later turns: what their chrF is, and why they have no unchanged count."""
    later = [name for name in order({c.output.condition for c in checked if c.chrf is not None}, options)
             if options.defined.get(name).later]
    if not later:
        return []
    return [f"{', '.join(later)}: a later turn edits the model's own earlier reply, not the artifact: its chrF "
            "compares that second edit with the reference edit (read it against its control, not against the "
            "built-in conditions), and unchanged is left empty."]
