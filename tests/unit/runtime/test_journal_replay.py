"""The durable run journal: what is recorded, when, and how resume replays it (crashes simulated by cutting
the journal after a record; real SIGKILLs are in tests/integration/test_crash_resume.py)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Annotated, Any

import pytest
from conftest import call, finish
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import InjectedToolArg, tool

from react_agent import (
    AgentResult,
    AgentStep,
    ConfigError,
    JournalError,
    JournalMismatchError,
    ReactAgent,
    ReactAgentError,
    ReflectionAgent,
    answer_schema,
    read_journal,
)
from react_agent.runtime._journal import canonical_json
from react_agent.testing import ScriptedChatModel

SCRIPT = [call("store", item="a"), call("store", item="b"), call("store", item="c"), finish("stored a, b, c")]


class Ledger:
    """An idempotent store: a key seen before returns the first result and writes nothing."""

    def __init__(self) -> None:
        self.results: dict[str, str] = {}
        self.writes: list[str] = []
        self.calls: list[str] = []

    def tool(self) -> Any:
        @tool
        def store(item: str, idempotency_key: Annotated[str, InjectedToolArg]) -> str:
            """Store an item."""
            self.calls.append(idempotency_key)
            if idempotency_key not in self.results:
                self.writes.append(item)
                self.results[idempotency_key] = f"stored {item} as #{len(self.writes)}"
            return self.results[idempotency_key]

        return store


def records(path: Path, kind: str | None = None) -> list[dict[str, Any]]:
    return [r for r in read_journal(path) if kind is None or r["type"] == kind]


def cut_after(path: Path, predicate: Any, nth: int = 1) -> None:
    """Simulate a crash right after the nth record matching ``predicate`` became durable."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    seen = 0
    for index, line in enumerate(lines):
        if predicate(json.loads(line)):
            seen += 1
            if seen == nth:
                path.write_text("".join(lines[: index + 1]), encoding="utf-8")
                return
    raise AssertionError("no such record")


def is_type(kind: str) -> Any:
    return lambda r: r["type"] == kind


def reference(tmp_path: Path) -> tuple[AgentResult, ScriptedChatModel, Ledger, Path]:
    ledger = Ledger()
    llm = ScriptedChatModel(SCRIPT, usage=True)
    journal = tmp_path / "run.jsonl"
    result = ReactAgent(llm, [ledger.tool()], prompts="en", journal=journal).run("store three items")
    return result, llm, ledger, journal


def resume(journal: Path, ledger: Ledger, done_model_calls: int, **options: Any) -> tuple[AgentResult,
                                                                                           ScriptedChatModel]:
    llm = ScriptedChatModel(SCRIPT[done_model_calls:], usage=True)
    return ReactAgent(llm, [ledger.tool()], prompts="en", **options).resume(journal), llm


# ------------------------------------------------------------------------------------------ records
def test_each_step_is_journaled_with_everything_needed(tmp_path: Path) -> None:
    """Each step record has task, run id, prompt digest, raw text, parsed action, observation, timing, usage."""
    result, llm, _, journal = reference(tmp_path)
    steps = records(journal, "step")
    run_id = records(journal, "run")[0]["run"]
    assert len(steps) == len(result.steps) == 4
    for index, (record, step, seen) in enumerate(zip(steps, result.steps, llm.calls, strict=True), 1):
        assert record["run"] == run_id and record["task"] == "store three items" and record["index"] == index
        assert record["digest"] == hashlib.sha256(seen.text.encode()).hexdigest()
        assert record["raw_output"] == seen.response == step.raw_output
        assert (record["action"], record["action_input"]) == (step.action, step.action_input)
        assert record["observation"] == step.observation
        assert record["duration_s"] >= 0 and isinstance(record["t"], float)
        assert record["usage"] == step.usage.model_dump() and record["usage"]["output_tokens"] > 0


