"""The embedded model's thread count: validated, and handed to llama.cpp as given (``None``: its default)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from react_agent.errors import ConfigError
from react_agent.models import LocalChatModel


@pytest.mark.parametrize("threads", [0, -2, 1.5, "2", True])
def test_a_thread_count_that_is_no_positive_whole_number_is_a_config_error(threads: object) -> None:
    with pytest.raises(ConfigError, match="n_threads"):
        LocalChatModel(n_threads=threads)


class _Loaded:
    """A stand-in for ``llama_cpp``: records how each ``Llama`` is made."""

    made: ClassVar[list[dict[str, object]]] = []

    class Llama:
        def __init__(self, **kwargs: object) -> None:
            _Loaded.made.append(kwargs)

        def close(self) -> None:
            pass


@pytest.mark.parametrize("given", [None, 1, 3])
def test_the_thread_count_reaches_llama_cpp_as_given(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      given: int | None) -> None:
    import react_agent.models.local._model as model_module

    weights = tmp_path / "m.gguf"
    weights.write_bytes(b"GGUF")
    _Loaded.made.clear()
    monkeypatch.setattr(model_module, "_import_llama_cpp", lambda: _Loaded)
    monkeypatch.setattr(model_module, "route_llama_logs", lambda *a, **k: None)
    LocalChatModel.clear_cache()
    try:
        LocalChatModel(model_path=str(weights), n_threads=given)._client()
    finally:
        LocalChatModel.clear_cache()
    assert [made["n_threads"] for made in _Loaded.made] == [given]
