"""Saved prompt prefixes: a context about to be overwritten is saved, and loaded back when a later prompt shares
more of it than the cache does, so prompts that come in families evaluate each family's static part once."""

from __future__ import annotations

from typing import Any

from react_agent.models.local._prefix import MAX_SAVED, MIN_SAVED_TOKENS, SavedPrefixes, saved_prefixes


class Context:
    """A stand-in model context: the tokens it holds; snapshots are copies of them."""

    def __init__(self) -> None:
        self.held: list[int] = []
        self.snapshots = 0

    @staticmethod
    def longest_token_prefix(a: list[int], b: list[int]) -> int:
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def saved() -> SavedPrefixes:
    def snapshot(ctx: Context) -> list[int]:
        ctx.snapshots += 1
        return list(ctx.held)

    def restore(ctx: Context, tokens: list[int], state: list[int]) -> None:
        assert tokens == state  # the context saved with these tokens
        ctx.held = list(tokens)

    return SavedPrefixes(snapshot, restore)


def family(tag: int, task: int, size: int = 2 * MIN_SAVED_TOKENS) -> list[int]:
    """A prompt of one family: ``size`` static tokens of the family, then the task's tokens."""
    return [tag] * size + [1000 + task] * 5


def complete(store: SavedPrefixes, ctx: Context, tokens: list[int]) -> int:
    reused = store.prepare(ctx, ctx.held, tokens)
    ctx.held = [*tokens, 7, 7]  # the prompt and the tokens generated after it
    return reused


def test_switching_between_two_prompt_families_reuses_each_familys_static_part() -> None:
    store, ctx = saved(), Context()
    size = 2 * MIN_SAVED_TOKENS
    assert complete(store, ctx, family(1, 1)) == 0
    assert complete(store, ctx, family(2, 1)) == 0              # first time: evaluated; family 1 is saved
    assert complete(store, ctx, family(1, 2)) == size           # family 1 loaded back: only the task is new
    assert complete(store, ctx, family(2, 2)) == size
    assert complete(store, ctx, family(1, 3)) == size
    assert len(store.states) == 2                                # one saved context per family


def test_the_cache_own_prefix_wins_and_nothing_is_saved_while_prompts_only_grow() -> None:
    store, ctx = saved(), Context()
    first = family(1, 1)
    complete(store, ctx, first)
    longer = [*first, 7, 7, 3, 3, 3]
    assert complete(store, ctx, longer) == len(first) + 2
    assert ctx.snapshots == 0 and store.states == []


def test_short_contexts_are_not_saved_and_the_number_of_saved_ones_is_bounded() -> None:
    store, ctx = saved(), Context()
    complete(store, ctx, [5] * 10)
    complete(store, ctx, [6] * 10)
    assert ctx.snapshots == 0
    for tag in range(10, 10 + MAX_SAVED + 3):
        complete(store, ctx, family(tag, 1))
    assert len(store.states) == MAX_SAVED


def test_only_real_llama_models_get_saved_prefixes() -> None:
    stand_in: Any = Context()
    assert saved_prefixes(stand_in) is None
