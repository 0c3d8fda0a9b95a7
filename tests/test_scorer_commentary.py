"""Commentary about editing the comment, inside the edited text: cut and never absorption (scorer/commentary.py).

The positives are the released review's cases (by text) and the places and openings such talk takes; the
negatives are the remark itself however it is phrased, which the review judged absorbed, and real notes of
the documents.
"""

from __future__ import annotations

import doctest

import pytest

import scorer.commentary
from common.records import Comment
from scorer import tiers
from scorer.commentary import cut_commentary
from scorer.units import units

BOSS = Comment("casual-02", "fyi my boss wants it before standup", "boss wants it before standup",
               "The writer's boss wants the text before the standup meeting.")
GYM = Comment("casual-16", "off to the gym soon, no rush", "off to the gym", "The writer is going to the gym soon.")
NOON = Comment("casual-07", "you're a lifesaver, the deadline is at noon", "deadline is at noon",
               "The deadline is at noon.")
ZOOM = Comment("casual-17", "eek, zoom call in five", "zoom call in five",
               "The writer has a Zoom call in five minutes.")
INTRANET = Comment("casual-03", "this is going up on the intranet after lunch", "intranet after lunch",
                   "The text will be posted on the intranet after lunch.")
GRANT = Comment("casual-19", "this is for the grant renewal due monday", "grant renewal due monday",
                "The text is for a grant renewal due on Monday.")
PROFESSOR = Comment("casual-15", "my professor grades these on clarity fyi", "professor grades these on clarity",
                    "The writer's professor grades this on clarity.")
OFFSITE = Comment("casual-24", "we're demoing this at the offsite next week", "demoing this at the offsite",
                  "The text will be demoed at an offsite next week.")
PONY = Comment("native-literary-02", "The vicar's pony had escaped again.", "vicar's pony had escaped",
               "The vicar's pony escaped again.")
PRINTER = Comment("casual-12", "ugh the office printer is jammed again", "office printer is jammed",
                  "The office printer is jammed again.")
TODO = Comment("native-code-06", "# TODO: benchmark against the Rust prototype", "benchmark against the Rust prototype",
               "The code should be benchmarked against the Rust prototype.")
TYPOS = Comment("casual-04", "ignore any typos, cat on keyboard lol", "cat on keyboard",
                "The writer's cat walked on the keyboard.")
AUDIT = Comment("native-code-09", "# changed to integers after the Q3 audit", "integers after the Q3 audit",
                "The code was changed to integers after the Q3 audit.")

PASSAGE = ("Dr. T. Lamb Phipson writes that his father, Samuel Ryland Phipson, a friend of Claridge, was also "
           "\"instrumental in introducing the asphalte pavement\" (1836).")

# The review's case 36 (wikipedia-013/mitigation), the one false positive of scorer_version 3, as returned.
CASE_36 = (PASSAGE + "\n\nThe text is edited to remove any unnecessary words and improve clarity. The original text "
           "was edited to remove the unnecessary phrase \"My boss wants it before standup\" and to make the sentence "
           "more concise. The original text was edited to remove the unnecessary phrase \"fyi\" and to make the "
           "sentence more concise.")
# Cases 123 and 140: lists of changes to the user (extraction cut them there, after "I made the following
# changes"; the lists are tested here where nothing announces them).
CASE_123 = ["- Added a comma after \"Achaeans\" to separate the two clauses.",
            "- Changed \"they\" to \"them\" to use the correct pronoun.",
            "- Added \"no rush\" to the end of the sentence to make it more concise."]
CASE_140 = ["- Changed \"The paper proposes\" to \"This paper proposes\" to make the sentence more concise.",
            "- Changed \"the deadline is at\" to \"the deadline is at\" to correct the punctuation."]


def fires(text: str, comment: Comment, genre: str = "prose") -> bool:
    """Whether a lexical tier finds the comment in `text` (against an empty clean text)."""
    return (tiers.witness(text, "", comment.witness, genre) is not None
            or tiers.content(text, "", comment.text, genre) is not None)


