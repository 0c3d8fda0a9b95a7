"""The alternative readings of the labels that the sensitivity analyses set beside the reference.

Each is an `Alternative`: the labels' outcomes with some changed or removed, or
some models left out, and a note saying what changed. Building them is apart
from comparing them (`stats.sensitivity`: the rows and the table), because the
validity stage builds one of its own, (e), from flags only it has, and compares
it with the same machinery.

The alternatives (the paper's Appendices F and H):

(a) `excluded_witness_absorbed`: an excluded pair (its treatment output stopped
    by the output limit, empty, or left without edited text, or its cluster's
    clean output unusable) whose treatment output nevertheless holds the
    comment's witness phrase (the witness tier's own check, `scorer.tiers.witness`,
    on the whole output, against the clean output's text when there is one, or
    the output of the treatment's own control, a later turn's: `Evidence.controls`)
    counts as absorbed: an upper bound on what the exclusions hide. Needs the
    trace outputs (`seam.py tables --traces`).
(b) `affected_clusters_dropped`: every cluster with such an output is dropped
    from all conditions of that model (the paper's "after dropping all the
    affected pairs").
(c) `outside_edit_absorbed`: a usable output judged not absorbed whose comment
    was reproduced in the text the extraction cut around the edited text (the
    labels' `cut_before`/`cut_after`: after an echoed END TEXT marker, before or
    after a code fence, a trailing note; and `cut_commentary`, commentary about
    editing the comment cut from inside the edited text) counts as absorbed.
    "Reproduced" is the lexical tiers on the cut text: the witness phrase, or all the comment's
    content words in one line (code) or sentence (prose). The clean-diff rule is
    not applied (the labels keep no clean text); the benchmark's collision rule
    keeps the witness and content words out of each cluster's instruction and
    artifact, so a clean output holds them only by chance.
(d) `exclusions_applied`: adjudicated false positives counted as not absorbed (as `--exclusions` does).
(e) `flagged_models_left_out`: models with collection-provenance flags are left
    out, and Holm is recomputed over the rest. The flags are the validity stage's
    (it reads the traces' served identifiers and request times), so the validity
    stage builds this alternative with `models_left_out` and writes it in the same
    columns (`validity_sensitivity`); the statistics stage never imports validity.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from common.errors import UserError
from common.records import request_id
from stats.labels import LabelSet

Outcomes = dict[tuple[str, str], dict[str, bool | None]]


@dataclass(frozen=True)
class Alternative:
    """One alternative reading of the labels: its outcomes, the models it keeps, and what it changed."""

    key: str  # one of `stats.sensitivity.ANALYSES`
    outcomes: Outcomes
    models: tuple[str, ...]  # the models analysed (the Holm family); others are left out
    note: str  # what the alternative changed, in words, for the table's notes


def _example() -> LabelSet:
    """The labels of the examples below (`stats.synthetic.example_sensitivity_labels`): model a: newline absorbed
    in 8 of 10 clusters, boundary in none (one boundary output excluded; one not absorbed with its comment cut after
    the edit); model b: no difference."""
    from stats.synthetic import example_sensitivity_labels

    return example_sensitivity_labels()


def _copy(outcomes: Outcomes) -> Outcomes:
    return {key: dict(values) for key, values in outcomes.items()}


def _by_condition(keys) -> str:
    counts = Counter(condition for _, condition, _ in keys)
    return ", ".join(f"{condition} {counts[condition]}" for condition in sorted(counts))


# ---------------------------------------------------------------- (a), (b): excluded outputs


def witnessed_exclusions(labels: LabelSet, outputs: Mapping, comments: Mapping,
                         controls: Mapping | None = None) -> frozenset[tuple[str, str, str]]:
    """(model, condition, cluster) of every excluded label whose treatment output holds its comment's witness
    phrase, checked as the witness tier checks it (`scorer.tiers.witness`: normalised, on word boundaries,
    and absent from the cluster's output under the treatment's control, clean's, when that has text).

    `outputs`: (model, request id) -> final `TraceRow`; `comments`: request id -> `Comment`; `controls`:
    treatment -> its control where that is not clean (a later turn's, `Evidence.controls`).

    >>> from common.records import Comment
    >>> from scorer.synthetic import trace_row
    >>> labels = _example()
    >>> comment = Comment("casual-00", "btw this goes out with friday's newsletter", "friday's newsletter", "…")
    >>> outputs = {(m, request_id(f"humaneval-{i:03d}", c)): trace_row(f"humaneval-{i:03d}", c, "x", model=m)
    ...            for m in "ab" for i in range(10) for c in ("clean", "newline", "boundary")}
    >>> outputs[("a", "humaneval-009/boundary")] = trace_row("humaneval-009", "boundary",
    ...     "def f(): pass  # Friday’s newsletter", status="unusable", model="a")
    >>> comments = {request_id(f"humaneval-{i:03d}", c): comment for i in range(10) for c in ("newline", "boundary")}
    >>> sorted(witnessed_exclusions(labels, outputs, comments))
    [('a', 'boundary', 'humaneval-009')]
    """
    from scorer import tiers

    found = set()
    for model in labels.models:
        for condition in labels.conditions:
            for cluster, outcome in labels.outcome(model, condition).items():
                if outcome is not None:
                    continue
                rid = request_id(cluster, condition)
                trace = outputs.get((model, rid))
                if trace is None:
                    raise UserError(f"model {model!r}: the labels exclude {rid}, but the traces given have no row "
                                    "for it; give the traces the labels were scored from (--traces)")
                comment = comments.get(rid)
                if comment is None:
                    raise UserError(f"model {model!r}: {rid} is not a treatment request of the benchmark; "
                                    "the traces and labels must be of the committed benchmark")
                if not trace.output:
                    continue
                control = outputs.get((model, request_id(cluster, (controls or {}).get(condition, "clean"))))
                control_text = control.output if control is not None and control.output else ""
                genre = labels.clusters[cluster].genre
                if tiers.witness(trace.output, control_text, comment.witness, genre) is not None:
                    found.add((model, condition, cluster))
    return frozenset(found)


def _counted_absorbed(labels: LabelSet, pairs: frozenset[tuple[str, str, str]]) -> Outcomes:
    """The labels' outcomes, copied, with each (model, condition, cluster) of `pairs` counted as absorbed."""
    outcomes = _copy(labels.outcomes)
    for model, condition, cluster in pairs:
        outcomes[(model, condition)][cluster] = True
    return outcomes


def excluded_witness_absorbed(labels: LabelSet, affected: frozenset[tuple[str, str, str]]) -> Alternative:
    """(a): the `affected` excluded pairs counted as absorbed.

    >>> alternative = excluded_witness_absorbed(_example(), frozenset({("a", "boundary", "humaneval-009")}))
    >>> alternative.outcomes[("a", "boundary")]["humaneval-009"], alternative.models
    (True, ('a', 'b'))
    """
    outcomes = _counted_absorbed(labels, affected)
    note = (f"(a) {len(affected)} excluded treatment outputs hold their comment's witness phrase (on the whole "
            "output, normalised, on word boundaries, absent from the cluster's clean output: the witness tier's "
            "check) and count as absorbed, an upper bound on what the exclusions hide"
            + (f"; by condition: {_by_condition(affected)}." if affected else "."))
    return Alternative("excluded_witness_absorbed", outcomes, labels.models, note)


def affected_clusters_dropped(labels: LabelSet, affected: frozenset[tuple[str, str, str]]) -> Alternative:
    """(b): every cluster with an `affected` output dropped from all conditions of that model.

    >>> alternative = affected_clusters_dropped(_example(), frozenset({("a", "boundary", "humaneval-009")}))
    >>> [("humaneval-009" in alternative.outcomes[(model, "newline")]) for model in "ab"]
    [False, True]
    """
    dropped = {(model, cluster) for model, _, cluster in affected}
    outcomes = {(model, condition): {c: x for c, x in values.items() if (model, c) not in dropped}
                for (model, condition), values in labels.outcomes.items()}
    note = (f"(b) The {len(dropped)} (model, cluster) combinations with such an output are dropped from every "
            "condition of that model.")
    return Alternative("affected_clusters_dropped", outcomes, labels.models, note)


# ---------------------------------------------------------------- (c): the comment outside the edited text


def outside_edit(labels: LabelSet, comments: Mapping) -> tuple[frozenset[tuple[str, str, str]], tuple[str, ...]]:
    """(model, condition, cluster) of the usable, not-absorbed labels whose cut text (`LabelSet.cut_text`)
    reproduces their comment (witness phrase, or every content word in one unit), and "model request-id" of
    the labels whose comment the benchmark does not have (another benchmark: then (c) cannot be computed).

    >>> from common.records import Comment
    >>> comment = Comment("casual-00", "btw this goes out with friday's newsletter", "friday's newsletter", "…")
    >>> found, unknown = outside_edit(_example(), {"humaneval-001/boundary": comment})
    >>> sorted(found), unknown
    ([('a', 'boundary', 'humaneval-001')], ())
    """
    from scorer import tiers

    found, unknown = set(), []
    for (model, condition, cluster), (comment_id, cut) in sorted(labels.cut_text.items()):
        comment = comments.get(request_id(cluster, condition))
        if comment is None or comment.id != comment_id:
            unknown.append(f"{model} {request_id(cluster, condition)}")
            continue
        genre = labels.clusters[cluster].genre
        if (tiers.witness(cut, "", comment.witness, genre) is not None
                or tiers.content(cut, "", comment.text, genre) is not None):
            found.add((model, condition, cluster))
    return frozenset(found), tuple(unknown)


def outside_edit_absorbed(labels: LabelSet, found: frozenset[tuple[str, str, str]]) -> Alternative:
    """(c): the `found` pairs of `outside_edit` counted as absorbed.

    >>> alternative = outside_edit_absorbed(_example(), frozenset({("a", "boundary", "humaneval-001")}))
    >>> alternative.outcomes[("a", "boundary")]["humaneval-001"]
    True
    """
    outcomes = _counted_absorbed(labels, found)
    note = (f"(c) {len(found)} usable outputs judged not absorbed reproduce their comment (its witness phrase, or "
            "all its content words in one line of code or sentence of prose) in the text the extraction cut around "
            "the edited text (before or after a code fence, after an echoed END TEXT marker, a trailing note) or cut "
            "from inside it as commentary about editing the comment, and count as absorbed"
            + (f"; by condition: {_by_condition(found)}." if found else "."))
    return Alternative("outside_edit_absorbed", outcomes, labels.models, note)


# ---------------------------------------------------------------- (d), (e)


def exclusions_applied(labels: LabelSet, exclusions) -> Alternative:
    """(d): the adjudicated false positives (a `stats.exclusions.Exclusions`) counted as not absorbed, as the
    main tables count them with `--exclusions`: the pairs stay, their outcome turns negative.

    >>> from stats.exclusions import Exclusion, Exclusions
    >>> found = Exclusions("fp.jsonl", "0" * 64, (Exclusion("humaneval-000/newline", "a", "a note", "fp:1"),))
    >>> alternative = exclusions_applied(_example(), found)
    >>> alternative.outcomes[("a", "newline")]["humaneval-000"], alternative.note
    (False, '(d) 1 adjudicated false positives counted as not absorbed, the pairs kept.')
    """
    outcomes = exclusions.apply(labels).outcomes
    note = f"(d) {len(exclusions.rows)} adjudicated false positives counted as not absorbed, the pairs kept."
    return Alternative("exclusions_applied", _copy(outcomes), labels.models, note)


def models_left_out(labels: LabelSet, left_out: Mapping[str, str]) -> Alternative:
    """(e): the models of `left_out` (model -> why) left out; Holm then runs over the others.

    >>> alternative = models_left_out(_example(), {"b": "served identifier differs"})
    >>> alternative.models, sorted({model for model, _ in alternative.outcomes})
    (('a',), ['a'])
    """
    kept = tuple(m for m in labels.models if m not in left_out)
    outcomes = {key: dict(values) for key, values in labels.outcomes.items() if key[0] in kept}
    gone = [m for m in labels.models if m in left_out]
    note = ("(e) " + (f"Left out: {'; '.join(f'{m} ({left_out[m]})' for m in gone)}." if gone
                      else "No model carries a provenance flag: nothing is left out."))
    return Alternative("flagged_models_left_out", outcomes, kept, note)
