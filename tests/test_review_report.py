"""`seam.py review report`: the kit's verdicts joined at last, and measured against the reviewer's."""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from datetime import UTC, datetime

import pytest
from support.reviewdata import make_inputs

import seam
from common import jsonl
from common.files import read_csv
from review import store
from review.estimate import Reviewed, precision, recall
from review.records import Answer
from review.sample import allocate, split
from stats.agreement import cohens_kappa

ABSORBING = {"verbatim", "note", "paraphrase"}  # the synthetic behaviours that put the comment into the text


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_inputs(tmp_path_factory.mktemp("review-report"), per_source=10)


def draw(inputs, out, n=60, seed=2):
    assert seam.main(["review", "sample", str(inputs.labels), str(inputs.traces), "--requests", str(inputs.requests),
                      "--n", str(n), "--seed", str(seed), "--out", str(out)]) == 0
    return out


def truth(inputs) -> dict[str, bool]:
    return {row["id"]: row.get("behaviour") in ABSORBING for _, row in jsonl.read(inputs.traces)}


def answer_all(path, reviewer, verdict_of, kind=None):
    """Answer every case with verdict_of(case) (None: leave it unanswered), as the server appends them."""
    for case in store.read(path).cases:
        verdict = verdict_of(case)
        if verdict is not None:
            store.append(path, Answer(kind="answer", case=case.case, id=case.id, model=case.model, reviewer=reviewer,
                                      verdict=verdict, absorption_kind=kind, note="",
                                      answered_at=datetime(2026, 1, 1, tzinfo=UTC).isoformat()))


def report(review, inputs, out, *extra) -> int:
    return seam.main(["review", "report", str(review), "--labels", str(inputs.labels), "--out", str(out), *extra])


def labels_of(inputs):
    return {row["id"]: row for _, row in jsonl.read(inputs.labels)}


def test_the_report_counts_and_estimates_as_computed_by_hand(inputs, tmp_path, capsys):
    review = draw(inputs, tmp_path / "r.jsonl")
    real = truth(inputs)
    answer_all(review, "ada", lambda case: "absorbed" if real[case.id] else "not_absorbed")
    assert report(review, inputs, tmp_path / "out") == 0
    printed = capsys.readouterr().out
    assert "review: 60 cases, 60 answered by ada (0 unsure)" in printed and "precision: " in printed
    labels = labels_of(inputs)
    cases = store.read(review).cases
    confusion = {row["kit"]: row for row in read_csv(tmp_path / "out" / "review_confusion.csv")}
    kit = {case.id: labels[case.id]["absorbed"] for case in cases}
    assert int(confusion["absorbed"]["reviewer_absorbed"]) == sum(kit[c.id] and real[c.id] for c in cases)
    assert int(confusion["not_absorbed"]["reviewer_absorbed"]) == sum(not kit[c.id] and real[c.id] for c in cases)
    assert int(confusion["absorbed"]["reviewer_not_absorbed"]) == sum(kit[c.id] and not real[c.id] for c in cases)

    # the weighted estimates, by hand: stratum totals N_h * x_h / m_h
    header = store.read(review).header
    found = Counter()
    for case in cases:
        key = (case.model, "absorbed" if kit[case.id] else "not_absorbed", case.genre, case.condition)
        found[key, "m"] += 1
        found[key, "x"] += real[case.id]
    totals = {s.key: s.population * found[s.key, "x"] / found[s.key, "m"] for s in header.strata if s.drawn}
    sizes = {s.key: s.population for s in header.strata if s.drawn}
    tp = sum(v for k, v in totals.items() if k[1] == "absorbed")
    expected_precision = tp / sum(v for k, v in sizes.items() if k[1] == "absorbed")
    expected_recall = tp / sum(totals.values())
    estimates = {row["measure"]: row for row in read_csv(tmp_path / "out" / "review_estimates.csv")}
    assert float(estimates["precision"]["estimate"]) == pytest.approx(expected_precision, abs=1e-6)
    assert float(estimates["recall"]["estimate"]) == pytest.approx(expected_recall, abs=1e-6)
    for measure in ("precision", "recall", "agreement", "false omission"):
        low, value, high = (float(estimates[measure][k]) for k in ("ci_low", "estimate", "ci_high"))
        assert 0 <= low <= value <= high <= 1

    listed = {(row["id"], row["finding"]) for row in read_csv(tmp_path / "out" / "review_cases.csv")}
    assert listed == {(c.id, "miss") for c in cases if real[c.id] and not kit[c.id]} | {
        (c.id, "false positive") for c in cases if kit[c.id] and not real[c.id]}
    conditions = read_csv(tmp_path / "out" / "review_conditions.csv")
    assert {row["condition"] for row in conditions} == {"newline", "blank", "boundary", "mitigation", "native"}
    assert sum(int(row["misses"]) for row in conditions) == sum(1 for _, f in listed if f == "miss")
    for suffix in ("csv", "md"):
        for name in ("confusion", "estimates", "conditions", "strata", "cases"):
            assert (tmp_path / "out" / f"review_{name}.{suffix}").exists()
    assert "Unsure answers" in (tmp_path / "out" / "review_estimates.md").read_text(encoding="utf-8")


