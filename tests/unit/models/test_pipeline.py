"""The embedded model's decoding pipeline, without the model: a stand-in llama (or a scripted completion function)
gives the completions, the real grammar converter compiles every schema."""

from __future__ import annotations

import json
import shutil
import threading
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from completions import Script, Writer
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from react_agent import ConfigError, ReactAgent, RunState
from react_agent._types import FINISH, AgentStep, CallContext, ToolInfo
from react_agent.models import LocalChatModel
from react_agent.models.local import _model
from react_agent.models.local._pipeline import (
    DEFAULT_TECHNIQUES,
    FORMAT_PATTERNS,
    OPT_IN_TECHNIQUES,
    PIPELINE,
    REMOVED_TECHNIQUES,
    after_decoding,
    bounded_integers,
    context_addresses,
    email_arguments,
    email_described,
    select,
    unique_items,
    with_format_patterns,
)
from react_agent.models.local._staged import (
    CUT_RETRY_TOKENS,
    FINISH_VOTE,
    FINISH_VOTE_AFTER_RESULT,
    VOTE_PREFIX,
    answered,
    bounded_values,
    decoded_answer,
    finished,
    prepared,
)
from react_agent.testing import ScriptedChatModel
from react_agent.tools import answer_schema

ROOT = Path(__file__).resolve().parents[3]


def book_meeting(title: str, attendees: list[str], duration_minutes: int, contact: str) -> str:
    """Book a meeting in the calendar."""
    return "booked"


BOOK = StructuredTool.from_function(book_meeting)