def test_model_and_tool_effects_are_journaled_in_order(tmp_path: Path) -> None:
    """Model replies and tool start/finish records (with the key and the full observation) alternate in order."""
    _, _, ledger, journal = reference(tmp_path)
    effects = [r for r in read_journal(journal) if "seq" in r]
    assert [r["type"] for r in effects] == ["model", "tool_start", "tool_end"] * 3 + ["model"]
    assert [r["seq"] for r in effects] == [1, 2, 2, 3, 4, 4, 5, 6, 6, 7]
    starts, ends = records(journal, "tool_start"), records(journal, "tool_end")
    assert [s["key"] for s in starts] == [e["key"] for e in ends] == ledger.calls
    assert [e["observation"] for e in ends] == ["stored a as #1", "stored b as #2", "stored c as #3"]
    assert records(journal, "end")[0]["status"] == "finished"


def test_records_are_durable_before_the_next_model_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the model is called, the previous step and tool records are already on disk, each one fsync-ed."""
    journal = tmp_path / "run.jsonl"
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    on_disk: list[list[str]] = []

    class Peeking(ScriptedChatModel):
        def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                      run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
            on_disk.append([r["type"] for r in read_journal(journal)])
            return super()._generate(messages, stop, run_manager, **kwargs)

    ledger = Ledger()
    ReactAgent(Peeking(SCRIPT), [ledger.tool()], journal=journal).run("task")
    assert on_disk[1][-4:] == ["model", "tool_start", "tool_end", "step"]
    assert on_disk[3].count("step") == 3
    assert len(synced) >= len(read_journal(journal))


def test_journal_file_is_private(tmp_path: Path) -> None:
    """The journal is created readable by its owner only (it holds tasks and observations)."""
    _, _, _, journal = reference(tmp_path)
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600


def test_journal_option_must_name_a_file_in_an_existing_folder(tmp_path: Path) -> None:
    """journal= pointing to a folder, or into a missing folder, is a ConfigError at construction."""
    llm = ScriptedChatModel([])
    with pytest.raises(ConfigError, match="is a directory"):
        ReactAgent(llm, [], journal=tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        ReactAgent(llm, [], journal=tmp_path / "missing" / "run.jsonl")


# ------------------------------------------------------------------------------------------ resume
def test_resume_of_a_finished_run_makes_no_calls(tmp_path: Path) -> None:
    """Resuming a finished run answers every effect from the journal: no model call, no tool call, same result."""
    result, _, ledger, journal = reference(tmp_path)
    calls_before = list(ledger.calls)
    again, llm = resume(journal, ledger, len(SCRIPT))
    assert llm.calls == [] and ledger.calls == calls_before
    assert again.model_dump(exclude={"steps"}) == result.model_dump(exclude={"steps"})
    assert [s.observation for s in again.steps] == [s.observation for s in result.steps]


def test_resume_continues_live_with_only_the_remaining_model_calls(tmp_path: Path) -> None:
    """After a crash past step 2, the resumed run asks the model only for the rest, with identical prompts."""
    result, full_llm, ledger, journal = reference(tmp_path)
    cut_after(journal, is_type("step"), nth=2)
    again, llm = resume(journal, ledger, done_model_calls=2)
    assert len(llm.calls) == 2 and llm.remaining == 0
    assert [c.text for c in llm.calls] == [c.text for c in full_llm.calls[2:]]
    assert again.output == result.output and again.status == "finished"
    assert ledger.writes == ["a", "b", "c"]
    assert len(records(journal, "step")) == 4 and len(records(journal, "resume")) == 1


def test_completed_tool_calls_never_run_again(tmp_path: Path) -> None:
    """A tool call whose result is journaled is answered from the journal on resume, not executed."""
    _, _, ledger, journal = reference(tmp_path)
    cut_after(journal, is_type("tool_end"), nth=2)
    calls_before = len(ledger.calls)
    resume(journal, ledger, done_model_calls=2)
    assert len(ledger.calls) == calls_before + 1  # only the third call ran
    assert ledger.writes == ["a", "b", "c"]


def test_started_but_unfinished_tool_call_reruns_with_the_same_key(tmp_path: Path) -> None:
    """A crash inside a tool (start journaled, no result) re-runs it with the same key: the write is deduplicated."""
    _, _, ledger, journal = reference(tmp_path)
    cut_after(journal, is_type("tool_start"), nth=2)
    key = records(journal, "tool_start")[-1]["key"]
    again, _ = resume(journal, ledger, done_model_calls=2)
    assert ledger.calls.count(key) == 2
    assert ledger.writes == ["a", "b", "c"]
    assert [s.observation for s in again.steps[:3]] == ["stored a as #1", "stored b as #2", "stored c as #3"]
    attempts = [r["attempt"] for r in records(journal, "tool_start") if r["key"] == key]
    assert attempts == [1, 2]


def test_model_reply_lost_in_the_crash_is_asked_again(tmp_path: Path) -> None:
    """A model reply that never reached the journal is simply asked for again on resume."""
    _, _, ledger, journal = reference(tmp_path)
    cut_after(journal, is_type("step"), nth=1)
    again, llm = resume(journal, ledger, done_model_calls=1)
    assert len(llm.calls) == 3 and again.status == "finished" and ledger.writes == ["a", "b", "c"]


def test_torn_last_line_is_ignored_and_cut_off(tmp_path: Path) -> None:
    """A half-written last record (crash during write) is ignored, cut off, and resume appends cleanly."""
    _, _, ledger, journal = reference(tmp_path)
    cut_after(journal, is_type("step"), nth=1)
    with open(journal, "a", encoding="utf-8") as handle:
        handle.write('{"type":"model","run":"x","seq":3,"text":"{\\"act')
    assert records(journal)[-1]["type"] == "step"
    again, _ = resume(journal, ledger, done_model_calls=1)
    assert again.status == "finished"
    assert all(json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines())


async def test_aresume_matches_resume(tmp_path: Path) -> None:
    """aresume() replays and continues like resume()."""
    result, _, ledger, journal = reference(tmp_path)
    cut_after(journal, is_type("tool_start"), nth=3)
    llm = ScriptedChatModel(SCRIPT[3:])
    again = await ReactAgent(llm, [ledger.tool()], prompts="en").aresume(journal)
    assert again.output == result.output and len(llm.calls) == 1
    assert ledger.writes == ["a", "b", "c"]


def test_resume_stream_yields_every_step_then_the_result(tmp_path: Path) -> None:
    """resume_stream() yields the replayed steps and the live ones, then the result."""
    _, _, ledger, journal = reference(tmp_path)
    cut_after(journal, is_type("step"), nth=2)
    llm = ScriptedChatModel(SCRIPT[2:])
    items = list(ReactAgent(llm, [ledger.tool()], prompts="en").resume_stream(journal))
    assert [type(i) for i in items] == [AgentStep] * 4 + [AgentResult]


def test_model_failure_is_journaled_and_resume_calls_again(tmp_path: Path) -> None:
    """A run ended by a model error records it; resume makes that model call again and finishes the run."""
    journal = tmp_path / "run.jsonl"
    ledger = Ledger()
    llm = ScriptedChatModel([*SCRIPT[:2], ValueError("backend down")])
    failed = ReactAgent(llm, [ledger.tool()], prompts="en", journal=journal).run("task")
    assert failed.status == "error"
    assert records(journal, "model_error")[0]["error"] == "model call failed: ValueError: backend down"
    again, resumed = resume(journal, ledger, done_model_calls=2)
    assert again.status == "finished" and len(resumed.calls) == 2 and ledger.writes == ["a", "b", "c"]


def test_reflection_agent_resumes_through_its_reflection_calls(tmp_path: Path) -> None:
    """Reflection calls are effects too: a ReflectionAgent resumes after one without calling the model again."""

    @tool
    def lookup(name: str) -> str:
        """Look a name up."""
        raise ValueError(f"{name} not found")

    script = [call("lookup", name="x"), "Try another name.", call("lookup", name="y"), "Give up.", finish("no")]
    journal = tmp_path / "run.jsonl"
    full = ReflectionAgent(ScriptedChatModel(script), [lookup], prompts="en", journal=journal).run("find")
    cut_after(journal, is_type("model"), nth=2)
    llm = ScriptedChatModel(script[2:])
    again = ReflectionAgent(llm, [lookup], prompts="en").resume(journal)
    assert len(llm.calls) == 3
    assert [s.reflection for s in again.steps] == [s.reflection for s in full.steps]


def test_resume_with_different_prompts_raises_mismatch(tmp_path: Path) -> None:
    """If the resumed run's prompt differs from the journaled one, resume refuses with JournalMismatchError."""
    _, _, ledger, journal = reference(tmp_path)
    agent = ReactAgent(ScriptedChatModel(SCRIPT), [ledger.tool()], prompts="ru")
    with pytest.raises(JournalMismatchError, match="prompt of model call 1 differs") as info:
        agent.resume(journal)
    assert isinstance(info.value, ReactAgentError)


