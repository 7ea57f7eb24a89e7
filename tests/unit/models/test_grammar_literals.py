"""Enum and const strings holding a quote or a backslash never reach llama-cpp-python's GBNF converter, which
writes them as literals llama.cpp accepts and then crashes on; every other schema passes through unchanged."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from react_agent.models._grammar import gbnf_safe_literal, literal_safe
from react_agent.models._structured import adapt_schema


@pytest.mark.parametrize("value", ['say "hi"', "C:\\temp", ['ok', 'a"b'], {"k": "v"}])
def test_values_the_converter_mis_escapes_are_refused(value: object) -> None:
    expected = not (isinstance(value, (str, list)) and any('"' in v or "\\" in v for v in
                                                           (value if isinstance(value, list) else [value])))
    assert gbnf_safe_literal(value) is expected


def test_an_unsafe_enum_is_dropped_and_the_node_keeps_its_type() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "enum": ['a "b"', "c"]},
                                               "k": {"const": "x\\y"}, "ok": {"enum": ["plain", "words"]}},
              "required": ["q"]}
    safe = literal_safe(schema)
    assert safe["properties"]["q"] == {"type": "string"}
    assert "const" not in safe["properties"]["k"] and safe["properties"]["k"]["type"]
    assert safe["properties"]["ok"] == {"enum": ["plain", "words"]}
    assert safe["required"] == ["q"]
    named = literal_safe({"properties": {"enum": {"enum": ['"x"']}, "const": {"type": "integer"}}})
    assert named == {"properties": {"enum": {"type": ["string", "number", "boolean", "object", "array", "null"]},
                                    "const": {"type": "integer"}}}
    assert "enum" not in adapt_schema(schema, "llama.cpp")["properties"]["q"]


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet="ab c-_.", max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("abc", max_size=3), inner,
                                                                                 max_size=3), max_leaves=12)


@given(_json)
def test_a_schema_without_quotes_or_backslashes_passes_unchanged(schema: object) -> None:
    assert literal_safe(schema) == schema


_SAMPLE = """
import json, sys
from llama_cpp import Llama
from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf
from react_agent.models import default_model_path
from react_agent.models._grammar import literal_safe
schema = {"type": "object", "properties": {"q": {"type": "string", "enum": ['he said "no"', "C:\\\\tmp"]}},
          "required": ["q"]}
if sys.argv[1] == "safe":
    schema = literal_safe(schema)
llama = Llama(model_path=str(default_model_path()), n_ctx=256, n_threads=1, verbose=False)
grammar = LlamaGrammar.from_string(json_schema_to_gbnf(json.dumps(schema)), verbose=False)
out = llama.create_completion("Answer in JSON: ", grammar=grammar, max_tokens=12, temperature=0)
print(json.dumps(out["choices"][0]["text"]))
"""


@pytest.mark.local_model
def test_sampling_with_the_grammar_of_a_quoted_enum_value_does_not_crash_llama_cpp() -> None:
    """In a child process, so that the crash llama.cpp has on the raw schema fails this test, not the run."""
    pytest.importorskip("llama_cpp")
    done = subprocess.run([sys.executable, "-c", _SAMPLE, "safe"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().startswith('"')
