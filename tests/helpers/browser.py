"""A real headless Chromium for the page and view tests (Debian's ``chromium`` and ``chromium-driver``, driven
by selenium), or a skip that says what to install. Screenshots go to the test's folder, and to docs/img/
when ``SAVE_SCREENSHOTS=1`` (how the pictures of docs/serving.md are made)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINARIES = ("chromium", "chromedriver")
WAIT_S = 30.0


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    absent = [name for name in BINARIES if shutil.which(name) is None]
    if absent:
        return f"{' and '.join(absent)} not found (apt-get install chromium chromium-driver; .ci/setup does it as root)"
    return None


def chromium() -> Iterator[Any]:
    """A headless Chromium driver for the life of a test (``yield from chromium()`` in a fixture), or a skip."""
    reason = _missing()
    if reason:
        pytest.skip(f"browser tests need a headless Chromium: {reason}")
    os.environ.setdefault("SE_AVOID_STATS", "true")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(shutil.which("chromium"))
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,860", "--no-first-run", "--disable-extensions",
                     "--disable-background-networking"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(shutil.which("chromedriver"))), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(check: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    """Poll ``check()`` until it returns something truthy; fail with ``what`` after ``timeout``."""
    from selenium.common.exceptions import WebDriverException

    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except WebDriverException as exc:
            last = exc
        else:
            if last:
                return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


def screenshot(driver: Any, folder: Path, name: str) -> Path:
    """Save a PNG of the window; check it is one (non-empty, PNG signature)."""
    path = folder / name
    driver.save_screenshot(str(path))
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 5000
    if os.environ.get("SAVE_SCREENSHOTS") == "1":
        shutil.copyfile(path, ROOT / "docs" / "img" / name)
    return path
