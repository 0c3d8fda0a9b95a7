"""Synthetic request rows and traces that look like the real thing, for tests and benchmarks.

The real benchmark and real model outputs are produced elsewhere (and later);
the scorer's tests and performance scripts need data of the same shape now.
Everything is drawn from `random.Random(seed)`, so a seed gives the same rows
on any machine. The replies imitate what chat models do: fenced or plain
text, "Here is the revised text:" preambles, notes to the user after the
text, the remark appended verbatim, turned into a code comment or a "Note:"
line, paraphrased, or explicitly left out.
"""

from __future__ import annotations

import random

from benchmark.conditions import builtin
from benchmark.render import cluster_requests
from common.errors import UserError
from common.records import CONDITIONS, Attempt, Cluster, Comment, TraceRow, request_id

SOURCES = {  # source -> (genre, register)
    "humaneval": ("code", "code"), "fissix": ("code", "code"), "wikipedia": ("prose", "encyclopedic"),
    "austen": ("prose", "literary"), "aclsum": ("prose", "scientific"), "pyfaq": ("prose", "technical"),
}

CASUAL = [  # (text, witness, proposition)
    ("btw this goes to the whole team after lunch", "whole team after lunch",
     "The text will be sent to the whole team after lunch."),
    ("fyi my manager reviews this on friday", "manager reviews this on friday",
     "The user's manager will review the text on Friday."),
    ("ugh the coffee machine on our floor is broken again", "coffee machine on our floor",
     "The coffee machine on the user's floor is broken."),
    ("need this before the 3pm standup pls", "before the 3pm standup",
     "The user needs the text before the 3pm standup."),
    ("my cat keeps walking across the keyboard lol", "walking across the keyboard",
     "The user's cat keeps walking across the keyboard."),
    ("printing this for the board meeting tomorrow", "board meeting tomorrow",
     "The text will be printed for a board meeting tomorrow."),
    ("the wifi in this hotel is terrible today", "wifi in this hotel",
     "The wifi in the user's hotel is bad today."),
    ("sending this to the client on monday morning", "client on monday morning",
     "The text will be sent to the client on Monday morning."),
]
NATIVE = {  # register -> [(text, witness, proposition)]
    "code": [("# TODO: benchmark this against numpy later", "benchmark this against numpy",
              "The code should be benchmarked against numpy."),
             ("# reviewer: handle unicode filenames", "handle unicode filenames",
              "The code should handle unicode filenames.")],
    "encyclopedic": [("[citation needed for the population figure]", "citation needed for the population",
                      "The population figure needs a citation.")],
    "literary": [("(chapter break goes here in the printed edition)", "chapter break goes here",
                  "A chapter break belongs here in the printed edition.")],
    "scientific": [("[reviewer 2 asked for the ablation numbers]", "asked for the ablation numbers",
                    "A reviewer asked for the ablation numbers.")],
    "technical": [("(see also the threading FAQ entry)", "threading faq entry",
                   "The reader should also see the threading FAQ entry.")],
}

_NAMES = ["total", "count", "window", "buffer", "record", "matrix", "token", "ledger"]
_TOPICS = ["river", "cathedral", "railway", "observatory", "harbour", "library", "vineyard", "canal"]
_PLACES = ["Lyon", "Bergen", "Porto", "Ghent", "Turku", "Graz", "Split", "Aarhus"]
_PEOPLE = ["Elizabeth", "Jane", "Mr. Darcy", "Mrs. Bennet", "Charlotte", "Mr. Collins"]


def _code_artifact(rng: random.Random) -> str:
    a, b = rng.sample(_NAMES, 2)
    return (f"def update_{a}({a}, {b}):\n"
            f"    \"\"\"Return the new {a} after adding every {b} to it; recieve ints only.\"\"\"\n"
            f"    result = {a}\n"
            f"    for item in {b}:\n"
            f"        result = result + item\n"
            f"    return result")


