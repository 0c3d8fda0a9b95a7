"""Condition files: the built-in six are defined in one, byte-identical to the benchmark's messages; a
user's file is read by the same code, refused with one line naming file and key when malformed, and its
layouts are checked on every cluster (the artifact verbatim, markers that collide with nothing)."""

from __future__ import annotations

import doctest
import hashlib
import importlib
import json
import os
from pathlib import Path

import pytest

import seam
from benchmark import conditions, dataset
from benchmark.check import check
from common import jsonl
from common.errors import UserError
from common.records import CONDITIONS, Label, Request, TraceRow

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "conditions" / "example.toml"
# Recorded before the built-in layouts moved into benchmark/conditions.toml (render.py's f-strings): the
# SHA-256 of all 300 x 6 messages (each followed by a NUL byte, clusters in file order, conditions in
# CONDITIONS order), and of the whole output of `seam.py prompts`, for the benchmark of this checksum.
BENCHMARK_SHA256 = "1b69a446d4389755509437650beced9c6ef2702a909f5eaee1ae8c317e0cb598"
MESSAGES_SHA256 = "9a56580d9bfaa0b592bdb6ebd55e70aee9edf01eea22012dc05aaacd9b51f42d"
PROMPTS_SHA256 = "615469c4eccba1eb5cf329613f4659ad68d2ab7fda57e540b1b64c0c14b06520"


