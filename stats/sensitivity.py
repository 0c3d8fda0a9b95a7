"""Sensitivity analyses: does each contrast's conclusion survive the choices the scorer makes?

Each analysis is an *alternative* reading of the same labels (a `stats.alternatives.Alternative`:
outcomes changed or removed, or models left out), and every contrast is
recomputed on it exactly as `contrasts.csv` is computed (exact McNemar, Newcombe
interval, Holm across the models that remain). A row then sets the reference
result (the labels as scored) next to the alternative's and says whether the
direction (`stats.contrasts.direction_of`) and the significance survive.

The alternatives, (a) to (e), and how each is built: `stats.alternatives` (the
paper's Appendices F and H). Alternative (e) needs the validity stage's
provenance flags, so the validity stage builds it and compares it here
(`validity_sensitivity`); the statistics stage never imports validity.
"""

from __future__ import annotations

from dataclasses import dataclass

from stats.alternatives import (
    Outcomes,
    affected_clusters_dropped,
    excluded_witness_absorbed,
    exclusions_applied,
    outside_edit,
    outside_edit_absorbed,
    witnessed_exclusions,
)
from stats.contrasts import ContrastRow, contrast_name, paired_contrast_rows
from stats.labels import LabelSet
from stats.render import Column, Table, interval_text
from stats.schema import TableSpec
from stats.settings import TableSettings
from stats.specs import SENSITIVITY

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
    """The labels of the examples below (`stats.synthetic.example_sensitivity_labels`): model a: newline absorbed
    in 8 of 10 clusters, boundary in none (one boundary output excluded; one not absorbed with its comment cut after
    the edit); model b: no difference."""
    from stats.synthetic import example_sensitivity_labels

    return example_sensitivity_labels()


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


# ---------------------------------------------------------------- rows and table


def sensitivity_rows(labels: LabelSet, alternatives, contrasts, settings: TableSettings) -> list[SensitivityRow]:
    """Every reference contrast row next to each alternative's, by contrast, model, then alternative.

    >>> from stats.alternatives import models_left_out
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
