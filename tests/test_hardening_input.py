"""Bad input never ends in a traceback (issue 13): every stage answers with one line naming the file
and line and what was expected, and exits 2.

The inputs are what a damaged or hostile file can hold: JSON nested deeper than Python's recursion
limit, integers beyond its digit limit, attempt times that overflow in UTC, a model directory whose
files match their manifest but are not a model, a damaged benchmark manifest, binary data where a
trace was expected, one trace file mixing two models, and lone surrogate escapes ("\\udc80", valid
JSON that UTF-8 cannot carry) in a reply.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from support.samples import trace_row as sample_trace_row

import seam
from benchmark import dataset
from benchmark.check import check
from common import jsonl
from common.errors import UserError
from common.files import read_csv
from common.records import Attempt
from common.traces import read_final
from scorer import synthetic
from stats.synthetic import synthetic_labels
from validity.synthetic import trace_row as validity_row

FIXTURE = Path(__file__).parent / "fixtures" / "tiny-deberta"
DEEP = b"[" * 100_000 + b"\n"  # RecursionError inside json
HUGE = b'{"n":' + b"1" * 5_000 + b"}\n"  # ValueError: exceeds the limit for integer string conversion
BAD_JSON = {"deep": (DEEP, "JSON nested too deeply to read"), "huge": (HUGE, "a number of more than 4,300 digits")}


def one_error_line(capsys, argv, code=2) -> str:
    """Run seam.py in-process; assert the exit code and that stderr ends in one error line, no traceback."""
    assert seam.main([str(a) for a in argv]) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("seam.py ")]
    assert len(errors) == 1 and err.endswith(errors[0] + "\n"), err
    return errors[0]


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A synthetic benchmark's requests, one model's traces and their labels."""
    root = tmp_path_factory.mktemp("scored")
    clusters = synthetic.clusters(per_source=1, seed=3)
    jsonl.write(root / "req.jsonl", synthetic.request_rows(clusters))
    jsonl.write(root / "tr.jsonl", synthetic.traces(clusters, seed=4))
    assert seam.main(["score", str(root / "tr.jsonl"), "--requests", str(root / "req.jsonl"),
                      "--out", str(root / "labels.jsonl"), "--no-nli"]) == 0
    return root


# --- JSON nested too deeply, integers too long ---------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(BAD_JSON))
@pytest.mark.parametrize("command", ["score", "placebo", "audit", "score --requests", "tables", "validity"])
def test_json_too_deep_or_a_number_too_long_is_one_line_naming_file_and_line(scored, tmp_path, capsys, kind,
                                                                            command):
    line, reason = BAD_JSON[kind]
    bad = tmp_path / "bad.jsonl"
    if command in ("score --requests", "tables"):
        bad.write_bytes(line)  # the first line of a requests or labels file
        where = f"{bad}:1: expected one JSON object per line ({reason})"
    else:
        rows = (scored / "tr.jsonl").read_bytes()
        bad.write_bytes(rows + line)  # a trace file damaged after its rows
        number = rows.count(b"\n") + 1
        where = f"{bad}:{number}: expected one JSON trace row per line ({reason}); the file is damaged"
    req = ["--requests", scored / "req.jsonl"]
    argv = {
        "score": ["score", bad, *req, "--out", tmp_path / "l.jsonl", "--no-nli"],
        "placebo": ["placebo", bad, *req, "--no-nli"],
        "audit": ["audit", bad, *req, "--labels", scored / "labels.jsonl", "--no-nli"],
        "score --requests": ["score", scored / "tr.jsonl", "--requests", bad, "--out", tmp_path / "l.jsonl",
                             "--no-nli"],
        "tables": ["tables", bad, "--out", tmp_path / "t"],
        "validity": ["validity", bad, "--out", tmp_path / "v"],
    }[command]
    assert where in one_error_line(capsys, argv)


@pytest.mark.parametrize("kind", sorted(BAD_JSON))
def test_audit_of_a_labels_file_holding_bad_json_says_where_it_differs(scored, tmp_path, capsys, kind):
    labels = tmp_path / "labels.jsonl"
    labels.write_bytes(BAD_JSON[kind][0])
    assert seam.main(["audit", str(scored / "tr.jsonl"), "--requests", str(scored / "req.jsonl"),
                      "--labels", str(labels), "--no-nli"]) == 1
    captured = capsys.readouterr()
    assert "identical: no (first difference at line 1)" in captured.out and "Traceback" not in captured.err