class FakeLlama:
    """A stand-in for ``llama_cpp.Llama``: scripted completion texts; records each call's options. A one-token
    completion with a ``logits_processor`` (the finish vote) shows it ``logits`` (one a byte, 0 unless given) and
    takes no scripted text."""

    def __init__(self, *texts: str, cut: tuple[int, ...] = (), logits: dict[str, float] | None = None) -> None:
        self.metadata: dict[str, str] = {}
        self.texts, self.cut, self.calls = list(texts), cut, []  # type: list[dict[str, Any]]
        self.logits = [0.0] * 256
        for char, value in (logits or {}).items():
            self.logits[ord(char)] = value
        self.votes: list[str] = []
        self.input_ids: list[int] = []
        self.n_tokens = 0

    def token_bos(self) -> int:
        return -1

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return list(text)  # one token a byte: the prompt is read back from its tokens

    def longest_token_prefix(self, a: list[int], b: list[int]) -> int:
        return 0

    def create_completion(self, prompt: str | list[int], **options: Any) -> dict[str, Any]:
        text = prompt if isinstance(prompt, str) else bytes(prompt).decode("utf-8")
        if options.get("logits_processor"):
            assert options["max_tokens"] == 1
            self.votes.append(text)
            for processor in options["logits_processor"]:
                processor(list(prompt), list(self.logits))
            return {"choices": [{"text": "", "finish_reason": "length"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 1}}
        self.calls.append({"prompt": text, **options})
        finish = "length" if len(self.calls) - 1 in self.cut else "stop"
        return {"choices": [{"text": self.texts.pop(0), "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5}}


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch) -> Any:
    def install(*texts: str, cut: tuple[int, ...] = (), logits: dict[str, float] | None = None) -> FakeLlama:
        llama = FakeLlama(*texts, cut=cut, logits=logits)
        monkeypatch.setattr(LocalChatModel, "_client", lambda self: (llama, threading.Lock()))
        return llama
    return install


@pytest.fixture
def grammars(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The answer schemas the embedded model builds its grammars from, in order (the real builder still runs)."""
    built: list[str] = []
    real = _model._grammar_for
    monkeypatch.setattr(_model, "_grammar_for", lambda schema, suffix="": built.append(schema) or real(schema, suffix))
    return built


# --------------------------------------------------------------------------- options
def test_every_technique_has_one_declared_stage_and_the_default_is_all_but_the_opt_in_ones() -> None:
    assert [t.name for t in PIPELINE if t.name not in OPT_IN_TECHNIQUES] == list(DEFAULT_TECHNIQUES) \
        == list(LocalChatModel().techniques)
    assert sorted(OPT_IN_TECHNIQUES) == ["fit_check"]
    order = ["before_decoding", "grammar", "after_decoding"]
    assert [order.index(t.stage) for t in PIPELINE] == sorted(order.index(t.stage) for t in PIPELINE)


def test_techniques_run_in_pipeline_order_whatever_order_they_are_named_in() -> None:
    assert LocalChatModel(techniques=["unique_items", "two_stage"]).techniques == ("two_stage", "unique_items")
    assert LocalChatModel(techniques=[]).techniques == ()


@pytest.mark.parametrize(("value", "says"), [
    ("two_stage", "list of technique names"), (["grounding"], "was removed"), (["speedy"], "unknown technique"),
    ([3], "give names"), (["two_stage", "two_stage"], "named twice"), (None, "list of technique names"),
])
def test_a_bad_techniques_option_is_a_config_error_naming_the_valid_ones(value: Any, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        LocalChatModel(techniques=value)
    if says != "named twice":
        assert "two_stage" in str(caught.value) and "unique_items" in str(caught.value)


@pytest.mark.parametrize("flag", sorted(REMOVED_TECHNIQUES | {"two_stage", "format_patterns", "retry_cut"}))
def test_the_removed_on_off_flags_are_rejected_with_a_pointer_to_techniques(flag: str) -> None:
    with pytest.raises(ConfigError, match=r"removed.*techniques=\["):
        LocalChatModel(**{flag: True})


# --------------------------------------------------------------------------- grammar
def test_format_patterns_come_only_from_a_format_the_schema_declares() -> None:
    schema = {"type": "object", "properties": {
        "email": {"type": "string"}, "to": {"type": "string", "format": "email"},
        "day": {"type": "string", "format": "date"}, "kind": {"type": "string", "format": "email", "enum": ["a@b.c"]},
        "when": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]}}}
    props = with_format_patterns(schema)["properties"]
    assert "pattern" not in props["email"]  # a name says nothing: "email" may hold "Иван Петров <ivan@mail.ru>"
    assert props["to"]["pattern"].startswith("^") and "pattern" not in props["kind"]
    assert props["day"]["pattern"] == r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    assert "pattern" in props["when"]["anyOf"][0]
    _model._grammar_for(json.dumps(with_format_patterns(schema)))  # llama.cpp compiles every pattern


def test_declared_addresses_are_the_ones_the_context_writes_spelled_as_written() -> None:
    schema = {"type": "object", "properties": {"to": {"type": "string", "format": "email"},
                                               "site": {"type": "string", "format": "uri"},
                                               "who": {"type": "string"}}}
    text = "Напиши Ольге на Olga.K@Mail.ru (копия: boss@firm.io.) про https://firm.io/q3."
    props = context_addresses(schema, text)["properties"]
    assert props["to"]["enum"] == ["Olga.K@Mail.ru", "boss@firm.io"] and props["site"]["enum"] == ["https://firm.io/q3"]
    assert "enum" not in props["who"]
    assert context_addresses(schema, "no address here") == schema
    _model._grammar_for(json.dumps(context_addresses(schema, text)))


@pytest.mark.parametrize(("name", "description"), [
    ("to", "Recipient's email address"), ("to", "Email получателя"), ("x", "Адрес электронной почты"),
    ("x", "Email того, кому открыть доступ"), ("x", "Email of the person to share with"), ("x", "Customer email"),
    ("x", "The e-mail address of the user."), ("x", "Электронная почта клиента"), ("email", ""), ("to_email", ""),
    ("userEmail", ""), ("email_address", ""), ("emailAddress", ""),
])
def test_an_argument_named_or_described_as_one_email_address_is_found(name: str, description: str) -> None:
    assert email_described(name, {"type": "string", "description": description})


@pytest.mark.parametrize(("name", "description"), [
    ("subject", "Subject of the email"), ("x", "Email subject"), ("x", "Email body text"), ("x", "Body of email"),
    ("x", "Unread emails only"), ("x", "Recipient emails"), ("query", "What to look for: a name, company or email"),
    ("x", "Email or phone"), ("x", "Email или телефон"), ("x", "Тема email"), ("x", "Текст письма"),
    ("x", "Почтовый индекс"), ("email_subject", ""), ("email_body", ""), ("emails", ""), ("to", "Recipient"),
])
def test_an_argument_that_only_mentions_email_is_not_taken_for_an_address(name: str, description: str) -> None:
    assert not email_described(name, {"type": "string", "description": description})


def test_an_argument_described_as_an_email_address_gets_the_email_format_from_the_tools_spec() -> None:
    """The schema a grammar is built from may carry no descriptions: the tool's spec supplies them."""
    spec = {"type": "object", "properties": {
        "to": {"type": "string", "description": "Email получателя"}, "subject": {"type": "string"},
        "backup": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Spare email address"},
        "fixed": {"type": "string", "description": "Email", "enum": ["a@b.io"]}}}
    bare = {"type": "object", "properties": {name: {k: v for k, v in sub.items() if k != "description"}
                                             for name, sub in spec["properties"].items()}}
    schema = {"anyOf": [{"type": "object", "properties": {"action": {"const": "send"}, "action_input": bare}}]}
    tools = (ToolInfo(name="send", parameters=spec),)
    props = email_arguments(schema, "Напиши Ольге", tools)["anyOf"][0]["properties"]["action_input"]["properties"]
    assert props["to"] == {"type": "string", "format": "email"}
    assert props["backup"]["anyOf"] == [{"type": "string", "format": "email"}, {"type": "null"}]
    assert props["subject"] == {"type": "string"} and props["fixed"] == bare["properties"]["fixed"]
    assert email_arguments(spec, "")["properties"]["to"]["format"] == "email"  # a plain schema: its own descriptions
    assert email_arguments(schema, "Напиши Ольге") == schema  # no spec, no description: nothing to go by
    model = LocalChatModel()
    decoded = model.decoding_schema(schema, CallContext(task="Напиши Ольге", tools=tools))
    to = decoded["anyOf"][0]["properties"]["action_input"]["properties"]["to"]
    assert to["pattern"] == FORMAT_PATTERNS["email"]  # format_patterns runs after it
    assert model.decoding_schema(schema, CallContext(task="Напиши Ольге на olga@firm.io", tools=tools))[
        "anyOf"][0]["properties"]["action_input"]["properties"]["to"]["enum"] == ["olga@firm.io"]
    _model._grammar_for(json.dumps(decoded))


def test_an_at_word_the_email_pattern_cannot_admit_leaves_every_argument_free() -> None:
    """What the user wrote is copied as written, even when it is no address the pattern admits."""
    schema = {"type": "object", "properties": {"email": {"type": "string"}}}
    assert email_arguments(schema, "Set the email to example@.com") == schema
    assert email_arguments(schema, "Пиши на @ivan в телеграме") == schema
    assert email_arguments(schema, "Set it to 'john@site.org'")["properties"]["email"]["format"] == "email"


def test_a_declared_address_is_read_without_the_quotes_around_it() -> None:
    schema = {"type": "object", "properties": {"to": {"type": "string", "format": "email"}}}
    props = context_addresses(schema, "Update 'email':'johndoe@email.com' and `a.b@c.io`")["properties"]
    assert props["to"]["enum"] == ["johndoe@email.com", "a.b@c.io"]


def test_bounded_integers_enumerate_small_ranges_only() -> None:
    small = bounded_integers({"type": "integer", "minimum": 1, "exclusiveMaximum": 4})
    assert small["enum"] == [1, 2, 3]
    assert "enum" not in bounded_integers({"type": "integer", "minimum": 0, "maximum": 10_000})
    assert "enum" not in bounded_integers({"type": "integer", "minimum": 1})


# --------------------------------------------------------------------------- decoding
def test_two_stages_decide_the_tool_then_its_arguments_under_its_own_schema() -> None:
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema([BOOK]), CallContext(task="t"))
    args = '{"title": "Sync", "attendees": ["Ann"], "duration_minutes": 30, "contact": "ann@x.org"}}'
    script = Script('{"thought": "book it", "action": "book_meeting", ', args)
    text = decoded_answer(script, "PROMPT", step, CallContext(task="t"))
    assert json.loads(text)["action_input"]["title"] == "Sync"
    (_, first, _, stop, _), (prompt, second, suffix, _, _) = script.calls
    assert stop == ['"action_input"'] and "anyOf" in first
    assert prompt.endswith('"action_input":') and suffix == "}" and set(second["properties"]) == {
        "title", "attendees", "duration_minutes", "contact"}


def test_bare_arguments_decode_a_calls_arguments_after_the_action_alone_and_keep_the_thought() -> None:
    context = CallContext(task="Book a sync with Ann for 30 minutes")
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema([BOOK]), context)
    args = '{"title": "Sync", "attendees": ["Ann"], "duration_minutes": 30, "contact": "ann@x.org"}}'
    script = Script('{"thought": "I book it", "action": "book_meeting", ', args)
    text = decoded_answer(script, "PROMPT", step, context)
    assert json.loads(text) == {"thought": "I book it", "action": "book_meeting", "action_input": {
        "title": "Sync", "attendees": ["Ann"], "duration_minutes": 30, "contact": "ann@x.org"}}
    assert script.calls[1][0] == 'PROMPT{"action": "book_meeting", "action_input":'
    assert json.loads(script.calls[1][0].removeprefix("PROMPT") + ' {}}') == {"action": "book_meeting",
                                                                               "action_input": {}}


def test_a_finish_text_and_a_call_without_bare_arguments_are_decoded_after_the_thought() -> None:
    context = CallContext(task="What is 17 * 23?", observations=("391",))
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema([BOOK]), context)
    head = '{"thought": "The result is 391", "action": "FINISH", '
    script = Script(head, ' "391"}')
    assert json.loads(decoded_answer(script, "P", step, context))["action_input"] == "391"
    assert script.calls[1][0] == "P" + head + '"action_input":'
    off = prepared(select([t for t in DEFAULT_TECHNIQUES if t != "bare_arguments"]), answer_schema([BOOK]), context)
    head = '{"thought": "I book it", "action": "book_meeting", '
    script = Script(head, '{"title": "Sync", "attendees": [], "duration_minutes": 30, "contact": "a@x.org"}}')
    decoded_answer(script, "P", off, context)
    assert script.calls[1][0] == "P" + head + '"action_input":'


def test_arguments_cut_by_the_budget_are_decoded_again_with_bounded_values() -> None:
    context = CallContext(task="Забронируй встречу «Планёрка» на 45 минут с Олегом")
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema([BOOK]), context)
    runaway = '{"title": "Планёрка", "attendees": ["Олег"], "duration_minutes": 4500000000000'
    whole = '{"title": "Планёрка", "attendees": ["Олег"], "duration_minutes": 45, "contact": "o@x.ru"}}'
    script = Script('{"thought": "t", "action": "book_meeting", ', runaway, whole)
    text = decoded_answer(script, "PROMPT", step, context)
    assert json.loads(text)["action_input"]["duration_minutes"] == 45
    _, retry, _, _, reserve = script.calls[-1]
    assert retry["properties"]["duration_minutes"] == {"enum": [45]} and reserve == CUT_RETRY_TOKENS
    assert retry["properties"]["title"]["maxLength"] <= 80


