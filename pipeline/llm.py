"""A thin layer over any OpenAI-compatible chat completions server.

This is the only module that imports ``openai``. It works against OpenAI,
vLLM, Ollama and the llama.cpp server alike: the caller passes ``base_url``,
``model`` and ``api_key`` in an :class:`LLMConfig` (the library never reads
environment variables; the CLI does).

Transient failures (429, 5xx, timeouts, dropped connections) are retried by
the SDK itself with exponential backoff, honouring ``Retry-After``; this module
adds one *repair* round trip when an answer is not the JSON asked for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import openai

from .errors import ExtractionError

#: The client type other modules annotate with, so they need not import openai.
Client = openai.OpenAI

#: Sent when the caller has no key: local servers ignore it, and passing a value
#: keeps the SDK from reading ``OPENAI_API_KEY`` behind the caller's back.
NO_API_KEY = "no-key"

JsonMode = Literal["json_schema", "json_object", "none"]

_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to call the model.

    Args:
        base_url: the server's OpenAI-compatible root, e.g.
            ``https://api.openai.com/v1`` or ``http://localhost:8000/v1``.
        model: the model name the server knows.
        api_key: the key to send; ``None`` for servers that need none.
        timeout: seconds per HTTP request before it is abandoned and retried.
        max_retries: SDK retries of 429 / 5xx / timeouts (exponential backoff).
        temperature: sampling temperature; ``None`` leaves it to the server
            (reasoning models reject the parameter).
        json_mode: ``"json_schema"`` (strict structured output, the default),
            ``"json_object"`` for servers that only know JSON mode, or
            ``"none"``; the last two put the schema in the prompt instead.
        extra: more request body parameters passed through as they are
            (``max_tokens``, ``seed``, vLLM or Ollama options...).
    """

    base_url: str
    model: str
    # Out of the repr: configs end up in logs and tracebacks.
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 120.0
    max_retries: int = 3
    temperature: float | None = 0.0
    json_mode: JsonMode = "json_schema"
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if not self.base_url:
            raise ValueError("LLMConfig needs a base_url")
        if not self.model:
            raise ValueError("LLMConfig needs a model")
        if self.timeout <= 0:
            raise ValueError("LLMConfig.timeout must be positive")
        if self.max_retries < 0:
            raise ValueError("LLMConfig.max_retries must not be negative")
        if self.json_mode not in ("json_schema", "json_object", "none"):
            raise ValueError(f"unknown json_mode {self.json_mode!r}")