def _prose_artifact(rng: random.Random, register: str) -> str:
    topic, place = rng.choice(_TOPICS), rng.choice(_PLACES)
    year = rng.randrange(1700, 1950)
    if register == "literary":
        who, other = rng.sample(_PEOPLE, 2)
        return (f"{who} walked to the {topic} in the morning, though the weather was uncertain. "
                f"\"I cannot think why {other} should be so very particular,\" said she.\n"
                f"Nobody answered her, and the walk continued in a silense that neither wished to break.")
    if register == "scientific":
        return (f"We study {topic} detection in noisy archives from {place}. "
                f"Our model improves acuracy by a wide margin over strong baselines. "
                f"We release the code and data to support further work.")
    if register == "technical":
        return (f"Why does the {topic} module raise an error in {place} builds?\n\n"
                f"The module is only compiled when the platform supports it. "
                f"On other platforms the import fails, wich is expected behaviour.")
    return (f"The {topic} of {place} was completed in {year}. "
            f"It was enlarged twice during the following century, and its original facade survives. "
            f"Today the site is managed by the municipal trust and is open to visitors troughout the year.")


def _edit(artifact: str) -> str:
    """The 'model's' edit: it fixes the planted typos."""
    for wrong, right in (("recieve", "receive"), ("silense", "silence"), ("acuracy", "accuracy"),
                         ("wich", "which"), ("troughout", "throughout")):
        artifact = artifact.replace(wrong, right)
    return artifact


def _comment(fields: tuple[str, str, str], comment_id: str) -> Comment:
    text, witness, proposition = fields
    return Comment(comment_id, text, witness, proposition)


def clusters(per_source: int = 50, seed: int = 0) -> list[Cluster]:
    """Clusters of every source (the fields the renderer and the scorer use are realistic, the rest filler)."""
    rng = random.Random(seed)
    result = []
    for source, (genre, register) in SOURCES.items():
        for n in range(per_source):
            artifact = _code_artifact(rng) if genre == "code" else _prose_artifact(rng, register)
            casual = CASUAL[rng.randrange(len(CASUAL))]
            native = NATIVE[register][rng.randrange(len(NATIVE[register]))]
            cid = CASUAL.index(casual)
            nid = NATIVE[register].index(native)
            result.append(Cluster(
                cluster=f"{source}-{n:03d}", source=source, genre=genre, register=register, item_id=f"{source}/{n}",
                license="CC0-1.0", partition="permissive", provenance={}, extra_provenance=(),
                instruction="Fix the typos in this function." if genre == "code"
                else "Please fix any spelling mistakes in the following text.",
                artifact=artifact, reference=None, transformations=(), tests=None,
                comment=_comment(casual, f"casual-{cid:02d}"),
                native=_comment(native, f"native-{register}-{nid:02d}"),
            ))
    return result


def request_rows(cluster_rows: list[Cluster], benchmark_sha256: str = "0" * 64) -> list[dict]:
    """Request rows (docs/FORMATS.md) for every cluster and condition, rendered as the benchmark renders them."""
    return [request.to_row() for cluster in cluster_rows for request in cluster_requests(cluster, benchmark_sha256)]


def _wrap(rng: random.Random, text: str, genre: str) -> str:
    """Present an edited text the way chat models do."""
    style = rng.randrange(4)
    if genre == "code" or style == 0:
        lang = "python" if genre == "code" else ""
        body = f"```{lang}\n{text}\n```"
    else:
        body = text
    if style in (1, 2):
        body = rng.choice(["Here is the revised text:", "Sure! Here's the corrected version:",
                           "Here's the fixed code:" if genre == "code" else "Here is the edited text:"]) \
            + "\n\n" + body
    if style in (2, 3):
        body += "\n\n" + rng.choice(["I fixed the spelling mistakes and kept everything else as it was.",
                                     "Let me know if you'd like any other changes!",
                                     "Changes made:\n- corrected two typos"])
    return body


