"""An agent's outside: the entry points (``run``, ``arun``, the ``Runnable`` methods, the resume family),
the sync and async drivers behind them, and the LangChain/LangGraph adapters (``as_tool``, ``as_node``,
``with_options``, ``configurable_fields``).

:class:`AgentRunnable` is the base of ``BaseAgent``, which holds the loop and its seams. Both drivers
(:func:`stream_run`, :func:`astream_run`) start a run, drive the journal layer (``_driver.drive``) and
perform the raw I/O it lets through; they differ only in how that I/O is awaited.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from langchain_core.callbacks import AsyncCallbackManager, AsyncCallbackManagerForChainRun, CallbackManager
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, patch_config
from langchain_core.utils.uuid import uuid7

from react_agent._types import AgentResult, AgentStep
from react_agent.errors import ConfigError
from react_agent.integrations._console import StepConsole
from react_agent.integrations._graph import graph_control, step_chunk, stream_writer, with_messages
from react_agent.integrations._runnable import (
    AgentNode,
    AgentTool,
    ConfigurableAgent,
    RunnableAgent,
    agent_tool,
    checked_config,
    compose_task,
    for_task_language,
    history_of,
    rebuild,
)
from react_agent.runtime import (
    STEP_EVENT,
    BatchProgress,
    EarlyStep,
    Failure,
    ModelCallError,
    RunJournal,
    RunState,
    StepDone,
    ToolBatch,
    advance,
    aperform,
    aperform_batch,
    close,
    drive,
    end_payload,
    failed,
    journal_of,
    journal_path_problem,
    last,
    masked_cause,
    perform,
    perform_batch,
    secret_values,
    step_data,
    sync_approve_problem,
    task_of,
)
from react_agent.tools import DeadlineExceeded, acall_in_thread, short_repr

__all__ = ["AgentRunnable", "astream_run", "start", "stream_run"]


class AgentRunnable(Runnable[Any, AgentResult]):
    """The entry points of an agent; the loop they drive is ``BaseAgent``'s."""

    # ---------------------------------------------------------------- run
    def run(self, task: Any, *, config: RunnableConfig | None = None, journal: str | os.PathLike[str] | None = None,
            session: Mapping[str, Any] | None = None, chat_history: Any = None) -> AgentResult:
        """Solve ``task``; returns the :class:`AgentResult` (never raises for model or tool mistakes).

        ``journal``: a JSONL file this run appends every effect to (fsync-ed), so :meth:`resume` can finish
        it after a crash; many runs and processes may share one file. ``session``: per-run values that
        ``$session.<key>`` references resolve to (:class:`PlanAndExecuteAgent`). ``chat_history``: the
        previous turns of a dialogue (messages, ``(role, text)`` pairs or a :class:`Conversation`), shown to
        the model before the task; the tool steps of a run never cross into another.
        """
        return last(self.stream(task, config, journal=journal, session=session, chat_history=chat_history))

    async def arun(self, task: Any, *, config: RunnableConfig | None = None,
                   journal: str | os.PathLike[str] | None = None,
                   session: Mapping[str, Any] | None = None, chat_history: Any = None) -> AgentResult:
        """Async :meth:`run`: awaits the model's and tools' async methods."""
        return await _alast(self.astream(task, config, journal=journal, session=session, chat_history=chat_history))

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AgentResult:
        """Runnable entry point: :meth:`run` with ``input`` a task string, a ``PromptValue``, a message list
        or ``{"input": ..., "session": ..., "journal": ...}``."""
        return last(self.stream(input, config, **kwargs))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AgentResult:
        return await _alast(self.astream(input, config, **kwargs))

    def stream(self, input: Any, config: RunnableConfig | None = None,  # type: ignore[override]
               **kwargs: Any) -> Iterator[AgentStep | AgentResult]:
        """Yield each :class:`AgentStep` as it completes, then the :class:`AgentResult` (``run`` and ``invoke`` go
        through here). An ``async def`` ``approve`` is a :class:`ConfigError` raised here, before anything is
        journaled or asked of the model: only ``arun``/``astream``/``ainvoke`` await it."""
        agent = _agent(self)
        _refuse_async_approve(agent)
        return stream_run(agent, input, config, **kwargs)

    def astream(self, input: Any, config: RunnableConfig | None = None,  # type: ignore[override]
                **kwargs: Any) -> AsyncIterator[AgentStep | AgentResult]:
        """Async :meth:`stream`. Journal records are written and fsync-ed in a worker thread, before the
        run goes on, so a journaled run never blocks the event loop on the disk."""
        return astream_run(_agent(self), input, config, **kwargs)

    # ---------------------------------------------------------------- resume a journaled run
    def resume(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
               config: RunnableConfig | None = None, session: Mapping[str, Any] | None = None) -> AgentResult:
        """Continue the run recorded in ``journal`` (its last run, or ``run_id``) and return its result.

        The loop is re-run and each effect is answered from the journal while records remain: completed
        model calls are not made again, completed tool calls do not run again, journaled approvals are
        honoured whatever this agent's ``approve`` is. A tool call that started but has no result runs
        again with the same idempotency key. Then the run continues live, appending to the same journal.
        Resume with the same agent class, prompts, tools and options: a run whose journaled options or
        prompts differ raises :class:`JournalMismatchError`. ``max_execution_time`` counts from the resume.
        """
        return last(self.resume_stream(journal, run_id=run_id, config=config, session=session))

    async def aresume(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
                      config: RunnableConfig | None = None, session: Mapping[str, Any] | None = None) -> AgentResult:
        """Async :meth:`resume`."""
        return await _alast(self.aresume_stream(journal, run_id=run_id, config=config, session=session))

    def resume_stream(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
                      config: RunnableConfig | None = None,
                      session: Mapping[str, Any] | None = None) -> Iterator[AgentStep | AgentResult]:
        """:meth:`resume` step by step (replayed steps first). :class:`JournalError` if there is no run.
        ``session``: the run's own session values (they are not journaled), as given to :meth:`run`."""
        agent = _agent(self)
        _refuse_async_approve(agent)  # before the journal is opened (and a resume record written)
        opened = RunJournal.open(_resumed_journal(journal), run_id=run_id,
                                 secrets=secret_values(agent.llm), identity=self.identity())
        return self.stream(opened.task, config, _resume=opened, session=session)

    def aresume_stream(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
                       config: RunnableConfig | None = None,
                       session: Mapping[str, Any] | None = None) -> AsyncIterator[AgentStep | AgentResult]:
        """Async :meth:`resume_stream`."""
        agent = _agent(self)
        opened = RunJournal.open(_resumed_journal(journal), run_id=run_id,
                                 secrets=secret_values(agent.llm), identity=self.identity())
        return self.astream(opened.task, config, _resume=opened, session=session)

    def identity(self) -> dict[str, Any]:
        """The options that change a run's outcome; a resume with other values is refused."""
        agent = _agent(self)
        keep = ("max_iterations", "history_window", "max_observation_chars", "final_answer", "allow_plain_answer",
                "max_parse_errors", "max_tokens_budget")
        return {"agent": type(self).__name__, "tools": agent.registry.names,
                **{k: getattr(agent.config, k) for k in keep if k in type(agent.config).model_fields},
                **_decision_identity(getattr(agent.config, "protocol", "text"),
                                    getattr(agent.config, "max_parallel_calls", None))}

    # ---------------------------------------------------------------- LangChain / LangGraph
    def as_tool(self, args_schema: Any = None, *, name: str | None = None, description: str | None = None,
                arg_types: Any = None) -> AgentTool:
        """This agent as a ``BaseTool`` another agent (or any LangChain tool caller) can call with a subtask.

        ``description`` (required) tells the calling model what the agent does; ``name`` defaults to the
        agent's name. The tool takes ``{"task": "..."}`` unless ``args_schema`` (a pydantic model) or
        ``arg_types`` (``{name: type}``) say otherwise; then its arguments are the run's dict input (with an
        ``input``/``task``/``question`` key) or, without one, their JSON text is the task. The sub-run is a
        child of the tool call in traces, its token usage is added to the calling run's usage, and a sub-run
        that does not finish is a tool error (an observation for the caller)."""
        return agent_tool(_agent(self), args_schema, name=name, description=description, arg_types=arg_types)

    def as_node(self, *, input_key: str | None = None, output_key: str | None = None,
                result_key: str | None = None, tool_messages: bool = False) -> AgentNode:
        """This agent as a LangGraph node that maps state keys (see :class:`AgentNode`): the task from
        ``state[input_key]`` (default ``"input"``, or ``"messages"`` in a state with messages and no input),
        the answer to ``state[output_key]`` (``"messages"``: an ``AIMessage``; default:
        ``"messages"`` when reading messages, else ``"output"``), the result as plain data to
        ``state[result_key]`` when set. ``tool_messages=True`` also appends the run's tool calls as
        ``AIMessage(tool_calls=...)``/``ToolMessage`` pairs before the answer."""
        return AgentNode(_agent(self), input_key=input_key, output_key=output_key, result_key=result_key,
                         tool_messages=tool_messages)

    def with_options(self, **changes: Any) -> RunnableAgent:
        """A new agent of this class with the same model and tools and these options changed (agents are
        immutable, so this is how to derive one); the options are validated as in ``__init__``."""
        return rebuild(_agent(self), changes)

    def configurable_fields(self, **fields: Any) -> ConfigurableAgent:
        """LangChain's ``configurable_fields`` for agent options: ``agent.configurable_fields(
        max_iterations=ConfigurableField(id="steps"))`` gives a Runnable whose option is chosen per call by
        ``config={"configurable": {"steps": 8}}`` (each distinct choice builds one validated agent)."""
        return ConfigurableAgent(_agent(self), fields)


