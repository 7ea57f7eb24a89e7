"""Demo tools: a real SQLite user registry, a safe calculator, a confined file reader.

The tools are invoked the way the agent does it: ``tool.invoke({...})``, asserting on the returned
string or the raised exception.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import string
import subprocess
import sys
import textwrap
import threading
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool, ToolException
from pydantic import ValidationError

from react_agent.demo import (
    DEMO_EXAMPLES,
    MAX_EXPRESSION_LENGTH,
    SEED_TASKS,
    CalculatorError,
    DemoToolError,
    FileAccessError,
    UserDB,
    UserExistsError,
    UserNotFoundError,
    evaluate_expression,
    make_calculator_tool,
    make_demo_tools,
    make_read_file_tool,
    make_register_user_tool,
    make_search_db_tool,
)
from react_agent.errors import ConfigError

# --------------------------------------------------------------------------------------------------
# fixtures and helpers
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "users.sqlite3"


@pytest.fixture
def tools_en(db_path: Path) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in make_demo_tools(db_path=db_path, lang="en")}


@pytest.fixture
def register(tools_en: dict[str, BaseTool]) -> BaseTool:
    return tools_en["register_user"]


@pytest.fixture
def search(tools_en: dict[str, BaseTool]) -> BaseTool:
    return tools_en["search_db"]


@pytest.fixture
def calc() -> BaseTool:
    return make_calculator_tool(lang="en")


def _rows(db_path: Path) -> list[tuple[str, str, str | None]]:
    """All users, read through a fresh connection that knows nothing of UserDB."""
    with sqlite3.connect(db_path) as conn:
        rows = conn.execute("SELECT username, email, phone FROM users ORDER BY username").fetchall()
    conn.close()
    return [(str(u), str(e), p) for u, e, p in rows]


def _symlink(target: Path, link: Path, *, target_is_directory: bool = False) -> None:
    try:
        os.symlink(target, link, target_is_directory=target_is_directory)
    except (OSError, NotImplementedError) as exc:  # e.g. Windows without the privilege
        pytest.skip(f"symlinks unavailable: {exc}")


# --------------------------------------------------------------------------------------------------
# make_demo_tools, schemas, seed tasks
# --------------------------------------------------------------------------------------------------


def test_make_demo_tools_returns_the_three_tools_and_read_file_with_root(tmp_path: Path) -> None:
    """Without a root: register_user, search_db, calculator; with a root read_file is added."""
    names = [t.name for t in make_demo_tools(db_path=tmp_path / "a.db")]
    assert names == ["register_user", "search_db", "calculator"]
    names = [t.name for t in make_demo_tools(db_path=tmp_path / "b.db", root=tmp_path)]
    assert names == ["register_user", "search_db", "calculator", "read_file"]


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_every_argument_has_a_description_and_examples(tmp_path: Path, lang: str) -> None:
    """Each tool has a description and each argument a description and examples, in both languages."""
    tools = make_demo_tools(db_path=tmp_path / "u.db", root=tmp_path, lang=lang)  # type: ignore[arg-type]
    for tool in tools:
        assert tool.description
        assert tool.args_schema is not None
        schema = tool.args_schema.model_json_schema()  # type: ignore[union-attr]
        for name, prop in schema["properties"].items():
            assert prop.get("description"), (tool.name, name)
            assert prop.get("examples"), (tool.name, name)


def test_seed_article_schema_of_register_user(db_path: Path) -> None:
    """register_user (ru) keeps the seed article's field descriptions, examples and optional phone."""
    tool = make_register_user_tool(UserDB(db_path), lang="ru")
    props = tool.args_schema.model_json_schema()["properties"]  # type: ignore[union-attr]
    assert props["username"]["description"] == "Логин"
    assert props["username"]["examples"] == ["ViacheslavVoo"]
    assert props["email"]["examples"] == ["Viacheslav@test.com"]
    assert props["phone"]["description"] == "Номер телефона в формате +7XXX..."
    assert props["phone"]["examples"] == ["+7999999999"]
    assert props["phone"]["default"] is None
    search_props = make_search_db_tool(UserDB(db_path)).args_schema.model_json_schema()["properties"]  # type: ignore[union-attr]
    assert search_props["limit"]["default"] == 5
    assert (search_props["limit"]["anyOf"][0]["minimum"], search_props["limit"]["anyOf"][0]["maximum"]) == (1, 100)


