"""Model and tool calls without langchain-core's callback machinery when nothing listens.

``invoke_model``/``ainvoke_model`` are the one place the agent calls a chat model; ``direct_tool`` tells
``_tools.run_sync``/``run_async`` when a tool's function may be called directly.

A langchain-core chat model's ``invoke`` does a lot besides generating: it configures a callback manager,
dumps the model's parameters for tracers, opens and closes an LLM run, inspects ``_generate``'s signature,
and wraps the reply in an ``LLMResult``. That costs more CPU than the rest of an agent step together, and
it is what bounds how many concurrent runs one process can serve. When nothing can observe those events,
the direct path calls the model's ``_generate``/``_agenerate`` as ``invoke``'s own cache-less,
non-streaming branch does (with a list of messages of its own, and a run manager without handlers for a
``_generate`` that takes one, as ``invoke`` hands them), and fills the reply's ``response_metadata`` the
same way.

The direct path is taken only when all of these hold, else the stock ``invoke``/``ainvoke`` runs:

- the model is a ``BaseChatModel`` whose class keeps langchain-core's own ``invoke`` path (``invoke``,
  ``generate``, ``_generate_with_cache`` and their async twins, ``_convert_input`` and ``_should_stream``
  are not overridden), with native async code for the async path;
- nobody listens: the call's callbacks are a manager without handlers (the run's own callback manager,
  configured when the run started, found no tracer, no debug or verbose handler and no configure hook),
  no configure hook whose handler is not inherited is on (``collect_runs``: ``invoke`` would add its
  handler to this very call) and debug mode is off (it may be switched on during a run), the model has no
  callbacks of its own and is not ``verbose``;
- no cache (neither the model's nor langchain's global one), no rate limiter, no streaming requested
  (``streaming=True`` or ``stream=`` in the call's arguments), ``output_version`` not ``"v1"``;
- every message's content is plain text (``invoke`` would normalise content blocks).

Tools likewise (:func:`direct_tool`): a stock ``StructuredTool`` whose function takes no ``config``,
``callbacks`` or ``run_manager`` and has no injected arguments, returning plain content
(``response_format="content"``), with no callbacks or ``verbose`` of its own and nobody listening, has its
arguments parsed by the tool itself (``_to_args_and_kwargs``, the same validation and coercion) and its
function called as ``invoke`` calls it: in a copy of the caller's context (a sync function through
``Context.run``, a coroutine as a task) with the run's config as the current config (nested runnables
inherit it), a ``ToolException`` or pydantic ``ValidationError`` it raises handled by the tool's
``handle_tool_error``/``handle_validation_error``.

The config of a model call is named and tagged by its purpose (``named_config``) on the stock path only:
the name is for tracers, and a direct call has none.

So a traced, cached, rate-limited or streamed model behaves exactly as with ``invoke``. The one visible
difference of a direct call: a reply without an ``id`` keeps none (``invoke`` gives it the id of the LLM run
it opened for the tracers).
"""

from __future__ import annotations

import inspect
import itertools
import secrets
from contextvars import Context, copy_context
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, BaseCallbackManager, CallbackManagerForLLMRun
from langchain_core.globals import get_debug, get_llm_cache
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, var_child_runnable_config
from langchain_core.tools import StructuredTool
from langchain_core.tracers.context import _configure_hooks
from langchain_core.utils.env import env_var_is_set

if TYPE_CHECKING:
    from react_agent._state import ModelCall

__all__ = ["ainvoke_model", "direct_model", "direct_tool", "invoke_model", "named_config", "tool_context"]

_ENSURED = frozenset(("tags", "metadata", "callbacks", "recursion_limit", "configurable"))  # ensure_config's keys
_COPIED = ("tags", "metadata", "configurable")  # never None in an ensured config
_GATEWAY_KEY = "lc_gateway_metadata"  # langchain-core drops this key of generation_info from response_metadata
_KEPT = ("invoke", "ainvoke", "generate", "agenerate", "generate_prompt", "agenerate_prompt",
         "_generate_with_cache", "_agenerate_with_cache", "_convert_input",
         "_should_stream", "_should_use_protocol_streaming")  # a model may decide to stream unasked