def test_a_cut_that_stays_cut_is_returned_as_it_is_and_a_cut_finish_text_is_closed() -> None:
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema([BOOK]), CallContext())
    runaway = '{"title": "aaaaaaaa'
    text = decoded_answer(Script('{"thought": "t", "action": "book_meeting", ', runaway, runaway), "P", step,
                          CallContext())
    assert text.endswith(runaway)
    finish = decoded_answer(Script('{"thought": "t", "action": "FINISH", ', '"Готово, я не \\'), "P", step,
                            CallContext())
    assert json.loads(finish) == {"thought": "t", "action": FINISH, "action_input": "Готово, я не "}


def test_bounded_values_leave_enums_patterns_and_booleans_alone() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "enum": ["x"]}, "b": {"type": "boolean"},
                                               "c": {"type": "string", "pattern": "^x$"}}}
    assert bounded_values(schema, "12 и 13") == schema


def wait(seconds: int, reason: str) -> str:
    """Wait a while."""
    return "waited"


def ping(host: str = "localhost") -> str:
    """Ping a host."""
    return "pong"


def weather(город: str) -> str:  # a tool whose argument name is not ASCII
    """Погода в городе."""
    return "ясно"


WRITTEN = [
    {"thought": "I book it", "action": "book_meeting", "action_input": {
        "title": "Sync", "attendees": ["Ann"], "duration_minutes": 30, "contact": "ann@x.org"}},
    {"thought": "", "action": "wait", "action_input": {"seconds": 5, "reason": "the \"slow\" queue"}},
    {"thought": 'He said "stop"\\ and left', "action": "ping", "action_input": {"host": "db"}},
    {"thought": "no host", "action": "ping", "action_input": {}},
    {"thought": "Москва", "action": "weather", "action_input": {"город": "Москва"}},
    {"thought": "Готово", "action": FINISH, "action_input": "Встреча \"Sync\" назначена"},
]


