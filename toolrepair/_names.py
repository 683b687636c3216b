"""Tool-name normalisation, suggestions and start-up resolution of tool lists."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from ._errors import ToolResolutionError
from ._lazy import lazy
from ._log import logger

if TYPE_CHECKING:
    import regex

__all__ = [
    "MODEL_NAMESPACES",
    "NAMESPACE_SEPARATORS",
    "NameTable",
    "normalize_name",
    "resolve_policy_names",
    "resolve_tool_names",
    "split_namespace",
    "suggest_names",
    "tool_name_of",
]


# Separators a model swaps freely: snake, kebab, spaces. Dots, slashes and colons are kept:
# they mark namespaces, which are resolved separately (NameTable). `regex` (for ``\p{Cf}``) is
# imported on the first name normalised, not by ``import toolrepair``: importing it is not free.
@lazy
def _DROP() -> regex.Pattern[str]:
    import regex

    return regex.compile(r"[\s_\-]+|\p{Cf}+")


NAMESPACE_SEPARATORS: Final = (".", "/", ":", "__")
"""What ends a namespace: ``functions.x``, ``server/x``, ``server:x``, MCP ``server__x``."""
_SEPARATORS = NAMESPACE_SEPARATORS
_SPLIT = re.compile(r"\.|/|:|__")

MODEL_NAMESPACES: Final = ("functions", "tools", "default_api", "multi_tool_use")
"""The namespaces models write before a tool's name on their own, stripped when resolving:

- ``functions.`` -- OpenAI's function namespace, as gpt-oss (harmony ``to=functions.x``),
  Kimi-K2 (``functions.x:0``) and models trained on OpenAI transcripts write it;
- ``tools.`` -- the same habit under the other word;
- ``default_api.`` -- Gemini's name for the functions it is given (``default_api.x(...)``);
- ``multi_tool_use.`` -- OpenAI's parallel-call wrapper (``multi_tool_use.parallel``) leaking
  into a single call's name.

