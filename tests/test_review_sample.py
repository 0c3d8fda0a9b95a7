"""`seam.py review sample`: a stratified, seeded, blinded sample of usable treatment outputs."""

from __future__ import annotations

import json
import random
from collections import Counter
from fractions import Fraction

import pytest
from support.reviewdata import make_inputs

import seam
from common import jsonl
from review.sample import Unit, allocate, draw, split


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_inputs(tmp_path_factory.mktemp("review-sample"))


def sample(inputs, out, *extra) -> int:
    return seam.main(["review", "sample", str(inputs.labels), str(inputs.traces), "--requests", str(inputs.requests),
                      "--out", str(out), *extra])


def rows_of(path):
    return [row for _, row in jsonl.read(path)]


def labels_of(inputs):
    return {(row["model"], row["id"]): row for _, row in jsonl.read(inputs.labels)}


def test_the_header_records_the_design_and_every_stratum(inputs, tmp_path, capsys):
    assert sample(inputs, tmp_path / "r.jsonl", "--n", "40", "--seed", "3") == 0
    header, *cases = rows_of(tmp_path / "r.jsonl")
    assert header["kind"] == "header" and header["seed"] == 3 and header["n"] == 40
    assert header["positives_share"] == 0.3 and "x kit verdict x genre x condition" in header["design"]
    assert header["labels"][0]["path"].endswith(inputs.labels.name) and len(header["labels"][0]["sha256"]) == 64
    assert header["traces"][0]["model"] == "synthetic-model"
    labels = labels_of(inputs)
    population = Counter((row["model"], "absorbed" if row["absorbed"] else "not_absorbed", row["genre"],
                          row["condition"]) for row in labels.values() if row["usable"])
    assert {(s["model"], s["verdict"], s["genre"], s["condition"]): s["population"]
            for s in header["strata"]} == dict(population)
    drawn = Counter()
    for case in cases:
        label = labels[case["model"], case["id"]]
        assert label["usable"]
        drawn[(case["model"], "absorbed" if label["absorbed"] else "not_absorbed", case["genre"],
               case["condition"])] += 1
    assert {(s["model"], s["verdict"], s["genre"], s["condition"]): s["drawn"] for s in header["strata"]
            if s["drawn"]} == dict(drawn)
    assert len(cases) == 40 and [case["case"] for case in cases] == list(range(1, 41))
    assert sum(s["drawn"] for s in header["strata"] if s["verdict"] == "absorbed") == 12  # 0.3 x 40
    assert all(s["drawn"] >= 1 for s in header["strata"])  # 40 cases cover all 20 strata
    assert "drew 40 cases (12 of the kit's positives, 28 of its negatives)" in capsys.readouterr().out


def test_no_case_carries_the_kits_verdict_tier_or_evidence(inputs, tmp_path):
    assert sample(inputs, tmp_path / "r.jsonl", "--n", "60", "--seed", "1") == 0
    header, *cases = rows_of(tmp_path / "r.jsonl")
    assert all(set(case) == {"kind", "case", "id", "model", "cluster", "condition", "genre", "source"}
               for case in cases)
    text = (tmp_path / "r.jsonl").read_text(encoding="utf-8")
    assert '"tier"' not in text and '"evidence"' not in text and '"absorbed":' not in text
    # the cases are shuffled: the kit's positives are not a block at the start or the end
    labels = labels_of(inputs)
    flags = [labels[case["model"], case["id"]]["absorbed"] for case in cases]
    assert flags != sorted(flags) and flags != sorted(flags, reverse=True)


def test_the_same_inputs_and_seed_give_the_same_bytes_and_another_seed_other_cases(inputs, tmp_path):
    for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        assert sample(inputs, tmp_path / f"{name}.jsonl", "--n", "30", "--seed", seed) == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    ids = [{row["id"] for row in rows_of(tmp_path / f"{name}.jsonl")[1:]} for name in ("a", "c")]
    assert ids[0] != ids[1]


