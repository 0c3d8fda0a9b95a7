"""Retry waits (Retry-After, exponential backoff with jitter), the rate cap, the progress line."""

from __future__ import annotations

import io
from email.utils import formatdate

import pytest

from runner.pacing import Pacer
from runner.progress import Progress, format_duration, progress_line
from runner.retry import RetryPolicy, is_retryable_status, parse_retry_after, retry_wait_s

NOW = 1_800_000_000.0


@pytest.mark.parametrize(("value", "expected"), [
    ("7", 7.0), (" 0 ", 0.0), ("2.5", 2.5), ("-3", 0.0),
    (formatdate(NOW + 30, usegmt=True), 30.0),
    (formatdate(NOW - 30, usegmt=True), 0.0),  # a date in the past: retry now
    (None, None), ("soon", None), ("", None),
])
def test_parse_retry_after(value, expected):
    assert parse_retry_after(value, NOW) == expected


def test_retry_after_wins_over_backoff_but_is_capped():
    policy = RetryPolicy(max_retries=6, base_s=1, cap_s=60, max_retry_after_s=600)
    assert retry_wait_s(policy, 1, 42.0, "a/clean") == 42.0
    assert retry_wait_s(policy, 1, 5000.0, "a/clean") == 600.0


def test_backoff_doubles_within_jitter_bounds_up_to_the_cap():
    policy = RetryPolicy(max_retries=10, base_s=1, cap_s=16)
    for number in range(1, 10):
        step = min(16, 2 ** (number - 1))
        waits = {retry_wait_s(policy, number, None, f"id-{k}") for k in range(50)}
        assert all(step / 2 <= w <= step for w in waits), (number, waits)
        assert len(waits) > 10  # jittered: different requests wait differently


def test_backoff_jitter_is_the_same_on_every_rerun():
    policy = RetryPolicy()
    assert retry_wait_s(policy, 3, None, "x/blank") == retry_wait_s(policy, 3, None, "x/blank")
    assert retry_wait_s(policy, 3, None, "x/blank") != retry_wait_s(policy, 3, None, "y/blank")


@pytest.mark.parametrize(("status", "retry"), [
    (429, True), (408, True), (500, True), (503, True), (529, True),
    (400, False), (401, False), (403, False), (404, False), (422, False),
])
def test_which_statuses_are_retried(status, retry):
    assert is_retryable_status(status) is retry


class FakeClock:
    def __init__(self):
        self.now = 100.0
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_pacer_spaces_attempts_to_the_cap():
    clock = FakeClock()
    pacer = Pacer(120, clock=clock, sleep=clock.sleep)  # one slot every 0.5 s
    waits = [pacer.wait() for _ in range(4)]
    assert waits == [0.0, 0.5, 0.5, 0.5]
    clock.now += 10  # idle time is not banked into a burst beyond one slot
    assert pacer.wait() == 0.0 and pacer.wait() == 0.5


def test_no_cap_never_waits():
    clock = FakeClock()
    pacer = Pacer(None, clock=clock, sleep=clock.sleep)
    assert [pacer.wait() for _ in range(3)] == [0.0, 0.0, 0.0] and clock.slept == []


def test_progress_line_counts_rate_and_eta():
    line = progress_line(30, 90, {"ok": 28, "unusable": 1, "failed": 1}, elapsed_s=60)
    assert line == "30/90 done · ok 28 · unusable 1 · failed 1 · 30.0 req/min · ETA 2m00s"
    assert progress_line(0, 90, {}, 5).endswith("0.0 req/min · ETA ?")
    assert format_duration(3 * 3600 + 125) == "3h02m"


def test_progress_on_a_log_prints_whole_lines_at_an_interval():
    stream, clock = io.StringIO(), FakeClock()
    progress = Progress(stream, total=10, interval_s=10, clock=clock)
    progress.update(1, {"ok": 1})
    clock.now += 5
    progress.update(2, {"ok": 2})  # too soon: not printed
    clock.now += 6
    progress.update(3, {"ok": 3})
    progress.update(10, {"ok": 10}, final=True)
    lines = stream.getvalue().splitlines()
    assert [line.split("/")[0] for line in lines] == ["run: 1", "run: 3", "run: 10"]
    assert "\r" not in stream.getvalue()
