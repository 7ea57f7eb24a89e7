"""Agents as LangChain citizens: an agent as a tool, as a LangGraph node, in a conversation; structured answers.

Every agent already is a ``Runnable`` (``BaseAgent``). This module holds what builds on that:

- :class:`AgentTool` (``agent.as_tool(...)``): a ``BaseTool`` that runs the agent on a subtask. The
  sub-run is a child of the tool's run in traces, its token usage is added to the calling run's usage
  (through :func:`subrun_usage`), and a sub-run that does not finish is a tool error, i.e. an
  observation for the calling agent.
- :class:`AgentNode` (``agent.as_node(...)``): a LangGraph node mapping state keys to the agent's input
  and its result to a state update of plain data (so checkpoints hold no custom classes).
- :class:`Conversation`: the turns of one dialogue, kept across runs; :func:`compose_task` renders the
  previous turns (``conversation`` template) and the answer format of ``output_schema``
  (``answer_format`` template) around the task.
- :func:`structured_answer`: validates a FINISH answer against ``output_schema``.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, BaseCallbackManager, CallbackManagerForToolRun
from langchain_core.messages import AIMessage, BaseMessage, convert_to_messages
from langchain_core.runnables import ConfigurableFieldSpec, Runnable, RunnableConfig
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from react_agent._prompts import LANGUAGES, task_language
from react_agent._types import AgentResult
from react_agent.errors import ConfigError
from react_agent.integrations._graph import tool_call_messages
from react_agent.parsing import MAX_NESTING, nesting_depth
from react_agent.runtime import Agent, message_text, report_subrun_usage

if TYPE_CHECKING:
    from react_agent._prompts import PromptSet


class RunnableAgent(Agent, Protocol):
    """An agent as the adapters see it: the :class:`~react_agent.runtime.Agent` protocol and its entry points."""

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AgentResult: ...

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AgentResult: ...

    def run(self, task: Any, **kwargs: Any) -> AgentResult: ...

    async def arun(self, task: Any, **kwargs: Any) -> AgentResult: ...

    def with_options(self, **changes: Any) -> RunnableAgent: ...

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]: ...

    def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]: ...

    def identity(self) -> dict[str, Any]: ...

__all__ = ["AgentNode", "AgentTool", "AgentToolInput", "ConfigurableAgent", "RunnableAgent", "checked_config",
           "compose_task", "history_of", "output_json_schema", "rebuild", "structured_answer"]

_RAW_SCAN_LIMIT = 16  # at most this many '{' positions of a reply are tried when looking for FINISH's object
_ROLES = {"human": "user", "ai": "assistant", "system": "system"}


# -------------------------------------------------------------------------------------------- a run's config
_CONFIG_KEYS: tuple[tuple[str, type | tuple[type, ...], str], ...] = (
    ("callbacks", (list, BaseCallbackManager), "a list of callback handlers or a callback manager"),
    ("tags", list, "a list of strings"),
    ("metadata", Mapping, "a dict"),
    ("configurable", Mapping, "a dict"),
    ("run_name", str, "a string"),
)


def checked_config(config: Any) -> RunnableConfig | None:
    """``config`` when it is a ``RunnableConfig`` whose keys that a run reads have their types; otherwise a
    :class:`ConfigError` naming the key (langchain-core would fail later with an ``AttributeError`` of its own)."""
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise ConfigError(f"config must be a dict (a RunnableConfig such as {{'callbacks': [handler]}}) or None, "
                          f"got {type(config).__name__}")
    for key, kinds, what in _CONFIG_KEYS:
        value = config.get(key)
        if value is not None and not isinstance(value, kinds):
            raise ConfigError(f"config[{key!r}] must be {what}, got {type(value).__name__}")
    tags = config.get("tags")
    if tags and not all(isinstance(tag, str) for tag in tags):
        raise ConfigError("config['tags'] must be a list of strings")
    return cast("RunnableConfig", config)


# -------------------------------------------------------------------------------------------- agent as a tool
class AgentToolInput(BaseModel):
    """The default arguments of an agent run as a tool: the subtask, in words."""

    model_config = ConfigDict(extra="forbid")
    task: str


class AgentTool(BaseTool):
    """A ``BaseTool`` that runs an agent on a subtask (build it with ``agent.as_tool(...)``).

    The tool returns the sub-run's answer and keeps its :class:`AgentResult` as the artifact
    (``response_format="content_and_artifact"``: a ``ToolMessage``'s ``artifact`` when called with a tool
    call). A sub-run that does not end with status ``"finished"`` raises :class:`ToolException` with its
    output, so a calling agent sees it as an error observation.
    """

    agent: Any
    response_format: Any = "content_and_artifact"

    def _input(self, kwargs: dict[str, Any]) -> Any:
        if set(kwargs) == {"task"}:
            return kwargs["task"]
        if any(key in kwargs for key in ("input", "task", "question")):
            return kwargs
        return json.dumps(kwargs, ensure_ascii=False, default=str)

    def _outcome(self, result: AgentResult) -> tuple[str, AgentResult]:
        report_subrun_usage(result.usage)
        if result.status != "finished":
            raise ToolException(result.output or result.error or result.status)
        return result.output, result

    def _run(self, run_manager: CallbackManagerForToolRun | None = None, config: RunnableConfig | None = None,
             **kwargs: Any) -> tuple[str, AgentResult]:
        return self._outcome(self.agent.invoke(self._input(kwargs), config))

    async def _arun(self, run_manager: AsyncCallbackManagerForToolRun | None = None,
                    config: RunnableConfig | None = None, **kwargs: Any) -> tuple[str, AgentResult]:
        return self._outcome(await self.agent.ainvoke(self._input(kwargs), config))


def agent_tool(agent: RunnableAgent, args_schema: type[BaseModel] | None = None, *, name: str | None = None,
               description: str | None = None, arg_types: Mapping[str, type] | None = None) -> AgentTool:
    """``agent.as_tool(...)``: see :meth:`BaseAgent.as_tool`."""
    from react_agent.tools import name_problem

    tool_name = name or str(agent.name)
    problem = name_problem(tool_name)
    if problem is not None:
        raise ConfigError(f"as_tool: the tool name {tool_name!r} {problem}; pass name=...")
    if not isinstance(description, str) or not description.strip():
        raise ConfigError("as_tool needs description='what this agent does': the calling model picks tools by "
                          "their description")
    if args_schema is not None and arg_types is not None:
        raise ConfigError("as_tool takes args_schema or arg_types, not both")
    model: type[BaseModel] = AgentToolInput
    if arg_types is not None:
        if not isinstance(arg_types, Mapping) or not arg_types:
            raise ConfigError(f"arg_types must be a non-empty mapping of argument name to type, got {arg_types!r}")
        fields: dict[str, Any] = {key: (value, ...) for key, value in arg_types.items()}
        model = cast("type[BaseModel]", create_model(f"{tool_name}_input", **fields))
    elif args_schema is not None:
        if not (isinstance(args_schema, type) and issubclass(args_schema, BaseModel)):
            raise ConfigError(f"args_schema must be a pydantic model class, got {args_schema!r}")
        model = args_schema
    return AgentTool(name=tool_name, description=description.strip(), args_schema=model, agent=agent)


# -------------------------------------------------------------------------------------------- LangGraph node
class AgentNode(Runnable[Mapping[str, Any], dict[str, Any]]):
    """A LangGraph node running an agent (build it with ``agent.as_node(...)``).

    Reads the task from ``state[input_key]`` (default: ``"input"``, or ``"messages"`` in a state with
    messages and no input; a string, message-likes or a ``PromptValue``; with messages the last human one is
    the task and the earlier ones are the conversation) and the optional ``state["chat_history"]``; returns
    ``{output_key: answer}`` - with ``output_key="messages"`` the answer is one ``AIMessage`` named after
    the agent, for the ``add_messages`` reducer; with ``tool_messages=True`` it follows the run's tool calls
    as ``AIMessage(tool_calls=...)``/``ToolMessage`` pairs - plus ``{result_key: result.model_dump(mode=
    "json")}`` when ``result_key`` is set (plain data: checkpoints stay free of custom classes; rebuild the
    result with ``AgentResult.model_validate``).
    """

    def __init__(self, agent: RunnableAgent, *, input_key: str | None = None, output_key: str | None = None,
                 result_key: str | None = None, tool_messages: bool = False) -> None:
        for label, key in (("input_key", input_key), ("output_key", output_key), ("result_key", result_key)):
            if key is not None and (not isinstance(key, str) or not key):
                raise ConfigError(f"{label} must be a non-empty string, got {key!r}")
        if not isinstance(tool_messages, bool):
            raise ConfigError(f"tool_messages must be True or False, got {tool_messages!r}")
        self.agent = agent
        self.name = str(agent.name)
        self.input_key = input_key
        self.output_key = output_key
        self.result_key = result_key
        self.tool_messages = tool_messages

    def _source(self, state: Any) -> str:
        """The state key the task is read from: ``input_key``, else ``"input"``, or ``"messages"`` when the
        state has messages and no ``input``."""
        key = self.input_key
        if key is None:
            key = "messages" if isinstance(state, Mapping) and "messages" in state and "input" not in state \
                else "input"
        if not isinstance(state, Mapping) or key not in state:
            got = sorted(map(str, state)) if isinstance(state, Mapping) else type(state).__name__
            raise ConfigError(f"{self.name} node reads the task from state[{key!r}]; got {got} "
                              f"(pass input_key=... to as_node)")
        return key

    def _input(self, state: Any, key: str) -> dict[str, Any]:
        value: dict[str, Any] = {"input": state[key]}
        if state.get("chat_history") is not None:
            value["chat_history"] = state["chat_history"]
        return value

    def _update(self, result: AgentResult, source: str) -> dict[str, Any]:
        update: dict[str, Any] = {}
        output_key = self.output_key or ("messages" if source == "messages" else "output")
        if output_key == "messages":
            calls = tool_call_messages(result, str(self.name)) if self.tool_messages else []
            update["messages"] = [*calls, AIMessage(content=result.output, name=self.name)]
        else:
            update[output_key] = result.output
        if self.result_key is not None:
            update[self.result_key] = result.model_dump(mode="json")
        return update

    def invoke(self, input: Mapping[str, Any], config: RunnableConfig | None = None,
               **kwargs: Any) -> dict[str, Any]:
        source = self._source(input)
        return self._update(self.agent.invoke(self._input(input, source), config), source)

    async def ainvoke(self, input: Mapping[str, Any], config: RunnableConfig | None = None,
                      **kwargs: Any) -> dict[str, Any]:
        source = self._source(input)
        return self._update(await self.agent.ainvoke(self._input(input, source), config), source)


# -------------------------------------------------------------------------------------------- configurable options
def rebuild(agent: RunnableAgent, changes: Mapping[str, Any]) -> RunnableAgent:
    """``agent.with_options(...)``: a new agent of the same class, model and tools, with ``changes`` applied to
    the options it was built with."""
    kept = {name: getattr(agent.config, name) for name in agent.config.model_fields_set}
    try:
        rebuilt: RunnableAgent = type(agent)(agent.llm, list(agent.registry.tools.values()),  # type: ignore[call-arg]
                                             **{**kept, **changes})
        return rebuilt
    except TypeError as exc:  # a subclass whose __init__ takes other arguments
        raise ConfigError(f"{type(agent).__name__} cannot be rebuilt as {type(agent).__name__}(llm, tools, "
                          f"**options) ({exc}); override with_options") from None


_LANGUAGE_VARIANTS: weakref.WeakKeyDictionary[Any, dict[str, RunnableAgent]] = weakref.WeakKeyDictionary()
_VARIANTS_LOCK = threading.Lock()


def for_task_language(agent: RunnableAgent, task: str) -> RunnableAgent:
    """The agent that runs ``task``: ``agent`` itself, or - when it was built without ``prompts`` and ``lang`` -
    the same agent with the built-in prompts in the task's language (:func:`task_language`), built once.
    A subclass with an ``__init__`` of its own keeps its prompts (a rebuilt agent would not share the data
    that ``__init__`` keeps)."""
    config = agent.config
    if {"prompts", "lang"} & config.model_fields_set or not isinstance(config.prompts, str) \
            or not _rebuilt_as_it_is(type(agent)):
        return agent
    lang = task_language(task)
    base, _, variant = config.prompts.partition("-")
    if base == lang or base not in LANGUAGES:
        return agent
    with _VARIANTS_LOCK:
        built = _LANGUAGE_VARIANTS.get(agent, {}).get(lang)
    if built is None:
        try:
            built = agent.with_options(prompts=f"{lang}-{variant}" if variant else lang)
        except ConfigError:  # a subclass that cannot be rebuilt keeps its prompts
            return agent
        with _VARIANTS_LOCK:
            _LANGUAGE_VARIANTS.setdefault(agent, {})[lang] = built
    return built


def _rebuilt_as_it_is(cls: type) -> bool:
    """Whether an agent of ``cls`` rebuilt from its options is the same agent: no class of its own defines
    ``__init__`` (which may keep per-instance data a rebuilt agent would not share)."""
    return all("__init__" not in vars(base) or base.__module__.startswith("react_agent.")
               for base in cls.__mro__ if base is not object)


class ConfigurableAgent(Runnable[Any, AgentResult]):
    """An agent whose options are chosen per call from ``config["configurable"]`` (build it with
    ``agent.configurable_fields(option=ConfigurableField(id=...))``). Each distinct choice builds (and
    validates) one agent, kept for later calls."""

    _CACHE_SIZE = 32

    def __init__(self, agent: RunnableAgent, fields: Mapping[str, Any]) -> None:
        from langchain_core.runnables import ConfigurableField

        options = type(agent.config).model_fields
        for option, spec in fields.items():
            if option not in options:
                raise ConfigError(f"configurable_fields: {option!r} is not an option of {type(agent).__name__}; "
                                  f"options: {', '.join(options)}")
            if not isinstance(spec, ConfigurableField):
                raise ConfigError(f"configurable_fields: {option} must be a ConfigurableField, "
                                  f"got {type(spec).__name__}")
        self.agent = agent
        self.fields = dict(fields)
        self.name = str(agent.name)
        self._variants: dict[str, RunnableAgent] = {}
        self._lock = threading.Lock()

    @property
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        return [ConfigurableFieldSpec(id=spec.id, annotation=spec.annotation or Any, name=spec.name,
                                      description=spec.description, default=getattr(self.agent.config, option),
                                      is_shared=spec.is_shared) for option, spec in self.fields.items()]

    def variant(self, config: RunnableConfig | None) -> RunnableAgent:
        """The agent for ``config``: this one, or one built with the configured option values."""
        chosen = (checked_config(config) or {}).get("configurable") or {}
        changes = {option: chosen[spec.id] for option, spec in self.fields.items() if spec.id in chosen}
        if not changes:
            return self.agent
        key = repr(sorted(changes.items()))
        with self._lock:
            built = self._variants.get(key)
        if built is None:
            built = self.agent.with_options(**changes)
            with self._lock:
                if len(self._variants) >= self._CACHE_SIZE:
                    self._variants.pop(next(iter(self._variants)))
                self._variants[key] = built
        return built

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AgentResult:
        return self.variant(config).invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AgentResult:
        return await self.variant(config).ainvoke(input, config, **kwargs)

    def stream(self, input: Any, config: RunnableConfig | None = None,
               **kwargs: Any) -> Iterator[Any]:
        return self.variant(config).stream(input, config, **kwargs)

    def astream(self, input: Any, config: RunnableConfig | None = None,
                **kwargs: Any) -> AsyncIterator[Any]:
        return self.variant(config).astream(input, config, **kwargs)


# -------------------------------------------------------------------------------------------- conversations
@runtime_checkable
class Dialogue(Protocol):
    """What ``chat_history`` takes besides a list: an object with the dialogue's ``messages`` (a Conversation)."""

    @property
    def messages(self) -> list[BaseMessage]: ...