def test_positives_share_sets_how_many_come_from_the_kits_positives(inputs, tmp_path):
    assert sample(inputs, tmp_path / "r.jsonl", "--n", "40", "--seed", "1", "--positives-share", "0.5") == 0
    header = rows_of(tmp_path / "r.jsonl")[0]
    assert sum(s["drawn"] for s in header["strata"] if s["verdict"] == "absorbed") == 20


def test_an_existing_review_file_is_never_overwritten(inputs, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    out.write_text("answers\n")
    assert sample(inputs, out, "--n", "10", "--seed", "1") == 2
    assert "is never overwritten" in capsys.readouterr().err
    assert out.read_text() == "answers\n"


def test_labels_without_their_traces_are_refused(inputs, tmp_path, capsys):
    other = make_inputs(tmp_path / "other", model="other-model", per_source=2)
    code = seam.main(["review", "sample", str(inputs.labels), str(other.traces), "--requests", str(inputs.requests),
                      "--n", "10", "--seed", "1", "--out", str(tmp_path / "r.jsonl")])
    assert code == 2 and "no trace file for model(s) synthetic-model" in capsys.readouterr().err
    assert not (tmp_path / "r.jsonl").exists()


def test_traces_that_do_not_match_the_labels_are_refused(inputs, tmp_path, capsys):
    rows = rows_of(inputs.traces)
    labels = labels_of(inputs)
    usable = next(rid for (_, rid), row in labels.items() if row["usable"])
    broken = tmp_path / "traces.jsonl"
    jsonl.write(broken, [row for row in rows if row["id"] != usable])
    code = seam.main(["review", "sample", str(inputs.labels), str(broken), "--requests", str(inputs.requests),
                      "--n", "500", "--seed", "1", "--out", str(tmp_path / "r.jsonl")])
    assert code == 2 and f"no usable output for {usable}" in capsys.readouterr().err


# ---------------------------------------------------------------- the design's pieces


def test_allocation_is_proportional_at_least_one_per_stratum_and_never_more_than_a_stratum_holds():
    rng = random.Random(0)
    for _ in range(500):
        sizes = [rng.choice([0, 1, 2, 5, 30, 200]) for _ in range(rng.randrange(1, 12))]
        n = rng.randrange(1, 300)
        drawn = allocate(sizes, n)
        total = sum(sizes)
        assert sum(drawn) == min(n, total)
        assert all(0 <= d <= s for d, s in zip(drawn, sizes, strict=True))
        present = [i for i, s in enumerate(sizes) if s]
        if len(present) <= n < total:
            assert all(drawn[i] >= 1 for i in present)
            for i in present:  # within one of the exact quota, except for what the minimum of one moves
                quota = Fraction(n * sizes[i], total)
                assert drawn[i] <= max(1, quota + 1) + sum(1 for j in present if Fraction(n * sizes[j], total) < 1)
        assert allocate(sizes, n) == drawn


def test_the_split_between_positives_and_negatives():
    assert split(150, 0.3, 224, 656) == (45, 105)
    assert split(10, 0.0, 50, 50) == (0, 10)
    assert split(10, 1.0, 50, 50) == (10, 0)
    assert split(10, 0.5, 2, 50) == (2, 8)
    assert split(10, 0.5, 50, 3) == (7, 3)


def test_a_stratum_draw_is_a_uniform_sample_without_replacement():
    units = [Unit("m", f"humaneval-{i:03d}/newline", f"humaneval-{i:03d}", "newline", "code", "humaneval",
                  "absorbed") for i in range(10)]
    chosen = Counter()
    for seed in range(3000):
        picked = draw(units, 3, seed)
        assert len({unit.id for unit in picked}) == 3
        chosen.update(unit.id for unit in picked)
    assert all(820 < count < 980 for count in chosen.values())  # 900 expected each (sd about 25)


def test_the_header_is_json_with_sorted_keys(inputs, tmp_path):
    assert sample(inputs, tmp_path / "r.jsonl", "--n", "5", "--seed", "2") == 0
    first = (tmp_path / "r.jsonl").read_text(encoding="utf-8").split("\n")[0]
    assert first == json.dumps(json.loads(first), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
