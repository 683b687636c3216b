"""Property-test a text tool-call dialect: hypothesis strategies and ``check_dialect``.

A dialect (see ``toolrepair.Dialect``) is a reader that must hold up on text a model really
writes: calls inside prose, calls inside fences and reasoning (never calls), names not
offered, arbitrary junk, any chunking of a stream, and hostile repetitions of its own markers.
``check_dialect`` runs all of these as hypothesis properties against a ``render`` function that
writes a call the way the model does.

hypothesis is imported only when a strategy or check is used, so importing this module costs
nothing in production; install it with ``pip install 'toolrepair[test]'``.

>>> import json
>>> from toolrepair import TagDialect
>>> from toolrepair.testing import check_dialect
>>> d = TagDialect("atat", open="@@call", close="@@end")
>>> check_dialect(d, lambda c: f"@@call {json.dumps({'name': c.name, 'arguments': c.arguments})} @@end",
...               max_examples=20)
"""

from __future__ import annotations

import dataclasses
import functools
import keyword
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, SupportsIndex

from ._names import NameTable
from ._salvage import (
    ANY_TOOL,
    BUILTIN,
    AnyTool,
    Dialect,
    SalvagePass,
    StreamSalvager,
    TextDelta,
    ToolCallReady,
    config_for,
    salvage_text,
)
from ._salvage._mask import DEFAULT_REASONING, CodeMask
from ._salvage._stream import Event
from ._types import SalvageResult, ToolCall

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "arguments",
    "awkward_text",
    "check_dialect",
    "end_markers",
    "json_values",
    "opening_markers",
    "prose",
    "replies",
    "tool_calls",
    "tool_names",
]

INSTALL_HINT = "toolrepair.testing needs hypothesis: pip install 'toolrepair[test]'"

# Linear-cost check, on counted work (never a clock, so a busy machine cannot fail it): the
# pass's markers handled and reader calls, the calls it makes (Python and C), and the
# characters the text's own methods look at (``_LookedAt``), on ``unit * n`` and ``unit * 2n``.
# Linear work doubles; quadratic work quadruples. Readers look ahead through bounded windows
# (thousands of characters), so n starts where a text is well past them; the slack absorbs
# fixed costs.
LINEAR_MIN_CHARS = 1 << 14
LINEAR_MAX_RATIO = 2.5
LINEAR_SLACK = 4096

# Closing and in-payload markers of the built-in dialects that the dialect objects do not
# expose as attributes (their readers spell them from token words). Collected here so that
# argument strings carry them: a reader that stops at the first one inside a string fails.
_KNOWN_END_MARKERS = (
    "</tool_call>",
    "</function>",
    "</parameter>",
    "</arg_key>",
    "</arg_value>",
    "<arg_key>",
    "<arg_value>",
    "<|call|>",
    "<|end|>",
    "<|message|>",
    "<|constrain|>",
    "<|return|>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁sep｜>",
    "<｜tool_call_end｜>",
    "<｜tool_calls_end｜>",
    "<｜tool_sep｜>",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_argument_begin|>",
    "<tool_call|>",
    "<end_function_call>",
    '<|"|>',
    "<escape>",
    "</invoke>",
    "</minimax:tool_call>",
    "</｜dsml｜invoke>",
    "</｜dsml｜parameter>",
    "</｜dsml｜function_calls>",
    "</steptml:invoke>",
    "</steptml:parameter>",
    "</atem:invoke>",
    "</atem:parameter>",
    "</atem:function_calls>",
    "</param>",
    "]]>",
    "<|close|>",
    "<|sep|>",
    "<|python_end|>",
    "</function_calls>",
    "<|tool_call_end|>",
    "<|action_end|>",
    "<|plugin|>",
    "</toolcall>",
    "</longcat_tool_call>",
    "<|end_action|>",
    "<|tools_suffix|>",
    "</s>",
    "<|role_sep|>",
    "</tool_calls>",
    "<|eom_id|>",
    "<|eot_id|>",
    "[args]",
    "[call_id]",
    "</seed:tool_call>",
    "<|tool_call_end|>",
)


