"""Verify the committed benchmark: counts, checksums, licences, collisions and layouts.

Every rule here is one the rest of the kit relies on; `seam.py check` runs them
all and reports every broken one (file and line), not just the first. The
layouts are checked for every condition defined, the built-in six and those of
a condition file (`seam.py check --conditions FILE`) alike: each message holds
the artifact's bytes verbatim, once, where the layout puts it, and ends as the
layout says; no marker line occurs in (or can be taken for a line of) the
cluster's texts or comment; the comment collides with no marker or added
sentence, as it may not with the instruction and artifact; and each declared
byte-identity (`same_prefix_as`, `same_suffix_as`) holds. A condition marked by a
rule (`marking`) has these checked on the layout the rule starts from (the paste
rule's pick, or the message the guard reads); where the guard's markers land is
what the guard study measures, so the summary counts the messages it marked, those
exactly as the fixed layout, and those whose artifact it cut.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmark.collisions import cluster_texts, collisions, marker_collisions
from benchmark.comments import HERE as COMMENTS_DIR
from benchmark.comments import casual_pool, native_pools
from benchmark.conditions import Condition, ConditionSet, builtin
from benchmark.dataset import DATA_DIR, PARTITIONS, checksum, partition_files
from benchmark.select import PER_SOURCE, SEED
from benchmark.sources import SOURCES
from common import jsonl
from common.errors import UserError
from common.jsonl import parse_lines
from common.records import Cluster, Comment, shown
from guard.mark import PASTE_RULE_BREAKS, PASTE_RULE_CHARS, paste_rule_marks

LICENSE_PARTITION = {
    "MIT": "permissive", "PSF-2.0": "permissive", "CC-BY-4.0": "permissive",
    "LicenseRef-public-domain": "permissive",
    "CC-BY-SA-3.0": "sharealike", "CC-BY-SA-4.0": "sharealike",
    "CC-BY-NC-SA-3.0": "noncommercial",
}
CLUSTER_FIELDS = frozenset(f.name for f in dataclasses.fields(Cluster))
COMMENT_FIELDS = frozenset(f.name for f in dataclasses.fields(Comment))
MANIFEST = "MANIFEST.json"
MANIFEST_KEYS = ("seed", "per_source", "benchmark_sha256", "files", "counts", "selection", "comment_pools", "inputs")


@dataclass
class CheckResult:
    problems: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)


def check(data_dir: Path = DATA_DIR, conditions: ConditionSet | None = None) -> CheckResult:
    """Every rule over the committed files, the layouts under each condition of `conditions` (default: the
    built-ins); a line that is not JSON at all stops it (`UserError`)."""
    conditions = conditions or builtin()
    result = CheckResult()
    files = partition_files(data_dir)
    sha256 = checksum(files)  # of the very bytes checked below
    clusters = []
    counts = {}
    for partition, (path, data) in zip(PARTITIONS, files, strict=True):
        counts[partition] = 0
        for where, row in parse_lines(path, data):
            counts[partition] += 1
            cluster = _read(row, where, result)
            if cluster is not None:
                _check_row(cluster, partition, where, result)
                _check_layouts(cluster, where, result.problems, conditions)
                clusters.append(cluster)
    _check_manifest(Path(data_dir), files, counts, clusters, result)
    _check_totals(clusters, result)
    _check_comment_balance(clusters, result)
    _summarise(clusters, sha256, conditions, result)
    return result


def _read(row: dict, where: str, result: CheckResult) -> Cluster | None:
    """The row as a `Cluster`, or None with its first field problem recorded (the other rows still get checked)."""
    try:
        cluster = Cluster.from_row(row, where)
    except UserError as exc:
        result.problems.append(str(exc))
        return None
    # Fields the format does not have would be lost by every reader: `to_row(from_row(row))` must be the row.
    extra = sorted(set(row) - CLUSTER_FIELDS) + [f"{key}.{name}" for key in ("comment", "native")
                                                  for name in sorted(set(row[key]) - COMMENT_FIELDS)]
    if extra:
        result.problems.append(f"{where}: field(s) {', '.join(extra)} are not in the cluster format "
                               "(docs/FORMATS.md)")
    return cluster


def _check_row(row: Cluster, partition: str, where: str, result: CheckResult) -> None:
    problems = result.problems
    cluster = row.cluster
    if row.partition != partition:
        problems.append(f"{where}: {cluster} says partition {row.partition!r} but is in {partition}.jsonl")
    if LICENSE_PARTITION.get(row.license) != partition:
        problems.append(f"{where}: {cluster} licence {row.license!r} does not belong in {partition}")
    if SOURCES.get(row.source) != row.genre:
        problems.append(f"{where}: {cluster} source {row.source!r} with genre {row.genre!r}")
    if not row.cluster.startswith(row.source + "-"):
        problems.append(f"{where}: cluster id {cluster!r} does not start with its source")
    prov = row.provenance
    if (set(prov) != {"registry", "package", "version", "path", "sha256"}
            or not isinstance(prov.get("sha256"), str) or len(prov["sha256"]) != 64):
        problems.append(f"{where}: {cluster} provenance needs registry, package, version, path and a sha256")
    if not row.instruction.strip() or not row.artifact.strip():
        problems.append(f"{where}: {cluster} has an empty instruction or artifact")
    if row.artifact != row.artifact.rstrip():
        problems.append(f"{where}: {cluster} artifact ends in white space")
    texts = cluster_texts(row.instruction, row.artifact, row.reference)
    for key, comment in (("comment", row.comment), ("native", row.native)):
        if "\n" in comment.text:
            problems.append(f"{where}: {cluster} {key} text must be one line")
            continue
        for reason in collisions(comment.text, comment.witness, texts):
            problems.append(f"{where}: {cluster} {key} {comment.id} collides: {reason}")


def _check_layouts(row: Cluster, where: str, problems: list[str], conditions: ConditionSet) -> None:
    """The layout of every condition on one cluster (the rules in the module docstring)."""
    messages = {c.name: c.message(row) for c in conditions.conditions}
    for condition in conditions.conditions:
        for problem in _layout_problems(row, condition, messages, conditions):
            problems.append(f"{where}: {row.cluster} {condition.name}: {problem}")


def _layout_problems(row: Cluster, condition: Condition, messages: dict[str, str],
                     conditions: ConditionSet) -> list[str]:
    if condition.later:
        return _later_problems(row, condition, messages[condition.name])
    found = []
    message, artifact = messages[condition.name], row.artifact
    # A rule-marked condition's message follows a fixed layout before the guard (which is what the guard
    # study measures, not a layout to check): the paste rule's pick, or the unmarked message the guard reads.
    laid = condition.laid_out(artifact)
    if condition.marking == "guard":
        message = laid.message(row)
    start = laid.artifact_start(row.instruction)
    end = start + len(artifact)
    if not message.startswith(laid.head(row.instruction) + "\n\n"):
        found.append("the message does not open with the instruction and a blank line")
    if message[start:end] != artifact or message.count(artifact) != 1:
        found.append("the artifact's bytes do not stand once, verbatim, where the layout puts them")
    trailing = condition.trailing(row)
    tail = ("\n" + laid.close if laid.close is not None else "") + (
        "\n" * laid.breaks + trailing.text if trailing is not None else "")
    if message[end:] != tail:
        found.append(f"the message does not end with {'the closing marker and ' if laid.close else ''}"
                     f"{'the comment' if trailing else 'the artifact'} as the layout says")
    texts = {"instruction": row.instruction, "artifact": artifact, "reference": row.reference or ""}
    if trailing is not None:
        texts["comment"] = trailing.text
    for marker in dict.fromkeys(condition.markers):
        for reason in marker_collisions(marker, texts):
            found.append(f"marker {marker!r} collides: {reason}")
    added = [text for text in (condition.sentence, *condition.markers) if text]
    if trailing is not None and added:
        for reason in collisions(trailing.text, trailing.witness, added):
            found.append(f"comment {trailing.id} collides with the condition's sentence or markers: {reason}")
    if trailing is not None and condition.system is not None:
        for reason in collisions(trailing.text, trailing.witness, [condition.system]):
            found.append(f"comment {trailing.id} collides with the condition's system prompt: {reason}")
    if condition.same_prefix_as is not None:
        other = conditions.get(condition.same_prefix_as)
        through = other.artifact_start(row.instruction) + len(artifact)
        if message[:end] != messages[other.name][:through]:
            found.append(f"differs from {other.name} before the artifact ends (same_prefix_as)")
    if condition.same_suffix_as is not None:
        other = conditions.get(condition.same_suffix_as)
        if message[len(condition.head(row.instruction)):] != messages[other.name][len(other.head(row.instruction)):]:
            found.append(f"differs from {other.name} after the instruction (same_suffix_as)")
    return found


def _later_problems(row: Cluster, condition: Condition, message: str) -> list[str]:
    """A later-turn condition's last message is its cluster's follow-up and then the comment (the opening turn
    is its own condition's message, checked as that condition); the comment collides with no text the
    condition adds (a follow-up, a fixed reply, the system prompt)."""
    found = []
    trailing = condition.trailing(row)
    follow_up = condition.follow_up_of(row.cluster)
    expected = follow_up + ("\n" * condition.breaks + trailing.text if trailing is not None else "")
    if message != expected:
        found.append("the last message is not the follow-up instruction" + (" and the comment" if trailing else ""))
    added = [text for text in (*condition.follow_up, condition.reply_text, condition.system) if text]
    if trailing is not None:
        for reason in collisions(trailing.text, trailing.witness, added):
            found.append(f"comment {trailing.id} collides with the condition's follow-ups, reply or system prompt: "
                         f"{reason}")
    return found


def _check_manifest(data_dir: Path, files_read: list[tuple[Path, bytes]], counts: dict[str, int],
                    clusters: list[Cluster], result: CheckResult) -> None:
    """MANIFEST.json says what `seam.py build` made: each key must be there, of its type, and true of the files.

    `counts` is the number of rows in each partition file, `clusters` the rows that read as clusters.
    """
    path = data_dir / MANIFEST
    problems = result.problems
    read = {file.name: data for file, data in files_read}
    sha256 = checksum(files_read)
    try:
        manifest = jsonl.load_file(path, "the benchmark manifest, a JSON object")
    except UserError as exc:
        problems.append(str(exc))
        return
    missing = [key for key in MANIFEST_KEYS if key not in manifest]
    if missing:
        problems.append(f"{path}: missing key(s) {', '.join(map(repr, missing))} (docs/FORMATS.md)")
    extra = sorted(set(manifest) - set(MANIFEST_KEYS))
    if extra:
        problems.append(f"{path}: key(s) {', '.join(map(shown, extra))} are not in the manifest format")

    def expect(key: str, expected, what: str) -> None:
        if key in manifest and manifest[key] != expected:
            problems.append(f"{path}: {key!r} is {shown(manifest[key])}, expected {what}")

    expect("seed", SEED, shown(SEED))
    expect("per_source", PER_SOURCE, str(PER_SOURCE))
    if "benchmark_sha256" in manifest and manifest["benchmark_sha256"] != sha256:
        problems.append(f"{path}: benchmark_sha256 does not match the partition files")
    expect("counts", counts, f"the rows per partition file {shown(counts)}")
    pools = {name: hashlib.sha256((COMMENTS_DIR / name).read_bytes()).hexdigest()
             for name in ("casual.jsonl", "native.jsonl")}
    expect("comment_pools", pools, "the SHA-256 of benchmark/comments/casual.jsonl and native.jsonl")
    if len(clusters) == sum(counts.values()):  # the inputs are known only when every row read
        expect("inputs", _inputs(clusters), "every source file the clusters were read from")
    files = manifest.get("files")
    if "files" in manifest and (not isinstance(files, dict) or set(files) != {f"{p}.jsonl" for p in PARTITIONS}):
        problems.append(f"{path}: 'files' is {shown(files)}, expected the SHA-256 of each partition file "
                        f"({', '.join(f'{p}.jsonl' for p in PARTITIONS)})")
    elif isinstance(files, dict):
        for name, expected in sorted(files.items()):
            actual = hashlib.sha256(read[name]).hexdigest()  # the bytes checked above, not a second read
            if actual != expected:
                recorded = expected if isinstance(expected, str) and len(expected) == 64 else shown(expected)
                problems.append(f"{data_dir / name}: SHA-256 {actual} but {MANIFEST} records {recorded}")
    selection = manifest.get("selection")
    if "selection" in manifest and (not isinstance(selection, list) or not all(isinstance(s, dict)
                                                                                for s in selection)
                                    or [s.get("source") for s in selection] != list(SOURCES)):
        problems.append(f"{path}: 'selection' is {shown(selection)}, expected one object per source "
                        f"({', '.join(SOURCES)})")


def _inputs(clusters: list[Cluster]) -> list[dict]:
    """The manifest's `inputs`: every source file read, once, sorted by package and path (as build writes it)."""
    inputs: dict[str, dict] = {}
    for row in clusters:
        for prov in (row.provenance, *row.extra_provenance):
            if isinstance(prov, dict):
                inputs.setdefault(f"{prov.get('package')}:{prov.get('path')}", {"source": row.source, **prov})
    return [inputs[key] for key in sorted(inputs)]


def _check_totals(rows: list[Cluster], result: CheckResult) -> None:
    per_source = Counter(r.source for r in rows)
    for source in SOURCES:
        if per_source[source] != PER_SOURCE:
            result.problems.append(f"source {source}: {per_source[source]} clusters, expected {PER_SOURCE}")
    for name, key in (("cluster id", lambda r: r.cluster), ("source item", lambda r: (r.source, r.item_id))):
        repeated = [k for k, n in Counter(map(key, rows)).items() if n > 1]
        if repeated:
            result.problems.append(f"repeated {name}(s): {repeated[:5]}")


def _check_comment_balance(rows: list[Cluster], result: CheckResult) -> None:
    pool = {c.id: c for c in casual_pool()}
    native = {c.id: c for cs in native_pools().values() for c in cs}
    for row in rows:
        for key, comment, known in (("comment", row.comment, pool), ("native", row.native, native)):
            expected = known.get(comment.id)
            if expected is None or expected.record() != comment:
                result.problems.append(f"{row.cluster}: {key} {comment.id!r} is not the pool's comment")
            elif key == "native" and expected.register != row.register:
                result.problems.append(f"{row.cluster}: native comment from register {expected.register}")
    uses = Counter(r.comment.id for r in rows)
    counts = [uses[c] for c in pool]
    if rows and max(counts) - min(counts) > 2:
        result.problems.append(f"casual comments unbalanced: used {min(counts)} to {max(counts)} times")


def _summarise(rows: list[Cluster], sha256: str, conditions: ConditionSet, result: CheckResult) -> None:
    add = result.summary.append
    count = len(conditions.conditions)
    added = (f": {count - len(conditions.user)} built-in, {len(conditions.user)} from {', '.join(conditions.files)}"
             if conditions.files else "")
    add(f"clusters: {len(rows)} from {len({r.source for r in rows})} sources; "
        f"requests: {len(rows) * count} ({count} conditions{added})")
    for source in SOURCES:
        mine = [r for r in rows if r.source == source]
        licences = ", ".join(f"{lic} {n}" for lic, n in sorted(Counter(r.license for r in mine).items()))
        add(f"  {source:<10} {len(mine):>3}  {licences}")
    add("partitions: " + ", ".join(f"{p} {sum(r.partition == p for r in rows)}" for p in PARTITIONS))
    uses = Counter(r.comment.id for r in rows)
    if uses:
        add(f"casual comments: {len(uses)} used, {min(uses.values())} to {max(uses.values())} clusters each")
    unmarked = sum(not paste_rule_marks(r.artifact) for r in rows)
    add(f"paste-marking rule (> {PASTE_RULE_CHARS} characters or >= {PASTE_RULE_BREAKS} line breaks) leaves "
        f"{unmarked} of {len(rows)} artifacts unmarked (the original benchmark: 100 of 300)")
    for condition in conditions.user:
        if condition.marked_by_rule:
            sent = {r.cluster: condition.message(r) for r in rows}
            marked = sum(sent[r.cluster] != condition.unmarked().message(r) for r in rows)
            line = (f"{condition.name}: marked by {'the guard' if condition.marking == 'guard' else 'the paste rule'} "
                    f"in {marked} of {len(rows)} messages")
            if condition.marking == "guard":  # the guard's errors are what its study measures, not layout faults
                exact = sum(sent[r.cluster] == replace(condition, marking="always").message(r) for r in rows)
                cut = sum(r.artifact not in sent[r.cluster] for r in rows)
                line += f", {exact} exactly as the fixed layout with its markers, {cut} with the artifact cut"
            add(line)
    add(f"benchmark SHA-256: {sha256}")
