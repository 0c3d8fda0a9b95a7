"""The HTML report without a browser: its pieces, its escaping, its bytes, its errors (browser: test_report_browser)."""

import csv
import html
import json
import re
import shutil
from pathlib import Path

import pytest
from support.reportdata import HOSTILE, ROOT, make_release, seam_main

import seam
from benchmark import dataset
from benchmark.conditions import builtin
from common.records import Label, TraceRow
from report import cases, gallery
from report.segments import message_pieces, output_pieces


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return make_release(tmp_path_factory.mktemp("report"))


def _block(text: str, opening: str) -> str:
    start = text.index(opening)
    return text[start + len(opening): text.index("</script>", start)]


def page_data(text: str) -> dict:
    """The page's index (#seam-data), with each case as a dict of its index row and its details line
    (#seam-outputs), the clean output among them."""
    data = json.loads(_block(text, '<script id="seam-data" type="application/json">'))
    lines = _block(text, '<script id="seam-outputs" type="application/x-ndjson">').split("\n")
    assert lines.pop() == ""  # every line ended, the last too
    fields = ("model", "cluster", "condition", "source", "verdict", "tier", "clean")
    data["cases"] = [dict(json.loads(lines[i]), **dict(zip(fields, row, strict=True)))
                     for i, row in enumerate(data["cases"])]
    for case in data["cases"]:
        case["clean"] = None if case["clean"] is None else json.loads(lines[case["clean"]])
    return data


# ---------------------------------------------------------------- pieces


def test_message_pieces_mark_the_remark_and_the_seam_and_give_the_message_back():
    pieces = message_pieces("Edit:\n\nA\n\nbtw x", "btw x")
    assert pieces == (("", "Edit:\n\nA"), ("seam", "\n\n"), ("comment", "btw x"))
    assert message_pieces("Edit:\n\nA", "btw x") == (("", "Edit:\n\nA"),)  # a remark that is not there


def test_output_pieces_mark_cuts_commentary_and_evidence_in_place():
    output = "Here you go:\nA fixed. I removed the note.\nbtw x it is.\nHope it helps!"
    pieces = output_pieces(output, cut_before="Here you go:\n", cut_after="\nHope it helps!",
                           commentary="I removed the note.", evidence="btw x it is.")
    assert "".join(text for _, text in pieces) == output
    assert pieces == (("cut", "Here you go:\n"), ("", "A fixed. "), ("commentary", "I removed the note."),
                      ("", "\n"), ("evidence", "btw x it is."), ("cut", "\nHope it helps!"))


def test_output_pieces_leave_unfound_label_texts_unmarked():
    # A cut that is not the output's prefix, and evidence only inside the cut part, mark nothing.
    pieces = output_pieces("abc def", cut_before="zzz", cut_after="def", evidence="def")
    assert pieces == (("", "abc "), ("cut", "def"))


def test_output_pieces_find_label_texts_across_the_line_breaks_the_scorer_joined():
    # The scorer's prose units join a hard-wrapped paragraph's lines with a space, and a run of units with
    # "\n": its evidence and commentary are the output's words with other white space between them.
    output = "Emma was out of\ntune today. I removed the note\nabout lunch.\n\nShe sang."
    pieces = output_pieces(output, evidence="Emma was out of tune today.", commentary="I removed the note about lunch.")
    assert pieces == (("evidence", "Emma was out of\ntune today."), ("", " "),
                      ("commentary", "I removed the note\nabout lunch."), ("", "\n\nShe sang."))
    # Commentary is one unit a line: each unit is marked where it stands, even with text between them.
    pieces = output_pieces("A. I cut x. B. I cut y.", commentary="I cut x.\nI cut y.")
    assert pieces == (("", "A. "), ("commentary", "I cut x."), ("", " B. "), ("commentary", "I cut y."))
    # A run of evidence units split by a commentary cut between them: each unit marked.
    pieces = output_pieces("x btw. I cut it. ship it.", commentary="I cut it.", evidence="x btw.\nship it.")
    assert pieces == (("evidence", "x btw."), ("", " "), ("commentary", "I cut it."), ("", " "),
                      ("evidence", "ship it."))


