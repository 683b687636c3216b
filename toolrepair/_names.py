"""Tool-name normalisation, suggestions and start-up resolution of tool lists."""

from __future__ import annotations

import difflib
import logging
import os
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import regex

from ._errors import ToolResolutionError

__all__ = ["NameTable", "normalize_name", "resolve_tool_names", "split_namespace", "suggest_names", "tool_name_of"]

logger = logging.getLogger("toolrepair")

# Separators a model swaps freely: snake, kebab, spaces. Dots, slashes and colons are kept:
# they mark namespaces, which are resolved separately (split_namespace).
_DROP = regex.compile(r"[\s_\-]+|\p{Cf}+")
# Namespace separators: `functions.x`, `default_api.x`, `server/x`, `server:x`, MCP `server__x`.
_SEPARATORS = (".", "/", ":", "__")
_WORDS = regex.compile(r"[\p{Lu}]?[\p{Ll}\p{Nd}]+|[\p{Lu}\p{Nd}]+(?![\p{Ll}])")


def normalize_name(name: str) -> str:
    """The key two names share when they are the same tool written differently.

    NFKC (fullwidth letters fold), casefold, then drop format characters (zero-width,
    bidi controls) and the separators ``_``, ``-`` and whitespace. Letters from other
    scripts are never folded into Latin: ``wеb_search`` with a Cyrillic ``е`` stays apart.

    >>> normalize_name("Web-Search")
    'websearch'
    """
    return _DROP.sub("", unicodedata.normalize("NFKC", name).casefold())


def split_namespace(name: str) -> str | None:
    """The name without a namespace prefix, or None when it has none.

    >>> split_namespace("functions.web_search")
    'web_search'
    """
    # O(len(name)): one rfind per separator, no regex over the name.
    cut = max(name.rfind(sep) + len(sep) if name.rfind(sep) > 0 else -1 for sep in _SEPARATORS)
    if cut <= 0 or cut >= len(name) or not name[: cut].strip("._/:"):
        return None
    return name[cut:]


def _words(name: str) -> tuple[str, ...]:
    """Sorted words of a name, so `search_web` and `WebSearch` compare as word sets."""
    text = unicodedata.normalize("NFKC", name)
    return tuple(sorted(w.casefold() for w in _WORDS.findall(text)))


