"""`seam.py tables --exclusions FILE`: adjudicated false positives counted as not absorbed, and every table says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import seam
from common import jsonl
from common.files import read_csv
from stats.synthetic import synthetic_labels

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def labels(tmp_path_factory):
    path = tmp_path_factory.mktemp("exclusions") / "labels.jsonl"
    jsonl.write(path, synthetic_labels(models=2, clusters=24, comments=4))
    return path


def tables(labels: Path, out: Path, *extra: str) -> int:
    return seam.main(["tables", str(labels), "--out", str(out), "--resamples", "50", *extra])


def positives(labels: Path, count: int, condition: str = "newline") -> list[dict]:
    rows = [row for _, row in jsonl.read(labels)]
    return [row for row in rows if row["absorbed"] and row["condition"] == condition][:count]


def write_exclusions(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_without_the_option_the_released_tables_are_unchanged(tmp_path):
    assert seam.main(["tables", str(ROOT / "data" / "labels"), "--out", str(tmp_path),
                      "--traces", str(ROOT / "data" / "traces")]) == 0  # as reproduce.sh makes them
    for path in sorted((ROOT / "data" / "tables").iterdir()):
        if not path.name.startswith("validity_"):
            assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_excluded_labels_count_as_not_absorbed_and_every_table_says_so(labels, tmp_path, capsys):
    chosen = positives(labels, 2)
    fp = write_exclusions(tmp_path / "fp.jsonl", [{"id": row["id"], "model": row["model"],
                                                   "reason": "only in a note to the user"} for row in chosen])
    assert tables(labels, tmp_path / "before") == 0
    assert tables(labels, tmp_path / "after", "--exclusions", str(fp)) == 0
    assert "exclusions: 2 adjudicated false positives" in capsys.readouterr().out
    before = {(r["model"], r["condition"]): r for r in read_csv(tmp_path / "before" / "rates.csv")}
    after = {(r["model"], r["condition"]): r for r in read_csv(tmp_path / "after" / "rates.csv")}
    for key in before:
        dropped = sum((row["model"], row["condition"]) == key for row in chosen)
        assert int(after[key]["n"]) == int(before[key]["n"])  # the pairs stay
        assert int(after[key]["absorbed"]) == int(before[key]["absorbed"]) - dropped
    for path in sorted((tmp_path / "after").glob("*.md")) + sorted((tmp_path / "after").glob("*.tex")):
        text = path.read_text(encoding="utf-8")
        assert "Adjudicated false positives" in text and "fp.jsonl" in text, path.name
        assert chosen[0]["id"].replace("_", "\\_") in text or chosen[0]["id"] in text
    provenance = json.loads((tmp_path / "after" / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["exclusions"]["treatment"] == "counted as not absorbed"
    assert [row["id"] for row in provenance["exclusions"]["rows"]] == [row["id"] for row in chosen]
    assert "exclusions" not in json.loads((tmp_path / "before" / "provenance.json").read_text(encoding="utf-8"))


def test_the_paired_contrasts_lose_a_discordant_pair_not_a_pair(labels, tmp_path):
    rows = [row for _, row in jsonl.read(labels)]
    newline = {(r["model"], r["cluster"]): r for r in rows if r["condition"] == "newline"}
    blank = {(r["model"], r["cluster"]): r for r in rows if r["condition"] == "blank"}
    key = next(k for k, r in newline.items() if r["absorbed"] and blank[k]["usable"] and not blank[k]["absorbed"])
    fp = write_exclusions(tmp_path / "fp.jsonl", [{"id": newline[key]["id"], "model": key[0], "reason": "r"}])
    assert tables(labels, tmp_path / "before") == 0 and tables(labels, tmp_path / "after", "--exclusions", str(fp)) == 0

    def contrast(folder):
        return next(r for r in read_csv(folder / "contrasts.csv")
                    if r["model"] == key[0] and r["contrast"] == "newline vs blank")

    first, second = contrast(tmp_path / "before"), contrast(tmp_path / "after")
    assert second["n_pairs"] == first["n_pairs"] and int(second["b"]) == int(first["b"]) - 1


@pytest.mark.parametrize(("row", "message"), [
    ({"id": "nope-000/newline", "model": "model-00", "reason": "r"}, "fp.jsonl:1: no label for model 'model-00'"),
    ({"id": "ID", "model": "model-00", "reason": ""}, "fp.jsonl:1: field 'reason' is '', expected a non-empty"),
    ({"id": "humaneval", "model": "model-00", "reason": "r"}, "fp.jsonl:1: field 'id' is 'humaneval', expected"),
    ({"id": "ID", "model": "model-00", "reason": "r", "note": "x"}, "fp.jsonl:1: unknown field(s) 'note'"),
    ({"id": "ID", "reason": "r"}, "fp.jsonl:1: field 'model' is None"),
])
def test_a_malformed_exclusion_is_refused_naming_file_and_line(labels, tmp_path, capsys, row, message):
    row = {**row, "id": positives(labels, 1)[0]["id"]} if row["id"] == "ID" else row
    fp = write_exclusions(tmp_path / "fp.jsonl", [row])
    assert tables(labels, tmp_path / "out", "--exclusions", str(fp)) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_only_the_kits_positives_can_be_excluded_and_each_once(labels, tmp_path, capsys):
    rows = [row for _, row in jsonl.read(labels)]
    negative = next(r for r in rows if r["usable"] and not r["absorbed"])
    unusable = next(r for r in rows if not r["usable"])
    positive = positives(labels, 1)[0]
    for row, message in ((negative, "is already not absorbed"), (unusable, "is excluded (not usable)")):
        fp = write_exclusions(tmp_path / "fp.jsonl", [{"id": row["id"], "model": row["model"], "reason": "r"}])
        assert tables(labels, tmp_path / "out", "--exclusions", str(fp)) == 2
        assert message in capsys.readouterr().err
    twice = [{"id": positive["id"], "model": positive["model"], "reason": "r"}] * 2
    assert tables(labels, tmp_path / "out", "--exclusions", str(write_exclusions(tmp_path / "fp.jsonl", twice))) == 2
    err = capsys.readouterr().err
    assert "fp.jsonl:2:" in err and "is listed twice (first at" in err
    empty = write_exclusions(tmp_path / "empty.jsonl", [])
    assert tables(labels, tmp_path / "out", "--exclusions", str(empty)) == 2
    assert "holds no exclusions" in capsys.readouterr().err