def _require_hypothesis() -> None:
    try:
        import hypothesis  # noqa: F401  (only to fail early with the install hint)
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e


# --- markers -------------------------------------------------------------------------------


def _looks_like_marker(s: str) -> bool:
    return 2 <= len(s) <= 48 and not s.isspace() and any(not c.isalnum() for c in s)


def _strings_of(value: object, depth: int = 0) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list, frozenset, set)) and depth < 3:
        for item in value:
            yield from _strings_of(item, depth + 1)


def _attribute_strings(dialect: object) -> list[str]:
    """Marker-like strings a dialect object holds (its closing tags, lead tokens, ...)."""
    values: list[object] = []
    if dataclasses.is_dataclass(dialect) and not isinstance(dialect, type):
        values.extend(getattr(dialect, f.name, None) for f in dataclasses.fields(dialect))
    for cls in type(dialect).__mro__:
        values.extend(getattr(dialect, slot, None) for slot in getattr(cls, "__slots__", ()))
    values.extend(getattr(dialect, "__dict__", {}).values())
    return [s for v in values for s in _strings_of(v) if _looks_like_marker(s)]


def _reasoning_pairs(dialects: Iterable[object]) -> list[tuple[str | None, str]]:
    """(open, close) pairs; a dialect's entry may carry a third element (forced_open)."""
    pairs = list(DEFAULT_REASONING)
    for d in dialects:
        for entry in getattr(d, "reasoning", ()) or ():
            pair = (entry[0], entry[1])
            if pair not in pairs:
                pairs.append(pair)
    return pairs


@functools.lru_cache(maxsize=1)
def opening_markers() -> tuple[str, ...]:
    """Every opening marker of the built-in dialects (lower case, as the dialects give them).

    >>> "<tool_call>" in opening_markers()
    True
    """
    return tuple(dict.fromkeys(m for d in BUILTIN for m in d.markers))


@functools.lru_cache(maxsize=1)
def reasoning_markers() -> tuple[str, ...]:
    """Every reasoning (mask) marker the built-in dialects know, open and close."""
    return tuple(dict.fromkeys(m for pair in _reasoning_pairs(BUILTIN) for m in pair if m))


@functools.lru_cache(maxsize=1)
def end_markers() -> tuple[str, ...]:
    """Closing and in-payload markers of the built-in dialects, and their reasoning markers.

    Gathered from the dialect objects and their modules' marker constants, plus the tokens
    their readers spell from token words.

    >>> "</tool_call>" in end_markers() and "<|call|>" in end_markers()
    True
    """
    found: list[str] = list(_KNOWN_END_MARKERS)
    for d in BUILTIN:
        found.extend(_attribute_strings(d))
        module = sys.modules.get(type(d).__module__)
        for key, value in vars(module).items() if module is not None else ():
            if key.lstrip("_").isupper():  # the modules' marker constants (_CLOSE, CLOSE, _END, ...)
                found.extend(s for s in _strings_of(value) if _looks_like_marker(s))
    found.extend(reasoning_markers())
    opening = set(opening_markers())
    return tuple(dict.fromkeys(m for m in found if m not in opening))


# --- strategies ----------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_WORDS = (
    "the",
    "tool",
    "call",
    "function",
    "name",
    "arguments",
    "json",
    "result",
    "Sure",
    "here",
    "is",
    "a",
    "weather",
    "Paris",
    "café",
    "naïve",
    "日本語",
    "Привет",
    "emoji😀",
    "ok",
    "done",
    "then",
    "parameters",
    "I",
    "will",
    "use",
    "get_weather",
    "search",
    "x",
    "Let",
    "me",
    "check",
    "all",
    "python",
    "functions",
)
_AWKWARD = (
    '"',
    "'",
    "\\",
    '\\"',
    "\\n",
    "\\u0041",
    "{",
    "}",
    "[",
    "]",
    "{}",
    "[]",
    '{"name": "x"}',
    "\n",
    "\r\n",
    "\t",
    "```",
    "~~~",
    "<",
    ">",
    "</",
    "/>",
    "&amp;",
    "<![CDATA[",
    "]]>",
    "é",
    "日本語",
    "😀",
    "ｆｕｌｌ",
    "\u200b",
    "\u202e",
    "Ω",
    "NaN",
    "null",
    "true",
    "1e999",
    ";",
    ":",
    ",",
    "=",
)


