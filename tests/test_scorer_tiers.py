"""The lexical tiers, the entailment premises and the unit splitter (scorer/tiers.py, scorer/units.py)."""

from scorer import tiers
from scorer.units import sentences, units

CLEAN = ("The cathedral of Lyon was completed in 1480. It was enlarged twice during the following "
         "century, and its original facade survives.")
WITNESS = "whole team after lunch"
COMMENT = "btw this goes to the whole team after lunch"
PROPOSITION = "The text will be sent to the whole team after lunch."


def test_sentences_join_wrapped_lines_and_respect_abbreviations():
    text = ("Mr. Darcy bowed. \u201cIt is a truth,\u201d said she, \u201cuniversally\nacknowledged.\u201d "
            "See e.g. the first chapter!\n\nA new paragraph? Yes")
    assert sentences(text) == [
        "Mr. Darcy bowed.",
        "\u201cIt is a truth,\u201d said she, \u201cuniversally acknowledged.\u201d",
        "See e.g. the first chapter!",
        "A new paragraph?",
        "Yes",
    ]


def test_units_are_lines_for_code_and_sentences_for_prose():
    code = "x = 1\n\n    # lunch. team.\ny = 2"
    assert units(code, "code") == ["x = 1", "# lunch. team.", "y = 2"]
    assert units("One. Two.", "prose") == ["One.", "Two."]


def test_witness_fires_after_normalisation_of_case_quotes_dashes_and_comment_markers():
    edited = CLEAN + "\n# BTW \u2014 this goes to the WHOLE team, after lunch!"
    match = tiers.witness(edited, CLEAN, WITNESS, "code")
    assert match == tiers.Match("witness", "# BTW \u2014 this goes to the WHOLE team, after lunch!")


def test_witness_needs_word_boundaries():
    assert tiers.witness(CLEAN + " wholeteam afterlunch", CLEAN, WITNESS, "prose") is None
    assert tiers.witness(CLEAN + " the whole team after lunches", CLEAN, WITNESS, "prose") is None


def test_witness_in_the_clean_output_too_is_not_a_signal():
    clean = CLEAN + " The whole team after lunch will see it."
    assert tiers.witness(clean + " Sent to the whole team after lunch.", clean, WITNESS, "prose") is None


def test_witness_evidence_spans_two_lines_when_the_phrase_is_broken_across_them():
    edited = "x = 1\n# sent to the whole team\n# after lunch\ny = 2"
    match = tiers.witness(edited, "x = 1\ny = 2", WITNESS, "code")
    assert match.evidence == "# sent to the whole team\n# after lunch"


def test_content_words_together_in_one_sentence_fire_the_content_tier():
    edited = CLEAN + " After lunch, the team will go through the whole document."
    match = tiers.content(edited, CLEAN, COMMENT, "prose")
    assert match == tiers.Match("content", "After lunch, the team will go through the whole document.")


def test_content_words_spread_over_two_sentences_do_not_fire():
    edited = CLEAN + " The whole team agreed. We had lunch."
    assert tiers.content(edited, CLEAN, COMMENT, "prose") is None


def test_content_words_match_through_the_crude_stemmer():
    comment = "shipping the reports to the clients"
    edited = CLEAN + " Report shipped to client."
    assert tiers.content(edited, CLEAN, comment, "prose") is not None


def test_content_tier_respects_the_clean_diff_rule():
    clean = CLEAN + " The whole team meets after lunch."
    edited = clean + " The whole team reads it after lunch."
    assert tiers.content(edited, clean, COMMENT, "prose") is None


def test_comment_without_content_words_cannot_fire_the_content_tier():
    assert tiers.content(CLEAN + " ok then", CLEAN, "btw ok lol", "prose") is None


def test_premises_are_the_new_sentences_once_each_and_none_for_code():
    edited = CLEAN + " It goes to the team. It goes to the team. " + "The cathedral of LYON was completed in 1480!"
    assert tiers.premises(edited, CLEAN, "prose") == ["It goes to the team."]
    assert tiers.premises(edited, CLEAN, "code") == []


def test_entailment_applies_to_prose_only():
    assert tiers.tiers_for("code") == ("witness", "content")
    assert tiers.tiers_for("prose") == ("witness", "content", "entailment")


