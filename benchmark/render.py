"""Render one cluster under its conditions as the exact user message, and as `Request` records.

The layouts are the conditions' definitions (benchmark/conditions.py): the six
built-in ones in benchmark/conditions.toml, with I the instruction, A the
artifact, C the casual comment and N the genre-native comment,

    clean       I "\\n\\n" A
    newline     I "\\n\\n" A "\\n" C
    blank       I "\\n\\n" A "\\n\\n" C
    boundary    I "\\n\\n" BEGIN "\\n" A "\\n" END "\\n" C
    mitigation  I " " M "\\n\\n" BEGIN "\\n" A "\\n" END "\\n" C
    native      I "\\n\\n" A "\\n" N

so clean, newline and blank share every byte up to the artifact's last one,
and the only difference between newline and native is the comment itself; and
any a user's condition file adds (`conditions`, a `ConditionSet`).
"""

from __future__ import annotations

from benchmark.conditions import ConditionSet, builtin
from benchmark.replies import Replies
from common.records import Cluster, Request, request_id

_BOUNDARY = builtin().get("boundary")
BEGIN_MARKER = _BOUNDARY.open  # "-----BEGIN TEXT-----"
END_MARKER = _BOUNDARY.close  # "-----END TEXT-----"


def cluster_requests(cluster: Cluster, benchmark_sha256: str, conditions=None,
                     defined: ConditionSet | None = None, replies: Replies | None = None) -> list[Request]:
    """The requests of one cluster, one per condition named in `conditions` (default: every condition of
    `defined`, itself the built-ins by default), in that order.

    `benchmark_sha256` names the benchmark the cluster came from, so that a
    trace can later be checked against the benchmark it was rendered from.
    A later-turn condition that holds the model's own reply takes it from
    `replies` (`--replies TRACE`); where the reply is missing or unusable the
    request is left out, and `replies` records why.
    """
    defined = defined or builtin()
    requests = []
    for name in conditions or defined.names:
        condition = defined.get(name)
        conversation = defined.conversation(name, cluster, replies)
        if conversation is None:
            continue
        trailing = condition.trailing(cluster)
        requests.append(Request(
            id=request_id(cluster.cluster, name),
            cluster=cluster.cluster,
            source=cluster.source,
            genre=cluster.genre,
            license=cluster.license,
            condition=name,
            message=conversation.message,
            artifact=cluster.artifact,
            comment=trailing.text if trailing else None,
            comment_id=trailing.id if trailing else None,
            witness=trailing.witness if trailing else None,
            proposition=trailing.proposition if trailing else None,
            benchmark_sha256=benchmark_sha256,
            system=conversation.system,
            earlier=conversation.earlier or None,
            reply_model=replies.model if condition.needs_replies and replies is not None else None,
        ))
    return requests
