"""R serialization reader: hand-made XDR streams, compression framings, lazy-load databases, bad input."""

from __future__ import annotations

import bz2
import gzip
import math
import struct
import zlib

import pytest

from benchmark.sources import rdata, rlazyload
from benchmark.sources.rdata import RDataError, RPairList, RSymbol, RVector

# --- a tiny writer for hand-made streams (independent of the reader) --------------------------

HAS_ATTR, HAS_TAG = 1 << 9, 1 << 10


def i32(value):
    return struct.pack(">i", value)


def flags(sexptype, *, attr=False, tag=False, levels=0):
    return i32(sexptype | (HAS_ATTR if attr else 0) | (HAS_TAG if tag else 0) | (levels << 12))


def header(version=3, encoding=b"UTF-8"):
    out = b"X\n" + i32(version) + i32(0x040201) + i32(0x030500)
    if version == 3:
        out += i32(len(encoding)) + encoding
    return out


NULL = i32(254)


def charsxp(text, levels=1 << 3):  # UTF8_MASK by default
    if text is None:
        return flags(9) + i32(-1)
    raw = text if isinstance(text, bytes) else text.encode("utf-8")
    return flags(9, levels=levels) + i32(len(raw)) + raw


def symbol(name):
    return flags(1) + charsxp(name, levels=1 << 6)


def ref(index):
    return i32(255 | (index << 8))


def strsxp(values, attributes=b""):
    body = flags(16, attr=bool(attributes)) + i32(len(values)) + b"".join(charsxp(v) for v in values)
    return body + attributes


def intsxp(values, attributes=b""):
    return flags(13, attr=bool(attributes)) + i32(len(values)) + b"".join(i32(v) for v in values) + attributes


def pairlist(nodes):
    """nodes: list of (tag bytes or None, value bytes)."""
    out = b""
    for tag, value in nodes:
        out += flags(2, tag=tag is not None) + (tag or b"") + value
    return out + NULL


def vecsxp(values, attributes=b""):
    return flags(19, attr=bool(attributes)) + i32(len(values)) + b"".join(values) + attributes


# --- unserialize ---------------------------------------------------------------------------------

def test_named_character_vector_with_encodings_and_na():
    names = pairlist([(symbol("names"), strsxp(["a", "b", "c"]))])
    latin1 = charsxp("caf\u00e9".encode("latin-1"), levels=1 << 2)
    stream = header() + flags(16, attr=True) + i32(3) + latin1 + charsxp(None) + charsxp("x") + names
    value = rdata.unserialize(stream)
    assert value.kind == "character" and value.values == ("caf\u00e9", None, "x")
    assert value.attributes == (("names", RVector("character", ("a", "b", "c"))),)
    assert value.names == ("a", "b", "c") and value.attribute("class") is None


def test_unflagged_strings_use_the_native_encoding_of_version_3_and_bytes_stay_bytes():
    elements = charsxp(b"\xe9t\xe9", levels=0) + charsxp(b"\xff\x00", levels=1 << 1)
    stream = header(encoding=b"latin1") + flags(16) + i32(2) + elements
    assert rdata.unserialize(stream).values == ("\u00e9t\u00e9", b"\xff\x00")


def test_numeric_vectors_with_na_and_version_2_header():
    na_real = struct.pack(">II", 0x7FF00000, 1954)
    nan = struct.pack(">d", math.nan)
    reals = flags(14) + i32(4) + struct.pack(">d", 1.5) + na_real + nan + struct.pack(">d", -2.0)
    logicals = flags(10) + i32(3) + i32(1) + i32(0) + i32(-(2 ** 31))
    ints = intsxp([7, -(2 ** 31), -3])
    value = rdata.unserialize(header(version=2) + vecsxp([reals, logicals, ints, NULL]))
    real_vector, logical_vector, int_vector, null = value.values
    assert real_vector.values[0] == 1.5 and real_vector.values[1] is None
    assert math.isnan(real_vector.values[2]) and real_vector.values[3] == -2.0
    assert logical_vector.values == (True, False, None)
    assert int_vector.values == (7, None, -3)
    assert null is None


def test_long_vector_length_form():
    stream = header() + flags(13) + i32(-1) + struct.pack(">II", 0, 2) + i32(4) + i32(5)
    assert rdata.unserialize(stream).values == (4, 5)


def test_symbols_are_shared_through_references():
    first = pairlist([(symbol("names"), strsxp(["x"]))])
    second = pairlist([(ref(1), strsxp(["y"]))])  # the "names" symbol again, by reference
    value = rdata.unserialize(header() + vecsxp([intsxp([1], first), intsxp([2], second)]))
    assert [v.names for v in value.values] == [("x",), ("y",)]


def test_reference_index_in_a_separate_word():
    stream = header() + vecsxp([symbol("s"), i32(255) + i32(1)])
    assert rdata.unserialize(stream).values == (RSymbol("s"), RSymbol("s"))


def test_pairlist_tags_and_untagged_nodes():
    stream = header() + pairlist([(symbol("a"), intsxp([1])), (None, strsxp(["z"]))])
    value = rdata.unserialize(stream)
    assert isinstance(value, RPairList) and value.kind == "pairlist"
    assert value.items == (("a", RVector("integer", (1,))), (None, RVector("character", ("z",))))


