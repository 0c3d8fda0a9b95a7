import pytest

from benchmark.render import BEGIN_MARKER, CONDITIONS, END_MARKER, MITIGATION, render, request_rows

INSTRUCTION = "Fix the spelling mistakes in this text."
ARTIFACT = "The comittee met on tuesday.\nIt adjourned early."
COMMENT = "btw this goes out with friday's newsletter"
NATIVE = "A lantern festival marks the anniversary each October."


def messages():
    return {c: render(INSTRUCTION, ARTIFACT, COMMENT, NATIVE, c) for c in CONDITIONS}


def test_clean_newline_blank_share_every_byte_through_the_artifact():
    m = messages()
    through = m["clean"]
    assert through.endswith(ARTIFACT)
    assert m["newline"] == through + "\n" + COMMENT
    assert m["blank"] == through + "\n\n" + COMMENT
    assert m["native"] == through + "\n" + NATIVE


def test_boundary_fences_the_artifact_and_leaves_the_comment_outside():
    m = messages()
    body = m["boundary"].split("\n\n", 1)[1]
    assert body == f"{BEGIN_MARKER}\n{ARTIFACT}\n{END_MARKER}\n{COMMENT}"
    assert MITIGATION not in m["boundary"]


def test_mitigation_adds_the_instruction_before_the_markers_only():
    m = messages()
    head, fenced = m["mitigation"].split("\n\n", 1)
    assert head == f"{INSTRUCTION} {MITIGATION}"
    assert fenced == m["boundary"].split("\n\n", 1)[1]


def test_unknown_condition_is_rejected():
    with pytest.raises(ValueError, match="unknown condition"):
        render(INSTRUCTION, ARTIFACT, COMMENT, NATIVE, "sideways")


def test_request_rows_carry_the_trailing_comment_of_each_condition():
    cluster = {
        "cluster": "wikipedia-001", "source": "wikipedia", "genre": "prose", "license": "CC-BY-SA-3.0",
        "instruction": INSTRUCTION, "artifact": ARTIFACT,
        "comment": {"id": "casual-01", "text": COMMENT, "witness": "friday's newsletter", "proposition": "p"},
        "native": {"id": "native-encyclopedic-04", "text": NATIVE, "witness": "lantern festival", "proposition": "q"},
    }
    rows = {r["condition"]: r for r in request_rows(cluster, "abc")}
    assert list(rows) == list(CONDITIONS)
    assert rows["clean"]["comment"] is None and rows["clean"]["witness"] is None
    assert rows["newline"]["comment_id"] == "casual-01"
    assert rows["native"]["witness"] == "lantern festival"
    assert rows["boundary"]["id"] == "wikipedia-001/boundary"
    assert all(r["benchmark_sha256"] == "abc" for r in rows.values())