@dataclass(frozen=True)
class Usage:
    """Tokens and answered requests; ``a + b`` adds them up."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.requests + other.requests,
        )


class LLMError(ExtractionError):
    """A chat call failed; carries what was spent before it did.

    Attributes:
        usage: tokens and requests used by the attempts that were answered.
        status_code: the HTTP status when the server answered with an error.
        transient: the call itself failed (no connection, a timeout, 408,
            409, 429 or 5xx after the SDK's retries): worth trying again
            later, unlike an answer that was unusable.
    """

    def __init__(
        self,
        message: str,
        *,
        usage: Usage,
        status_code: int | None = None,
        transient: bool = False,
    ):
        super().__init__(message)
        self.usage = usage
        self.status_code = status_code
        self.transient = transient


def make_client(config: LLMConfig) -> Client:
    """An ``openai.OpenAI`` client for ``config`` (retries and timeout set)."""
    return openai.OpenAI(
        base_url=config.base_url,
        api_key=config.api_key or NO_API_KEY,
        timeout=config.timeout,
        max_retries=config.max_retries,
    )


def _where(config: LLMConfig) -> str:
    return f"{config.base_url} (model {config.model!r})"


def _api_error(e: openai.OpenAIError, config: LLMConfig, usage: Usage) -> LLMError:
    if isinstance(e, openai.APITimeoutError):
        return LLMError(
            f"request to {_where(config)} timed out after {config.timeout:g} s "
            f"and {config.max_retries} retries",
            usage=usage,
            transient=True,
        )
    if isinstance(e, openai.APIConnectionError):
        return LLMError(
            f"cannot reach {_where(config)}: {e}", usage=usage, transient=True
        )
    if isinstance(e, openai.APIStatusError):
        # The SDK's message repeats the status; the server's own words are
        # in the body, under "error" for OpenAI and most compatible servers.
        body = e.body.get("error", e.body) if isinstance(e.body, dict) else e.body
        detail = body.get("message") if isinstance(body, dict) else body
        return LLMError(
            f"HTTP {e.status_code} from {_where(config)}: {detail or e.message}",
            usage=usage,
            status_code=e.status_code,
            transient=e.status_code in (408, 409, 429) or e.status_code >= 500,
        )
    return LLMError(
        f"call to {_where(config)} failed: {e}", usage=usage, transient=True
    )


def _complete(
    client: Client,
    config: LLMConfig,
    messages: Sequence[Mapping[str, Any]],
    *,
    response_format: Mapping[str, Any] | None,
    usage: Usage,
) -> tuple[str, Usage]:
    """One chat completion: its text and ``usage`` plus what it cost."""
    params: dict[str, Any] = {"model": config.model, "messages": list(messages)}
    if config.temperature is not None:
        params["temperature"] = config.temperature
    if response_format is not None:
        params["response_format"] = response_format
    try:
        response = client.chat.completions.create(
            **params, extra_body=dict(config.extra) or None
        )
    except openai.OpenAIError as e:
        raise _api_error(e, config, usage) from e
    spent = response.usage
    usage = usage + Usage(
        (spent.prompt_tokens or 0) if spent else 0,
        (spent.completion_tokens or 0) if spent else 0,
        1,
    )
    if not response.choices:
        raise LLMError(f"{_where(config)} answered with no choices", usage=usage)
    message = response.choices[0].message
    if getattr(message, "refusal", None):
        raise LLMError(f"{_where(config)} refused: {message.refusal}", usage=usage)
    return message.content or "", usage


def chat_text(
    client: Client, config: LLMConfig, messages: Sequence[Mapping[str, Any]]
) -> tuple[str, Usage]:
    """Send ``messages`` and return the answer's text and its usage.

    Raises:
        LLMError: (an :class:`ExtractionError`) the server failed after the
            SDK's retries, naming status code, ``base_url`` and model.
    """
    return _complete(client, config, messages, response_format=None, usage=Usage())


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def _type_matches(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    return isinstance(value, _PY_TYPES.get(name, (object,)))


def schema_error(value: Any, schema: Mapping[str, Any], path: str = "$") -> str | None:
    """The first way ``value`` breaks ``schema``, or ``None`` if it fits.

    Covers the subset strict structured output uses (``type``, ``enum``,
    ``anyOf``, ``properties``/``required``/``additionalProperties``,
    ``items``), which is all the repair prompt needs to point at.
    """
    if "anyOf" in schema:
        results = [schema_error(value, option, path) for option in schema["anyOf"]]
        errors = [error for error in results if error is not None]
        if len(errors) < len(results):
            return None
        # The branch that got deepest is the one the model was aiming for.
        return max(errors, key=lambda error: len(error.split(":", 1)[0]))
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        if not any(_type_matches(value, name) for name in names):
            return f"{path}: expected {' or '.join(names)}, got {json.dumps(value)}"
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(v) for v in schema["enum"])
        return f"{path}: {json.dumps(value)} is not one of {allowed}"
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in value:
                return f"{path}: missing property {key!r}"
        if schema.get("additionalProperties") is False:
            unknown = sorted(set(value) - set(properties))
            if unknown:
                return f"{path}: unexpected properties {unknown}"
        for key, sub in properties.items():
            if key in value:
                error = schema_error(value[key], sub, f"{path}.{key}")
                if error:
                    return error
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            error = schema_error(item, schema["items"], f"{path}[{i}]")
            if error:
                return error
    return None


def parse_json(content: str, json_schema: Mapping[str, Any]) -> tuple[Any, str | None]:
    """Parse an answer; return ``(value, None)`` or ``(None, what is wrong)``.

    Markdown code fences are tolerated: servers without structured output
    often wrap JSON in them.
    """
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        return None, "it is empty"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        return None, f"it is not valid JSON ({e})"
    error = schema_error(value, json_schema)
    return (None, f"it does not match the schema: {error}") if error else (value, None)


def _response_format(
    config: LLMConfig, json_schema: Mapping[str, Any], name: str
) -> dict[str, Any] | None:
    if config.json_mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": json_schema, "strict": True},
        }
    if config.json_mode == "json_object":
        return {"type": "json_object"}
    return None


def chat_json(
    client: Client,
    config: LLMConfig,
    messages: Sequence[Mapping[str, Any]],
    json_schema: Mapping[str, Any],
    *,
    name: str = "response",
) -> tuple[Any, Usage]:
    """Ask for JSON matching ``json_schema``; repair a bad answer once.

    The schema goes out as strict structured output (or, for servers without
    it, in a system message; see :attr:`LLMConfig.json_mode`). When the answer
    is not valid JSON or does not fit the schema, the bad answer is sent back
    with the error and a request for corrected JSON only.

    Args:
        client: from :func:`make_client`.
        config: model and request settings.
        messages: the chat so far (``{"role": ..., "content": ...}``).
        json_schema: a strict-mode JSON Schema whose root is an object.
        name: the schema's name in the request (``[a-zA-Z0-9_-]``, <= 64).

    Returns:
        The parsed object and the usage of every request made.

    Raises:
        LLMError: (an :class:`ExtractionError`) the server failed, or the
            answer was still unusable after the repair attempt.
    """
    messages = list(messages)
    if config.json_mode != "json_schema":
        schema_text = json.dumps(json_schema, ensure_ascii=False)
        messages.append(
            {
                "role": "system",
                "content": "Answer with one JSON object matching this JSON "
                f"Schema and nothing else:\n{schema_text}",
            }
        )
    response_format = _response_format(config, json_schema, name)
    usage = Usage()
    content, usage = _complete(
        client, config, messages, response_format=response_format, usage=usage
    )
    value, problem = parse_json(content, json_schema)
    if problem is None:
        return value, usage
    repair = [
        *messages,
        {"role": "assistant", "content": content},
        {
            "role": "user",
            "content": f"Your answer could not be used: {problem}. Reply with the "
            "corrected JSON only, matching the required schema, with no other text.",
        },
    ]
    content, usage = _complete(
        client, config, repair, response_format=response_format, usage=usage
    )
    value, repaired_problem = parse_json(content, json_schema)
    if repaired_problem is None:
        return value, usage
    raise LLMError(
        f"answer from {_where(config)} still unusable after one repair attempt: "
        f"{repaired_problem}",
        usage=usage,
    )