def _decision_identity(protocol: str, max_parallel_calls: int | None) -> dict[str, Any]:
    """The identity of how decisions are made: the protocol and the call limit in effect, each left out at
    its default (so ``max_parallel_calls=1`` and ``None`` are one identity under the text protocol, where
    both mean one call, and two under the native one, where ``None`` means every call of a reply)."""
    default = 1 if protocol == "text" else None
    limit = default if max_parallel_calls is None else max_parallel_calls
    identity: dict[str, Any] = {} if protocol == "text" else {"protocol": protocol}
    if limit != default:
        identity["max_parallel_calls"] = limit
    return identity


def _agent(runnable: AgentRunnable) -> RunnableAgent:
    return cast("RunnableAgent", runnable)


async def _alast(items: AsyncIterator[AgentStep | AgentResult]) -> AgentResult:
    result = None
    async for result in items:  # noqa: B007 - the last item is the result
        pass
    assert isinstance(result, AgentResult)
    return result


# -------------------------------------------------------------------------------------------- the drivers
def _checked_journal(value: Any, *, resuming: bool = False) -> Path | None:
    """The ``journal`` argument of a run or a resume, checked as the agent's ``journal=`` option is: a value that
    is not a str/PathLike, names a folder or lies in a missing folder is a :class:`ConfigError` naming the fix,
    raised before anything is written. A resume needs a file: there ``None`` is refused too."""
    expected = "the path of a .jsonl journal file" if resuming else "None or the path of a .jsonl journal file"
    if value is None:
        if resuming:
            raise ConfigError(f"journal must be {expected} to resume, got None")
        return None
    problem = journal_path_problem(value)
    if problem is not None:
        raise ConfigError(f"journal must be {expected} (its folder must exist), got {short_repr(value)} ({problem})")
    return Path(value)


