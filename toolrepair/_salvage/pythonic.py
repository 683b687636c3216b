"""Pythonic calls: ``[f(a=1), g(b='x')]`` (Llama 3.2, ToolACE, Gemma 3), alone or in prose, and
the same calls wrapped by Llama 4 ``<|python_start|>``, OLMo 3 ``<function_calls>`` (one call
per line) and LFM2 ``<|tool_call_start|>``.

A candidate's extent is found first by a string-aware bracket walk (linear, no parsing); only
then is that region handed to ``ast.parse`` (never ``eval``), whose tree is walked for literal
nodes only. The walk refuses nesting deeper than ``ctx.max_depth`` before ``ast`` sees it.

Linear overall: a walk started at one trigger (``[name(`` for the bare list, the wrapper's
marker for the wrappers) gives up after passing ``MAX_CROSSINGS`` later triggers of its own
reader, so every character is walked by at most ``MAX_CROSSINGS + 1`` walks of a reader, however
hostile the text (``"[f(" * n``, ``"[f(" + "a=, " * n``).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from .._args._decode import read_float
from .._safe_text import int_fits_text
from ._base import NEED_MORE, Found, Gate, NeedMore, RawCall, ReadContext, skip_ws, startswith_ci
from .json_blocks import read_after_payload

__all__ = [
    "BARE_KEY",
    "LFM2_PYTHONIC",
    "LLAMA4_PYTHONIC",
    "OLMO3",
    "PYTHONIC",
    "literal_value",
    "read_keyword_arguments",
]

# A walk may pass this many later triggers of its own reader (a call list whose string values
# quote other call lists); past that it gives up, which bounds the total work (module doc).
MAX_CROSSINGS = 8

# `[` + name + `(`: the only shape the bare-list reader looks into. Bounded repeats, disjoint
# classes: O(name length) per `[`, no backtracking blow-up.
_TRIGGER = re.compile(r"\[[ \t\r\n]{0,8}([^\W\d][\w.]{0,255})[ \t]{0,8}\(")
# The text ends inside a possible trigger (streaming: wait before saying "not a call").
_TRIGGER_PREFIX = re.compile(r"\[[ \t\r\n]{0,8}(?:[^\W\d][\w.]{0,255}[ \t]{0,8})?\Z")
_INTEREST = re.compile(r"""[\[\](){}'"\n<]""")
_INTEREST_COMMAS = re.compile(r"""[\[\](){}'"\n<,]""")
# String bodies, unrolled so each is one deterministic pass: short strings stop at a newline
# (a syntax error in Python), long strings at three quotes.
_BODY1 = {q: re.compile(rf"[^{q}\\\n]*(?:\\[\s\S][^{q}\\\n]*)*") for q in "'\""}
_BODY3 = {q: re.compile(rf"[^{q}\\]*(?:(?:\\[\s\S]|{q}(?!{q}{q}))[^{q}\\]*)*") for q in "'\""}
_CLOSER = {"[": "]", "(": ")", "{": "}"}
_JSON_NAMES = {"true": True, "false": False, "null": None}


class _Fail:
    """Why a walk stopped, and where (a refused span never reaches past what was read)."""

    __slots__ = ("pos", "reason")

    def __init__(self, reason: str, pos: int) -> None:
        self.reason = reason
        self.pos = pos


@dataclass(frozen=True, slots=True)
class _Walk:
    """One bracket walk: how far it may go and which triggers it counts."""

    text: str
    ctx: ReadContext
    own: tuple[str, ...]  # wrapper markers counted as crossings; () = count `[name(`
    limit: int
    commas: bool = False  # record the commas between the outer bracket's items

    def is_trigger(self, p: int) -> bool:
        if not self.own:
            return self.text[p] == "[" and _TRIGGER.match(self.text, p) is not None
        return self.text[p] == "<" and any(startswith_ci(self.text, m, p) for m in self.own)

    def triggers_in(self, a: int, b: int) -> int:
        """Triggers starting inside a string span [a, b): each character looked at once."""
        ch = "<" if self.own else "["
        count = 0
        p = self.text.find(ch, a, b)
        while p != -1:
            count += self.is_trigger(p)
            p = self.text.find(ch, p + 1, b)
        return count

    def skip_string(self, p: int) -> int | _Fail | NeedMore:
        """Index after the string literal whose quote is at ``p``. O(string length)."""
        text, q = self.text, self.text[p]
        if text.startswith(q * 3, p):
            body = _BODY3[q].match(text, p + 3, self.limit)
            assert body is not None  # the pattern matches the empty string
            e = body.end()
            if text.startswith(q * 3, e):
                return e + 3
        else:
            body = _BODY1[q].match(text, p + 1, self.limit)
            assert body is not None
            e = body.end()
            if e < self.limit and text[e] == q:
                return e + 1
            if e < self.limit and text[e] == "\n":  # a newline inside a one-line string
                return _Fail("undecodable", e)
            # Otherwise the text ends (perhaps after a lone backslash) inside the string.
        return self.ran_out()

    def ran_out(self) -> _Fail | NeedMore:
        """The walk reached its limit: past the size limit, or at the end of the text."""
        if self.limit < len(self.text):
            return _Fail("too-large", self.limit)
        return NEED_MORE if not self.ctx.final else _Fail("truncated", len(self.text))

    def run(self, i: int, depth0_stop: bool) -> tuple[int, list[int]] | _Fail | NeedMore:
        """Walk from ``i``. When ``text[i]`` opens a bracket, stop after its closer; with
        ``depth0_stop``, walk at depth 0 instead and stop at a `<` (a closing marker or other
        markup) or at the end of the text. Returns the end and the cuts met: the depth-0
        newlines, or (``commas``) the commas between the outer bracket's items.
        O(distance walked)."""
        text = self.text
        stack: list[str] = []
        newlines: list[int] = []
        crossings = 0
        j = i
        interest = _INTEREST_COMMAS if self.commas else _INTEREST
        while True:
            m = interest.search(text, j, self.limit)
            if m is None:
                if depth0_stop and not stack and self.ctx.final and self.limit >= len(text):
                    return len(text), newlines
                return self.ran_out()
            p = m.start()
            c = text[p]
            if p > i and c in "[<" and self.is_trigger(p):
                crossings += 1
                if crossings > MAX_CROSSINGS:
                    return _Fail("too-large", p)
            if c in "'\"":
                got = self.past_string(p, crossings)
                if not isinstance(got, tuple):
                    return got
                j, crossings = got
                continue
            stop = self.structure(p, c, stack, newlines, depth0_stop)
            if stop is not None:
                return stop
            j = p + 1

    def past_string(self, p: int, crossings: int) -> tuple[int, int] | _Fail | NeedMore:
        """Past the string literal at ``p``: (index after it, triggers crossed so far)."""
        end = self.skip_string(p)
        if not isinstance(end, int):
            return end
        crossings += self.triggers_in(p + 1, end)
        if crossings > MAX_CROSSINGS:
            return _Fail("too-large", end)
        return end, crossings

    def structure(
        self, p: int, c: str, stack: list[str], newlines: list[int], depth0_stop: bool
    ) -> tuple[int, list[int]] | _Fail | None:
        """A bracket, newline or ``<`` at ``p``: the walk's end or failure, None to go on."""
        if c in _CLOSER:
            stack.append(_CLOSER[c])
            return _Fail("too-deep", p) if len(stack) > self.ctx.max_depth else None
        if c in ")]}":
            if not stack or stack.pop() != c:
                return _Fail("undecodable", p)
            return (p + 1, newlines) if not stack and not depth0_stop else None
        if c == ",":  # only a walk that records commas stops here
            if len(stack) == 1:
                newlines.append(p)
            return None
        if stack or not depth0_stop:
            return None
        if c == "<":
            return p, newlines
        newlines.append(p)
        return None


def _dotted_name(node: ast.expr) -> str | None:
    """``f`` or ``ns.f`` (a call's callee as written); None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class _NotLiteral(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_PY_NEWLINE = re.compile(r"\r\n|\r|\n")


class _Spellings:
    """The source text of a node, by its line and UTF-8 byte columns (what ``ast`` records);
    each line is encoded once, so reading every literal's text is linear in the source."""

    __slots__ = ("_encoded", "_lines")

    def __init__(self, source: str) -> None:
        self._lines = _PY_NEWLINE.split(source)  # the line ends Python's tokenizer counts
        self._encoded: dict[int, bytes] = {}

    def __call__(self, node: ast.expr) -> str | None:
        line, end_line = node.lineno, node.end_lineno
        if end_line != line or node.end_col_offset is None:
            return None
        data = self._encoded.get(line)
        if data is None:
            data = self._encoded[line] = self._lines[line - 1].encode("utf-8", "surrogatepass")
        return data[node.col_offset : node.end_col_offset].decode("utf-8", "surrogatepass")


def _float(v: float, node: ast.expr, spelling: Callable[[ast.expr], str | None] | None, sign: str = "") -> float:
    """``v``, as the decoder reads the literal's own text: a ``SpelledFloat`` where the float
    alone loses the model's spelling (``1.10``, ``1e3``)."""
    if not math.isfinite(v):
        raise _NotLiteral("undecodable-arguments")  # 1e999 is inf: not JSON
    text = spelling(node) if spelling is not None else None
    if text is None:
        return v
    try:
        spelled = read_float(sign + text)
    except ValueError:  # not a float literal after all: keep what ast read
        return v
    return spelled if spelled == v else v  # the text must be this literal's, or it is not used


def literal_value(node: ast.expr, spelling: Callable[[ast.expr], str | None] | None = None) -> Any:
    """A JSON value from a literal expression node; raises ``_NotLiteral``. With ``spelling``
    (a node's source text), floats keep the model's spelling as the JSON decoder's do.

    Recursion follows bracket nesting only, which the walk has capped at ``ctx.max_depth``
    before ``ast`` saw the text (and ``ast`` itself stops at 200 levels).
    """
    reader = _LITERAL_READERS.get(type(node))
    if reader is None:
        raise _NotLiteral("non-literal")
    return reader(node, spelling)


_Spelling = Callable[[ast.expr], str | None] | None


def _fitting(v: int) -> int:
    # `0x` + 4,000 hex digits parses in linear time but has no decimal spelling within the
    # int-string limit: refused here, as the JSON decoder refuses long literals.
    if not int_fits_text(v):
        raise _NotLiteral("undecodable-arguments")
    return v


def _constant(node: ast.Constant, spelling: _Spelling) -> Any:
    v = node.value
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return _fitting(v)
    if isinstance(v, float):
        return _float(v, node, spelling)
    raise _NotLiteral("undecodable-arguments")  # bytes, complex, Ellipsis


def _signed(node: ast.UnaryOp, spelling: _Spelling) -> Any:
    """``-1``, ``+2.5``: a sign on a number; any other operator is not a literal."""
    inner = node.operand
    num = inner.value if isinstance(inner, ast.Constant) else None
    if not isinstance(node.op, (ast.USub, ast.UAdd)) or not isinstance(num, (int, float)) or isinstance(num, bool):
        raise _NotLiteral("non-literal")
    negative = isinstance(node.op, ast.USub)
    if isinstance(num, int):
        return -_fitting(num) if negative else _fitting(num)
    return _float(-num if negative else num, inner, spelling, "-" if negative else "")


def _sequence(node: ast.List | ast.Tuple | ast.Set, spelling: _Spelling) -> list[Any]:
    return [literal_value(e, spelling) for e in node.elts]


def _mapping(node: ast.Dict, spelling: _Spelling) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key_node, value_node in zip(node.keys, node.values, strict=True):
        if key_node is None:
            raise _NotLiteral("non-literal")  # `**spread`
        key = literal_value(key_node, spelling)
        if not isinstance(key, str):
            raise _NotLiteral("undecodable-arguments")
        out[key] = literal_value(value_node, spelling)
    return out


def _json_name(node: ast.Name, spelling: _Spelling) -> Any:
    if node.id not in _JSON_NAMES:
        raise _NotLiteral("non-literal")
    return _JSON_NAMES[node.id]  # models mix JSON literals into Python calls


# By node type (``ast.parse`` builds these exact classes); any other node is not a literal.
_LITERAL_READERS: dict[type[ast.expr], Callable[[Any, _Spelling], Any]] = {
    ast.Constant: _constant,
    ast.UnaryOp: _signed,
    ast.List: _sequence,
    ast.Tuple: _sequence,
    ast.Set: _sequence,
    ast.Dict: _mapping,
    ast.Name: _json_name,
}


def _call(node: ast.Call, spelling: _Spellings) -> RawCall | None:
    """A RawCall from ``name(k=v, ...)``; None when the node is not call-shaped."""
    name = _dotted_name(node.func)
    if name is None or node.args:
        return None
    arguments: dict[str, Any] = {}
    try:
        for kw in node.keywords:
            if kw.arg is None:
                raise _NotLiteral("non-literal")
            if kw.arg in arguments:  # Python refuses `f(a=1, a=2)`; which one was meant is a guess
                raise _NotLiteral("undecodable-arguments")
            arguments[kw.arg] = literal_value(kw.value, spelling)
    except _NotLiteral as exc:
        return RawCall(name, {}, error=exc.reason)
    return RawCall(name, arguments)


def _calls_in(source: str) -> tuple[RawCall, ...] | str:
    """Calls from one expression: a list of calls or a single call; else a reason."""
    source = source.strip()
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "undecodable"
    body = tree.body
    items = body.elts if isinstance(body, ast.List) else [body]
    calls: list[RawCall] = []
    spelling = _Spellings(source)
    for item in items:
        call = _call(item, spelling) if isinstance(item, ast.Call) else None
        if call is None:
            return "not-a-call"
        calls.append(call)
    return tuple(calls)


# A keyword's name where a call is not Python's (Gemma 4's ``call:NAME(k: v)``): words with
# single runs of spaces between them (Gemma writes its schema's keys, ``Basic LLM Chain``).
# Word and space classes do not overlap, so a match is linear; callers bound its window.
BARE_KEY = r"[^\s:=,(){}\[\]<>\"']+(?:[ \t]+[^\s:=,(){}\[\]<>\"']+)*"
_KEY = re.compile(BARE_KEY)


def read_keyword_arguments(
    text: str, i: int, ctx: ReadContext, own: tuple[str, ...]
) -> tuple[dict[str, Any], int] | Found | NeedMore:
    """The arguments ``(k=v, …)`` at ``text[i] == "("`` and the index after the ``)``, or the
    refusal (a ``Found`` with its reason).

    Keys are bare (``BARE_KEY``: spaces inside allowed) and end with ``=`` or ``:``; values
    are the literals pythonic calls hold (``literal_value``: Python's, and JSON's ``true``,
    ``false``, ``null``); a positional argument or any other expression is refused. One
    bracket walk finds the items (strings and nesting respected), then each value is read by
    ``ast`` alone. O(length of the arguments).
    """
    walk = _Walk(text, ctx, own, min(len(text), i + ctx.max_call_chars), commas=True)
    run = walk.run(i, depth0_stop=False)
    if isinstance(run, _Fail):
        return Found(max(run.pos, i + 1), error=run.reason)
    if not isinstance(run, tuple):
        return run
    end, commas = run
    arguments: dict[str, Any] = {}
    starts = [i + 1, *(c + 1 for c in commas)]
    for n, (a, b) in enumerate(zip(starts, [*commas, end - 1], strict=True)):
        k = skip_ws(text, a)
        if k >= b:
            if n == len(commas):
                continue  # `()`, or a trailing comma
            return Found(a, error="undecodable")
        m = _KEY.match(text, k, min(b, k + ctx.max_name_chars + 1))
        j = skip_ws(text, m.end()) if m is not None else b
        if m is None or m.end() - k > ctx.max_name_chars or j >= b or text[j] not in "=:":
            return Found(k, error="undecodable")
        key = m.group()
        value = _value_in(text[j + 1 : b])
        if isinstance(value, _NotLiteral):
            return Found(end, error=value.reason)
        if key in arguments:  # which one was meant is a guess
            return Found(end, error="undecodable-arguments")
        arguments[key] = value
    return arguments, end


def _value_in(source: str) -> Any:
    """The literal ``source`` spells, or the ``_NotLiteral`` saying why it is none."""
    source = source.strip()
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _NotLiteral("undecodable")
    try:
        return literal_value(tree.body, _Spellings(source))
    except _NotLiteral as exc:
        return exc


def _read_list(
    text: str, i: int, ctx: ReadContext, own: tuple[str, ...]
) -> tuple[tuple[RawCall, ...], int] | _Fail | NeedMore:
    """The call list whose `[` is at ``i``, and the index after its `]`."""
    walk = _Walk(text, ctx, own, min(len(text), i + ctx.max_call_chars))
    end = walk.run(i, depth0_stop=False)
    if not isinstance(end, tuple):
        return end
    calls = _calls_in(text[i : end[0]])
    if isinstance(calls, str):
        return _Fail(calls, end[0])
    return calls, end[0]


@dataclass(frozen=True)
class _Pythonic:
    """The bare list ``[f(a=1), g(b='x')]``: the whole reply, or inside prose."""

    name: str = "pythonic"
    markers: tuple[str, ...] = ("[",)
    # _TRIGGER or, mid-stream, _TRIGGER_PREFIX after the marker (possessive: linear).
    gates: ClassVar[Mapping[str, Gate]] = {"[": Gate(r"[ \t\r\n]{0,8}+(?:[^\W\d][\w.]{0,255}+[ \t]{0,8}+(?:\(|\Z)|\Z)")}

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(name) unless `[name(` follows; then O(walk) (module doc).
        trigger = _trigger_at(text, start, ctx)
        if trigger is not True:
            return trigger
        got = _read_list(text, start, ctx, ())
        if isinstance(got, NeedMore):
            return NEED_MORE
        if isinstance(got, _Fail):
            if start == ctx.first_nonspace:  # the whole reply meant to be calls: say why not
                return Found(max(got.pos, marker_end), error=got.reason)
            return Found(marker_end)  # brackets in prose: not a candidate
        assert isinstance(got, tuple)
        return Found(got[1], got[0])


def _trigger_at(text: str, i: int, ctx: ReadContext) -> Literal[True] | NeedMore | None:
    """True when ``[name(`` is at ``i``; NEED_MORE when the text ends inside one; else None."""
    if _TRIGGER.match(text, i) is not None:
        return True
    return NEED_MORE if not ctx.final and _TRIGGER_PREFIX.match(text, i) else None


def _read_body(text: str, i: int, ctx: ReadContext, marker: str, close: str) -> Found | NeedMore | None:
    """A wrapper's body from ``i``: a call list, or bare calls one per line, then ``close``
    (which the end of the reply may have eaten). O(body)."""
    j = skip_ws(text, i)
    if j >= len(text):
        return NEED_MORE if not ctx.final else None
    reader = _body_list if text[j] == "[" else _body_lines if text[j].isalpha() or text[j] == "_" else None
    got = None if reader is None else reader(text, j, ctx, (marker,))
    if not isinstance(got, tuple):
        return got
    calls, end = got
    closed = read_after_payload(text, end, close, ctx)
    return NEED_MORE if isinstance(closed, NeedMore) else Found(closed, calls)


def _body_list(text: str, j: int, ctx: ReadContext, own: tuple[str, ...]) -> _Body:
    """A call list at ``j``; None for another bracket (a JSON array: another reader's)."""
    trigger = _trigger_at(text, j, ctx)
    if trigger is not True:
        return trigger  # a JSON array or empty block: another reader's
    got = _read_list(text, j, ctx, own)
    if isinstance(got, _Fail):
        return Found(max(got.pos, j + 1), error=got.reason)
    return got


def _body_lines(text: str, j: int, ctx: ReadContext, own: tuple[str, ...]) -> _Body:
    """Bare calls one per line from ``j`` up to the next ``<`` (or the end of the text)."""
    walk = _Walk(text, ctx, own, min(len(text), j + ctx.max_call_chars))
    run = walk.run(j, depth0_stop=True)
    if isinstance(run, _Fail):
        return Found(max(run.pos, j + 1), error=run.reason)
    if not isinstance(run, tuple):
        return run
    end, newlines = run
    found = _line_calls(text, j, newlines, end)
    if any(c.error is None for c in found):
        return tuple(found), end
    if all(c.error == "not-a-call" for c in found):
        return None  # prose after the marker, not calls
    # Nothing in the body decoded: a broken candidate, whose inside is not data. Refused as a
    # whole, scanning resumes right after its marker, so a call written after a stray marker
    # is still found (walks give up after MAX_CROSSINGS of this marker, so re-reading stays
    # linear).
    return Found(end, error=next(c.error for c in found if c.error != "not-a-call"))


def _line_calls(text: str, j: int, newlines: list[int], end: int) -> list[RawCall]:
    """The calls on each non-blank line of ``text[j:end]`` (a line's refusal as a call)."""
    found: list[RawCall] = []
    prev = j
    for cut in [*newlines, end]:
        line = text[prev:cut]
        prev = cut + 1
        if line.strip():
            got = _calls_in(line)
            found.extend((RawCall("", {}, error=got),) if isinstance(got, str) else got)
    return found


# A body's calls and where they end, or its refusal.
_Body = tuple[tuple[RawCall, ...], int] | Found | NeedMore | None


@dataclass(frozen=True)
class _Wrapped:
    """Pythonic calls between an opening and a closing marker."""

    name: str
    open: str
    close: str

    @property
    def markers(self) -> tuple[str, ...]:
        return (self.open,)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        return _read_body(text, marker_end, ctx, self.open, self.close)


PYTHONIC = _Pythonic()
LLAMA4_PYTHONIC = _Wrapped("llama4_pythonic", "<|python_start|>", "<|python_end|>")
OLMO3 = _Wrapped("olmo3", "<function_calls>", "</function_calls>")
LFM2_PYTHONIC = _Wrapped("lfm2_pythonic", "<|tool_call_start|>", "<|tool_call_end|>")