def test_unknown_language_is_a_config_error(tmp_path: Path) -> None:
    """lang other than 'ru'/'en' is refused when the tools are built."""
    with pytest.raises(ConfigError, match="unsupported language"):
        make_demo_tools(db_path=tmp_path / "u.db", lang="de")  # type: ignore[arg-type]


def test_seed_tasks_exist_in_both_languages() -> None:
    """SEED_TASKS holds the seed article's two tasks in Russian and English."""
    assert SEED_TASKS["ru"][0] == "Зарегистрируй пользователя Ivan с email ivan@test.com"
    assert SEED_TASKS["en"][1] == "Register user Viacheslav with email Viacheslav@test.com and find user Ivan"
    assert len(SEED_TASKS["ru"]) == len(SEED_TASKS["en"]) == 2


# --------------------------------------------------------------------------------------------------
# texts as data: strings/<lang>.json, one argument model per tool, nothing done at import
# --------------------------------------------------------------------------------------------------


def _strings_file(lang: str) -> Any:
    """The parsed ``react_agent/demo/strings/<lang>.json`` of the imported package."""
    source = resources.files("react_agent.demo") / "strings" / f"{lang}.json"
    return json.loads(source.read_text(encoding="utf-8"))


def _shape(data: Any, path: str = "") -> dict[str, set[str]]:
    """Every text of a strings file by its key path, with the ``{fields}`` of its format template."""
    if isinstance(data, dict):
        return {k: v for key, value in data.items() for k, v in _shape(value, f"{path}/{key}").items()}
    if isinstance(data, list):
        return {k: v for i, value in enumerate(data) for k, v in _shape(value, f"{path}[{i}]").items()}
    return {path: {name for _, name, _, _ in string.Formatter().parse(data) if name}}


def test_both_languages_have_the_same_texts_with_the_same_placeholders() -> None:
    """ru.json and en.json have the same keys, and each text fills the same ``{fields}`` in both languages."""
    ru, en = _shape(_strings_file("ru")), _shape(_strings_file("en"))
    assert sorted(ru) == sorted(en)
    assert {key: fields for key, fields in ru.items() if en[key] != fields} == {}
    assert "/errors/user_exists" in ru and "/tools/search_db/arguments/limit" in ru
    assert "{allowed}" in _strings_file("en")["errors"]["calc_syntax"]


_IMPORT_PROBE = textwrap.dedent("""
    import json, sys
    opened = []
    sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" else None)
    import react_agent.demo as demo
    from react_agent.demo._common import demo_strings
    at_import = [p for p in opened if p.endswith(".json")]
    cached_at_import = demo_strings.cache_info().currsize
    examples = demo.DEMO_EXAMPLES["en"]
    print(json.dumps({"at_import": at_import, "cached_at_import": cached_at_import,
                      "after_lookup": [p for p in opened if p.endswith(".json")], "examples": len(examples)}))
""")


