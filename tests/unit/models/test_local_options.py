"""The embedded model's options: a value llama.cpp would misread (0 tokens as "no limit", a negative context, a
temperature that is no number) is a ConfigError naming the option, made or given per call; good values pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from react_agent.errors import ConfigError
from react_agent.models import LocalChatModel

WRONG = [
    ("n_ctx", 0), ("n_ctx", -1), ("n_ctx", True), ("n_ctx", "4096"), ("n_ctx", 2.5),
    ("max_tokens", 0), ("max_tokens", -3), ("max_tokens", True), ("max_tokens", "5"), ("max_tokens", 1.5),
    ("temperature", -1), ("temperature", float("nan")), ("temperature", float("inf")), ("temperature", "hot"),
    ("temperature", True),
    ("seed", -2), ("seed", 2**32), ("seed", 1.5), ("seed", "1"), ("seed", None), ("seed", True),
    ("model_path", ""), ("model_path", "  "), ("model_path", 5),
    ("verbose", "yes"), ("verbose", 1),
]


@pytest.mark.parametrize(("option", "value"), WRONG, ids=[f"{o}={v!r}" for o, v in WRONG])
def test_a_wrong_option_value_is_a_config_error_naming_the_option(option: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=f"LocalChatModel\\({option}="):
        LocalChatModel(**{option: value})


PER_CALL = [("max_tokens", 0), ("max_tokens", "64"), ("temperature", -0.5), ("seed", 2**40)]


@pytest.mark.parametrize(("option", "value"), PER_CALL, ids=[f"{o}={v!r}" for o, v in PER_CALL])
def test_a_wrong_option_given_per_call_is_a_config_error_before_the_model_loads(tmp_path: Path, option: str,
                                                                                  value: Any) -> None:
    llm = LocalChatModel(model_path=str(tmp_path / "absent.gguf"))  # never loaded: the check comes first
    with pytest.raises(ConfigError, match=option):
        llm.invoke("hi", **{option: value})


def test_good_values_are_kept_as_given(tmp_path: Path) -> None:
    llm = LocalChatModel(n_ctx=2048, max_tokens=64, temperature=0, seed=-1, verbose=True,
                         model_path=tmp_path / "m.gguf")
    assert (llm.n_ctx, llm.max_tokens, llm.temperature, llm.seed, llm.verbose) == (2048, 64, 0.0, -1, True)
    assert llm.model_path == str(tmp_path / "m.gguf")
    assert LocalChatModel(temperature=0.7, seed=2**32 - 1).temperature == 0.7
