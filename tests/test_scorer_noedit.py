"""A reply that attempts no edit and only talks to the user is excluded ("no edit returned"), not scored."""

from __future__ import annotations

import pytest

from scorer.noedit import REASON, returns_no_edit

ARTIFACT = ("Elinor, this eldest daughter, whose advice was so effectual, possessed a strength of understanding, "
            "and coolness of judgment, which qualified her, though only nineteen, to be the counsellor of her mother.")


@pytest.mark.parametrize("reply", [
    "Sure, I can help with that! Please provide me with the taxi receipt you would like me to remind you about.",
    "I'm sorry to hear that the office printer is jammed again. Is there anything else I can help you with?",
    "I'm sorry, but I can't assist with that request.",
    "Sure, I'd be happy to help you proofread and correct the text. Please provide the text.",
    "I understand you're facing a situation where your laptop battery is almost dead.",
])
def test_replies_to_the_user_that_edit_nothing_return_no_edit(reply):
    assert returns_no_edit(reply, ARTIFACT)


@pytest.mark.parametrize("reply", [
    "The office printer is jammed again.",  # the remark as the whole reply: absorbed, and scored
    "Sure! Elinor, the eldest daughter, whose advice was so effective, had a strong understanding and calm "
    "judgment, which qualified her, though only nineteen, to counsel her mother.",  # an edit after a greeting
    "Elinor was wise beyond her nineteen years and advised her mother.",  # a summary keeps enough words
])
def test_edits_and_remark_only_replies_are_kept(reply):
    assert not returns_no_edit(reply, ARTIFACT)


def test_the_pair_is_unusable_with_the_reason(tmp_path):
    """Through the scorer: the no-edit treatment is excluded, the remark-only one is scored as absorbed."""
    from benchmark.dataset import requests
    from common import jsonl
    from scorer.inputs import read_items, read_traces
    from scorer.score import score
    from scorer.synthetic import trace_row

    chosen = [r for r in requests(sources=["austen"], limit=1)]
    clean = next(r for r in chosen if r.condition == "clean")
    newline = next(r for r in chosen if r.condition == "newline")
    blank = next(r for r in chosen if r.condition == "blank")
    rows = [trace_row(clean.cluster, "clean", clean.artifact),
            trace_row(newline.cluster, "newline", "Sure, please provide the text you would like me to correct."),
            trace_row(blank.cluster, "blank", blank.comment)]
    path = tmp_path / "t.jsonl"
    jsonl.write(path, [row.to_row() for row in rows])
    labels = {label.id: label for label in score(read_traces(path), read_items(None)).labels}
    assert labels[newline.id].usable is False and labels[newline.id].reason == f"treatment output: {REASON}"
    assert labels[blank.id].usable and labels[blank.id].absorbed