def awkward_text(*, avoid: Iterable[str] = (), max_size: int = 24) -> SearchStrategy[str]:
    """Strings that break naive readers: quotes, braces, backslashes, newlines, non-ASCII and
    every opening, closing and reasoning marker of the built-in dialects.

    ``avoid``: substrings (any case) the strings never contain, for a format that cannot hold
    them in a value (a raw-text format whose value ends at its own closing tag).

    >>> from hypothesis import find
    >>> text = find(awkward_text(avoid=["</parameter>"]), lambda s: "<" in s)
    >>> "</parameter>" not in text.lower()
    True
    """
    _require_hypothesis()
    from hypothesis import strategies as st

    banned = tuple(a.lower() for a in avoid)

    def allowed(s: str) -> bool:
        low = s.lower()
        return not any(a in low for a in banned)

    fragments = [f for f in (*_AWKWARD, *opening_markers(), *end_markers()) if allowed(f)]
    pieces = st.sampled_from(fragments) | st.text(max_size=6)
    strings = st.text(max_size=max_size) | st.lists(pieces, max_size=6).map("".join)
    return strings.filter(allowed) if banned else strings


def tool_names() -> SearchStrategy[str]:
    """Tool names as users register them: an ASCII letter, then letters, digits and ``_``
    (never a Python keyword, so pythonic formats can write them).

    >>> from hypothesis import find
    >>> find(tool_names(), lambda name: len(name) > 3).isidentifier()
    True
    """
    _require_hypothesis()
    from hypothesis import strategies as st

    common = st.sampled_from(["get_weather", "web_search", "calculator", "read_file", "sendEmail", "f"])
    # Built from alphabets, not from_regex: several times cheaper per example.
    made = st.builds(str.__add__, st.sampled_from(_LETTERS), st.text(_LETTERS + "0123456789_", max_size=23))
    return (common | made).filter(lambda n: not keyword.iskeyword(n))


def json_values(
    strings: SearchStrategy[str] | None = None, keys: SearchStrategy[str] | None = None
) -> SearchStrategy[Any]:
    """JSON-compatible values (finite floats, no NaN) with awkward strings, nested a little.

    >>> import json
    >>> from hypothesis import find
    >>> value = find(json_values(), lambda v: isinstance(v, list) and len(v) > 1)
    >>> json.loads(json.dumps(value)) == value
    True
    """
    _require_hypothesis()
    from hypothesis import strategies as st

    text = strings if strings is not None else awkward_text()
    key = keys if keys is not None else text
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**63)
        | st.floats(allow_nan=False, allow_infinity=False)
        | text
    )
    # Two levels of nesting, spelled out: st.recursive costs several times more per example.
    flat = st.lists(scalars, max_size=3) | st.dictionaries(key, scalars, max_size=3)
    return scalars | flat | st.lists(flat, max_size=2) | st.dictionaries(key, flat, max_size=2)


def arguments(
    *, keys: SearchStrategy[str] | None = None, values: SearchStrategy[Any] | None = None, max_size: int = 3
) -> SearchStrategy[dict[str, Any]]:
    """A call's arguments: a dict of ``keys`` (default: common names and awkward strings) to
    ``values`` (default: ``json_values()``). Pass ``values=awkward_text()`` for a format whose
    values are raw text (XML-style), and ``keys=tool_names()`` where keys must be identifiers.

    >>> from hypothesis import find
    >>> args = find(arguments(), lambda a: len(a) > 1)
    >>> isinstance(args, dict), all(isinstance(key, str) for key in args)
    (True, True)
    """
    _require_hypothesis()
    from hypothesis import strategies as st

    key = (
        keys
        if keys is not None
        else (
            st.sampled_from(["name", "arguments", "id", "type", "query", "parameters", "q"]) | awkward_text(max_size=12)
        )
    )
    value = values if values is not None else json_values()
    return st.dictionaries(key, value, max_size=max_size)


