"""The occurrence audit end to end on a made-up corpus: screen, judge (against the fake server), sample,
annotate (on the answer pages' server), report; and that no message text reaches any file it writes."""

from __future__ import annotations

import dataclasses
import hashlib
import http.client
import io
import json
import threading
import urllib.parse

import pytest
from support.fakeserver import serve, write_config
from support.occurrencedata import (
    NEGATIVES,
    PLANTS,
    POSITIVES,
    all_output_text,
    array_text,
    conversations,
    sharegpt_rows,
    write_corpus,
)

import seam
from common import jsonl
from common.answerserver import AnswerServer
from common.errors import UserError
from occurrence import annotate, judge, report, sample, screen, store
from occurrence.texts import read_texts
from runner.retry import RetryPolicy

FAST = RetryPolicy(max_retries=1, base_s=0.01, cap_s=0.02)


def _main(argv) -> int:
    return seam.main(argv)


@pytest.fixture
def screened(tmp_path):
    corpus = write_corpus(tmp_path / "corpus" / "chat.json", "sharegpt")
    out = tmp_path / "out" / "chat.candidates.jsonl"
    assert _main(["occurrence", "screen", str(corpus), "--format", "sharegpt", "--out", str(out)]) == 0
    return corpus, out


# ------------------------------------------------------------------------------------------- screen

def test_the_screen_keeps_the_positives_and_counts_each_repeated_message_once(screened):
    corpus, out = screened
    file = store.read_candidates(out)
    header = file.header
    assert (header.conversations, header.user_turns, header.candidates, header.unique_candidates) == (
        len(conversations()), len(POSITIVES) + len(NEGATIVES) + 2, len(POSITIVES) + 1, len(POSITIVES))
    assert [c.conversation for c in file.candidates] == [f"conv-{n}" for n in range(len(POSITIVES))] + ["conv-repeat"]
    assert [c.repeat for c in file.candidates] == [1] * len(POSITIVES) + [2]
    assert file.candidates[0].message_sha256 == file.candidates[-1].message_sha256
    ref = header.corpora[0]
    assert (ref.file, ref.format, ref.container, ref.member, ref.truncated) == ("chat.json", "sharegpt",
                                                                                 "json_array", None, None)


def test_the_screen_reports_progress_rate_and_eta_then_the_time_it_took(tmp_path):
    from occurrence.progress import Progress

    log, now = io.StringIO(), [0.0]
    progress = Progress(log, "screen c.json", 1000, "messages/s", interval_s=10, clock=lambda: now[0])
    for step in range(1, 40):
        now[0] = float(step)
        progress.update(25 * step, 100 * step, f"{step} conversations")
    progress.update(1000, 4000, "40 conversations", final=True)
    lines = log.getvalue().splitlines()
    assert lines[:2] == ["screen c.json: 2.5 % of the corpus · 1 conversations · 100 messages/s · ETA 0m39s",
                         "screen c.json: 27.5 % of the corpus · 11 conversations · 100 messages/s · ETA 0m29s"]
    assert len(lines) == 5  # one every 10 s, and the last
    assert lines[-1].endswith("100.0 % of the corpus · 40 conversations · 103 messages/s · took 0m39s")
    corpus = write_corpus(tmp_path / "c.jsonl", "lmsys")
    log = io.StringIO()
    screen.screen(corpus, "lmsys", log=log)
    assert "screen c.jsonl: 100.0 % of the corpus · 9 conversations · 5 candidates ·" in log.getvalue()