def test_importing_the_package_reads_no_strings_and_builds_no_examples(tmp_path: Path) -> None:
    """A fresh interpreter imports react_agent.demo without opening a strings file (so without building
    SEED_TASKS or DEMO_EXAMPLES, which are made from it); the first lookup of a language reads its file."""
    proc = subprocess.run([sys.executable, "-c", _IMPORT_PROBE], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["at_import"] == [] and report["cached_at_import"] == 0
    assert [Path(p).name for p in report["after_lookup"]] == ["en.json"]
    assert report["examples"] == 6


def test_lazy_mappings_behave_like_the_dicts_they_replace() -> None:
    """DEMO_EXAMPLES and SEED_TASKS: keys ru and en, KeyError for others, a fresh list on every lookup."""
    assert sorted(DEMO_EXAMPLES) == sorted(SEED_TASKS) == ["en", "ru"]
    assert "de" not in DEMO_EXAMPLES and DEMO_EXAMPLES.get("de") is None
    with pytest.raises(KeyError):
        SEED_TASKS["de"]
    tasks = SEED_TASKS["en"]
    tasks.append("changed by the caller")
    assert len(SEED_TASKS["en"]) == 2
    assert DEMO_EXAMPLES["en"] == DEMO_EXAMPLES["en"] and DEMO_EXAMPLES["en"] != DEMO_EXAMPLES["ru"]


def _without_descriptions(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_descriptions(v) for k, v in schema.items() if k not in ("description", "title")}
    if isinstance(schema, list):
        return [_without_descriptions(v) for v in schema]
    return schema


def test_one_argument_model_per_tool_described_in_each_language(tmp_path: Path) -> None:
    """Both languages' argument models derive from one model per tool: the schemas the model sees differ only
    in their descriptions (taken from the strings files), types, defaults and limits are the same."""
    ru = {t.name: t for t in make_demo_tools(db_path=tmp_path / "ru.db", root=tmp_path, lang="ru")}
    en = {t.name: t for t in make_demo_tools(db_path=tmp_path / "en.db", root=tmp_path, lang="en")}
    for name in ru:
        ru_model, en_model = ru[name].args_schema, en[name].args_schema
        assert isinstance(ru_model, type) and isinstance(en_model, type)
        assert ru_model.__base__ is en_model.__base__, name
        ru_schema = ru[name].tool_call_schema.model_json_schema()  # type: ignore[union-attr]
        en_schema = en[name].tool_call_schema.model_json_schema()  # type: ignore[union-attr]
        assert _without_descriptions(ru_schema) == _without_descriptions(en_schema), name
        texts = _strings_file("ru")["tools"][name]
        assert ru_schema["description"] == ru[name].description
        assert {k: p["description"] for k, p in ru_schema["properties"].items()} == texts["arguments"]
    limit = en["search_db"].tool_call_schema.model_json_schema()["properties"]["limit"]  # type: ignore[union-attr]
    assert limit["anyOf"][0] == {"type": "integer", "minimum": 1, "maximum": 100}
    assert make_search_db_tool(UserDB(tmp_path / "x.db"), lang="en").args_schema is en["search_db"].args_schema


def test_seed_scenario_register_then_find(register: BaseTool, search: BaseTool) -> None:
    """The seed task: register Ivan, register Viacheslav, find Ivan."""
    assert register.invoke({"username": "Ivan", "email": "ivan@test.com"}) == (
        "User Ivan registered (email ivan@test.com)"
    )
    assert register.invoke({"username": "Viacheslav", "email": "Viacheslav@test.com"}) == (
        "User Viacheslav registered (email Viacheslav@test.com)"
    )
    out = search.invoke({"username": "Ivan"})
    assert out.startswith("Found 1 user(s) matching 'Ivan'")
    assert "- Ivan: email ivan@test.com, phone none, registered " in out


# --------------------------------------------------------------------------------------------------
# SQLite: register_user / search_db / UserDB
# --------------------------------------------------------------------------------------------------


def test_register_creates_a_row_readable_by_a_fresh_connection(register: BaseTool, db_path: Path) -> None:
    """A registered user is committed to the SQLite file (seen by another connection)."""
    register.invoke({"username": "Ivan", "email": "ivan@test.com", "phone": "+7 (999) 123-45-67"})
    assert _rows(db_path) == [("Ivan", "ivan@test.com", "+79991234567")]
    with sqlite3.connect(db_path) as conn:
        (created_at,) = conn.execute("SELECT created_at FROM users").fetchone()
    conn.close()
    assert str(created_at).endswith("Z")


def test_register_confirmation_mentions_the_phone(register: BaseTool) -> None:
    """With a phone, the confirmation shows the normalised number; a blank phone counts as none."""
    assert register.invoke({"username": "Ivan", "email": "ivan@test.com", "phone": "+7999999999"}) == (
        "User Ivan registered (email ivan@test.com, phone +7999999999)"
    )
    assert register.invoke({"username": "Petr", "email": "petr@test.com", "phone": "  "}) == (
        "User Petr registered (email petr@test.com)"
    )


def test_register_in_russian(db_path: Path) -> None:
    """The Russian tool answers in Russian, and its duplicate error is Russian too."""
    tool = make_register_user_tool(UserDB(db_path), lang="ru")
    assert tool.invoke({"username": "Ivan", "email": "ivan@test.com"}) == (
        "Пользователь Ivan зарегистрирован (email ivan@test.com)"
    )
    with pytest.raises(UserExistsError, match="пользователь 'Ivan' уже существует"):
        tool.invoke({"username": "Ivan", "email": "other@test.com"})


def test_duplicate_username_is_refused(register: BaseTool, db_path: Path) -> None:
    """Registering a taken username raises "user 'Ivan' already exists" and keeps the first row."""
    register.invoke({"username": "Ivan", "email": "ivan@test.com"})
    with pytest.raises(UserExistsError, match="user 'Ivan' already exists") as info:
        register.invoke({"username": " Ivan ", "email": "second@test.com"})
    assert isinstance(info.value, ToolException)
    assert _rows(db_path) == [("Ivan", "ivan@test.com", None)]


@pytest.mark.parametrize(
    "email", ["ivan", "ivan@", "@test.com", "ivan@test", "iv an@test.com", "a@@b.com", "a..b@c.com"]
)
def test_invalid_email_is_refused(register: BaseTool, db_path: Path, email: str) -> None:
    """A malformed email raises a clear error and stores nothing."""
    with pytest.raises(DemoToolError, match="invalid email"):
        register.invoke({"username": "Ivan", "email": email})
    assert _rows(db_path) == []


@pytest.mark.parametrize("phone", ["89991234567", "+7abc", "+7 999", "12345678901234567", "+7999999999999999"])
def test_invalid_phone_is_refused(register: BaseTool, phone: str) -> None:
    """A phone not in the +<digits> international format raises a clear error."""
    with pytest.raises(DemoToolError, match=r"invalid phone number .*\+7999999999"):
        register.invoke({"username": "Ivan", "email": "ivan@test.com", "phone": phone})


@pytest.mark.parametrize("username", ["", "   ", "a\nb", "x" * 129])
def test_invalid_username_is_refused(register: BaseTool, username: str) -> None:
    """Empty, control-character and over-long usernames are refused with a clear message."""
    with pytest.raises(DemoToolError, match="username"):
        register.invoke({"username": username, "email": "ivan@test.com"})


def test_unknown_user_is_an_error(register: BaseTool, search: BaseTool) -> None:
    """search_db raises "user 'X' not found" when nothing matches."""
    register.invoke({"username": "Ivan", "email": "ivan@test.com"})
    with pytest.raises(UserNotFoundError, match="user 'Petr' not found"):
        search.invoke({"username": "Petr"})


def test_search_puts_the_exact_match_first_and_respects_limit(register: BaseTool, search: BaseTool) -> None:
    """Exact match first, then prefix matches, then substring matches; limit caps the list."""
    for name in ["Ivanov", "Ivan", "Ivanenko", "Tsarevich_Ivan"]:
        register.invoke({"username": name, "email": f"{name.lower()}@test.com"})
    lines = search.invoke({"username": "Ivan", "limit": 10}).splitlines()
    assert lines[0] == "Found 4 user(s) matching 'Ivan'"
    assert [line.split(":")[0] for line in lines[1:]] == ["- Ivan", "- Ivanenko", "- Ivanov", "- Tsarevich_Ivan"]
    assert len(search.invoke({"username": "ivan", "limit": 2}).splitlines()) == 3  # case-insensitive
    assert search.invoke({"username": "Ivan", "limit": None}).startswith("Found 4 user(s)")


@pytest.mark.parametrize("limit", [0, 101, -1])
def test_search_limit_out_of_range_is_refused(search: BaseTool, limit: int) -> None:
    """limit outside 1..100 fails argument validation."""
    with pytest.raises(ValidationError):
        search.invoke({"username": "Ivan", "limit": limit})


def test_sql_injection_in_username_is_stored_as_data(register: BaseTool, search: BaseTool, db_path: Path) -> None:
    """`Ivan'; DROP TABLE users;--` is an ordinary username: stored verbatim, found, table intact."""
    evil = "Ivan'; DROP TABLE users;--"
    register.invoke({"username": "Petr", "email": "petr@test.com"})
    assert register.invoke({"username": evil, "email": "ivan@test.com"}) == (
        f"User {evil} registered (email ivan@test.com)"
    )
    assert sorted(row[0] for row in _rows(db_path)) == [evil, "Petr"]
    assert f"- {evil}: email ivan@test.com" in search.invoke({"username": evil})
    with pytest.raises(UserNotFoundError):
        search.invoke({"username": "x' OR '1'='1"})
    assert len(_rows(db_path)) == 2


def test_like_wildcards_in_search_are_literal(register: BaseTool, search: BaseTool) -> None:
    """%, _ and backslash in a search match themselves, not any character."""
    for name in ["abc", "a_c", "a%c", "a\\c"]:
        register.invoke({"username": name, "email": "x@test.com"})
    assert [line.split(":")[0] for line in search.invoke({"username": "a_"}).splitlines()[1:]] == ["- a_c"]
    assert [line.split(":")[0] for line in search.invoke({"username": "%"}).splitlines()[1:]] == ["- a%c"]
    assert [line.split(":")[0] for line in search.invoke({"username": "a\\"}).splitlines()[1:]] == ["- a\\c"]
    with pytest.raises(UserNotFoundError):
        search.invoke({"username": "_b"})


def test_userdb_api(db_path: Path) -> None:
    """UserDB.register returns the row, get returns it or None, find returns a list of dicts."""
    db = UserDB(db_path)
    user = db.register("Ivan", "ivan@test.com")
    assert user["username"] == "Ivan" and user["phone"] is None and user["created_at"]
    assert db.get("Ivan") == user
    assert db.get("Petr") is None
    assert db.find("Iv") == [user]
    assert db.find("Petr") == []
    assert UserDB(db_path).get("Ivan") == user  # reopening the file keeps the data
    with pytest.raises(ValueError, match="limit"):
        db.find("Iv", limit=0)


def test_userdb_refuses_an_in_memory_database() -> None:
    """':memory:' is refused: each call opens a new connection and would see an empty database."""
    with pytest.raises(ConfigError, match="file path"):
        UserDB(":memory:")


def test_userdb_is_safe_to_use_from_several_threads(db_path: Path) -> None:
    """Concurrent registrations from several threads all land; a name they all try is stored once."""
    tool = make_register_user_tool(UserDB(db_path), lang="en")
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        for i in range(5):
            try:
                tool.invoke({"username": f"user{worker}_{i}", "email": f"u{worker}{i}@test.com"})
                tool.invoke({"username": "shared", "email": "shared@test.com"})
            except UserExistsError:
                pass
            except BaseException as exc:
                errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(_rows(db_path)) == 4 * 5 + 1


# --------------------------------------------------------------------------------------------------
# calculator
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("2 + 2 * 3", "8"),
        ("(2 + 2) * 3", "12"),
        ("2 ** 3 ** 2", "512"),
        ("-2 ** 2", "-4"),
        ("+5 - -3", "8"),
        ("7 / 2", "3.5"),
        ("7 // 2", "3"),
        ("-7 % 3", "2"),
        ("0.1 + 0.2", "0.3"),
        ("1.5e3 / 4", "375"),
        ("2 ** -1", "0.5"),
        ("sqrt(16) + abs(-3)", "7"),
        ("round(pi, 3)", "3.142"),
        ("round(2.7)", "3"),
        ("min(4, 2, 8) + max(1, 5)", "7"),
        ("log(e)", "1"),
        ("log(8, 2)", "3"),
        ("sin(0) + cos(0)", "1"),
        ("2 ** 1000 % 1000", "376"),
    ],
)
def test_calculator_computes_arithmetic(calc: BaseTool, expression: str, expected: str) -> None:
    """Precedence, floats, unary signs, whitelisted functions and constants give correct results."""
    assert calc.invoke({"expression": expression}) == expected