def invoke_model(llm: Any, messages: list[BaseMessage], config: RunnableConfig, kwargs: dict[str, Any],
                 call: ModelCall | None = None) -> Any:
    """``llm.invoke(messages, config, **kwargs)`` with the config named and tagged for ``call``
    (:func:`named_config`), or, when nothing observes the call (so nobody would read the name), directly."""
    if direct_model(llm, messages, config, kwargs, asynchronous=False):
        return _reply(llm._generate(list(messages), **_call_kwargs(llm, kwargs, asynchronous=False)))
    return llm.invoke(messages, named_config(config, call), **kwargs)


async def ainvoke_model(llm: Any, messages: list[BaseMessage], config: RunnableConfig,
                        kwargs: dict[str, Any], call: ModelCall | None = None) -> Any:
    """Async :func:`invoke_model`."""
    if direct_model(llm, messages, config, kwargs, asynchronous=True):
        return _reply(await llm._agenerate(list(messages), **_call_kwargs(llm, kwargs, asynchronous=True)))
    return await llm.ainvoke(messages, named_config(config, call), **kwargs)


def named_config(config: RunnableConfig, call: ModelCall | None) -> RunnableConfig:
    """The config of one model call: named and tagged by its purpose, so a tracer shows what it was for.
    (What ``patch_config(config, run_name=purpose)`` gives, plus the tag and metadata, in one copy.)"""
    purpose = call.purpose if call is not None else "decision"
    if _ENSURED.issubset(config.keys()) and all(config.get(k) is not None for k in _COPIED):
        named = cast(RunnableConfig, {**config, "configurable": dict(config["configurable"])})  # ensured: copy
    else:
        named = ensure_config(config)  # a copy with every key, as patch_config makes
    named["run_name"] = purpose
    named["tags"] = [*(named.get("tags") or []), f"react_agent:{purpose}"]
    named["metadata"] = {**(named.get("metadata") or {}), "react_agent_purpose": purpose}
    return named


def direct_model(llm: Any, messages: list[BaseMessage], config: RunnableConfig, kwargs: dict[str, Any], *,
                 asynchronous: bool) -> bool:
    """Whether this call may skip ``invoke``'s callback machinery (the conditions in the module doc)."""
    if not _stock_invoke(llm.__class__, asynchronous):
        return False
    callbacks = config.get("callbacks")
    if not isinstance(callbacks, BaseCallbackManager) or callbacks.handlers or callbacks.inheritable_handlers:
        return False
    if llm.callbacks or llm.verbose or llm.rate_limiter is not None or llm.output_version == "v1" or _hooked():
        return False
    if llm.cache is not False and (llm.cache is not None or _global_cache() is not None):
        return False
    if kwargs.get("stream") or ("streaming" in llm.model_fields_set and getattr(llm, "streaming", None)):
        return False
    return all(isinstance(m.content, str) for m in messages)


@lru_cache(maxsize=256)
def _stock_invoke(cls: type, asynchronous: bool) -> bool:
    """A ``BaseChatModel`` class that keeps langchain-core's own ``invoke`` path (see the module doc)."""
    if not issubclass(cls, BaseChatModel):
        return False
    if any(getattr(cls, name, None) is not getattr(BaseChatModel, name, None) for name in _KEPT):
        return False
    return not asynchronous or cls._agenerate is not BaseChatModel._agenerate


@lru_cache(maxsize=256)
def _takes_run_manager(method: Any) -> bool:
    try:
        return "run_manager" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return True


