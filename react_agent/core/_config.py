"""Agent options as one validated, frozen object.

Every option is checked once, when the agent is built: a wrong type or value raises :class:`ConfigError`
naming the option, what arrived and what is expected. Subclasses extend :class:`AgentConfig` with their
own fields (``ReflectionAgent`` and ``PlanAndExecuteAgent`` do) and point ``BaseAgent.Config`` at it.
"""

from __future__ import annotations

import difflib
import inspect
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from langchain_core.prompts import BasePromptTemplate
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)

from react_agent._types import Example
from react_agent.errors import ConfigError
from react_agent.runtime import RetryPolicy, journal_path_problem, seconds_problem
from react_agent.tools import short_repr

__all__ = ["AgentConfig", "ConstrainedMode", "FinalAnswerMode", "build_config"]

FinalAnswerMode = Literal["auto", "always", "never"]
ConstrainedMode = Literal["json_schema", "json_object", "grammar"]

PositiveInt = Annotated[StrictInt, Field(ge=1)]
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class AgentConfig(BaseModel):
    """The options of :class:`BaseAgent`, validated and frozen (``agent.config``):

    - ``max_iterations``: model decisions per run (parse failures count) before status ``"max_iterations"``.
    - ``prompts``: ``"ru"``, ``"en"``, ``"en-compact"``/``"ru-compact"``, a folder of ``*.jinja``
      overrides, a LangChain prompt template for the step prompt, a ``{name: template}`` mapping, or a
      :class:`PromptSet`; ``lang`` picks the built-in set under them when ``prompts`` is not a set name
      (``"en"``, or ``"en-compact"`` to layer a folder on the compact set).
    - ``history_window``: how many recent steps the step prompt shows (``None``: all). The result keeps all.
    - ``history_layout``: ``"prompt"`` (the step prompt's ``history`` variable holds the steps; default) or
      ``"messages"`` (the step prompt is rendered as on the first step and each decision follows it as chat
      turns: the decision's JSON as an ``AIMessage``, its results from the ``observation`` template as a
      ``HumanMessage``; what instruct models are trained on, and the prompt's prefix never changes).
    - ``max_observation_chars``: observations longer than this are truncated in prompts behind a marker.
    - ``final_answer``: ``"auto"`` (one extra call that writes the answer when FINISH came without one),
      ``"always"`` (also when the iteration limit is reached) or ``"never"``.
    - ``allow_plain_answer``: accept a reply of plain prose as the final answer (off: a parse error).
    - ``max_parse_errors``: consecutive unparseable replies before the run ends with status ``"error"``.
    - ``timeout``: seconds a tool call may take before it is abandoned (an error observation).
    - ``max_execution_time``: seconds for the whole run (model calls included) before status ``"timeout"``.
      Both are at most ``threading.TIMEOUT_MAX`` (what a thread can wait).
    - ``max_tokens_budget``: reported tokens a run may use; the run ends with status ``"budget"`` instead of
      making a model call once its usage has reached the budget.
    - ``constrained``: how the answer's JSON schema reaches the model: ``None`` detects it, ``False`` turns
      it off, ``True``/``"json_schema"``, ``"json_object"`` or ``"grammar"`` force a mode (see docs/models.md).
    - ``retry``: a :class:`RetryPolicy` for transient model errors (``None``: no retries).
    - ``approve``: ``(tool_name, action_input) -> bool``, asked before tools marked with
      ``metadata={"requires_approval": True}`` run; a refusal becomes an observation. Only ``True`` approves,
      and an answer that is not ``True`` or ``False`` is a :class:`ConfigError` (the call does not run). A
      plain function is asked in a worker thread under ``arun``/``astream`` (the event loop goes on); an
      ``async def`` is awaited there, and a sync run (``run``, ``stream``, ``invoke``, ``resume``) with one
      is a :class:`ConfigError` when it starts. The concurrent calls of one run ask one at a time.
    - ``journal``: the default journal file of runs that pass none (see :meth:`run`).
    - ``examples``: worked :class:`Example` s shown by step prompts that use the ``examples`` variable.
    - ``name``: the run's name in traces (default: the class name).
    - ``output_schema``: a pydantic model the final answer must follow (``result.output_object``).
    - ``protocol``: ``"text"`` (the model writes the decision as JSON text; default) or ``"native"`` (the
      model's own tool calls through ``bind_tools``; see docs/concepts.md, "Protocols").
    - ``max_parallel_calls``: the most tool calls one decision may hold; they run concurrently, and calls
      beyond it are not run (an error observation each). ``None``: 1 under the text protocol, every call of a
      reply under the native one. Above 1 the text prompts tell the model it may answer with a list.
    - ``verbose``: print each step live on stderr (rich), as ``react-agent run`` shows it.

    Without ``prompts`` and ``lang`` a run's prompts follow its task: Russian for a task with Cyrillic
    letters, English otherwise (a subclass that defines its own ``__init__`` keeps ``"ru"``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, validate_default=False)

    max_iterations: PositiveInt = Field(5, description="a positive integer")
    prompts: Any = Field("ru", description="a language or prompt-set name ('ru', 'en', 'en-compact'), a folder, "
                                           "a LangChain prompt template, a {name: template} mapping or a PromptSet")
    lang: Literal["ru", "en", "ru-compact", "en-compact"] | None = Field(
        None, description="'ru', 'en', 'ru-compact', 'en-compact' or None")
    history_window: Annotated[StrictInt, Field(ge=0)] | None = Field(3, description="None or an integer >= 0")
    history_layout: Literal["prompt", "messages"] = Field("prompt", description="'prompt' or 'messages'")
    max_observation_chars: PositiveInt = Field(2000, description="a positive integer")
    final_answer: FinalAnswerMode = Field("auto", description="'auto', 'always' or 'never'")
    allow_plain_answer: StrictBool = Field(False, description="True or False")
    max_parse_errors: PositiveInt = Field(3, description="a positive integer")
    timeout: Seconds | None = Field(None, description="None or positive seconds (a finite number)")
    max_execution_time: Seconds | None = Field(None, description="None or positive seconds (a finite number)")
    max_tokens_budget: PositiveInt | None = Field(None, description="None or a positive number of tokens")
    constrained: StrictBool | ConstrainedMode | None = Field(
        None, description="None (detect), False, True, 'json_schema', 'json_object' or 'grammar'")
    retry: RetryPolicy | None = Field(default_factory=RetryPolicy, description="None or a RetryPolicy")
    approve: Callable[[str, Any], bool | Awaitable[bool]] | None = Field(
        None, description="None or a callable (tool_name, action_input) -> bool, plain or async def")
    name: Annotated[StrictStr, Field(min_length=1)] | None = Field(None, description="None or a non-empty string")
    journal: Path | None = Field(None, description="None or the path of a .jsonl journal file (its folder must exist)")
    examples: tuple[Example, ...] = Field((), description="a sequence of react_agent.Example")
    output_schema: Any = Field(None, description="None or a pydantic model class (the shape of the final answer)")
    protocol: Literal["text", "native"] = Field("text", description="'text' or 'native'")
    max_parallel_calls: PositiveInt | None = Field(None, description="None or a positive integer")
    verbose: StrictBool = Field(False, description="True or False")

    @field_validator("prompts", mode="before")
    @classmethod
    def _prompts(cls, value: Any) -> Any:
        from react_agent._prompts import PromptSet

        if isinstance(value, (str, os.PathLike, BasePromptTemplate, PromptSet)):
            return value
        if isinstance(value, Mapping):
            for key, template in value.items():
                if not isinstance(key, str) or not isinstance(template, (str, BasePromptTemplate)):
                    raise ValueError(f"a mapping must map template names to jinja text or LangChain templates; "
                                     f"got {key!r}: {type(template).__name__}")
            return value
        raise ValueError(f"got a {type(value).__name__}")

    @field_validator("journal", mode="before")
    @classmethod
    def _journal(cls, value: Any) -> Any:
        if value is None:
            return None
        problem = journal_path_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return Path(value)

    @field_validator("examples", mode="before")
    @classmethod
    def _examples(cls, value: Any) -> Any:
        if isinstance(value, (str, bytes, Example, Mapping)) or not hasattr(value, "__iter__"):
            raise ValueError(f"got a {type(value).__name__}")
        items = tuple(value)
        for number, item in enumerate(items, 1):
            if not isinstance(item, Example):
                raise ValueError(f"example {number} is a {type(item).__name__}, not an Example")
        return items

    @field_validator("output_schema", mode="before")
    @classmethod
    def _output_schema(cls, value: Any) -> Any:
        if value is None or (isinstance(value, type) and issubclass(value, BaseModel)):
            return value
        raise ValueError("pass the model class, not an instance" if isinstance(value, BaseModel)
                         else "not a subclass of pydantic.BaseModel")

    @field_validator("timeout", "max_execution_time", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        problem = seconds_problem(value, allow_none=True)  # the check of a RetryPolicy's and a batch's waits
        if problem is not None:
            raise _Problem(problem)
        return value

    @field_validator("approve", mode="before")
    @classmethod
    def _approve(cls, value: Any) -> Any:
        if value is None or not callable(value):
            return value  # None, or the field's own error
        try:  # a plain function or an async def alike (a sync run refuses an async one when it starts)
            signature = inspect.signature(value)
        except (TypeError, ValueError):  # a builtin whose signature cannot be read: trusted
            return value
        try:
            signature.bind("tool_name", {})  # how a run calls it: approve(tool_name, action_input)
        except TypeError:
            raise ValueError(f"it cannot be called as approve(tool_name, action_input): its signature is "
                             f"{signature}") from None
        return value


class _Problem(ValueError):
    """A validator's complete sentence about an option: shown as ``{option} {problem}, got {value}``."""