@pytest.fixture
def benchmark_copy(tmp_path):
    target = tmp_path / "benchmark"
    shutil.copytree(dataset.DATA_DIR, target)
    return target


@pytest.mark.parametrize("kind", sorted(BAD_JSON))
def test_benchmark_rows_holding_bad_json_are_named(benchmark_copy, kind):
    line, reason = BAD_JSON[kind]
    path = benchmark_copy / "sharealike.jsonl"
    path.write_bytes(path.read_bytes() + line)
    for read in (check, dataset.load):
        with pytest.raises(UserError) as caught:
            read(benchmark_copy)
        assert str(caught.value) == f"{path}:51: expected one JSON object per line ({reason})"


@pytest.mark.parametrize("kind", sorted(BAD_JSON))
def test_a_benchmark_manifest_holding_bad_json_is_a_problem(benchmark_copy, kind):
    (benchmark_copy / "MANIFEST.json").write_bytes(BAD_JSON[kind][0])
    assert check(benchmark_copy).problems == [
        f"{benchmark_copy / 'MANIFEST.json'}: {BAD_JSON[kind][1]}; expected the benchmark manifest, a JSON object"]


def model_copy(tmp_path, **replaced: bytes) -> Path:
    """The tiny fixture with some files replaced, and a manifest that matches them (so only the content is wrong)."""
    target = tmp_path / "model"
    shutil.copytree(FIXTURE, target)
    for name, data in replaced.items():
        (target / name.replace("_", ".")).write_bytes(data)
    if "MANIFEST_json" not in replaced:
        files = {name: hashlib.sha256((target / name).read_bytes()).hexdigest()
                 for name in ("model.onnx", "tokenizer.json", "labels.json")}
        (target / "MANIFEST.json").write_text(json.dumps({"files": files}), encoding="utf-8")
    return target


@pytest.mark.parametrize("name", ["MANIFEST_json", "labels_json"])
@pytest.mark.parametrize("kind", sorted(BAD_JSON))
def test_a_model_directory_json_file_holding_bad_json_is_named(scored, tmp_path, capsys, name, kind):
    model = model_copy(tmp_path, **{name: BAD_JSON[kind][0]})
    err = one_error_line(capsys, ["score", scored / "tr.jsonl", "--requests", scored / "req.jsonl",
                                  "--out", tmp_path / "l.jsonl", "--model-dir", model, "--no-cache"])
    assert f"{model / name.replace('_', '.')}: {BAD_JSON[kind][1]}; expected a JSON object" in err


# --- a model directory whose files match their manifest but are not a model ---------------------------------

@pytest.mark.parametrize("name, expected", [
    ("model_onnx", "model.onnx: not a model onnxruntime can load (INVALID_PROTOBUF : Protobuf parsing failed.)"),
    ("tokenizer_json", "tokenizer.json: not a tokenizer the tokenizers library can read ("),
])
def test_a_junk_model_file_that_matches_its_manifest_is_one_line_naming_it(scored, tmp_path, capsys, name,
                                                                          expected):
    model = model_copy(tmp_path, **{name: b"junk that matches its manifest\n" * 8})
    err = one_error_line(capsys, ["score", scored / "tr.jsonl", "--requests", scored / "req.jsonl",
                                  "--out", tmp_path / "l.jsonl", "--model-dir", model, "--no-cache"])
    assert f"{model}/{expected}" in err
    assert not (tmp_path / "l.jsonl").exists()


# --- attempt times that overflow ------------------------------------------------------------------------------

BENCHMARK = dataset.load()


def attempt(started_at: str) -> Attempt:
    return Attempt(started_at=started_at, latency_s=1.0, http_status=200, error=None, retry_after=None,
                   retry_wait_s=None)


