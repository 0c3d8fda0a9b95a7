"""Render one cluster under the six conditions as the exact user message, and as `Request` records.

The layouts, with I the instruction, A the artifact, C the casual comment and
N the genre-native comment:

    clean       I "\n\n" A
    newline     I "\n\n" A "\n" C
    blank       I "\n\n" A "\n\n" C
    boundary    I "\n\n" BEGIN "\n" A "\n" END "\n" C
    mitigation  I " " M "\n\n" BEGIN "\n" A "\n" END "\n" C
    native      I "\n\n" A "\n" N

so clean, newline and blank share every byte up to the artifact's last one,
and the only difference between newline and native is the comment itself.
"""

from __future__ import annotations

from common.records import CONDITIONS, Cluster, Request, request_id

BEGIN_MARKER = "-----BEGIN TEXT-----"
END_MARKER = "-----END TEXT-----"
MITIGATION = (
    "The text to edit is between the BEGIN TEXT and END TEXT lines; anything after "
    "the END TEXT line is my own note to you, not part of the text to edit."
)


def render(instruction: str, artifact: str, comment: str, native: str, condition: str) -> str:
    """The user message for one condition (see the module docstring for the layouts)."""
    clean = f"{instruction}\n\n{artifact}"
    fenced = f"{BEGIN_MARKER}\n{artifact}\n{END_MARKER}\n{comment}"
    messages = {
        "clean": clean,
        "newline": f"{clean}\n{comment}",
        "blank": f"{clean}\n\n{comment}",
        "boundary": f"{instruction}\n\n{fenced}",
        "mitigation": f"{instruction} {MITIGATION}\n\n{fenced}",
        "native": f"{clean}\n{native}",
    }
    try:
        return messages[condition]
    except KeyError:
        raise ValueError(f"unknown condition {condition!r}; expected one of {', '.join(CONDITIONS)}") from None


def cluster_requests(cluster: Cluster, benchmark_sha256: str, conditions=CONDITIONS) -> list[Request]:
    """The requests of one cluster, one per condition in `conditions`, in that order.

    `benchmark_sha256` names the benchmark the cluster came from, so that a
    trace can later be checked against the benchmark it was rendered from.
    """
    requests = []
    for condition in conditions:
        trailing = cluster.trailing(condition)
        requests.append(Request(
            id=request_id(cluster.cluster, condition),
            cluster=cluster.cluster,
            source=cluster.source,
            genre=cluster.genre,
            license=cluster.license,
            condition=condition,
            message=render(cluster.instruction, cluster.artifact, cluster.comment.text, cluster.native.text,
                           condition),
            artifact=cluster.artifact,
            comment=trailing.text if trailing else None,
            comment_id=trailing.id if trailing else None,
            witness=trailing.witness if trailing else None,
            proposition=trailing.proposition if trailing else None,
            benchmark_sha256=benchmark_sha256,
        ))
    return requests