@pytest.mark.parametrize("answer", WRITTEN, ids=lambda a: a["action"] + ("-empty" if not a["action_input"] else ""))
def test_an_answer_decoded_with_its_shared_text_written_is_the_answer_decoded_whole(answer: dict[str, Any]) -> None:
    tools = [BOOK, StructuredTool.from_function(wait), StructuredTool.from_function(ping),
             StructuredTool.from_function(weather)]
    context = CallContext(task="t")
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema(tools), context)
    text = json.dumps(answer, ensure_ascii=False)
    writer = Writer("PROMPT", text)
    assert json.loads(decoded_answer(writer, "PROMPT", step, context)) == answer
    decoded = "".join(piece for _, _, piece in writer.calls)
    assert '"thought"' not in decoded and '"action"' not in decoded  # the keys were written, not decoded
    begun = [written for _, written, _ in writer.calls]
    quotes = answer["thought"].count('"')  # each escaped quote ends a completion of the thought early
    assert begun[0] == '{"thought": "' and begun[quotes + 1].endswith('", "action": "')
    args = writer.calls[-1][1]
    expected = {"book_meeting": ' {"title":', "wait": ' {"seconds":', "ping": "", "weather": "", FINISH: ""}
    assert args == expected[answer["action"]]  # no required key, or one the grammar escapes: nothing written


def test_the_only_action_left_to_choose_is_written_with_the_keys() -> None:
    context = CallContext(task="t")
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema([]), context)  # FINISH alone, as after its vote
    answer = {"thought": "Готово", "action": FINISH, "action_input": "Да"}
    writer = Writer("P", json.dumps(answer, ensure_ascii=False))
    assert json.loads(decoded_answer(writer, "P", step, context)) == answer
    assert [text for _, _, text in writer.calls] == ["Готово", ' "Да"}']


def test_a_thought_cut_by_the_budget_is_returned_cut() -> None:
    context = CallContext(task="t")
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema([BOOK]), context)
    answer = json.dumps({"thought": "x" * 50, "action": "book_meeting", "action_input": {}})
    text = decoded_answer(Writer("P", answer, budget=20), "P", step, context)
    assert text == '{"thought": "' + "x" * 20


def test_a_thought_that_keeps_writing_escaped_quotes_stops_at_the_token_budget(monkeypatch: Any) -> None:
    """A degenerate thought (``\\"`` again and again, each ending a completion at its quote) ends once the answer's
    budget is spent, as a cut answer: it does not go on a token a time until the context window is full."""
    made: list[int] = []

    def quote_after_quote(llama: Any, prompt: str, **options: Any) -> tuple[dict[str, Any], Any]:
        assert len(made) < 50, "the completions go on past the budget"
        made.append(options["max_tokens"])
        choice = {"text": "\\", "finish_reason": "stop"}  # one token, '\\"', stopped at its quote
        return {"choices": [choice], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}, _model.PrefixUse()

    monkeypatch.setattr(_model, "complete", quote_after_quote)
    monkeypatch.setattr(_model, "can_begin", lambda llama, options: True)
    calls = _model._Calls(object(), {}, max_tokens=5)
    context = CallContext(task="t")
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema([BOOK]), context)
    text = decoded_answer(calls, "P", replace(step, finish_vote=False), context)
    assert text.startswith('{"thought": "\\"') and '"action"' not in text
    assert len(made) == 6 and made[-1] == 1  # five within the budget, then one made after it: cut
    assert calls.cut and calls.finish == "length"


def _nested(kind: str, depth: int) -> Any:
    value: Any = "Москве"
    for _ in range(depth):
        value = {"q": value} if kind == "object" else [value]
    return value


@pytest.mark.parametrize("kind", ["object", "list"])
def test_a_call_nested_deeper_than_the_stack_passes_the_after_decoding_stage_unchanged(kind: str) -> None:
    """A degenerate reply may nest a free-form argument as deep as its token budget allows; the value techniques
    leave what lies below their depth as it is instead of exhausting the stack."""
    schema = {"type": "object", "properties": {"q": {"type": "object" if kind == "object" else "array"},
                                               "minutes": {"type": "integer", "description": "duration in minutes"}},
              "required": ["q"]}
    context = CallContext(task="Встреча в Москве на полчаса 2026-03-01", observations=("today is 2026-03-10",),
                          tools=(ToolInfo(name="f", parameters=schema),))
    call = {"thought": "t", "action": "f", "action_input": {"q": _nested(kind, 5000)}}
    assert after_decoding(select(DEFAULT_TECHNIQUES), call, context) == call
    text = '{"thought": "t", "action": "f", "action_input": {"q": ' + '{"q": ' * 5000 + "1" + "}" * 5002
    assert finished(select(DEFAULT_TECHNIQUES), text, context) == text  # no JSON Python reads: left to the parser


