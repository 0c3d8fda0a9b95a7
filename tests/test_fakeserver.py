"""The fake provider server (tests/support/fakeserver.py) itself: formats, scripts, dropped connections."""

from __future__ import annotations

import pytest
from support.fakeserver import serve


def _post(url, payload, headers=None):
    import requests

    return requests.post(url, json=payload, headers=headers or {}, timeout=5)


CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_fake_answers_each_provider_format():
    with serve() as server:
        openai = _post(server.url + "/v1/chat/completions", CHAT).json()
        anthropic = _post(server.url + "/v1/messages", CHAT).json()
        gemini = _post(server.url + "/v1beta/models/m:generateContent",
                       {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).json()
    assert openai["choices"][0]["message"]["content"] == "EDITED<hi>"
    assert anthropic["content"][-1]["text"] == "EDITED<hi>"
    assert gemini["candidates"][0]["content"]["parts"][-1]["text"] == "EDITED<hi>"
    assert [r["kind"] for r in server.received] == ["openai", "anthropic", "gemini"]


def test_fake_follows_its_script_then_answers_ok():
    with serve({"hi": ["500", "429:7"]}) as server:
        statuses = [_post(server.url + "/v1/chat/completions", CHAT) for _ in range(3)]
    assert [r.status_code for r in statuses] == [500, 429, 200]
    assert statuses[1].headers["Retry-After"] == "7"


def test_fake_says_what_its_script_tells_it_to():
    with serve({"hi": ["say:YES", "say:no, it does not"]}) as server:
        replies = [_post(server.url + "/v1/chat/completions", CHAT).json() for _ in range(3)]
    assert [r["choices"][0]["message"]["content"] for r in replies] == ["YES", "no, it does not", "EDITED<hi>"]


def test_fake_drops_the_connection():
    import requests

    with serve({"hi": ["drop"]}) as server, pytest.raises(requests.exceptions.ConnectionError):
        _post(server.url + "/v1/chat/completions", CHAT)