def test_the_screen_writes_the_same_bytes_for_the_same_file_anywhere(screened, tmp_path):
    corpus, out = screened
    elsewhere = tmp_path / "other" / "chat.json"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(corpus.read_bytes())
    again = tmp_path / "again.jsonl"
    assert _main(["occurrence", "screen", str(elsewhere), "--format", "sharegpt", "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()


def test_the_offsets_find_the_seam_in_the_corpus_again(screened):
    corpus, out = screened
    file = store.read_candidates(out)
    for number, candidate in enumerate(file.unique()):
        text = POSITIVES[number]
        assert screen.message_sha256(text) == candidate.message_sha256 and len(text) == candidate.chars
        remark = text[candidate.remark_start:candidate.remark_end]
        assert PLANTS[number] in remark and text.endswith(remark)


def test_several_corpus_files_are_screened_in_order_and_named_per_candidate(tmp_path):
    first = write_corpus(tmp_path / "a.jsonl", "wildchat")
    second = write_corpus(tmp_path / "b.jsonl.gz", "wildchat")
    out = tmp_path / "c.jsonl"
    assert _main(["occurrence", "screen", str(first), str(second), "--format", "wildchat", "--out", str(out)]) == 0
    file = store.read_candidates(out)
    assert [ref.file for ref in file.header.corpora] == ["a.jsonl", "b.jsonl.gz"]
    assert file.header.unique_candidates == len(POSITIVES)  # the second file repeats the first
    assert [c.corpus for c in file.candidates] == [0] * (len(POSITIVES) + 1) + [1] * (len(POSITIVES) + 1)


def test_a_wrong_format_flag_is_named_with_the_formats_there_are(screened, tmp_path, capsys):
    corpus, out = screened
    assert _main(["occurrence", "screen", str(corpus), "--format", "wildchat", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert f"{corpus}:2: field 'conversation_hash' is missing" in err
    assert "read as --format wildchat: is that this corpus's row shape? (one of sharegpt, wildchat, lmsys, jsonl" in err


def test_a_corpus_without_a_complete_conversation_is_refused(tmp_path, capsys):
    path = tmp_path / "cut.json"
    path.write_text('[{"id": "a", "conversations": [', encoding="utf-8")
    assert _main(["occurrence", "screen", str(path), "--format", "sharegpt", "--out", str(tmp_path / "o")]) == 2
    assert "no complete conversation in it" in capsys.readouterr().err


def test_a_wrong_out_is_refused_before_the_corpus_is_read(screened, tmp_path, capsys):
    """--out a folder failed only once the whole corpus was screened (an hour for a large one), and --out the
    corpus itself replaced the corpus with its candidates."""
    corpus, out = screened
    before = corpus.read_bytes()
    for target, words in ((tmp_path, "is a folder, expected the candidates file to write"),
                          (corpus, "is an input of this command"),
                          (corpus / "sub" / "c.jsonl",
                           f"cannot create the folder {corpus / 'sub'}: {corpus} is a file")):
        assert _main(["occurrence", "screen", str(corpus), "--format", "sharegpt", "--out", str(target)]) == 2
        err = capsys.readouterr().err
        assert f"--out {target}: {words}" in err and "screen chat.json" not in err  # no progress: nothing read
    assert corpus.read_bytes() == before
    with serve() as server:
        config = write_config(tmp_path / "judge.toml", server).path
        for option, target in (("--out", out), ("--traces", corpus)):
            argv = ["occurrence", "judge", str(out), "--corpus", str(corpus), "--config", config,
                    "--traces", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "j.jsonl")]
            argv[argv.index(option) + 1] = str(target)
            assert _main(argv) == 2
            assert f"{option} {target}: is an input of this command" in capsys.readouterr().err
        assert server.received == []
    assert corpus.read_bytes() == before


def test_every_step_has_help(capsys):
    for step in ("screen", "selftest", "pilot", "judge", "sample", "annotate", "report"):
        with pytest.raises(SystemExit) as done:
            seam.main(["occurrence", step, "--help"])
        assert done.value.code == 0
        assert "example" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------- judge

def _judge(server, tmp_path, corpus, out, **options):
    config_path = tmp_path / "judge.toml"
    write_config(config_path, server, concurrency=2)
    return judge.judge(out, corpus=[corpus], fmt=None, config_path=config_path, traces=tmp_path / "judge.traces.jsonl",
                       out=tmp_path / "chat.judged.jsonl", log=io.StringIO(), policy=FAST, **options)


def _script(replies):
    prompt = judge.load_prompt()
    return {prompt.render(text): steps for text, steps in zip(POSITIVES, replies, strict=True)}


def test_the_judge_asks_each_unique_candidate_once_through_the_runner_and_resumes(screened, tmp_path):
    corpus, out = screened
    with serve(_script([["say:YES"], ["say:**No.** The last line is part of it."], ["say:Hard to say"],
                        ["400", "say:yes"]])) as server:
        first = _judge(server, tmp_path, corpus, out)
        assert [row.verdict for row in first.rows] == ["yes", "no", "unparsable", "unanswered"]
        assert len(server.received) == 4
        again = _judge(server, tmp_path, corpus, out)  # resumes: nothing is asked again
        assert len(server.received) == 4 and again.rows == first.rows
        retried = _judge(server, tmp_path, corpus, out, retry_failed=True)
        assert len(server.received) == 5 and [row.verdict for row in retried.rows][-1] == "yes"
    header = store.read_judged(tmp_path / "chat.judged.jsonl").header
    prompt = judge.load_prompt()
    assert (header.judged, header.yes, header.no, header.unparsable, header.unanswered) == (4, 2, 1, 1, 0)
    assert (header.prompt_version, header.prompt_sha256, header.model) == ("1", prompt.sha256, "fake-openai")
    sent = [request["body"]["messages"][0]["content"] for request in server.received]
    assert sorted(sent[:4]) == sorted(prompt.render(text) for text in POSITIVES) and "<<<MESSAGE>>>" in sent[0]


def test_the_judge_resumes_from_its_judged_file_when_the_traces_are_lost(screened, tmp_path):
    """The judged file is committed as it grows, the traces are not (they may quote the corpus): a run on a
    machine without the traces keeps the verdicts it finds in --out and asks only the rest."""
    corpus, out = screened
    with serve(_script([["say:yes"], ["say:no"], ["say:yes"], ["say:no"]])) as server:
        first = _judge(server, tmp_path, corpus, out, limit=2)
        (tmp_path / "judge.traces.jsonl").unlink()
        again = _judge(server, tmp_path, corpus, out, limit=1)  # a smaller limit keeps every verdict it had
        assert [row.verdict for row in again.rows] == ["yes", "no", "unanswered", "unanswered"]
        rest = _judge(server, tmp_path, corpus, out)
        assert len(server.received) == 4  # the first two were not asked again
    assert [row.verdict for row in rest.rows] == ["yes", "no", "yes", "no"] and rest.rows[:2] == first.rows[:2]


def test_two_parts_share_the_work_and_collect_only_writes_every_verdict(screened, tmp_path):
    """A long judge run split over two servers: --part 1/2 and 2/2 each ask every other candidate into their
    own trace file (reading the other's), and --collect-only writes the whole judged file asking nothing."""
    corpus, out = screened
    first, second = tmp_path / "part1.traces.jsonl", tmp_path / "part2.traces.jsonl"
    judged = tmp_path / "chat.judged.jsonl"
    with serve(_script([["say:yes"], ["say:no"], ["say:yes"], ["say:no"]])) as server:
        config = write_config(tmp_path / "judge.toml", server).path

        def run(**options):
            return judge.judge(out, corpus=[corpus], fmt=None, config_path=config, out=judged, log=io.StringIO(),
                               policy=FAST, **options)

        one = run(traces=[first, second], part=(1, 2))
        assert len(server.received) == 2 and [row.verdict for row in one.rows] == ["yes", "unanswered"] * 2
        two = run(traces=[second, first], part=(2, 2))
        assert len(server.received) == 4 and [row.verdict for row in two.rows] == ["yes", "no", "yes", "no"]
        judged.unlink()
        whole = run(traces=[first, second], collect_only=True)
        assert len(server.received) == 4 and whole.rows == two.rows
        with open(second, "ab") as f:  # the other part, caught mid-write: its torn tail is its own business
            f.write(b'{"id": "occ-')
        assert run(traces=[first, second], collect_only=True).rows == two.rows
        second.write_bytes(second.read_bytes()[:-len(b'{"id": "occ-')])
    assert seam.main(["occurrence", "judge", str(out), "--corpus", str(corpus), "--config", str(config),
                      "--traces", str(first), str(second), "--out", str(judged), "--collect-only"]) == 0
    with pytest.raises(SystemExit):
        seam.main(["occurrence", "judge", str(out), "--corpus", str(corpus), "--config", str(config),
                   "--traces", str(first), "--out", str(judged), "--part", "3/2"])


def test_a_judged_file_of_another_model_is_refused_not_overwritten(screened, tmp_path):
    corpus, out = screened
    with serve(_script([["say:yes"], ["say:no"], ["say:yes"], ["say:no"]])) as server:
        _judge(server, tmp_path, corpus, out, limit=1)
        judged = tmp_path / "chat.judged.jsonl"
        before = judged.read_bytes()
        other = tmp_path / "other.toml"
        write_config(other, server, name="another-judge")
        with pytest.raises(UserError, match=r"chat.judged.jsonl: holds the verdicts of model 'fake-openai'.*give "
                                            r"another --out"):
            judge.judge(out, corpus=[corpus], fmt=None, config_path=other, traces=tmp_path / "other.traces.jsonl",
                        out=judged, log=io.StringIO(), policy=FAST)
    assert judged.read_bytes() == before


def test_the_pilot_compares_the_judge_with_the_answers_and_its_trace_serves_the_judge(screened, tmp_path):
    from occurrence import pilot
    from occurrence.records import Answer

    corpus, out = screened
    path = tmp_path / "s.jsonl"
    sample.write(sample.draw_file(out, judged=None, n=4, seed=1), path)
    drawn = store.read_sample(path)
    order = {text_sha: text for text_sha, text in
             ((hashlib.sha256(text.encode()).hexdigest(), text) for text in POSITIVES)}
    human = {case.message_sha256: answer for case, answer in zip(drawn.cases, ["yes", "yes", "no", "unsure"],
                                                                 strict=True)}
    for case in drawn.cases:
        store.append_answer(path, Answer(kind="answer", case=case.case, message_sha256=case.message_sha256,
                                         reviewer="ada", answer=human[case.message_sha256], note="",
                                         answered_at="2026-12-01T00:00:00.000Z"))
    said = {"yes": "say:YES", "no": "say:NO", "unsure": "say:YES"}
    verdicts = {digest: ("no" if index == 1 else "yes") for index, digest in enumerate(human)}  # one yes missed
    prompt = judge.load_prompt()
    script = {prompt.render(order[digest]): [said[verdict]] for digest, verdict in verdicts.items()}
    traces = tmp_path / "judge.traces.jsonl"
    with serve(script) as server:
        config = write_config(tmp_path / "judge.toml", server).path
        result = pilot.pilot(path, corpus=[corpus], config_path=config, traces=traces, log=io.StringIO(),
                             policy=FAST)
        assert len(server.received) == 4
        # human yes, yes, no (unsure left out); judge yes, no, yes
        assert (result.compared, result.agree, result.judge_yes, result.human_yes, result.both_yes,
                result.left_out) == (3, 1, 2, 2, 1, 1)
        assert (result.precision.statistic, result.recall.statistic) == (0.5, 0.5)
        assert "| fake-openai | 3 | 1/3 = 0.33" in pilot.table([result])
        again = pilot.pilot(path, corpus=[corpus], config_path=config, traces=traces, log=io.StringIO(),
                            policy=FAST)
        assert again == result and len(server.received) == 4  # resumed: nothing asked twice
        _judge(server, tmp_path, corpus, out)  # the full judge reuses the pilot's answers
        assert len(server.received) == 4


def test_the_judge_limit_asks_the_first_unique_candidates_and_a_rerun_asks_the_rest(screened, tmp_path):
    corpus, out = screened
    with serve(_script([["say:yes"], ["say:no"], ["say:yes"], ["say:no"]])) as server:
        first = _judge(server, tmp_path, corpus, out, limit=2)
        # the first two are asked; the judged file lists every unique candidate, the rest unanswered
        assert [row.verdict for row in first.rows] == ["yes", "no", "unanswered", "unanswered"]
        assert len(server.received) == 2
        assert [row.message_sha256 for row in first.rows] == [c.message_sha256 for c in
                                                               store.read_candidates(out).unique()]
        rest = _judge(server, tmp_path, corpus, out)
        assert [row.verdict for row in rest.rows] == ["yes", "no", "yes", "no"] and len(server.received) == 4


def test_a_trace_of_another_prompt_model_or_torn_is_refused_in_the_judges_words(screened, tmp_path):
    """The runner refuses them too, but told the judge's user to 'use a new --out' (the judged file) and to
    rerun 'seam.py run' with --move-torn, which the judge did not have."""
    corpus, out = screened
    traces = tmp_path / "judge.traces.jsonl"
    with serve(_script([["say:yes"], ["say:no"], ["say:yes"], ["say:no"]])) as server:
        _judge(server, tmp_path, corpus, out, limit=1)
        changed = tmp_path / "prompt.md"
        changed.write_text(judge.PROMPT_PATH.read_text(encoding="utf-8").replace(
            "judge-prompt-version: 1", "judge-prompt-version: 2"), encoding="utf-8")
        with pytest.raises(UserError, match=r"judge.traces.jsonl:1: asked with another judge prompt .*this is "
                                            r"version 2 .*give a new --traces"):
            _judge(server, tmp_path, corpus, out, prompt_path=changed)
        other = tmp_path / "other.toml"
        other.write_text((tmp_path / "judge.toml").read_text(encoding="utf-8").replace(
            'name = "fake-openai"', 'name = "other-model"'), encoding="utf-8")
        with pytest.raises(UserError, match="holds the answers of model 'fake-openai', the config is "
                                            "'other-model'; give another --traces"):
            judge.judge(out, corpus=[corpus], fmt=None, config_path=other, traces=traces,
                        out=tmp_path / "j.jsonl", log=io.StringIO(), policy=FAST)
        with open(traces, "ab") as f:
            f.write(b'{"id": "occ-')
        with pytest.raises(UserError, match="the last line is torn .*rerun the same command with --move-torn"):
            _judge(server, tmp_path, corpus, out)
        asked = len(server.received)
        assert [row.verdict for row in _judge(server, tmp_path, corpus, out, move_torn=True).rows] == [
            "yes", "no", "yes", "no"] and len(server.received) == asked + 3
    assert [path.read_bytes() for path in tmp_path.glob("judge.traces.jsonl.torn-*")] == [b'{"id": "occ-']


def test_the_judge_cli_says_how_many_are_unanswered_and_exits_1(screened, tmp_path, capsys):
    corpus, out = screened
    with serve(_script([["say:yes"], ["say:no"], ["400"], ["say:yes"]])) as server:
        config = tmp_path / "judge.toml"
        write_config(config, server, max_retries=0)
        status = _main(["occurrence", "judge", str(out), "--corpus", str(corpus), "--config", str(config),
                        "--traces", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "j.jsonl")])
    assert status == 1
    assert "yes 2, no 1, unparsable 0, unanswered 1" in capsys.readouterr().out


def test_the_judge_reads_only_the_corpus_the_candidates_came_from(screened, tmp_path):
    corpus, out = screened
    other = write_corpus(tmp_path / "other.json", "sharegpt", chats=conversations(repeat_first=False))
    refusal = r"^--corpus .*other.json: not a corpus these candidates were screened from"
    with serve() as server, pytest.raises(UserError, match=refusal):
        _judge(server, tmp_path, other, out)
    with serve() as server, pytest.raises(UserError, match="--format lmsys, but chat.json was screened as sharegpt"):
        judge.judge(out, corpus=[corpus], fmt="lmsys", config_path=write_config(tmp_path / "x.toml", server).path,
                    traces=tmp_path / "t.jsonl", out=tmp_path / "j.jsonl", log=io.StringIO())


@pytest.mark.parametrize("where", ["data/occurrence/judge.traces.jsonl", "judge.traces.jsonl",
                                   "results/judge.traces.jsonl"])
def test_the_judges_traces_may_not_go_into_the_checkout(screened, tmp_path, where, monkeypatch):
    """Not under data/ (released), and not anywhere else in the checkout either: `--traces judge.jsonl` run
    from the kit's folder put them at its top, untracked and one `git add -A` from being committed."""
    corpus, out = screened
    monkeypatch.chdir(judge.CHECKOUT)
    with serve() as server, pytest.raises(UserError, match="the judge's traces hold model replies"):
        judge.judge(out, corpus=[corpus], fmt=None, config_path=write_config(tmp_path / "x.toml", server).path,
                    traces=where, out=tmp_path / "j.jsonl", log=io.StringIO())
    assert not (judge.CHECKOUT / where).exists() and not (judge.CHECKOUT / "results").exists()


def test_a_changed_message_is_refused_not_judged(screened, tmp_path):
    corpus, out = screened
    changed = corpus.read_text(encoding="utf-8").replace("intro class", "intro course")
    (tmp_path / "swap").mkdir()
    swapped = tmp_path / "swap" / "chat.json"
    swapped.write_text(changed, encoding="utf-8")
    file = store.read_candidates(out)
    refs = (dataclasses.replace(file.header.corpora[0], sha256=hashlib.sha256(swapped.read_bytes()).hexdigest()),)
    with pytest.raises(UserError, match="the message's SHA-256 differs from the one recorded"):
        read_texts(refs, [swapped], {c.key: c.message_sha256 for c in file.unique()})


@pytest.mark.parametrize(("reply", "verdict"), [("YES", "yes"), ("no", "no"), ("Yes, it does.", "yes"),
                                                 ("The answer is NO.", "no"), ("either yes or no", "unparsable"),
                                                 ("", "unparsable"), ("Sure", "unparsable")])
def test_replies_are_parsed_to_yes_no_or_unparsable(reply, verdict):
    assert judge.parse_verdict(reply) == verdict


def test_a_prompt_file_without_its_version_or_placeholder_is_refused(tmp_path):
    path = tmp_path / "p.md"
    path.write_text("Is it? {message}\n", encoding="utf-8")
    with pytest.raises(UserError, match="expected 'judge-prompt-version: V'"):
        judge.load_prompt(path)
    path.write_text("judge-prompt-version: 2\n---\nno placeholder\n", encoding="utf-8")
    with pytest.raises(UserError, match="exactly once, found 0"):
        judge.load_prompt(path)


# ------------------------------------------------------------------------------------------- sample

def test_the_sample_is_seeded_reproducible_and_holds_no_feature_or_verdict(screened, tmp_path):
    corpus, out = screened
    paths = [tmp_path / name for name in ("s1.jsonl", "s2.jsonl", "s3.jsonl")]
    for path, seed in zip(paths, (7, 7, 8), strict=True):
        assert _main(["occurrence", "sample", str(out), "--n", "3", "--seed", str(seed), "--out", str(path)]) == 0
    assert paths[0].read_bytes() == paths[1].read_bytes() and paths[0].read_bytes() != paths[2].read_bytes()
    drawn = store.read_sample(paths[0])
    assert (drawn.header.seed, drawn.header.population, drawn.header.population_size, len(drawn.cases)) == (
        7, "screened", len(POSITIVES), 3)
    keys = {key for _, row in jsonl.read(paths[0]) for key in row}
    assert not keys & {"features", "artifact_kind", "separator", "remark_start", "verdict", "repeat"}
    assert _main(["occurrence", "sample", str(out), "--n", "3", "--seed", "7", "--out", str(paths[0])]) == 2


def test_a_larger_sample_keeps_every_message_a_smaller_one_drew(screened, tmp_path):
    corpus, out = screened
    small = sample.draw_file(out, judged=None, n=2, seed=3)
    large = sample.draw_file(out, judged=None, n=10, seed=3)
    assert [c.message_sha256 for c in large.cases][:2] == [c.message_sha256 for c in small.cases]
    assert len(large.cases) == len(POSITIVES)


def test_a_sample_of_the_judges_yes_verdicts(screened, tmp_path):
    corpus, out = screened
    with serve(_script([["say:yes"], ["say:no"], ["say:yes"], ["say:no"]])) as server:
        _judge(server, tmp_path, corpus, out)
    drawn = sample.draw_file(out, judged=tmp_path / "chat.judged.jsonl", n=5, seed=1)
    assert (drawn.header.population, drawn.header.population_size, len(drawn.cases)) == ("judged", 2, 2)
    assert {c.conversation for c in drawn.cases} == {"conv-0", "conv-2"}


# ------------------------------------------------------------------------------------------- annotate

class _Page:
    """The annotation page served on 127.0.0.1 in a thread, and a small client for it."""

    def __init__(self, session):
        self.server = AnswerServer(session, 0)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.host = f"127.0.0.1:{self.server.server_port}"

    def request(self, method, path, body=None):
        connection = http.client.HTTPConnection(self.host, timeout=5)
        headers = {"Host": self.host}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        connection.request(method, path, body=body, headers=headers)
        reply = connection.getresponse()
        data = reply.read().decode("utf-8")
        connection.close()
        return reply, data

    def answer(self, number, answer, note=""):
        return self.request("POST", f"/case/{number}", urllib.parse.urlencode({"answer": answer, "note": note}))

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def drawn(screened, tmp_path):
    corpus, out = screened
    path = tmp_path / "chat.sample.jsonl"
    sample.write(sample.draw_file(out, judged=None, n=10, seed=5), path)
    return corpus, out, path


def test_the_page_shows_the_message_and_nothing_of_the_pipeline(drawn):
    corpus, out, path = drawn
    session = annotate.open_session(path, "ada", corpus=[corpus])
    page = _Page(session)
    try:
        reply, _ = page.request("GET", "/")
        assert reply.status == 303 and reply.getheader("Location") == "/case/1"
        reply, html = page.request("GET", "/case/1")
        assert reply.status == 200 and "script-src" in reply.getheader("Content-Security-Policy")
        shown = session.messages[1]
        assert annotate.escape(shown) in html and annotate.QUESTION.replace("'", "&#x27;") in html
        for hidden in ("remark_", "code_block", "prose_block", "artifact_kind", "message_sha256", "candidate",
                       "verdict", "judge"):
            assert hidden not in html.replace(annotate.escape(shown), ""), hidden
    finally:
        page.stop()


def test_answers_are_appended_as_given_and_a_new_session_continues(drawn):
    corpus, out, path = drawn
    session = annotate.open_session(path, "ada", corpus=[corpus])
    page = _Page(session)
    try:
        reply, _ = page.answer(1, "yes", "the last line asks for a fix")
        assert reply.status == 303 and reply.getheader("Location") == "/case/2?saved=1"
        reply, html = page.answer(2, "maybe")
        assert reply.status == 400 and "Choose yes, no or unsure" in html
        page.answer(2, "no")
        page.answer(1, "unsure")  # a second answer supersedes the first; both stay in the file
    finally:
        page.stop()
    answered = store.read_sample(path)
    assert [(a.case, a.answer, a.reviewer) for a in answered.answers] == [(1, "yes", "ada"), (2, "no", "ada"),
                                                                          (1, "unsure", "ada")]
    again = annotate.open_session(path, None, corpus=[corpus])
    assert again.reviewer == "ada" and again.first_unanswered() == 3
    with pytest.raises(UserError, match="holds the answers of reviewer 'ada'"):
        annotate.open_session(path, "bob", corpus=[corpus])


def test_a_note_that_quotes_the_message_is_refused_and_nothing_is_saved(drawn):
    """The sample file may be released; the note is for the annotator's own words. A note that pasted 40
    characters of the message was saved as it was."""
    corpus, out, path = drawn
    session = annotate.open_session(path, "ada", corpus=[corpus])
    before = path.read_bytes()
    quote = session.messages[1][5:60]
    page = _Page(session)
    try:
        reply, html = page.answer(1, "yes", f"it says: {quote}")
        assert reply.status == 400 and "repeats 40 characters or more of the message" in html
        assert path.read_bytes() == before
        reply, _ = page.answer(1, "yes", f"short quote '{quote[:30]}' is fine")
        assert reply.status == 303
    finally:
        page.stop()
    assert [a.note for a in store.read_sample(path).answers] == [f"short quote '{quote[:30]}' is fine"]


def test_a_torn_last_line_is_moved_aside_when_a_session_opens(drawn):
    corpus, out, path = drawn
    with open(path, "ab") as f:
        f.write(b'{"kind":"answer","case":1,"mess')
    session = annotate.open_session(path, "ada", corpus=[corpus])
    assert session.moved_aside is not None and session.moved_aside.read_bytes().startswith(b'{"kind":"answer"')
    assert store.read_sample(path).answers == ()


def test_the_annotate_command_needs_a_reviewer_for_the_first_answer(drawn, capsys):
    corpus, out, path = drawn
    assert _main(["occurrence", "annotate", str(path), "--corpus", str(corpus), "--port", "0"]) == 2
    assert "say who answers with --reviewer NAME" in capsys.readouterr().err


def test_a_second_page_on_the_same_sample_is_refused_in_the_occurrence_commands_words(drawn, tmp_path, capsys):
    """The lock is the review store's; its messages spoke of review files and 'seam.py review serve'."""
    corpus, out, path = drawn
    with store.locked(path):
        assert _main(["occurrence", "annotate", str(path), "--corpus", str(corpus), "--reviewer", "ada",
                      "--port", "0"]) == 2
    assert "another 'seam.py occurrence annotate' is serving this file; stop it first" in capsys.readouterr().err
    missing = tmp_path / "none.sample.jsonl"
    assert _main(["occurrence", "annotate", str(missing), "--corpus", str(corpus), "--port", "0"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        f"{missing}: no such sample file (make one with 'seam.py occurrence sample')")


def test_a_message_with_a_lone_surrogate_is_judged_and_shown_with_a_replacement_character(tmp_path):
    """JSON allows "\\ud800" and the screen reads it (checksummed as its escape's bytes), but UTF-8 cannot
    carry it: the judge's request and the page failed with a UnicodeEncodeError."""
    text = POSITIVES[0].replace("btw", "btw \ud800")
    corpus = tmp_path / "lone.json"
    corpus.write_text(json.dumps([{"id": "a", "conversations": [{"from": "human", "value": text}]}]),
                      encoding="utf-8")
    out = tmp_path / "c.jsonl"
    assert _main(["occurrence", "screen", str(corpus), "--format", "sharegpt", "--out", str(out)]) == 0
    with serve() as server:
        verdicts = _judge(server, tmp_path, corpus, out)
        assert [row.status for row in verdicts.rows] == ["ok"]
        assert "btw \ufffd" in server.received[0]["body"]["messages"][0]["content"]
    drawn = tmp_path / "s.jsonl"
    sample.write(sample.draw_file(out, judged=None, n=1, seed=1), drawn)
    session = annotate.open_session(drawn, "ada", corpus=[corpus])
    assert "btw \ufffd" in session.case_page(1).encode("utf-8").decode("utf-8")


# ------------------------------------------------------------------------------------------- report

def _answered(drawn, answers):
    corpus, out, path = drawn
    session = annotate.open_session(path, "ada", corpus=[corpus])
    for number, answer in enumerate(answers, start=1):
        session.answer(number, answer, "")
    return corpus, out, path


def test_the_report_counts_every_stage_and_the_confirmed_share(drawn, tmp_path):
    corpus, out, path = _answered(drawn, ["yes", "yes", "no", "unsure"])
    built = report.build(out, answers=path)
    rows = {row[0]: row for row in built.tables[0].rows}
    assert rows["conversations read (complete)"][1] == len(conversations())
    assert rows["unique candidates"][1] == len(POSITIVES) and rows["candidates (screen positives)"][1] == 5
    assert (rows["human: yes"][1], rows["human: no"][1], rows["human: unsure"][1]) == (2, 1, 1)
    share = rows["human-confirmed share"]
    assert share[1:4] == (2, 3, 2 / 3) and 0 < share[4] < 2 / 3 < share[5] < 1
    assert "do not estimate prevalence" in built.tables[0].notes[0]
    first, second = tmp_path / "r1", tmp_path / "r2"
    assert _main(["occurrence", "report", str(out), "--answers", str(path), "--out", str(first)]) == 0
    assert _main(["occurrence", "report", str(out), "--answers", str(path), "--out", str(second)]) == 0
    names = sorted(p.name for p in first.iterdir())
    assert names == ["occurrence_features.csv", "occurrence_features.md", "occurrence_pipeline.csv",
                     "occurrence_pipeline.md", "occurrence_provenance.json", "occurrence_shapes.csv",
                     "occurrence_shapes.md"]
    assert all((first / name).read_bytes() == (second / name).read_bytes() for name in names)
    csv = (first / "occurrence_pipeline.csv").read_text(encoding="utf-8")
    assert "human-confirmed share,2,3,0.666667," in csv
    provenance = jsonl.parse((first / "occurrence_provenance.json").read_bytes())
    assert provenance["answers"]["reviewer"] == "ada" and provenance["corpora"][0]["file"] == "chat.json"


def test_the_report_counts_every_file_cut_short_even_where_no_object_was_lost(tmp_path):
    """A .gz cut between two lines and an array cut between two objects lose no object of their own, but
    their ends are missing all the same: the header marks them cut short, and so must the report (it counted
    only the files that lost bytes of an object)."""
    import gzip

    text = "".join(jsonl.dumps(row) for row in sharegpt_rows(conversations()))
    data = gzip.compress(text.encode("utf-8"))
    (tmp_path / "a.jsonl.gz").write_bytes(data[:-9])  # the deflate stream's end and the trailer are missing
    array = array_text(sharegpt_rows(conversations()))
    (tmp_path / "b.json").write_text(array[:array.rindex(",\n  {") + 1], encoding="utf-8")
    out = tmp_path / "c.jsonl"
    assert _main(["occurrence", "screen", str(tmp_path / "a.jsonl.gz"), str(tmp_path / "b.json"),
                  "--format", "sharegpt", "--out", str(out)]) == 0
    rows = {row[0]: row[1] for row in report.build(out).tables[0].rows}
    assert rows["corpus files cut short at their end (read up to the cut)"] == 2


def test_the_report_refuses_a_sample_of_other_candidates(drawn, tmp_path):
    corpus, out, path = drawn
    other = tmp_path / "other.candidates.jsonl"
    second = write_corpus(tmp_path / "c2.jsonl", "lmsys")
    assert _main(["occurrence", "screen", str(second), "--format", "lmsys", "--out", str(other)]) == 0
    with pytest.raises(UserError, match="drawn from candidates"):
        report.build(other, answers=path)


# ------------------------------------------------------------------------------------------- no text

def test_no_message_text_reaches_any_file_the_pipeline_writes(tmp_path):
    """Every stage on a corpus of planted markers; every byte written is searched for them and for any
    24-character run of any message. The judge's traces are the documented exception (kept elsewhere)."""
    corpus = write_corpus(tmp_path / "corpus" / "chat.json", "sharegpt")
    outputs = tmp_path / "outputs"
    candidates = outputs / "chat.candidates.jsonl"
    assert _main(["occurrence", "screen", str(corpus), "--format", "sharegpt", "--out", str(candidates)]) == 0
    with serve(_script([["say:YES"], ["say:yes"], ["say:no"], ["say:YES"]])) as server:
        config = write_config(tmp_path / "judge.toml", server).path
        assert _main(["occurrence", "judge", str(candidates), "--corpus", str(corpus), "--config", config,
                      "--traces", str(tmp_path / "traces" / "judge.jsonl"),
                      "--out", str(outputs / "chat.judged.jsonl")]) == 0
    drawn = outputs / "chat.sample.jsonl"
    assert _main(["occurrence", "sample", str(candidates), "--judged", str(outputs / "chat.judged.jsonl"),
                  "--n", "5", "--seed", "2", "--out", str(drawn)]) == 0
    session = annotate.open_session(drawn, "ada", corpus=[corpus])
    for number in range(1, session.total + 1):
        session.answer(number, "yes", "fine")
    assert _main(["occurrence", "report", str(candidates), "--judged", str(outputs / "chat.judged.jsonl"),
                  "--answers", str(drawn), "--out", str(outputs / "report")]) == 0
    written = all_output_text(outputs)
    assert len(list(outputs.rglob("*"))) >= 10
    for plant in PLANTS:
        assert plant not in written
    for text in POSITIVES + NEGATIVES:
        runs = {text[start:start + 24] for start in range(0, max(1, len(text) - 24), 6)}
        assert not [run for run in runs if run in written]


def test_a_sample_of_the_judges_yes_and_no_reports_the_confirmed_share_and_the_miss_rate(screened, tmp_path):
    """The human check of the paper's form: a sample of the judge's positives and of its negatives, shown
    mixed (blind), and the report's confirmed share among the yes and miss rate among the no."""
    from occurrence.records import Answer

    corpus, out = screened
    with serve(_script([["say:yes"], ["say:no"], ["say:yes"], ["say:no"]])) as server:
        _judge(server, tmp_path, corpus, out)
    judged = tmp_path / "chat.judged.jsonl"
    path = tmp_path / "both.jsonl"
    assert _main(["occurrence", "sample", str(out), "--judged", str(judged), "--n", "2", "--negatives", "2",
                  "--seed", "3", "--out", str(path)]) == 0
    drawn = store.read_sample(path)
    verdicts = {row.message_sha256: row.verdict for row in store.read_judged(judged).judged}
    assert drawn.header.population == "judged-yes-and-no" and len(drawn.cases) == 4
    assert sorted(verdicts[case.message_sha256] for case in drawn.cases) == ["no", "no", "yes", "yes"]
    keys = {key for _, row in jsonl.read(path) for key in row}
    assert "verdict" not in keys  # the page has nothing to tell the strata apart by
    for case in drawn.cases:  # the reader says yes to everything: all the judge's yes confirmed, all its no missed
        store.append_answer(path, Answer(kind="answer", case=case.case, message_sha256=case.message_sha256,
                                         reviewer="ada", answer="yes", note="", answered_at="2026-12-01T00:00:00.000Z"))
    built = report.build(out, judged=str(judged), answers=str(path))
    rows = {row[0]: row for row in built.tables[0].rows}
    assert rows["human-confirmed share of the judge's yes"][1:3] == (2, 2)
    assert rows["judge's miss rate (human yes among its no)"][1:3] == (2, 2)
    shares = [line for line in built.summary if " of 2 = " in line]  # the terminal names both shares
    assert [line.split(":")[0] for line in shares] == ["human-confirmed share of the judge's yes",
                                                       "judge's miss rate (human yes among its no)"]
    assert _main(["occurrence", "sample", str(out), "--n", "2", "--negatives", "1", "--seed", "3",
                  "--out", str(tmp_path / "x.jsonl")]) == 2


def test_a_second_readers_copy_is_crossed_with_the_first_and_never_pooled(screened, tmp_path, capsys):
    """`--second`: a copy of the same draw answered by another reader gives the two answers crossed, raw
    agreement and Cohen's kappa, and that reader's own shares in the notes; the pipeline keeps the first's."""
    from occurrence.records import Answer

    corpus, out = screened
    with serve(_script([["say:yes"], ["say:no"], ["say:yes"], ["say:no"]])) as server:
        _judge(server, tmp_path, corpus, out)
    judged = tmp_path / "chat.judged.jsonl"
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert _main(["occurrence", "sample", str(out), "--judged", str(judged), "--n", "2", "--negatives", "2",
                  "--seed", "3", "--out", str(first)]) == 0
    second.write_bytes(first.read_bytes())  # the copy, before any answer
    cases = store.read_sample(first).cases

    def answer(path, reviewer, answers):
        for case, given in zip(cases, answers, strict=True):
            store.append_answer(path, Answer(kind="answer", case=case.case, message_sha256=case.message_sha256,
                                             reviewer=reviewer, answer=given, note="",
                                             answered_at="2026-12-01T00:00:00.000Z"))

    answer(first, "ada", ["yes", "yes", "no", "no"])
    answer(second, "bob", ["yes", "no", "no", "unsure"])
    alone = report.build(out, judged=str(judged), answers=str(first))
    built = report.build(out, judged=str(judged), answers=str(first), second=str(second))
    assert built.tables[0] == alone.tables[0]  # the pipeline's shares stay the first reader's
    readers = built.tables[-1]
    assert readers.name == "occurrence_readers" and readers.columns[0].header == "ada \\ bob"
    assert readers.rows == (("yes", 1, 1, 0), ("no", 0, 1, 1), ("unsure", 0, 0, 0))
    assert built.provenance["second"]["both_definite"] == 3 and built.provenance["second"]["agreement"] == 0.666667
    assert "Disagreements, by case: 2 (yes vs no), 4 (no vs unsure)." in readers.notes
    assert any(note.startswith("By bob, human-confirmed share of the judge's yes") for note in readers.notes)
    assert _main(["occurrence", "report", str(out), "--judged", str(judged), "--answers", str(first),
                  "--second", str(second), "--out", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report" / "occurrence_readers.csv").exists()
    assert "second reader (bob): cases answered by both: 4; both yes or no: 3." in capsys.readouterr().out
    # refused: the same reader twice, another draw, a second without a first
    assert _main(["occurrence", "report", str(out), "--judged", str(judged), "--answers", str(first),
                  "--second", str(first), "--out", str(tmp_path / "r2")]) == 2
    other = tmp_path / "other.jsonl"
    assert _main(["occurrence", "sample", str(out), "--judged", str(judged), "--n", "2", "--negatives", "2",
                  "--seed", "4", "--out", str(other)]) == 0
    answer_other = store.read_sample(other).cases[0]
    store.append_answer(other, Answer(kind="answer", case=1, message_sha256=answer_other.message_sha256,
                                      reviewer="bob", answer="yes", note="", answered_at="2026-12-01T00:00:00.000Z"))
    assert _main(["occurrence", "report", str(out), "--judged", str(judged), "--answers", str(first),
                  "--second", str(other), "--out", str(tmp_path / "r3")]) == 2
    assert "header differs in seed" in capsys.readouterr().err
    assert _main(["occurrence", "report", str(out), "--judged", str(judged), "--second", str(second),
                  "--out", str(tmp_path / "r4")]) == 2
    assert "give --answers too" in capsys.readouterr().err
    unanswered = tmp_path / "unanswered.jsonl"
    unanswered.write_bytes(b"".join(first.read_bytes().splitlines(keepends=True)[:5]))  # header and 4 cases
    assert _main(["occurrence", "report", str(out), "--judged", str(judged), "--answers", str(unanswered),
                  "--second", str(second), "--out", str(tmp_path / "r5")]) == 2
    assert "no answers yet" in capsys.readouterr().err
    partial = tmp_path / "partial.jsonl"  # a second reader half way: said so beside the crossing
    partial.write_bytes(b"".join(second.read_bytes().splitlines(keepends=True)[:7]))
    notes = report.build(out, judged=str(judged), answers=str(first), second=str(partial)).tables[-1].notes
    assert "bob answered 2 of 4 cases, ada 4." in notes


def test_a_second_reader_of_a_simple_sample_has_their_own_confirmed_share(screened, tmp_path):
    from occurrence.records import Answer

    _, out = screened
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert _main(["occurrence", "sample", str(out), "--n", "3", "--seed", "3", "--out", str(first)]) == 0
    second.write_bytes(first.read_bytes())
    for path, reviewer, answers in ((first, "ada", "yes no no"), (second, "bob", "yes yes no")):
        for case, given in zip(store.read_sample(path).cases, answers.split(), strict=True):
            store.append_answer(path, Answer(kind="answer", case=case.case, message_sha256=case.message_sha256,
                                             reviewer=reviewer, answer=given, note="",
                                             answered_at="2026-12-01T00:00:00.000Z"))
    notes = report.build(out, answers=str(first), second=str(second)).tables[-1].notes
    assert "By bob, human-confirmed share: 2 of 3 = 66.7 [20.8, 93.9] %." in notes