class Refusing(Writer):
    """A writer whose grammar does not read written text (``ValueError``, as llama.cpp's check says)."""

    def __call__(self, prompt: str, schema: Any, **options: Any) -> str:
        if options.get("begun"):
            raise ValueError("the grammar does not allow token 7 of the text it is to read first")
        return super().__call__(prompt, schema, **options)


def test_written_text_the_grammar_refuses_leaves_the_answer_decoded_whole() -> None:
    context = CallContext(task="t")
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema([BOOK]), context)
    answer = WRITTEN[0]
    writer = Refusing("PROMPT", json.dumps(answer))
    assert json.loads(decoded_answer(writer, "PROMPT", step, context)) == answer
    assert all(not begun for _, begun, _ in writer.calls)


def test_an_answer_start_is_written_only_on_greedy_decoding_of_a_real_llama(fake_llama: Any) -> None:
    from react_agent.models.local._prefix import can_begin, complete

    llama = fake_llama("x")
    assert not can_begin(llama, {"temperature": 0.0})  # a stand-in: no saved states, no grammar of llama.cpp
    with pytest.raises(ValueError, match="greedy decoding"):
        complete(llama, 'P{"thought": "', grammar='root ::= "a"', begun='{"thought": "', temperature=0.0)


# --------------------------------------------------------------------------- after decoding
def test_unique_items_drop_a_repeated_string_unless_the_task_repeats_it() -> None:
    assert unique_items({"tags": ["bug", "ui", "ui", "ui"]}, "tag it bug and ui") == {"tags": ["bug", "ui"]}
    assert unique_items({"cities": ["Рим", "Рим"]}, "Рим, потом Париж, потом снова Рим") == {"cities": ["Рим", "Рим"]}
    assert unique_items({"size": [16, 16], "flags": [True, True]}, "16x16") == {"size": [16, 16], "flags": [True, True]}


RUSSIAN_CALLS = [
    ("Создай сделку с компанией «Ромашка» на пятнадцать тысяч рублей",
     {"company": "Ромашка", "amount": 15000, "currency": "RUB"}),
    ("Найди клиента Иванова в Москве", {"last_name": "Иванов", "city": "Москва"}),
    ("Назначь задачу Ивану Петрову со скидкой 12 процентов", {"assignee": "Иван Петров", "discount": 0.12}),
    ("Отправь письмо Марии: «встреча переносится»", {"to": "Мария", "body": "встреча переносится",
                                                     "tags": ["встреча", "перенос"]}),
    ("Поставь напоминание на двадцать первое марта в девять утра", {"date": "2025-03-21", "time": "09:00"}),
]


@pytest.mark.parametrize(("task", "args"), RUSSIAN_CALLS)
def test_correct_russian_calls_pass_through_unchanged(task: str, args: dict[str, Any]) -> None:
    answer = {"thought": "", "action": "crm_call", "action_input": args}
    assert LocalChatModel().after_decoding(answer, CallContext(task=task)) == answer