def test_environment_that_contains_itself():
    frame = pairlist([(symbol("me"), ref(1)), (symbol("n"), intsxp([3]))])
    stream = header() + flags(4) + i32(0) + i32(253) + frame + NULL + NULL
    env = rdata.unserialize(stream)
    assert env.bindings["me"] is env and env.bindings["n"].values == (3,)


def test_altrep_compact_sequence():
    info = pairlist([(None, symbol("compact_intseq")), (None, symbol("base")), (None, intsxp([13]))])
    state = flags(14) + i32(3) + struct.pack(">ddd", 4.0, 10.0, 1.0)
    value = rdata.unserialize(header() + i32(238) + info + state + NULL)
    assert value == RVector("integer", (10, 11, 12, 13))


@pytest.mark.parametrize("stream, message", [
    (b"A\n" + i32(3), "ASCII"),
    (b"RDX3\n", "expected an R serialization in XDR format"),
    (header(version=4), "version 4"),
    (header() + strsxp(["abc"])[:-2], "stream ends"),
    (header() + flags(99), "unknown SEXP type 99"),
    (header() + ref(5), "reference 5"),
    (header() + intsxp([1]) + b"\x00", "1 bytes left"),
    (header() + flags(22), "not supported"),
    (header() + flags(16) + i32(1) + intsxp([1]), "not a string"),
    (header() + charsxp(b"\xff", levels=1 << 3), "not valid utf-8"),
])
def test_malformed_streams_name_the_file_and_the_problem(stream, message):
    with pytest.raises(RDataError) as caught:
        rdata.unserialize(stream, "thing.rds")
    assert str(caught.value).startswith("thing.rds: ")
    assert message in str(caught.value)


def test_truncation_error_gives_the_byte_offset():
    stream = header() + intsxp([1, 2, 3])[:-4]
    data_start = len(header()) + 8  # after the flags and the length
    with pytest.raises(RDataError, match=rf"thing\.rdb: byte {data_start}: expected 12 more bytes, "
                                         "the stream ends after 8"):
        rdata.unserialize(stream, "thing.rdb")


# --- compression framings and lazy-load databases ------------------------------------------------

def test_read_rds_accepts_gzip_bzip2_and_plain():
    stream = header() + strsxp(["x"])
    for packed in (gzip.compress(stream), bz2.compress(stream), stream):
        assert rdata.read_rds(packed).values == ("x",)
    with pytest.raises(RDataError, match="cannot decompress"):
        rdata.read_rds(b"\x1f\x8b" + b"garbage", "bad.rds")


def test_decompress_slice_framings_and_length_check():
    data = header() + intsxp([1, 2])
    size = struct.pack(">I", len(data))
    assert rlazyload.decompress_slice(size + zlib.compress(data)) == data
    assert rlazyload.decompress_slice(size + b"2" + bz2.compress(data)) == data
    assert rlazyload.decompress_slice(size + b"0" + data) == data
    with pytest.raises(RDataError, match="announces 999 bytes"):
        rlazyload.decompress_slice(struct.pack(">I", 999) + zlib.compress(data), "x.rdb")


def _lazyload_db(objects):
    """(rdx bytes, rdb bytes) for {name: serialized stream}, laid out as R's makeLazyLoadDB does."""
    rdb, entries = b"", []
    for name, stream in objects.items():
        blob = struct.pack(">I", len(stream)) + zlib.compress(stream)
        entries.append((name, len(rdb), len(blob)))
        rdb += blob
    offsets = vecsxp([intsxp([offset, length]) for _, offset, length in entries],
                     pairlist([(symbol("names"), strsxp([name for name, _, _ in entries]))]))
    index = vecsxp([offsets, vecsxp([]), flags(10) + i32(1) + i32(1)],
                   pairlist([(ref(1), strsxp(["variables", "references", "compressed"]))]))
    # the names symbol is defined inside `offsets`, so the outer attribute refers back to it
    return gzip.compress(header() + index), rdb


def test_lazyload_roundtrip():
    rdx, rdb = _lazyload_db({"first": header() + strsxp(["one", "two"]), "second": header() + intsxp([9])})
    index = rlazyload.read_lazyload_index(rdx, "x.rdx")
    assert [name for name, _ in index.variables] == ["first", "second"]
    assert rlazyload.read_lazyload_object(rdb, index.slice_of("first")).values == ("one", "two")
    assert rlazyload.read_lazyload_object(rdb, index.slice_of("second")).values == (9,)
    with pytest.raises(KeyError, match="no variable 'third'"):
        index.slice_of("third")
    with pytest.raises(RDataError, match="runs past the end"):
        rlazyload.read_lazyload_object(rdb[:10], index.slice_of("second"), "x.rdb")


def test_lazyload_index_must_be_a_named_list():
    with pytest.raises(RDataError, match=r"x\.rdx: expected a named list"):
        rlazyload.read_lazyload_index(gzip.compress(header() + intsxp([1])), "x.rdx")