def test_calculator_accepts_a_plain_string_input(calc: BaseTool) -> None:
    """A bare string is taken as the expression (single-argument tool)."""
    assert calc.invoke("6 * 7") == "42"


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('ls')",
        "().__class__.__bases__",
        "(1).__class__",
        "open('/etc/passwd')",
        "eval('1')",
        "exec",
        "os",
        "[1, 2][0]",
        "'a' * 3",
        "b'x'",
        "lambda: 1",
        "[x for x in (1, 2)]",
        "{1: 2}",
        "(1, 2)",
        "1 < 2",
        "1 and 2",
        "1 if 1 else 2",
        "(x := 1)",
        "True + 1",
        "1j * 2",
        "2 ^ 10",
        "1 << 10",
        "abs(x=1)",
        "max(*(1, 2))",
        "f'{1}'",
        "sqrt.__call__(4)",
    ],
)
def test_calculator_refuses_everything_but_arithmetic(calc: BaseTool, expression: str) -> None:
    """Names, attributes, foreign calls, subscripts, strings, lambdas, comprehensions... are refused."""
    with pytest.raises(CalculatorError, match="only arithmetic is allowed") as info:
        calc.invoke({"expression": expression})
    assert "Allowed: numbers" in str(info.value)


def test_calculator_refusal_names_the_offending_part(calc: BaseTool) -> None:
    """The refusal quotes what was not allowed, and a bare function name asks to call it."""
    with pytest.raises(CalculatorError, match=re.escape("`().__class__.__bases__` is not supported")):
        calc.invoke({"expression": "().__class__.__bases__"})
    with pytest.raises(CalculatorError, match=re.escape("`__import__('os').system` is not supported")):
        calc.invoke({"expression": "__import__('os').system('ls')"})
    with pytest.raises(CalculatorError, match="unknown name '__import__'"):
        calc.invoke({"expression": "__import__('os')"})
    with pytest.raises(CalculatorError, match="'sqrt' is a function"):
        calc.invoke({"expression": "sqrt + 1"})


