"""Sensitivity analyses: does each contrast's conclusion survive the choices the scorer makes?

Each analysis is an *alternative* reading of the same labels (an `Alternative`:
outcomes changed or removed, or models left out), and every contrast is
recomputed on it exactly as `contrasts.csv` is computed (exact McNemar, Newcombe
interval, Holm across the models that remain). A row then sets the reference
result (the labels as scored) next to the alternative's and says whether the
direction (`stats.contrasts.direction_of`) and the significance survive.

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
from stats.contrasts import ContrastRow, contrast_name, paired_contrast_rows
from stats.labels import LabelSet
from stats.render import Column, Table, interval_text
from stats.schema import TableSpec
from stats.settings import TableSettings
from stats.specs import SENSITIVITY

Outcomes = dict[tuple[str, str], dict[str, bool | None]]

REFERENCE = "reference"
# key -> how the Markdown/LaTeX view names it
ANALYSES = {
    REFERENCE: "reference (as scored)",
    "excluded_witness_absorbed": "(a) excluded outputs with the witness phrase counted as absorbed",
    "affected_clusters_dropped": "(b) clusters with such an output dropped",
    "outside_edit_absorbed": "(c) comment reproduced outside the edited text counted as absorbed",
    "exclusions_applied": "(d) adjudicated exclusions applied",
    "flagged_models_left_out": "(e) models with provenance flags left out",
}


@dataclass(frozen=True)
class Alternative:
    """One alternative reading of the labels: its outcomes, the models it keeps, and what it changed."""

    key: str  # one of ANALYSES
    outcomes: Outcomes
    models: tuple[str, ...]  # the models analysed (the Holm family); others are left out
    note: str  # what the alternative changed, in words, for the table's notes


@dataclass(frozen=True)
class SensitivityRow:
    """One model and contrast under one alternative, next to its reference result."""

    analysis: str
    reference: ContrastRow
    alternative: ContrastRow | None  # None: the model is left out of this alternative
    changed_pairs: int  # clusters whose pair of outcomes differs from the reference (entered, left or changed)

    @property
    def direction_survives(self) -> bool | None:
        """The alternative has the reference's direction; None when the model is left out or the
        reference has no pairs."""
        if self.alternative is None or not self.reference.result.table.n:
            return None
        return self.alternative.direction == self.reference.direction

    @property
    def significance_survives(self) -> bool | None:
        """The alternative is significant exactly when the reference is (after Holm); None as above."""
        if self.alternative is None or not self.reference.result.table.n:
            return None
        return self.alternative.significant == self.reference.significant

    @property
    def survives(self) -> bool | None:
        """Both the direction and the significance survive."""
        if self.direction_survives is None:
            return None
        return self.direction_survives and self.significance_survives


def _example() -> LabelSet:
    """Model a: newline absorbed in 8 of 10 clusters, boundary in none (one boundary output excluded; one
    not absorbed with its comment cut after the edit); model b: no difference."""
    from stats.labels import label_set_of
    from stats.synthetic import label_row

    rows = []
    for i in range(10):
        cluster = f"humaneval-{i:03d}"
        rows.append(label_row("a", cluster, "newline", i < 8))
        rows.append(label_row("a", cluster, "boundary", None if i == 9 else False, usable=i != 9))
        rows.append(label_row("b", cluster, "newline", i < 3))
        rows.append(label_row("b", cluster, "boundary", i < 3))
    rows[5]["cut_after"] = "-----END TEXT-----\nbtw this goes out with friday's newsletter"
    return label_set_of(rows)


def _copy(outcomes: Outcomes) -> Outcomes:
    return {key: dict(values) for key, values in outcomes.items()}


def _pair(outcomes: Outcomes, model: str, first: str, second: str, cluster: str):
    x = outcomes.get((model, first), {}).get(cluster)
    y = outcomes.get((model, second), {}).get(cluster)
    return None if x is None or y is None else (x, y)


def changed_pairs(reference: Outcomes, alternative: Outcomes, model: str, first: str, second: str) -> int:
    """How many clusters' pairs (first, second) differ between two readings: a pair that appears, disappears
    or changes its outcomes.

    >>> reference = {("m", "newline"): {"x": True, "y": None}, ("m", "boundary"): {"x": False, "y": False}}
    >>> alternative = {("m", "newline"): {"x": True, "y": True}, ("m", "boundary"): {"x": False, "y": False}}
    >>> changed_pairs(reference, alternative, "m", "newline", "boundary")
    1
    """
    clusters = set()
    for outcomes in (reference, alternative):
        for condition in (first, second):
            clusters.update(outcomes.get((model, condition), {}))
    return sum(_pair(reference, model, first, second, c) != _pair(alternative, model, first, second, c)
               for c in clusters)


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


def excluded_witness_absorbed(labels: LabelSet, affected: frozenset[tuple[str, str, str]]) -> Alternative:
    """(a): the `affected` excluded pairs counted as absorbed.

    >>> alternative = excluded_witness_absorbed(_example(), frozenset({("a", "boundary", "humaneval-009")}))
    >>> alternative.outcomes[("a", "boundary")]["humaneval-009"], alternative.models
    (True, ('a', 'b'))
    """
    outcomes = _copy(labels.outcomes)
    for model, condition, cluster in affected:
        outcomes[(model, condition)][cluster] = True
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
    outcomes = _copy(labels.outcomes)
    for model, condition, cluster in found:
        outcomes[(model, condition)][cluster] = True
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


# ---------------------------------------------------------------- rows and table


def sensitivity_rows(labels: LabelSet, alternatives, contrasts, settings: TableSettings) -> list[SensitivityRow]:
    """Every reference contrast row next to each alternative's, by contrast, model, then alternative.

    >>> labels = _example()
    >>> rows = sensitivity_rows(labels, [models_left_out(labels, {"b": "flag"})], [("newline", "boundary")],
    ...                         TableSettings())
    >>> [(r.reference.model, r.changed_pairs, r.alternative is None, r.survives) for r in rows]
    [('a', 0, False, True), ('b', 10, True, None)]
    """
    reference = paired_contrast_rows(labels.outcomes, labels.models, contrasts, settings)
    computed = {alternative.key: {(r.model, r.first, r.second): r
                                  for r in paired_contrast_rows(alternative.outcomes, alternative.models,
                                                                contrasts, settings)}
                for alternative in alternatives}
    rows = []
    for ref in reference:
        for alternative in alternatives:
            other = computed[alternative.key].get((ref.model, ref.first, ref.second))
            if ref.model not in alternative.models:
                other = None
            rows.append(SensitivityRow(alternative.key, ref, other,
                                       changed_pairs(labels.outcomes, alternative.outcomes, ref.model, ref.first,
                                                     ref.second)))
    return rows


def survival_text(row: SensitivityRow) -> str | None:
    """"yes", or "no" with what did not survive; None where there is nothing to compare.

    >>> labels = _example()
    >>> from stats.exclusions import Exclusions
    >>> none = Exclusions("none.jsonl", "0" * 64, ())
    >>> (row,) = sensitivity_rows(labels, [exclusions_applied(labels, none)], [("newline", "boundary")],
    ...                           TableSettings())[:1]
    >>> survival_text(row)
    'yes'
    """
    if row.survives is None:
        return None
    if row.survives:
        return "yes"
    lost = [what for what, kept in (("direction", row.direction_survives), ("significance",
                                                                           row.significance_survives)) if not kept]
    return f"no ({', '.join(lost)})"


def _result(row: ContrastRow | None) -> tuple:
    """n, b, c, diff, CI low, CI high, p Holm, significant, direction (all None for a left-out model)."""
    if row is None:
        return (None,) * 9
    r, table = row.result, row.result.table
    ci = r.confidence_interval
    return (table.n, table.first_only, table.second_only, r.difference, ci.low, ci.high, row.adjusted_pvalue,
            row.significant, row.direction)


def sensitivity_table(rows: list[SensitivityRow], settings: TableSettings, notes, *, spec: TableSpec = SENSITIVITY,
                      title: str = "Sensitivity of each contrast to the scorer's choices") -> Table:
    """The rows as a table: in the CSV one row per model, contrast and alternative, with the reference
    result in `reference_*` columns; in the Markdown/LaTeX view each reference row followed by its
    alternatives. `notes` are shown below it (what each alternative changed, what was not computed).

    >>> labels = _example()
    >>> from stats.exclusions import Exclusions
    >>> none = Exclusions("none.jsonl", "0" * 64, ())
    >>> rows = sensitivity_rows(labels, [exclusions_applied(labels, none)], [("newline", "boundary")], TableSettings())
    >>> table = sensitivity_table(rows, TableSettings(), [])
    >>> [column.key for column in table.columns][:5]
    ['model', 'contrast', 'analysis', 'changed_pairs', 'reference_n_pairs']
    >>> table.rows[0][:4]
    ('a', 'newline vs boundary', 'exclusions_applied', 0)
    >>> [row[2][:12] for row in table.display.rows]
    ['reference (a', '(d) adjudica', 'reference (a', '(d) adjudica']
    """
    raw, shown = [], []
    previous = None
    for row in rows:
        ref = row.reference
        contrast = contrast_name(ref.first, ref.second)
        n, b, c, diff, _, _, p_holm, significant, direction = _result(ref)
        raw.append((ref.model, contrast, row.analysis, row.changed_pairs, n, b, c, diff, p_holm, significant,
                    direction, *_result(row.alternative), row.direction_survives, row.significance_survives,
                    row.survives))
        if (ref.model, contrast) != previous:
            previous = (ref.model, contrast)
            shown.append(_shown(contrast, ref.model, ANALYSES[REFERENCE], None, ref, "\u2014"))
        left_out = "left out" if row.alternative is None else survival_text(row)
        shown.append(_shown(contrast, ref.model, ANALYSES.get(row.analysis, row.analysis), row.changed_pairs,
                            row.alternative, left_out))
    display = Table(spec.name, "", (
        Column("contrast", "Contrast"), Column("model", "Model"), Column("analysis", "Analysis"),
        Column("changed", "Changed pairs", "int"), Column("n", "n", "int"), Column("b", "b", "int"),
        Column("c", "c", "int"), Column("diff", "Diff (pp) [95% CI]", align="r"),
        Column("holm", "p Holm", "pvalue"), Column("sig", "Sig.", "flag"), Column("direction", "Direction"),
        Column("survives", "Survives")), tuple(shown))
    method = ("Each contrast recomputed under an alternative reading of the labels, exactly as in contrasts.csv "
              "(exact McNemar, Newcombe interval, Holm across the models the alternative keeps), next to the "
              "reference result (the labels as scored). Changed pairs: clusters whose pair of outcomes under the "
              "two conditions differs from the reference (a pair that enters, leaves or changes). Direction: what "
              "the second condition does to absorption relative to the first (reduces: b > c; raises: b < c; none: "
              f"b = c). Survives: the alternative has the reference's direction and its significance (Holm p < "
              f"{settings.alpha:g}, or not); \"no\" names what changed.")
    return spec.table(title, raw, (method, *notes), display)


def _shown(contrast: str, model: str, analysis: str, changed: int | None, row: ContrastRow | None,
           survives: str | None) -> tuple:
    if row is None:
        return (contrast, model, analysis, changed, None, None, None, "\u2014", None, None, None, survives)
    r, table = row.result, row.result.table
    ci = r.confidence_interval
    return (contrast, model, analysis, changed, table.n, table.first_only, table.second_only,
            interval_text(r.difference, ci.low, ci.high), row.adjusted_pvalue, row.significant, row.direction,
            survives)


# ---------------------------------------------------------------- the absorption tables' analyses


def absorption_sensitivity(labels: LabelSet, contrasts, settings: TableSettings, notes, *, evidence=None,
                           exclusions=None) -> tuple[Table, dict]:
    """`sensitivity.csv` of `seam.py tables`: alternatives (a)-(d), each computed when its inputs are there
    (a note says which were not and why), and a record of what was computed for provenance.json.

    `evidence` is a `stats.evidence.Evidence` (the benchmark's comments; the trace outputs when
    given); `exclusions`, a `stats.exclusions.Exclusions`, the adjudicated false positives when given.

    >>> from common.records import Comment
    >>> from stats.evidence import Evidence
    >>> comment = Comment("casual-00", "btw this goes out with friday's newsletter", "friday's newsletter", "…")
    >>> evidence = Evidence({f"humaneval-{i:03d}/{c}": comment for i in range(10) for c in ("newline", "boundary")})
    >>> table, record = absorption_sensitivity(_example(), [("newline", "boundary")], TableSettings(), [],
    ...                                        evidence=evidence)
    >>> record["computed"], record["trace_models"]
    (['outside_edit_absorbed'], None)
    >>> record["not_computed"]
    ['excluded_witness_absorbed', 'affected_clusters_dropped', 'exclusions_applied']
    >>> [(row[0], row[3], row[10], row[19], row[22]) for row in table.rows]  # model, changed, directions, survives
    [('a', 1, 'reduces', 'reduces', True), ('b', 0, 'none', 'none', True)]
    """
    from stats.evidence import Evidence

    evidence = evidence or Evidence()
    alternatives, said = [], []
    skipped = []
    if evidence.outputs is not None:
        affected = witnessed_exclusions(labels, evidence.outputs, evidence.comments, evidence.controls)
        alternatives += [excluded_witness_absorbed(labels, affected), affected_clusters_dropped(labels, affected)]
    else:
        skipped += ["excluded_witness_absorbed", "affected_clusters_dropped"]
        said.append("(a) and (b) not computed: they read the trace outputs (seam.py tables LABELS --traces TRACES).")
    found, unknown = outside_edit(labels, evidence.comments)
    if unknown:
        skipped.append("outside_edit_absorbed")
        said.append(f"(c) not computed: {len(unknown)} labels with text cut around the edit carry a comment the "
                    f"benchmark does not have (first: {unknown[0]}); were they scored with --requests?")
    else:
        alternatives.append(outside_edit_absorbed(labels, found))
    if exclusions is not None:
        alternatives.append(exclusions_applied(labels, exclusions))
    else:
        skipped.append("exclusions_applied")
        said.append("(d) not computed: no adjudicated exclusions were given.")
    said.append("(e) models with collection-provenance flags left out: validity_sensitivity (seam.py validity "
                "TRACES --labels LABELS), since the flags come from the traces' served identifiers and times.")
    rows = sensitivity_rows(labels, alternatives, contrasts, settings)
    table = sensitivity_table(rows, settings, [*(a.note for a in alternatives), *said, *notes])
    record = {"computed": [a.key for a in alternatives], "not_computed": skipped,
              "trace_models": (sorted({model for model, _ in evidence.outputs})
                               if evidence.outputs is not None else None)}
    return table, record