def tool_calls(
    names: SearchStrategy[str] | None = None, arguments: SearchStrategy[dict[str, Any]] | None = None
) -> SearchStrategy[ToolCall]:
    """``ToolCall(name, arguments)`` drawn from ``names`` (default ``tool_names()``) and
    ``arguments`` (default ``arguments()``).

    >>> from hypothesis import find
    >>> find(tool_calls(), lambda call: bool(call.arguments)).dialect
    'native'
    """
    _require_hypothesis()
    from hypothesis import strategies as st

    return st.builds(
        ToolCall, names if names is not None else tool_names(), arguments if arguments is not None else _arguments()
    )


_arguments = arguments


def _has_no_call(text: str) -> bool:
    return not salvage_text(text, ANY_TOOL).calls


def prose(*, max_fragments: int = 8) -> SearchStrategy[str]:
    """Text with markers, braces and backticks but no call under any built-in dialect.

    Built from words, ``{ } [ ] < >``, single backticks and lone opening markers, always
    separated by whitespace or punctuation, so no marker, fence (three backticks) or reasoning
    tag forms across fragments and nothing call-shaped (no quotes, no parentheses) appears;
    what still salvages to a call (``NAME\\n{ }`` opening a reply is a Functionary call) is
    filtered out.

    >>> from hypothesis import find
    >>> from toolrepair import salvage_text, ANY_TOOL
    >>> salvage_text(find(prose(), lambda text: "{" in text), ANY_TOOL).calls
    ()
    """
    _require_hypothesis()
    from hypothesis import strategies as st

    masks = reasoning_markers()
    lone = sorted(m for m in opening_markers() if not any(r in m or m in r for r in masks))
    pieces = [*_WORDS, "{", "}", "[", "]", "`", "<", ">", "*", "-", "#", ">>>", *lone]
    # Every fragment carries its separator: one draw per fragment keeps generation cheap.
    parts = st.lists(
        st.sampled_from([p + s for p in pieces for s in (" ", "\n", ", ", ". ", " - ", "\n\n")]), max_size=max_fragments
    )
    return parts.map(lambda ps: "".join(ps).strip()).filter(_has_no_call)


_prose = prose
_SEPARATORS = (" ", "\n", "\n\n", " \n")


def replies(
    render: Callable[[ToolCall], str],
    *,
    calls: SearchStrategy[ToolCall] | None = None,
    prose: SearchStrategy[str] | None = None,
    max_calls: int = 3,
) -> SearchStrategy[tuple[str, list[ToolCall]]]:
    """A reply mixing ``prose`` with up to ``max_calls`` rendered calls: ``(text, calls)``.

    >>> import json
    >>> from hypothesis import find
    >>> from toolrepair import salvage_text
    >>> render = lambda c: f"<function={c.name}>{json.dumps(c.arguments)}</function>"
    >>> text, calls = find(replies(render), lambda reply: len(reply[1]) == 2)
    >>> got = salvage_text(text, [c.name for c in calls], dialects=["function_tag"]).calls
    >>> [(c.name, c.arguments) for c in got] == [(c.name, c.arguments) for c in calls]
    True
    """
    _require_hypothesis()
    from hypothesis import strategies as st

    call_s = calls if calls is not None else tool_calls()
    prose_s = prose if prose is not None else _prose()
    sep = st.sampled_from(_SEPARATORS)

    @st.composite
    def build(draw: Any) -> tuple[str, list[ToolCall]]:
        drawn: list[ToolCall] = draw(st.lists(call_s, min_size=1, max_size=max_calls))
        parts = [draw(prose_s)]
        for call in drawn:
            parts += [draw(sep), render(call), draw(sep), draw(prose_s)]
        # Backticks in two pieces (prose or a call's own text) may pair into a code span over
        # every call between them: then, as CommonMark reads it, that is no call (it is refused
        # as `in-code`). Such draws are not replies of calls in prose; backticks all in one
        # piece pair, if at all, inside it, where no call's marker starts.
        if sum("`" in part for part in parts) > 1:
            draw(st.nothing())
        return "".join(parts), drawn

    result: SearchStrategy[tuple[str, list[ToolCall]]] = build()
    return result


