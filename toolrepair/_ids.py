"""Ids for calls toolrepair writes: derived from what they were read from, never random.

The same reply (or record) always gives the same ids, so a retried or replayed turn does not
invent new ones, and any process or engine fixing the same record writes the same ids.
"""

from __future__ import annotations

__all__ = ["stable_id"]


def stable_id(prefix: str, text: str, index: int) -> str:
    """The id of call ``index`` read from ``text``: ``prefix`` and 24 hex digits of a SHA-256.

    >>> stable_id("call_", "hello", 0) == stable_id("call_", "hello", 0) != stable_id("call_", "hello", 1)
    True
    """
    import hashlib  # on first use: hashlib (and OpenSSL behind it) is not a cost of the import

    digest = hashlib.sha256(f"{index}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"{prefix}{digest[:24]}"