def test_calculator_refusal_in_russian() -> None:
    """The Russian calculator refuses with a Russian message."""
    with pytest.raises(CalculatorError, match="разрешена только арифметика"):
        make_calculator_tool(lang="ru").invoke({"expression": "().__class__"})


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("9 ** 9 ** 9", "exponent is too large"),
        ("2 ** 1001", "exponent is too large"),
        ("2 ** -5000", "exponent is too large"),
        ("(9 ** 999) ** 999", "result is too large"),
        ("(2 ** 1000) ** 11", "result is too large"),
        ("10.0 ** 400", "result is too large"),
        ("1e308 * 10", "not a finite number"),
        ("(-8) ** (1 / 3)", "not a real number"),
        ("round(1.5, 10 ** 6)", "number of digits"),
    ],
)
def test_calculator_bounds_the_cost(calc: BaseTool, expression: str, message: str) -> None:
    """Huge exponents and huge or non-finite results are refused before or instead of computing."""
    with pytest.raises(CalculatorError, match=message):
        calc.invoke({"expression": expression})


def test_calculator_refuses_long_and_deeply_nested_expressions(calc: BaseTool) -> None:
    """Expressions over the length limit or nested too deeply are refused with a clear message."""
    with pytest.raises(CalculatorError, match="too long"):
        calc.invoke({"expression": "1+" * MAX_EXPRESSION_LENGTH + "1"})
    with pytest.raises(CalculatorError, match="not an arithmetic expression"):
        calc.invoke({"expression": "(" * 240 + "1" + ")" * 240})
    assert calc.invoke({"expression": "-" * 400 + "1"}) == "1"