# --- check_dialect -------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """JSON equality that tells ``True`` from ``1`` and ``1`` from ``1.0``."""
    if isinstance(a, float) and isinstance(b, float):  # a float keeping its spelling is a float
        return a == b or (math.isnan(a) and math.isnan(b))
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _strings_in(value: Any, out: list[str]) -> list[str]:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(k)
            _strings_in(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings_in(v, out)
    return out


def _shown(calls: Iterable[ToolCall]) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in calls]


def _check_result(result: SalvageResult, text: str) -> None:
    assert isinstance(result, SalvageResult), f"salvage_text returned {result!r}"
    for c in result.calls:
        assert isinstance(c.arguments, dict), f"arguments {c.arguments!r} of {c.name!r} are not a dict"
        assert c.span is not None and 0 <= c.span[0] < c.span[1] <= len(text), f"span {c.span} of {len(text)}"


def _stream(text: str, sizes: Sequence[int], allowed: Any, dialect: Dialect) -> tuple[str, tuple[ToolCall, ...]]:
    stream = StreamSalvager(allowed, dialects=[dialect])
    events: list[Event] = []
    i = k = 0
    while i < len(text):
        size = sizes[k % len(sizes)]
        events.extend(stream.feed(text[i : i + size]))
        i, k = i + size, k + 1
    events.extend(stream.close())
    content = "".join(e.text for e in events if isinstance(e, TextDelta))
    return content, tuple(e.call for e in events if isinstance(e, ToolCallReady))