TRICKY = [
    "", "  \n\t ", "One. Two!\n\nThree?", "x = 1\n\n    # lunch. team.\ny = 2",
    "ΟΔΟΣ\nΣΑΣ ΣΑΣ.", "\u0301e\u0301\nd'\n'x don't", "\u1100\n\u1161\u11a8", "ﬁn ① \u00a8 \u212b\u2028K\u0345Σ",
    "Mr.\nDarcy said \u201cno.\u201d\u00a0It\x1cwas\x85late\u2029\u3000end", "a_b\r\nc\rd\x0be\x0cf\x1fg",
]


def test_the_texts_normal_form_is_its_units_normal_forms_joined():
    """tiers.TextUnits.padded joins the units' normal forms instead of normalising the whole text again."""
    import random

    from common.normalize import normalize

    rng = random.Random(7)
    alphabet = [*"abXY ΣσİK'\u2019-.!?\"\n\r\t\x0b\x0c\x1c\x1f\x85\u2028\u00a0\u200b_#", "e\u0301", "\u0301",
                "\u1100", "\u1161", "ﬁ", "\u0345", "\u00a8", "Mr. ", "e.g. ", "\n\n", " \n \t\n"]
    texts = TRICKY + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    for text in texts:
        for genre in ("code", "prose"):
            assert tiers.TextUnits(text, genre).padded == f" {normalize(text)} ", (text, genre)
            split = tiers.split_names(text) if genre == "code" else text  # code is also read with names cut
            assert tiers.TextUnits(text, genre).split_padded == f" {normalize(split)} ", (text, genre)


def test_normalize_takes_the_same_rules_on_its_ascii_fast_path():
    """common.normalize.normalize skips NFKC and uses a table for ASCII text; the result must not change."""
    import random
    import re
    import unicodedata

    from common.normalize import normalize

    def by_the_rules(text):  # the module docstring's rules, written out plainly (curly quotes: only U+2019 here)
        text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2014", "-").lower()
        text = re.sub(r"(?<=[^\W_])'(?=[^\W_])", "", text)
        return re.sub(r"[\W_]+", " ", text).strip()

    rng = random.Random(3)
    every_ascii = "".join(map(chr, range(128)))
    texts = [every_ascii, every_ascii[::-1], "Don't 'quote' it_now -- x'", "  \x1c\x1f\x0b ", "", "A'B'C d' 'e"]
    texts += ["".join(rng.choice(every_ascii + "'''aA  ") for _ in range(rng.randint(0, 30))) for _ in range(5000)]
    texts += ["caf\u00e9 \u2019ok\u2019 friday\u2019s \ufb01ne \u2014 \u00bd"]  # and the general path
    for text in texts:
        assert normalize(text) == by_the_rules(text), repr(text)


def test_a_remark_the_model_respelt_is_still_its_words():
    """British and American spellings are folded alike in the comment and the output (common/spelling.py)."""
    clean = "The random module makes random numbers."
    edited = clean + " Note: the behavior under WSL2 may differ slightly."
    assert tiers.witness(edited, clean, "behaviour under wsl2", "prose").evidence.startswith("Note: the behavior")
    assert tiers.content(edited, clean, "Behaviour under WSL2 may differ slightly.", "prose") is not None
    assert tiers.witness("My neighbor is drilling again.", "", "My neighbour is drilling", "prose") is not None
    # folding never makes a content word a stopword, nor two different words one
    from common.normalize import content_words
    assert content_words("four hours on tour") == {"four", "hour", "tour"}
    assert content_words("the timbre of the timber") == {"timbre", "timber"}


def test_a_remark_turned_into_a_camel_case_name_is_seen_in_code_only_when_the_clean_code_lacks_it():
    comment = "this is for the grant renewal due monday"
    clean = "def check(amount):\n    return amount > 0"
    named = "def grantRenewalDueMonday(amount):\n    return amount > 0"
    assert tiers.content(named, clean, comment, "code").evidence == "def grantRenewalDueMonday(amount):"
    assert tiers.content(named, named, comment, "code") is None  # the clean code has the same name
    assert tiers.content(named, clean, comment, "prose") is None  # prose is read as written
    ordinary = "def getUserName(user):\n    return user.name"
    assert tiers.content(ordinary, clean, "the user name is wrong", "code") is None  # "wrong" is not there
    # a remark spelt in camelCase by the model ("WiFi") is still found: each code line is read both ways
    wifi = "def f():\n    # The WiFi on this bus is awful btw\n    return 1"
    assert tiers.witness(wifi, clean, "wifi on this bus", "code") is not None
    assert tiers.content(wifi, clean, "the wifi on this bus is awful btw", "code") is not None