def build_config(config_class: type[AgentConfig], options: Mapping[str, Any]) -> AgentConfig:
    """``config_class(**options)``, with every problem reported as one :class:`ConfigError`."""
    unknown = [k for k in options if k not in config_class.model_fields]
    if unknown:
        name = unknown[0]
        close = difflib.get_close_matches(name, list(config_class.model_fields), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; options: {', '.join(config_class.model_fields)}"
        raise ConfigError(f"unknown option {name!r} for {config_class.__name__}{hint}")
    try:
        return config_class(**options)
    except ValidationError as exc:
        raise ConfigError(_explain(config_class, exc, options)) from None


def _explain(config_class: type[AgentConfig], exc: ValidationError, options: Mapping[str, Any]) -> str:
    problems = []
    seen: set[str] = set()
    for error in exc.errors(include_url=False):
        name = str(error["loc"][0]) if error["loc"] else "options"
        if name in seen:
            continue
        seen.add(name)
        field = config_class.model_fields.get(name)
        expected = field.description if field is not None and field.description else "a valid value"
        got = options.get(name, error.get("input"))
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, _Problem):
            problems.append(f"{name} {cause}, got {short_repr(got)}")
            continue
        detail = f" ({str(error['msg']).removeprefix('Value error, ')})" if error["type"] == "value_error" else ""
        problems.append(f"{name} must be {expected}, got {short_repr(got)}{detail}")
    return "; ".join(problems)