def _resumed_journal(value: Any) -> Path:
    """The ``journal`` argument of a resume, checked (see :func:`_checked_journal`)."""
    path = _checked_journal(value, resuming=True)
    assert path is not None  # None is refused when resuming
    return path


def start(agent: RunnableAgent, input: Any, config: RunnableConfig | None, *, journal: Any = None,
          session: Mapping[str, Any] | None = None, chat_history: Any = None,
          _resume: RunJournal | None = None, _deferred: bool = False) -> tuple[RunState, RunnableConfig]:
    """A new run's state (with its journal) and config, from the arguments of ``stream``/``astream``."""
    task, extra = task_of(input)
    if _resume is None:  # a journaled task is already composed
        history = history_of(extra.get("chat_history", chat_history))
        native = getattr(agent.config, "protocol", "text") == "native"  # its answer's schema is a tool's parameters
        task = compose_task(agent.prompts, task, history, None if native else agent.config.output_schema)
    journal = extra.get("journal", journal)
    session = extra.get("session", session)
    if session is not None and not isinstance(session, Mapping):
        raise ConfigError(f"session must be a mapping of key to value, got {type(session).__name__}")
    config = ensure_config(checked_config(config))
    state = agent.new_state(task, dict(session or {}))
    if _resume is not None:
        _resume.references = tuple(state.references)
        state.journal = _resume
        return state, config
    path = agent.config.journal if journal is None else _checked_journal(journal)
    state.journal = RunJournal.start(  # a file-less journal needs no secrets: a failure looks them up
        task, path=None if path is None else os.fspath(path), run_id=str(config.get("run_id") or uuid.uuid4()),
        agent=str(agent.name), tools=agent.registry.names,
        secrets=secret_values(agent.llm) if path is not None else (),
        references=state.references, identity=agent.identity() if path is not None else None, deferred=_deferred)
    return state, config


