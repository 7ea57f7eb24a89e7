"""The seed article's scenarios, played with the article's own GigaChat answers."""

from __future__ import annotations

import json

from conftest import RegisterUserRenamedInput, RegisterUserTool, SearchDBTool

from react_agent import ReactAgent, ReflectionAgent
from react_agent.testing import ScriptedChatModel

# GigaChat-2-Max's real answers, quoted from the seed article.
ANSWER_REGISTER_IVAN = (
    '{\n    "action": "register_user",\n    "action_input": {\n        "username": "Ivan",\n'
    '        "email": "ivan@test.com"\n    },\n    "thought": "Пользователь хочет зарегистрироваться с именем'
    ' Иван и указанным емейлом. Используем инструмент регистрации."\n}'
)
ANSWER_REGISTER_IVAN_FIXED = (
    '{\n    "thought": "Пользователь хочет зарегистрироваться с именем Иван и указанным емейлом. Используем'
    ' инструмент регистрации с правильным названием аргумента.",\n    "action": "register_user",\n'
    '    "action_input": {"username": "Ivan", "user_email": "ivan@test.com"}\n}'
)
REFLECTION = (
    "Ошибка возникла из-за неправильного названия аргумента `email`, нужно использовать доступный аргумент"
    " `user_email`. Исправленный вызов:\n```python\nregister_user({'username': 'Ivan', 'user_email':"
    " 'ivan@test.com'})\n```"
)
FINAL = "Пользователь Ivan с email ivan@test.com успешно зарегистрирован"


def finish(answer: str, thought: str = "Задача выполнена") -> str:
    return json.dumps({"thought": thought, "action": "FINISH", "action_input": answer}, ensure_ascii=False)


def call(action: str, **args: object) -> str:
    return json.dumps({"thought": "нужен инструмент", "action": action, "action_input": args}, ensure_ascii=False)


def test_register_ivan_then_finish(seed_tools, users):
    """Scenario 1: the agent registers Ivan with the article's answer, then FINISHes with the answer text."""
    llm = ScriptedChatModel([ANSWER_REGISTER_IVAN, finish(FINAL)])
    result = ReactAgent(llm, seed_tools).run("Зарегистрируй пользователя Ivan с email ivan@test.com")

    assert result.status == "finished"
    assert result.output == FINAL
    assert users == {"Ivan": "ivan@test.com"}
    assert [s.action for s in result.steps] == ["register_user", "FINISH"]
    assert result.steps[0].action_input == {"username": "Ivan", "email": "ivan@test.com"}
    assert result.steps[0].observation == "User Ivan успешно зарегистрирован"
    assert result.llm_calls == 2
    first, second = llm.calls[0].text, llm.calls[1].text
    assert "**Задача**: Зарегистрируй пользователя Ivan с email ivan@test.com" in first
    assert "register_user - Регистрация пользователя в системе" in first
    assert "username: Логин (string, обязательный; пример: ViacheslavVoo)" in first
    assert "phone: Номер телефона в формате +7XXX... (string, опциональный; пример: +7999999999)" in first
    assert "FINISH - " in first and "Нет истории" in first
    assert "Нет истории" not in second
    assert 'register_user({"username": "Ivan", "email": "ivan@test.com"})' in second
    assert "User Ivan успешно зарегистрирован" in second


def test_register_and_search_in_one_task(seed_tools, users):
    """Scenario 2: two tools in one task; the third prompt shows both earlier calls and their results."""
    users["Ivan"] = "ivan@test.com"
    llm = ScriptedChatModel([
        call("register_user", username="Viacheslav", email="Viacheslav@test.com"),
        call("search_db", username="Ivan"),
        finish("Viacheslav зарегистрирован; найден пользователь Ivan: ivan@test.com"),
    ])
    agent = ReactAgent(llm, seed_tools)
    result = agent.run("Зарегистрируй пользователя Viacheslav с email Viacheslav@test.com и найди пользователя Ivan")

    assert result.status == "finished"
    assert [s.action for s in result.steps] == ["register_user", "search_db", "FINISH"]
    third = llm.calls[2].text
    assert 'register_user({"username": "Viacheslav", "email": "Viacheslav@test.com"})' in third
    assert "User Viacheslav успешно зарегистрирован" in third
    assert 'search_db({"username": "Ivan"})' in third
    assert "Найден пользователь ivan@test.com" in third
    assert third.index("register_user({") < third.index("search_db({")


def test_reflection_fixes_renamed_argument(users):
    """Scenario 3: email→user_email; the failed call triggers a reflection whose advice reaches the next prompt."""
    tools = [RegisterUserTool(users=users, args_schema=RegisterUserRenamedInput), SearchDBTool(users=users)]
    llm = ScriptedChatModel([ANSWER_REGISTER_IVAN, REFLECTION, ANSWER_REGISTER_IVAN_FIXED, finish(FINAL)])
    result = ReflectionAgent(llm, tools).run("Зарегистрируй пользователя Ivan с email ivan@test.com")

    assert result.status == "finished", result
    assert users == {"Ivan": "ivan@test.com"}
    failed, fixed, done = result.steps
    assert failed.is_error and "email" in failed.observation and "user_email" in failed.observation
    assert failed.reflection == REFLECTION
    assert not fixed.is_error and fixed.action_input == {"username": "Ivan", "user_email": "ivan@test.com"}
    assert done.action == "FINISH" and result.output == FINAL
    reflection_prompt = llm.calls[1].text
    assert "unexpected argument(s): email" in reflection_prompt
    assert "Доступные аргументы: username, user_email, phone" in reflection_prompt
    corrective_prompt = llm.calls[2].text
    assert REFLECTION in corrective_prompt
    assert "исправляет ошибки вызовов инструментов" in corrective_prompt
    assert "исправляет ошибки" not in llm.calls[3].text  # back to the normal step prompt
    assert result.llm_calls == 4
