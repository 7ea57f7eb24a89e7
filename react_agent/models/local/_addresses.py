"""E-mail addresses and URIs a text writes, found in time linear in the text's length.

The patterns are :data:`EMAIL` and :data:`URI`; ``pattern.findall(text)`` gives the same list, but a regular
expression engine tries every start position and re-scans a long run of word characters from each, so a tool
result holding a 100 KB token (base64, a hex dump, a long path) took minutes. Here a match is tried only where one
can start: an e-mail address at the start of a run of address characters, after a previous match, or right after an
``@``; a URI at the first letter of the scheme characters before a ``://``.
"""

from __future__ import annotations

import re

__all__ = ["EMAIL", "URI", "email_addresses", "email_words", "is_email_word", "uris"]

_EMAIL_CHAR = r'[^@\s"\\<>(),;:]'
EMAIL = re.compile(rf'{_EMAIL_CHAR}+@{_EMAIL_CHAR}+\.[^@\s"\\<>(),;:.]+')
"""An e-mail address: ``local@domain.tld``, without blanks, quotes, brackets or separators."""
URI = re.compile(r'[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"\\<>]+[^\s"\\<>.,;:!?)]')
"""A URI with a scheme: ``scheme://rest``, not ending in punctuation."""

_RUN = re.compile(r'[^\s"\\<>(),;:]+')
_WORD = re.compile(r"\S+")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_SCHEME_CHARS = _LETTERS | frozenset("0123456789+.-")


def email_addresses(text: str) -> list[str]:
    """``EMAIL.findall(text)``, in linear time."""
    found: list[str] = []
    for run in _RUN.finditer(text):
        if "@" in run.group():
            found += _emails_in(run.group())
    return found


def _emails_in(run: str) -> list[str]:
    """The addresses of one run of address characters and ``@``. A match that fails at a position fails at every
    later position before the next ``@`` too (the local part reaches that ``@`` either way), so the next try is
    right after it."""
    found: list[str] = []
    pos = 0
    while pos < len(run):
        match = EMAIL.match(run, pos)
        if match is not None:
            found.append(match.group())
            pos = match.end()
            continue
        at = run.find("@", pos)
        if at < 0:
            break
        pos = at + 1
    return found


def is_email_word(word: str) -> bool:
    """Whether the blank-free ``word`` holds an address :data:`EMAIL` admits (``EMAIL.search(word)``)."""
    return any(_emails_in(run.group()) for run in _RUN.finditer(word) if "@" in run.group())


def email_words(text: str) -> list[str]:
    """The blank-free words of ``text`` that hold an ``@`` (``re.findall(r"\\S*@\\S*", text)``), in linear time."""
    return [word.group() for word in _WORD.finditer(text) if "@" in word.group()]


def uris(text: str) -> list[str]:
    """``URI.findall(text)``, in linear time: a match can start only at the first letter of the scheme characters
    that run up to a ``://`` (its tail after ``://`` does not depend on where in that run it starts)."""
    found: list[str] = []
    done = 0
    sep = text.find("://")
    while sep >= 0:
        start = sep
        while start > done and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        while start < sep and text[start] not in _LETTERS:
            start += 1
        match = URI.match(text, start) if start < sep else None
        if match is not None:
            found.append(match.group())
            done = match.end()
        sep = text.find("://", max(sep + 1, done))
    return found
