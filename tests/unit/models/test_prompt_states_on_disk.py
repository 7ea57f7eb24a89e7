"""Prompt states kept on disk: a later process loads the context an earlier one evaluated, and the folder is a
cache that never fails a completion (damaged, foreign, unwritable or crowded folders)."""

from __future__ import annotations

import logging
import os
import struct
from pathlib import Path
from typing import Any

import pytest

from react_agent import ConfigError
from react_agent.models import LocalChatModel, default_prompt_cache_dir
from react_agent.models.local._prefix import MAX_DISK, MIN_DISK_TOKENS, DiskPrefixes


class Context:
    """A stand-in model context: the tokens it holds; a state is the tokens as bytes."""

    def __init__(self, held: list[int] | None = None) -> None:
        self.input_ids = list(held or [])
        self.n_tokens = len(self.input_ids)
        self.loaded: list[list[int]] = []

    @staticmethod
    def longest_token_prefix(a: list[int], b: list[int]) -> int:
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def snapshot(ctx: Context) -> bytes:
    return b"state:" + bytes(str(ctx.input_ids[: ctx.n_tokens]), "ascii")


def restore(ctx: Context, tokens: list[int], data: bytes) -> None:
    if data != b"state:" + bytes(str(tokens), "ascii"):
        raise RuntimeError("llama.cpp could not load a saved prompt prefix")
    ctx.input_ids, ctx.n_tokens = list(tokens), len(tokens) - 1
    ctx.loaded.append(list(tokens))


def disk(folder: Path) -> DiskPrefixes:
    return DiskPrefixes(folder, snapshot, restore)


def prompt(tag: int, task: int, size: int = 2 * MIN_DISK_TOKENS) -> list[int]:
    """``size`` static tokens of one family, then the task's."""
    return [tag] * size + [1000 + task] * 5


def test_a_later_process_loads_the_evaluated_prefix_instead_of_evaluating_it(tmp_path: Path) -> None:
    first = prompt(1, 1)
    disk(tmp_path).save(Context([*first, 7, 7]))
    ctx = Context()  # another process: nothing in its cache
    reused = disk(tmp_path).restore(ctx, prompt(1, 2), 0)
    assert reused == 2 * MIN_DISK_TOKENS  # the static part; the task's tokens are evaluated
    assert ctx.loaded == [[*first, 7, 7]]


def test_a_state_that_spares_too_little_is_not_loaded(tmp_path: Path) -> None:
    disk(tmp_path).save(Context(prompt(1, 1)))
    ctx = Context()
    assert disk(tmp_path).restore(ctx, prompt(1, 2), MIN_DISK_TOKENS + 10) == MIN_DISK_TOKENS + 10
    assert disk(tmp_path).restore(ctx, prompt(2, 1), 0) == 0  # another family shares nothing
    assert ctx.loaded == []


def test_the_state_sharing_the_most_is_loaded(tmp_path: Path) -> None:
    store = disk(tmp_path)
    short, long = prompt(1, 1, MIN_DISK_TOKENS), prompt(1, 1, 3 * MIN_DISK_TOKENS)
    store.save(Context(short))
    store.save(Context(long))
    ctx = Context()
    assert store.restore(ctx, prompt(1, 2, 3 * MIN_DISK_TOKENS), 0) == 3 * MIN_DISK_TOKENS
    assert ctx.loaded == [long]


