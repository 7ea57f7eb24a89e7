"""Chat models shipped with react_agent.

``LocalChatModel`` runs a GGUF file in-process through llama-cpp-python (optional extra ``local``:
``react-agent setup-local``). Importing this package never needs llama-cpp-python; the
model imports it on first use and raises an ImportError with the install command if it is missing.
"""

from react_agent._types import CallContext, ToolInfo
from react_agent.models._providers import make_model
from react_agent.models._setup import check_gigachat_settings as check_gigachat_settings  # for the CLI
from react_agent.models._setup import check_model_setup as check_model_setup  # for the agents
from react_agent.models._setup import held_settings as held_settings  # for the journal's secrets
from react_agent.models._setup import setting as setting  # for the journal's secrets
from react_agent.models._setup import wrapped_models as wrapped_models  # for the journal's secrets
from react_agent.models._structured import accepts_call_context as accepts_call_context  # for other layers
from react_agent.models._structured import agent_profile as agent_profile  # for other layers
from react_agent.models._structured import model_call_kwargs as model_call_kwargs  # for other layers
from react_agent.models._structured import resolve_mode as resolve_mode
from react_agent.models._structured import structured_kwargs as structured_kwargs
from react_agent.models.local._catalog import CATALOG as CATALOG  # for other layers
from react_agent.models.local._catalog import DEFAULT_LOCAL_MODEL as DEFAULT_LOCAL_MODEL  # for other layers
from react_agent.models.local._model import (
    DEFAULT_MODEL_NAME,
    LocalChatModel,
    default_model_path,
    render_plain,
    schema_from_response_format,
)
from react_agent.models.local._prefix import default_prompt_cache_dir

__all__ = [
    "DEFAULT_MODEL_NAME",
    "CallContext",
    "LocalChatModel",
    "ToolInfo",
    "default_model_path",
    "default_prompt_cache_dir",
    "make_model",
    "render_plain",
    "schema_from_response_format",
]