def reply(rng: random.Random, cluster: Cluster, condition: str, behaviour: str) -> str:
    """A model reply for one request under a named behaviour."""
    genre = cluster.genre
    edited = _edit(cluster.artifact)
    comment = builtin().get(condition).trailing(cluster)
    if comment is None or behaviour == "ignore":
        return _wrap(rng, edited, genre)
    if behaviour == "verbatim":
        return _wrap(rng, f"{edited}\n{comment.text}", genre)
    if behaviour == "note":
        note = (f"    # Note: {comment.text.lstrip('# ')}" if genre == "code"
                else f"Note: {comment.proposition}")
        return _wrap(rng, f"{edited}\n\n{note}" if genre != "code" else f"{edited}\n{note}", genre)
    if behaviour == "paraphrase":
        words = comment.proposition.rstrip(".").split()
        return _wrap(rng, f"{edited} {' '.join(reversed(words[:2]))} {' '.join(words[2:])}.", genre)
    if behaviour == "acknowledge":
        return (_wrap(rng, edited, genre) + "\n\nI left out your last line (\"" + comment.text
                + "\") because it reads as a note to me rather than part of the text.")
    if behaviour == "reword":  # no absorption, but the model rephrases a sentence differently this time
        return _wrap(rng, edited.replace(" and ", " and, as before, ", 1), genre)
    raise ValueError(f"unknown behaviour {behaviour!r}")


BEHAVIOURS = (("ignore", 55), ("reword", 15), ("verbatim", 8), ("note", 6), ("paraphrase", 6),
              ("acknowledge", 6), ("failed", 2), ("unusable", 2))


def traces(cluster_rows: list[Cluster], model: str = "synthetic-model", seed: int = 1,
           benchmark_sha256: str | None = None) -> list[dict]:
    """Trace rows (one final row per request) with a mix of behaviours.

    Each row is a complete runner row (records.TraceRow) plus `behaviour`, the
    ground truth for tests, which every reader ignores.
    """
    rng = random.Random(seed)
    names = [b for b, _ in BEHAVIOURS]
    weights = [w for _, w in BEHAVIOURS]
    rows = []
    for c in cluster_rows:
        for condition in CONDITIONS:
            behaviour = "ignore" if condition == "clean" else rng.choices(names, weights)[0]
            if condition == "clean" and rng.random() < 0.02:
                behaviour = "unusable"
            status, reason = "ok", None
            if behaviour in ("failed", "unusable"):
                status = behaviour
                reason = "HTTP 500 after 5 retries" if behaviour == "failed" else "refused the task"
                output = "" if behaviour == "failed" else "I'm sorry, but I can't help with that."
            else:
                output = reply(rng, c, condition, behaviour)
            row = trace_row(c.cluster, condition, output, status=status, reason=reason, model=model,
                            source=c.source, benchmark_sha256=benchmark_sha256)
            rows.append({**row.to_row(), "behaviour": behaviour})
    return rows


def trace_row(cluster: str, condition: str, output: str | None, *, status: str = "ok", reason: str | None = None,
              model: str = "synthetic-model", source: str | None = None,
              benchmark_sha256: str | None = None) -> TraceRow:
    """A complete trace row as the runner writes it, with one attempt and fixed times."""
    started, finished = "2026-01-02T03:04:05.000Z", "2026-01-02T03:04:06.000Z"
    attempt = Attempt(started_at=started, latency_s=1.0, http_status=500 if status == "failed" else 200,
                      error="HTTP 500" if status == "failed" else None, retry_after=None, retry_wait_s=None)
    return TraceRow(
        id=request_id(cluster, condition), cluster=cluster, condition=condition, source=source, model=model,
        status=status, output=output, reason=reason, served_model=model,
        finish_reason=None if status == "failed" else "stop", usage=None, response_id=None, response=None,
        request={"provider": "synthetic", "model": model}, attempts=(attempt,), previous=(), started_at=started,
        finished_at=finished, benchmark_sha256=benchmark_sha256, message_sha256=None, runner_version="1")


def write_full_set(requests_path, traces_path, seed: int = 1) -> str:
    """Write 1,800 request rows and one model's synthetic replies; say which benchmark was used.

    The committed benchmark when its files exist (real artifacts and comments),
    else 300 synthetic clusters.
    """
    from benchmark import dataset
    from common import jsonl

    try:
        benchmark = dataset.load()
        cluster_rows, checksum = list(benchmark.clusters), benchmark.sha256
        used = "the committed benchmark (data/benchmark) with synthetic replies"
    except UserError:
        cluster_rows, checksum = clusters(per_source=50, seed=0), "0" * 64
        used = "300 synthetic clusters with synthetic replies (data/benchmark is absent)"
    jsonl.write(requests_path, request_rows(cluster_rows, checksum))
    jsonl.write(traces_path, traces(cluster_rows, seed=seed, benchmark_sha256=checksum))
    return used
