"""The page of `react-agent serve` in a real headless Chromium against a real server: a task typed into the
page shows its steps and answer, an approval clicked in the page lets the tool run, the labels switch to
Russian, and a server with a token takes it from the page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from browser import chromium, screenshot, wait_for
from serve_helpers import Server

TOKEN = "tok-page-5e6f7a8b9c0d"


@pytest.fixture
def browser() -> Any:
    yield from chromium()


@pytest.fixture
def server(tmp_path: Path):
    started = Server(tmp_path).start()
    yield started
    started.stop()


def _open(driver: Any, url: str) -> None:
    driver.get(url + "/")
    wait_for(lambda: driver.find_element("css selector", "body").get_attribute("data-ready") == "true",
             "the page to start")


def _ask(driver: Any, task: str) -> None:
    box = driver.find_element("id", "task")
    box.clear()
    box.send_keys(task)
    driver.find_element("id", "send").click()


def _texts(driver: Any, selector: str) -> list[str]:
    return [e.text for e in driver.find_elements("css selector", selector)]


def test_a_task_typed_into_the_page_shows_its_steps_and_answer(browser: Any, server: Server,
                                                              tmp_path: Path) -> None:
    _open(browser, server.url)
    assert "ReactAgent" in browser.find_element("id", "agent-name").text
    _ask(browser, "TASK[add 2] what is 2 + 3?")
    answer = wait_for(lambda: [t for t in _texts(browser, ".answer") if "ANSWER SUM=5" in t], "the answer")
    assert "finished" in answer[0] and "tokens" in answer[0]
    assert _texts(browser, ".user") == ["TASK[add 2] what is 2 + 3?"]
    assert _texts(browser, ".step-action") == ["add", "FINISH"]
    assert '"a": 2' in _texts(browser, ".step-input")[0]
    assert _texts(browser, ".step-observation")[0] == "SUM=5"
    assert _texts(browser, ".step-thought")[0] == "call add"
    assert all("tokens" in meta for meta in _texts(browser, ".step-meta"))
    wait_for(lambda: any("TASK[add 2]" in t for t in _texts(browser, "#runs li")), "the run in the list")
    screenshot(browser, tmp_path, "serve-page.png")


def test_an_approval_clicked_in_the_page_lets_the_tool_run(browser: Any, server: Server, tmp_path: Path) -> None:
    _open(browser, server.url)
    _ask(browser, "TASK[refund 4417] refund the order")
    approve = wait_for(lambda: browser.find_elements("css selector", ".approval .approve"), "the approval buttons")
    assert "refund" in browser.find_element("css selector", ".approval-call").text
    assert "4417" in browser.find_element("css selector", ".approval-call").text
    assert server.invocations("refund") == []  # nothing runs before the click
    assert _texts(browser, ".run-state") == ["waiting for approval…"]
    screenshot(browser, tmp_path, "serve-approval.png")
    approve[0].click()
    wait_for(lambda: [t for t in _texts(browser, ".answer") if "ANSWER REFUNDED-4417" in t], "the answer")
    assert _texts(browser, ".run-state") == []
    assert _texts(browser, ".approval-decision") == ["approved"]
    assert server.invocations("refund") == ["4417"]


def test_a_deny_clicked_in_the_page_keeps_the_tool_from_running(browser: Any, server: Server) -> None:
    _open(browser, server.url)
    _ask(browser, "TASK[refund 99]")
    wait_for(lambda: browser.find_elements("css selector", ".approval .deny"), "the approval buttons")[0].click()
    wait_for(lambda: [t for t in _texts(browser, ".answer") if "ANSWER refused" in t], "the answer")
    assert _texts(browser, ".approval-decision") == ["denied"]
    assert server.invocations("refund") == []


def test_hostile_tool_output_is_shown_as_text_never_run(browser: Any, server: Server) -> None:
    _open(browser, server.url)
    _ask(browser, "TASK[page p1]")
    wait_for(lambda: [t for t in _texts(browser, ".answer") if "ANSWER PAGE-p1" in t], "the answer")
    observation = _texts(browser, ".step-observation")[0]
    assert observation.startswith('<img src=x onerror="window.pwned=1"><script>')
    assert browser.execute_script("return window.pwned === undefined")
    assert browser.find_elements("css selector", "#conversation img, #conversation script") == []


def test_the_page_follows_a_run_through_a_server_crash_and_restart(browser: Any, tmp_path: Path) -> None:
    first = Server(tmp_path).start()
    _open(browser, first.url)
    _ask(browser, "TASK[both p9]")
    wait_for(lambda: _texts(browser, ".step-action") == ["add"], "the first step on the page")
    wait_for(lambda: first.invocations("write") == ["p9"], "the run inside write_note")
    first.kill()
    second = Server(tmp_path, journal_dir=first.journal_dir, port=first.port).start()
    try:
        wait_for(lambda: second.invocations("write") == ["p9", "p9"], "the resumed run inside write_note")
        second.release("p9")
        wait_for(lambda: [t for t in _texts(browser, ".answer") if "ANSWER WROTE-p9" in t], "the answer")
        assert _texts(browser, ".step-action") == ["add", "write_note", "FINISH"]
        assert "replayed from the journal" in _texts(browser, ".step-meta")[0]
        assert second.invocations("add") == ["1"]
    finally:
        second.stop()


def test_the_page_shows_russian_labels(browser: Any, server: Server) -> None:
    _open(browser, server.url)
    browser.find_element("css selector", '[data-set-lang="ru"]').click()
    assert browser.find_element("id", "send").text == "Отправить"
    assert browser.find_element("id", "task").get_attribute("placeholder") == "Спросите агента…"
    _ask(browser, "TASK[add 1]")
    wait_for(lambda: [t for t in _texts(browser, ".answer") if "ANSWER SUM=4" in t], "the answer")
    assert "завершён" in _texts(browser, ".answer")[0]
    assert _texts(browser, ".step dt span")[:2] == ["Мысль", "Действие"]
    browser.find_element("css selector", '[data-set-lang="en"]').click()
    assert browser.find_element("id", "send").text == "Send"


def test_a_past_run_opens_from_the_list(browser: Any, server: Server) -> None:
    with server.client() as client:
        server.wait_done(client, server.run(client, "TASK[add 7] earlier"))
    _open(browser, server.url)
    item = wait_for(lambda: [e for e in browser.find_elements("css selector", "#runs li") if "earlier" in e.text],
                    "the past run in the list")
    item[0].click()
    wait_for(lambda: [t for t in _texts(browser, ".answer") if "ANSWER SUM=10" in t], "the past run's answer")
    assert _texts(browser, ".step-action") == ["add", "FINISH"]


def test_a_server_with_a_token_takes_it_from_the_page(browser: Any, tmp_path: Path) -> None:
    server = Server(tmp_path, "--token-env", "SERVE_TOKEN", env={"SERVE_TOKEN": TOKEN}, token=TOKEN).start()
    try:
        _open(browser, server.url)
        wait_for(lambda: browser.find_element("id", "notice").is_displayed(), "the token notice")
        token = browser.find_element("id", "token")
        token.send_keys(TOKEN)
        browser.execute_script("arguments[0].dispatchEvent(new Event('change'))", token)
        _ask(browser, "TASK[add 5]")
        wait_for(lambda: [t for t in _texts(browser, ".answer") if "ANSWER SUM=8" in t], "the answer")
    finally:
        server.stop()
