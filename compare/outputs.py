"""Every path `seam.py compare` writes, named before it writes any, and the refusal of an input that is one of them.

Compare replaces whole files in its output folder (the labels, the tables, the page). A trace file, prices file or
condition file standing at one of those paths, or reached through a link to one, would be read and then replaced:
the user's run lost (issue 36). So every input is checked against every planned output first, by where the output's
folder really is (symbolic links resolved) and by device and inode (a hard link, or an output that links to the
input), and refused in one line naming both (common/outputs.py, shared with the scorer).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from common import outputs as common_outputs
from scorer.cli import labels_file
from stats import specs as absorption_specs
from stats.render import table_files
from validity import specs as validity_specs

LABELS, TABLES, PAGE = "labels", "tables", "report.html"
# The files besides the tables that compare writes into OUT/tables (compare/build.py names each from here).
RATES_FIGURE, CONTRASTS_FIGURE, NOTES, PROVENANCE, VALIDITY_ITEMS = (
    "rates.svg", "contrasts.svg", "notes.md", "provenance.json", "validity_items.jsonl")
EXTRAS = (RATES_FIGURE, CONTRASTS_FIGURE, NOTES, PROVENANCE, VALIDITY_ITEMS)
# The functional check executes model output: compare never runs it, so never writes its tables.
NOT_WRITTEN = {validity_specs.FUNCTIONAL.name, validity_specs.FUNCTIONAL_CONTRASTS.name}


def planned(out: Path, models: Iterable[str]) -> list[Path]:
    """Every file a compare of these models into `out` may write (a table it does not build is still named)."""
    out = Path(out)
    names = [spec.name for spec in (*absorption_specs.TABLES, *validity_specs.TABLES) if spec.name not in NOT_WRITTEN]
    return [*(labels_file(out / LABELS, model) for model in models),
            *(out / TABLES / name for name in table_files(names)),
            *(out / TABLES / name for name in EXTRAS), out / PAGE]


def refuse_overwritten(inputs: Iterable[tuple[Path, str]], outputs: Iterable[Path]) -> None:
    """Refuse any input (a path and what it is: "trace file") that is, links to, or is a hard link of an output
    (`common.outputs.refuse_overwritten`, which the scorer uses too)."""
    common_outputs.refuse_overwritten(inputs, outputs, command="compare",
                                      hint="move it out of the --out folder, or choose another --out")
