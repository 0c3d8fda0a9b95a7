"""OpenAI Chat Completions, and every OpenAI-compatible server (vLLM, llama.cpp, Ollama, hosted ones).

POST {base_url}/chat/completions with `Authorization: Bearer KEY` (no header at
all when the config names no key, as local servers expect). The output is
`choices[0].message.content`; a compatible server may omit `usage` or report
`model` as a file path, and both are recorded as they come.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runner.providers import (
    Reply,
    ResponseShapeError,
    as_conversation,
    classify,
    merge_params,
    optional_dict,
    optional_str,
    require,
)

if TYPE_CHECKING:
    from common.conversation import Conversation
    from runner.config import ModelConfig

DEFAULT_BASE_URL = "https://api.openai.com/v1"
AUTH_HEADER = "Authorization"
FORBIDDEN_PARAMS = ("messages", "stream", "n")
CONVERSATION_KEYS = ("messages",)
STOPPED = {"stop", "eos"}  # "eos": some compatible servers
TRUNCATED = {"length"}
FILTERED = {"content_filter"}


def build_request(config: ModelConfig, conversation: Conversation | str) -> tuple[str, dict, dict]:
    """The system prompt is the first message, role "system"; the turns follow in order."""
    conversation = as_conversation(conversation)
    system = [] if conversation.system is None else [{"role": "system", "content": conversation.system}]
    body: dict[str, Any] = {
        "model": config.model,
        "messages": system + [{"role": turn.role, "content": turn.text} for turn in conversation.turns],
        config.max_tokens_field: config.max_tokens,
    }
    if config.temperature is not None:
        body["temperature"] = config.temperature
    body = merge_params(body, config.params, FORBIDDEN_PARAMS)
    return f"{config.base_url}/chat/completions", {"Content-Type": "application/json"}, body


def auth_headers(api_key: str) -> dict:
    return {AUTH_HEADER: f"Bearer {api_key}"}


def parse_response(data: Any) -> Reply:
    require(data, dict, "the response")
    choices = require(data.get("choices"), list, "'choices'")
    if not choices:
        raise ResponseShapeError("'choices' is empty")
    choice = require(choices[0], dict, "'choices[0]'")
    message = require(choice.get("message"), dict, "'choices[0].message'")
    output = message_text(message.get("content"))
    finish = optional_str(choice.get("finish_reason"))
    refusal = optional_str(message.get("refusal"))
    problem = classify(
        output,
        filtered=(f"finish_reason={finish}" if finish in FILTERED else None) or
                 (f"refusal: {refusal}" if refusal else None),
        truncated=f"finish_reason={finish}" if finish in TRUNCATED else None,
        unexpected=f"finish_reason={finish}" if finish is not None and finish not in STOPPED else None,
    )
    return Reply(output=output, finish_reason=finish, served_model=optional_str(data.get("model")),
                 usage=optional_dict(data.get("usage")), response_id=optional_str(data.get("id")), problem=problem)


def message_text(content: Any) -> str | None:
    """The message text: a string, or (some compatible servers) a list of text parts joined."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(require(part.get("text"), str, "a text part's 'text'") for part in content
                       if isinstance(part, dict) and part.get("type") == "text")
    raise ResponseShapeError("expected 'choices[0].message.content' to be a string, "
                             f"got {type(content).__name__}")
