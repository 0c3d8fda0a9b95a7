"""Anthropic Messages.

POST {base_url}/messages with `x-api-key` and `anthropic-version` headers.
`max_tokens` is required by the API. The output is the text blocks of
`content` joined in order; other blocks (e.g. thinking) are not output but
stay in the trace's raw `response`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runner.providers import Reply, as_conversation, classify, merge_params, optional_dict, optional_str, require

if TYPE_CHECKING:
    from common.conversation import Conversation
    from runner.config import ModelConfig

DEFAULT_BASE_URL = "https://api.anthropic.com/v1"
AUTH_HEADER = "x-api-key"
API_VERSION = "2023-06-01"
FORBIDDEN_PARAMS = ("messages", "system", "stream")
CONVERSATION_KEYS = ("messages", "system")
STOPPED = {"end_turn", "stop_sequence"}
TRUNCATED = {"max_tokens", "model_context_window_exceeded"}
FILTERED = {"refusal"}


def build_request(config: ModelConfig, conversation: Conversation | str) -> tuple[str, dict, dict]:
    """The system prompt is the top-level `system` field (the Messages API has no system role)."""
    conversation = as_conversation(conversation)
    body: dict[str, Any] = {
        "model": config.model,
        "messages": [{"role": turn.role, "content": turn.text} for turn in conversation.turns],
        "max_tokens": config.max_tokens,
    }
    if conversation.system is not None:
        body["system"] = conversation.system
    if config.temperature is not None:
        body["temperature"] = config.temperature
    body = merge_params(body, config.params, FORBIDDEN_PARAMS)
    headers = {"Content-Type": "application/json", "anthropic-version": API_VERSION}
    return f"{config.base_url}/messages", headers, body


def auth_headers(api_key: str) -> dict:
    return {AUTH_HEADER: api_key}


def parse_response(data: Any) -> Reply:
    require(data, dict, "the response")
    blocks = require(data.get("content"), list, "'content'")
    texts = [require(block.get("text"), str, "a text block's 'text'")
             for block in blocks if isinstance(block, dict) and block.get("type") == "text"]
    output = "".join(texts) if texts else None
    stop = optional_str(data.get("stop_reason"))
    problem = classify(
        output,
        filtered=f"stop_reason={stop}" if stop in FILTERED else None,
        truncated=f"stop_reason={stop}" if stop in TRUNCATED else None,
        unexpected=f"stop_reason={stop}" if stop not in STOPPED else None,
    )
    return Reply(output=output, finish_reason=stop, served_model=optional_str(data.get("model")),
                 usage=optional_dict(data.get("usage")), response_id=optional_str(data.get("id")), problem=problem)
