"""The embedded model's value-form techniques: Russian names and places in the nominative, numbers with their
scale word. Both change a value only when the task proves it was copied in another form, and keep correct calls."""

from __future__ import annotations

from typing import Any

import pytest

from react_agent._types import CallContext, ToolInfo
from react_agent.models import LocalChatModel
from react_agent.models.local._morphology import available, nominative
from react_agent.models.local._numbers import scaled, scaled_amounts
from react_agent.models.local._pipeline import nominative_values, scaled_numbers

pytestmark = pytest.mark.skipif(not available(), reason="pymorphy3 (the local extra) is not installed")

INFLECTED = [
    ("Ивану", "Напиши Ивану в чат, что созвон переносится", "Иван"),
    ("Казани", "Какая сейчас погода в Казани?", "Казань"),
    ("Нижнем Новгороде", "Какая погода в Нижнем Новгороде?", "Нижний Новгород"),
    ("Санкт-Петербурге", "Найди кофейни в Санкт-Петербурге", "Санкт-Петербург"),
    ("Смирновой", "Покажи открытые заявки Смирновой", "Смирнова"),
    ("Елены Васильевой", "Какой телефон у Елены Васильевой?", "Елена Васильева"),
    ("Сергея Новикова", "Найди Сергея Новикова и создай сделку", "Сергей Новиков"),
    ("Анной", "Назначь созвон с Анной и Олегом", "Анна"),
    ("Олегом", "Назначь созвон с Анной и Олегом", "Олег"),
    ("/Входящих", "Перенеси счёт из Входящих в Бухгалтерию", "/Входящие"),
    ("планёрку", "Поставь планёрку на 10 марта", "планёрка"),
    ("планерку", "Поставь планёрку на 10 марта", "планерка"),  # ё only where the value writes it
    ("ИВАНУ", "Напиши Ивану", "ИВАН"),
    ("переговорной 2", "Встреча в переговорной 2", "переговорная 2"),    # a number in the name stays
    ("Переговорной №2", "Встреча в Переговорной №2", "Переговорная №2"),
]


@pytest.mark.parametrize(("value", "task", "expected"), INFLECTED)
def test_a_name_or_place_copied_inflected_from_the_task_is_put_in_the_nominative(
        value: str, task: str, expected: str) -> None:
    assert nominative(value, task) == expected


def test_a_name_beside_another_name_agrees_with_it() -> None:
    text = "Добавь в контакты Дмитрия Орлова из компании Сфера"
    assert (nominative("Дмитрия", text), nominative("Орлова", text)) == ("Дмитрий", "Орлов")
    text = "Заведи контакт: Ольга Белова, почта olga@example.org"
    assert (nominative("Ольга", text), nominative("Белова", text)) == ("Ольга", "Белова")  # already nominative
    assert nominative("Петрову", "Напиши Ивану Петрову") == "Петров"


def test_after_a_preposition_the_case_the_preposition_governs_decides_an_ambiguous_form() -> None:
    assert nominative("Петрова", "Назначь тикет 17 на Петрова") == "Петров"        # на + accusative: him
    assert nominative("Соколову", "Переназначь тикет на Соколову") == "Соколова"   # на + accusative: her


KEPT = [
    ("Петрова", "Петрова Анна пришла на встречу"),      # a woman's surname in the nominative
    ("Морозова", "Найди контакт Морозова"),              # may be a woman's surname: not proved inflected
    ("Документы", "Покажи, что лежит в папке Документы"),
    ("рецепт борща", "Найди в интернете рецепт борща"),  # a genitive after a nominative head is right
    ("Ромашка", "Создай сделку с компанией Ромашка"),
    ("отчёт по продажам", "Не открывается отчёт по продажам"),
    ("Ивану", "Напиши письмо"),                          # not in the text: made up, not copied
    ("2", "в комнате 2"),                                   # no word at all
    ("Moscow", "погода в Москве"),
    ("", "в Москве"),
]


@pytest.mark.parametrize(("value", "task"), KEPT)
def test_values_not_proved_inflected_are_left_as_they_are(value: str, task: str) -> None:
    assert nominative(value, task) == value


def test_nominative_values_walk_objects_and_lists_and_leave_fixed_forms_alone() -> None:
    schema = {"type": "object", "properties": {
        "attendees": {"type": "array", "items": {"type": "string"}},
        "city": {"type": "string", "enum": ["Казани", "Москва"]},
        "meta": {"type": "object", "properties": {"owner": {"type": "string"}}},
        "count": {"type": "integer"}}}
    args = {"attendees": ["Анной", "Олегом"], "city": "Казани", "meta": {"owner": "Ивану"}, "count": 2}
    text = "Созвон с Анной и Олегом в Казани, отчёт Ивану"
    assert nominative_values(args, schema, text) == {
        "attendees": ["Анна", "Олег"], "city": "Казани", "meta": {"owner": "Иван"}, "count": 2}


# --------------------------------------------------------------------------- numbers with a scale word
def test_scale_words_in_both_languages_are_read() -> None:
    text = "на 150 тысяч рублей, бюджет 2,5 млн, 3 million users, 7 тыс. шагов, 1.5 billion"
    assert scaled_amounts(text) == [(150, 150_000), (2.5, 2_500_000), (3, 3_000_000), (7, 7_000), (1.5, 1.5e9)]


