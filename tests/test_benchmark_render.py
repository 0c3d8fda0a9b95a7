import pytest

from benchmark.conditions import builtin
from benchmark.render import BEGIN_MARKER, END_MARKER, cluster_requests
from common.records import CONDITIONS, Cluster, Request

MITIGATION = builtin().get("mitigation").sentence


def render(instruction: str, artifact: str, comment: str, native: str, condition: str) -> str:
    """The message of one built-in condition, given both comments (as benchmark.render.cluster_requests does)."""
    chosen = builtin().get(condition)
    return chosen.render(instruction, artifact, {"none": None, "casual": comment, "native": native}[chosen.pool])

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
    from common.errors import UserError

    with pytest.raises(UserError, match="condition 'sideways' is not defined"):
        render(INSTRUCTION, ARTIFACT, COMMENT, NATIVE, "sideways")


def test_cluster_requests_carry_the_trailing_comment_of_each_condition():
    cluster = Cluster.from_row({
        "cluster": "wikipedia-001", "source": "wikipedia", "genre": "prose", "register": "encyclopedic",
        "item_id": "Lantern", "license": "CC-BY-SA-3.0", "partition": "sharealike", "provenance": {},
        "extra_provenance": [], "instruction": INSTRUCTION, "artifact": ARTIFACT, "reference": None,
        "transformations": [], "tests": None,
        "comment": {"id": "casual-01", "text": COMMENT, "witness": "friday's newsletter", "proposition": "p"},
        "native": {"id": "native-encyclopedic-04", "text": NATIVE, "witness": "lantern festival", "proposition": "q"},
    }, "test")
    requests = {r.condition: r for r in cluster_requests(cluster, "abc")}
    assert list(requests) == list(CONDITIONS) and all(isinstance(r, Request) for r in requests.values())
    assert requests["clean"].comment is None and requests["clean"].witness is None
    assert requests["newline"].comment_id == "casual-01" and requests["newline"].comment == COMMENT
    assert requests["native"].witness == "lantern festival"
    assert requests["boundary"].id == "wikipedia-001/boundary"
    assert requests["mitigation"].message == render(INSTRUCTION, ARTIFACT, COMMENT, NATIVE, "mitigation")
    assert all(r.benchmark_sha256 == "abc" and r.artifact == ARTIFACT for r in requests.values())
    for request in requests.values():  # each is a valid request row, as a file of them is read back
        assert Request.from_row(request.to_row(), "test") == request
    assert [r.condition for r in cluster_requests(cluster, "abc", ("native", "clean"))] == ["native", "clean"]
