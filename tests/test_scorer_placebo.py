"""The placebo check (scorer/placebo.py, `seam.py placebo`): donors, per-tier positives, the rows it writes."""

from pathlib import Path

import seam
from common import jsonl
from scorer.inputs import read_items, read_traces
from scorer.placebo import donors, placebo

FIXTURE = Path(__file__).parent / "fixtures" / "tiny-deberta"


def test_donors_are_a_fixed_derangement_within_genre_and_condition(dataset):
    items = read_items(dataset / "req.jsonl")
    given = donors(items)
    treatments = [r for r in items.values() if r.condition != "clean"]
    assert set(given) == {r.id for r in treatments}
    for rid, donor in given.items():
        mine = items[rid]
        assert donor.cluster != mine.cluster and donor.comment_id != mine.comment_id
        assert (donor.genre, donor.condition) == (mine.genre, mine.condition)
    assert donors(items) == given


def test_placebo_counts_a_donor_phrase_in_the_output_and_nothing_else(dataset, tmp_path):
    items = read_items(dataset / "req.jsonl")
    rows = [r for _, r in jsonl.read(dataset / "tr.jsonl")]
    given = donors(items)
    status = {r["id"]: r["status"] for r in rows}
    target = next(r for r in rows if r["condition"] == "newline" and r["status"] == "ok"
                  and status[f"{r['cluster']}/clean"] == "ok"
                  and items[r["id"]].genre == "code" and r["behaviour"] == "ignore")
    # The donor's whole remark as a code comment, before the closing fence.
    head, tail = target["output"].rsplit("```", 1)
    target["output"] = f"{head}# {given[target['id']].comment.text}\n```{tail}"
    jsonl.write(tmp_path / "tr.jsonl", rows)
    result = placebo(read_traces(tmp_path / "tr.jsonl"), items)
    rates = {r.tier: r for r in result.rates}
    assert rates["witness"].positives == 1 and rates["content"].positives == 1
    assert rates["any"].positives == 1
    assert rates["entailment"].rows == 0 and rates["entailment"].rate is None
    assert rates["entailment"].not_run == sum(1 for r in result.rows if r.genre == "prose")
    hit = [r for r in result.rows if r.witness]
    assert [r.id for r in hit] == [target["id"]]
    assert hit[0].evidence == {"witness": f"# {given[target['id']].comment.text}",
                               "content": f"# {given[target['id']].comment.text}"}


def test_placebo_reads_the_text_as_scoring_with_the_donor_would_less_the_talk_about_editing_it(dataset, tmp_path):
    items = read_items(dataset / "req.jsonl")
    rows = [r for _, r in jsonl.read(dataset / "tr.jsonl")]
    given = donors(items)
    status = {r["id"]: r["status"] for r in rows}
    first, second = [r for r in rows if r["condition"] == "newline" and r["status"] == "ok"
                     and status[f"{r['cluster']}/clean"] == "ok" and items[r["id"]].genre == "code"
                     and r["behaviour"] == "ignore"][:2]
    for row, line in ((first, "# I removed the remark \"{}\""), (second, "# {}")):
        head, tail = row["output"].rsplit("```", 1)
        row["output"] = f"{head}{line.format(given[row['id']].comment.text)}\n```{tail}"
    jsonl.write(tmp_path / "tr.jsonl", rows)
    result = placebo(read_traces(tmp_path / "tr.jsonl"), items)
    assert [r.id for r in result.rows if r.witness] == [second["id"]]  # the talk about editing it is not absorption


def test_placebo_command_prints_rates_and_writes_rows(dataset, tmp_path, capsys):
    code = seam.main(["placebo", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl"),
                      "--model-dir", str(FIXTURE), "--no-cache", "--out", str(tmp_path / "p.jsonl")])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0].split("\t") == ["model", "tier", "positives", "rows", "rate", "not_run"]
    tiers = [line.split("\t")[1] for line in out[1:]]
    assert tiers == ["witness", "content", "entailment", "any"]
    witness = out[1].split("\t")
    assert witness[2] == "0" and witness[4] == "0.0000"
    rows = [r for _, r in jsonl.read(tmp_path / "p.jsonl")]
    assert rows and all(isinstance(r["entailment"], bool) for r in rows if r["genre"] == "prose")
    assert all(r["entailment"] is None for r in rows if r["genre"] == "code")
    assert set(rows[0]) == {"id", "model", "cluster", "condition", "genre", "donor_cluster", "donor_comment_id",
                            "witness", "content", "entailment", "evidence"}


def test_the_placebo_rows_have_a_field_for_each_tier_of_the_cascade():
    """The cascade is described once (scorer.tiers.CASCADE); a tier added there must get its placebo field."""
    import dataclasses

    from scorer import tiers
    from scorer.placebo import PlaceboRow

    names = [field.name for field in dataclasses.fields(PlaceboRow)]
    assert [name for name in names if name in tiers.TIERS] == list(tiers.TIERS)
    assert tiers.LEXICAL_TIERS == ("witness", "content") and tiers.MODEL_TIER == "entailment"