@pytest.mark.parametrize("started_at", ["0001-01-01T00:00:00.000+01:00", "9999-12-31T23:59:59.999-01:00"])
def test_an_attempt_time_outside_the_utc_range_is_refused_with_file_and_line(tmp_path, capsys, started_at):
    with pytest.raises(UserError, match="attempt 'started_at' .* is out of range in UTC"):
        attempt(started_at).started("here")
    rows = [validity_row("humaneval-001", condition, "x", benchmark_sha256=BENCHMARK.sha256)
            for condition in ("clean", "newline")]
    rows[1]["attempts"][0]["started_at"] = started_at
    jsonl.write(tmp_path / "t.jsonl", rows)
    err = one_error_line(capsys, ["validity", tmp_path / "t.jsonl", "--out", tmp_path / "out"])
    assert f"{tmp_path / 't.jsonl'}:2: attempt 1: attempt 'started_at' '{started_at}' is out of range in UTC" in err
    assert not (tmp_path / "out").exists()


def test_attempt_times_in_year_1_and_9999_utc_are_times_like_any_other(tmp_path, capsys):
    rows = [validity_row("humaneval-001", condition, "x", benchmark_sha256=BENCHMARK.sha256)
            for condition in ("clean", "newline")]
    rows[0]["attempts"][0]["started_at"] = "0001-01-01T00:00:00.000Z"
    rows[1]["attempts"][0]["started_at"] = "9999-12-31T23:59:59.999Z"
    jsonl.write(tmp_path / "t.jsonl", rows)
    assert seam.main(["validity", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "out")]) == 0
    (flags,) = read_csv(tmp_path / "out" / "validity_provenance_flags.csv")
    assert flags["days_apart"] == "true" and float(flags["gap_days"]) > 3_652_058


# --- the benchmark manifest ----------------------------------------------------------------------------------