A namespace matches by its normalised key (``Functions``, ``DEFAULT-API``) before any of the
``NAMESPACE_SEPARATORS``. Besides these, a name may carry the prefix of an MCP server that
names a configured server: one whose prefix a registered name carries (``github__create_issue``
configures ``github``), optionally after ``mcp`` (Claude's ``mcp__github__create_issue``); it
reaches only the tools registered under that prefix. Any
other prefix (``dry_run.``, ``simulate/``, ``never:``, ``mock__``) is part of an unknown name:
a prefix can change what a call means, so it is never dropped on a guess.
"""
_MCP_KEY: Final = "mcp"
# No real name has more parts; longer chains are unknown (and the split stays O(len(name))).
_MAX_SEGMENTS: Final = 4


@lazy
def _WORDS() -> regex.Pattern[str]:
    import regex

    return regex.compile(r"[\p{Lu}]?[\p{Ll}\p{Nd}]+|[\p{Lu}\p{Nd}]+(?![\p{Ll}])")


def normalize_name(name: str) -> str:
    """The key two names share when they are the same tool written differently.

    NFKC (fullwidth letters fold), casefold, then drop format characters (zero-width,
    bidi controls) and the separators ``_``, ``-`` and whitespace. Letters from other
    scripts are never folded into Latin: ``wеb_search`` with a Cyrillic ``е`` stays apart.

    >>> normalize_name("Web-Search")
    'websearch'
    """
    return _DROP().sub("", unicodedata.normalize("NFKC", name).casefold())


# The keys of MODEL_NAMESPACES (`defaultapi`, `multitooluse`): normalize_name without NFKC,
# so the set can be built here, before normalize_name; the names are ASCII.
_MODEL_KEYS: Final = frozenset(n.replace("_", "") for n in MODEL_NAMESPACES)


def _segments(name: str) -> list[str] | None:
    """``name`` cut at each namespace separator, or None when a part is empty (``__init__``,
    ``.x``) or there are more than ``_MAX_SEGMENTS``. O(len(name))."""
    parts = _SPLIT.split(name, maxsplit=_MAX_SEGMENTS)
    if len(parts) > _MAX_SEGMENTS or not all(p.strip() for p in parts):
        return None
    return parts


def split_namespace(name: str) -> str | None:
    """The name without any namespace prefix, or None when it has none.

    For suggestions only (``dry_run.delete_file`` -> did you mean ``delete_file``?): resolving
    strips only the namespaces ``NameTable`` documents.

    >>> split_namespace("functions.web_search")
    'web_search'
    """
    # O(len(name)): one rfind per separator, no regex over the name.
    cut = max(name.rfind(sep) + len(sep) if name.rfind(sep) > 0 else -1 for sep in _SEPARATORS)
    if cut <= 0 or cut >= len(name) or not name[:cut].strip("._/:"):
        return None
    return name[cut:]


def _words(name: str) -> tuple[str, ...]:
    """Sorted words of a name, so `search_web` and `WebSearch` compare as word sets."""
    text = unicodedata.normalize("NFKC", name)
    return tuple(sorted(w.casefold() for w in _WORDS().findall(text)))


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
    import difflib  # on first use: a suggestion is rare, the import is not free

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
        logger().warning("%s", _unknown_sentence(u, suggestions[u]))
    return resolved


def _resolution_error(
    unknown: list[str], suggestions: dict[str, list[str]], table: Mapping[str, Any]
) -> ToolResolutionError:
    """The strict refusal: the first three unknown names, each with its best suggestion."""
    shown = unknown[:3]
    more = f" And {len(unknown) - 3} more." if len(unknown) > 3 else ""
    return ToolResolutionError(
        " ".join(_unknown_sentence(u, suggestions[u]) for u in shown) + more + f" Available tools: {sorted(table)!r}",
        unknown=unknown,
        suggestions={u: suggestions[u][:3] for u in shown},
    )


class NameTable:
    """Offered names with their normalised keys, built once; look-ups are O(len(name)).

    Exact names always win. Otherwise a name resolves when exactly one offered name has its
    normalised key, or, failing that, when what is left after the namespaces models write
    (``MODEL_NAMESPACES``) and a configured server's prefix (see there) does. A server is
    configured when an offered name carries its prefix; then ``server.tool``, ``server/tool``,
    ``server:tool``, ``server__tool`` and ``mcp__server__tool`` are the same name, and a
    server's prefix reaches only that server's tools. Any other prefix leaves the name unknown.

    >>> NameTable(["web_search"]).resolve("functions.WebSearch")
    ('web_search', True)
    >>> NameTable(["delete_file"]).resolve("dry_run.delete_file")
    (None, False)
    >>> NameTable(["github__create_issue"]).resolve("mcp__github__CreateIssue")
    ('github__create_issue', True)
    """

    __slots__ = ("_by_key", "_qualified", "exact", "names")

    def __init__(self, names: Iterable[str]) -> None:
        self.names: tuple[str, ...] = tuple(dict.fromkeys(names))
        # The names as offered: a call naming one as written needs no look-up (salvage's
        # `offered_name` tests this set first, the common case).
        self.exact: frozenset[str] = frozenset(self.names)
        by_key: dict[str, list[str]] = {}
        # (server key, tool key) -> offered names written `server<sep>tool`.
        qualified: dict[tuple[str, str], list[str]] = {}
        for name in self.names:
            by_key.setdefault(normalize_name(name), []).append(name)
            pair = _server_and_tool(name)
            if pair is not None:
                qualified.setdefault(pair, []).append(name)
        self._by_key = by_key
        self._qualified = qualified

    def __contains__(self, name: object) -> bool:
        return name in self.exact

    def __len__(self) -> int:
        return len(self.names)

    def resolve(self, name: str) -> tuple[str | None, bool]:
        """(offered name, repaired?), or (None, False) when unknown or ambiguous."""
        if name in self.exact:
            return name, False
        match = self.matches(name)
        return (match[0], True) if len(match) == 1 else (None, False)

    def matches(self, name: str) -> list[str]:
        """Every offered name ``name`` may stand for: one when it resolves, several when it
        is ambiguous (policy denies them all), none when it is unknown. O(len(name))."""
        if name in self.exact:
            return [name]
        match = self._by_key.get(normalize_name(name))
        if match is not None:
            return list(match)
        parts = _segments(name)
        if parts is None or len(parts) < 2:
            return []
        keys = [normalize_name(p) for p in parts]
        first = 0
        while first < len(keys) - 1 and keys[first] in _MODEL_KEYS:
            first += 1
        rest = keys[first:]
        if len(rest) == 3 and rest[0] == _MCP_KEY:  # `mcp__server__tool`
            rest = rest[1:]
        if len(rest) == 1:
            return list(self._by_key.get(rest[0], ()))
        if len(rest) == 2:
            # Only among that server's own tools: `github.rm` never reaches a plain `rm`.
            return list(self._qualified.get((rest[0], rest[1]), ()))
        return []


def resolve_policy_names(
    entries: Iterable[str] | None, table: NameTable, *, kind: str, strict: bool | None = None
) -> frozenset[str] | None:
    """The offered names an ``allow`` or ``deny`` list (``kind``) stands for, or None for no list.

    Each entry is resolved as a call's name is (``DeleteFile``, ``delete-file`` and
    ``functions.delete_file`` are ``delete_file``). Fail closed where an entry is ambiguous:
    a deny entry denies every tool it may mean, an allow entry allows none of them. An entry
    that matches no tool (or, for ``allow``, several) raises ``ToolResolutionError`` with
    ``strict=True`` (or env ``TOOLREPAIR_STRICT_TOOLS`` when ``strict`` is None, as
    ``resolve_tool_names`` reads it), and is a warning on logger ``toolrepair`` otherwise:
    ``deny entry 'delete_fil' matches no tool. Did you mean 'delete_file'? Available tools: [...]``.

    >>> sorted(resolve_policy_names(["DeleteFile"], NameTable(["delete_file", "x"]), kind="deny"))
    ['delete_file']
    """
    if entries is None:
        return None
    if isinstance(entries, str | bytes):
        raise TypeError(f"{kind} must be a collection of tool names, not a single {type(entries).__name__}")
    resolved: set[str] = set()
    problems: list[str] = []
    unknown: list[str] = []
    for entry in entries:
        if not isinstance(entry, str):
            raise TypeError(f"{kind} entries must be tool names (str), not {type(entry).__name__}")
        match = table.matches(entry)
        if len(match) == 1 or (match and kind == "deny"):
            resolved.update(match)
            continue
        if entry in unknown:
            continue
        unknown.append(entry)
        if match:
            problems.append(
                f"{kind} entry {entry!r} matches several tools ({sorted(match)!r}): write the one meant exactly."
            )
        else:
            hints = suggest_names(entry, table.names, n=1)
            hint = f" Did you mean {hints[0]!r}?" if hints else ""
            problems.append(f"{kind} entry {entry!r} matches no tool.{hint}")
    if problems:
        available = f" Available tools: {sorted(table.names)!r}"
        if strict is None:
            strict = _strict_from_env()
        if strict:
            suggestions = {u: suggest_names(u, table.names) for u in unknown}
            raise ToolResolutionError(" ".join(problems) + available, unknown=unknown, suggestions=suggestions)
        for problem in problems:
            logger().warning("%s", problem + available)
    return frozenset(resolved)


def _server_and_tool(name: str) -> tuple[str, str] | None:
    """(server key, tool key) of an offered name written with a server prefix
    (``github__create_issue``, ``github.create_issue``, ``mcp__github__create_issue``);
    None for a plain name."""
    parts = _segments(name)
    if parts is None or len(parts) < 2:
        return None
    if len(parts) == 3 and normalize_name(parts[0]) == _MCP_KEY:
        parts = parts[1:]
    if len(parts) != 2 or normalize_name(parts[0]) in _MODEL_KEYS:
        return None
    return normalize_name(parts[0]), normalize_name(parts[1])