def test_resume_needs_a_journaled_run(tmp_path: Path) -> None:
    """Resuming a missing or empty journal, or an unknown run id, raises JournalError."""
    agent = ReactAgent(ScriptedChatModel([]), [])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    for path in (tmp_path / "missing.jsonl", empty):
        with pytest.raises(JournalError, match="holds no run to resume"):
            agent.resume(path)
    _, _, _, journal = reference(tmp_path)
    with pytest.raises(JournalError, match="no run 'nope'"):
        agent.resume(journal, run_id="nope")


def test_corrupt_line_in_the_middle_is_reported(tmp_path: Path) -> None:
    """A damaged record before the last line is a JournalError naming the line, never silently skipped."""
    _, _, ledger, journal = reference(tmp_path)
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = "garbage\n"
    journal.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(JournalError, match="line 3 is corrupt"):
        resume(journal, ledger, 0)


def test_one_journal_holds_many_runs_and_resume_picks_one(tmp_path: Path) -> None:
    """Runs append to the same journal; resume takes the last run, or the one named by run_id."""
    journal = tmp_path / "run.jsonl"
    agent = ReactAgent(ScriptedChatModel([finish("first"), finish("second")]), [], journal=journal)
    agent.run("task one")
    agent.run("task two")
    first, second = (r["run"] for r in records(journal, "run"))
    replay = ReactAgent(ScriptedChatModel([]), [])
    assert replay.resume(journal).output == "second"
    assert replay.resume(journal, run_id=first).output == "first"
    assert second != first