def _call_kwargs(llm: BaseChatModel, kwargs: dict[str, Any], *, asynchronous: bool) -> dict[str, Any]:
    """The keyword arguments ``invoke`` would hand to ``_generate``: tracing-only keys dropped, ``stop``
    passed as ``_generate_with_cache`` does, and, to a ``_generate`` that takes one, a run manager as
    ``invoke`` always hands one (without handlers: nobody listens), so a model that uses it unchecked works."""
    out = dict(kwargs)
    out.pop("ls_structured_output_format", None) or out.pop("structured_output_format", None)  # as generate
    out["stop"] = kwargs.get("stop")
    method = type(llm)._agenerate if asynchronous else type(llm)._generate
    if _takes_run_manager(method):
        manager = AsyncCallbackManagerForLLMRun if asynchronous else CallbackManagerForLLMRun
        out["run_manager"] = manager(run_id=_run_id(), handlers=[], inheritable_handlers=[], tags=[],
                                     inheritable_tags=[], metadata={}, inheritable_metadata={})  # get_noop_manager
    return out


_RUN_ID_BASE = secrets.randbits(128) & ~((1 << 64) - 1)  # this process's random high half
_RUN_IDS = itertools.count()


def _run_id() -> UUID:
    """A run id unique in this process and, by its random high half, across processes: what
    ``get_noop_manager`` draws from ``uuid7`` at about three times the cost, for a run nobody traces."""
    return UUID(int=_RUN_ID_BASE | next(_RUN_IDS))


def _reply(result: Any) -> Any:
    """The first generation's message, with ``response_metadata`` merged as ``_generate_with_cache`` does."""
    for generation in result.generations:
        info = generation.generation_info or {}
        generation.message.response_metadata = {
            **{k: v for k, v in info.items() if k != _GATEWAY_KEY}, **generation.message.response_metadata}
    message = result.generations[0].message
    if len(result.generations) == 1 and result.llm_output is not None:
        message.response_metadata = {**result.llm_output, **message.response_metadata}
    return message


def _global_cache() -> Any:
    return get_llm_cache()


def direct_tool(tool: Any, config: RunnableConfig | None, *, asynchronous: bool) -> bool:
    """Whether this tool call may skip ``invoke``'s callback machinery (see the module doc). ``asynchronous``:
    the tool's ``coroutine`` is to be awaited (else its ``func`` is called)."""
    if type(tool) is not StructuredTool or tool.callbacks or tool.verbose or tool.response_format != "content":
        return False
    callbacks = None if config is None else config.get("callbacks")
    if not isinstance(callbacks, BaseCallbackManager) or callbacks.handlers or callbacks.inheritable_handlers:
        return False
    function = tool.coroutine if asynchronous else tool.func
    return function is not None and _plain_function(function) and not tool._injected_args_keys and not _hooked()


def _hooked() -> bool:
    """Whether ``CallbackManager.configure`` in ``invoke`` would add a handler the run's callbacks, configured
    when it started, do not carry: debug mode switched on since (``set_debug``), or a configure hook that is
    not inherited (``collect_runs``, a hook registered with ``inheritable=False``), whose handler it adds to
    every call."""
    if get_debug():
        return True
    for var, inheritable, handler_class, env_var in _configure_hooks:
        if not inheritable and (var.get() is not None or (
                env_var is not None and handler_class is not None and env_var_is_set(env_var))):
            return True
    return False


@lru_cache(maxsize=1024)
def _plain_function(function: Any) -> bool:
    """A function that takes none of what ``StructuredTool._run`` injects (config, callbacks, run_manager)."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    for name, parameter in parameters.items():
        if name in ("callbacks", "run_manager", "config"):
            return False
        annotation = parameter.annotation
        text = annotation if isinstance(annotation, str) else repr(annotation)
        if annotation is RunnableConfig or "RunnableConfig" in text:
            return False
    return True


def tool_context(config: RunnableConfig) -> Context:
    """The context a tool runs in, as ``invoke`` makes it: a copy of the caller's context (what the tool sets
    in context variables stays in its call) in which the run's config, without its name and id, is the
    current config (nested runnables inherit it). Run the tool's function with ``context.run``, or its
    coroutine as a task of that context."""
    if "run_name" in config or "run_id" in config:
        config = cast(RunnableConfig, {k: v for k, v in config.items() if k not in ("run_name", "run_id")})
    context = copy_context()
    context.run(var_child_runnable_config.set, config)
    return context
