"""Real and adapted model replies with what a *safe* parser should return for each.

Each case cites where its text comes from: a public parser test fixture or issue report of LangChain,
LlamaIndex, smolagents, CrewAI, json_repair, DSPy, NVIDIA NeMo Agent Toolkit, Hermes agent and others
(``source`` is the file or thread), or
``"react_agent: <why>"`` for our own (GigaChat replies from the seed article and GigaChat-style
fabricated continuations). ``expected`` is ``None`` when the reply must be refused, otherwise a dict
with ``action`` and ``action_input`` (and optionally ``thought``). Where our expectation differs from
the upstream parser's, the note after the source says why.

The table is data only: tests/unit/parsing/test_parser_policy.py runs it against react_agent, and the benchmark runs it
against other parsers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CASES", "Case"]


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    expected: dict[str, Any] | None
    source: str
    tool_names: tuple[str, ...] | None = None
    reason: str | None = None  # react_agent's reason code for a refusal (other parsers have none)


def _act(action: str, action_input: Any, thought: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"action": action, "action_input": action_input}
    if thought is not None:
        out["thought"] = thought
    return out


def _fin(answer: str, thought: str | None = None) -> dict[str, Any]:
    return _act("FINISH", answer, thought)


_LC = "https://github.com/langchain-ai/langchain/blob/master/libs/langchain/tests/unit_tests/agents/"
_LC_CORE = (
    "https://github.com/langchain-ai/langchain/blob/master/libs/core/tests/unit_tests/output_parsers/test_json.py"
)
_LI = (
    "https://github.com/run-llama/llama_index/blob/main/llama-index-core/tests/agent/react/test_react_output_parser.py"
)
_CREW = "https://github.com/crewAIInc/crewAI/blob/main/tests/agents/test_crew_agent_parser.py"
_SMOL_MODELS = "https://github.com/huggingface/smolagents/blob/main/tests/test_models.py"
_SMOL_UTILS = "https://github.com/huggingface/smolagents/blob/main/tests/test_utils.py"
_JR = "https://github.com/mangiucugna/json_repair/blob/main/tests/"
_SEED = "react_agent: real GigaChat answer quoted in the seed article"
_DIALECT = "react_agent: a dialect another project's models write"
_NEMO = "https://github.com/NVIDIA/NeMo-Agent-Toolkit/blob/develop/tests/aiq/agent/test_react.py"
_DSPY_STREAMING = "https://github.com/stanfordnlp/dspy/blob/main/tests/streaming/test_streaming.py"
_AUTOGPT = "https://github.com/farizrahman4u/loopgpt/blob/main/loopgpt/constants.py"

_SEED_1 = (
    '{\n    "action": "register_user",\n    "action_input": {\n        "username": "Ivan",\n'
    '        "email": "ivan@test.com"\n    },\n    "thought": "Пользователь хочет зарегистрироваться с '
    'именем Иван и указанным емейлом. Используем инструмент регистрации."\n}'
)
_SEED_1_THOUGHT = (
    "Пользователь хочет зарегистрироваться с именем Иван и указанным емейлом. Используем инструмент регистрации."
)
_SEED_2 = (
    '{\n    "thought": "Пользователь хочет зарегистрироваться с именем Иван и указанным емейлом. '
    'Используем инструмент регистрации с правильным названием аргумента.",\n    "action": "register_user",\n'
    '    "action_input": {"username": "Ivan", "user_email": "ivan@test.com"}\n}'
)
_IVAN = {"username": "Ivan", "email": "ivan@test.com"}
_ANSWER_JSON = (
    '{"thought": "Registering the user.", "action": "register_user", '
    '"action_input": {"username": "Ivan", "email": "ivan@test.com"}}'
)
_REG = ("register_user",)
_CREW_DICT = {"task": "Research XAI", "context": "Explainable AI", "coworker": "Senior Researcher"}
_CREW_ANSWER = (
    "What are some common challenges or barriers that you have observed or experienced when implementing "
    "AI-powered solutions in healthcare settings?"
)
_CREW_CONTEXT = (
    "As we've discussed recent advancements in AI applications in healthcare, it's crucial to acknowledge "
    "the potential hurdles. Some possible obstacles include..."
)
_TEMP = "what is the temperature in SF?"

CASES: list[Case] = [
    # ---- LangChain: ReActSingleInputOutputParser ---------------------------------------------------
    Case(
        "lc_react_single_action",
        "Thought: agent thought here\nAction: search\nAction Input: what is the temperature in SF?",
        _act("search", _TEMP, "agent thought here"),
        _LC + "output_parsers/test_react_single_input.py",
    ),
    Case(
        "lc_react_single_finish",
        "Thought: agent thought here\nFinal Answer: The temperature is 100",
        _fin("The temperature is 100", "agent thought here"),
        _LC + "output_parsers/test_react_single_input.py",
    ),
    Case(
        "lc_react_single_action_with_finish",
        "Thought: agent thought here\nAction: search Final Answer:\nAction Input: what is the temperature in SF?",
        None,
        _LC + "output_parsers/test_react_single_input.py",
        reason="invalid_action",
    ),
    # ---- LangChain: ReActJsonSingleInputOutputParser / JSONAgentOutputParser ------------------------
    Case(
        "lc_react_json_action",
        'Thought: agent thought here\n```\n{\n    "action": "search",\n    "action_input": '
        '"what is the temperature in SF?"\n}\n```\n',
        _act("search", _TEMP, "agent thought here"),
        _LC + "output_parsers/test_react_json_single_input.py",
    ),
    Case(
        "lc_json_tool_usage",
        '    ```\n{\n  "action": "search",\n  "action_input": "2+2"\n}\n```',
        _act("search", "2+2"),
        _LC + "output_parsers/test_json.py",
    ),
    Case(
        "lc_json_finish",
        '```\n{\n  "action": "Final Answer",\n  "action_input": "4"\n}\n```',
        _fin("4"),
        _LC + "output_parsers/test_json.py",
    ),
    # ---- LangChain: ConvoOutputParser ---------------------------------------------------------------
    Case(
        "lc_convo_normal",
        "Action: my_action\nAction Input: my action input",
        _act("my_action", "my action input"),
        _LC + "output_parsers/test_convo_output_parser.py",
    ),
    Case(
        "lc_convo_multiline",
        "Thought: Do I need to use a tool? Yes\nAction: evaluate_code\nAction Input: Evaluate Code with the "
        'following Python content:\n```python\nprint("Hello fifty shades of gray mans!"[::-1])\n```',
        _act(
            "evaluate_code",
            'Evaluate Code with the following Python content:\n```python\nprint("Hello fifty shades of gray '
            'mans!"[::-1])\n```',
        ),
        _LC + "output_parsers/test_convo_output_parser.py",
    ),
    Case(
        "lc_convo_with_observation",
        "Thought: Do I need to use a tool? Yes\nAction: my_tool\nAction Input: the input to the action\n"
        "Observation: the result of the action",
        _act("my_tool", "the input to the action", "Do I need to use a tool? Yes"),
        _LC + "output_parsers/test_convo_output_parser.py",
    ),
    Case(
        "lc_convo_partial_observation",
        "Thought: Do I need to use a tool? Yes\nAction: my_tool\nAction Input: the input to the action\nObs",
        _act("my_tool", "the input to the action"),
        _LC + "output_parsers/test_convo_output_parser.py",
    ),
    # ---- LangChain: MRKLOutputParser ----------------------------------------------------------------
    Case(
        "lc_mrkl_action",
        "Thought: I need to search for NBA\nAction: Search\nAction Input: NBA",
        _act("Search", "NBA", "I need to search for NBA"),
        _LC + "test_mrkl.py",
    ),
    Case(
        "lc_mrkl_whitespace",
        "Thought: I need to search for NBA\nAction: Search \nAction Input: NBA",
        _act("Search", "NBA"),
        _LC + "test_mrkl.py",
    ),
    Case(
        "lc_mrkl_code_input",
        "Now I need to write a unittest for the function.\n\nAction: Python\nAction Input:\n```\nimport "
        "unittest\n\nunittest.main()\n```",
        _act("Python", "```\nimport unittest\n\nunittest.main()\n```"),
        _LC + "test_mrkl.py",
    ),
    Case(
        "lc_mrkl_newline_after_keyword",
        "\n    I can use the `ls` command to list the contents of the directory     and `grep` to search for "
        "the specific file.\n\n    Action:\n    Terminal\n\n    Action Input:\n    ls -l ~/.bashrc.d/\n    ",
        _act("Terminal", "ls -l ~/.bashrc.d/"),
        _LC + "test_mrkl.py",
    ),
    Case(
        "lc_mrkl_sql_query",
        "\n    I should query for the largest single shift payment for every unique user.\n    Action: "
        'query_sql_db\n    Action Input:     SELECT "UserName", MAX(totalpayment) FROM user_shifts GROUP BY '
        '"UserName" ',
        _act("query_sql_db", 'SELECT "UserName", MAX(totalpayment) FROM user_shifts GROUP BY "UserName"'),
        _LC + "test_mrkl.py",
    ),
    Case(
        "lc_mrkl_final",
        "Thought: I can now answer the question\nFinal Answer: 1994",
        _fin("1994", "I can now answer the question"),
        _LC + "test_mrkl.py",
    ),
    Case(
        "lc_mrkl_final_newline",
        "Thought: I can now answer the question\nFinal Answer:\n1994",
        _fin("1994"),
        _LC + "test_mrkl.py",
    ),
    Case(
        "lc_mrkl_final_multiline",
        "Thought: I can now answer the question\nFinal Answer: 1994\n1993",
        _fin("1994\n1993"),
        _LC + "test_mrkl.py",
    ),
    Case(
        "lc_mrkl_missing_action_input",
        "Thought: I need to search for NBA\nAction: Search\nThought: NBA",
        None,
        _LC + "test_mrkl.py",
        reason="invalid_input",
    ),
    Case(
        "lc_mrkl_missing_action",
        "Thought: I need to search for NBA\nThought: Search\nAction Input: NBA",
        None,
        _LC + "test_mrkl.py",
        reason="missing_action",
    ),
    Case(
        "lc_mrkl_action_then_invented_answer",
        "Thought: I need to search for NBA\nAction: Search\nAction Input: NBA\nObservation: founded in 1994\n"
        "Thought: I can now answer the question\nFinal Answer: 1994",
        _act("Search", "NBA"),
        _LC + "test_mrkl.py (LangChain refuses; the observation and answer after the first action are "
        "fabricated, so the first action wins and the rest is dropped)",
    ),
    Case(
        "lc_mrkl_parser_valid",
        "I can use the `foo` tool to achieve the goal.\n    Action: foo\n    Action Input: bar",
        _act("foo", "bar", "I can use the `foo` tool to achieve the goal."),
        _LC + "test_mrkl_output_parser.py",
    ),
    Case(
        "lc_mrkl_parser_final",
        "Final Answer: The best pizza to eat is margaritta ",
        _fin("The best pizza to eat is margaritta"),
        _LC + "test_mrkl_output_parser.py",
    ),
    Case(
        "lc_mrkl_parser_missing_action",
        "I can use the `foo` tool to achieve the goal.",
        None,
        _LC + "test_mrkl_output_parser.py",
        ("foo",),
        reason="prose",
    ),
    Case(
        "lc_mrkl_parser_missing_action_input",
        "I can use the `foo` tool to achieve the goal.\n    Action: foo",
        None,
        _LC + "test_mrkl_output_parser.py",
        ("foo",),
        reason="invalid_input",
    ),
    Case(
        "lc_mrkl_parser_final_before_action",
        "Final Answer: The best pizza to eat is margaritta\n\n        Action: foo\n        Action Input: bar\n        ",
        _fin("The best pizza to eat is margaritta"),
        _LC + "test_mrkl_output_parser.py",
    ),
    Case(
        "lc_mrkl_parser_final_after_action",
        "\n        Observation: I can use the `foo` tool to achieve the goal.\n        Action: foo\n        "
        "Action Input: bar\n        Final Answer: The best pizza to eat is margaritta \n        ",
        _act("foo", "bar"),
        _LC + "test_mrkl_output_parser.py (LangChain refuses; first action wins, the invented answer is dropped)",
    ),
    # ---- LangChain: ChatOutputParser / StructuredChatOutputParser -----------------------------------
    Case(
        "lc_chat_with_language",
        'I can use the `foo` tool to achieve the goal.\n\n    Action:\n    ```json\n    {\n      "action": '
        '"foo",\n      "action_input": "bar"\n    }\n    ```\n    ',
        _act("foo", "bar", "I can use the `foo` tool to achieve the goal."),
        _LC + "test_chat.py",
    ),
    Case(
        "lc_chat_without_language",
        'I can use the `foo` tool to achieve the goal.\n\n    Action:\n    ```\n    {\n      "action": "foo",'
        '\n      "action_input": "bar"\n    }\n    ```\n    ',
        _act("foo", "bar"),
        _LC + "test_chat.py",
    ),
    Case(
        "lc_structured_language_and_spaces",
        "I can use the `foo` tool to achieve the goal.\n\n    Action:\n    ```json     \n\n    {\n      "
        '"action": "foo",\n      "action_input": "bar"\n    }\n    ```\n    ',
        _act("foo", "bar"),
        _LC + "test_structured_chat.py",
    ),
    Case(
        "lc_structured_no_newline",
        'I can use the `foo` tool to achieve the goal.\n\n    Action:\n    ```{"action": "foo", '
        '"action_input": "bar"}```\n    ',
        _act("foo", "bar"),
        _LC + "test_structured_chat.py",
    ),
    Case(
        "lc_structured_language_no_newline",
        'I can use the `foo` tool to achieve the goal.\n\n    Action:\n    ```json{"action": "foo", '
        '"action_input": "bar"}```\n    ',
        _act("foo", "bar"),
        _LC + "test_structured_chat.py (a TODO there: LangChain returns the raw text)",
    ),
    Case(
        "lc_structured_final_answer",
        'I can use the `foo` tool to achieve the goal.\n\n    Action:\n    ```json\n    {\n      "action": '
        '"Final Answer",\n      "action_input": "This is the final answer"\n    }\n    ```\n    ',
        _fin("This is the final answer"),
        _LC + "test_structured_chat.py",
    ),
    # ---- langchain-core: parse_json_markdown fixtures ----------------------------------------------
    Case(
        "lc_core_code_block_and_newlines",
        '```json\n{\n    "action": "Final Answer",\n    "action_input": "```bar\n<div id=\\"1\\" '
        'class=\\"value\\">\n\ttext\n</div>```"\n}\n```',
        _fin('```bar\n<div id="1" class="value">\n\ttext\n</div>```'),
        _LC_CORE + " (JSON_WITH_MARKDOWN_CODE_BLOCK_AND_NEWLINES: raw newlines and a fence inside a string)",
    ),
    Case(
        "lc_core_python_dict_answer",
        '```json\n{\n    "action": "Final Answer",\n    "action_input": {"foo": "bar", "bar": "foo"}\n}\n```',
        _fin('{"foo": "bar", "bar": "foo"}'),
        _LC_CORE + " (JSON_WITH_PYTHON_DICT: a FINISH dict with no answer key becomes its JSON text)",
    ),
    Case(
        "lc_core_escaped_quotes_nested",
        '```json\n{\n    "action": "Final Answer",\n    "action_input": "{\\"foo\\": \\"bar\\", \\"bar\\": '
        '\\"foo\\"}"\n}\n```',
        _fin('{"foo": "bar", "bar": "foo"}'),
        _LC_CORE + " (JSON_WITH_ESCAPED_DOUBLE_QUOTES_IN_NESTED_JSON)",
    ),
    Case(
        "lc_core_without_end_bracket",
        'Here is a response formatted as schema:\n\n```json\n{\n  "action": "search",\n  "action_input": "bar"\n\n\n',
        None,
        _LC_CORE + " (WITHOUT_END_BRACKET, adapted to an action: never closed, so refused, not repaired)",
        reason="truncated",
    ),
    Case(
        "lc_core_with_end_text_no_bracket",
        'Here is a response formatted as schema:\n\n```\n{\n  "action": "search",\n  "action_input": "bar"\n\n'
        "```\nThis should do the trick\n",
        None,
        _LC_CORE + " (WITH_END_TEXT, adapted to an action: the object never closes)",
        reason="truncated",
    ),
    Case(
        "lc_core_text_before_and_after",
        'Action: Testing\n\n```\n{\n  "action": "search",\n  "action_input": "bar"\n}\n```\nThis should do the trick',
        _act("search", "bar"),
        _LC_CORE + " (TEXT_BEFORE_AND_AFTER, adapted: an 'Action:' line over a JSON block labels the JSON)",
    ),
    Case(
        "lc_core_part_code_block",
        '\n{"action": "python", "action_input": "hey ```print(hello world!)``` hey"}\n',
        _act("python", "hey ```print(hello world!)``` hey"),
        _LC_CORE + " (JSON_WITH_PART_MARKDOWN_CODE_BLOCK, adapted to an action)",
    ),
    # ---- LangChain issues -----------------------------------------------------------------------------
    Case(
        "lc_issue_20704_llama3_invented_observation",
        "Thought: I need to find out how many home runs Shohei Ohtani hit last year.\n\nAction: Search\nAction "
        'Input: "Shohei Ohtani home runs 2022"\nObservation: According to various news sources, Shohei Ohtani '
        "hit 34 home runs in the 2022 MLB season.\n\nThought: I now know the final answer\nFinal Answer: "
        "Shohei Ohtani hit 34 home runs.",
        _act("Search", "Shohei Ohtani home runs 2022"),
        "https://github.com/langchain-ai/langchain/issues/20704",
    ),
    Case(
        "lc_issue_21912_loop_of_invented_steps",
        "Question: Write an academic abstract about Bitcoin\nThought: I need to research the topic to write a "
        "good abstract\nAction: Wikipedia Research Tool\nAction Input: Bitcoin\nObservation: The first result "
        "is about the history of Bitcoin\nThought: I need to know more about the technical aspects of Bitcoin\n"
        "Action: Duck Duck Go Search Results Tool\nAction Input: Bitcoin technical aspects\nObservation: ...\n"
        "Thought: I now know the final answer\nFinal Answer: Bitcoin is a decentralized digital currency.",
        _act("Wikipedia Research Tool", "Bitcoin"),
        "https://github.com/langchain-ai/langchain/issues/21912",
    ),
    Case(
        "lc_issue_5601_code_action_with_invented_answer",
        "Thought: I should look at the sales table\nAction: python_repl_ast\nAction Input: df = "
        "pd.read_sql('SELECT * FROM sales', conn)\nObservation: 42 rows\nThought: I now know the final answer\n"
        "Final Answer: There are 42 sales.",
        _act("python_repl_ast", "df = pd.read_sql('SELECT * FROM sales', conn)"),
        "https://github.com/langchain-ai/langchain/issues/5601 (adapted: an action plus a hallucinated answer)",
    ),
    Case(
        "lc_pr_16010_invented_next_question",
        "Thought: I now know the final answer\nFinal Answer: Paris is the capital of France.\nQuestion: What "
        "is the capital of Germany?\nThought: I should search",
        _fin("Paris is the capital of France."),
        "https://github.com/langchain-ai/langchain/pull/16010 (adapted: the model invents the next question)",
    ),
    Case(
        "lc_pr_1345_action_none",
        "Thought: Do I need to use a tool? No\nAction: None",
        None,
        "https://github.com/langchain-ai/langchain/pull/1345",
        reason="invalid_action",
    ),
    Case(
        "lc_issue_10572_no_tool_no_answer",
        "Do I need to use a tool? No",
        None,
        "https://github.com/langchain-ai/langchain/issues/10572",
        reason="prose",
    ),
    # ---- LlamaIndex: ReActOutputParser ---------------------------------------------------------------
    Case(
        "li_python_dict_with_comment",
        "Thought: Gotta use a tool.\nAction: tool\nAction Input: {'pages': ['coffee'] /* comment */, "
        "'load_kwargs': {}, 'query_str': ''}, along those lines.\n",
        _act("tool", {"pages": ["coffee"], "load_kwargs": {}, "query_str": ""}, "Gotta use a tool."),
        _LI,
    ),
    Case(
        "li_extract_tool_use",
        'Thought: I need to use a tool to help me answer the question.\nAction: add\nAction Input: {"a": 1, "b": 1}\n',
        _act("add", {"a": 1, "b": 1}, "I need to use a tool to help me answer the question."),
        _LI,
    ),
    Case(
        "li_blank_lines_between",
        "Thought: I need to use a tool to help me answer the question.\n\nAction: add\n\n\n\nAction Input: "
        '{"a": 1, "b": 1}\n',
        _act("add", {"a": 1, "b": 1}, "I need to use a tool to help me answer the question."),
        _LI,
    ),
    Case(
        "li_nested_dicts",
        'Thought: Gotta use a tool.\nAction: tool\nAction Input: {"a": 1, "b": {}}\n',
        _act("tool", {"a": 1, "b": {}}),
        _LI,
    ),
    Case(
        "li_wrapped_in_call",
        "Thought: I need to use a tool to help me answer the question.\nAction: add\nAction Input: "
        'QueryEngineTool({"a": 1, "b": 1})\n',
        _act("add", {"a": 1, "b": 1}),
        _LI,
    ),
    Case(
        "li_action_with_description",
        "Thought: I need to use a tool to help me answer the question.\nAction: add (add two numbers)\nAction "
        'Input: {"a": 1, "b": 1}\n',
        _act("add", {"a": 1, "b": 1}),
        _LI,
    ),
    Case(
        "li_tool_name_with_digit",
        'Thought: I need to use a tool to help me answer the question.\nAction: add2\nAction Input: {"a": 1, "b": 1}\n',
        _act("add2", {"a": 1, "b": 1}),
        _LI,
    ),
    Case(
        "li_multiline_action_input",
        "Thought: I need to use a tool to help me answer the question.\nAction: add\nAction Input: {\n    "
        '"a": 1,\n    "b": 1\n}\n',
        _act("add", {"a": 1, "b": 1}),
        _LI,
    ),
    Case(
        "li_chinese_tool_name",
        "Thought: I need to use a tool to help me answer the question.\n\nAction: 加法\n\nAction Input: "
        '{"a": 1, "b": 1}\n',
        _act("加法", {"a": 1, "b": 1}),
        _LI,
    ),
    Case(
        "li_final_response",
        "Thought: I have enough information to answer the question without using any more tools.\nAnswer: 2\n",
        _fin("2", "I have enough information to answer the question without using any more tools."),
        _LI,
    ),
    Case(
        "li_final_response_multiline",
        "Thought: I have enough information to answer the question without using any more tools.\nAnswer: "
        "Here is the answer:\n\nThis is the second line.\n",
        _fin("Here is the answer:\n\nThis is the second line."),
        _LI,
    ),
    Case(
        "li_issue_10322_python_dict_input",
        "Thought: I'll use the information provided by the `about_the_user` tool to narrow down my search for "
        "the drink you enjoy.\nAction: look_up_wikipedia\nAction Input: {'pages': ['Coca-Cola'], "
        "'query_str': ''}",
        _act("look_up_wikipedia", {"pages": ["Coca-Cola"], "query_str": ""}),
        "https://github.com/run-llama/llama_index/issues/10322",
    ),
    Case(
        "li_issue_12455_inline_call_without_input",
        'Thought: I need to use a tool to help me answer the question.\nAction: xxx ({"input": "xxxxxxxxx"})',
        _act("xxx", {"input": "xxxxxxxxx"}, "I need to use a tool to help me answer the question."),
        "https://github.com/run-llama/llama_index/issues/12455 (LlamaIndex refuses; the arguments written inline "
        "after the name are the call)",
    ),
    Case(
        "li_issue_12460_cut_thought",
        "Thought: The current language of the user is: en. I need",
        None,
        "https://github.com/run-llama/llama_index/issues/12460",
    ),
    # ---- CrewAI: CrewAgentParser -----------------------------------------------------------------------
    Case(
        "crew_apostrophes",
        "Thought: Let's find the temperature\nAction: search\nAction Input: what's the temperature in SF?",
        _act("search", "what's the temperature in SF?", "Let's find the temperature"),
        _CREW,
    ),
    Case(
        "crew_json_input_after_stars",
        f'\n    Thought: Let\'s find the information\n    Action: query\n    Action Input: ** {{"task": '
        f'"{_CREW_ANSWER}", "context": "{_CREW_CONTEXT}", "coworker": "Senior Researcher"}}\n    ',
        _act("query", {"task": _CREW_ANSWER, "context": _CREW_CONTEXT, "coworker": "Senior Researcher"}),
        _CREW + " (CrewAI keeps the JSON text; a JSON object input becomes a dict here)",
    ),
    Case(
        "crew_quoted_input",
        'Thought: Let\'s find the temperature\nAction: search\nAction Input: "temperature in SF"',
        _act("search", "temperature in SF"),
        _CREW,
    ),
    Case(
        "crew_curly_braces_not_json",
        "Thought: Let's find the temperature\nAction: search\nAction Input: {temperature in SF}",
        _act("search", "{temperature in SF}"),
        _CREW,
    ),
    Case(
        "crew_angle_brackets",
        "Thought: Let's find the temperature\nAction: search\nAction Input: <temperature in SF>",
        _act("search", "<temperature in SF>"),
        _CREW,
    ),
    Case(
        "crew_parentheses",
        "Thought: Let's find the temperature\nAction: search\nAction Input: (temperature in SF)",
        _act("search", "(temperature in SF)"),
        _CREW,
    ),
    Case(
        "crew_mixed_brackets",
        "Thought: Let's find the temperature\nAction: search\nAction Input: [temperature in {SF}]",
        _act("search", "[temperature in {SF}]"),
        _CREW,
    ),
    Case(
        "crew_nested_quotes",
        "Thought: Let's find the temperature\nAction: search\nAction Input: \"what's the temperature in 'SF'?\"",
        _act("search", "what's the temperature in 'SF'?"),
        _CREW,
    ),
    Case(
        "crew_incomplete_json_input",
        'Thought: Let\'s find the temperature\nAction: search\nAction Input: {"query": "temperature in SF"',
        None,
        _CREW + " (CrewAI repairs it; a JSON input that never closes is output cut off, so it is refused)",
        reason="truncated",
    ),
    Case(
        "crew_special_characters",
        "Thought: Let's find the temperature\nAction: search\nAction Input: what is the temperature in SF? @$%^&*",
        _act("search", "what is the temperature in SF? @$%^&*"),
        _CREW,
    ),
    Case(
        "crew_quoted_brackets",
        'Thought: Let\'s find the temperature\nAction: search\nAction Input: "[what is the temperature in SF?]"',
        _act("search", "[what is the temperature in SF?]"),
        _CREW,
    ),
    Case(
        "crew_multiline_input",
        "Thought: Let's find the temperature\nAction: search\nAction Input: what is\nthe temperature in SF?",
        _act("search", "what is\nthe temperature in SF?"),
        _CREW,
    ),
    Case(
        "crew_literal_backslash_n",
        "Thought: Let's find the temperature\nAction: search\nAction Input: what is the temperature in SF? \\n",
        _act("search", "what is the temperature in SF? \\n"),
        _CREW,
    ),
    Case(
        "crew_json_string_input",
        'Thought: Let\'s find the temperature\nAction: search\nAction Input: {"query": "temperature in SF"}',
        _act("search", {"query": "temperature in SF"}),
        _CREW + " (CrewAI keeps the JSON text; a JSON object input becomes a dict here)",
    ),
    Case(
        "crew_unbalanced_quote",
        "Thought: Let's find the temperature\nAction: search\nAction Input: \"what is the temperature in SF?",
        _act("search", _TEMP),
        _CREW,
    ),
    Case(
        "crew_final_answer",
        "Thought: I found the information\nFinal Answer: The temperature is 100 degrees",
        _fin("The temperature is 100 degrees", "I found the information"),
        _CREW,
    ),
    Case(
        "crew_missing_action",
        "Thought: Let's find the temperature\nAction Input: what is the temperature in SF?",
        None,
        _CREW,
        reason="missing_action",
    ),
    Case(
        "crew_missing_action_input",
        "Thought: Let's find the temperature\nAction: search",
        None,
        _CREW,
        reason="invalid_input",
    ),
    Case(
        "crew_action_and_final_answer",
        "Thought: I found the information\nAction: search\nAction Input: what is the temperature in SF?\n"
        "Final Answer: The temperature is 100 degrees",
        _act("search", _TEMP),
        _CREW + " (CrewAI refuses; the first action wins and the invented answer is dropped)",
    ),
    Case(
        "crew_surrounding_whitespace",
        " Thought: Let's find the temperature \n Action: search \n Action Input: what is the temperature in SF? ",
        _act("search", _TEMP),
        _CREW,
    ),
    Case(
        "crew_repair_unquoted_keys",
        '{"action": "ask_coworker", "action_input": {task: "Research XAI", context: "Explainable AI", '
        "coworker: Senior Researcher}}",
        _act("ask_coworker", _CREW_DICT),
        _CREW + " (test_safe_repair_json_missing_quotes, adapted to an action)",
    ),
    Case(
        "crew_repair_single_quotes",
        "{'action': 'ask_coworker', 'action_input': {'task': 'Research XAI', 'context': 'Explainable AI', "
        "'coworker': 'Senior Researcher'}}",
        _act("ask_coworker", _CREW_DICT),
        _CREW + " (test_safe_repair_json_single_quotes, adapted to an action)",
    ),
    Case(
        "crew_repair_trailing_comma",
        '{"action": "ask_coworker", "action_input": {"task": "Research XAI", "context": "Explainable AI", '
        '"coworker": "Senior Researcher",},}',
        _act("ask_coworker", _CREW_DICT),
        _CREW + " (test_safe_repair_json_trailing_commas, adapted to an action)",
    ),
    Case(
        "crew_repair_missing_colon",
        '{"action": "ask_coworker", "action_input": {"task" "Research XAI", "context": "Explainable AI", '
        '"coworker": "Senior Researcher"}}',
        _act("ask_coworker", _CREW_DICT),
        _CREW + " (test_safe_repair_json_missing_colon, adapted to an action)",
    ),
    Case(
        "crew_issue_4186_action_none",
        "Thought: The user only greets me, no tool can help here.\nAction: None (direct response required)",
        None,
        "https://github.com/crewAIInc/crewAI/issues/4186",
        reason="invalid_action",
    ),
    # ---- smolagents: get_tool_call_from_text / parse_json_blob ---------------------------------------
    Case(
        "smol_tool_call_basic",
        '{"name": "weather_tool", "arguments": "New York"}',
        _act("weather_tool", "New York"),
        _SMOL_MODELS,
    ),
    Case(
        "smol_action_key_instead_of_name",
        '{"action": "weather_tool", "arguments": "New York"}',
        _act("weather_tool", "New York"),
        _SMOL_MODELS + " (smolagents refuses the missing 'name' key; 'action' is a synonym here)",
    ),
    Case(
        "smol_json_object_args",
        '{"name": "weather_tool", "arguments": {"city": "New York"}}',
        _act("weather_tool", {"city": "New York"}),
        _SMOL_MODELS,
    ),
    Case(
        "smol_json_string_args",
        '{"name": "weather_tool", "arguments": "{\\"city\\": \\"New York\\"}"}',
        _act("weather_tool", {"city": "New York"}),
        _SMOL_MODELS,
    ),
    Case(
        "smol_missing_args",
        '{"name": "weather_tool"}',
        _act("weather_tool", {}),
        _SMOL_MODELS + " (a bare 'name' object is an action only when the name is a known tool)",
        ("weather_tool",),
    ),
    Case(
        "smol_custom_keys",
        '{"tool": "weather_tool", "params": "New York"}',
        _act("weather_tool", "New York"),
        _SMOL_MODELS,
    ),
    Case(
        "smol_numeric_args",
        '{"name": "calculator", "arguments": 42}',
        None,
        _SMOL_MODELS + " (smolagents passes 42 on; arguments must be an object or a string)",
        reason="invalid_input",
    ),
    Case(
        "smol_blob_text_around",
        'With text before{"action": "search", "action_input": {"q": "json"}}And text after',
        _act("search", {"q": "json"}),
        _SMOL_UTILS + " (test_parse_json_blob_with_valid_json, adapted to an action)",
    ),
    Case(
        "smol_blob_unclosed",
        '{"action": "search", "action_input": "json"With text after',
        None,
        _SMOL_UTILS + " (test_parse_json_blob_with_invalid_json, adapted to an action)",
        reason="truncated",
    ),
    Case(
        "smol_blob_no_opening_brace",
        'With text here"action": "search", "action_input": "json"}',
        None,
        _SMOL_UTILS + " (test_parse_json_blob_with_invalid_json, adapted to an action)",
    ),
    Case(
        "smol_issue_122_python_repr_tool_call",
        "{'id': '58136', 'type': 'function', 'function': {'name': 'get_system_configuration', 'arguments': "
        "{'system': 'ABC123'}}}",
        _act("get_system_configuration", {"system": "ABC123"}),
        "https://github.com/huggingface/smolagents/issues/122",
    ),
    Case(
        "smol_pr_962_calling_tools_log",
        "Calling tools:\n[{'id': 'call_1', 'type': 'function', 'function': {'name': 'web_search', "
        "'arguments': {'query': 'Cottage Inn Pizza Madison Heights phone number'}}}]",
        _act("web_search", {"query": "Cottage Inn Pizza Madison Heights phone number"}),
        "https://github.com/huggingface/smolagents/pull/962",
    ),
    Case(
        "smol_pr_992_trailing_garbage",
        'Action:\n{\n"name": "final_answer",\n"parameters": {\n    "answer": "The current record of the New '
        'York Knicks NBA team is not provided in the given functions."\n    }\n}\n\nAction\n}looks like '
        "valid, but invalid{\n",
        _fin("The current record of the New York Knicks NBA team is not provided in the given functions."),
        "https://github.com/huggingface/smolagents/pull/992",
    ),
    Case(
        "hf_course_dummy_agent_invented_observation",
        "Thought: To answer the question, I need to get the current weather in London.\nAction:\n```\n{\n  "
        '"action": "get_weather",\n  "action_input": {"location": "London"}\n}\n```\nObservation: The current '
        "weather in London is partly cloudy with a temperature of 12°C.\nThought: I now know the final answer."
        "\nFinal Answer: The current weather in London is partly cloudy with a temperature of 12°C.",
        _act(
            "get_weather",
            {"location": "London"},
            "To answer the question, I need to get the current weather in London.",
        ),
        "https://github.com/huggingface/agents-course/blob/main/units/en/unit1/dummy-agent-library.mdx",
    ),
    Case(
        "qwen_pr_invented_observation_and_finish",
        'Action: {"name": "get_recently_submitted_cs_papers", "args": {"max_results": 5}}\nObservation: '
        "成功获取5篇论文列表，已保存至 output/papers.json\nThought: 任务已完成\nAction: FINISH",
        _act("get_recently_submitted_cs_papers", {"max_results": 5}),
        "https://github.com/Algorineko/AgenticArXiv-RL/pull/19 (arguments filled in; the excerpt elides them)",
    ),
    # ---- json_repair fixtures inside an action ------------------------------------------------------
    Case(
        "jr_python_literals",
        '{"action": "set_flags", "action_input": { "key": "value", "key2": 1, "key3": True }}',
        _act("set_flags", {"key": "value", "key2": 1, "key3": True}),
        _JR + "test_parse_object.py",
    ),
    Case(
        "jr_line_comment",
        '{"action": "store", "action_input": { "key": { "key2": "value2" // comment\n }, "key3": "value3" }}',
        _act("store", {"key": {"key2": "value2"}, "key3": "value3"}),
        _JR + "test_parse_comment.py (the comment ends its line here, as models write it)",
    ),
    Case(
        "jr_hash_comment",
        '{"action": "store", "action_input": { "key": { "key2": "value2" # comment }, "key3": "value3" }}',
        _act("store", {"key": {"key2": "value2"}, "key3": "value3"}),
        _JR + "test_parse_comment.py",
    ),
    Case(
        "jr_unquoted_value",
        '{"action": "lookup", "action_input": {"name": "John", "age": 30, "city": New York}}',
        _act("lookup", {"name": "John", "age": 30, "city": "New York"}),
        _JR + "test_parse_string.py",
    ),
    Case(
        "jr_four_backtick_fence",
        '````{ "action": "lookup", "action_input": {"key": "value"} }```',
        _act("lookup", {"key": "value"}),
        _JR + "test_parse_string.py (test_leading_trailing_characters)",
    ),
    Case(
        "jr_inline_fence_single_quotes",
        "Based on the information extracted, here is the filled JSON output: ```json { 'action': 'lookup', "
        "'action_input': {'a': 'b'} } ```",
        _act("lookup", {"a": "b"}),
        _JR + "test_parse_string.py (test_leading_trailing_characters)",
    ),
    Case(
        "jr_unicode_escapes",
        '{"action": "greet", "action_input": {"key": "\\u0076\\u0061\\u006C\\u0075\\u0065"}}',
        _act("greet", {"key": "value"}),
        _JR + "test_parse_string.py (test_escaping)",
    ),
    Case(
        "jr_multiple_objects",
        '{"action": "first", "action_input": {}}, {"action": "second", "action_input": {}}',
        _act("first", {}),
        _JR + "test_json_repair.py (test_multiple_jsons: only the first action is taken)",
    ),
    Case(
        "jr_cut_inside_value",
        '{"action": "lookup", "action_input": {"name": "John", "age": 30, "city": "New',
        None,
        _JR + "test_parse_string.py (json_repair closes it as 'New'; a cut-off call is refused instead)",
        reason="truncated",
    ),
    Case(
        "jr_braces_in_string_and_trailing_brace",
        '{"action": "run_code", "action_input": {"code": "# note\\nconfig = {\'type\': \'object\', '
        "'properties': {}, 'additionalProperties': True}\"}}}",
        _act(
            "run_code", {"code": "# note\nconfig = {'type': 'object', 'properties': {}, 'additionalProperties': True}"}
        ),
        _JR + "test_json_repair.py (test_valid_json_with_trailing_garbage_preserves_string_content)",
    ),
    # ---- GigaChat: the seed article and GigaChat-style continuations ---------------------------------
    Case("gigachat_seed_1", _SEED_1, _act("register_user", _IVAN, _SEED_1_THOUGHT), _SEED, _REG),
    Case(
        "gigachat_seed_2",
        _SEED_2,
        _act("register_user", {"username": "Ivan", "user_email": "ivan@test.com"}),
        _SEED,
        _REG,
    ),
    Case(
        "gigachat_invented_observation_and_finish",
        _SEED_1 + '\nObservation: {"status": "ok", "user_id": 42}\nThought: Пользователь зарегистрирован.\n'
        '{"thought": "Готово", "action": "FINISH", "action_input": "Пользователь Иван зарегистрирован"}',
        _act("register_user", _IVAN),
        "react_agent: GigaChat has no stop sequences and writes its own Observation and answer",
        _REG,
    ),
    Case(
        "gigachat_fenced_russian_continuation",
        "Хорошо, зарегистрирую пользователя.\n```json\n" + _SEED_1 + "\n```\nНаблюдение: пользователь "
        "успешно зарегистрирован.\nОтвет: Иван зарегистрирован.",
        _act("register_user", _IVAN),
        "react_agent: GigaChat-style fenced action followed by an invented Russian observation",
        _REG,
    ),
    Case(
        "gigachat_escaped_cyrillic",
        '{"thought": "\\u0420\\u0435\\u0433\\u0438\\u0441\\u0442\\u0440\\u0430\\u0446\\u0438\\u044f", '
        '"action": "register_user", "action_input": {"username": "\\u0418\\u0432\\u0430\\u043d", "email": '
        '"ivan@test.com"}}',
        _act("register_user", {"username": "Иван", "email": "ivan@test.com"}, "Регистрация"),
        "react_agent: GigaChat sometimes answers with \\u-escaped Cyrillic",
        _REG,
    ),
    Case(
        "gigachat_cut_inside_value",
        '{\n    "thought": "Регистрирую пользователя",\n    "action": "register_user",\n    "action_input": '
        '{"username": "Iv',
        None,
        "react_agent: output cut by max_tokens inside a value must not be repaired into a call",
        _REG,
        reason="truncated",
    ),
    Case(
        "gigachat_prose_intent_ru",
        "Я вызову инструмент register_user с именем Ivan и почтой ivan@test.com.",
        None,
        "react_agent: GigaChat sometimes describes the call instead of making it",
        _REG,
        reason="prose",
    ),
    Case(
        "gigachat_prose_intent_en",
        "I will call register_user with username Ivan",
        None,
        "react_agent: prose that only talks about calling a tool",
        _REG,
        reason="prose",
    ),
    Case(
        "gigachat_finish_answer_dict",
        '{"thought": "Регистрация завершена", "action": "FINISH", "action_input": {"answer": "Пользователь '
        'Иван зарегистрирован"}}',
        _fin("Пользователь Иван зарегистрирован", "Регистрация завершена"),
        "react_agent: FINISH with the answer wrapped in an object",
    ),
    Case(
        "gigachat_though_typo_final_answer",
        '{"though": "Всё готово", "action": "final_answer", "action_input": "Готово"}',
        _fin("Готово", "Всё готово"),
        "react_agent: the seed article's 'though' typo and a FINISH synonym",
    ),
    Case(
        "gigachat_two_actions_in_a_row",
        '{"thought": "Сначала проверю", "action": "check_user", "action_input": {"username": "Ivan"}}\n'
        '{"thought": "Теперь зарегистрирую", "action": "register_user", "action_input": {"username": "Ivan"}}',
        _act("check_user", {"username": "Ivan"}, "Сначала проверю"),
        "react_agent: only the first of several actions in a row is executed",
    ),
    Case(
        "gigachat_trailing_comma_and_comment",
        '{\n  "thought": "Регистрирую",\n  "action": "register_user", // инструмент\n  "action_input": '
        '{"username": "Ivan", "email": "ivan@test.com",},\n}',
        _act("register_user", _IVAN),
        "react_agent: comments and trailing commas are repaired with json_repair",
        _REG,
    ),
    # ---- react_agent policy cases -----------------------------------------------------------------------
    Case(
        "think_block_with_draft_action",
        '<think>\nMaybe {"action": "delete_user", "action_input": {"username": "Ivan"}}? No.\n</think>\n'
        '{"action": "register_user", "action_input": {"username": "Ivan"}}',
        _act("register_user", {"username": "Ivan"}),
        "react_agent: drafts inside <think> are never executed",
    ),
    Case(
        "think_block_unclosed",
        "<think>\nI should call register_user with username Ivan",
        None,
        "react_agent: an unclosed <think> with nothing after it",
        _REG,
        reason="truncated",
    ),
    Case(
        "think_orphan_closing_tag",
        'The user wants an account.\n</think>\n\n{"action": "register_user", "action_input": {"username": "Ivan"}}',
        _act("register_user", {"username": "Ivan"}),
        "react_agent: chat templates that open <think> themselves leave only the closing tag",
    ),
    Case(
        "thinking_block",
        '<thinking>plan</thinking>\n```json\n{"action": "FINISH", "action_input": "Done"}\n```',
        _fin("Done"),
        "react_agent: <thinking> blocks are skipped like <think>",
    ),
    Case(
        "envelope_call_tool_name",
        '{"action": "call_tool", "name": "register_user", "arguments": {"username": "Ivan"}}',
        _act("register_user", {"username": "Ivan"}),
        "react_agent: a generic 'action' word with the tool name in another key",
        _REG,
    ),
    Case(
        "envelope_tool_tool_name",
        '{"action": "tool", "tool_name": "register_user", "tool_input": {"username": "Ivan"}}',
        _act("register_user", {"username": "Ivan"}),
        "react_agent: a generic 'action' word with the tool name in another key",
    ),
    Case(
        "envelope_openai_function",
        '{"type": "function", "function": {"name": "register_user", "arguments": "{\\"username\\": \\"Ivan\\"}"}}',
        _act("register_user", {"username": "Ivan"}),
        "react_agent: OpenAI-style function call with arguments as a JSON string",
    ),
    Case(
        "four_backticks_with_inner_fence",
        '````json\n{"action": "write_file", "action_input": {"path": "README.md", "content": "```bash\\npip '
        'install x\\n```"}}\n````',
        _act("write_file", {"path": "README.md", "content": "```bash\npip install x\n```"}),
        "react_agent: a fence of four backticks around a value holding a fence of three",
    ),
    Case(
        "markdown_bold_labels",
        "**Thought:** I need the weather\n**Action:** get_weather\n**Action Input:** Moscow",
        _act("get_weather", "Moscow", "I need the weather"),
        "react_agent: markdown-decorated labels",
    ),
    Case(
        "action_input_null",
        '{"action": "get_time", "action_input": null}',
        _act("get_time", {}),
        "react_agent: a null tool input means no arguments",
    ),
    Case(
        "finish_input_null",
        '{"action": "finish", "action_input": null}',
        _fin(""),
        "react_agent: a null FINISH input is an empty answer",
    ),
    Case(
        "action_input_list",
        '{"action": "register_user", "action_input": ["Ivan", "ivan@test.com"]}',
        None,
        "react_agent: a list cannot be mapped onto named arguments",
        reason="invalid_input",
    ),
    Case(
        "object_without_action",
        '{"thought": "Нужно зарегистрировать", "action_input": {"username": "Ivan"}}',
        None,
        "react_agent: an object with arguments but no tool name",
        reason="missing_action",
    ),
    Case(
        "action_empty_string",
        '{"thought": "hmm", "action": "", "action_input": {}}',
        None,
        "react_agent: an empty action name",
        reason="missing_action",
    ),
    Case(
        "action_null",
        '{"thought": "hmm", "action": null}',
        None,
        "react_agent: a null action name",
        reason="missing_action",
    ),
    Case(
        "action_list",
        '{"action": ["register_user"], "action_input": {}}',
        None,
        "react_agent: an action name that is not a string",
        reason="invalid_action",
    ),
    Case(
        "action_string_none",
        '{"action": "None", "action_input": {}}',
        None,
        "react_agent: 'None' is not a tool",
        reason="invalid_action",
    ),
    Case(
        "text_action_fenced_json_input",
        'Thought: register him\nAction: register_user\nAction Input:\n```json\n{"username": "Ivan", "email": '
        '"ivan@test.com"}\n```\nObservation: done',
        _act("register_user", _IVAN, "register him"),
        "react_agent: a fenced JSON object as the Action Input",
        _REG,
    ),
    Case(
        "flat_arguments",
        '{"thought": "Регистрирую", "action": "register_user", "username": "Ivan", "email": "ivan@test.com"}',
        _act("register_user", _IVAN, "Регистрирую"),
        "react_agent: arguments written beside the action name instead of inside action_input",
        _REG,
    ),
    Case(
        "russian_final_answer_label",
        "Мысль: пользователь зарегистрирован\nФинальный ответ: Иван зарегистрирован.",
        _fin("Иван зарегистрирован.", "пользователь зарегистрирован"),
        "react_agent: Russian prompts make GigaChat write Russian labels",
    ),
    Case(
        "markdown_final_answer",
        "**Thought:** done\n**Final Answer:** 42",
        _fin("42"),
        "react_agent: markdown-decorated final answer label",
    ),
    Case(
        "action_in_brackets",
        "Thought: search it\nAction: [search]\nAction Input: weather in Moscow",
        _act("search", "weather in Moscow"),
        "react_agent: models copy the 'one of [tools]' brackets of the ReAct prompt",
    ),
    Case(
        "li_pr_13459_action_before_answer",
        'Thought: I need to use a tool.\nAction: search\nAction Input: {"q": "weather"}\nAnswer: It is sunny.',
        _act("search", {"q": "weather"}),
        "https://github.com/run-llama/llama_index/pull/13459 (an Action takes precedence over an invented Answer)",
    ),
    Case(
        "smol_code_blob_is_not_an_action",
        "Here is how to solve the problem:\nCode:\n```py\nimport numpy as np\n```<end_code>",
        None,
        _SMOL_UTILS + " (test_parse_code_blobs: a code agent's reply holds no JSON or text action)",
        reason="no_action",
    ),
    # ==== dialects other projects' models write ====================================================
    # ---- an answer label followed by a JSON action is that action, never a final answer -------------
    Case(
        "answer_label_json_action",
        "Answer: " + _ANSWER_JSON,
        _act("register_user", _IVAN, "Registering the user."),
        _DIALECT + " (the compact prompt labels answers 'Answer:' and the model repeats the label)",
        _REG,
    ),
    Case(
        "final_answer_label_json_action",
        "Final Answer: " + _ANSWER_JSON,
        _act("register_user", _IVAN, "Registering the user."),
        _DIALECT,
        _REG,
    ),
    Case(
        "answer_label_own_line_json_action",
        "Answer:\n" + _ANSWER_JSON,
        _act("register_user", _IVAN, "Registering the user."),
        _DIALECT + " (the label on its own line)",
        _REG,
    ),
    Case(
        "answer_label_fenced_json_action",
        "Thought: I have what I need.\nFinal Answer:\n```json\n" + _ANSWER_JSON + "\n```",
        _act("register_user", _IVAN, "Registering the user."),
        _DIALECT + " (adapted: the action in a fence after the label)",
        _REG,
    ),
    Case(
        "answer_label_cut_json_action",
        'Answer: {"thought": "Registering the user.", "action": "register_user", "action_input": {"username": "Iv',
        None,
        _DIALECT + " (adapted: cut off inside a value, so neither an answer nor a call)",
        _REG,
        reason="truncated",
    ),
    Case(
        "answer_then_json_action",
        "Final Answer: I will register him now.\n" + _ANSWER_JSON,
        None,
        _DIALECT + " (adapted: an answer that also holds an action; neither is safe to take)",
        _REG,
        reason="invalid_action",
    ),
    Case(
        "answer_label_text_action",
        "Thought: I need the weather.\nAnswer: Action: get_weather\nAction Input: Paris",
        _act("get_weather", "Paris", "I need the weather."),
        _DIALECT + " (adapted: the repeated answer label before a text-format action)",
    ),
    Case(
        "openjarvis_pr_950_json_action_not_answer",
        'Final Answer: {"thought": "I need the weather first.", "action": "get_weather", '
        '"action_input": {"city": "Paris"}}',
        _act("get_weather", {"city": "Paris"}, "I need the weather first."),
        "https://github.com/open-jarvis/OpenJarvis/pull/950 (adapted: a JSON ReAct action was taken as the final "
        "answer and no tool ran)",
    ),
    Case(
        "answer_label_structured_data",
        'Final Answer: {"city": "Paris", "country": "France"}',
        _fin('{"city": "Paris", "country": "France"}'),
        _DIALECT + " (a JSON answer that is not an action stays the answer)",
    ),
    # ---- ReAct text variants ----------------------------------------------------------------------------
    Case(
        "nemo_spaces_not_newlines",
        "Thought:not_many Action:Tool A Action Input: hello, world! Observation:",
        _act("Tool A", "hello, world!", "not_many"),
        _NEMO + " (test_output_parser_spaces_not_newlines: the whole step on one line)",
        ("Tool A", "Tool B"),
    ),
    Case(
        "nemo_glued_labels_json_input",
        'Action:CodeGenerationAction Input:{"query": "write Python code for the following:\n\t\t-\tmake a generic '
        'API call\n\t\t-\tunit tests\n", "model": "meta/llama-3.1-70b"}',
        _act(
            "CodeGeneration",
            {
                "query": "write Python code for the following:\n\t\t-\tmake a generic API call\n\t\t-\tunit tests\n",
                "model": "meta/llama-3.1-70b",
            },
        ),
        _NEMO + " (test_agent_node_parse_json_agent_action: no newline or space before the name or the input; "
        "the JSON input is decoded here)",
    ),
    Case(
        "nemo_glued_after_thought",
        'Thought: I need to call the search toolAction:SearchToolAction Input:```json{"rephrased queries": '
        '["what is NIM", "NIM definition", "NIM overview", "NIM employer", "NIM company"][]}```',
        _act(
            "SearchTool",
            '```json{"rephrased queries": ["what is NIM", "NIM definition", "NIM overview", "NIM employer", '
            '"NIM company"][]}```',
            "I need to call the search tool",
        ),
        _NEMO + " (test_agent_node_parse_markdown_json_agent_action: labels glued to the words before them; "
        "the invalid JSON stays text)",
    ),
    Case(
        "nemo_prose_action_then_final_answer",
        "Action: i have the final answer \nFinal Answer: after careful deliberation...",
        _fin("after careful deliberation..."),
        _NEMO + " (test_agent_node_parse_agent_finish_with_action: prose after 'Action:', no input, then the answer)",
    ),
    Case(
        "nemo_action_input_and_final_answer",
        "Action: give me final answer\nAction Input: None\nFinal Answer: hello, world!",
        None,
        _NEMO + " (test_agent_node_parse_agent_finish_with_action_and_input_after_max_retries: both at once)",
        reason="invalid_action",
    ),
    Case(
        "crew_issue_4186_action_none_then_answer",
        "Thought: The user only greets me, no tool can help here.\nAction: None (direct response required)\n"
        "Final Answer: Hello! How can I help you today?",
        _fin("Hello! How can I help you today?", "The user only greets me, no tool can help here."),
        "https://github.com/crewAIInc/crewAI/issues/4186 (adapted: 'Action: None' followed by the answer it meant)",
    ),
    Case(
        "lc_pr_1345_action_none_final_answer",
        "Thought: I know this without a tool.\nAction: None\nFinal Answer: 9",
        _fin("9", "I know this without a tool."),
        "https://github.com/langchain-ai/langchain/pull/1345 ('Action: None' with no Action Input, then the answer)",
    ),
    Case(
        "lc_pr_1345_input_on_the_same_line",
        'Thought: I should look it up.\nAction: search Action Input: "weather in Paris"',
        _act("search", "weather in Paris", "I should look it up."),
        "https://github.com/langchain-ai/langchain/pull/1345 (there is often no newline before Action Input)",
    ),
    Case(
        "labels_without_colons",
        'Thought\nI should search for the weather.\nAction\nsearch\nAction Input\n{"q": "weather in Paris"}',
        _act("search", {"q": "weather in Paris"}, "I should search for the weather."),
        _DIALECT + " (labels without colons, each alone on its line)",
    ),
    Case(
        "input_label_instead_of_action_input",
        "Thought: I need the weather.\nAction: get_weather\nInput: Paris",
        _act("get_weather", "Paris", "I need the weather."),
        _DIALECT + " ('Input:' instead of 'Action Input:')",
    ),
    Case(
        "li_issue_12455_inline_args_with_thought",
        'Thought: I need to use a tool to help me answer the question.\nAction: add ({"a": 2, "b": 3})',
        _act("add", {"a": 2, "b": 3}, "I need to use a tool to help me answer the question."),
        "https://github.com/run-llama/llama_index/issues/12455 (adapted: the arguments inline after the name)",
    ),
    Case(
        "inline_args_without_parentheses",
        'Thought: look it up\nAction: search {"q": "weather"}\nObservation: sunny',
        _act("search", {"q": "weather"}, "look it up"),
        _DIALECT + " (arguments inline after the name, no parentheses; the invented observation is dropped)",
    ),
    Case(
        "inline_args_cut_off",
        'Thought: register\nAction: register_user({"username": "Ivan", "email": "iv',
        None,
        _DIALECT + " (adapted: inline arguments cut off inside a value)",
        reason="truncated",
    ),
    Case(
        "li_issue_19187_action_without_thought",
        "To answer the question, I need to handoff to the research agent.\n\nAction: handoff\nAction Input: "
        '{"to_agent": "research", "reason": "**insert_any_reason_here**"}',
        _act(
            "handoff",
            {"to_agent": "research", "reason": "**insert_any_reason_here**"},
            "To answer the question, I need to handoff to the research agent.",
        ),
        "https://github.com/run-llama/llama_index/issues/19187 (LlamaIndex took it as an answer: no 'Thought:')",
    ),
    Case(
        "json_example_quoted_in_thought",
        'Thought: The format is {"action": "search", "action_input": "..."} but I need arithmetic, so I use the '
        "calculator.\nAction: calculator\nAction Input: 2+2",
        _act(
            "calculator",
            "2+2",
            'The format is {"action": "search", "action_input": "..."} but I need arithmetic, so I use the calculator.',
        ),
        _DIALECT + " (a JSON example quoted inside the thought before the real Action line: the explicit action wins)",
    ),
    Case(
        "json_example_then_observation_then_action",
        'Thought: I call it like {"action": "register_user", "action_input": {"username": "Ivan"}}\n'
        "Observation: registered\nAction: delete_user\nAction Input: Ivan",
        _act("register_user", {"username": "Ivan"}),
        _DIALECT + " (adapted: with an invented Observation between them the JSON is the first action and the "
        "later Action is a fabricated continuation)",
    ),
    # ---- DSPy-style field markers -----------------------------------------------------------------------
    Case(
        "dspy_react_tool_call",
        "[[ ## next_thought ## ]]\nI need to generate a joke about farm animals. This will require using the joke "
        "creation tool to get a suitable joke on that topic.\n\n[[ ## next_tool_name ## ]]\njoke_creation_tool\n\n"
        '[[ ## next_tool_args ## ]]\n{"topic":"farm animal"}\n\n[[ ## completed ## ]]',
        _act(
            "joke_creation_tool",
            {"topic": "farm animal"},
            "I need to generate a joke about farm animals. This will require using the joke creation tool to get a "
            "suitable joke on that topic.",
        ),
        _DSPY_STREAMING,
    ),
    Case(
        "dspy_react_finish",
        "[[ ## next_thought ## ]]\nI have generated a joke about a farm animal. Now I can finish the task as I have "
        "all the information needed.\n\n[[ ## next_tool_name ## ]]\nfinish\n\n[[ ## next_tool_args ## ]]\n{}\n\n"
        "[[ ## completed ## ]]",
        _fin(
            "",
            "I have generated a joke about a farm animal. Now I can finish the task as I have all the information "
            "needed.",
        ),
        _DSPY_STREAMING + " (the 'finish' tool is FINISH; its empty arguments are an empty answer)",
    ),
    Case(
        "dspy_reasoning_and_answer",
        "[[ ## reasoning ## ]]\nThe lookup says Paris.\n[[ ## answer ## ]]\nParis",
        _fin("Paris", "The lookup says Paris."),
        "https://github.com/stanfordnlp/dspy/blob/main/dspy/adapters/chat_adapter.py (adapted: a ChainOfThought "
        "reply, reasoning then answer fields)",
    ),
    Case(
        "dspy_args_cut_off",
        "[[ ## next_thought ## ]]\nSearch it.\n\n[[ ## next_tool_name ## ]]\nsearch\n\n[[ ## next_tool_args ## ]]\n"
        '{"query": "farm anim',
        None,
        _DSPY_STREAMING + " (adapted: cut off inside the arguments)",
        reason="truncated",
    ),
    Case(
        "dspy_fabricated_second_step",
        "[[ ## next_thought ## ]]\nLook it up.\n[[ ## next_tool_name ## ]]\nsearch\n[[ ## next_tool_args ## ]]\n"
        '{"query": "capital of France"}\n[[ ## observation ## ]]\nParis\n[[ ## next_tool_name ## ]]\ndelete_all\n'
        "[[ ## next_tool_args ## ]]\n{}",
        _act("search", {"query": "capital of France"}, "Look it up."),
        _DSPY_STREAMING + " (adapted: an invented observation and a second call after the first are dropped)",
    ),
    # ---- XML tool calls ---------------------------------------------------------------------------------
    Case(
        "hermes_pr_742_tool_call_tags",
        '<tool_call>\n{"name": "terminal", "arguments": {"command": "ls -la"}}\n</tool_call>',
        _act("terminal", {"command": "ls -la"}),
        "https://github.com/NousResearch/hermes-agent/pull/742 (Hermes models write the call as text in tags)",
    ),
    Case(
        "hermes_pr_742_missing_open_tag",
        'I will list the files.</think>{"name": "terminal", "arguments": {"command": "ls -la"}}</tool_call>',
        _act("terminal", {"command": "ls -la"}),
        "https://github.com/NousResearch/hermes-agent/pull/742 ('</think>{...}</tool_call>': the open tags are "
        "missing)",
    ),
    Case(
        "tool_call_tags_name_only",
        '<tool_call>\n{"name": "get_current_time"}\n</tool_call>',
        _act("get_current_time", {}),
        "https://github.com/NousResearch/hermes-agent/pull/14601 (adapted: inside <tool_call> a name alone is a "
        "call without arguments, known tool or not)",
    ),
    Case(
        "tool_call_tags_cut_off",
        '<tool_call>\n{"name": "terminal", "arguments": {"command": "rm -rf /tmp/bu',
        None,
        "https://github.com/NousResearch/hermes-agent/pull/14601 (adapted: cut off inside the arguments)",
        reason="truncated",
    ),
    Case(
        "hermes_pr_7332_invoke_parameters",
        '<invoke name="send_message">\n  <parameter name="target">telegram:123</parameter>\n  '
        '<parameter name="message">hello</parameter>\n</invoke>',
        _act("send_message", {"target": "telegram:123", "message": "hello"}),
        "https://github.com/NousResearch/hermes-agent/pull/7332 (MiniMax and Kimi write Anthropic-style XML)",
    ),
    Case(
        "kdeps_pr_810_function_calls_typed_values",
        'Let me read it.\n<function_calls>\n<invoke name="read_file">\n<parameter name="path">main.go</parameter>\n'
        '<parameter name="start_line">3</parameter>\n<parameter name="follow">true</parameter>\n</invoke>\n'
        "</function_calls>",
        _act("read_file", {"path": "main.go", "start_line": 3, "follow": True}, "Let me read it."),
        "https://github.com/kdeps/kdeps/pull/810 (the <function_calls> wrapper; scalar values keep their JSON type)",
    ),
    Case(
        "vellum_pr_42234_invoke_json_value",
        '<tool_calls>\n<invoke name="create_rows">\n<parameter name="rows">[{"a": 1}, {"a": 2}]</parameter>\n'
        "</invoke>\n</tool_calls>",
        _act("create_rows", {"rows": [{"a": 1}, {"a": 2}]}),
        "https://github.com/vellum-ai/vellum-assistant/pull/42234 (adapted: DeepSeek writes <invoke> as text; a "
        "JSON parameter value is decoded)",
    ),
    Case(
        "hermes_pr_7628_qwen3_coder_function_tag",
        "<tool_call>\n<function=read_file>\n<parameter=target_file>\nmain.py\n</parameter>\n</function>\n</tool_call>",
        _act("read_file", {"target_file": "main.py"}),
        "https://github.com/NousResearch/hermes-agent/pull/7628 (Qwen3-Coder's <function=…> form)",
    ),
    Case(
        "invoke_cut_off_inside_parameter",
        '<function_calls>\n<invoke name="send_message">\n<parameter name="target">telegram:1',
        None,
        "https://github.com/NousResearch/hermes-agent/pull/7332 (adapted: cut off inside a parameter value)",
        reason="truncated",
    ),
    Case(
        "q27_issue_24_name_as_parameter",
        "<parameter=bash>\n<parameter=command>\nls /code/docs\n</parameter>\n</function>",
        None,
        "https://github.com/signalnine/q27/issues/24 (the tool name written as an unclosed first parameter: "
        "no call to recover)",
    ),
    Case(
        "hermes_issue_11994_pseudo_json",
        '[TOOL_CALL]\n{tool => "skills_list", args => {\n  --category "research"\n}}\n[/TOOL_CALL]',
        None,
        "https://github.com/NousResearch/hermes-agent/issues/11994 (neither JSON nor a known call form)",
    ),
    # ---- wrapper objects --------------------------------------------------------------------------------
    Case(
        "tool_call_wrapper_object",
        'I\'ll check the weather for you.\n{"tool_call": {"name": "get_weather", "arguments": {"city": "London"}}}',
        _act("get_weather", {"city": "London"}, "I'll check the weather for you."),
        _DIALECT + ' (the {"tool_call": {...}} wrapper)',
    ),
    Case(
        "ollama_prompt_tools_wrapper",
        'Here\'s my response:\n{\n    "tools": {\n        "tool": "get_weather",\n        "tool_input": {\n'
        '        "city_name": "Shenyang"\n        }\n    }\n}\n',
        _act("get_weather", {"city_name": "Shenyang"}, "Here's my response:"),
        "https://github.com/zideajang/func_calling_ollama/blob/main/prompt.md (a reply quoted there)",
    ),
    Case(
        "autogpt_command_and_thoughts",
        '{"thoughts": {"text": "I should search for the population first.", "reasoning": "The task needs it.", '
        '"plan": "- search\\n- answer", "criticism": "Be brief.", "speak": "Searching."}, '
        '"command": {"name": "google", "args": {"input": "population of Paris"}}}',
        _act("google", {"input": "population of Paris"}, "I should search for the population first."),
        _AUTOGPT + " (DEFAULT_RESPONSE_FORMAT, credited to Auto-GPT, filled in)",
    ),
    Case(
        "autogpt_finish_command",
        '{"thoughts": {"text": "All goals are met."}, "command": {"name": "finish", "args": {"response": '
        '"The report is saved."}}}',
        _fin("The report is saved.", "All goals are met."),
        _AUTOGPT + " (adapted: the finish command ends the run with its response)",
    ),
    Case(
        "bare_name_of_known_tool",
        '{"name": "get_current_time"}',
        _act("get_current_time", {}),
        "https://github.com/NousResearch/hermes-agent/pull/742 (bare JSON calls, accepted only for known tools)",
        ("get_current_time",),
    ),
    Case(
        "bare_name_of_unknown_tool",
        '{"name": "get_current_time"}',
        None,
        "https://github.com/NousResearch/hermes-agent/pull/742 (adapted: without that tool it is data, not a call)",
        reason="missing_action",
    ),
    Case(
        "hermes_issue_107125_bare_name_arguments",
        '{"name": "terminal", "arguments": {"command": "echo hello"}}',
        _act("terminal", {"command": "echo hello"}),
        "https://github.com/NousResearch/hermes-agent/issues/107125 (qwen2.5 through Ollama: bare JSON in content)",
    ),
    Case("empty_text", "", None, "react_agent: an empty reply", reason="empty"),
    Case("whitespace_text", "  \n\t ", None, "react_agent: a blank reply", reason="empty"),
    Case(
        "plain_prose_default",
        "The capital of France is Paris.",
        None,
        "react_agent: plain prose is not a FINISH unless allow_plain_answer=True",
        reason="no_action",
    ),
]
