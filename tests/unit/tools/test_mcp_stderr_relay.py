"""The stderr of an MCP server react_agent starts goes to logging: its INFO/DEBUG records at DEBUG, the rest at
WARNING; the mcp library's logger is quiet unless the application configured it."""

from __future__ import annotations

import logging

import pytest

from react_agent.tools._mcp import relay_lines

RICH = ["[12/01/26 22:49:18] INFO     Processing request of type            server.py:733\n",
        "                             ListToolsRequest                                   \n",
        "                    INFO     Processing request of type            server.py:733\n",
        "                             CallToolRequest                                    \n"]


def relayed(lines: list[str], caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="react_agent"):
        relay_lines(lines, "srv")
    return [(r.levelno, r.getMessage()) for r in caplog.records]


def test_info_records_and_their_continuations_go_to_debug(caplog: pytest.LogCaptureFixture) -> None:
    records = relayed(RICH, caplog)
    assert [level for level, _ in records] == [logging.DEBUG] * 4
    assert records[1][1] == "MCP server srv: ListToolsRequest"


@pytest.mark.parametrize("line", ["INFO:mcp.server.lowlevel:Processing request", "DEBUG started",
                                  "2026-12-01 22:49:18,123 INFO ready", "  [10:01] DEBUG   x"])
def test_other_info_formats_go_to_debug(line: str, caplog: pytest.LogCaptureFixture) -> None:
    assert [level for level, _ in relayed([line], caplog)] == [logging.DEBUG]


def test_warnings_errors_and_untagged_lines_stay_visible(caplog: pytest.LogCaptureFixture) -> None:
    lines = [*RICH[:2], "Traceback (most recent call last):\n", '  File "server.py", line 3\n',
             "ValueError: boom\n", "[12/01/26 22:49:19] WARNING  disk almost full\n", "   continued\n",
             "Secure MCP Filesystem Server running on stdio\n", "\n", "   \n"]
    records = relayed(lines, caplog)
    assert [level for level, _ in records] == [logging.DEBUG] * 2 + [logging.WARNING] * 6
    assert records[3][1] == 'MCP server srv: File "server.py", line 3'


def test_opening_mcp_tools_raises_the_mcp_logger_only_when_unset() -> None:
    pytest.importorskip("mcp")
    from react_agent.mcp import mcp_tools

    mcp_logger = logging.getLogger("mcp")
    old = mcp_logger.level
    try:
        for before, after in ((logging.NOTSET, logging.WARNING), (logging.INFO, logging.INFO)):
            mcp_logger.setLevel(before)
            tools = mcp_tools("no-such-command-react-agent-test", startup_timeout=5)
            with pytest.raises(Exception):  # noqa: B017 - the server cannot start; the level is set first
                tools.open()
            assert mcp_logger.level == after
    finally:
        mcp_logger.setLevel(old)


def test_a_server_flooding_stderr_with_a_huge_line_does_not_block() -> None:
    """A server writing 4 MB on one stderr line, then exiting: the relay reads it in pieces and the server
    is not blocked on a full pipe (the run ends)."""
    import os
    import threading

    from react_agent.tools import _mcp

    read_fd, write_fd = os.pipe()
    reader = threading.Thread(target=_mcp._relay_pipe, args=(read_fd, "flood"), daemon=True)
    reader.start()
    with open(write_fd, "wb") as pipe:
        pipe.write(b"x" * 4_000_000 + b"\nINFO done\n")
    reader.join(timeout=30)
    assert not reader.is_alive()