def test_a_cut_is_marked_with_the_white_space_ending_the_output_and_else_given_as_text():
    # Real: the scorer's cut after lacks the output's final line break; markers inside a code fence.
    output = "BEGIN TEXT-----\nThe abstract.\nEND TEXT-----\n"
    assert output_pieces(output, cut_before="BEGIN TEXT-----", cut_after="END TEXT-----") == (
        ("cut", "BEGIN TEXT-----"), ("", "\nThe abstract.\n"), ("cut", "END TEXT-----\n"))
    fenced = "Here:\n\n```python\n# BEGIN TEXT\nx = 1\n# END TEXT\nbtw\n```"
    case = _case(output=fenced, cut_before="Here:\n\n# BEGIN TEXT", cut_after="# END TEXT\nbtw\n```")
    assert case.unmarked_cuts() == ["Here:\n\n# BEGIN TEXT"]
    assert [mark for mark, _ in case.pieces()] == ["", "cut"]


def test_every_released_label_text_is_marked_in_its_output():
    benchmark = dataset.load()
    models = cases.load(sorted((ROOT / "data" / "labels").glob("*.jsonl")),
                        sorted((ROOT / "data" / "traces").glob("*.jsonl")), benchmark)
    unmarked = []
    for model in models:
        for case in model.cases:
            marks = {mark for mark, _ in case.pieces() or ()}
            for mark, text in (("evidence", case.label.evidence), ("commentary", case.label.cut_commentary)):
                if text and mark not in marks:
                    unmarked.append(f"{model.model}:{case.label.id} {mark}")
    assert unmarked == []


def test_every_released_case_cuts_into_pieces_that_give_its_output_back():
    benchmark = dataset.load()
    models = cases.load(sorted((ROOT / "data" / "labels").glob("*.jsonl")),
                        sorted((ROOT / "data" / "traces").glob("*.jsonl")), benchmark)
    marked = {"evidence": 0, "cut": 0, "commentary": 0}
    for model in models:
        for case in model.cases:
            pieces = case.pieces()
            if pieces is None:
                assert case.treatment.output is None
                continue
            assert "".join(text for _, text in pieces) == case.treatment.output, case.label.id
            for mark, _ in pieces:
                marked[mark] = marked.get(mark, 0) + 1
    document = cases.payload(models, benchmark)
    for name, cluster in document.index["clusters"].items():
        source = benchmark.cluster(name)
        for condition, pieces in cluster["messages"].items():
            text = "".join(cluster["artifact"] if mark == "artifact" else piece for mark, piece in pieces)
            trailing = builtin().get(condition).trailing(source)
            assert text == builtin().get(condition).message(source), (name, condition)
            assert [p[0] for p in pieces if p[0] in ("seam", "comment")] == (["seam", "comment"] if trailing else [])
            if trailing:
                assert pieces[-1] == ["comment", trailing.text]
    assert marked["evidence"] > 400 and marked["cut"] > 500 and marked["commentary"] >= 1


# ---------------------------------------------------------------- gallery


def _case(finish: str | None = "stop", clean_finish: str | None = "stop", output: str | None = None,
          **label_fields) -> cases.Case:
    label = dict(id="humaneval-001/newline", model="m", cluster="humaneval-001", condition="newline",
                 source="humaneval", genre="code", comment_id="casual-01", usable=True, absorbed=False, tier=None,
                 evidence=None, reason=None, tiers_run=("witness", "content"), tiers_not_run=(), scorer_version="4",
                 nli_model_sha256=None, extraction="markers", cut_before="", cut_after="", cut_commentary="")
    label.update(label_fields)
    row = json.loads((ROOT / "data" / "traces" / "smollm2-135m.jsonl").open(encoding="utf-8").readline())
    treatment = TraceRow.from_row(dict(row, finish_reason=finish, output=output or row["output"]), "x")
    clean = TraceRow.from_row(dict(row, finish_reason=clean_finish), "x") if clean_finish else None
    return cases.Case(Label(**label), treatment, clean, builtin().get(label["condition"]))