def suggest_names(name: str, candidates: Iterable[str], *, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` candidates that ``name`` was probably meant to be, best first.

    Normalised equality first (``READ_FILE`` -> ``read_file``), then the same words in
    another order (``search_web`` -> ``web_search``), then difflib on normalised forms.

    >>> suggest_names("search_web", ["web_search", "read_file"])
    ['web_search']
    """
    pool = list(dict.fromkeys(candidates))
    if n <= 0 or not pool:
        return []
    out = _same_names(name, pool)
    if len(out) < n:
        out.extend(_similar_names(normalize_name(name), [c for c in pool if c not in out], n, cutoff))
    return out[:n]


def _same_names(name: str, pool: list[str]) -> list[str]:
    """The candidates that are ``name`` written differently: the same normalised key, the
    same words in another order, or the key of ``name`` without its namespace."""
    key = normalize_name(name)
    words = _words(name)
    out = [c for c in pool if normalize_name(c) == key]
    out.extend(c for c in pool if c not in out and words and _words(c) == words)
    bare = split_namespace(name)
    if bare is not None:
        bare_key = normalize_name(bare)
        out.extend(c for c in pool if c not in out and normalize_name(c) == bare_key)
    return out


def _similar_names(key: str, pool: list[str], n: int, cutoff: float) -> list[str]:
    """The candidates of the ``n`` normalised keys most like ``key`` (difflib ratio at least
    ``cutoff``), best first."""
    by_key: dict[str, list[str]] = {}
    for c in pool:
        by_key.setdefault(normalize_name(c), []).append(c)
    # difflib's own ranking breaks ties arbitrarily; ties here keep the caller's order.
    scored = []
    for order, (other, names) in enumerate(by_key.items()):
        matcher = difflib.SequenceMatcher(None, key, other)
        # The cheap upper bounds first: most candidates are refused before the real ratio.
        if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
            ratio = matcher.ratio()
            if ratio >= cutoff:
                scored.append((-ratio, order, names))
    return [c for _, _, names in sorted(scored)[:n] for c in names]


def tool_name_of(tool: Any) -> str:
    """The name a tool is offered under: ``.name`` wins over ``__name__``."""
    if isinstance(tool, str):
        return tool
    name = getattr(tool, "name", None)
    if isinstance(name, str) and name:
        return name
    name = getattr(tool, "__name__", None)
    if isinstance(name, str) and name:
        return name
    return type(tool).__name__


def _strict_from_env() -> bool:
    return os.environ.get("TOOLREPAIR_STRICT_TOOLS", "").strip().lower() in {"1", "true", "yes"}


def _unknown_sentence(name: str, hints: list[str]) -> str:
    """`Unknown tool 'web_serch'. Did you mean 'web_search'?`: the one sentence an unknown
    name gets, in the start-up warning and in ``ToolResolutionError`` alike."""
    hint = f" Did you mean {hints[0]!r}?" if hints else ""
    return f"Unknown tool {name!r}.{hint}"


def resolve_tool_names(
    names: Iterable[str],
    catalogue: Mapping[str, Any] | Iterable[Any],
    *,
    strict: bool | None = None,
    on_unknown: Callable[[list[str], dict[str, list[str]]], None] | None = None,
) -> list[Any]:
    """The tools of ``catalogue`` that ``names`` ask for, in the order asked.

    Unknown names are warned about on logger ``toolrepair`` with suggestions, passed to
    ``on_unknown(unknown, suggestions)`` instead when given, or, with ``strict=True`` (or env
    ``TOOLREPAIR_STRICT_TOOLS`` in 1/true/yes when ``strict`` is None), raise
    ``ToolResolutionError``. Names are matched exactly: a typo is a typo at start-up.

    >>> resolve_tool_names(["b"], {"a": 1, "b": 2})
    [2]
    """
    if isinstance(catalogue, Mapping):
        table: dict[str, Any] = dict(catalogue)
    else:
        table = {tool_name_of(t): t for t in catalogue}
    resolved: list[Any] = []
    unknown: list[str] = []
    for name in names:
        if name in table:
            resolved.append(table[name])
        elif name not in unknown:
            unknown.append(name)
    if not unknown:
        return resolved
    suggestions = {u: suggest_names(u, table) for u in unknown}
    if strict is None:
        strict = _strict_from_env()
    if strict:
        raise _resolution_error(unknown, suggestions, table)
    if on_unknown is not None:
        on_unknown(unknown, suggestions)
        return resolved
    for u in unknown:
        logger.warning("%s", _unknown_sentence(u, suggestions[u]))
    return resolved


def _resolution_error(unknown: list[str], suggestions: dict[str, list[str]],
                      table: Mapping[str, Any]) -> ToolResolutionError:
    """The strict refusal: the first three unknown names, each with its best suggestion."""
    shown = unknown[:3]
    more = f" And {len(unknown) - 3} more." if len(unknown) > 3 else ""
    return ToolResolutionError(
        " ".join(_unknown_sentence(u, suggestions[u]) for u in shown) + more
        + f" Available tools: {sorted(table)!r}",
        unknown=unknown,
        suggestions={u: suggestions[u][:3] for u in shown},
    )


class NameTable:
    """Offered names with their normalised keys, built once; look-ups are O(len(name)).

    Exact names always win. Otherwise a name resolves when exactly one offered name has its
    normalised key, or, failing that, when its namespace-stripped remainder does.

    >>> NameTable(["web_search"]).resolve("functions.WebSearch")
    ('web_search', True)
    """

    __slots__ = ("_by_key", "exact", "names")

    def __init__(self, names: Iterable[str]) -> None:
        self.names: tuple[str, ...] = tuple(dict.fromkeys(names))
        # The names as offered: a call naming one as written needs no look-up (salvage's
        # `offered_name` tests this set first, the common case).
        self.exact: frozenset[str] = frozenset(self.names)
        by_key: dict[str, list[str]] = {}
        for name in self.names:
            by_key.setdefault(normalize_name(name), []).append(name)
        self._by_key = by_key

    def __contains__(self, name: object) -> bool:
        return name in self.exact

    def __len__(self) -> int:
        return len(self.names)

    def resolve(self, name: str) -> tuple[str | None, bool]:
        """(offered name, repaired?), or (None, False) when unknown or ambiguous."""
        if name in self.exact:
            return name, False
        match = self._by_key.get(normalize_name(name))
        if match is not None:
            return (match[0], True) if len(match) == 1 else (None, False)
        bare = split_namespace(name)
        if bare is not None:
            if bare in self.exact:
                return bare, True
            match = self._by_key.get(normalize_name(bare))
            if match is not None and len(match) == 1:
                return match[0], True
        return None, False