def write(tmp_path: Path, text: str, name: str = "mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- the built-in six


def test_the_builtin_six_render_every_cluster_byte_for_byte_as_before():
    benchmark = dataset.load()
    manifest = json.loads((ROOT / "data" / "benchmark" / "MANIFEST.json").read_text(encoding="utf-8"))
    assert benchmark.sha256 == manifest["benchmark_sha256"] == BENCHMARK_SHA256
    by_render, by_definition = hashlib.sha256(), hashlib.sha256()
    builtin = conditions.builtin()
    for cluster in benchmark.clusters:
        for name in CONDITIONS:
            chosen = builtin.get(name)
            trailing = {"none": None, "casual": cluster.comment.text, "native": cluster.native.text}[chosen.pool]
            by_render.update(chosen.render(cluster.instruction, cluster.artifact, trailing).encode("utf-8") + b"\0")
            by_definition.update(builtin.get(name).message(cluster).encode("utf-8") + b"\0")
    assert by_render.hexdigest() == by_definition.hexdigest() == MESSAGES_SHA256
    rows = "".join(jsonl.dumps(request.to_row()) for request in dataset.requests(benchmark))
    assert hashlib.sha256(rows.encode("utf-8")).hexdigest() == PROMPTS_SHA256


def test_the_builtin_file_defines_the_six_their_contrasts_and_phrases():
    builtin = conditions.builtin()
    assert builtin.names == CONDITIONS and builtin.treatments == CONDITIONS[1:] and builtin.files == ()
    assert builtin.contrasts == (("newline", "blank"), ("newline", "boundary"), ("boundary", "mitigation"),
                                 ("newline", "native"))
    assert {c.name: (c.phrase, c.plural) for c in builtin.conditions} == {
        "clean": ("no comment", False), "newline": ("a bare line break", False), "blank": ("a blank line", False),
        "boundary": ("boundary markers", True), "mitigation": ("the mitigation instruction", False),
        "native": ("artifact-native comments", True)}
    assert all(c.builtin and c.origin.endswith("benchmark/conditions.toml") for c in builtin.conditions)


def test_the_example_file_renders_exactly_the_three_layouts():
    defined = conditions.load(EXAMPLE)
    assert [c.name for c in defined.user] == ["xml-tags", "fenced", "only-revised"]
    assert defined.contrasts[4:] == (("newline", "xml-tags"), ("newline", "fenced"), ("newline", "only-revised"),
                                     ("boundary", "xml-tags"))
    for cluster in dataset.load().clusters[::37]:
        i, a, c = cluster.instruction, cluster.artifact, cluster.comment.text
        assert defined.get("xml-tags").message(cluster) == i + "\n\n<document>\n" + a + "\n</document>\n" + c
        assert defined.get("fenced").message(cluster) == i + "\n\n```\n" + a + "\n```\n" + c
        assert defined.get("only-revised").message(cluster) == (
            i + " Return only the revised text, with nothing before or after it." + "\n\n" + a + "\n" + c)


def test_doctests_of_the_condition_modules_pass():
    for name in ("common.markers", "benchmark.conditions", "benchmark.collisions"):
        result = doctest.testmod(importlib.import_module(name))
        assert result.failed == 0 and result.attempted >= 1, name


# ---------------------------------------------------------------- malformed files


@pytest.mark.parametrize("text, message", [
    ('[conditions.x]\npool = "casul"\n', r"mine\.toml: conditions\.x\.pool is 'casul', expected \"casual\" or "
                                          r"\"native\" \(which comment trails the paste\), or \"none\" \(a control, "
                                          r"without one\)$"),
    ("[conditions.x]\nbreaks = 1\n", r"mine\.toml: conditions\.x\.pool is missing, expected \"casual\" or \"native\""),
    ('[conditions.x]\npool = "none"\ncontrol = "clean"\n', r"conditions\.x\.control: a condition without a comment "
                                                          r"is a control itself"),
    ('[conditions.x]\npool = "casual"\nopne = "<a>"\n', r"mine\.toml: conditions\.x\.opne: unknown key; expected "
                                                       r"some of pool, breaks, sentence, open, close"),
    ('[conditions.x]\npool = "casual"\nbreaks = "two"\n', r"conditions\.x\.breaks is 'two', expected a whole number "
                                                          r"from 1 to 3"),
    ('[conditions.x]\npool = "casual"\nbreaks = true\n', r"conditions\.x\.breaks is True, expected a whole number"),
    ('[conditions.x]\npool = "casual"\nbreaks = 4\n', r"conditions\.x\.breaks is 4, expected a whole number"),
    ('[conditions.x]\npool = "casual"\nplural = "yes"\n', r"conditions\.x\.plural is 'yes', expected true or false"),
    ('[conditions.x]\npool = "casual"\nopen = 7\n', r"conditions\.x\.open is 7, expected one line of text"),
    ('[conditions.x]\npool = "casual"\nclose = "a\\nb"\n', r"conditions\.x\.close is 'a\\nb', expected one line"),
    ('[conditions.x]\npool = "casual"\nopen = " <a>"\n', r"conditions\.x\.open is ' <a>', expected one line of text "
                                                        r"without white space at either end"),
    ('[conditions.x]\npool = "casual"\nopen = "**"\n', r"conditions\.x\.open is '\*\*', expected a line with more "
                                                      r"than emphasis marks"),
    ('[conditions.x]\npool = "casual"\nsentence = ""\n', r"conditions\.x\.sentence is '', expected one line"),
    ('[conditions.newline]\npool = "casual"\n', r"mine\.toml: conditions\.newline: 'newline' is a built-in "
                                                r"condition \(conditions\.toml\); give yours another name"),
    ('[conditions.XML]\npool = "casual"\n', r"mine\.toml: conditions\.'XML': a condition name is lower-case letters"),
    ('[conditions."a b"]\npool = "casual"\n', r"conditions\.'a b': a condition name is lower-case"),
    ('[conditions.x]\npool = "casual"\n[conditions.x]\npool = "native"\n',
     r"mine\.toml: not valid TOML \(Cannot declare \('conditions', 'x'\) twice \(at line 3, column 14\)\)"),
    ('[conditions.x]\npool = "casual"\nsame_prefix_as = "nowhere"\n',
     r"conditions\.x\.same_prefix_as is 'nowhere', expected another defined condition"),
    ('[conditions.x]\npool = "casual"\nsame_prefix_as = "x"\n', r"conditions\.x\.same_prefix_as is 'x', expected "
                                                                r"another"),
    ('[conditions.x]\npool = "casual"\nsame_suffix_as = "native"\n',
     r"conditions\.x\.same_suffix_as is 'native', whose comment is native, not casual"),
    ('[conditions.x]\npool = "casual"\n[other]\na = 1\n', r"mine\.toml: unknown key 'other'; a condition file holds "
                                                          r"'contrasts', 'recovered' and \[conditions\.NAME\] tables"),
    ('conditions = 3\n', r"mine\.toml: 'conditions' is 3, expected \[conditions\.NAME\] tables"),
    ('[conditions.x]\n', r"conditions\.x\.pool is missing"),
    ('[conditions]\n', r"mine\.toml: defines no condition and no contrast"),
    ('[conditions]\nx = "casual"\n', r"mine\.toml: conditions\.x is 'casual', expected a table of keys"),
    ('contrasts = "newline vs x"\n[conditions.x]\npool = "casual"\n',
     r"mine\.toml: contrasts is 'newline vs x', expected a list of \"FIRST vs SECOND\" strings"),
    ('contrasts = ["newline versus x"]\n[conditions.x]\npool = "casual"\n',
     r"mine\.toml: contrasts\[0\] is 'newline versus x', expected a list of"),
    ('contrasts = ["newline vs x", "newline vs y"]\n[conditions.x]\npool = "casual"\n',
     r"mine\.toml: contrasts\[1\] is 'newline vs y': 'y' is not defined here or built in"),
    ('contrasts = ["clean vs x"]\n[conditions.x]\npool = "casual"\n', r"contrasts\[0\] is 'clean vs x': 'clean' has no "
                                                                      r"comment"),
    ('contrasts = ["x vs x"]\n[conditions.x]\npool = "casual"\n', r"contrasts\[0\] is 'x vs x': expected two"),
    ('contrasts = ["newline vs blank"]\n', r"contrasts\[0\] is 'newline vs blank': that contrast is built in already"),
    ('contrasts = ["newline vs x", "newline vs x"]\n[conditions.x]\npool = "casual"\n',
     r"contrasts\[1\] is 'newline vs x': that contrast is listed twice already"),
    ("".join(f'[conditions.c{i}]\npool = "casual"\n' for i in range(6)),
     r"mine\.toml: 6 conditions \(c0, c1, c2, c3, c4, c5\); a condition file defines at most 5, so that rates\.svg "
     r"can tell them and the five built-in treatments apart; split them over two condition files \(two studies\)$"),
    # the reversed pair is the same test: refused like the pair itself
    ('contrasts = ["blank vs newline"]\n', r"contrasts\[0\] is 'blank vs newline': that contrast is built in as "
                                          r"'newline vs blank' already$"),
    ('contrasts = ["native vs newline"]\n', r"contrasts\[0\] is 'native vs newline': that contrast is built in as "
                                           r"'newline vs native' already$"),
    ('contrasts = ["x vs newline", "newline vs x"]\n[conditions.x]\npool = "casual"\n',
     r"contrasts\[1\] is 'newline vs x': that contrast is listed as 'x vs newline' already$"),
    # a control character would go into every message, CSV cell and the page as it is
    ('[conditions.x]\npool = "casual"\nopen = "<a\\u0000>"\n', r"conditions\.x\.open is '<a\\x00>', expected one line "
                                                             r"of text without white space at either end nor control"),
    ('[conditions.x]\npool = "casual"\nclose = "END\\tTEXT"\n', r"conditions\.x\.close is 'END\\tTEXT', expected one"),
    ('[conditions.x]\npool = "casual"\nphrase = "tags\\u001b[1m"\n', r"conditions\.x\.phrase is 'tags\\x1b\[1m', "
                                                                  r"expected one line"),
    ("[conditions.x\n", r"mine\.toml: not valid TOML \(.*\(at line 1, column 14\)\)"),
    # tomllib's RecursionError and ValueError (issue 25: tracebacks out of tomllib before)
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", r"mine\.toml: not valid TOML \(nested too deeply to read\)"),
    ("x = " + "7" * 5000 + "\n", r"mine\.toml:1: key 'x' holds an integer of more than 4,300 digits"),
])
def test_a_malformed_condition_file_is_one_line_naming_file_and_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(UserError, match=message) as caught:
        conditions.load(path)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(str(path))


def test_a_condition_file_that_is_missing_or_not_text_is_named(tmp_path):
    with pytest.raises(UserError, match=r"nope\.toml: no such file, expected a condition file \(TOML\)"):
        conditions.load(tmp_path / "nope.toml")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(UserError, match=r"bin\.toml: not UTF-8 text|bin\.toml: not valid TOML"):
        conditions.load(tmp_path / "bin.toml")


def test_the_commands_refuse_a_malformed_file_with_exit_2_and_one_line(tmp_path, capsys):
    path = write(tmp_path, '[conditions.x]\npool = "casual"\nopne = "<a>"\n')
    for argv in (["check"], ["prompts"], ["tables", str(tmp_path), "--out", str(tmp_path / "t")]):
        assert seam.main([*argv, "--conditions", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{path}: conditions.x.opne: unknown key" in err, err


def test_conditions_takes_a_file_and_points_a_list_of_names_at_only(capsys):
    for command in (["prompts"], ["check"], ["run", "config.toml"], ["score", "t.jsonl", "--out", "l.jsonl"],
                    ["tables", "labels", "--out", "t"],
                    ["report", "--labels", "l", "--traces", "t", "--tables", "x", "--out", "r.html"]):
        with pytest.raises(SystemExit) as exited:
            seam.main([*command, "--conditions", "clean,newline"])
        assert exited.value.code == 2
        assert ("argument --conditions: expected a condition file (TOML), got 'clean,newline'; to keep only some "
                "conditions, use --only clean,newline") in capsys.readouterr().err
    with pytest.raises(SystemExit):
        seam.main(["check", "--conditions", "missing.toml"])
    assert "argument --conditions: no such condition file: missing.toml" in capsys.readouterr().err


# ---------------------------------------------------------------- seam.py check


def test_the_example_file_passes_every_check():
    result = check(conditions=conditions.load(EXAMPLE))
    assert result.problems == []
    assert result.summary[0] == (f"clusters: 300 from 6 sources; requests: 2700 (9 conditions: 6 built-in, 3 from "
                                 f"{EXAMPLE})")


def test_a_marker_that_collides_with_an_artifact_fails_the_check_naming_cluster_and_marker(tmp_path, capsys):
    path = write(tmp_path, '[conditions.else-label]\npool = "casual"\nopen = "Pasted text:"\nclose = "else:"\n')
    result = check(conditions=conditions.load(path))
    mine = [p for p in result.problems if " else-label: " in p]
    assert mine and len(mine) == len(result.problems)  # the built-in six still pass
    assert "humaneval-001 else-label: marker 'else:' collides: it occurs in the artifact" in "\n".join(mine)
    assert all("marker 'else:' collides: it occurs in the" in p for p in mine)
    assert all(p.split(": ")[0].rsplit(":", 1)[0].endswith(".jsonl") for p in mine)  # file:line first
    assert seam.main(["check", "--conditions", str(path)]) == 1
    assert "check: FAILED" in capsys.readouterr().out


def test_a_marker_planted_in_an_artifact_is_found_restyled_too(tmp_path):
    copy = tmp_path / "benchmark"
    copy.mkdir()
    for name in ("permissive.jsonl", "sharealike.jsonl", "noncommercial.jsonl", "MANIFEST.json"):
        (copy / name).write_bytes((ROOT / "data" / "benchmark" / name).read_bytes())
    lines = (copy / "permissive.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[0])
    row["artifact"] = row["artifact"] + "\n**</Document>**\nmore"
    lines[0] = jsonl.dumps(row)
    (copy / "permissive.jsonl").write_text("".join(lines), encoding="utf-8")
    problems = check(copy, conditions.load(EXAMPLE)).problems
    found = [p for p in problems if "xml-tags: marker" in p]
    assert found == [f"{copy / 'permissive.jsonl'}:1: {row['cluster']} xml-tags: marker '</document>' collides: "
                     "it occurs in the artifact"]


def test_a_sentence_or_marker_holding_the_comment_and_a_broken_declaration_fail_the_check(tmp_path):
    path = write(tmp_path, '[conditions.loud]\npool = "casual"\nsentence = "It goes out with friday\'s newsletter."\n'
                           'same_prefix_as = "clean"\n')
    problems = check(conditions=conditions.load(path)).problems
    witness = [p for p in problems if "collides with the condition's sentence or markers: witness" in p]
    assert len(witness) == 12  # the clusters that carry that casual comment
    assert all("comment casual-" in p for p in witness)
    assert len([p for p in problems if "differs from clean before the artifact ends (same_prefix_as)" in p]) == 300


def test_the_builtin_layouts_are_checked_by_the_same_rules():
    builtin = conditions.builtin()
    boundary = builtin.get("boundary")
    broken = conditions.ConditionSet(
        tuple(c if c.name != "mitigation" else type(c)(**{**c.__dict__, "close": "-----STOP-----"})
              for c in builtin.conditions), builtin.contrasts)
    problems = check(conditions=broken).problems
    assert len(problems) == 300 and all("mitigation: differs from boundary after the instruction" in p
                                        for p in problems)
    assert boundary.close == "-----END TEXT-----"


# ---------------------------------------------------------------- records and stages accept user names


def test_records_take_any_condition_name_and_refuse_what_cannot_be_one():
    request = dataset.requests(conditions=["xml-tags"], cluster_ids=["humaneval-001"],
                               defined=conditions.load(EXAMPLE))[0]
    assert Request.from_row(request.to_row(), "r:1") == request and request.id == "humaneval-001/xml-tags"
    for bad in ("XML", "xml_tags", "-x", "x-", "a" * 41, ""):
        with pytest.raises(UserError, match=r"^r:1: field 'condition' is .*, expected a condition name"):
            Request.from_row({**request.to_row(), "condition": bad, "id": f"humaneval-001/{bad}"}, "r:1")
    label = {"id": "a-001/xml-tags", "model": "m", "cluster": "a-001", "condition": "xml-tags", "source": "a",
             "genre": "code", "comment_id": "casual-01", "usable": False, "absorbed": None, "tier": None,
             "evidence": None, "reason": "r", "tiers_run": [], "tiers_not_run": [], "scorer_version": "4",
             "nli_model_sha256": None, "extraction": None, "cut_before": None, "cut_after": None,
             "cut_commentary": None}
    assert Label.from_row(label, "l:1").condition == "xml-tags"
    with pytest.raises(UserError, match="field 'condition' is 'Xml'"):
        Label.from_row({**label, "condition": "Xml", "id": "a-001/Xml"}, "l:1")
    assert TraceRow  # the same check (tests/test_scorer_score.py, tests/test_validity_cli.py)


def test_prompts_renders_a_condition_file_and_refuses_an_undefined_condition(capsys):
    assert seam.main(["prompts", "--conditions", str(EXAMPLE), "--only", "xml-tags,only-revised",
                      "--sources", "austen"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 100 and {r["condition"] for r in rows} == {"xml-tags", "only-revised"}
    assert all(r["comment"] and r["message"].endswith("\n" + r["comment"]) for r in rows)
    assert seam.main(["prompts", "--conditions", str(EXAMPLE), "--cluster-ids", "austen-001"]) == 0
    assert [json.loads(line)["condition"] for line in capsys.readouterr().out.splitlines()] == [
        *CONDITIONS, "xml-tags", "fenced", "only-revised"]
    assert seam.main(["prompts", "--only", "xml-tags"]) == 2
    err = capsys.readouterr().err
    assert err == ("seam.py prompts: error: condition 'xml-tags' is not defined (built-in: clean, newline, blank, "
                   f"boundary, mitigation, native); pass --conditions {os.path.relpath(EXAMPLE)}, the condition file "
                   "that defines it (docs/CONDITIONS.md)\n")
    assert seam.main(["prompts", "--only", "sideways"]) == 2
    assert capsys.readouterr().err.endswith("; pass --conditions FILE, the condition file that defines it "
                                            "(docs/CONDITIONS.md)\n")


def test_an_undefined_condition_is_refused_naming_the_project_file_that_defines_it(tmp_path):
    """A study's traces or labels read without --conditions: the one line names the file to pass, found among
    data/conditions/, also when another condition file was given instead."""
    with pytest.raises(UserError) as caught:
        conditions.builtin().get("fenced", "t.jsonl:3")
    assert str(caught.value) == (
        "t.jsonl:3: condition 'fenced' is not defined (built-in: clean, newline, blank, boundary, mitigation, "
        f"native); pass --conditions {os.path.relpath(EXAMPLE)}, the condition file that defines it "
        "(docs/CONDITIONS.md)")
    other = conditions.load(write(tmp_path, '[conditions.mine]\npool = "casual"\n'))
    message = other.undefined("only-revised")
    assert message.startswith(f"condition 'only-revised' is not defined, neither built in nor in {other.files[0]} "
                              "(which defines mine); pass --conditions ")
    assert message.endswith(f"{os.path.relpath(EXAMPLE)}, the condition file that defines it (docs/CONDITIONS.md)")
    assert conditions.load(EXAMPLE).undefined("sideways").endswith("(which defines xml-tags, fenced, only-revised)")


def test_the_old_list_form_of_conditions_is_pointed_at_only_spelled_to_paste(capsys):
    for given, only in (("clean, newline", "clean,newline"), ("Newline", "Newline")):
        with pytest.raises(SystemExit):
            seam.main(["run", "config.toml", "--conditions", given])
        assert (f"argument --conditions: expected a condition file (TOML), got {given!r}; to keep only some "
                f"conditions, use --only {only}\n") in capsys.readouterr().err
    with pytest.raises(SystemExit):
        seam.main(["run", "--help"])
    assert "--conditions data/conditions/example.toml \\\n      --only xml-tags" in capsys.readouterr().out


# ---------------------------------------------------------------- the figure and the sentences


@pytest.mark.parametrize("models", [1, 20])
def test_the_rates_figure_draws_ten_series_inside_its_canvas(models):
    from stats.rates_figure import Point, Series, rates_figure
    from stats.svg_boxes import outside_canvas, shape_boxes

    names = (*CONDITIONS[1:], "xml-tags", "fenced", "only-revised", "pasted-label", "attachment-header")
    series = tuple(Series(name, tuple(Point(0.1 * (i % 10), 0.0, min(1.0, 0.1 * (i % 10) + 0.1))
                                      for _ in range(models))) for i, name in enumerate(names))
    svg = rates_figure(tuple(f"model-{m:02d}" for m in range(models)), series, "t")
    assert outside_canvas(svg) == ()
    points = [p.box for p in shape_boxes(svg) if p.kind in ("circle", "polygon")][len(names):]
    centres = sorted({round((b.left + b.right) / 2, 1) for b in points})
    assert len(centres) == 10 * models  # every marker of every model apart


def test_the_summary_sentences_name_a_condition_by_its_phrase():
    from stats.headline import HeadlineCount, headline_sentence

    defined = conditions.load(EXAMPLE)
    count = HeadlineCount("newline", "fenced", 1, 1, 0, 1, 0, 0, 0)
    assert headline_sentence(count, defined=defined).startswith(
        "Compared with a bare line break, a fenced block significantly reduces absorption in 1 of 1 model")
    plural = HeadlineCount("boundary", "xml-tags", 1, 1, 0, 1, 0, 0, 0)
    assert headline_sentence(plural, defined=defined).startswith(
        "Compared with boundary markers, XML document tags significantly reduce absorption")
    assert "the fenced condition" in headline_sentence(count)  # without the file: the default phrase