def history_of(value: Any) -> tuple[BaseMessage, ...]:
    """The messages of a ``chat_history`` argument: ``None``, a :class:`Conversation`, or a sequence of
    messages, ``(role, text)`` pairs or ``{"role": ..., "content": ...}`` dicts."""
    if value is None:
        return ()
    if isinstance(value, Dialogue):  # a Conversation
        return tuple(value.messages)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise ConfigError(f"chat_history must be a list of messages (or (role, text) pairs) or a Conversation, "
                          f"got {type(value).__name__}")
    try:
        return tuple(convert_to_messages(list(value)))
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise ConfigError(f"chat_history must be a list of messages (or (role, text) pairs) or a Conversation; "
                          f"{exc}") from None


def _turns(history: Sequence[BaseMessage]) -> list[dict[str, str]]:

    turns = []
    for message in history:
        role = _ROLES.get(message.type)
        text = message_text(message).strip()
        if role is not None and text:  # tool messages and tool-call-only replies stay with their run
            turns.append({"role": role, "text": text})
    return turns


def output_json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``output_schema``."""
    return schema.model_json_schema()


def compose_task(prompts: PromptSet, task: str, history: Sequence[BaseMessage],
                 output_schema: type[BaseModel] | None) -> str:
    """The task as the run's prompts show it: the previous turns of the conversation before it
    (``conversation`` template), the answer format of ``output_schema`` after it (``answer_format``)."""
    turns = _turns(history)
    if turns:
        task = prompts.render("conversation", turns=turns, task=task)
    if output_schema is not None:
        schema = json.dumps(output_json_schema(output_schema), ensure_ascii=False)
        task = prompts.render("answer_format", task=task, schema=schema)
    return task


# -------------------------------------------------------------------------------------------- structured answers
def structured_answer(schema: type[BaseModel], answer: str, reply_text: str) -> tuple[BaseModel | None, str]:
    """Validate a FINISH answer against ``schema``: ``(object, "")``, or ``(None, error)`` where ``error`` is
    the validation error for the model (empty when the answer held no JSON object at all).

    The candidates are the answer text decoded as JSON, then the ``action_input`` of the reply's JSON
    objects (the parser reduces an answer object to text, e.g. ``{"answer": ...}`` to its value)."""
    error = ""
    for candidate in _candidates(answer, reply_text):
        if nesting_depth(candidate, MAX_NESTING) > MAX_NESTING:
            error = error or f"the answer is nested more than {MAX_NESTING} levels deep"
            continue
        try:
            return schema.model_validate(candidate), ""
        except ValidationError as exc:
            error = error or _validation_text(exc)
        except (ValueError, RecursionError):  # pydantic's own limits on pathological values
            error = error or "the answer could not be validated"
    return None, error


def _candidates(answer: str, reply_text: str) -> Iterator[Any]:
    text = answer.strip()
    if text.startswith("{"):
        with suppress(ValueError, RecursionError):
            yield json.loads(text)
    decoder = json.JSONDecoder()
    start, tries = reply_text.find("{"), 0
    while start != -1 and tries < _RAW_SCAN_LIMIT:
        tries += 1
        try:
            obj, end = decoder.raw_decode(reply_text, start)
        except (ValueError, RecursionError):
            start = reply_text.find("{", start + 1)
            continue
        if isinstance(obj, dict) and "action_input" in obj:
            raw = obj["action_input"]
            if isinstance(raw, str) and raw.strip().startswith("{"):
                with suppress(ValueError, RecursionError):
                    raw = json.loads(raw)
            if isinstance(raw, dict):
                yield raw
        start = reply_text.find("{", end)


def _validation_text(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False)[:5]:
        where = ".".join(str(p) for p in error["loc"])
        parts.append(f"{where}: {error['msg']}" if where else str(error["msg"]))
    return "; ".join(parts)
