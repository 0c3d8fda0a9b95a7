"""Which requests a run asks: `Request` records from the benchmark or a file, with the same filters."""

from __future__ import annotations

import pytest
from support.samples import make_requests, write_requests

from benchmark import dataset
from common.errors import UserError
from common.records import Request
from runner import selection


def test_a_request_file_gives_the_requests_written_to_it(tmp_path):
    written = make_requests(8, conditions=("clean", "newline"))
    path = tmp_path / "requests.jsonl"
    write_requests(path, written)
    read = selection.file_requests(path)
    assert read == written and all(isinstance(request, Request) for request in read)


def test_file_filters_keep_the_first_clusters_in_input_order(tmp_path):
    written = make_requests(9, conditions=("clean", "newline", "blank"))
    path = tmp_path / "requests.jsonl"
    write_requests(path, list(reversed(written)))  # synthetic-002 first
    chosen = selection.file_requests(path, conditions=["blank", "clean"], sources=["synthetic"], limit=2)
    assert [request.id for request in chosen] == ["synthetic-002/blank", "synthetic-002/clean",
                                                  "synthetic-001/blank", "synthetic-001/clean"]


def test_an_empty_request_file_is_an_error(tmp_path):
    (tmp_path / "none.jsonl").write_bytes(b"")
    with pytest.raises(UserError, match=r"none\.jsonl: no request rows"):
        selection.file_requests(tmp_path / "none.jsonl")


def test_benchmark_requests_are_rendered_from_the_committed_benchmark():
    chosen = selection.benchmark_requests(conditions=["clean", "newline"], sources=["austen"], limit=2)
    assert [request.id for request in chosen] == ["austen-001/clean", "austen-001/newline",
                                                  "austen-002/clean", "austen-002/newline"]
    benchmark = dataset.load()
    assert {request.benchmark_sha256 for request in chosen} == {benchmark.sha256}
    assert chosen[1].comment == benchmark.cluster("austen-001").comment.text


def test_a_repeated_id_is_refused_before_anything_is_asked():
    requests = make_requests(2)
    with pytest.raises(UserError, match="request id 'synthetic-000/clean' appears twice"):
        selection.check_unique_ids([requests[0], requests[1], requests[0]])
