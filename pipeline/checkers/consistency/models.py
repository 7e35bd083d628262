"""Which model plays which part (sampler, judge, reformulator, improver), where
it is served, what it costs and how many requests it may have in flight.

A spec travels as JSON: a samplers file is a list of spec objects, a judge or
improver config one object. The key is never in the JSON: ``api_key_env``
names the environment variable holding it, which the caller (the CLI) reads.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import PipelineError
from ...llm import LLMConfig

#: A.4: temperature 1.0 for every call but the input response's generation.
DEFAULT_TEMPERATURE = 1.0
_KEYS = (
    "model",
    "base_url",
    "api_key_env",
    "price_per_mtok_prompt",
    "price_per_mtok_completion",
    "max_concurrency",
    "temperature",
    "max_tokens",
)


class ModelSpecError(PipelineError):
    """A model config is malformed, or a run cannot use it as given."""


@dataclass(frozen=True)
class ModelSpec:
    """One model at one OpenAI-compatible endpoint.

    Args:
        model: the name the server knows.
        base_url: the server's OpenAI-compatible root (``.../v1``).
        api_key_env: the environment variable holding the key; ``None`` for
            servers that need none.
        price_per_mtok_prompt: USD per million prompt tokens (``None``:
            unknown, so no cost and no budget).
        price_per_mtok_completion: USD per million completion tokens.
        max_concurrency: requests in flight at once at ``base_url``.
        temperature: sent with every request; ``None`` sends none
            (reasoning models reject the parameter).
        max_tokens: the completion cap sent; ``None`` sends none.
    """

    model: str
    base_url: str
    api_key_env: str | None = None
    price_per_mtok_prompt: float | None = None
    price_per_mtok_completion: float | None = None
    max_concurrency: int = 4
    temperature: float | None = DEFAULT_TEMPERATURE
    max_tokens: int | None = None

    def __post_init__(self):
        # A limit of 0 would leave every call waiting for a slot for ever.
        if self.max_concurrency < 1:
            raise ModelSpecError("field 'max_concurrency' must be 1 or more")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ModelSpecError("field 'max_tokens' must be 1 or more")
        for key in ("price_per_mtok_prompt", "price_per_mtok_completion"):
            price = getattr(self, key)
            if price is not None and not (math.isfinite(price) and price >= 0):
                raise ModelSpecError(f"field {key!r} must be 0 or more")

    @property
    def priced(self) -> bool:
        return (
            self.price_per_mtok_prompt is not None
            and self.price_per_mtok_completion is not None
        )

    def llm_config(
        self, api_key: str | None, *, timeout: float = 120.0, max_retries: int = 3
    ) -> LLMConfig:
        """The :class:`~pipeline.llm.LLMConfig` to call this model with."""
        extra = {} if self.max_tokens is None else {"max_tokens": self.max_tokens}
        return LLMConfig(
            base_url=self.base_url,
            model=self.model,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            temperature=self.temperature,
            extra=extra,
        )


def _text(obj: dict[str, Any], key: str, *, required: bool) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ModelSpecError(f"field {key!r} must be a non-empty string")
    return value


def _number(obj: dict[str, Any], key: str, *, integer: bool = False):
    value = obj[key]
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an integer" if integer else "a number"
        raise ModelSpecError(f"field {key!r} must be {what}, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ModelSpecError(f"field {key!r} must be 0 or more, got {value!r}")
    return value


def spec_from_json(raw: Any) -> ModelSpec:
    """A :class:`ModelSpec` from a parsed JSON object.

    A key left out takes the default; ``"temperature": null`` sends none.

    Raises:
        ModelSpecError: not an object, an unknown key, or a field of the wrong
            type or range, named.
    """
    if not isinstance(raw, dict):
        raise ModelSpecError("a model config must be a JSON object")
    unknown = sorted(set(raw) - set(_KEYS))
    if unknown:
        raise ModelSpecError(f"unknown fields {unknown}; known: {list(_KEYS)}")
    options: dict[str, Any] = {
        "model": _text(raw, "model", required=True),
        "base_url": _text(raw, "base_url", required=True),
        "api_key_env": _text(raw, "api_key_env", required=False),
    }
    for key in ("price_per_mtok_prompt", "price_per_mtok_completion", "temperature"):
        if key in raw:
            options[key] = None if raw[key] is None else float(_number(raw, key))
    for key in ("max_concurrency", "max_tokens"):
        if raw.get(key) is not None:
            options[key] = _number(raw, key, integer=True)
    return ModelSpec(**options)


def _json(value: str) -> Any:
    """``value`` parsed when it is inline JSON, else the file it names."""
    text = value.strip()
    if not text.startswith(("{", "[")):
        try:
            text = Path(value).read_text(encoding="utf-8")
        except OSError as e:
            raise ModelSpecError(f"cannot read: {e.strerror}") from e
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ModelSpecError(f"invalid JSON: {e}") from e


def _named(value: str) -> str:
    """How an error names the config: the path, or the start of inline JSON."""
    text = value.strip()
    return text if len(text) <= 60 else text[:57] + "..."


def read_spec(value: str) -> ModelSpec:
    """One spec from inline JSON (``{...}``) or a JSON file path.

    Raises:
        ModelSpecError: unreadable, not JSON, or a bad field (named).
    """
    try:
        return spec_from_json(_json(value))
    except ModelSpecError as e:
        raise ModelSpecError(f"model config {_named(value)}: {e}") from e


def read_specs(value: str) -> list[ModelSpec]:
    """A non-empty list of specs from inline JSON (``[...]``) or a file.

    Raises:
        ModelSpecError: unreadable, not a non-empty list, or a bad field of
            an entry (named with its index).
    """
    try:
        raw = _json(value)
        if not isinstance(raw, list) or not raw:
            raise ModelSpecError("must be a non-empty JSON list of model configs")
        specs = []
        for i, entry in enumerate(raw):
            try:
                specs.append(spec_from_json(entry))
            except ModelSpecError as e:
                raise ModelSpecError(f"entry {i}: {e}") from e
    except ModelSpecError as e:
        raise ModelSpecError(f"samplers {_named(value)}: {e}") from e
    return specs