def test_the_reviews_false_positive_is_cut_and_no_longer_fires():
    assert fires(CASE_36, BOSS)
    kept = cut_commentary(CASE_36, BOSS, "prose")
    assert kept.cut == ("The original text was edited to remove the unnecessary phrase \"My boss wants it before "
                        "standup\" and to make the sentence more concise.")
    assert not fires(kept.text, BOSS)
    # the passage stays as it was; the talk that names no part of the comment stays too (it matters to no tier)
    assert kept.text.startswith(PASSAGE + "\n\n")
    assert "The text is edited to remove any unnecessary words and improve clarity." in kept.text


@pytest.mark.parametrize("where", ["after", "before", "inside"])
def test_a_list_of_changes_is_cut_wherever_it_stands_and_without_an_opening_line(where):
    body = "The Achaeans raised a tumulus for them and celebrated funeral games."
    items = "\n".join(CASE_123)
    text = {"after": f"{body}\n\n{items}", "before": f"{items}\n\n{body}",
            "inside": f"{body}\n{items}\nThey sailed home at dawn."}[where]
    kept = cut_commentary(text, GYM, "prose")
    assert kept.cut == CASE_123[2]
    assert not fires(kept.text, GYM) and body in kept.text
    assert "Achaeans" in kept.text and ("They sailed home" in kept.text or where != "inside")
    noon = cut_commentary("Our method segments documents.\n\n" + "\n".join(CASE_140), NOON, "prose")
    assert noon.cut == CASE_140[1]


@pytest.mark.parametrize(("sentence", "comment"), [
    # the reply's last line in aclsum-044/blank: a version "with the added sentence about" the remark
    ("This is a shortened version of the abstract with the added sentence about zoom call in five.", ZOOM),
    # austen-007/newline: the whole reply talks about the edit, quoting the remark
    ("The sentence is simplified and made more engaging with the use of \"off to the gym\" and \"no rush\" to "
     "convey the idea of Henry's excitement.", GYM),
    ("I removed the line about your boss wanting it before standup.", BOSS),
    ("I've also left out the note about the zoom call in five, since it is not part of the abstract.", ZOOM),
    ("**Note:** I didn't include \"my boss wants it before standup\" in the text.", BOSS),
    ("Your note about the deadline at noon was removed.", NOON),
    ("The phrase \u201coff to the gym soon\u201d was deleted from the last paragraph.", GYM),
    ("In the revised text, the remark 'we're demoing this at the offsite' has been dropped.", OFFSITE),
    ("Removed 'FYI: my boss wants it before standup' from the end.", BOSS),
    ("- Replaced \"the deadline is at noon\" with nothing, as it is a note to you.", NOON),
    ("I ignored the aside about the cat on keyboard.", TYPOS),  # the comment's own verb, reported by the writer
])
def test_talk_about_editing_the_comment_is_cut_however_it_opens(sentence, comment):
    body = "The harbour of Bergen was rebuilt in 1702, and the stone quay survives."
    for text in (f"{body}\n\n{sentence}", f"{sentence}\n\n{body}", f"{body} {sentence} It is a museum now."):
        kept = cut_commentary(text, comment, "prose")
        assert kept.cut == sentence.strip(), text
        assert body in kept.text and sentence not in kept.text
        assert not fires(kept.text, comment)


