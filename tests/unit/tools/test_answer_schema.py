"""answer_schema: the JSON schema of one agent answer, derived from the tools."""

from __future__ import annotations

import copy
import importlib.util
import json
from enum import Enum
from typing import Any, Literal

import pytest
from langchain_core.tools import BaseTool, StructuredTool, tool
from pydantic import BaseModel, Field

from react_agent import FINISH, answer_schema
from react_agent.tools._schema import tool_args_schema

# --------------------------------------------------------------------------- tools


@tool
def register_user(username: str, email: str, phone: str | None = None) -> str:
    """Register a new user account."""
    return f"User {username} registered"


@tool
def search_db(username: str, limit: int = 5) -> str:
    """Find users in the database by username."""
    return "[]"


class Color(str, Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    city: str
    zip_code: str | None = None


class PaintInput(BaseModel):
    color: Color = Field(description="Paint colour")
    finish: Literal["matte", "gloss"] = "matte"
    address: Address
    title: str = Field(description="a property literally called 'title'")


def _paint(color: Color, address: Address, title: str, finish: str = "matte") -> str:
    return "ok"


paint = StructuredTool.from_function(_paint, name="paint", description="Paint a house.", args_schema=PaintInput)


class TreeNode(BaseModel):
    name: str
    children: list[TreeNode] = []


def _tree(root: TreeNode) -> str:
    return "ok"


tree = StructuredTool.from_function(_tree, name="tree", description="Store a tree.")

DICT_SCHEMA = {
    "type": "object",
    "title": "lookup",
    "properties": {"key": {"type": "string", "title": "Key"}, "exact": {"type": "boolean"}},
    "required": ["key"],
}
lookup = StructuredTool.from_function(
    lambda key, exact=False: key, name="lookup", description="Look up a key.", args_schema=DICT_SCHEMA
)


@tool
def ping() -> str:
    """No arguments at all."""
    return "pong"


# --------------------------------------------------------------------------- validation helper


def _validate(instance: Any, schema: dict[str, Any]) -> bool:
    """jsonschema if it is installed, else a small validator for the keywords answer_schema emits."""
    if importlib.util.find_spec("jsonschema") is not None:
        import jsonschema

        return bool(jsonschema.Draft202012Validator(schema).is_valid(instance))
    return _mini_valid(instance, schema, schema)


def _mini_valid(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return _mini_valid(value, root["$defs"][name], root) and _mini_valid(value, rest, root)
    if "anyOf" in schema and not any(_mini_valid(value, s, root) for s in schema["anyOf"]):
        return False
    if "const" in schema and value != schema["const"]:
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
    }
    if kind is not None and not checks[kind](value):
        return False
    if isinstance(value, str) and "maxLength" in schema and len(value) > schema["maxLength"]:
        return False
    if isinstance(value, dict):
        props = schema.get("properties", {})
        if any(name not in value for name in schema.get("required", [])):
            return False
        for name, item in value.items():
            if name in props:
                if not _mini_valid(item, props[name], root):
                    return False
            elif schema.get("additionalProperties") is False:
                return False
    if isinstance(value, list) and "items" in schema:
        return all(_mini_valid(item, schema["items"], root) for item in value)
    return True


def _branch(schema: dict[str, Any], action: str) -> dict[str, Any]:
    (found,) = [b for b in schema["anyOf"] if b["properties"]["action"] == {"const": action}]
    return found


def _keys(node: Any) -> set[str]:
    """Every keyword used anywhere in a schema (property names excluded)."""
    out: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            out.add(key)
            if key in ("properties", "$defs"):
                for sub in value.values():
                    out |= _keys(sub)
            else:
                out |= _keys(value)
    elif isinstance(node, list):
        for item in node:
            out |= _keys(item)
    return out


# --------------------------------------------------------------------------- shape


def test_one_branch_per_tool_plus_finish_in_order() -> None:
    schema = answer_schema([register_user, search_db])
    actions = [b["properties"]["action"]["const"] for b in schema["anyOf"]]
    assert actions == ["register_user", "search_db", FINISH]
    for branch in schema["anyOf"]:
        assert branch["type"] == "object"
        assert list(branch["properties"]) == ["thought", "action", "action_input"]
        assert branch["required"] == ["thought", "action", "action_input"]
        assert branch["additionalProperties"] is False
        assert branch["properties"]["thought"]["type"] == "string"


def test_register_user_args_required_optional_and_closed() -> None:
    args = _branch(answer_schema([register_user, search_db]), "register_user")["properties"]["action_input"]
    assert args["type"] == "object"
    assert args["required"] == ["username", "email"]
    assert list(args["properties"]) == ["username", "email", "phone"]
    assert args["properties"]["username"] == {"type": "string"}
    assert args["properties"]["phone"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert args["additionalProperties"] is False
    assert "title" not in _keys(args)


def test_search_db_integer_with_default() -> None:
    args = _branch(answer_schema([register_user, search_db]), "search_db")["properties"]["action_input"]
    assert args["required"] == ["username"]
    assert args["properties"]["limit"] == {"type": "integer", "default": 5}


def test_finish_branch_takes_answer_text() -> None:
    finish = _branch(answer_schema([register_user]), FINISH)
    assert finish["properties"]["action_input"] == {"type": "string"}


def test_enums_refs_inlined_and_titles_stripped_but_title_property_kept() -> None:
    schema = answer_schema([paint])
    args = _branch(schema, "paint")["properties"]["action_input"]
    assert args["properties"]["color"]["enum"] == ["red", "blue"]
    assert args["properties"]["color"]["description"] == "Paint colour"
    assert args["properties"]["finish"]["enum"] == ["matte", "gloss"]
    assert args["properties"]["address"]["properties"]["city"] == {"type": "string"}
    assert args["properties"]["address"]["additionalProperties"] is False
    assert "title" in args["properties"]  # a property named title survives
    assert "title" not in _keys(schema)  # ...but no title keyword does
    assert "$ref" not in _keys(schema) and "$defs" not in schema


def test_recursive_ref_is_hoisted_not_inlined_forever() -> None:
    schema = answer_schema([tree])
    assert "tree__TreeNode" in schema["$defs"]
    answer = {
        "thought": "t",
        "action": "tree",
        "action_input": {"root": {"name": "a", "children": [{"name": "b", "children": []}]}},
    }
    assert _validate(answer, schema)
    bad = copy.deepcopy(answer)
    bad["action_input"]["root"]["children"][0]["name"] = 3
    assert not _validate(bad, schema)


def test_plain_dict_args_schema_and_no_arg_tool() -> None:
    schema = answer_schema([lookup, ping])
    args = _branch(schema, "lookup")["properties"]["action_input"]
    assert args["required"] == ["key"] and args["properties"]["key"] == {"type": "string"}
    assert DICT_SCHEMA["properties"]["key"]["title"] == "Key"  # the tool's own schema is not mutated
    empty = _branch(schema, "ping")["properties"]["action_input"]
    assert empty["type"] == "object" and empty["properties"] == {}
    assert _validate({"thought": "", "action": "ping", "action_input": {}}, schema)
    assert not _validate({"thought": "", "action": "ping", "action_input": {"x": 1}}, schema)


def test_thought_length_option() -> None:
    assert _branch(answer_schema([ping]), "ping")["properties"]["thought"] == {"type": "string", "maxLength": 160}
    unbounded = answer_schema([ping], thought_max_length=None)
    assert _branch(unbounded, "ping")["properties"]["thought"] == {"type": "string"}
    with pytest.raises(ValueError):
        answer_schema([ping], thought_max_length=0)


def test_rejects_finish_and_duplicate_tool_names() -> None:
    finish_tool = StructuredTool.from_function(lambda: "x", name=FINISH, description="clash")
    with pytest.raises(ValueError, match="FINISH"):
        answer_schema([finish_tool])
    with pytest.raises(ValueError, match="duplicate"):
        answer_schema([ping, ping])


def test_seed_tools_from_conftest(seed_tools: list[BaseTool]) -> None:
    schema = answer_schema(seed_tools)
    reg = _branch(schema, "register_user")["properties"]["action_input"]
    assert reg["properties"]["username"]["description"] == "Логин"
    assert reg["required"] == ["username", "email"]
    assert _validate({"thought": "", "action": "search_db", "action_input": {"username": "u", "limit": None}}, schema)


def test_pure_and_json_serialisable() -> None:
    first = answer_schema([register_user, search_db, paint])
    second = answer_schema([register_user, search_db, paint])
    assert first == second
    json.dumps(first)
    assert tool_args_schema(register_user)["title"] == "register_user"  # raw schema untouched


# --------------------------------------------------------------------------- accept / reject


@pytest.mark.parametrize(
    "answer",
    [
        {
            "thought": "register",
            "action": "register_user",
            "action_input": {"username": "Ivan", "email": "ivan@test.com"},
        },
        {
            "thought": "",
            "action": "register_user",
            "action_input": {"username": "Ivan", "email": "ivan@test.com", "phone": None},
        },
        {
            "thought": "",
            "action": "register_user",
            "action_input": {"username": "Ivan", "email": "ivan@test.com", "phone": "+7999"},
        },
        {"thought": "find", "action": "search_db", "action_input": {"username": "Ivan"}},
        {"thought": "find", "action": "search_db", "action_input": {"username": "Ivan", "limit": 3}},
        {"thought": "done", "action": FINISH, "action_input": "User Ivan is registered."},
    ],
)
def test_accepts_valid_answers(answer: dict[str, Any]) -> None:
    assert _validate(answer, answer_schema([register_user, search_db]))


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"thought": "", "action": "delete_user", "action_input": {"username": "Ivan"}}, "unknown tool"),
        ({"thought": "", "action": "register_user", "action_input": {"username": "Ivan"}}, "missing email"),
        (
            {"thought": "", "action": "register_user", "action_input": {"username": "Ivan", "email": 5}},
            "email not a string",
        ),
        ({"thought": "", "action": "search_db", "action_input": {"username": "Ivan", "limit": "5"}}, "limit a string"),
        ({"thought": "", "action": "search_db", "action_input": {"username": "Ivan", "page": 2}}, "extra argument"),
        (
            {"thought": "", "action": "search_db", "action_input": {"username": "Ivan", "email": "x@y.z"}},
            "another tool's argument",
        ),
        ({"thought": "", "action": FINISH, "action_input": {"answer": "x"}}, "FINISH with an object"),
        ({"action": "search_db", "action_input": {"username": "Ivan"}}, "no thought"),
        ({"thought": "x" * 161, "action": FINISH, "action_input": "a"}, "thought too long"),
        ({"thought": "", "action": FINISH, "action_input": "a", "extra": 1}, "extra top-level key"),
    ],
)
def test_rejects_wrong_tool_and_ill_typed_input(answer: dict[str, Any], why: str) -> None:
    assert not _validate(answer, answer_schema([register_user, search_db])), why


def test_enum_violation_rejected() -> None:
    schema = answer_schema([paint])
    good = {
        "thought": "",
        "action": "paint",
        "action_input": {"color": "red", "address": {"city": "Oslo"}, "title": "t"},
    }
    assert _validate(good, schema)
    assert not _validate({**good, "action_input": {**good["action_input"], "color": "green"}}, schema)


# --------------------------------------------------------------------------- llama.cpp grammar


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed")
def test_llama_cpp_converter_accepts_the_schema() -> None:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    for tools in ([register_user, search_db], [paint, tree, lookup, ping]):
        gbnf = json_schema_to_gbnf(json.dumps(answer_schema(tools)))
        assert "root ::=" in gbnf
        assert '\\"FINISH\\"' in gbnf