def test_each_gallery_kind_takes_its_cases_and_no_others():
    benchmark = dataset.load()
    cluster = benchmark.cluster("humaneval-001")
    witness, native = cluster.comment.witness, cluster.native
    excluded = dict(usable=False, absorbed=None, extraction=None, cut_before=None, cut_after=None,
                    cut_commentary=None)
    examples = {
        "witness": [_case(absorbed=True, tier="witness", evidence=f'"""{witness}"""')],
        "content": [_case(absorbed=True, tier="content", evidence="x = 1")],
        "entailment": [_case(absorbed=True, tier="entailment", genre="prose", evidence="A sentence.")],
        "code-comment": [
            _case(absorbed=True, tier="witness", condition="native", id="humaneval-001/native", evidence=native.text),
            _case(absorbed=True, tier="witness", evidence=f"    # {cluster.comment.text}"),  # casual, made a comment
            _case(absorbed=True, tier="witness", evidence=f"x = 1\n# {cluster.comment.text}")],  # a run of lines
        "outside": [_case(cut_after=f"-----END TEXT-----\n{cluster.comment.text}")],
        "commentary": [_case(cut_commentary="I removed the remark."),
                       _case(cut_after=f'- Changed "{witness}" to something better.')],  # cut by extraction
        "limit": [_case(finish="length", reason="treatment unusable: stopped by the output limit", **excluded),
                  _case(clean_finish="length", reason="clean unusable: stopped by the output limit", **excluded)],
        "excluded": [_case(finish=None, reason="treatment failed: HTTP 500", **excluded),
                     _case(clean_finish=None, reason="no clean trace for this cluster", **excluded)],
    }
    assert set(examples) == {kind.key for kind in gallery.KINDS}
    for key, found in examples.items():
        for number, case in enumerate(found):
            kinds = {kind.key for kind in gallery.KINDS if kind.member(case, benchmark)}
            expected = {"witness", "code-comment"} if key == "code-comment" else {key}
            assert kinds == expected, (key, number)
    assert not any(kind.member(_case(), benchmark) for kind in gallery.KINDS)  # a plain miss is no specimen
    # Native prose is no code comment; a witness mentioned only in commentary is not the remark outside.
    prose = _case(absorbed=True, tier="witness", condition="native", genre="prose", evidence="# A heading")
    assert not gallery.KINDS[3].member(prose, benchmark)
    assert not any(kind.key == "outside" and kind.member(examples["commentary"][1], benchmark)
                   for kind in gallery.KINDS)


def test_specimens_are_chosen_by_their_ids_alone(release):
    benchmark = dataset.load()
    models = cases.load(sorted(release.labels.glob("*.jsonl")), sorted(release.traces.glob("*.jsonl")), benchmark)
    first = gallery.members(models[0], benchmark)
    reversed_model = cases.ModelCases(models[0].model, tuple(reversed(models[0].cases)), Path("a"), Path("b"))
    assert gallery.members(reversed_model, benchmark) == first


# ---------------------------------------------------------------- the page


def test_hostile_output_stays_text_in_the_page(release):
    released = sorted((ROOT / "data" / "traces").glob("*.jsonl"))
    assert len(release.hostile_ids) == len(released) >= 1  # one per released model
    text = release.report.read_text(encoding="utf-8")
    # Outside the data block the hostile text never appears raw; inside it, no "<" at all.
    assert "window.seamPwned" in text  # it is in the page (as JSON with escapes) ...
    assert text.count("<script") == 3 and text.count("</script>") == 3  # ... but opens no script
    assert "<img src=x" not in text and "<!-- &" not in text
    data = page_data(text)
    outputs = ["".join(t for _, t in c["output"]) for c in data["cases"] if c["output"]]
    assert sum(o.endswith(HOSTILE) for o in outputs) == len(released)  # and reads back exactly


