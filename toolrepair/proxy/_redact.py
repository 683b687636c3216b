"""URLs as the proxy shows them: never with the credentials a URL can carry.

The upstream URL may hold a user and password (``http://user:pw@host/v1``) or a key in its
query (``?api-key=…``). Wherever the proxy shows it (``/health``, error bodies, logs, the start
line), userinfo and query are replaced by ``***``.
"""

from __future__ import annotations

from urllib.parse import unquote

__all__ = ["redact_url", "scrub"]


def redact_url(url: str) -> str:
    """``url`` with its userinfo and its query (and fragment) replaced by ``***``. Works on text
    that is not quite a URL too (no scheme), so a mistyped ``--upstream`` is shown safely.

    >>> redact_url("http://me:pw@127.0.0.1:8080/v1?key=abc")
    'http://***@127.0.0.1:8080/v1?***'
    >>> redact_url("http://127.0.0.1:11434/v1")
    'http://127.0.0.1:11434/v1'
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in authority:
        authority = "***@" + authority.rpartition("@")[2]
    for mark in "?#":
        if mark in tail:
            tail = tail.split(mark, 1)[0] + mark + "***"
            break
    return scheme + sep + authority + tail


def scrub(text: str, url: str) -> str:
    """``text`` (an exception's message, say) with every secret part of ``url`` in it hidden:
    the URL itself, its userinfo and its query, each wherever it appears."""
    shown = redact_url(url)
    if shown == url:
        return text
    text = text.replace(url, shown)
    _scheme, sep, rest = url.partition("://")
    rest = rest if sep else url
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    secrets: list[str] = []
    if "@" in authority:
        userinfo = authority.rpartition("@")[0]
        password = userinfo.partition(":")[2]
        secrets += [userinfo, unquote(userinfo), password, unquote(password)]
    for mark in "?#":
        if mark in rest:
            secrets.append(rest.split(mark, 1)[1])
            break
    for secret in sorted(secrets, key=len, reverse=True):  # the longest first: no part left behind
        if secret:
            text = text.replace(secret, "***")
    return text