def rewrite_manifest(directory: Path, change) -> Path:
    path = directory / "MANIFEST.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    changed = change(manifest)
    path.write_text(json.dumps(manifest if changed is None else changed, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize("change, problem", [
    (lambda m: [], "found an array, expected the benchmark manifest, a JSON object"),
    (lambda m: m.pop("files") and None, "missing key(s) 'files'"),
    (lambda m: m.update(counts="300"), "'counts' is '300', expected the rows per partition file"),
    (lambda m: m.update(counts={"permissive": 1}), "'counts' is {'permissive': 1}, expected the rows per partition"),
    (lambda m: m.update(files=[]), "'files' is [], expected the SHA-256 of each partition file"),
    (lambda m: m.update(comment_pools={}), "'comment_pools' is {}, expected the SHA-256 of benchmark/comments"),
    (lambda m: m.update(seed=7), "'seed' is 7, expected 'seam-v1'"),
    (lambda m: m.update(inputs=m["inputs"][1:]), "'inputs' is "),
    (lambda m: m.update(selection={}), "'selection' is {}, expected one object per source"),
    (lambda m: m.update(extra=1), "key(s) 'extra' are not in the manifest format"),
])
def test_a_damaged_manifest_is_a_problem_not_a_crash_or_ok(benchmark_copy, change, problem):
    path = rewrite_manifest(benchmark_copy, change)
    problems = check(benchmark_copy).problems
    assert len(problems) == 1 and problems[0].startswith(f"{path}: ") and problem in problems[0], problems


@pytest.mark.parametrize("value", [{}, [], None, {"id": {}}])
def test_a_cluster_whose_comment_is_not_a_comment_object_is_a_problem(benchmark_copy, value):
    path = benchmark_copy / "permissive.jsonl"
    lines = path.read_bytes().split(b"\n")
    row = json.loads(lines[0])
    row["comment"] = value
    lines[0] = json.dumps(row).encode()
    path.write_bytes(b"\n".join(lines))
    problems = check(benchmark_copy).problems
    assert problems and problems[0].startswith(f"{path}:1: field 'comment': ")


# --- one model per trace file ----------------------------------------------------------------------------------

def test_validity_refuses_a_trace_file_mixing_two_models_as_the_scorer_does(tmp_path, capsys):
    rows = [validity_row("humaneval-001", "clean", "x", benchmark_sha256=BENCHMARK.sha256),
            validity_row("humaneval-001", "newline", "y", model="model-b", benchmark_sha256=BENCHMARK.sha256)]
    jsonl.write(tmp_path / "t.jsonl", rows)
    err = one_error_line(capsys, ["validity", tmp_path / "t.jsonl", "--out", tmp_path / "out"])
    assert (f"{tmp_path / 't.jsonl'}:2: model 'model-b', but earlier rows are 'model-a'; a trace file holds one "
            "model's rows") in err
    assert not (tmp_path / "out").exists()


# --- labels: usable=false with absorbed=true --------------------------------------------------------------------

def test_tables_refuse_an_excluded_label_that_says_absorbed(tmp_path, capsys):
    rows = synthetic_labels(models=1, clusters=4, comments=2)
    rows[1] = {**rows[1], "usable": False, "absorbed": True}
    jsonl.write(tmp_path / "labels.jsonl", rows)
    err = one_error_line(capsys, ["tables", tmp_path / "labels.jsonl", "--out", tmp_path / "out"])
    assert f"{tmp_path / 'labels.jsonl'}:2: usable=false with absorbed=True" in err
    assert not (tmp_path / "out").exists()


# --- torn tails, and files that are no trace at all ---------------------------------------------------------

ROW = jsonl.dumps(sample_trace_row("s-001/clean")).encode()


@pytest.mark.parametrize("data, line, expected", [
    (b"\x00\x01\x02 binary", 1,
     "not a trace file (JSON Lines): it begins with b'\\x00\\x01\\x02 binary', not with '{'"),
    (b"{\"id\": \x00", 1, "not a trace file (JSON Lines): it holds a control character"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", 1, "not a trace file (JSON Lines): not UTF-8 (byte 0x89 at column 1)"),
    (b"\xff\xfe{\x00\"\x00\n", 1, "not a trace file (JSON Lines): not UTF-8 (byte 0xFF at column 1)"),
    (b"caf\xe9\n", 1, "not a trace file (JSON Lines): not UTF-8 (byte 0xE9 at column 4)"),
    (b"id,status\nx,ok\n", 1, "not a trace file (JSON Lines): not JSON: Expecting value at column 1"),
    (b"[1, 2]\n", 1, "not a trace file (JSON Lines): the first line is an array, expected a JSON object"),
    (b"\"a trace\"\n" + ROW, 1, "not a trace file (JSON Lines): the first line is a string, expected a JSON object"),
    (ROW + b"\x00\x00\x00\x00", 2, "the last line (4 bytes without a final newline) is not the start of a trace "
                                   "row: it begins with b'\\x00\\x00\\x00\\x00', not with '{'; the file is damaged, "
                                   "not torn by a crash"),
    (ROW + b"{\"id\": \"\xff", 2, "the last line (9 bytes without a final newline) is not the start of a trace row: "
                                  "it is not UTF-8 (byte 0xFF at column 9); the file is damaged, not torn by a crash"),
])
def test_bytes_that_are_no_trace_are_not_called_torn(tmp_path, capsys, data, line, expected):
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    with pytest.raises(UserError) as caught:
        read_final(path)
    assert str(caught.value) == f"{path}:{line}: {expected}"
    for command in (["score", path, "--out", tmp_path / "l.jsonl", "--no-nli"],
                    ["validity", path, "--out", tmp_path / "v"]):
        err = one_error_line(capsys, command)
        assert f"{path}:{line}: " in err and "torn" not in err.replace("not torn", "") and "--move-torn" not in err


@pytest.mark.parametrize("tail", [b"{", b'{"id": "s-002/cl', ROW[:-1], b'{"output": "caf\xc3'])
def test_a_row_cut_short_after_complete_rows_or_alone_is_torn(tmp_path, tail):
    for before in (b"", ROW):
        path = tmp_path / "t.jsonl"
        path.write_bytes(before + tail)
        with pytest.raises(UserError, match=r"the last line is torn .*--move-torn"):
            read_final(path)


# --- lone surrogates -------------------------------------------------------------------------------------------

def test_a_lone_surrogate_is_written_as_its_escape_and_reads_back():
    assert jsonl.dumps({"b": "x\udc80y", "a": "é\u2028\ud800"}) == '{"a":"é\u2028\\ud800","b":"x\\udc80y"}\n'
    line = jsonl.dumps({"text": "caf\udce9 \\udc80"})  # a real backslash stays a backslash
    assert json.loads(line) == {"text": "caf\udce9 \\udc80"}
    line.encode("utf-8")
    assert jsonl.dumps({"a": "é ☃ 𝄞"}) == '{"a":"é ☃ 𝄞"}\n'  # other characters kept as is
    with pytest.raises(UnicodeEncodeError):
        jsonl.dumps({"a": "\udc80"}, keep_surrogates=True).encode("utf-8")


PROSE = ("The harbour of Bergen was rebuilt in 1702. Its wooden warehouses burned twice in the "
         "following century, and the stone quay survives.")


def surrogate_traces(tmp_path) -> tuple[Path, Path]:
    """Requests and traces for one prose cluster whose treatment replies carry lone surrogates: in the
    absorbed remark, in a new sentence only the entailment tier can judge, and in the cut-off parts."""
    comment = {"comment": "btw this goes to the whole team after lunch", "witness": "whole team after lunch",
               "proposition": "The text will be sent to the whole team after lunch."}
    requests, traces = [], []
    replies = {"clean": PROSE,
               "newline": f"{PROSE} This goes to the whole team after lunch \udc80.",
               "blank": f"Here is the text \udc80:\n\n{PROSE} The quay is made of granite \udc80 blocks.",
               "boundary": f"{PROSE}\n\nI left out your note \udc80 about the team.",
               "mitigation": PROSE, "native": PROSE}
    for condition, reply in replies.items():
        trailing = condition != "clean"
        requests.append({"id": f"wikipedia-001/{condition}", "cluster": "wikipedia-001", "condition": condition,
                         "source": "wikipedia", "genre": "prose", "license": "MIT",
                         "message": f"Fix the typos.\n\n{PROSE}", "artifact": PROSE,
                         "comment_id": "casual-00" if trailing else None, "benchmark_sha256": "0" * 64,
                         **{k: (v if trailing else None) for k, v in comment.items()}})
        traces.append(synthetic.trace_row("wikipedia-001", condition, reply, model="m1").to_row())
    jsonl.write(tmp_path / "req.jsonl", requests)
    jsonl.write(tmp_path / "tr.jsonl", traces)
    assert b"\\udc80" in (tmp_path / "tr.jsonl").read_bytes()  # as an older runner could have written it
    return tmp_path / "req.jsonl", tmp_path / "tr.jsonl"


@pytest.mark.parametrize("model", [None, FIXTURE])
def test_labels_of_replies_with_lone_surrogates_are_written_and_read_back(tmp_path, capsys, model):
    req, tr = surrogate_traces(tmp_path)
    nli = ["--no-nli"] if model is None else ["--model-dir", model, "--no-cache"]
    out = tmp_path / "labels.jsonl"
    assert seam.main(["score", str(tr), "--requests", str(req), "--out", str(out), *map(str, nli)]) == 0, \
        capsys.readouterr().err
    data = out.read_bytes()
    data.decode("utf-8")  # strict UTF-8
    rows = {row["condition"]: row for _, row in jsonl.read(out)}
    assert "\udc80" in rows["newline"]["evidence"] and rows["newline"]["tier"] == "witness"
    assert "\udc80" in rows["blank"]["cut_before"] and "\udc80" in rows["boundary"]["cut_after"]
    if model is not None:
        assert "entailment" in rows["blank"]["tiers_run"]
    assert b"".join(jsonl.dumps(row).encode() for row in rows.values()) == data  # same bytes when rewritten
    audit = ["--no-nli"] if model is None else ["--model-dir", str(model)]  # audit recomputes: no cache
    assert seam.main(["audit", str(tr), "--requests", str(req), "--labels", str(out), *audit]) == 0
    assert seam.main(["placebo", str(tr), "--requests", str(req), "--out", str(tmp_path / "p.jsonl"),
                      *map(str, nli)]) == 0
    assert seam.main(["tables", str(out), "--out", str(tmp_path / "tables")]) == 0


@pytest.mark.parametrize("command", ["tables", "validity"])
def test_a_name_holding_a_lone_surrogate_is_refused_with_file_and_line(tmp_path, capsys, command):
    if command == "tables":
        rows = synthetic_labels(models=1, clusters=4, comments=2)
        rows[2] = {**rows[2], "model": "model-\udc80"}
    else:
        rows = [validity_row("humaneval-001", condition, "x", model="model-\udc80",
                             benchmark_sha256=BENCHMARK.sha256) for condition in ("clean", "newline")]
    jsonl.write(tmp_path / "in.jsonl", rows)
    line = 3 if command == "tables" else 1
    err = one_error_line(capsys, [command, tmp_path / "in.jsonl", "--out", tmp_path / "out"])
    assert (f"{tmp_path / 'in.jsonl'}:{line}: field 'model' holds a lone surrogate (U+DC80 at character 7), "
            "expected Unicode text") in err
    assert not (tmp_path / "out").exists()


# --- the audit's note on the entailment model (issue 13, rerun) ------------------------------------------

@pytest.mark.parametrize("value", [[1], 1.5, True, "\ud800", "not-a-checksum"],
                         ids=["list", "float", "bool", "lone-surrogate", "not-hex"])
def test_an_audit_of_labels_naming_no_checksum_as_their_model_is_one_line(scored, tmp_path, capsys, value):
    # the labels differ from the rescore, so the audit reads them to say which entailment model made them
    lines = (scored / "labels.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[1])
    row["nli_model_sha256"] = value
    lines[1] = json.dumps(row) + "\n"  # "\ud800" as its JSON escape, which UTF-8 files can carry
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(lines), encoding="utf-8")
    line = one_error_line(capsys, ["audit", scored / "tr.jsonl", "--requests", scored / "req.jsonl",
                                   "--labels", labels, "--no-nli"])
    assert f"{labels}:2: field 'nli_model_sha256'" in line and "a SHA-256" in line
    assert "\ud800" not in line


def test_an_audit_names_the_entailment_model_its_labels_were_made_with(scored, tmp_path, capsys):
    lines = (scored / "labels.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[1])
    row["nli_model_sha256"] = "ab" * 32
    lines[1] = json.dumps(row) + "\n"
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(lines), encoding="utf-8")
    assert seam.main(["audit", str(scored / "tr.jsonl"), "--requests", str(scored / "req.jsonl"),
                      "--labels", str(labels), "--no-nli"]) == 1
    assert (f"note: the labels were made with entailment model {'ab' * 32}; this audit ran with no entailment "
            "model") in capsys.readouterr().out


# --- labels.json values out of range (issue 13, rerun) ----------------------------------------------------

LABELS_JSON = json.loads((FIXTURE / "labels.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("max_length", -1, "key 'max_length' is -1, expected an integer from 1 to 4096"),
    ("max_length", 1e308, "key 'max_length' is 1e+308, expected an integer from 1 to 4096"),
    ("max_length", 0, "key 'max_length' is 0, expected an integer from 1 to 4096"),
    ("max_length", 4097, "key 'max_length' is 4097, expected an integer from 1 to 4096"),
    ("max_length", True, "key 'max_length' is True, expected an integer from 1 to 4096"),
    ("max_length", "128", "key 'max_length' is '128', expected an integer from 1 to 4096"),
    ("max_length", 2, "key 'max_length' is 2, which leaves no room for text after the 3 special tokens of a pair"),
    ("pad_token_id", 1e12, "key 'pad_token_id' is 1000000000000.0, expected an integer >= 0"),
    ("pad_token_id", 1e308, "key 'pad_token_id' is 1e+308, expected an integer >= 0"),
    ("pad_token_id", -1, "key 'pad_token_id' is -1, expected an integer >= 0"),
    ("pad_token_id", 10**12, "key 'pad_token_id' is 1000000000000, not a token of tokenizer.json (0 to 419)"),
    ("pad_token_id", 420, "key 'pad_token_id' is 420, not a token of tokenizer.json (0 to 419)"),
])
def test_labels_json_values_out_of_range_are_one_line_naming_file_and_key(scored, tmp_path, capsys, key, value,
                                                                         expected):
    model = model_copy(tmp_path, labels_json=json.dumps({**LABELS_JSON, key: value}).encode())
    err = one_error_line(capsys, ["score", scored / "tr.jsonl", "--requests", scored / "req.jsonl",
                                  "--out", tmp_path / "l.jsonl", "--model-dir", model, "--no-cache"])
    assert f"{model / 'labels.json'}: {expected}" in err
    assert not (tmp_path / "l.jsonl").exists()