# ------------------------------------------------------------------------------------------ idempotency keys
def test_key_is_run_id_step_and_argument_digest(tmp_path: Path) -> None:
    """The key is '<run id>:<step>:<sha256 of the canonical JSON of the arguments>'."""
    _, _, ledger, journal = reference(tmp_path)
    run_id = records(journal, "run")[0]["run"]
    digest = hashlib.sha256(canonical_json({"item": "b"}).encode()).hexdigest()
    assert ledger.calls[1] == f"{run_id}:2:{digest}"
    assert len(set(ledger.calls)) == 3


def test_key_is_hidden_from_the_model(tmp_path: Path) -> None:
    """The injected key appears neither in the prompt's tool description nor in the answer schema."""
    ledger = Ledger()
    store = ledger.tool()
    llm = ScriptedChatModel(SCRIPT)
    ReactAgent(llm, [store], prompts="en").run("task")
    assert "idempotency" not in llm.calls[0].text and "item" in llm.calls[0].text
    assert "idempotency" not in json.dumps(answer_schema([store]))


def test_model_cannot_forge_a_key() -> None:
    """A key sent by the model is an invalid argument: the tool does not run."""
    ledger = Ledger()
    llm = ScriptedChatModel([call("store", item="a", idempotency_key="forged"), finish("ok")])
    result = ReactAgent(llm, [ledger.tool()], prompts="en").run("task")
    assert ledger.calls == [] and result.steps[0].is_error
    assert "idempotency_key" in result.steps[0].observation


