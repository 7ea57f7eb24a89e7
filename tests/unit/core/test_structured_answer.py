"""Structured final answers: output_schema validates FINISH's object; errors are observations; constrained
decoding's FINISH branch follows the schema."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from conftest import call
from langchain_core.tools import tool
from pydantic import BaseModel, Field

from react_agent import ConfigError, ReactAgent
from react_agent.testing import ScriptedChatModel


class Person(BaseModel):
    name: str
    email: str


class Scored(BaseModel):
    answer: str
    confidence: float = Field(ge=0, le=1)


class Address(BaseModel):
    city: str


class Customer(BaseModel):
    name: str
    address: Address


@tool
def lookup(name: str) -> str:
    """Find a user's email by name."""
    return f"{name}: {name.lower()}@test.com"


def finish_with(value: Any) -> str:
    return json.dumps({"thought": "done", "action": "FINISH", "action_input": value}, ensure_ascii=False)


def structured(*replies: str, schema: type[BaseModel] = Person, **options: Any) -> tuple[ReactAgent, ScriptedChatModel]:
    llm = ScriptedChatModel(list(replies), **{k: options.pop(k) for k in ("supports_json_schema",) if k in options})
    options.setdefault("prompts", "en")
    return ReactAgent(llm, [lookup], output_schema=schema, **options), llm


def test_finish_object_is_validated_into_output_object() -> None:
    """FINISH with an object matching the schema: output_object is the model instance, output its JSON text."""
    agent, _ = structured(call("lookup", name="Ivan"), finish_with({"name": "Ivan", "email": "ivan@test.com"}))
    result = agent.run("Find Ivan's email")
    assert result.status == "finished"
    assert result.output_object == Person(name="Ivan", email="ivan@test.com")
    assert json.loads(result.output) == {"name": "Ivan", "email": "ivan@test.com"}
    assert result.steps[-1].action == "FINISH" and result.steps[-1].action_input == result.output


def test_the_task_tells_the_model_the_answer_format() -> None:
    """The prompt carries the answer's JSON schema (answer_format template) after the task."""
    agent, llm = structured(finish_with({"name": "a", "email": "b"}))
    agent.run("Find Ivan")
    text = llm.calls[0].text
    assert "**Task**: Find Ivan\n\nGive the final answer (action_input of FINISH) as a JSON object" in text
    assert json.dumps(Person.model_json_schema(), ensure_ascii=False) in text


def test_an_object_with_an_answer_key_is_kept_whole() -> None:
    """{"answer": ..., "confidence": ...} stays an object (the text protocol alone would keep only the answer)."""
    agent, _ = structured(finish_with({"answer": "42", "confidence": 0.9}), schema=Scored)
    result = agent.run("What is 6 * 7?")
    assert result.output_object == Scored(answer="42", confidence=0.9)


def test_a_one_field_object_and_a_json_string_both_validate() -> None:
    """A one-field object, and an object sent as a JSON string, are both read as the object."""
    agent, _ = structured(finish_with({"city": "Paris"}), schema=Address)
    assert agent.run("Where?").output_object == Address(city="Paris")
    agent, _ = structured(finish_with(json.dumps({"city": "Rome"})), schema=Address)
    assert agent.run("Where?").output_object == Address(city="Rome")


def test_a_validation_error_is_an_observation_and_the_model_corrects_itself() -> None:
    """An answer that does not validate goes back to the model like a bad tool argument; the run goes on."""
    agent, llm = structured(finish_with({"name": "Ivan"}), finish_with({"name": "Ivan", "email": "ivan@test.com"}))
    result = agent.run("Find Ivan")
    assert result.status == "finished" and result.output_object == Person(name="Ivan", email="ivan@test.com")
    failed = result.steps[0]
    assert failed.is_error and failed.action is None
    assert failed.observation.startswith("Error: the final answer does not match the required format: "
                                         "email: Field required. Call FINISH again")
    assert failed.observation in llm.calls[1].text
    assert result.llm_calls == 2


def test_a_plain_text_answer_is_refused_with_its_reason() -> None:
    """Prose where an object is required: the observation says it is not a JSON object."""
    agent, _ = structured(finish_with("Ivan, ivan@test.com"), finish_with({"name": "Ivan", "email": "i@t.com"}))
    result = agent.run("Find Ivan")
    assert "it is not a JSON object" in result.steps[0].observation
    assert result.status == "finished"


def test_the_feedback_is_in_the_agents_language() -> None:
    """The invalid_answer template exists in Russian too."""
    agent, _ = structured(finish_with({"name": "Ivan"}), finish_with({"name": "Ivan", "email": "i@t.com"}),
                          prompts="ru")
    result = agent.run("Найди Ivan")
    assert result.steps[0].observation.startswith("Ошибка: итоговый ответ не соответствует требуемому формату")


def test_never_a_valid_answer_ends_at_the_iteration_limit() -> None:
    """Invalid answers count as iterations: the run ends with max_iterations and no object."""
    agent, _ = structured(finish_with({"x": 1}), finish_with({"y": 2}), max_iterations=2)
    result = agent.run("Find Ivan")
    assert result.status == "max_iterations" and result.output_object is None
    assert all(step.is_error for step in result.steps)


def test_async_run_validates_too() -> None:
    agent, _ = structured(finish_with({"name": "Ivan", "email": "ivan@test.com"}))
    assert asyncio.run(agent.arun("Find Ivan")).output_object == Person(name="Ivan", email="ivan@test.com")


def test_without_output_schema_there_is_no_object() -> None:
    llm = ScriptedChatModel([finish_with("plain")])
    result = ReactAgent(llm, [lookup], prompts="en").run("x")
    assert result.output == "plain" and result.output_object is None
    assert "JSON schema" not in llm.calls[0].text


def test_constrained_decoding_finish_branch_follows_the_schema() -> None:
    """Under constrained decoding the FINISH branch's action_input is the output schema (titles removed,
    $refs inlined, objects closed), so the decoder can only write a valid object."""
    agent, llm = structured(finish_with({"name": "Ivan", "address": {"city": "Paris"}}), schema=Customer,
                            supports_json_schema=True)
    result = agent.run("Where does Ivan live?")
    assert result.output_object == Customer(name="Ivan", address=Address(city="Paris"))
    schema = llm.calls[0].kwargs["response_format"]["json_schema"]["schema"]
    finish_branch = schema["anyOf"][-1]["properties"]
    assert finish_branch["action"] == {"const": "FINISH"}
    assert finish_branch["action_input"] == {
        "type": "object", "additionalProperties": False, "required": ["name", "address"],
        "properties": {"name": {"type": "string"},
                       "address": {"type": "object", "properties": {"city": {"type": "string"}},
                                   "required": ["city"], "additionalProperties": False}}}
    assert schema["anyOf"][0]["properties"]["action"] == {"const": "lookup"}


@pytest.mark.parametrize("bad", [dict, Person(name="a", email="b"), "Person"])
def test_output_schema_must_be_a_model_class(bad: Any) -> None:
    """A wrong output_schema is a ConfigError at construction naming the option and what is expected."""
    with pytest.raises(ConfigError, match="output_schema must be None or a pydantic model class"):
        ReactAgent(ScriptedChatModel([]), [lookup], output_schema=bad)
