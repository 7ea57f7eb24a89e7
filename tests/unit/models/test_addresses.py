"""E-mail addresses and URIs found in a text: the same as the patterns' ``findall``, in time linear in the text.

A tool result may hold a token of hundreds of kilobytes (base64, a hex dump); the address techniques read every
observation before each decision, so a search that re-scans the token from each position would stall the run.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from react_agent.models.local._addresses import EMAIL, URI, email_addresses, email_words, is_email_word, uris
from react_agent.models.local._pipeline import context_addresses, email_arguments
from react_agent.tools import call_within

_PIECES = [*"ab1.@:/ \n\"(),;!?-+'`<>\\яé", "://", "a@b.c", "http://x", "ab.cd"]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_email_addresses_are_what_the_pattern_finds(text: str) -> None:
    assert email_addresses(text) == EMAIL.findall(text)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_uris_are_what_the_pattern_finds(text: str) -> None:
    assert uris(text) == URI.findall(text)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_words_with_an_at_sign_and_their_verdicts_are_the_patterns(text: str) -> None:
    assert email_words(text) == re.findall(r"\S*@\S*", text)
    assert [is_email_word(word) for word in email_words(text)] == \
        [EMAIL.search(word) is not None for word in email_words(text)]


def test_addresses_in_ordinary_text_are_found_as_written() -> None:
    text = "Write to ann@mail.org (cc: bob.lee@x.io), see https://example.com/a?b=1. Not: example@.com"
    assert email_addresses(text) == ["ann@mail.org", "bob.lee@x.io"]
    assert uris(text) == ["https://example.com/a?b=1"]
    assert [is_email_word(word) for word in email_words(text)] == [True, True, False]


def test_a_huge_token_in_an_observation_is_read_in_linear_time() -> None:
    blob = "A" * 400_000  # one base64-like token: a quadratic search takes many minutes on it
    text = f"Task: mail ann@mail.org the file\n\n{blob}@{blob} {blob}://{blob}"
    schema = {"type": "object", "properties": {"to": {"type": "string", "format": "email"},
                                                "link": {"type": "string", "format": "uri"}}}
    found = call_within(lambda: context_addresses(schema, text), 60)
    assert found["properties"]["to"]["enum"] == ["ann@mail.org"]
    assert uris(text) == [f"{blob}://{blob}"]
    email_schema = {"type": "object", "properties": {"email": {"type": "string"}}}
    assert call_within(lambda: email_arguments(email_schema, text), 60) == email_schema  # the blob@blob word