class _LookedAt(str):
    """A text that counts the characters its own methods look at: a search counts what it
    passes over, a slice what it copies, an index one. (What C code reads from the buffer
    directly, a regex or the JSON decoder, is not seen: their readers bound it by windows.)"""

    looked = 0

    def _add(self, n: int) -> None:
        _LookedAt.looked += max(n, 1)

    def find(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        lo, hi, _ = slice(start, end).indices(len(self))
        got = str.find(self, sub, lo, hi)
        self._add((hi if got == -1 else got + len(sub)) - lo)
        return got

    def rfind(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        lo, hi, _ = slice(start, end).indices(len(self))
        got = str.rfind(self, sub, lo, hi)
        self._add(hi - (lo if got == -1 else got))
        return got

    def index(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        got = self.find(sub, start, end)
        if got == -1:
            raise ValueError("substring not found")
        return got

    def count(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        lo, hi, _ = slice(start, end).indices(len(self))
        self._add(hi - lo)
        return str.count(self, sub, lo, hi)

    def __contains__(self, sub: str) -> bool:  # type: ignore[override]
        self._add(len(self))
        return str.__contains__(self, sub)

    def __getitem__(self, key: SupportsIndex | slice) -> str:
        got = str.__getitem__(self, key)
        self._add(len(got))
        return got


def _whole(method: str) -> Callable[..., Any]:
    def counted(self: _LookedAt, *args: Any, **kwargs: Any) -> Any:
        self._add(len(self))
        return getattr(str, method)(self, *args, **kwargs)

    return counted


for _method in (
    "lower",
    "upper",
    "casefold",
    "strip",
    "lstrip",
    "rstrip",
    "split",
    "splitlines",
    "partition",
    "rpartition",
    "replace",
    "encode",
    "expandtabs",
    "translate",
):
    setattr(_LookedAt, _method, _whole(_method))


def _counted_work(text: str, dialects: Sequence[str | Dialect] | None) -> tuple[int, int, int]:
    """(markers handled + reader calls, calls made, characters looked at) of one whole-text
    pass. Calls made are what ``sys.setprofile`` sees, Python functions and calls into C alike:
    a reader looping over the rest of the text per marker makes a number of them that grows
    with the text."""
    looked = _LookedAt(text)
    _LookedAt.looked = 0
    run = SalvagePass(config_for(dialects), ANY_TOOL, looked)
    calls = _count_calls(lambda: run.advance(final=True))
    return run.markers + run.reads, calls, _LookedAt.looked


def _count_calls(fn: Callable[[], object]) -> int:
    """Function calls (Python and C) made while ``fn`` runs, as ``sys.setprofile`` sees them:
    counted work, the same on any machine however busy, where a time would not be.

    >>> _count_calls(lambda: None) >= 1
    True
    """
    calls = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(previous)
    return calls


def _not_linear(make: Callable[[int], str], n: int, dialects: Sequence[str | Dialect] | None) -> str | None:
    """Why the pass over ``make(2n)`` does not cost about twice ``make(n)`` in counted work
    (``_counted_work``), or None."""
    small, large = _counted_work(make(n), dialects), _counted_work(make(2 * n), dialects)
    what_of = ("markers handled and reader calls", "calls made", "characters looked at")
    for what, a, b in zip(what_of, small, large, strict=True):
        if b > LINEAR_MAX_RATIO * a + LINEAR_SLACK:
            return f"{what} {b} against {a} for half as many (linear is ~2x, quadratic ~4x)"
    return None


def _linear_failure(unit: str, dialect: Dialect) -> str | None:
    """Why salvaging ``unit * n`` does not look linear in n on counted work, or None."""
    n = max(16, -(-LINEAR_MIN_CHARS // len(unit)))
    why = _not_linear(lambda k: unit * k, n, [dialect])
    return None if why is None else f"{unit!r} * {2 * n}: {why}"


def _linear_failure_on_markers(dialect: Dialect) -> str | None:
    """Why salvage does not look linear on repetitions of one of the dialect's markers, alone
    or opening an object, or None."""
    for marker in dict.fromkeys(m.lower() for m in dialect.markers):
        for unit in (marker, marker + "{"):
            why = _linear_failure(unit, dialect)
            if why is not None:
                return why
    return None


def _prose_with_markers(dialect: Dialect) -> SearchStrategy[str]:
    """Prose, half the time made of this dialect's own markers: a stray marker right before a
    call is where a reader most often swallows the call."""
    from hypothesis import strategies as st

    stray = [m + s for m in dict.fromkeys(m.lower() for m in dialect.markers) for s in (" ", "\n", " x ")]
    own_prose = st.lists(st.sampled_from([*stray, "ok ", "{ ", "} ", "` "]), max_size=4).map(
        lambda ps: "".join(ps).strip()
    )
    return _prose() | own_prose


# Masks a call inside must stay masked in: (open, close, what the rendered call must not hold,
# as it would end the mask early).
_MASK_WRAPPERS: Final[tuple[tuple[str, str, str], ...]] = (
    ("\n```\n", "\n```\n", "```"),
    ("\n~~~~\n", "\n~~~~\n", "~~~"),
    ("\n```json\n", "\n```\n", "```"),
    ("\n```\n", "", "```"),
    ("<think>", "</think>", "</think>"),
    ("<think>", "", "</think>"),
)


def _wrapped_in_code(text: str, at: int, opener: int, fence: bool) -> bool:
    """Does the wrapper around the call at ``at`` really mask it, by the rules the mask itself
    follows? Prose before a wrapper can undo it: ``<toolcall>`` on the line before a fence
    starts an HTML block, so the fence is no fence, and a backtick may put a ``<think>`` in a
    code span. A fence (``fence``) must put ``at`` in code, by the code mask and, where it is
    installed, by markdown-it-py (a CommonMark implementation nobody here wrote): only where
    both say so is a call that comes back the dialect's fault. A reasoning wrapper's opener
    (at ``opener``) must not itself be code."""
    mask = CodeMask(len(text) + 1)
    if not fence:
        return mask.covers(text, 0, opener, True) is False
    if mask.covers(text, 0, at, True) is not True:
        return False
    try:
        from markdown_it import MarkdownIt
    except ImportError:  # the mask's reading alone
        return True
    line = text.count("\n", 0, at)  # the wrappers use LF; markdown-it counts lines the same
    tokens = MarkdownIt("commonmark").parse(text.replace("\r", " "))
    return any(tok.type == "fence" and tok.map is not None and tok.map[0] < line < tok.map[1] for tok in tokens)


def check_dialect(
    dialect: Dialect,
    render: Callable[[ToolCall], str],
    *,
    max_examples: int = 200,
    names: SearchStrategy[str] | None = None,
    arguments: SearchStrategy[dict[str, Any]] | None = None,
    prose: SearchStrategy[str] | None = None,
) -> None:
    """Check ``dialect`` against calls written by ``render``; raise ``AssertionError`` naming
    the first property that fails, with hypothesis's shrunk example; return None otherwise.

    The properties: (1) round trip: a rendered call inside prose salvages to exactly that call;
    (2) masks: inside a Markdown fence or a reasoning block it is no call; (3) allowlist: a call
    whose name is not offered comes back under no name; (4) robustness: arbitrary text and soup
    of the dialect's markers never raise; (5) streaming: any chunking gives what the whole text
    gives; (6) linear cost on repetitions of each of its markers, on counted work (markers handled,
    reader calls and characters looked at for n and 2n repetitions; never a clock).

    ``names`` / ``arguments`` restrict the calls drawn (a raw-text XML-style format passes
    ``arguments(values=awkward_text(...))``); ``prose`` replaces the text around calls (a format
    that is only ever a whole reply passes ``st.just("")``).

    >>> import json
    >>> from toolrepair import TagDialect
    >>> d = TagDialect("atat", open="@@call", close="@@end")
    >>> check_dialect(d, lambda c: "@@call " + json.dumps({"name": c.name, "arguments": c.arguments}) + " @@end",
    ...               max_examples=20)
    """
    _require_hypothesis()
    from hypothesis import HealthCheck, assume, example, given, settings
    from hypothesis import strategies as st

    label = f"check_dialect({dialect.name})"
    config = settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    names_s = names if names is not None else tool_names()
    calls_s = tool_calls(names_s, arguments if arguments is not None else _arguments())
    sep = st.sampled_from(_SEPARATORS)
    pairs = _reasoning_pairs([dialect])

    def no_call_in(text: str) -> bool:
        try:
            return not salvage_text(text, ANY_TOOL, dialects=[dialect]).calls
        except Exception:  # not usable as prose; the robustness property reports the error
            return False

    prose_s = (prose if prose is not None else _prose_with_markers(dialect)).filter(no_call_in)
    own = [*dialect.markers, *_attribute_strings(dialect), *(m for p in pairs for m in p if m)]
    soup = st.lists(
        st.sampled_from(
            [
                *own,
                *end_markers(),
                "{",
                "}",
                "[",
                "]",
                '"',
                "\\",
                "\n",
                " ",
                ":",
                ",",
                "<",
                ">",
                "=",
                "```",
                "~~~",
                "<think>",
                "</think>",
                "null",
            ]
        )
        | st.text(max_size=8),
        max_size=40,
    ).map("".join)

    @config
    @given(call=calls_s, before=prose_s, after=prose_s, s1=sep, s2=sep)
    def round_trip(call: ToolCall, before: str, after: str, s1: str, s2: str) -> None:
        assume(no_call_in(before + s1 + s2 + after))  # a custom dialect may read our prose
        # A backtick before the call may open a code span that one inside or after it closes:
        # then the call is Markdown code, masked by design.
        assume("`" not in before)
        text = before + s1 + render(call) + s2 + after
        got = salvage_text(text, [call.name], dialects=[dialect])
        ok = len(got.calls) == 1 and got.calls[0].name == call.name and _same(got.calls[0].arguments, call.arguments)
        assert ok, (
            f"{text!r} salvaged to {_shown(got.calls)}, expected {_shown([call])}"
            f" (rejected: {[(r.reason, r.text) for r in got.rejected]})"
        )

    # The fixed masks, and each reasoning block the dialect declares.
    wrappers = [*_MASK_WRAPPERS, *((o, c, c) for o, c in pairs if o is not None)]

    @config
    @given(call=calls_s, before=prose_s, after=prose_s, wrapper=st.sampled_from(wrappers))
    def masks(call: ToolCall, before: str, after: str, wrapper: tuple[str, str, str]) -> None:
        open_, close, end = wrapper
        rendered = render(call)
        assume(end.lower() not in rendered.lower())
        text = before + open_ + rendered + close + after
        at = len(before) + len(open_) + len(rendered) - len(rendered.lstrip())
        # Only where the wrapper masks the call by CommonMark's rules (see `_wrapped_in_code`).
        assume(_wrapped_in_code(text, at, len(before) + len(open_) - len(open_.lstrip()), "`" in end or "~" in end))
        got = salvage_text(text, [call.name], dialects=[dialect]).calls
        assert not got, f"{text!r} salvaged to {_shown(got)}: a masked call came back"

    @config
    @given(call=calls_s, before=prose_s, after=prose_s, others=st.lists(names_s, min_size=1, max_size=3))
    def allowlist(call: ToolCall, before: str, after: str, others: list[str]) -> None:
        # Offered: other names, and the strings of the call itself (a reader that takes the name
        # from the wrong field returns one of those), but nothing the rendered name resolves to.
        candidates = others + [s for s in _strings_in(call.arguments, []) if 0 < len(s) <= 64]
        offered = [n for n in candidates if n.strip() and NameTable([n]).resolve(call.name)[0] is None]
        assume(offered)
        text = before + "\n" + render(call) + "\n" + after
        got = salvage_text(text, offered, dialects=[dialect]).calls
        assert not got, f"{text!r} offered {offered!r} salvaged to {_shown(got)}; the call was named {call.name!r}"

    @config
    @given(
        text=st.text()
        | soup
        | st.tuples(calls_s, st.integers(0, 400), soup).map(lambda t: render(t[0])[: t[1]] + t[2]),
        name=names_s,
    )
    def robustness(text: str, name: str) -> None:
        for allowed in (ANY_TOOL, [name]):
            _check_result(salvage_text(text, allowed, dialects=[dialect]), text)

    # Always tried first, whatever the draw: each marker alone, and cut off at the text's end
    # (the classic reader bug is indexing past a marker that ends the text).
    for marker in dict.fromkeys(m.lower() for m in dialect.markers):
        robustness = example(text="x " + marker, name="f")(example(text=marker, name="f")(robustness))

    chunks = st.lists(st.integers(1, 16), min_size=1, max_size=8) | st.just([1])

    @config
    @given(reply=replies(render, calls=calls_s, prose=prose_s) | soup.map(lambda s: (s, None)), sizes=chunks)
    def streaming(reply: tuple[str, list[ToolCall] | None], sizes: list[int]) -> None:
        text, drawn = reply
        allowed: list[str] | AnyTool = ANY_TOOL if drawn is None else [c.name for c in drawn]
        whole = salvage_text(text, allowed, dialects=[dialect])
        content, calls = _stream(text, sizes, allowed, dialect)
        assert content == whole.content, f"{text!r} in chunks of {sizes}: text {content!r} != {whole.content!r}"
        assert calls == whole.calls, f"{text!r} in chunks of {sizes}: calls {calls} != {whole.calls}"

    for what, prop in (
        ("round trip", round_trip),
        ("masks", masks),
        ("allowlist", allowlist),
        ("robustness", robustness),
        ("streaming", streaming),
    ):
        try:
            prop()
        except Exception as e:  # hypothesis re-raises the shrunk example's error, with notes
            notes = "\n".join(str(n) for n in getattr(e, "__notes__", ()))
            raise AssertionError(f"{label}: {what} failed: {type(e).__name__}: {e}\n{notes}".rstrip()) from e

    why = _linear_failure_on_markers(dialect)
    if why is not None:
        raise AssertionError(f"{label}: linear cost failed: {why}")
