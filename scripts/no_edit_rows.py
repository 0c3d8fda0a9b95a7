"""Every released reply the no-edit rule (scorer/noedit.py) takes, and those that open like a reply but keep more.

    python scripts/no_edit_rows.py [TRACES ...]     # default: data/traces/*.jsonl and data/studies/*/traces/*.jsonl

For each ok reply whose edited text (scorer.extract) opens like a reply to the user (`noedit.TO_USER`), prints
the model, id, the share of the artifact's words it keeps, whether the rule takes it, and its start: a reader
checks that every taken reply attempts no edit, and that none of those kept is one.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark import conditions  # noqa: E402
from common.normalize import content_words, normalize  # noqa: E402
from common.pipes import run_main  # noqa: E402
from common.traces import read_final  # noqa: E402
from scorer import noedit  # noqa: E402
from scorer.extract import extract  # noqa: E402
from scorer.inputs import read_items  # noqa: E402


def kept_share(edited: str, artifact: str) -> float:
    wanted, every_word = noedit._wanted(artifact)
    kept = frozenset(normalize(edited).split()) if every_word else content_words(edited)
    return len(wanted & kept) / len(wanted) if wanted else 1.0


def main() -> int:
    root = Path(__file__).resolve().parents[1]
    paths = [Path(p) for p in sys.argv[1:]] or sorted((root / "data" / "traces").glob("*.jsonl"))
    study = sorted((root / "data" / "studies").glob("*/traces/*.jsonl")) if not sys.argv[1:] else []
    taken = 0
    for path in [*paths, *study]:
        defined = conditions.load(root / "data" / "conditions" / f"{path.parent.parent.name}.toml") \
            if path in study else conditions.load(None)
        items = read_items(None, defined)
        for row_id, row in sorted(read_final(path).final.items()):
            if row.status != "ok" or row_id not in items:
                continue
            item = items[row_id]
            text = extract(row.output, item.artifact, item.genre, item.markers).text
            if not noedit.TO_USER.match(text.strip().replace("\u2019", "'")):
                continue
            takes = noedit.returns_no_edit(text, item.artifact, item.comment.text if item.comment else "")
            taken += takes
            start = " ".join(text.split())[:100]
            share = kept_share(text, item.artifact)
            print(f"{'TAKEN' if takes else 'kept '}\t{row.model}\t{row_id}\t{share:.0%}\t{start}")
    print(f"taken: {taken}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