def test_keys_are_given_without_a_journal_and_differ_between_runs() -> None:
    """Without a journal a tool still gets a key per call; another run gets other keys."""
    ledger = Ledger()
    agent = ReactAgent(ScriptedChatModel(SCRIPT * 2), [ledger.tool()])
    agent.run("task")
    agent.run("task")
    assert len(ledger.calls) == 6 and len(set(ledger.calls)) == 6
    assert ledger.writes == ["a", "b", "c", "a", "b", "c"]


def test_tools_without_a_key_argument_get_none() -> None:
    """A tool that declares no idempotency_key is called with exactly the model's arguments."""
    seen: list[dict[str, Any]] = []

    @tool
    def plain(item: str) -> str:
        """Take an item."""
        seen.append({"item": item})
        return "ok"

    ReactAgent(ScriptedChatModel([call("plain", item="a"), finish("ok")]), [plain]).run("task")
    assert seen == [{"item": "a"}]


# ------------------------------------------------------------------------------------------ approval
def guarded_script() -> list[str]:
    return [call("store", item="a"), call("store", item="b"), finish("done")]


def guarded(ledger: Ledger) -> Any:
    return ledger.tool().model_copy(update={"metadata": {"requires_approval": True}})


def test_approval_decisions_are_journaled(tmp_path: Path) -> None:
    """Each human decision is a journal record with the call's key and the answer."""
    journal = tmp_path / "run.jsonl"
    answers = iter([True, False])
    ledger = Ledger()
    ReactAgent(ScriptedChatModel(guarded_script()), [guarded(ledger)], prompts="en", journal=journal,
               approve=lambda name, args: next(answers)).run("task")
    decisions = records(journal, "approval")
    assert [(d["tool"], d["approved"]) for d in decisions] == [("store", True), ("store", False)]
    assert [d["key"] for d in decisions] == [s["key"] for s in records(journal, "tool_start")]
    assert ledger.writes == ["a"]


def test_resumed_run_does_not_ask_for_approval_again(tmp_path: Path) -> None:
    """A call approved before the crash (tool never finished) runs on resume without asking again."""
    journal = tmp_path / "run.jsonl"
    ledger = Ledger()
    ReactAgent(ScriptedChatModel(guarded_script()), [guarded(ledger)], prompts="en", journal=journal,
               approve=lambda name, args: True).run("task")
    cut_after(journal, is_type("approval"), nth=2)

    def must_not_ask(name: str, args: Any) -> bool:
        raise AssertionError("asked again")

    llm = ScriptedChatModel(guarded_script()[2:])
    again = ReactAgent(llm, [guarded(ledger)], prompts="en", approve=must_not_ask).resume(journal)
    assert again.status == "finished" and ledger.writes == ["a", "b"]
    assert len(ledger.calls) == 3 and ledger.calls[2] == ledger.calls[1]  # ran again, same key, no new write
    assert len(records(journal, "approval")) == 2


def test_journaled_refusal_stays_a_refusal_on_resume(tmp_path: Path) -> None:
    """A refusal journaled before the crash is replayed as a refusal: the tool does not run, nobody is asked."""
    journal = tmp_path / "run.jsonl"
    ledger = Ledger()
    ReactAgent(ScriptedChatModel(guarded_script()), [guarded(ledger)], prompts="en", journal=journal,
               approve=lambda name, args: False).run("task")
    cut_after(journal, is_type("approval"), nth=1)
    again = ReactAgent(ScriptedChatModel(guarded_script()[1:]), [guarded(ledger)], prompts="en",
                       approve=lambda name, args: True).resume(journal)
    assert ledger.writes == ["b"]
    assert "not approved" in again.steps[0].observation
