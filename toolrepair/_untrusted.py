"""Texts salvage must refuse (tool results, marked documents), kept as digests only.

A registry's stream learns whether its reply is one of them only at the reply's end, yet with a
model profile it should release each call the moment the call closes. What makes that sound:
with each marked text the digests of its prefixes of 1, 2, 4, 8, ... characters are kept, so a
stream that has read ``n`` characters can tell, in one look-up, whether any marked text begins
with the reply's first ``p`` characters (``p`` the largest power of two ``<= n``). A marked text
equal to the whole reply would; when none does, no later text can make the reply a marked one
(short of a text marked after this moment) and the calls read so far can go.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Final

__all__ = ["MAX_UNTRUSTED", "Marks", "ReplyDigest"]

MAX_UNTRUSTED: Final = 4096
"""Marked texts a registry remembers; past this the oldest is forgotten first, so a
long-running registry cannot grow without limit."""


class ReplyDigest:
    """A running digest of a text fed in pieces, and of its prefixes at each power of two.

    ``digest()`` equals the digest of the whole text fed; ``prefix`` the digest of its first
    ``p`` characters, ``p`` the largest power of two not above its length (None while empty).
    ``prefixes`` (when asked for) collects every such prefix digest in turn. O(len(piece)) per
    piece, plus O(1) per power of two crossed.

    >>> a, b = ReplyDigest(), ReplyDigest()
    >>> a.update("abc"); b.update("ab"); b.update("c")
    >>> a.digest() == b.digest(), a.prefix == b.prefix
    (True, True)
    """

    __slots__ = ("_hash", "_length", "_next", "prefix", "prefixes")

    def __init__(self, *, collect: bool = False) -> None:
        import hashlib  # imported on first use, as in _ids and _repeats: not a cost of the import

        self._hash = hashlib.blake2b(digest_size=16)
        self._length = 0
        self._next = 1  # the next power of two whose prefix digest is due
        self.prefix: bytes | None = None
        self.prefixes: list[bytes] | None = [] if collect else None

    def update(self, piece: str) -> None:
        # surrogatepass: model and tool text may hold lone surrogates; they must hash, not
        # raise. Encoded piece by piece, which gives the bytes of the whole (no pair is joined).
        while self._length + len(piece) >= self._next:
            take = self._next - self._length
            self._hash.update(piece[:take].encode("utf-8", "surrogatepass"))
            piece = piece[take:]
            self._length = self._next
            self._next *= 2
            self.prefix = self._hash.digest()
            if self.prefixes is not None:
                self.prefixes.append(self.prefix)
        if piece:
            self._hash.update(piece.encode("utf-8", "surrogatepass"))
            self._length += len(piece)

    def digest(self) -> bytes:
        return self._hash.digest()


class Marks:
    """The marked texts, by digest, at most ``MAX_UNTRUSTED`` (the oldest forgotten first),
    with a count of each prefix digest among them (see the module docstring). Thread-safe.
    Memory: per marked text 16 bytes and one prefix digest per power of two of its length."""

    __slots__ = ("_lock", "_prefixes", "_texts")

    def __init__(self) -> None:
        self._texts: OrderedDict[bytes, tuple[bytes, ...]] = OrderedDict()
        self._prefixes: dict[bytes, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._texts)

    def mark(self, text: str) -> None:
        """Remember ``text`` (an exact ``str``). O(len(text))."""
        digest = ReplyDigest(collect=True)
        digest.update(text)
        key, prefixes = digest.digest(), tuple(digest.prefixes or ())
        with self._lock:
            if key in self._texts:
                self._texts.move_to_end(key)
                return
            self._texts[key] = prefixes
            for prefix in prefixes:
                self._prefixes[prefix] = self._prefixes.get(prefix, 0) + 1
            while len(self._texts) > MAX_UNTRUSTED:
                _, gone = self._texts.popitem(last=False)
                for prefix in gone:
                    left = self._prefixes[prefix] - 1
                    if left:
                        self._prefixes[prefix] = left
                    else:
                        del self._prefixes[prefix]

    def holds(self, text: str) -> bool:
        """Is ``text`` (an exact ``str``) marked? Nothing marked: no hashing. O(len(text))."""
        if not self._texts:
            return False
        digest = ReplyDigest()
        digest.update(text)
        return self.has(digest.digest())

    def has(self, key: bytes) -> bool:
        """Is the text of digest ``key`` marked? O(1)."""
        with self._lock:
            return key in self._texts

    def may_begin(self, prefix: bytes | None) -> bool:
        """Does a marked text begin with the characters ``prefix`` is the digest of (a
        ``ReplyDigest.prefix``)? For None (nothing read yet): is anything marked. O(1)."""
        with self._lock:
            if prefix is None:
                return bool(self._texts)
            return prefix in self._prefixes
