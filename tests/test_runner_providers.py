"""Provider request building and response parsing, case by case (HTTP round trips: test_runner_http)."""

from __future__ import annotations

import pytest

from runner import providers
from runner.config import parse_config
from runner.providers import ResponseShapeError

MESSAGE = "Fix the typo.\n\n  def f(): retrun 1  \nbtw this goes to the team\n"


def config(provider, **extra):
    raw = {"name": "t", "provider": provider, "model": "m-1", "max_tokens": 100, "temperature": 0.0, **extra}
    return parse_config(raw, path="t.toml")


def test_openai_request_is_one_user_message_and_the_config():
    url, headers, body = providers.get("openai").build_request(config("openai", params={"seed": 0}), MESSAGE)
    assert url == "https://api.openai.com/v1/chat/completions"
    assert body == {"model": "m-1", "messages": [{"role": "user", "content": MESSAGE}], "max_tokens": 100,
                    "temperature": 0.0, "seed": 0}
    assert "Authorization" not in headers
    assert providers.get("openai").auth_headers("k3y") == {"Authorization": "Bearer k3y"}


def test_anthropic_request_has_version_header_and_no_system():
    url, headers, body = providers.get("anthropic").build_request(config("anthropic"), MESSAGE)
    assert url == "https://api.anthropic.com/v1/messages"
    assert headers["anthropic-version"] == "2023-06-01" and "x-api-key" not in headers
    assert body == {"model": "m-1", "messages": [{"role": "user", "content": MESSAGE}], "max_tokens": 100,
                    "temperature": 0.0}


def test_gemini_request_puts_model_in_path_and_never_a_key():
    url, headers, body = providers.get("gemini").build_request(config("gemini"), MESSAGE)
    assert url == "https://generativelanguage.googleapis.com/v1beta/models/m-1:generateContent"
    assert "key=" not in url and "x-goog-api-key" not in headers
    assert body == {"contents": [{"role": "user", "parts": [{"text": MESSAGE}]}],
                    "generationConfig": {"maxOutputTokens": 100, "temperature": 0.0}}
    url, _, _ = providers.get("gemini").build_request(config("gemini", model="models/m-2"), MESSAGE)
    assert url.endswith("/models/m-2:generateContent")


def test_temperature_is_not_sent_when_the_config_leaves_it_out():
    raw = {"name": "t", "provider": "openai", "model": "m", "max_tokens": 5}
    _, _, body = providers.get("openai").build_request(parse_config(raw, path="t.toml"), "hi")
    assert "temperature" not in body


def openai_reply(content, finish="stop", **message_extra):
    return {"id": "c1", "model": "gpt-x-0613", "usage": {"total_tokens": 3},
            "choices": [{"message": {"role": "assistant", "content": content, **message_extra},
                         "finish_reason": finish}]}


@pytest.mark.parametrize(("data", "output", "problem"), [
    (openai_reply("  kept as is \n"), "  kept as is \n", None),
    (openai_reply("partial", "length"), "partial", "stopped by the output limit (finish_reason=length)"),
    (openai_reply(None, "content_filter"), None, "blocked by a content filter or refused (finish_reason="
                                                 "content_filter)"),
    (openai_reply(None, "stop", refusal="I can't"), None,
     "blocked by a content filter or refused (refusal: I can't)"),
    (openai_reply(" \n"), " \n", "empty output"),
    (openai_reply("x", "tool_calls"), "x", "unexpected stop (finish_reason=tool_calls)"),
    (openai_reply("x", None), "x", None),
    (openai_reply([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]), "ab", None),
])
def test_openai_parse(data, output, problem):
    reply = providers.get("openai").parse_response(data)
    assert (reply.output, reply.problem) == (output, problem)
    assert (reply.served_model, reply.usage, reply.response_id) == ("gpt-x-0613", {"total_tokens": 3}, "c1")


@pytest.mark.parametrize(("data", "output", "problem"), [
    ({"content": [{"type": "text", "text": "a"}, {"type": "thinking", "thinking": "t"}, {"type": "text",
                                                                                          "text": "b"}],
      "stop_reason": "end_turn"}, "ab", None),
    ({"content": [{"type": "text", "text": "a"}], "stop_reason": "max_tokens"}, "a",
     "stopped by the output limit (stop_reason=max_tokens)"),
    ({"content": [], "stop_reason": "refusal"}, None,
     "blocked by a content filter or refused (stop_reason=refusal)"),
    ({"content": [], "stop_reason": "end_turn"}, None, "empty output"),
    ({"content": [{"type": "text", "text": "a"}], "stop_reason": "tool_use"}, "a",
     "unexpected stop (stop_reason=tool_use)"),
])
def test_anthropic_parse(data, output, problem):
    reply = providers.get("anthropic").parse_response({"model": "claude-x", "usage": {}, **data})
    assert (reply.output, reply.problem, reply.served_model) == (output, problem, "claude-x")


@pytest.mark.parametrize(("data", "output", "problem"), [
    ({"candidates": [{"content": {"parts": [{"text": "t", "thought": True}, {"text": "a"}, {"text": "b"}]},
                      "finishReason": "STOP"}]}, "ab", None),
    ({"candidates": [{"finishReason": "SAFETY"}]}, None,
     "blocked by a content filter or refused (finishReason=SAFETY)"),
    ({"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": "MAX_TOKENS"}]}, "a",
     "stopped by the output limit (finishReason=MAX_TOKENS)"),
    ({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}, None,
     "blocked by a content filter or refused (prompt blocked: PROHIBITED_CONTENT)"),
    ({"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": "OTHER"}]}, "a",
     "unexpected stop (finishReason=OTHER)"),
])
def test_gemini_parse(data, output, problem):
    reply = providers.get("gemini").parse_response({"modelVersion": "gemini-x-002", **data})
    assert (reply.output, reply.problem, reply.served_model) == (output, problem, "gemini-x-002")


@pytest.mark.parametrize(("provider", "data"), [
    ("openai", {}), ("openai", {"choices": []}), ("openai", {"choices": [{"message": "x"}]}),
    ("openai", openai_reply(42)), ("openai", []), ("openai", openai_reply([{"type": "text", "text": None}])),
    ("anthropic", {"content": "x"}), ("anthropic", {"content": [{"type": "text", "text": 3}]}),
    ("gemini", {"candidates": "x"}), ("gemini", {"usageMetadata": {}}),
    ("gemini", {"candidates": [{"content": {"parts": "x"}}]}),
])
def test_unexpected_shapes_raise(provider, data):
    with pytest.raises(ResponseShapeError):
        providers.get(provider).parse_response(data)


def test_every_provider_module_satisfies_the_provider_protocol(monkeypatch):
    for name in providers.NAMES:
        assert isinstance(providers.get(name), providers.Provider), name
    monkeypatch.delattr(providers.get("gemini"), "parse_response")
    with pytest.raises(TypeError, match=r"runner\.providers\.gemini does not provide everything"):
        providers.get("gemini")


@pytest.mark.parametrize("usage", [[1, 2], "10 tokens", 7])
def test_a_usage_that_is_not_an_object_is_dropped_so_the_trace_row_stays_valid(usage):
    reply = providers.get("openai").parse_response(
        {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}], "usage": usage})
    assert reply.usage is None and reply.problem is None
    reply = providers.get("gemini").parse_response(
        {"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": "STOP"}], "usageMetadata": usage})
    assert reply.usage is None
