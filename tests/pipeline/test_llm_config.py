"""An LLM's configuration never shows its key: configs reach logs, error
messages and tracebacks through their repr."""

from pipeline.checkers.consistency.calls import CallLedger
from pipeline.checkers.consistency.models import ModelSpec
from pipeline.llm import LLMConfig


def test_the_key_is_not_in_the_repr():
    config = LLMConfig("http://127.0.0.1:9/v1", "m", api_key="sk-secret")
    assert config.api_key == "sk-secret"
    assert "sk-secret" not in repr(config) and "sk-secret" not in str(config)
    assert "m" in repr(config)


def test_a_ledger_holding_keys_does_not_show_them():
    spec = ModelSpec(model="m", base_url="http://127.0.0.1:9/v1", api_key_env="K")
    ledger = CallLedger([spec], api_keys={"K": "sk-secret"})
    assert "sk-secret" not in repr(ledger) and "sk-secret" not in str(vars(ledger))