def _refuse_async_approve(agent: RunnableAgent) -> None:
    """A sync run cannot await an ``async def`` ``approve``: a :class:`ConfigError` naming the fix."""
    problem = sync_approve_problem(agent.config.approve)
    if problem is not None:
        raise ConfigError(problem)


def stream_run(agent: RunnableAgent, input: Any, config: RunnableConfig | None,
               **kwargs: Any) -> Iterator[AgentStep | AgentResult]:
    """The sync driver: each step as it completes, then the result."""
    agent = for_task_language(agent, task_of(input)[0])
    state, config = start(agent, input, config, **kwargs)
    shown = _console(agent, state)
    manager = CallbackManager.configure(config.get("callbacks"), None, inheritable_tags=config.get("tags"),
                                        inheritable_metadata=config.get("metadata"))
    run = manager.on_chain_start({"name": agent.name}, {"task": state.task}, run_id=config.get("run_id"),
                                 name=config.get("run_name") or agent.name)
    child = patch_config(config, callbacks=run.get_child())
    layer = drive(agent, state)
    reply: Any = None
    publish = _Publisher(str(agent.name), run, stream_writer(), shown)
    try:
        while (item := advance(layer, reply)) is not None:
            reply = None
            if isinstance(item, (StepDone, EarlyStep)):
                published = _published(state, item)
                publish(published)
                yield published.step
            elif isinstance(item, ToolBatch):
                progress = BatchProgress(item)
                for k, outcome, seconds in perform_batch(agent, item, child):
                    early = progress.complete(k, outcome, seconds)
                    if early is not None:
                        publish(early)
                        yield early.step
                reply = progress.reply()
            else:
                try:
                    reply = perform(agent, item, child)
                except (DeadlineExceeded, ModelCallError) as exc:  # the journal layer handles these
                    reply = Failure(exc)
    except Exception as exc:
        run.on_chain_error(exc)
        if graph_control(exc):  # a LangGraph interrupt() (e.g. in approve): LangGraph resumes the node
            raise
        raise failed(agent, state, exc) from masked_cause(exc, state)
    result = with_messages(close(agent, state), str(agent.name))
    run.on_chain_end(end_payload(result))
    if shown is not None:
        shown.result(result)
    yield result