@pytest.mark.parametrize("expression", ["1 / 0", "1 // 0", "5 % 0", "0 ** -1", "1 / (2 - 2.0)"])
def test_calculator_division_by_zero(calc: BaseTool, expression: str) -> None:
    """Division (and modulo, negative power) by zero raises "division by zero"."""
    with pytest.raises(CalculatorError, match="division by zero"):
        calc.invoke({"expression": expression})


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("", "empty expression"),
        ("2 +", "not an arithmetic expression"),
        ("sqrt(-1)", "math error"),
        ("log(0)", "math error"),
        ("sqrt(1, 2)", "wrong arguments for function 'sqrt'"),
        ("min()", "min"),
    ],
)
def test_calculator_reports_bad_input_clearly(calc: BaseTool, expression: str, message: str) -> None:
    """Empty input, syntax errors, math domain errors and wrong arguments give clear messages."""
    with pytest.raises(CalculatorError, match=message):
        calc.invoke({"expression": expression})


def test_evaluate_expression_returns_numbers() -> None:
    """The library function returns int or float, not text."""
    assert evaluate_expression("2 ** 10") == 1024
    assert evaluate_expression("1 / 4") == 0.25


# --------------------------------------------------------------------------------------------------
# read_file
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[Path, Path]:
    """A root with a.txt and sub/b.txt, next to an outside folder with secret.txt."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("hello\n", encoding="utf-8")
    (root / "sub" / "b.txt").write_text("привет\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET\n", encoding="utf-8")
    return root, outside


@pytest.fixture
def reader(sandbox: tuple[Path, Path]) -> BaseTool:
    return make_read_file_tool(sandbox[0], lang="en")


def test_read_file_reads_files_inside_the_root(reader: BaseTool, sandbox: tuple[Path, Path]) -> None:
    """Relative paths, nested paths, harmless '..' and an absolute path inside the root are read."""
    root, _ = sandbox
    assert reader.invoke({"path": "a.txt"}) == "hello\n"
    assert reader.invoke({"path": "sub/b.txt"}) == "привет\n"
    assert reader.invoke({"path": "sub/../a.txt"}) == "hello\n"
    assert reader.invoke({"path": str(root / "a.txt")}) == "hello\n"


def test_read_file_follows_symlinks_that_stay_inside(reader: BaseTool, sandbox: tuple[Path, Path]) -> None:
    """A symlink to a file inside the root is read normally."""
    root, _ = sandbox
    _symlink(root / "a.txt", root / "alias.txt")
    assert reader.invoke({"path": "alias.txt"}) == "hello\n"


@pytest.mark.parametrize("path", ["../outside/secret.txt", "sub/../../outside/secret.txt", "..", "../nope.txt"])
def test_read_file_refuses_dotdot_traversal(reader: BaseTool, path: str) -> None:
    """'..' that leaves the root is refused (whether or not the target exists)."""
    with pytest.raises(FileAccessError, match="outside the allowed folder"):
        reader.invoke({"path": path})


def test_read_file_refuses_absolute_paths_outside(reader: BaseTool, sandbox: tuple[Path, Path]) -> None:
    """An absolute path outside the root is refused."""
    _, outside = sandbox
    with pytest.raises(FileAccessError, match="outside the allowed folder"):
        reader.invoke({"path": str(outside / "secret.txt")})
    with pytest.raises(FileAccessError, match="outside the allowed folder"):
        reader.invoke({"path": os.path.abspath(os.sep)})


def test_read_file_refuses_symlink_to_outside(reader: BaseTool, sandbox: tuple[Path, Path]) -> None:
    """A symlink inside the root pointing to a file outside it is refused."""
    root, outside = sandbox
    _symlink(outside / "secret.txt", root / "leak.txt")
    with pytest.raises(FileAccessError, match="outside the allowed folder") as info:
        reader.invoke({"path": "leak.txt"})
    assert "SECRET" not in str(info.value)


def test_read_file_refuses_symlinked_directory_to_outside(reader: BaseTool, sandbox: tuple[Path, Path]) -> None:
    """A symlinked parent folder pointing outside the root is refused for every file under it."""
    root, outside = sandbox
    _symlink(outside, root / "linked", target_is_directory=True)
    for path in ["linked/secret.txt", "linked/missing.txt", "sub/../linked/secret.txt"]:
        with pytest.raises(FileAccessError, match="outside the allowed folder"):
            reader.invoke({"path": path})


def test_read_file_root_given_through_a_symlink(sandbox: tuple[Path, Path], tmp_path: Path) -> None:
    """A root that is itself a symlink works, and still confines reads to the real folder."""
    root, _ = sandbox
    _symlink(root, tmp_path / "root-link", target_is_directory=True)
    tool = make_read_file_tool(tmp_path / "root-link", lang="en")
    assert tool.invoke({"path": "a.txt"}) == "hello\n"
    with pytest.raises(FileAccessError, match="outside"):
        tool.invoke({"path": "../outside/secret.txt"})


def test_read_file_missing_file_and_directory(reader: BaseTool) -> None:
    """A missing file, a directory and an empty path raise clear errors."""
    with pytest.raises(FileAccessError, match=re.escape("file 'nope.txt' not found")):
        reader.invoke({"path": "nope.txt"})
    with pytest.raises(FileAccessError, match="'sub' is a directory"):
        reader.invoke({"path": "sub"})
    with pytest.raises(FileAccessError, match="must not be empty"):
        reader.invoke({"path": "  "})
    with pytest.raises(FileAccessError, match="invalid path"):
        reader.invoke({"path": "a\x00.txt"})


def test_read_file_truncates_large_files_with_a_marker(sandbox: tuple[Path, Path]) -> None:
    """A file over max_bytes is cut at a character boundary and a truncation marker is appended."""
    root, _ = sandbox
    (root / "big.txt").write_bytes(("я" * 60).encode("utf-8"))  # 120 bytes
    tool = make_read_file_tool(root, lang="en", max_bytes=51)
    text, marker = tool.invoke({"path": "big.txt"}).rsplit("\n", 1)
    assert text == "я" * 25  # 51 bytes end in half a character, which is dropped
    assert marker == "[... truncated: showing the first 51 of 120 bytes]"


def test_read_file_decodes_invalid_utf8_with_replacement(sandbox: tuple[Path, Path]) -> None:
    """Bytes that are not UTF-8 become U+FFFD instead of failing; an empty file says so."""
    root, _ = sandbox
    (root / "bin.dat").write_bytes(b"ok\xff\xfeok")
    (root / "empty.txt").write_bytes(b"")
    tool = make_read_file_tool(root, lang="en")
    assert tool.invoke({"path": "bin.dat"}) == "ok\ufffd\ufffdok"
    assert tool.invoke({"path": "empty.txt"}) == "(the file is empty)"


def test_read_file_refuses_a_missing_root(tmp_path: Path) -> None:
    """Building read_file with a root that does not exist is a ConfigError."""
    with pytest.raises(ConfigError, match="does not exist"):
        make_read_file_tool(tmp_path / "missing")