def test_a_damaged_state_is_deleted_and_the_prompt_evaluated(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    disk(tmp_path).save(Context(prompt(1, 1)))
    (path,) = tmp_path.glob("*.state")
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0xFF
    path.write_bytes(bytes(raw))
    ctx = Context()
    with caplog.at_level(logging.WARNING, logger="react_agent.models.local._prefix"):
        assert disk(tmp_path).restore(ctx, prompt(1, 2), 0) == 0
    assert ctx.loaded == [] and not path.exists() and "damaged" in caplog.text


HUGE_COUNT = [DiskPrefixes.MAGIC + struct.pack("<Q", count) + bytes(32) + b"tail" for count in (2**61, 2**40, 2)]
"""Headers whose token count no file holds (no index fits it, terabytes), and one longer than this file."""


@pytest.mark.parametrize("content", [b"", b"not a state", DiskPrefixes.MAGIC + b"\x05", *HUGE_COUNT],
                         ids=["empty", "text", "cut-header", "count-2**61", "count-2**40", "count-past-the-end"])
def test_a_file_that_is_not_a_state_is_deleted(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "x.state").write_bytes(content)
    assert disk(tmp_path).restore(Context(), prompt(1, 1), 0) == 0
    assert not (tmp_path / "x.state").exists()


def test_a_state_llama_cpp_refuses_leaves_an_empty_context(tmp_path: Path) -> None:
    def refuse(ctx: Context, tokens: list[int], data: bytes) -> None:
        ctx.input_ids, ctx.n_tokens = [9] * 50, 50  # half overwritten
        raise RuntimeError("llama.cpp could not load a saved prompt prefix")

    disk(tmp_path).save(Context(prompt(1, 1)))
    ctx = Context(prompt(1, 1)[:20])
    assert DiskPrefixes(tmp_path, snapshot, refuse).restore(ctx, prompt(1, 2), 20) == 0
    assert ctx.n_tokens == 0 and list(tmp_path.glob("*.state")) == []


def test_the_least_recently_used_states_beyond_the_limit_are_deleted(tmp_path: Path) -> None:
    store = disk(tmp_path)
    for tag in range(MAX_DISK):
        store.save(Context(prompt(tag, 1)))
    oldest = min(tmp_path.glob("*.state"), key=lambda p: p.stat().st_mtime_ns)
    os.utime(oldest, ns=(1, 1))
    second = min((p for p in tmp_path.glob("*.state") if p != oldest), key=lambda p: p.stat().st_mtime_ns)
    os.utime(second, ns=(2, 2))
    assert store.restore(Context(), prompt(0, 2), 0) == 2 * MIN_DISK_TOKENS  # family 0 used: it is recent now
    store.save(Context(prompt(MAX_DISK, 1)))
    kept = list(tmp_path.glob("*.state"))
    assert len(kept) == MAX_DISK and oldest.exists() != second.exists()
    assert store.restore(Context(), prompt(0, 3), 0) == 2 * MIN_DISK_TOKENS


def test_a_folder_that_cannot_be_written_is_logged_not_raised(tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with caplog.at_level(logging.WARNING, logger="react_agent.models.local._prefix"):
        disk(blocked).save(Context(prompt(1, 1)))
        assert disk(blocked).restore(Context(), prompt(1, 1), 0) == 0
    assert "cannot write" in caplog.text


def test_a_half_written_file_of_another_process_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "abc.partial").write_bytes(DiskPrefixes.MAGIC)
    assert disk(tmp_path).restore(Context(), prompt(1, 1), 0) == 0
    assert (tmp_path / "abc.partial").exists()


def test_states_are_kept_apart_by_model_file_and_context_size(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"weights")

    class Llama:
        model_path = str(model)

        def __init__(self, n_ctx: int) -> None:
            self.size = n_ctx

        def n_ctx(self) -> int:
            return self.size

    pytest.importorskip("llama_cpp")
    a, b = DiskPrefixes.of(Llama(4096), tmp_path / "states"), DiskPrefixes.of(Llama(2048), tmp_path / "states")
    assert a.folder != b.folder and a.folder.parent == tmp_path / "states"
    model.write_bytes(b"other weights")
    assert DiskPrefixes.of(Llama(4096), tmp_path / "states").folder != a.folder


@pytest.mark.parametrize("bad", [3, b"/tmp", "  ", ["x"]])
def test_a_prompt_cache_dir_that_is_not_a_folder_path_is_a_config_error(bad: Any) -> None:
    with pytest.raises(ConfigError, match="prompt_cache_dir"):
        LocalChatModel(prompt_cache_dir=bad)


def test_prompt_states_stay_in_memory_unless_a_folder_is_given(tmp_path: Path) -> None:
    assert LocalChatModel().prompt_cache_dir is None
    assert LocalChatModel(prompt_cache_dir=tmp_path).prompt_cache_dir == str(tmp_path)
    assert default_prompt_cache_dir().parts[-2:] == ("react-agent", "prompts")


def test_a_state_too_large_for_the_disk_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import react_agent.models.local._prefix as prefix

    monkeypatch.setattr(prefix, "MAX_DISK_STATE_BYTES", 100)
    disk(tmp_path).save(Context(prompt(1, 1)))  # its state is 2,600 bytes here
    assert list(tmp_path.glob("*")) == []


def test_a_file_left_half_written_by_a_dead_process_is_deleted_later(tmp_path: Path) -> None:
    dead, live = tmp_path / "dead.partial", tmp_path / "live.partial"
    dead.write_bytes(DiskPrefixes.MAGIC)
    live.write_bytes(DiskPrefixes.MAGIC)
    os.utime(dead, (1, 1))
    disk(tmp_path).save(Context(prompt(1, 1)))
    assert not dead.exists() and live.exists()  # another process may be writing this one now
    assert len(list(tmp_path.glob("*.state"))) == 1


def test_two_processes_keeping_the_same_prompt_leave_one_whole_file(tmp_path: Path) -> None:
    import threading

    contexts = [Context([*prompt(1, 1), 7]) for _ in range(8)]
    threads = [threading.Thread(target=disk(tmp_path).save, args=(ctx,)) for ctx in contexts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(list(tmp_path.glob("*.state"))) == 1 and list(tmp_path.glob("*.partial")) == []
    assert disk(tmp_path).restore(Context(), prompt(1, 2), 0) == 2 * MIN_DISK_TOKENS


def test_a_kept_state_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    disk(tmp_path / "states").save(Context(prompt(1, 1)))
    (path,) = (tmp_path / "states").glob("*.state")
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "states").stat().st_mode & 0o777 == 0o700


class Chars(Context):
    """A stand-in tokenizer: one token a character, no BOS."""

    @staticmethod
    def token_bos() -> int:
        return -1

    @staticmethod
    def tokenize(text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return list(text)


@pytest.mark.parametrize(("task", "static"), [
    ("find Anna", len("Tools: ...\nExamples: ...\nTask: ")),
    ("Task", len("Tools: ...\nExamples: ...\n")),  # a task the prompt writes earlier: only what precedes it
    ("", 0), ("   ", 0), ("not in the prompt", 0), ("Tools", 0)])
def test_the_static_part_ends_where_the_prompt_first_writes_the_task(task: str, static: int) -> None:
    from react_agent.models.local._prefix import static_tokens

    text = "Tools: ...\nExamples: ...\nTask: find Anna\nHistory: Result of find: Anna, anna@x.org"
    assert static_tokens(Chars(), text, list(text.encode()), task) == static
