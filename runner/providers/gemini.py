"""Google Gemini generateContent.

POST {base_url}/models/{model}:generateContent with the key in the
`x-goog-api-key` header, never in the URL (URLs end up in traces and logs).
The output is the non-thought text parts of the first candidate joined in
order. A prompt blocked before any candidate is written comes back with no
candidates and `promptFeedback.blockReason`: unusable, filtered.
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

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
AUTH_HEADER = "x-goog-api-key"
FORBIDDEN_PARAMS = ("contents", "systemInstruction", "system_instruction")
CONVERSATION_KEYS = ("contents", "systemInstruction")
STOPPED = {"STOP"}
TRUNCATED = {"MAX_TOKENS"}
FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"}


ROLES = {"user": "user", "assistant": "model"}  # Gemini calls the assistant "model"


def build_request(config: ModelConfig, conversation: Conversation | str) -> tuple[str, dict, dict]:
    """The system prompt is `systemInstruction`; an assistant turn has the role "model"."""
    conversation = as_conversation(conversation)
    generation: dict[str, Any] = {"maxOutputTokens": config.max_tokens}
    if config.temperature is not None:
        generation["temperature"] = config.temperature
    body: dict[str, Any] = {"contents": [{"role": ROLES[turn.role], "parts": [{"text": turn.text}]}
                                         for turn in conversation.turns],
                            "generationConfig": generation}
    if conversation.system is not None:
        body["systemInstruction"] = {"parts": [{"text": conversation.system}]}
    body = merge_params(body, config.params, FORBIDDEN_PARAMS)
    model = config.model if config.model.startswith("models/") else f"models/{config.model}"
    return f"{config.base_url}/{model}:generateContent", {"Content-Type": "application/json"}, body


def auth_headers(api_key: str) -> dict:
    return {AUTH_HEADER: api_key}


def parse_response(data: Any) -> Reply:
    require(data, dict, "the response")
    candidates = data.get("candidates") or []
    require(candidates, list, "'candidates'")
    served = optional_str(data.get("modelVersion"))
    usage = optional_dict(data.get("usageMetadata"))
    response_id = optional_str(data.get("responseId"))
    if not candidates:
        feedback = data.get("promptFeedback") if isinstance(data.get("promptFeedback"), dict) else {}
        block = optional_str(feedback.get("blockReason"))
        if block is None:
            raise ResponseShapeError("no 'candidates' and no 'promptFeedback.blockReason'")
        return Reply(output=None, finish_reason=None, served_model=served, usage=usage,
                     response_id=response_id, problem=classify(None, filtered=f"prompt blocked: {block}"))
    candidate = require(candidates[0], dict, "'candidates[0]'")
    content = candidate.get("content") or {}  # absent when a safety stop leaves nothing
    parts = require(require(content, dict, "'candidates[0].content'").get("parts") or [], list,
                    "'candidates[0].content.parts'")
    texts = [part["text"] for part in parts
             if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought")]
    output = "".join(texts) if texts else None
    finish = optional_str(candidate.get("finishReason"))
    problem = classify(
        output,
        filtered=f"finishReason={finish}" if finish in FILTERED else None,
        truncated=f"finishReason={finish}" if finish in TRUNCATED else None,
        unexpected=f"finishReason={finish}" if finish not in STOPPED else None,
    )
    return Reply(output=output, finish_reason=finish, served_model=served, usage=usage,
                 response_id=response_id, problem=problem)