async def astream_run(agent: RunnableAgent, input: Any, config: RunnableConfig | None,
                      **kwargs: Any) -> AsyncIterator[AgentStep | AgentResult]:
    """The async driver: as :func:`stream_run`, awaiting the I/O; deferred journal records are flushed in a
    worker thread before the run goes on."""
    agent = for_task_language(agent, task_of(input)[0])
    state, config = start(agent, input, config, _deferred=True, **kwargs)
    shown = _console(agent, state)
    journal = journal_of(state)
    journal.defer()
    manager = AsyncCallbackManager.configure(config.get("callbacks"), None, inheritable_tags=config.get("tags"),
                                             inheritable_metadata=config.get("metadata"))
    run = (await manager.on_chain_start({"name": agent.name}, {"task": state.task}, run_id=config.get("run_id"),
                                        name=config.get("run_name") or agent.name)
           if manager.handlers else _silent_run(manager, config.get("run_id")))
    child = patch_config(config, callbacks=run.get_child())
    layer = drive(agent, state)
    reply: Any = None
    publish = _Publisher(str(agent.name), run, stream_writer(), shown)
    try:
        while (item := advance(layer, reply)) is not None:
            reply = None
            if journal.outbox:
                await acall_in_thread(journal.flush, None, name="journal")
            if isinstance(item, (StepDone, EarlyStep)):
                published = _published(state, item)
                await publish.events(published)
                yield published.step
            elif isinstance(item, ToolBatch):
                progress = BatchProgress(item)
                async for k, outcome, seconds in aperform_batch(agent, item, child):
                    early = progress.complete(k, outcome, seconds)
                    if early is not None:
                        await publish.events(early)
                        yield early.step
                reply = progress.reply()
            else:
                try:
                    reply = await aperform(agent, item, child)
                except (DeadlineExceeded, ModelCallError) as exc:  # the journal layer handles these
                    reply = Failure(exc)
        result = with_messages(close(agent, state), str(agent.name))
        if journal.outbox:
            await acall_in_thread(journal.flush, None, name="journal")
    except Exception as exc:
        if run.handlers:
            await run.on_chain_error(exc)
        if graph_control(exc):  # a LangGraph interrupt() (e.g. in approve): LangGraph resumes the node
            raise
        raise failed(agent, state, exc) from masked_cause(exc, state)
    if run.handlers:
        await run.on_chain_end(end_payload(result))
    if shown is not None:
        shown.result(result)
    yield result


def _published(state: RunState, item: StepDone | EarlyStep) -> EarlyStep:
    """The step to publish and its place in the run: a recorded step is the last one so far."""
    return item if isinstance(item, EarlyStep) else EarlyStep(len(state.steps), item.step)


class _Publisher:
    """Publishes a completed step everywhere a run shows its steps: the callbacks' :data:`STEP_EVENT`
    (``astream_events``, traces), LangGraph's stream writer, the ``verbose`` console (the drivers yield it
    to ``stream`` themselves)."""

    def __init__(self, agent: str, run: Any, writer: Any, console: StepConsole | None) -> None:
        self.agent, self.run, self.writer, self.console = agent, run, writer, console

    def __call__(self, item: EarlyStep) -> None:
        """Publish under the sync driver."""
        if self.run.handlers:
            self.run.get_child().on_custom_event(STEP_EVENT, step_data(item.index, item.step), run_id=self.run.run_id)
        self._others(item)

    async def events(self, item: EarlyStep) -> None:
        """Publish under the async driver."""
        if self.run.handlers:
            await self.run.get_child().on_custom_event(STEP_EVENT, step_data(item.index, item.step),
                                                       run_id=self.run.run_id)
        self._others(item)

    def _others(self, item: EarlyStep) -> None:
        if self.writer is not None:
            self.writer(step_chunk(self.agent, item.index, item.step))
        if self.console is not None:
            self.console.step(item.index, item.step)


def _console(agent: RunnableAgent, state: RunState) -> StepConsole | None:
    """The live console of a ``verbose=True`` agent (the task printed), else ``None``."""
    if not getattr(agent.config, "verbose", False):
        return None
    console = StepConsole(str(agent.name))
    console.task(state.task)
    return console


def _silent_run(manager: AsyncCallbackManager, run_id: Any) -> AsyncCallbackManagerForChainRun:
    """What ``await manager.on_chain_start(...)`` returns when the manager has no handler, without its event
    dispatch (an ``asyncio.gather`` of nothing per run and per end): the same run id, tags and metadata for
    the run's children."""
    return AsyncCallbackManagerForChainRun(
        run_id=run_id or uuid7(), handlers=manager.handlers, inheritable_handlers=manager.inheritable_handlers,
        parent_run_id=manager.parent_run_id, tags=manager.tags, inheritable_tags=manager.inheritable_tags,
        metadata=manager.metadata, inheritable_metadata=manager.inheritable_metadata)
