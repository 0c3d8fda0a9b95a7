"""Sensitivity analysis (e): every absorption contrast with the provenance-flagged models left out.

The other sensitivity analyses of the absorption contrasts are computed by
`seam.py tables` (`stats.sensitivity`, `sensitivity.csv`): they need only the
labels, the benchmark and the trace outputs. This one also needs the collection
provenance flags, which are this stage's finding (`validity.provenance`: served
identifiers that differ between conditions or are missing, conditions collected
far apart), and the statistics stage must not import the validity stage. So it is
built here, from the labels given with `seam.py validity --labels`, by the same
machinery (`stats.alternatives.models_left_out`, `stats.sensitivity.sensitivity_rows`
and `sensitivity_table`), and written in the same columns as `validity_sensitivity`.
"""

from __future__ import annotations

from stats.alternatives import models_left_out
from stats.labels import LabelSet
from stats.render import Table
from stats.sensitivity import sensitivity_rows, sensitivity_table
from stats.tables import data_notes
from validity.checked import Options
from validity.provenance import ModelFlags
from validity.specs import SENSITIVITY


def provenance_sensitivity_table(labels: LabelSet, flags: list[ModelFlags], options: Options) -> Table:
    """Each absorption contrast per model: the reference (all models, as `contrasts.csv`) next to the same
    contrast with every flagged model left out and Holm recomputed over the others.

    A model with labels but no traces has no provenance to judge: it is kept, and a note says so. The contrasts
    are those of `options.defined`: the built-in ones, then a condition file's.
    """
    contrasts = options.defined.contrasts
    known = {f.model for f in flags}
    left_out = {f.model: "; ".join(f.reasons) for f in flags if f.flagged and f.model in labels.models}
    alternative = models_left_out(labels, left_out)
    notes = [alternative.note]
    unknown = [m for m in labels.models if m not in known]
    if unknown:
        notes.append(f"No traces for {', '.join(unknown)}: provenance unknown, kept.")
    notes += data_notes(labels, contrasts)
    rows = sensitivity_rows(labels, [alternative], contrasts, options.stats)
    return sensitivity_table(rows, options.stats, notes, spec=SENSITIVITY,
                             title="Sensitivity of each contrast to models with provenance flags")