# --------------------------------------------------------------------------- the model with a stand-in llama
def test_the_agent_hands_task_observations_and_tools_explicitly_even_with_a_custom_prompt(
        tmp_path: Path, fake_llama: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A prompt set copied with other wording (no "Now your turn", no "Task:"): the model still gets the task,
    the observations and the tools, and the techniques act (the cut value is retried among the task's numbers)."""
    folder = tmp_path / "mine"
    shutil.copytree(ROOT / "prompts" / "en", folder)
    step = folder / "step.jinja"
    step.write_text(step.read_text(encoding="utf-8").replace("**Task**:", "What you are asked:")
                    .replace("Task: {{ e.task }}", "Asked: {{ e.task }}"), encoding="utf-8")
    assert "Task" not in step.read_text(encoding="utf-8")
    seen: list[CallContext] = []
    real = _model.answered

    def spy(complete: Any, prompt: str, step_: Any, context: CallContext, techniques: Any, **options: Any) -> str:
        seen.append(context)
        return real(complete, prompt, step_, context, techniques, **options)

    monkeypatch.setattr(_model, "answered", spy)
    llama = fake_llama('{"thought": "t", "action": "book_meeting", ',
                       '{"title": "Standup", "attendees": ["Bo"], "duration_minutes": 150000000',
                       '{"title": "Standup", "attendees": ["Bo"], "duration_minutes": 15, "contact": "b@x.io"}}',
                       '{"thought": "done", "action": "FINISH", ', ' "Booked."}', cut=(1,))
    task = "Book a 15 minute Standup with Bo (b@x.io)"
    agent = ReactAgent(LocalChatModel(), [BOOK], prompts=str(folder), max_iterations=3)
    result = agent.run(task)
    assert result.status == "finished" and result.output == "Booked."
    assert result.steps[0].action_input["duration_minutes"] == 15
    assert seen[0].task == task and [t.name for t in seen[0].tools] == ["book_meeting"]
    assert seen[0].tools[0].parameters["properties"]["duration_minutes"]["type"] == "integer"
    assert seen[1].observations == ("booked",)
    assert llama.calls[2]["max_tokens"] >= CUT_RETRY_TOKENS


def test_models_that_do_not_declare_it_never_see_the_call_context() -> None:
    model = ScriptedChatModel(['{"thought": "t", "action": "FINISH", "action_input": "ok"}'])
    ReactAgent(model, [BOOK]).run("hi")
    assert "react_agent_call" not in model.calls[0].kwargs


class _ReadsContext(ScriptedChatModel):
    accepts_call_context: ClassVar[bool] = True


def test_a_decision_carries_a_call_context_only_for_a_model_that_reads_it() -> None:
    """The context is built per decision only when the model declares it reads it; the prompt is the same."""
    reply = '{"thought": "t", "action": "FINISH", "action_input": "ok"}'
    plain, reading = ReactAgent(ScriptedChatModel([reply]), [BOOK]), ReactAgent(_ReadsContext([reply]), [BOOK])
    state = RunState("book a meeting")
    state.steps.append(AgentStep(thought="t", action="book_meeting", action_input={"duration_minutes": 15},
                                 observation="booked"))
    assert (plain.reads_call_context, reading.reads_call_context) == (False, True)
    assert plain.decision_call(state).context is None
    assert reading.decision_call(state).context == reading.call_context(state)
    assert reading.call_context(state).observations == ("booked",)
    assert plain.decision_call(state).messages == reading.decision_call(state).messages
    assert plain.run("hi").output == reading.run("hi").output == "ok"
    assert "react_agent_call" in reading.llm.calls[0].kwargs


def test_a_direct_call_without_context_works_and_a_wrong_context_is_a_type_error(fake_llama: Any) -> None:
    fake_llama('{"thought": "t", "action": "FINISH", ', ' "hi"}')
    agent = ReactAgent(ScriptedChatModel([]), [BOOK])
    reply = LocalChatModel().invoke(agent.build_messages(RunState("x")),
                                    response_format=ReactAgent(LocalChatModel(), [BOOK]).response_format)
    assert json.loads(str(reply.content))["action"] == FINISH
    with pytest.raises(TypeError, match="CallContext"):
        LocalChatModel().invoke("x", react_agent_call={"task": "x"})


def test_an_invented_call_is_decided_again_after_a_note_in_the_tasks_language(fake_llama: Any) -> None:
    """The model writes a deal id nothing gives: the call is not run; the model sees its answer and a note of what
    it lacks (in the task's language), decides again without that tool and with the whole token budget."""
    def find_deals(company: str) -> str:
        """Find the deals of a company."""
        return '[{"id": 7, "company": "Вектор"}]'

    def apply_discount(deal_id: int, percent: float) -> str:
        """Apply a discount to a deal."""
        return "applied"

    tools = [StructuredTool.from_function(f) for f in (find_deals, apply_discount)]
    llama = fake_llama('{"thought": "t", "action": "apply_discount", ', '{"deal_id": 1, "percent": 10}}',
                       '{"thought": "сначала найду", "action": "find_deals", ', '{"company": "Вектор"}}',
                       '{"thought": "t", "action": "apply_discount", ', '{"deal_id": 7, "percent": 10}}',
                       '{"thought": "готово", "action": "FINISH", ', ' "Скидка дана."}')
    model = LocalChatModel(max_tokens=64)
    result = ReactAgent(model, tools, max_iterations=4).run("Дай скидку 10% по сделке с Вектором")
    assert result.status == "finished"
    assert [(s.action, s.action_input) for s in result.steps[:2]] == [
        ("find_deals", {"company": "Вектор"}), ("apply_discount", {"deal_id": 7, "percent": 10})]
    again = llama.calls[2]
    assert "Для apply_discount нужно deal_id" in again["prompt"] and '"deal_id": 1' in again["prompt"]
    assert again["max_tokens"] == 64
    assert "Для apply_discount" not in llama.calls[4]["prompt"]  # the next decision starts clean


def test_an_address_nothing_gives_is_looked_up_first_when_the_description_asks_for_an_email(
        fake_llama: Any, grammars: list[str]) -> None:
    """The tool's schema declares no format, its description says the argument is an e-mail address: the grammar
    admits addresses only, so an address the model makes up for a name is told apart and looked up first."""
    def find_contacts(query: str) -> str:
        """Find contacts by name."""
        return '[{"name": "Алексей Морозов", "email": "morozov@romashka.ru"}]'

    def send_email(to: str, subject: str) -> str:
        """Send an email."""
        return f"sent to {to}"

    class Email(BaseModel):
        to: str = Field(description="Email получателя")
        subject: str = Field(description="Тема письма")

    tools = [StructuredTool.from_function(find_contacts),
             StructuredTool.from_function(send_email, args_schema=Email)]
    llama = fake_llama('{"thought": "t", "action": "send_email", ', '{"to": "morozov@mail.ru", "subject": "Встреча"}}',
                       '{"thought": "найду адрес", "action": "find_contacts", ', '{"query": "Морозов"}}',
                       '{"thought": "t", "action": "send_email", ',
                       '{"to": "morozov@romashka.ru", "subject": "Встреча"}}',
                       '{"thought": "готово", "action": "FINISH", ', ' "Письмо отправлено."}')
    result = ReactAgent(LocalChatModel(), tools, max_iterations=4).run("Напиши Морозову письмо с темой «Встреча»")
    assert result.status == "finished"
    assert [(s.action, s.action_input) for s in result.steps[:2]] == [
        ("find_contacts", {"query": "Морозов"}), ("send_email", {"to": "morozov@romashka.ru", "subject": "Встреча"})]
    first_args = json.loads(next(g for g in grammars if '"subject"' in g and "anyOf" not in g))
    assert first_args["properties"]["to"]["pattern"] == FORMAT_PATTERNS["email"]
    assert "subject" not in first_args["properties"] or "pattern" not in first_args["properties"]["subject"]
    assert "Для send_email нужно to" in llama.calls[2]["prompt"]


# --------------------------------------------------------------------------- the finish vote
class Voting(Script):
    """A scripted completion function that can tell the share of FINISH among the actions' first tokens."""

    def __init__(self, vote: float | None, *outputs: str) -> None:
        super().__init__(*outputs)
        self.vote, self.asked = vote, []  # type: float | None, list[tuple[str, list[str], str]]

    def share(self, prompt: str, options: list[str], option: str) -> float | None:
        self.asked.append((prompt, list(options), option))
        return self.vote


def _actions(schema: Any) -> list[str]:
    return [branch["properties"]["action"]["const"] for branch in schema["anyOf"]]


def test_a_finish_vote_won_by_finish_decodes_the_answer_with_finish_alone() -> None:
    context = CallContext(task="How many planets orbit the Sun?")
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema([BOOK]), context)
    script = Voting(0.8, '{"thought": "I know it", "action": "FINISH", ', ' "Eight."}')
    text = decoded_answer(script, "PROMPT", step, context)
    assert json.loads(text)["action_input"] == "Eight."
    (prompt, options, option), = script.asked
    assert prompt == "PROMPT" + VOTE_PREFIX and set(options) == {"book_meeting", FINISH} and option == FINISH
    assert _actions(script.calls[0][1]) == [FINISH]


@pytest.mark.parametrize("vote", [0.2, FINISH_VOTE, None])
def test_a_finish_vote_lost_or_undecided_leaves_every_tool_to_choose_from(vote: float | None) -> None:
    context = CallContext(task="Book a sync with Ann for 30 minutes")
    step = prepared(select(DEFAULT_TECHNIQUES), answer_schema([BOOK]), context)
    args = '{"title": "Sync", "attendees": ["Ann"], "duration_minutes": 30, "contact": "ann@x.org"}}'
    script = Voting(vote, '{"thought": "book it", "action": "book_meeting", ', args)
    text = decoded_answer(script, "PROMPT", step, context)
    assert json.loads(text)["action"] == "book_meeting"
    assert set(_actions(script.calls[0][1])) == {"book_meeting", FINISH}


@pytest.mark.parametrize(("vote", "finished"), [(FINISH_VOTE_AFTER_RESULT + 0.01, True),
                                               (FINISH_VOTE_AFTER_RESULT, False), (0.6, False)])
def test_after_a_result_the_finish_vote_needs_its_higher_share(vote: float, finished: bool) -> None:
    """After a call's result, FINISH must win more of the vote than before the first call: a lookup's result is
    often half-way to the task (0.6 before the first call would end the run, here it does not)."""
    schema = answer_schema([BOOK])
    later = CallContext(task="Book a sync", observations=("booked",))
    script = Voting(vote, '{"thought": "done", "action": "FINISH", ', ' "Booked."}')
    decoded_answer(script, "P", prepared(select(DEFAULT_TECHNIQUES), schema, later), later)
    assert [prompt for prompt, _, _ in script.asked] == ["P" + VOTE_PREFIX]
    assert _actions(script.calls[0][1]) == ([FINISH] if finished else ["book_meeting", FINISH])


def test_the_finish_vote_is_asked_only_when_it_is_on() -> None:
    schema = answer_schema([BOOK])
    off = select([t for t in DEFAULT_TECHNIQUES if t != "finish_vote"])
    for context in (CallContext(task="Book a sync"), CallContext(task="Book a sync", observations=("booked",))):
        script = Voting(0.99, '{"thought": "t", "action": "book_meeting", ', '{"title": "Sync"}}')
        decoded_answer(script, "P", prepared(off, schema, context), context)
        assert script.asked == [] and set(_actions(script.calls[0][1])) == {"book_meeting", FINISH}


def remind(person: str, date: str) -> str:
    """Create a reminder for a person on a date."""
    return "ok"


def today() -> str:
    """Today's date."""
    return "2026-03-04"


def test_a_decision_taken_again_after_an_invented_value_asks_no_second_finish_vote() -> None:
    tools = [StructuredTool.from_function(remind), StructuredTool.from_function(today)]
    context = CallContext(task="Remind Ivan on Friday")
    techniques = select(DEFAULT_TECHNIQUES)
    step = prepared(techniques, answer_schema(tools), context)
    script = Voting(0.2, '{"thought": "t", "action": "remind", ', '{"person": "Ivan", "date": "2024-05-17"}}',
                    '{"thought": "I need the date", "action": "today", ', '{}}')
    text = answered(script, "P", step, context, techniques, again=lambda rejected: "P2")
    assert json.loads(text)["action"] == "today"
    assert len(script.asked) == 1 and script.asked[0][0] == "P" + VOTE_PREFIX
    assert script.calls[2][0] == "P2" and set(_actions(script.calls[2][1])) == {"today", FINISH}


@pytest.mark.parametrize(("finish_logit", "tools_left"), [(2.0, False), (-2.0, True)])
def test_the_vote_reads_the_first_token_share_from_the_models_logits(
        fake_llama: Any, grammars: list[str], finish_logit: float, tools_left: bool) -> None:
    """FINISH's first byte gets logit +-2, the tool's 0: FINISH has e^2/(e^2+1) of the vote (or 1 - that), so the
    first stage is decoded with FINISH alone (or with every action); the vote is one one-token completion of the
    prompt ending with the vote's prefix."""
    llama = fake_llama('{"thought": "t", "action": "FINISH", ', ' "Eight."}', logits={"F": finish_logit})
    result = ReactAgent(LocalChatModel(), [BOOK], max_iterations=2).run("How many planets orbit the Sun?")
    assert result.status == "finished" and result.output == "Eight."
    assert len(llama.votes) == 1 and llama.votes[0].endswith(VOTE_PREFIX)
    assert ('"book_meeting"' in grammars[0]) is tools_left


@pytest.mark.parametrize(("finish_logit", "tools_left"), [(1.0, False), (0.4, True)])
def test_after_a_result_the_run_answers_when_the_vote_gives_finish_its_higher_share(
        fake_llama: Any, grammars: list[str], finish_logit: float, tools_left: bool) -> None:
    """The tool's result raises FINISH's logit to 1.0 (e/(e+1) = 0.73 of the vote: the second decision is decoded
    with FINISH alone) or to 0.4 (0.6: more than before the first call, less than after a result, so every tool
    stays); the first vote, at logit -2, left the tools."""
    llama = fake_llama('{"thought": "t", "action": "book_meeting", ',
                       '{"title": "Sync", "attendees": ["Ann"], "duration_minutes": 30, "contact": "ann@x.org"}}',
                       '{"thought": "t", "action": "FINISH", ', ' "Booked."}', logits={"F": -2.0})

    def booked(**_: Any) -> str:
        llama.logits[ord("F")] = finish_logit
        return "booked"

    tool = StructuredTool.from_function(booked, name="book_meeting", description=BOOK.description,
                                        args_schema=BOOK.args_schema)
    result = ReactAgent(LocalChatModel(), [tool], max_iterations=3).run("Book a sync with Ann (ann@x.org), 30 min")
    assert [s.action for s in result.steps] == ["book_meeting", FINISH] and result.output == "Booked."
    assert len(llama.votes) == 2 and '"book_meeting"' in grammars[0]
    second = next(g for g in grammars[1:] if '"FINISH"' in g)
    assert ('"book_meeting"' in second) is tools_left


def test_the_vote_abstains_when_finish_and_a_tool_begin_with_the_same_token(fake_llama: Any) -> None:
    def FINISH_REPORT(name: str) -> str:
        """File the final report."""
        return "filed"

    tool = StructuredTool.from_function(FINISH_REPORT)
    llama = fake_llama('{"thought": "t", "action": "FINISH_REPORT", ', '{"name": "Q3"}}',
                       '{"thought": "t", "action": "FINISH", ', ' "Filed."}', logits={"F": 9.0})
    result = ReactAgent(LocalChatModel(), [tool], max_iterations=3).run("File the report Q3")
    assert [s.action for s in result.steps] == ["FINISH_REPORT", FINISH]
    assert llama.votes == []  # no completion: the first tokens alone show the vote cannot tell them apart


def test_a_prompt_longer_than_the_context_window_ends_the_run_with_an_error_naming_the_remedies(
        fake_llama: Any) -> None:
    """Neither the finish vote nor a completion is tried: the error names the window and how to widen it."""
    llama = fake_llama('{"thought": "t", "action": "FINISH", ', ' "Eight."}', logits={"F": 9.0})
    llama.n_ctx = lambda: 512
    llama.metadata = {"general.name": "m", "qwen2.context_length": "32768"}
    llama.context_params = SimpleNamespace(n_ctx=300)  # llama.cpp rounds the window up; the buffers keep 300
    result = ReactAgent(LocalChatModel(), [BOOK], max_iterations=2).run("How many planets orbit the Sun?")
    assert result.status == "error" and llama.calls == [] and llama.votes == []
    assert "holds 300" in str(result.error) and "n_ctx=" in str(result.error) and "32768" in str(result.error)
    assert "history_window=" in str(result.error)


def send_message(recipient: str, text: str) -> str:
    """Send a chat message to a person."""
    return "sent"


def test_each_call_of_a_several_call_reply_goes_through_the_after_decoding_stage(fake_llama: Any) -> None:
    """Under ``max_parallel_calls`` one grammar decodes a list of calls: each call still gets its inflected name
    put in the nominative; a call the stage leaves alone, and the reply's order, stay as decoded."""
    reply = {"actions": [
        {"thought": "t", "action": "send_message", "action_input": {"recipient": "Ивану", "text": "созвон в 11"}},
        {"thought": "t", "action": "send_message", "action_input": {"recipient": "Мария", "text": "созвон в 11"}}]}
    fake_llama(json.dumps(reply, ensure_ascii=False))
    model = LocalChatModel()
    agent = ReactAgent(model, [StructuredTool.from_function(send_message)], max_parallel_calls=2)
    state = RunState("Напиши Ивану и Марии, что созвон в 11")
    call = agent.decision_call(state)
    out = json.loads(str(model.invoke(call.messages, **agent.model_kwargs(call)).content))
    assert [a["action_input"]["recipient"] for a in out["actions"]] == ["Иван", "Мария"]
    assert out["actions"][1] == reply["actions"][1]


def test_a_correct_several_call_reply_passes_through_unchanged(fake_llama: Any) -> None:
    reply = json.dumps({"actions": [
        {"thought": "t", "action": "send_message", "action_input": {"recipient": "Иван", "text": "привет"}},
        {"thought": "t", "action": "send_message", "action_input": {"recipient": "Мария", "text": "привет"}}]},
        ensure_ascii=False)
    fake_llama(reply)
    model = LocalChatModel()
    agent = ReactAgent(model, [StructuredTool.from_function(send_message)], max_parallel_calls=2)
    call = agent.decision_call(RunState("Напиши Ивану и Марии «привет»"))
    assert model.invoke(call.messages, **agent.model_kwargs(call)).content == reply