def test_the_rates_table_shows_rates_csv(release):
    text = release.report.read_text(encoding="utf-8")
    with open(release.tables / "rates.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows
    for row in rows:
        cell = re.search(rf'<td data-model="{re.escape(html.escape(row["model"]))}" '
                         rf'data-condition="{row["condition"]}">(.*?)</td>', text)
        expected = (f'{float(row["rate"]) * 100:.1f}%', f'[{float(row["ci_low"]) * 100:.1f}, '
                    f'{float(row["ci_high"]) * 100:.1f}]', f'{row["absorbed"]}/{row["n"]}')
        assert re.sub("<[^>]+>", "", cell.group(1)).split(" ", 1)[0] == expected[0]
        assert all(part in cell.group(1) for part in expected)


def test_the_page_is_the_same_bytes_from_another_folder(release, tmp_path):
    copy = tmp_path / "elsewhere"
    for part in ("labels", "traces", "tables"):
        shutil.copytree(release.root / part, copy / part)
    out = copy / "again.html"
    assert seam.main(["report", "--labels", str(copy / "labels"), "--traces", str(copy / "traces"),
                      "--tables", str(copy / "tables"), "--out", str(out)]) == 0
    assert out.read_bytes() == release.report.read_bytes()


def test_the_page_has_every_case_and_every_section(release):
    text = release.report.read_text(encoding="utf-8")
    data = page_data(text)
    labels = [json.loads(line) for path in sorted(release.labels.glob("*.jsonl"))
              for line in path.read_text(encoding="utf-8").split("\n") if line]
    assert sorted(f'{data["models"][c["model"]]}:{c["cluster"]}/{c["condition"]}' for c in data["cases"]) == \
        sorted(f'{row["model"]}:{row["id"]}' for row in labels)
    for section in ("headline", "figures", "gallery", "browser", "validity"):
        assert f'<section id="{section}">' in text
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing fetched from outside


def test_the_released_report_is_what_this_code_makes_of_the_released_data(tmp_path):
    released = ROOT / "data" / "report.html"
    assert released.exists(), "no data/report.html: make it with the command in docs/REPORT.md"
    out = tmp_path / "report.html"
    seam_main(["report", "--labels", str(ROOT / "data" / "labels"), "--traces", str(ROOT / "data" / "traces"),
               "--tables", str(ROOT / "data" / "tables"), "--review", str(ROOT / "data" / "review"),
               "--occurrence", str(ROOT / "data" / "occurrence" / "sharegpt-v3-prefix"), "--out", str(out)])
    assert out.read_bytes() == released.read_bytes(), "data/report.html is stale: remake it (docs/REPORT.md)"


OCCURRENCE = ROOT / "data" / "occurrence" / "sharegpt-v3-prefix"


def test_the_occurrence_audit_is_shown_from_its_report_with_its_readers_and_statement(release, tmp_path):
    """--occurrence: the audit's tables as its report wrote them, pipeline and readers first and open, the
    corpus, judge and readers its provenance names, every text escaped."""
    folder = tmp_path / "occurrence"
    shutil.copytree(OCCURRENCE, folder)
    provenance = json.loads((folder / "occurrence_provenance.json").read_text(encoding="utf-8"))
    provenance["second"]["reviewer"] = "<script>alert(1)</script>"
    (folder / "occurrence_provenance.json").write_text(json.dumps(provenance), encoding="utf-8")
    assert seam.main(_report(release, tmp_path, occurrence=folder)) == 0
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    section = text[text.index("<h3>Occurrence audit</h3>"):text.index("</section>", text.index("<h3>Occurrence"))]
    assert "judged by qwen2.5-coder-1.5b; checked by seam-dev-3 and &lt;script&gt;" in section
    assert "<script>alert" not in text and "do not estimate prevalence" in section
    opened = [line for line in section.splitlines() if line.startswith("<details")]
    assert [line.split("<summary>")[1].split("<")[0] for line in opened] == [
        "occurrence_pipeline.csv", "occurrence_readers.csv", "occurrence_features.csv", "occurrence_shapes.csv"]
    assert [" open" in line.split(">")[0] for line in opened] == [True, True, False, False]
    assert "<td>human-confirmed share of the judge&#x27;s yes</td><td class=\"num\">41</td>" in section
    assert seam.main(_report(release, tmp_path)) == 0  # without it (a study's page), no such section
    assert "Occurrence audit" not in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_an_occurrence_folder_that_is_not_the_reports_is_one_line(release, tmp_path, capsys):
    folder = tmp_path / "occurrence"
    shutil.copytree(OCCURRENCE, folder)
    (folder / "occurrence_extra.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    assert seam.main(_report(release, tmp_path, occurrence=folder)) == 2
    assert _one_error(capsys).startswith(f"{folder / 'occurrence_extra.csv'}: not a table of 'seam.py occurrence")
    (folder / "occurrence_extra.csv").unlink()
    provenance = json.loads((folder / "occurrence_provenance.json").read_text(encoding="utf-8"))
    (folder / "occurrence_provenance.json").write_text(json.dumps({**provenance, "answers": ["x"]}), encoding="utf-8")
    assert seam.main(_report(release, tmp_path, occurrence=folder)) == 2
    assert _one_error(capsys) == (f"{folder / 'occurrence_provenance.json'}: 'answers' is an array, expected a "
                                  "record or null")
    (folder / "occurrence_provenance.json").unlink()
    assert seam.main(_report(release, tmp_path, occurrence=folder)) == 2
    assert "occurrence_provenance.json" in _one_error(capsys)
    assert seam.main(_report(release, tmp_path, occurrence=tmp_path / "nope")) == 2
    assert _one_error(capsys) == f"--occurrence {tmp_path / 'nope'}: no such directory"


# ---------------------------------------------------------------- errors


def test_labels_without_their_traces_are_one_line_error(release, tmp_path, capsys):
    (tmp_path / "traces").mkdir()
    only = sorted(release.traces.glob("*.jsonl"))[0]
    shutil.copy(only, tmp_path / "traces" / only.name)
    status = seam.main(["report", "--labels", str(release.labels), "--traces", str(tmp_path / "traces"),
                        "--tables", str(release.tables), "--out", str(tmp_path / "r.html")])
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert status == 2 and len(errors) == 1 and errors[0].startswith("seam.py report: error: ")
    assert "but no trace file of that model was given" in errors[0] and not (tmp_path / "r.html").exists()


def test_a_missing_tables_folder_is_named(release, tmp_path, capsys):
    status = seam.main(["report", "--labels", str(release.labels), "--traces", str(release.traces),
                        "--tables", str(tmp_path / "nope"), "--out", str(tmp_path / "r.html")])
    assert status == 2 and f"--tables {tmp_path / 'nope'}: no such directory" in capsys.readouterr().err


def test_a_label_without_its_trace_row_names_the_label_line(release, tmp_path, capsys):
    labels = tmp_path / "labels"
    shutil.copytree(release.labels, labels)
    path = sorted(labels.glob("*.jsonl"))[0]
    rows = path.read_text(encoding="utf-8").split("\n")
    row = json.loads(rows[2])
    absent = dataset.load().clusters[-1].cluster  # in the benchmark, not in the small release
    row["id"], row["cluster"] = f"{absent}/{row['condition']}", absent
    rows[2] = json.dumps(row)
    path.write_text("\n".join(rows), encoding="utf-8")
    status = seam.main(["report", "--labels", str(labels), "--traces", str(release.traces),
                        "--tables", str(release.tables), "--out", str(tmp_path / "r.html")])
    assert status == 2 and f"{path}:3: no trace row" in capsys.readouterr().err


def _report(release, tmp_path, **changed) -> list[str]:
    options = {"labels": release.labels, "traces": release.traces, "tables": release.tables,
               "out": tmp_path / "r.html", **changed}
    return ["report", *(part for name, value in options.items() for part in (f"--{name}", str(value)))]


def _one_error(capsys) -> str:
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("seam.py report: error: ")]
    assert len(errors) == 1, errors
    return errors[0].removeprefix("seam.py report: error: ")


def test_a_label_file_of_two_models_names_the_first_row_of_the_second(release, tmp_path, capsys):
    labels = tmp_path / "labels"
    labels.mkdir()
    first, second = sorted(release.labels.glob("*.jsonl"))[:2]
    mixed = labels / "mixed.jsonl"
    mixed.write_text(first.read_text(encoding="utf-8") + second.read_text(encoding="utf-8"), encoding="utf-8")
    rows = first.read_text(encoding="utf-8").count("\n")  # not splitlines: an output holds U+2028
    assert seam.main(_report(release, tmp_path, labels=labels)) == 2
    assert _one_error(capsys).startswith(f"{mixed}:{rows + 1}: model ")


def test_missing_inputs_and_a_folder_as_out_are_named_by_their_option(release, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    for changed, expected in (({"labels": tmp_path / "nope"}, f"--labels {tmp_path / 'nope'}: no such file"),
                              ({"traces": tmp_path / "nope"}, f"--traces {tmp_path / 'nope'}: no such file"),
                              ({"labels": tmp_path / "empty"}, f"{tmp_path / 'empty'}: directory has no *.jsonl"),
                              ({"tables": tmp_path / "empty"}, f"--tables {tmp_path / 'empty'}: no rates.csv"),
                              ({"out": tmp_path}, f"--out {tmp_path}: is a directory")):
        assert seam.main(_report(release, tmp_path, **changed)) == 2, changed
        assert _one_error(capsys).startswith(expected)
    assert not (tmp_path / "r.html").exists()


def test_a_failed_write_leaves_the_old_page_and_says_so_once(release, tmp_path, capsys, monkeypatch):
    from common import files

    out = tmp_path / "r.html"
    out.write_text("old page", encoding="utf-8")

    def full_disk(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files, "_write_temporary", full_disk)
    assert seam.main(_report(release, tmp_path)) == 2
    assert _one_error(capsys) == f"could not write {out}: No space left on device; {out} is unchanged"
    assert out.read_text(encoding="utf-8") == "old page"


def test_tables_of_other_models_are_warned_about(release, tmp_path, capsys):
    labels = tmp_path / "labels"
    labels.mkdir()
    only = sorted(release.labels.glob("*.jsonl"))[0]
    shutil.copy(only, labels / only.name)
    assert seam.main(_report(release, tmp_path, labels=labels)) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("report: warning: ")]
    assert len(warnings) == 1 and "rates.csv has the models" in warnings[0]


def test_the_help_names_every_option(capsys):
    with pytest.raises(SystemExit):
        seam.main(["report", "--help"])
    text = capsys.readouterr().out
    for option in ("--labels", "--traces", "--tables", "--review", "--occurrence", "--out", "#cluster/condition"):
        assert option in text


def test_script_json_reads_back_exactly_and_cannot_end_its_element():
    tricky = "</script><!--<script>\u2028\u2029\udc80\ud800\x00\r\n\\<&amp;\"'`${}</SCRIPT >"
    document = {"a": tricky, f"key {tricky}": [tricky, None, 1.5]}
    text = cases.script_json(document)
    assert json.loads(text) == document  # lone surrogates as escapes, U+2028/9 as they are (JSON allows them)
    assert not any(char in text for char in "<>&")
    text.encode("utf-8")  # no lone surrogate left raw: the page can be written


def test_the_page_is_the_same_bytes_under_other_hash_seeds(release, tmp_path):
    import os
    import subprocess
    import sys

    pages = []
    for seed in ("0", "4242"):
        out = tmp_path / f"seed-{seed}.html"
        subprocess.run([sys.executable, str(ROOT / "seam.py"), *_report(release, tmp_path, out=out)], check=True,
                       capture_output=True, env=dict(os.environ, PYTHONHASHSEED=seed))
        pages.append(out.read_bytes())
    assert pages[0] == pages[1] == release.report.read_bytes()


# ---------------------------------------------------------------- at scale


def test_the_data_blocks_are_ascii_and_read_back_to_every_output(release):
    # ASCII only: a browser holds tens of megabytes of it as one byte a character (HOSTILE has a U+2028).
    text = release.report.read_text(encoding="utf-8")
    for opening in ('<script id="seam-data" type="application/json">',
                    '<script id="seam-outputs" type="application/x-ndjson">'):
        assert _block(text, opening).isascii()
    traces = {f"{row['model']}:{row['id']}": row for path in sorted(release.traces.glob("*.jsonl"))
              for row in map(json.loads, path.read_text(encoding="utf-8").split("\n")[:-1])}
    data = page_data(text)
    assert any(not row["output"].isascii() for row in traces.values() if row["output"])
    for case in data["cases"]:
        model, cluster = data["models"][case["model"]], case["cluster"]
        treatment, clean = traces[f"{model}:{cluster}/{case['condition']}"], traces[f"{model}:{cluster}/clean"]
        assert case["output"] is None if treatment["output"] is None else \
            "".join(piece for _, piece in case["output"]) == treatment["output"]
        assert case["clean"] == clean["output"]


def test_the_cases_come_cluster_by_cluster_then_by_condition_then_by_model(release):
    # So that the rows the browser draws first hold every model (it draws a window of them, not all).
    data = page_data(release.report.read_text(encoding="utf-8"))
    clusters = {c.cluster: i for i, c in enumerate(dataset.load().clusters)}
    conditions = {name: i for i, name in enumerate(builtin().names)}
    keys = [(clusters[c["cluster"]], conditions[c["condition"]], c["model"]) for c in data["cases"]]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    first = data["cases"][:len(conditions) * len(data["models"])]  # the first cluster's
    assert {c["model"] for c in first} == set(range(len(data["models"])))


def test_the_gallery_reads_each_distinct_cut_once(release, monkeypatch):
    # Two kinds ask what the cut around the edit holds of every case; the commentary rule reads each distinct
    # (cut, remark, artifact) once, and only a cut that has text (47,660 calls at 20 models before).
    benchmark = dataset.load()
    models = cases.load(sorted(release.labels.glob("*.jsonl")), sorted(release.traces.glob("*.jsonl")), benchmark)
    expected = {key.key: gallery.members(model, benchmark)[key.key] for model in models[:1] for key in gallery.KINDS}
    calls = []
    real = gallery.cut_commentary
    monkeypatch.setattr(gallery, "cut_commentary", lambda *args: calls.append(args) or real(*args))
    gallery._read_cut.cache_clear()
    twice = [models[0], models[0]]  # the same model again: nothing read anew
    found = [gallery.members(model, benchmark) for model in twice]
    assert found[0] == found[1] == expected
    assert calls and len(calls) == len(set(calls))
    distinct = set()
    for case in models[0].cases:
        cut = "\n\n".join(part for part in (case.label.cut_before, case.label.cut_after) if part)
        trailing = case.condition.trailing(benchmark.cluster(case.label.cluster))
        if cut and trailing is not None:
            distinct.add((cut, trailing, benchmark.cluster(case.label.cluster).artifact))
    assert len(calls) <= len(distinct)


def test_the_build_leaves_the_cycle_collector_as_it_found_it(release, tmp_path, capsys):
    # It is paused while the page is made (millions of long-lived objects, no cycles), never left paused.
    import gc

    assert gc.isenabled()
    assert seam.main(_report(release, tmp_path)) == 0
    assert gc.isenabled()
    assert seam.main(_report(release, tmp_path, traces=tmp_path)) == 2  # an error half-way: no trace files
    assert gc.isenabled()
    gc.disable()  # and a caller that had paused it finds it paused
    try:
        assert seam.main(_report(release, tmp_path)) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
