#!/usr/bin/env python3
"""The breakdowns a study's README quotes beyond its tables: each contrast by genre, and where the remarks went.

    python scripts/study_breakdown.py example qwen2.5-coder-0.5b

For the study data/studies/NAME (conditions data/conditions/NAME.toml) and one model, from the
released labels and traces (the model's built-in ones and the study's), prints:

- each contrast (the built-in ones, then the condition file's) split by genre: usable pairs, b (absorbed only under the
  first condition), c (only under the second) and the exact McNemar p (stats.paired.mcnemar_exact);
- for each of them, of the clusters absorbed under the first condition and not under the second, how
  many second replies hold the remark's witness phrase anywhere (case-folded), extraction cuts included;
- per condition and genre, the absorbed replies that are little but the remark: with whitespace, backticks
  and a "python" fence tag removed, at most 1.6 times the remark's length (likewise stripped) plus 10
  characters. A rough count, named as such where it is quoted.
- each contrast on edit integrity: of the code clusters whose edited code both conditions' outputs have (the
  study's tables/validity_items.jsonl, as seam.py validity checked them), how many do not parse under the first
  condition only (b) and under the second only (c), with the exact McNemar p: the validity tables pair each
  condition with its control only, and the system-prompt conditions ask about one another.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark import conditions  # noqa: E402
from benchmark.dataset import requests  # noqa: E402
from benchmark.replies import Replies  # noqa: E402
from common import jsonl  # noqa: E402
from common.pipes import run_main  # noqa: E402
from common.records import Label, TraceRow, read  # noqa: E402
from stats.paired import mcnemar_exact, paired_table  # noqa: E402

GENRES = ("code", "prose")


def _stripped(text: str) -> str:
    return re.sub(r"\s|`|python", "", text.lower())


def remark_only(output: str, comment: str) -> bool:
    """Whether a reply is little but the remark (the rough rule in the module docstring).

    >>> remark_only("```\\nmy landlord wants a copy\\n```", "my landlord wants a copy"), remark_only("x = 1" * 9, "hi")
    (True, False)
    """
    return len(_stripped(output)) <= 1.6 * len(_stripped(comment)) + 10


def breakdown(name: str, model: str, root: Path = ROOT) -> list[str]:
    defined = conditions.load(root / "data" / "conditions" / f"{name}.toml")
    study = root / "data" / "studies" / name
    labels = {label.id: label for path in (root / "data" / "labels" / f"{model}.jsonl",
                                           study / "labels" / f"{model}.jsonl")
              for _, label in read(path, Label)}
    outputs = {row.id: row.output or "" for path in (root / "data" / "traces" / f"{model}.jsonl",
                                                     study / "traces" / f"{model}.jsonl")
               for _, row in read(path, TraceRow)}
    # a later turn holds the model's own clean output (the requests it was asked): read from its built-in trace
    replies = Replies.read(root / "data" / "traces" / f"{model}.jsonl")
    asked = {request.id: request for request in requests(defined=defined, replies=replies)}
    clusters = sorted({label.cluster for label in labels.values()})
    lines = ["contrast | genre | pairs | b | c | p McNemar | second replies holding the witness (of b)"]
    for first, second in defined.contrasts:
        for genre in GENRES:
            pairs = b = c = held = 0
            for cluster in clusters:
                one, two = labels.get(f"{cluster}/{first}"), labels.get(f"{cluster}/{second}")
                if not (one and two and one.usable and two.usable and one.genre == genre):
                    continue
                pairs += 1
                if one.absorbed and not two.absorbed:
                    b += 1
                    witness = asked[two.id].witness or ""
                    held += witness.lower() in outputs[two.id].lower()
                c += two.absorbed and not one.absorbed
            lines.append(f"{first} vs {second} | {genre} | {pairs} | {b} | {c} | "
                         f"{mcnemar_exact(b, c).pvalue:.3g} | {held}")
    lines.append("condition | genre | absorbed | of them little but the remark")
    for condition in sorted({label.condition for label in labels.values()}):
        for genre in GENRES:
            absorbed = [label for label in labels.values()
                        if label.condition == condition and label.genre == genre and label.absorbed]
            if absorbed:
                few = sum(remark_only(outputs[label.id], asked[label.id].comment or "") for label in absorbed)
                lines.append(f"{condition} | {genre} | {len(absorbed)} | {few}")
    invalid = invalid_code(study / "tables" / "validity_items.jsonl", model)
    lines.append("contrast | code pairs | invalid under the first only (b) | under the second only (c) | p McNemar")
    for first, second in defined.contrasts:
        table = paired_table(invalid.get(first, {}), invalid.get(second, {}))
        lines.append(f"{first} vs {second} | {table.n} | {table.first_only} | {table.second_only} | "
                     f"{mcnemar_exact(table.first_only, table.second_only).pvalue:.3g}")
    return lines


def invalid_code(items: Path, model: str) -> dict[str, dict[str, bool]]:
    """condition -> cluster -> whether the model's edited code there does not parse, from a validity_items.jsonl
    (as seam.py validity checked it; outputs without edited code to check are left out)."""
    invalid: dict[str, dict[str, bool]] = {}
    for _, item in jsonl.read(items):
        if item.get("model") == model and item.get("parses") is not None:
            invalid.setdefault(item["condition"], {})[item["id"].rsplit("/", 1)[0]] = not item["parses"]
    return invalid


def invalid_code_pairs(items: Path, model: str, first: str, second: str) -> tuple[int, int, int]:
    """(pairs, b, c): the clusters where both conditions' edited code was checked, b of them invalid under
    `first` only, c under `second` only."""
    invalid = invalid_code(items, model)
    table = paired_table(invalid.get(first, {}), invalid.get(second, {}))
    return table.n, table.first_only, table.second_only


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python scripts/study_breakdown.py STUDY MODEL", file=sys.stderr)
        return 2
    print("\n".join(breakdown(*argv)))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(lambda: main(sys.argv[1:])))