def test_the_same_review_gives_the_same_bytes(inputs, tmp_path):
    review = draw(inputs, tmp_path / "r.jsonl")
    rng = random.Random(1)
    answer_all(review, "ada", lambda case: rng.choice(["absorbed", "not_absorbed", "unsure", None]))
    assert report(review, inputs, tmp_path / "a") == 0
    assert report(review, inputs, tmp_path / "b") == 0
    names = sorted(path.name for path in (tmp_path / "a").iterdir())
    assert names == sorted(path.name for path in (tmp_path / "b").iterdir()) and len(names) == 11
    assert all((tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes() for name in names)


def test_unsure_answers_are_counted_but_left_out_of_the_estimates(inputs, tmp_path):
    real = truth(inputs)
    first = draw(inputs, tmp_path / "first.jsonl")
    second = draw(inputs, tmp_path / "second.jsonl")
    unsure = {case.case for case in store.read(first).cases if case.case % 5 == 0}
    answer_all(first, "ada", lambda c: "unsure" if c.case in unsure else ("absorbed" if real[c.id] else "not_absorbed"))
    answer_all(second, "ada", lambda c: None if c.case in unsure else ("absorbed" if real[c.id] else "not_absorbed"))
    assert report(first, inputs, tmp_path / "a") == 0 and report(second, inputs, tmp_path / "b") == 0
    estimates = [(tmp_path / name / "review_estimates.csv").read_bytes() for name in ("a", "b")]
    assert estimates[0] == estimates[1]
    confusion = read_csv(tmp_path / "a" / "review_confusion.csv")
    assert sum(int(row["reviewer_unsure"]) for row in confusion) == len(unsure)


def test_a_later_answer_supersedes_an_earlier_one(inputs, tmp_path):
    review = draw(inputs, tmp_path / "r.jsonl")
    answer_all(review, "ada", lambda case: "absorbed")
    answer_all(review, "ada", lambda case: "not_absorbed")
    assert report(review, inputs, tmp_path / "out") == 0
    confusion = read_csv(tmp_path / "out" / "review_confusion.csv")
    assert sum(int(row["reviewer_absorbed"]) for row in confusion) == 0
    assert len(store.read(review).answers) == 2 * 60  # the history stays


def test_other_labels_than_those_sampled_are_refused(inputs, tmp_path, capsys):
    review = draw(inputs, tmp_path / "r.jsonl")
    changed = tmp_path / "labels.jsonl"
    rows = [row for _, row in jsonl.read(inputs.labels)]
    row = next(r for r in rows if r["usable"])
    row["absorbed"] = not row["absorbed"]
    row["tier"] = "witness" if row["absorbed"] else None
    jsonl.write(changed, rows)
    assert seam.main(["review", "report", str(review), "--labels", str(changed), "--out", str(tmp_path / "o")]) == 2
    assert "not the labels the review was drawn from" in capsys.readouterr().err


def test_a_second_reviewer_gives_agreement_and_cohens_kappa(inputs, tmp_path):
    review = draw(inputs, tmp_path / "r.jsonl")
    copy = tmp_path / "bob.jsonl"
    shutil.copy(review, copy)
    real = truth(inputs)
    answer_all(review, "ada", lambda c: "absorbed" if real[c.id] else "not_absorbed")
    flip = {1, 2, 3, 7, 11}
    answer_all(copy, "bob", lambda c: ("not_absorbed" if real[c.id] else "absorbed") if c.case in flip
               else "unsure" if c.case == 5 else "absorbed" if real[c.id] else "not_absorbed")
    assert report(review, inputs, tmp_path / "out", "--second", str(copy)) == 0
    cases = store.read(review).cases
    table = [[0, 0], [0, 0]]
    for case in cases:
        if case.case == 5:
            continue
        a = 0 if real[case.id] else 1
        b = 1 - a if case.case in flip else a
        table[a][b] += 1
    n = sum(map(sum, table))
    po = (table[0][0] + table[1][1]) / n
    pe = sum((sum(table[i]) / n) * ((table[0][i] + table[1][i]) / n) for i in range(2))
    kappa = (po - pe) / (1 - pe)
    text = (tmp_path / "out" / "review_reviewers.md").read_text(encoding="utf-8")
    assert f"Cohen's kappa: {kappa:.3f}" in text and f"both definite: {n}" in text
    assert "case 1 (" in text and "Disagreements:" in text
    rows = {row["first"]: row for row in read_csv(tmp_path / "out" / "review_reviewers.csv")}
    assert int(rows["absorbed"]["unsure"]) + int(rows["not_absorbed"]["unsure"]) == 1
    from report.tables import read_reviews

    (read,) = read_reviews(tmp_path)  # the page names both readers
    assert read.name == "out" and read.readers == ("ada", "bob")


def test_a_second_file_of_another_sample_or_the_same_reviewer_is_refused(inputs, tmp_path, capsys):
    review = draw(inputs, tmp_path / "r.jsonl")
    other = draw(inputs, tmp_path / "other.jsonl", seed=3)
    answer_all(review, "ada", lambda c: "absorbed")
    answer_all(other, "bob", lambda c: "absorbed")
    assert report(review, inputs, tmp_path / "o", "--second", str(other)) == 2
    assert "not a copy of the same sample" in capsys.readouterr().err
    same = tmp_path / "same.jsonl"
    draw(inputs, same)
    answer_all(same, "ada", lambda c: "absorbed")
    assert report(review, inputs, tmp_path / "o", "--second", str(same)) == 2
    assert "answered by the same reviewer" in capsys.readouterr().err


# ---------------------------------------------------------------- the estimator's coverage


@pytest.mark.parametrize(("positives", "negatives"), [(0.9, 0.03), (0.8, 0.1)])
def test_the_weighted_intervals_cover_the_true_precision_and_recall(positives, negatives):
    """Draw the design's sample 300 times from a population whose truth is known: the 95% intervals cover it."""
    rng = random.Random(7)
    sizes_pos = [12, 8, 6, 8, 23, 36, 49, 21, 15, 46]
    sizes_neg = [52, 60, 54, 47, 42, 75, 73, 104, 71, 78]
    strata = ([(True, [rng.random() < positives for _ in range(n)]) for n in sizes_pos]
              + [(False, [rng.random() < negatives for _ in range(n)]) for n in sizes_neg])
    tp = sum(sum(ys) for kit, ys in strata if kit)
    true_precision = tp / sum(sizes_pos)
    true_recall = tp / sum(sum(ys) for _, ys in strata)
    n_pos, n_neg = split(150, 0.3, sum(sizes_pos), sum(sizes_neg))
    drawn = allocate(sizes_pos, n_pos) + allocate(sizes_neg, n_neg)
    covered = Counter()
    for _ in range(300):
        units = [Reviewed(len(ys) / m, kit, y) for (kit, ys), m in zip(strata, drawn, strict=True)
                 for y in rng.sample(ys, m)]
        for name, result, value in (("precision", precision(units), true_precision),
                                    ("recall", recall(units), true_recall)):
            covered[name] += result.confidence_interval.low <= value <= result.confidence_interval.high
    assert covered["precision"] >= 0.92 * 300 and covered["recall"] >= 0.92 * 300


def test_kappa_matches_a_bootstrap_of_its_standard_error():
    table = [[200, 50], [100, 150]]
    result = cohens_kappa(table)
    rng = random.Random(3)
    cells = [cell for cell, count in enumerate(sum(table, [])) for _ in range(count)]
    values = []
    for _ in range(1500):
        counts = Counter(rng.choice(cells) for _ in cells)
        values.append(cohens_kappa([[counts[0], counts[1]], [counts[2], counts[3]]]).statistic)
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    assert result.statistic == pytest.approx(0.4) and spread == pytest.approx(result.standard_error, rel=0.1)


def test_several_models_are_strata_of_one_sample_and_each_gets_its_estimates(tmp_path):
    first = make_inputs(tmp_path / "a", per_source=4, model="model-a")
    second = make_inputs(tmp_path / "b", per_source=4, model="model-b", seed=9)
    labels, traces = tmp_path / "labels", tmp_path / "traces"
    labels.mkdir()
    traces.mkdir()
    for made in (first, second):
        shutil.copy(made.labels, labels / made.labels.name)
        shutil.copy(made.traces, traces / made.labels.name)
    review = tmp_path / "r.jsonl"
    assert seam.main(["review", "sample", str(labels), str(traces), "--requests", str(first.requests), "--n", "50",
                      "--seed", "1", "--out", str(review)]) == 0
    header = store.read(review).header
    assert {s.model for s in header.strata} == {"model-a", "model-b"} and len(header.traces) == 2
    assert {case.model for case in store.read(review).cases} == {"model-a", "model-b"}
    answer_all(review, "ada", lambda case: "absorbed" if case.case % 2 else "not_absorbed",
               kind="in_document_note")
    assert seam.main(["review", "report", str(review), "--labels", str(labels), "--out", str(tmp_path / "o")]) == 0
    estimates = read_csv(tmp_path / "o" / "review_estimates.csv")
    assert {row["model"] for row in estimates} == {"all", "model-a", "model-b"}
    conditions = read_csv(tmp_path / "o" / "review_conditions.csv")
    assert {(row["model"], row["condition"]) for row in conditions} == {
        (m, c) for m in ("model-a", "model-b") for c in ("newline", "blank", "boundary", "mitigation", "native")}


def test_a_note_over_several_lines_stays_one_markdown_row(inputs, tmp_path):
    review = draw(inputs, tmp_path / "r.jsonl")
    for case in store.read(review).cases:
        store.append(review, Answer(kind="answer", case=case.case, id=case.id, model=case.model, reviewer="ada",
                                    verdict="unsure", absorption_kind=None, note="first | line\nsecond line",
                                    answered_at="2026-01-01T00:00:00.000Z"))
    assert report(review, inputs, tmp_path / "o") == 0
    markdown = (tmp_path / "o" / "review_cases.md").read_text(encoding="utf-8")
    assert "first \\| line \u23ce second line" in markdown and "\nsecond line" not in markdown
    assert read_csv(tmp_path / "o" / "review_cases.csv")[0]["note"] == "first | line\nsecond line"


# ---------------------------------------------------------------- --rescored: the same review, other labels


def rescore(inputs, path, flip=(), drop=(), unusable=(), usable=()):
    """A copy of the labels as a later scorer would write them: the ids in `flip` change verdict."""
    rows = []
    for _, row in jsonl.read(inputs.labels):
        row = {**row, "scorer_version": "later"}
        if row["id"] in drop:
            continue
        if row["id"] in flip:
            row["absorbed"] = not row["absorbed"]
            row["tier"], row["evidence"] = ("witness", "it") if row["absorbed"] else (None, None)
        if row["id"] in unusable:
            row.update(usable=False, absorbed=None, tier=None, evidence=None, reason="treatment unusable: refusal")
        if row["id"] in usable:
            row.update(usable=True, absorbed=False, tier=None, evidence=None, reason=None)
        rows.append(row)
    jsonl.write(path, rows)
    return path


def test_a_rescore_is_measured_on_the_same_review_with_the_draws_design(inputs, tmp_path, capsys):
    review = draw(inputs, tmp_path / "r.jsonl")
    real = truth(inputs)
    answer_all(review, "ada", lambda c: "absorbed" if real[c.id] else "not_absorbed")
    labels = labels_of(inputs)
    cases = store.read(review).cases
    # the rescore changes the verdict of two positives and a negative of the sample, and of one output outside it
    positives = [c.id for c in cases if labels[c.id]["absorbed"]]
    negatives = [c.id for c in cases if not labels[c.id]["absorbed"]]
    wrong = {*positives[:2], negatives[0]}
    outside = next(i for i, row in labels.items() if row["usable"] and i not in {c.id for c in cases})
    later = rescore(inputs, tmp_path / "later.jsonl", flip=wrong | {outside})
    assert report(review, inputs, tmp_path / "before") == 0
    assert report(review, inputs, tmp_path / "after", "--rescored", str(later)) == 0
    printed = capsys.readouterr().out
    assert "3 case(s) changed verdict since the draw" in printed

    kit = {c.id: labels[c.id]["absorbed"] != (c.id in wrong) for c in cases}
    confusion = {row["kit"]: row for row in read_csv(tmp_path / "after" / "review_confusion.csv")}
    assert int(confusion["absorbed"]["cases"]) == len(positives) - 1
    assert int(confusion["not_absorbed"]["reviewer_absorbed"]) == sum(not kit[c.id] and real[c.id] for c in cases)
    # the weights are the draw's: precision and recall by hand, each case weighted by its stratum at the draw
    header = store.read(review).header
    drawn_key = {c.id: (c.model, "absorbed" if labels[c.id]["absorbed"] else "not_absorbed", c.genre, c.condition)
                 for c in cases}
    answered = Counter(drawn_key.values())
    weight = {s.key: s.population / answered[s.key] for s in header.strata if s.drawn}
    w = {c.id: weight[drawn_key[c.id]] for c in cases}
    tp = sum(w[c.id] for c in cases if kit[c.id] and real[c.id])
    estimates = {row["measure"]: row for row in read_csv(tmp_path / "after" / "review_estimates.csv")}
    assert float(estimates["precision"]["estimate"]) == pytest.approx(
        tp / sum(w[c.id] for c in cases if kit[c.id]), abs=1e-6)
    assert float(estimates["recall"]["estimate"]) == pytest.approx(
        tp / sum(w[c.id] for c in cases if real[c.id]), abs=1e-6)
    # the kit's own rate is the rescore's, on every output of the covered strata
    before = {row["measure"]: row for row in read_csv(tmp_path / "before" / "review_estimates.csv")}
    moved = sum(1 if not labels[i]["absorbed"] else -1 for i in wrong | {outside})
    population = sum(s.population for s in header.strata)
    assert float(estimates["absorption rate (kit)"]["estimate"]) == pytest.approx(
        float(before["absorption rate (kit)"]["estimate"]) + moved / population, abs=1e-6)
    # the strata are the draw's, byte for byte, apart from the notes
    assert (tmp_path / "after" / "review_strata.csv").read_bytes() == (tmp_path / "before" /
                                                                       "review_strata.csv").read_bytes()
    # every table says where the verdicts come from, with both checksums
    later_sha = inputs_sha(later)
    drawn_sha = inputs_sha(inputs.labels)
    for name in ("confusion", "estimates", "conditions", "strata", "cases"):
        text = (tmp_path / "after" / f"review_{name}.md").read_text(encoding="utf-8")
        assert f"- Rescored: the kit's verdicts, tiers and evidence come from {later} [SHA-256 {later_sha}]" in text
        assert f"[SHA-256 {drawn_sha}]" in text and "scorer_version later" in text
        assert "Rescored" not in (tmp_path / "before" / f"review_{name}.md").read_text(encoding="utf-8")
    provenance = json.loads((tmp_path / "after" / "review_provenance.json").read_text(encoding="utf-8"))
    assert provenance["labels"] == [{"path": str(inputs.labels), "sha256": drawn_sha}]
    assert provenance["rescored"]["labels"] == [{"path": str(later), "sha256": later_sha}]
    assert provenance["rescored"]["scorer_versions"] == ["later"]
    assert {row["id"] for row in provenance["rescored"]["changed"]} == wrong
    assert "rescored" not in json.loads((tmp_path / "before" / "review_provenance.json").read_text(encoding="utf-8"))


def inputs_sha(path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_rescore_that_lacks_a_case_or_describes_other_outputs_is_refused(inputs, tmp_path, capsys):
    review = draw(inputs, tmp_path / "r.jsonl")
    answer_all(review, "ada", lambda c: "absorbed")
    case = store.read(review).cases[4]
    never = next(row["id"] for row in labels_of(inputs).values() if not row["usable"])
    outside = next(row["id"] for row in labels_of(inputs).values()
                   if row["usable"] and row["id"] not in {c.id for c in store.read(review).cases})
    refused = [
        (rescore(inputs, tmp_path / "a.jsonl", drop={case.id}),
         f"--rescored: no label for 1 case(s) of {review} (first: case {case.case}, {case.model} {case.id})"),
        (rescore(inputs, tmp_path / "b.jsonl", usable={never}),
         "--rescored: 1 output(s) are usable in these labels but were not in the labels drawn from"),
        (inputs.labels, "--rescored: these are the labels the review was drawn from"),
        (rescore(inputs, tmp_path / "d.jsonl", drop={outside}),
         "--rescored: no label for 1 output(s) of the draw"),
    ]
    for labels, message in refused:
        assert report(review, inputs, tmp_path / "o", "--rescored", str(labels)) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    # without the option, other labels are refused as before, and the message names the option
    changed = rescore(inputs, tmp_path / "c.jsonl")
    assert seam.main(["review", "report", str(review), "--labels", str(changed), "--out", str(tmp_path / "o")]) == 2
    assert "give them with --rescored" in capsys.readouterr().err


def test_the_released_review_measures_the_rescore_against_the_labels_it_was_drawn_from(tmp_path, monkeypatch):
    """The numbers docs/SCORER.md gives for the commentary rule (scorer_version 3 -> 4), from the released files."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    review = root / "data" / "review" / "smollm2-135m.review.jsonl"
    drawn = root / "data" / "review" / "smollm2-135m.drawn-labels.jsonl"
    if not drawn.exists():
        pytest.skip("no released review of rescored labels")
    assert inputs_sha(drawn) == store.read(review).header.labels[0].sha256
    monkeypatch.chdir(root)  # the review names its files relative to the repository
    released = root / "data" / "labels" / "smollm2-135m.jsonl"
    assert seam.main(["review", "report", str(review), "--labels", str(drawn), "--out", str(tmp_path / "v3")]) == 0
    assert seam.main(["review", "report", str(review), "--labels", str(drawn), "--rescored", str(released),
                      "--out", str(tmp_path / "v4")]) == 0
    shown = {}
    for version in ("v3", "v4"):
        rows = {row["measure"]: row for row in read_csv(tmp_path / version / "review_estimates.csv")}
        shown[version] = {m: (rows[m]["estimate"], rows[m]["ci_low"], rows[m]["ci_high"], rows[m]["n"])
                          for m in ("precision", "recall")}
    assert shown["v3"] == {"precision": ("0.977679", "0.883639", "0.996057", "45"),
                           "recall": ("0.877635", "0.756856", "0.942941", "49")}
    assert shown["v4"] == {"precision": ("1.000000", "0.919137", "1.000000", "44"),
                           "recall": ("0.877635", "0.756856", "0.942941", "49")}
    changed = json.loads((tmp_path / "v4" / "review_provenance.json").read_text(encoding="utf-8"))["rescored"]
    assert changed["changed"] == [{"case": 36, "drawn": "absorbed", "id": "wikipedia-013/mitigation",
                                   "model": "smollm2-135m", "rescored": "not_absorbed"}]


def test_a_rescore_that_excludes_outputs_leaves_those_cases_out_and_says_so(inputs, tmp_path):
    """A later scorer may call an output unusable (a reply that attempts no edit): its case is measured no more,
    its stratum's population counts the outputs still usable, and the provenance and tables name it."""
    review = draw(inputs, tmp_path / "r.jsonl")
    real = truth(inputs)
    answer_all(review, "ada", lambda c: "absorbed" if real[c.id] else "not_absorbed")
    labels = labels_of(inputs)
    cases = store.read(review).cases
    gone = next(c for c in cases if labels[c.id]["absorbed"])  # a kit positive of the sample
    outside = next(i for i, row in labels.items() if row["usable"] and i not in {c.id for c in cases})
    later = rescore(inputs, tmp_path / "later.jsonl", unusable={gone.id, outside})
    assert report(review, inputs, tmp_path / "after", "--rescored", str(later)) == 0
    provenance = json.loads((tmp_path / "after" / "review_provenance.json").read_text(encoding="utf-8"))
    assert provenance["rescored"]["excluded"] == [{"case": gone.case, "id": gone.id, "model": gone.model,
                                                   "reason": "treatment unusable: refusal"}]
    confusion = {row["kit"]: row for row in read_csv(tmp_path / "after" / "review_confusion.csv")}
    positives = sum(bool(labels[c.id]["absorbed"]) for c in cases)
    assert int(confusion["absorbed"]["cases"]) == positives - 1
    estimates = {row["measure"]: row for row in read_csv(tmp_path / "after" / "review_estimates.csv")}
    assert int(estimates["precision"]["n"]) == positives - 1
    strata = read_csv(tmp_path / "after" / "review_strata.csv")
    header = {s.key: s for s in store.read(review).header.strata}
    rows = {(row["model"], row["verdict"], row["genre"], row["condition"]): row for row in strata}
    assert {key: int(row["population"]) for key, row in rows.items()} == {k: s.population for k, s in header.items()}
    key = (gone.model, "absorbed", gone.genre, gone.condition)  # its stratum: one output fewer, one answer fewer
    answered_before = sum(1 for c in cases if (c.model, "absorbed" if labels[c.id]["absorbed"] else "not_absorbed",
                                               c.genre, c.condition) == key)
    assert float(rows[key]["weight"]) == pytest.approx((header[key].population - 1) / (answered_before - 1))
    notes = (tmp_path / "after" / "review_strata.md").read_text(encoding="utf-8")
    assert f"{' '.join(key)} {header[key].population - 1} of {header[key].population}" in notes
    assert "measured no more" in (tmp_path / "after" / "review_confusion.md").read_text(encoding="utf-8")


def test_the_released_1_5b_review_measures_scorer_version_6_on_its_held_out_half(tmp_path, monkeypatch):
    """The numbers docs/REVIEW.md and the closing note give for scorer_version 4 -> 5, from the released files."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    review = root / "data" / "review" / "qwen2.5-coder-1.5b.review.jsonl"
    drawn = root / "data" / "review" / "qwen2.5-coder-1.5b.drawn-labels.jsonl"
    monkeypatch.chdir(root)
    printed = subprocess.run([sys.executable, "scripts/review_halves.py", str(review), "--drawn", str(drawn),
                              "--rescored", "data/labels/qwen2.5-coder-1.5b.jsonl"], capture_output=True, text=True,
                             check=True, cwd=root).stdout
    assert ("| held-out | drawn (scorer_version 4) | 82 | 0 | 0 | 1 | 100.0 [85.8, 100.0] (n = 25) | "
            "93.2 [76.1, 98.3] (n = 26) |") in printed
    assert ("| held-out | rescored (scorer_version 6) | 82 | 1 | 0 | 0 | 100.0 [86.0, 100.0] (n = 26) | "
            "100.0 [86.0, 100.0] (n = 26) |") in printed