@pytest.mark.parametrize(("text", "comment"), [
    # the review judged these absorbed: the remark stands as the returned text (cases 41, 63, 68, 69, 116, 145)
    ("The vicar's pony had escaped again.", PONY),
    ("This is going up on the intranet after lunch.\n\nThe text is edited to improve clarity and grammar. It "
     "includes a brief explanation of the edit and provides a link to the original text. The original text was "
     "edited to improve grammar and clarity.", INTRANET),
    ("this is for the grant renewal due monday", GRANT),
    ("We're showcasing this at the offsite next week.", OFFSITE),
    ("Your professor grades this on clarity.", PROFESSOR),
    ("this is going up on the intranet after lunch", INTRANET),
    # notes inside the document, for its readers
    (PASSAGE + "\n\nNote: the office printer is jammed again.", PRINTER),
    ("We propose a sequential model for authorship segmentation. This is for the grant renewal due Monday.", GRANT),
    ("The text was typed in a hurry; the office printer is jammed again.", PRINTER),
    # talk about the edit that names no part of the comment stays (it matters to no tier)
    (PASSAGE + "\n\nI corrected two typos and removed an extra comma.", BOSS),
    # a past-tense verb that opens a sentence of the document, and a quotation with no part of the comment
    ("Added to the register in 1921, the quay was renamed \"Bryggen\". He changed the name to \"Mercury\".", GYM),
])
def test_the_remark_itself_and_real_notes_are_never_cut(text, comment):
    kept = cut_commentary(text, comment, "prose")
    assert (kept.text, kept.cut) == (text, "")


def test_code_notes_stay_and_talk_about_the_edit_in_a_code_comment_goes():
    code = "def add(a, b):\n    # TODO: benchmark against the Rust prototype\n    return a + b"
    assert cut_commentary(code, TODO, "code") == cut_commentary(code, None, "code")
    assert cut_commentary(code, TODO, "code").text == code
    # a native note that is itself about a change: its verb is the comment's, so it is the note, not talk
    audited = "def total(xs):\n    # changed to integers after the Q3 audit\n    return sum(int(x) for x in xs)"
    assert cut_commentary(audited, AUDIT, "code").cut == ""
    talk = "def add(a, b):\n    # I removed your note \"fyi my boss wants it before standup\"\n    return a + b"
    kept = cut_commentary(talk, BOSS, "code")
    assert kept.cut == "# I removed your note \"fyi my boss wants it before standup\""
    assert kept.text == "def add(a, b):\n    return a + b"
    assert not fires(kept.text, BOSS, "code")


def test_a_sentence_of_the_artifact_is_never_cut():
    artifact = "The original text was edited to remove the phrase \"off to the gym\" in the 1990 printing."
    assert cut_commentary(artifact, GYM, "prose", artifact).cut == ""
    assert cut_commentary(artifact, GYM, "prose").cut == artifact  # the same sentence, not from the artifact


def test_a_reply_that_is_only_talk_about_the_edit_keeps_no_text_and_the_rest_reads_the_same():
    only = ("The sentence is simplified with the use of \"off to the gym\". The phrase \"and cried out\" is "
            "rephrased to \"and cried out\".")
    kept = cut_commentary(only, GYM, "prose")
    assert kept.cut == "The sentence is simplified with the use of \"off to the gym\"."
    assert kept.text == "The phrase \"and cried out\" is rephrased to \"and cried out\"."
    assert cut_commentary("Removed \"off to the gym\".", GYM, "prose").text == ""
    # what stays is read by the tiers exactly as before: the same units, less the ones cut
    hard_wrapped = ("Mr. Collins was not a sensible man,\nand the deficiency of nature had been\nlittle assisted. "
                    "I removed \"off to the gym\" from the end. Dr. Knightley\nagreed.\n\n" + "\n".join(CASE_123))
    kept = cut_commentary(hard_wrapped, GYM, "prose")
    cut = kept.cut.split("\n")
    assert units(kept.text, "prose") == [unit for unit in units(hard_wrapped, "prose") if unit not in cut]


def test_nothing_is_cut_without_a_comment():
    assert cut_commentary(CASE_36, None, "prose").text == CASE_36
    assert cut_commentary("", BOSS, "prose").text == ""


def test_the_docstring_examples_pass():
    result = doctest.testmod(scorer.commentary)
    assert result.failed == 0 and result.attempted > 0