def test_a_number_copied_without_its_scale_word_gets_the_phrase_value() -> None:
    assert scaled(150, "Создай сделку на 150 тысяч рублей", integer=True) == 150_000
    assert scaled(2.5, "бюджет 2,5 млн", integer=False) == 2_500_000


def test_scale_words_after_spelled_numbers_are_read() -> None:
    text = "в ста тысячах рублей, two hundred thousand euros, полтора миллиона, a hundred thousand dollars"
    assert scaled_amounts(text) == [(100, 100_000), (200, 200_000), (1.5, 1_500_000), (100, 100_000)]


@pytest.mark.parametrize(("value", "text", "full"), [
    (1000, "Сколько евро в ста тысячах рублей?", 100_000),       # the scale kept, the spelled number dropped
    (100, "Сколько евро в ста тысячах рублей?", 100_000),        # the number kept, the scale dropped
    (200, "Open a deal for two hundred thousand euros", 200_000),
    (1000, "How many yen is a hundred thousand dollars?", 100_000),
    (10_000, "Сколько евро в ста тысячах рублей?", 100_000),     # zeros lost
    (15_000, "сделка на 150 тысяч рублей", 150_000),
    (1000, "сделка на 150 тысяч рублей", 150_000),
    (1.5, "бюджет полтора миллиона", 1_500_000),
])
def test_a_number_that_reads_half_of_a_scaled_phrase_gets_its_value(value: float, text: str, full: float) -> None:
    assert scaled(value, text, integer=False) == full


@pytest.mark.parametrize(("value", "text"), [
    (150_000, "Создай сделку на 150 тысяч рублей"),   # already right
    (100_000, "Сколько евро в ста тысячах рублей?"),  # already right
    (1000, "a thousand dollars and 5 thousand more"),  # the text writes a thousand on its own
    (1000, "one thousand"),                           # the whole phrase's value
    (100, "сто рублей и сто тысяч долларов"),          # сто on its own too
    (90, "длительность полтора часа"),                 # no scale word: left as it is
    (3000, "сделка на 150 тысяч рублей"),              # neither a part of 150000 nor it with zeros lost
    (300_000, "сделка на 150 тысяч рублей"),           # more than the phrase: computed, not misread
    (150, "150 тысяч акций по 150 рублей"),           # the text writes 150 on its own too
    (5, "пробежка 5k, потом 5m"),                      # k and m: kilometres as often as thousands
    (12, "скидка 12 процентов"),
    (2, "бюджет 2,5 млн"),
])
def test_numbers_the_text_does_not_prove_scaled_are_kept(value: float, text: str) -> None:
    assert scaled(value, text, integer=False) is None


def test_scaled_numbers_follow_the_schema_types() -> None:
    schema = {"type": "object", "properties": {"amount": {"type": "integer"}, "code": {"type": "string"},
                                               "level": {"type": "integer", "enum": [3, 3000]},
                                               "share": {"type": "number"}}}
    text = "сделка на 150 тысяч, уровень 3 тыс., доля 0,5 млн"
    args = {"amount": 150, "code": "150", "level": 3, "share": 0.5, "other": 150}
    assert scaled_numbers(args, schema, text) == {"amount": 150_000, "code": "150", "level": 3,
                                                  "share": 500_000, "other": 150}


@pytest.mark.parametrize(("kind", "value"), [("integer", 1000), ("number", 1000), ("number", 1000.0), ("number", 100)])
def test_a_spelled_scaled_phrase_fixes_ints_and_floats_alike(kind: str, value: float) -> None:
    schema = {"type": "object", "properties": {"amount": {"type": kind}}}
    fixed = scaled_numbers({"amount": value}, schema, "Сколько евро в ста тысячах рублей?")
    assert fixed == {"amount": 100_000}
    assert type(fixed["amount"]) is (int if kind == "integer" or isinstance(value, int) else float)


# --------------------------------------------------------------------------- through the model's pipeline
def test_the_default_pipeline_fixes_copied_forms_and_keeps_correct_calls() -> None:
    tool = ToolInfo(name="create_deal", parameters={"type": "object", "properties": {
        "company": {"type": "string"}, "amount": {"type": "integer"}}})
    context = CallContext(task="Открой сделку с Горизонтом на 200 тысяч долларов", tools=(tool,))
    model = LocalChatModel()
    wrong = {"thought": "", "action": "create_deal", "action_input": {"company": "Горизонтом", "amount": 200}}
    right = {"thought": "", "action": "create_deal", "action_input": {"company": "Горизонт", "amount": 200_000}}
    assert model.after_decoding(wrong, context) == right
    assert model.after_decoding(right, context) == right
    finish: dict[str, Any] = {"thought": "", "action": "FINISH", "action_input": "Горизонтом 200"}
    assert model.after_decoding(finish, context) == finish
    off = LocalChatModel(techniques=["unique_items"])
    assert off.after_decoding(wrong, context) == wrong
