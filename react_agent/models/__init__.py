"""Chat models shipped with react_agent.

``LocalChatModel`` runs a GGUF file in-process through llama-cpp-python (optional extra ``local``:
``pip install 'react-agent[local]'``). Importing this package never needs llama-cpp-python; the
model imports it on first use and raises an ImportError with the install command if it is missing.
"""

from react_agent.models._llama import (
    DEFAULT_MODEL_NAME,
    LocalChatModel,
    default_model_path,
    render_plain,
    schema_from_response_format,
)
from react_agent.models._providers import make_model

__all__ = [
    "DEFAULT_MODEL_NAME",
    "LocalChatModel",
    "default_model_path",
    "make_model",
    "render_plain",
    "schema_from_response_format",
]
