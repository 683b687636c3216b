"""Argument decoding (lenient JSON), schema coercion and validation.

Two halves, both pure:

* :func:`decode_arguments` turns a model's argument text into a ``dict``. Valid JSON costs one
  call into the C scanner; anything else goes through one hand-written, iterative parser that
  repairs only what has a single reading and refuses the rest (truncation is never completed).
* :func:`compile_schema` builds a :class:`CompiledSchema` once per tool; ``apply`` renames
  misnamed keys, coerces values where that is safe, then validates with ``jsonschema``.

Every repair is reported as a :class:`~toolrepair._types.RepairEvent`; every failure is an
:class:`~toolrepair._errors.ArgumentError` with a ``reason`` code.
"""

from __future__ import annotations

import json
import math
import operator
import re
import unicodedata
import warnings
from collections.abc import Callable, Mapping
from functools import lru_cache, partial
from itertools import chain, compress, repeat
from typing import Any, Final

import jsonschema
import jsonschema.exceptions
import jsonschema.validators
import regex
from referencing.exceptions import Unresolvable

from ._errors import ArgumentError
from ._types import RepairEvent

__all__ = [
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_DEPTH",
    "FINITE_SCAN",
    "CompiledSchema",
    "check_nesting",
    "compile_schema",
    "decode_arguments",
]

DEFAULT_MAX_DEPTH: Final = 100
"""Deepest nesting of objects and arrays accepted in decoded arguments (the top object is 1)."""

DEFAULT_MAX_CHARS: Final = 10_000_000
"""Longest argument text accepted, in characters."""

# Python refuses int() on more than 4300 digits by default (CVE-2020-10735): converting is
# quadratic. Both paths refuse longer integer literals (floats convert in linear time).
_MAX_NUMBER_CHARS: Final = 4300

_MISSING: Final = object()


# --------------------------------------------------------------------------------------------
# Decoding: the fast path
# --------------------------------------------------------------------------------------------


class _NonFiniteError(ValueError):
    """Raised inside the C scanner to push non-finite numbers onto the slow path."""


def _finite_float(text: str) -> float:
    # Called by the C scanner only for number literals with a fraction or exponent.
    value = float(text)
    if value - value != 0.0:  # inf or nan
        raise _NonFiniteError(text)
    return value


def _reject_constant(text: str) -> Any:
    raise _NonFiniteError(text)


# strict=False: raw newlines and tabs inside strings are what models emit; they are unambiguous.
# Two scanners: short texts check each float as it is read (a Python call per float, and no
# walk afterwards); long texts read floats at C speed and check them with the depth, in the
# walk or in the text proof, which they need anyway.
FINITE_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = json.JSONDecoder(  # type: ignore[attr-defined]
    strict=False, parse_float=_finite_float, parse_constant=_reject_constant
).scan_once
_PLAIN_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = json.JSONDecoder(  # type: ignore[attr-defined]
    strict=False, parse_constant=_reject_constant
).scan_once
_CONTAINER_TYPES: Final = frozenset((dict, list))

# The text proof (_text_is_safe). One translate keeps, of the UTF-8 bytes, only the quotes, the
# brackets ('[{' -> '(', ']}' -> ')'), the number marks (digits -> '0', 'eE' -> 'e') and, to keep
# numbers apart, the commas and the backslashes that start the escapes left.
_MARK_CHARS: Final = b'"[{]}0123456789eE,\\'
_MARK_TABLE: Final = bytes.maketrans(_MARK_CHARS, b'"(())0000000000ee,\\')
_MARK_DELETE: Final = bytes(sorted(set(range(256)).difference(_MARK_CHARS)))
_SEPARATORS_AND_NUMBERS: Final = b",\\0e"
# A number literal -?I(.F)?([eE][+-]?X)? marks as 0..0 or 0..0e0..0, the digits of X last
# (signs and '.' are deleted; deleting never separates what was adjacent). Its value is below
# 10**(len(I) + X) and inf needs 1.8e308, so an inf has an exponent of 3 or more digits (0e000
# is in its marks) or, with X <= 99, at least 210 integer digits (a run of 200 is looked for).
# Quotes, brackets and commas keep numbers apart, backslashes keep \uXXXX escapes apart (one
# has at most two digits after an 'e'). Inside a string, digits can still line up, once the
# letters between are deleted, as a false alarm (as in some hex): it costs a walk.
_BIG_EXPONENT: Final = b"0e000"
_LONG_DIGITS: Final = b"0" * 200
_DEPTH_PASSES: Final = 8  # replace passes at most, then the pairs left must fit
# The walk stops short when its next level would take it past one element per 2**_WALK_SHIFT
# characters: it costs ~60 ns an element, the text proof ~2 ns a character.
_WALK_SHIFT: Final = 7


def _text_is_safe(text: str, start: int, max_depth: int) -> bool:
    """True if ``text[start:]`` provably nests at most ``max_depth`` deep and has no number
    literal that overflows to inf; False when that is not proved (the caller walks instead).

    Only for text the C scanner has just accepted as exactly one JSON value. Each step is one
    C-level pass over bytes (encode, at most two replaces, three translates, two substring
    searches, one count, at most ``_DEPTH_PASSES`` replaces): O(n), no Python step per element.

    Why it is sound: in valid JSON a backslash occurs only inside strings and starts a two-
    character escape, so deleting the pairs ``\\\\`` then ``\\"`` (left to right, as escapes
    parse) leaves exactly the quotes that open and close strings, alternating. Among the quotes
    and brackets, each string is ``"`` + the brackets it holds + ``"``; counting ``""`` left to
    right finds one match per string exactly when no string holds a bracket (matches covering
    every quote must pair each opening quote with the next one). The brackets left are then the
    structure, and a ``replace("()", "")`` removes every innermost pair, lowering the depth by
    exactly one: the depth is at most the passes made plus the pairs left.
    """
    data = text[start:].encode("utf-8", "surrogatepass")
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    marks = data.translate(_MARK_TABLE, _MARK_DELETE)
    if _BIG_EXPONENT in marks or _LONG_DIGITS in marks:
        return False
    marks = marks.translate(None, _SEPARATORS_AND_NUMBERS)
    brackets = marks.translate(None, b'"')
    if marks.count(b'""') * 2 != len(marks) - len(brackets):
        return False  # some string holds a bracket
    # The depth is the passes done plus the depth of what is left, at most a level per pair.
    for passes in range(_DEPTH_PASSES):
        if passes + len(brackets) // 2 <= max_depth:
            return True
        brackets = brackets.replace(b"()", b"")
    return _DEPTH_PASSES + len(brackets) // 2 <= max_depth


def check_nesting(value: Any, max_depth: int, text: str = "", start: int = 0) -> None:
    """Raise ``too-deep`` beyond ``max_depth`` levels, ``_NonFiniteError`` for inf or nan.

    Iterative and breadth-first, one level at a time: each level costs a constant number of
    Python steps, and each element a few steps of C-level iterators (chain, map, compress).
    O(total elements). Given ``text`` (whose ``text[start:]`` the scanner turned into
    ``value``), the walk stops short when its next level would pass one element per
    ``2**_WALK_SHIFT`` characters and ``_text_is_safe`` proves the rest at C speed.
    """
    dicts: list[dict[str, Any]] = [value] if type(value) is dict else []
    lists: list[list[Any]] = [value] if type(value) is list else []
    budget = (len(text) - start) >> _WALK_SHIFT if text else -1
    depth = 0
    while dicts or lists:
        depth += 1
        if depth > max_depth:
            raise ArgumentError(f"Arguments nest deeper than {max_depth} levels", reason="too-deep")
        if budget >= 0:
            budget -= sum(map(len, dicts)) + sum(map(len, lists))
            if budget < 0 and _text_is_safe(text, start, max_depth):
                return
        children = list(chain(chain.from_iterable(map(dict.values, dicts)), chain.from_iterable(lists)))
        kinds = list(map(type, children))
        present = set(kinds)
        dicts = list(compress(children, map(operator.is_, kinds, repeat(dict)))) if dict in present else []
        lists = list(compress(children, map(operator.is_, kinds, repeat(list)))) if list in present else []
        if float in present and not all(
            map(math.isfinite, compress(children, map(operator.is_, kinds, repeat(float))))
        ):
            raise _NonFiniteError("inf")


def _maybe_scan(text: str, max_depth: int, start: int = 0) -> Any:
    """The value of ``text[start:]`` if it is exactly one valid JSON value, else ``_MISSING``.

    One pass of the C scanner; for texts long enough to nest beyond ``max_depth`` (depth d
    needs 2d characters), a check of the result: a walk while the value is sparse, a proof
    from the text once it is dense (see ``check_nesting``). Raises ``too-deep``.
    """
    short = len(text) - start <= 2 * max_depth
    try:
        value, end = (FINITE_SCAN if short else _PLAIN_SCAN)(text, start)
        if end != len(text):
            return _MISSING
        if not short:
            check_nesting(value, max_depth, text, start)
    except ArgumentError:
        raise
    except (StopIteration, ValueError, RecursionError):
        # StopIteration: no value at 0; ValueError: a syntax error, a non-finite number or
        # Python's int digit limit; RecursionError: nesting beyond the C scanner's stack.
        return _MISSING
    return value


# --------------------------------------------------------------------------------------------
# Decoding: the lenient parser
# --------------------------------------------------------------------------------------------

_JSON_WS: Final = re.compile(r"[ \t\n\r]*")
_SPACE_OR_SLASH: Final = frozenset(" \t\n\r/")
# Opening quote -> the characters that may close it. Smart quotes close with either of the pair:
# models mix them up, and inside such a string a plain '"' is content.
_CLOSERS: Final = {'"': '"', "'": "'", "“": "”“", "‘": "’‘"}
_QUOTE_CHARS: Final = "\"'“”‘’"
# One chunk regex per opener: a run of characters that are neither a backslash nor a closer.
_CHUNKS: Final = {q: re.compile("[^\\\\" + closers + "]*") for q, closers in _CLOSERS.items()}
_ESCAPES: Final = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX4: Final = re.compile(r"[0-9a-fA-F]{4}")
_HEX_PREFIX: Final = re.compile(r"[0-9a-fA-F]{0,3}")
# Number tokens: a greedy run of number characters, then checked whole. No nested quantifiers
# over the same characters, so every match is linear.
_NUMBER_CHARS: Final = re.compile(r"[-+.0-9eE]+")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_PREFIX: Final = re.compile(r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?)?")
_LEADING_ZERO: Final = re.compile(r"-?0[0-9]")
_WORD: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_BARE_KEY: Final = re.compile(r"(?:[^\W\d]|\$)[\w$-]*")
_SPACE: Final = re.compile(r"\s*")  # what str.strip() removes
_FENCE_OPEN: Final = re.compile(r"`{3,}|~{3,}")
_FENCE_INFO: Final = re.compile(r"[ \t]*[A-Za-z0-9_.+-]*[ \t]*\r?\n")

# word -> (value, replaced-from-Python?)
_LITERALS: Final[dict[str, tuple[Any, bool]]] = {
    "true": (True, False),
    "false": (False, False),
    "null": (None, False),
    "True": (True, True),
    "False": (False, True),
    "None": (None, True),
}
_JSON_SPELLING: Final = {"True": "true", "False": "false", "None": "null"}

# Parser states.
_S_VALUE: Final = 0  # a value is expected (top level, after ':', after '[' or ',' in an array)
_S_KEY: Final = 1  # a key or '}' is expected (after '{' or ',' in an object)
_S_COLON: Final = 2  # ':' is expected after a key
_S_AFTER: Final = 3  # ',' or a closing bracket is expected after a member
_S_END: Final = 4  # the top-level value is complete


class _Notes:
    """Repairs seen while decoding, one event per kind of repair (first position, count)."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[str, list[Any]] = {}

    def add(self, what: str, position: int, before: Any = None, after: Any = None) -> None:
        entry = self._seen.get(what)
        if entry is None:
            self._seen[what] = [1, position, before, after]
        else:
            entry[0] += 1

    def events(self) -> tuple[RepairEvent, ...]:
        out = []
        for what, (count, position, before, after) in self._seen.items():
            more = f" (and {count - 1} more)" if count > 1 else ""
            out.append(RepairEvent("decode", f"{what} at {position}{more}", before=before, after=after))
        return tuple(out)


def _truncated(where: str, position: int) -> ArgumentError:
    return ArgumentError(
        f"Arguments are truncated: {where} (at character {position})",
        reason="truncated",
        position=position,
    )


def _undecodable(message: str, position: int) -> ArgumentError:
    return ArgumentError(message, reason="undecodable", position=position)


def _skip_space(s: str, i: int, notes: _Notes) -> int:
    """Skip JSON whitespace and comments from ``i``. O(length skipped)."""
    while True:
        if s[i : i + 1] not in _SPACE_OR_SLASH:  # the common case: a token starts right here
            return i
        i = _JSON_WS.match(s, i).end()  # type: ignore[union-attr]  # '*' always matches
        if s.startswith("//", i):
            notes.add("Removed comment", i, s[i : i + 2], "")
            end = s.find("\n", i + 2)
            i = len(s) if end < 0 else end + 1
        elif s.startswith("/*", i):
            end = s.find("*/", i + 2)
            if end < 0:
                raise _truncated(f"unterminated comment starting at {i}", len(s))
            notes.add("Removed comment", i, s[i : i + 2], "")
            i = end + 2
        else:
            return i


def _string_end(s: str, i: int) -> int:
    """Index just past the string opened at ``i``, or -1 if the text ends first. O(its length)."""
    chunk = _CHUNKS[s[i]].match
    j = i + 1
    n = len(s)
    while True:
        k = chunk(s, j).end()  # type: ignore[union-attr]
        if k >= n:
            return -1
        if s[k] == "\\":
            j = k + 2
            continue
        return k + 1


def _read_string(s: str, i: int, notes: _Notes, object_value: bool) -> tuple[str, int]:
    """Read the string opened at ``s[i]``; return it and the index after its closing quote.

    A closing-quote character ends the string only when what follows it (after whitespace) is
    ``,`` ``}`` ``]`` ``:`` or the end of the text; otherwise it is content (an unescaped quote).
    When it is followed by another quote the two readings can differ: it ends the string if the
    next string is a key (a missing comma), it is content if the next quote itself ends the
    string, and anything else is refused as ambiguous.

    Linear: the chunk regex and each look-ahead advance past text that is never rescanned more
    than twice (whitespace after a candidate quote, and the one look-ahead string, which ends
    this string either way).
    """
    n = len(s)
    opener = s[i]
    closers = _CLOSERS[opener]
    chunk = _CHUNKS[opener].match
    ws = _JSON_WS.match
    if opener == "'":
        notes.add("Replaced single quotes with double quotes", i, "'", '"')
    elif opener != '"':
        notes.add("Replaced smart quotes with double quotes", i, opener, '"')
    parts: list[str] = []
    start = j = i + 1
    kept = -1  # position of the first quote kept as content, if any
    while True:
        k = chunk(s, j).end()  # type: ignore[union-attr]
        if k >= n:
            if kept >= 0:
                # '{"a": "x"y}': the kept quote may have been the end, with junk after it.
                raise ArgumentError(
                    f"Ambiguous quote at {kept}: the string starting at {i} never ends if it is content",
                    reason="ambiguous",
                    position=kept,
                )
            raise _truncated(f"unterminated string starting at {i}", n)
        if s[k] == "\\":
            parts.append(s[start:k])
            esc = s[k + 1 : k + 2]
            simple = _ESCAPES.get(esc)
            if simple is not None:
                parts.append(simple)
                j = k + 2
            elif esc == "u":
                char, j = _read_unicode_escape(s, k)
                if char is None:
                    notes.add("Kept invalid escape as literal text", k, s[k : k + 2], s[k : k + 2])
                    parts.append("\\")
                else:
                    parts.append(char)
            elif not esc:
                raise _truncated(f"unterminated string starting at {i}", n)
            elif esc in closers or esc in "'’":
                if esc != opener:
                    notes.add("Replaced invalid escape of a quote with the quote", k, "\\" + esc, esc)
                parts.append(esc)
                j = k + 2
            else:
                # "C:\Users": an invalid escape is kept, backslash and all; then the next
                # character is read normally.
                notes.add("Kept invalid escape as literal text", k, "\\" + esc, "\\" + esc)
                parts.append("\\")
                j = k + 1
            start = j
            continue
        # s[k] is a closing-quote character: does it end the string?
        p = ws(s, k + 1).end()  # type: ignore[union-attr]
        if p >= n or s[p] in ",}]:":
            parts.append(s[start:k])
            return "".join(parts), k + 1
        nxt = s[p]
        if nxt in _QUOTE_CHARS:
            if nxt in closers:
                q = ws(s, p + 1).end()  # type: ignore[union-attr]
                if q >= n or s[q] in ",}]:":
                    # 'He said "hi""}': this quote is content; the next one ends the string.
                    notes.add("Kept unescaped quote as string content", k, s[k], "\\" + s[k])
                    kept = k if kept < 0 else kept
                    j = k + 1
                    continue
            if object_value and nxt in _CLOSERS:
                end = _string_end(s, p)
                if end < 0:
                    raise _truncated(f"unterminated string starting at {p}", n)
                after = ws(s, end).end()  # type: ignore[union-attr]
                if s.startswith(":", after):
                    parts.append(s[start:k])
                    return "".join(parts), k + 1
            raise ArgumentError(
                f"Ambiguous quote at {k}: it may end the string or be part of it",
                reason="ambiguous",
                position=k,
            )
        notes.add("Kept unescaped quote as string content", k, s[k], "\\" + s[k])
        kept = k if kept < 0 else kept
        j = k + 1


def _read_unicode_escape(s: str, k: int) -> tuple[str | None, int]:
    """Decode ``\\uXXXX`` at ``s[k]`` (joining a surrogate pair as ``json`` does)."""
    digits = s[k + 2 : k + 6]
    if not _HEX4.fullmatch(digits):
        if k + 6 > len(s) and _HEX_PREFIX.fullmatch(digits):
            raise _truncated("the text ends inside a \\u escape", len(s))
        return None, k + 1
    code = int(digits, 16)
    if 0xD800 <= code <= 0xDBFF and s.startswith("\\u", k + 6):
        low_digits = s[k + 8 : k + 12]
        if _HEX4.fullmatch(low_digits):
            low = int(low_digits, 16)
            if 0xDC00 <= low <= 0xDFFF:
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), k + 12
    return chr(code), k + 6


def _read_number(s: str, i: int) -> tuple[int | float, int]:
    """Read a JSON number at ``s[i]``. O(its length); refuses non-finite and over-long numbers."""
    match = _NUMBER_CHARS.match(s, i)
    assert match is not None  # the caller saw '-' or a digit
    token = match.group()
    end = match.end()
    if not _NUMBER.fullmatch(token):
        if _LEADING_ZERO.match(token):
            raise ArgumentError(
                f"Number {token[:40]!r} at {i} has a leading zero: it is ambiguous "
                "(quote it if it is a string such as a postcode)",
                reason="ambiguous",
                position=i,
            )
        if end >= len(s) and _NUMBER_PREFIX.fullmatch(token):
            raise _truncated(f"the text ends inside a number starting at {i}", len(s))
        raise _undecodable(f"Invalid number {token[:40]!r} at {i}", i)
    if "." in token or "e" in token or "E" in token:
        value = float(token)  # linear in the token's length, unlike int()
        if value - value != 0.0:
            raise _undecodable(f"Number {token[:40]!r} at {i} is not finite", i)
        return value, end
    if len(token) > _MAX_NUMBER_CHARS:
        raise _undecodable(f"Number at {i} is too long ({len(token)} characters; the limit is {_MAX_NUMBER_CHARS})", i)
    try:
        return int(token), end
    except ValueError:  # the interpreter's own digit limit may be lower than ours
        raise _undecodable(f"Number at {i} has too many digits", i) from None


def _parse_lenient(s: str, start: int, max_depth: int, notes: _Notes, doubled: bool) -> Any:
    """Parse ``s[start:]`` as one JSON value, repairing only what has a single reading.

    One left-to-right pass with an explicit stack: O(len(s)) time, O(depth + output) space, no
    recursion. ``doubled`` reads ``{{``/``}}`` as ``{``/``}`` (template leakage).
    """
    n = len(s)
    stack: list[Any] = []
    state = _S_VALUE
    comma_at = -1  # position of the comma just read, for trailing-comma notes
    key = ""
    result: Any = None
    i = start
    while True:
        i = _skip_space(s, i, notes)
        if i >= n:
            break
        c = s[i]
        if state in (_S_VALUE, _S_KEY):
            top = stack[-1] if stack else None
            if (c == "]" and state == _S_VALUE and type(top) is list) or (c == "}" and state == _S_KEY):
                if comma_at >= 0:
                    notes.add("Removed trailing comma", comma_at, ",", "")
                i = _close(s, i, c, doubled)
                stack.pop()
                state = _S_AFTER if stack else _S_END
                comma_at = -1
                continue
        if state == _S_VALUE:
            opened: Any = _MISSING
            if c in "{[":
                if len(stack) >= max_depth:
                    raise ArgumentError(
                        f"Arguments nest deeper than {max_depth} levels at {i}",
                        reason="too-deep",
                        position=i,
                    )
                if c == "{" and doubled:
                    if not s.startswith("{{", i):
                        raise _undecodable(f"Single '{{' at {i} among doubled braces", i)
                    i += 2
                else:
                    i += 1
                opened = {} if c == "{" else []
                value: Any = opened
            elif c in _CLOSERS:
                value, i = _read_string(s, i, notes, type(stack[-1]) is dict if stack else False)
            elif c == "-" or "0" <= c <= "9":
                value, i = _read_number(s, i)
            else:
                value, i = _read_word(s, i, notes, top_level=not stack)
            if stack:
                top = stack[-1]
                if type(top) is dict:
                    top[key] = value
                else:
                    top.append(value)
                state = _S_AFTER
            else:
                result = value
                state = _S_END
            if opened is not _MISSING:
                stack.append(opened)
                state = _S_KEY if type(opened) is dict else _S_VALUE
            comma_at = -1
        elif state == _S_KEY:
            if c in _CLOSERS:
                key, i = _read_string(s, i, notes, False)
            else:
                match = _BARE_KEY.match(s, i)
                if match is None:
                    raise _undecodable(f"Expected a quoted key at {i}, got {c!r}", i)
                key = match.group()
                notes.add("Quoted bare key", i, key, json.dumps(key, ensure_ascii=False))
                i = match.end()
            state = _S_COLON
        elif state == _S_COLON:
            if c != ":":
                raise _undecodable(f"Expected ':' after key {key!r} at {i}, got {c!r}", i)
            i += 1
            state = _S_VALUE
            comma_at = -1
        elif state == _S_AFTER:
            top = stack[-1]
            if c == ",":
                comma_at = i
                i += 1
                state = _S_KEY if type(top) is dict else _S_VALUE
            elif c in "}]":
                if (c == "}") != (type(top) is dict):
                    raise _undecodable(f"Mismatched {c!r} at {i}", i)
                i = _close(s, i, c, doubled)
                stack.pop()
                state = _S_AFTER if stack else _S_END
            elif (
                type(top) is dict and (c in _CLOSERS or c == "$" or c.isalpha() or c == "_") and not s[i - 1].isalnum()
            ):
                # {"a": 1 "b": 2}: the key reading needs a ':' next, which _S_COLON insists on.
                notes.add("Inserted missing comma", i, "", ",")
                state = _S_KEY
            elif type(top) is list and (c in _CLOSERS or c in "-[{" or c.isalnum()):
                raise ArgumentError(
                    f"Missing comma between array elements at {i}: the elements cannot be told apart",
                    reason="ambiguous",
                    position=i,
                )
            else:
                closer = "}" if type(top) is dict else "]"
                raise _undecodable(f"Expected ',' or {closer!r} at {i}, got {c!r}", i)
        else:  # _S_END
            raise _undecodable(f"Unexpected text after the arguments at {i}", i)

    if state == _S_END:
        return result
    if not stack:
        raise ArgumentError("Arguments are empty", reason="empty", position=start)
    if state == _S_COLON:
        raise _truncated(f"the text ends after key {key!r}", n)
    if state == _S_VALUE and type(stack[-1]) is dict:
        raise _truncated(f"the text ends after the ':' of key {key!r}", n)
    if comma_at >= 0:
        raise _truncated(f"the text ends after the ',' at {comma_at}", n)
    unclosed = len(stack)
    raise _truncated(f"the text ends with {unclosed} unclosed bracket{'s' if unclosed > 1 else ''}", n)


def _close(s: str, i: int, c: str, doubled: bool) -> int:
    if c == "}" and doubled:
        if not s.startswith("}}", i):
            raise _undecodable(f"Single '}}' at {i} among doubled braces", i)
        return i + 2
    return i + 1


def _read_word(s: str, i: int, notes: _Notes, *, top_level: bool) -> tuple[Any, int]:
    """A bare word in value position: a JSON or Python literal, else an error."""
    match = _WORD.match(s, i)
    if match is None:
        if top_level:
            raise _undecodable(f"Arguments are not JSON: unexpected {s[i]!r} at {i}", i)
        raise _undecodable(f"Unexpected {s[i]!r} at {i}", i)
    word = match.group()
    literal = _LITERALS.get(word)
    if literal is not None:
        value, from_python = literal
        if from_python:
            spelling = _JSON_SPELLING[word]
            notes.add(f"Replaced Python literal {word} with {spelling}", i, word, spelling)
        return value, match.end()
    if word in ("NaN", "Infinity"):
        raise _undecodable(f"{word} at {i} is not a finite number", i)
    if match.end() >= len(s) and any(name.startswith(word) for name in _LITERALS):
        raise _truncated(f"the text ends inside {word!r} at {i}", len(s))
    shown = word[:40]
    if top_level:
        raise _undecodable(f"Arguments are not JSON: unexpected {shown!r} at {i}", i)
    raise _undecodable(f"Unexpected {shown!r} at {i}: string values must be quoted", i)


def _content_span(text: str, notes: _Notes) -> tuple[int, int]:
    """Where the arguments lie in ``text``: without surrounding whitespace, a byte-order mark
    or one Markdown code fence around the whole text. O(len(text)).

    A span rather than a slice, so that every position reported is a position in ``text``.
    """
    start = _SPACE.match(text).end()  # type: ignore[union-attr]  # '*' always matches
    end = len(text.rstrip())
    if text.startswith("\ufeff", start):
        notes.add("Removed byte-order mark", start, "\ufeff", "")
        start = _SPACE.match(text, start + 1).end()  # type: ignore[union-attr]
    fence = _FENCE_OPEN.match(text, start, end)
    if fence is not None:
        notes.add("Removed Markdown code fence", start, fence.group(), "")
        info = _FENCE_INFO.match(text, fence.end(), end)
        start = info.end() if info is not None else fence.end()
        # A closing fence (of the same character, three or more) ends the body.
        body = text[start:end]
        closing = len(body) - len(body.rstrip(fence.group()[0]))
        if closing >= 3:
            end -= closing
        start = _SPACE.match(text, start, end).end()  # type: ignore[union-attr]
        end = start + len(text[start:end].rstrip())
    return start, max(start, end)


def _decode_text(text: str, max_depth: int, notes: _Notes, *, allow_double: bool, scanned: bool = False) -> Any:
    """Decode ``text`` to any JSON value: find its span, try the C scanner, then repair.

    ``scanned`` says the caller has already tried the C scanner on the whole of ``text``.
    """
    start, end = _content_span(text, notes)
    if start == end:
        raise ArgumentError("Arguments are empty", reason="empty", position=start)
    body = text if end == len(text) else text[:end]  # cut only the end: positions stay valid
    value = _MISSING if scanned and body is text and start == 0 else _maybe_scan(body, max_depth, start)
    if value is _MISSING:
        doubled = body.startswith("{{", start)
        if doubled:
            notes.add("Collapsed doubled braces", start, "{{", "{")
        value = _parse_lenient(body, start, max_depth, notes, doubled)
    if allow_double and type(value) is str:
        inner = _Notes()
        try:
            decoded = _decode_text(value, max_depth, inner, allow_double=False)
        except ArgumentError:
            return value
        if type(decoded) in _CONTAINER_TYPES:
            notes.add("Decoded double-encoded JSON string", start, "string", "object")
            for what, entry in inner._seen.items():
                notes._seen.setdefault(what, entry)  # positions inside the decoded string
            return decoded
    return value


def _text_of(raw: object, max_chars: int) -> str:
    if isinstance(raw, str):
        text = raw
    elif isinstance(raw, bytes | bytearray | memoryview):
        data = bytes(raw)
        if len(data) > 4 * max_chars:
            raise ArgumentError(
                f"Arguments are too large ({len(data)} bytes; the limit is {max_chars} characters)",
                reason="too-large",
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ArgumentError(
                f"Arguments are not valid UTF-8 (at byte {exc.start})",
                reason="undecodable",
                position=exc.start,
            ) from None
    else:
        raise ArgumentError(f"Arguments must be a JSON object, got {type(raw).__name__}", reason="not-an-object")
    if len(text) > max_chars:
        raise ArgumentError(
            f"Arguments are too large ({len(text)} characters; the limit is {max_chars})",
            reason="too-large",
        )
    return text


def _json_kind(value: object) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    return "null" if value is None else type(value).__name__


def decode_arguments(
    raw: str | bytes | Mapping[str, Any] | None,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> tuple[dict[str, Any], tuple[RepairEvent, ...]]:
    """Decode tool-call arguments to a ``dict``, repairing JSON only where the intent is clear.

    A mapping is copied, ``None`` is ``{}``; text (or UTF-8 bytes) is decoded leniently and each
    repair is returned as a ``decode`` event. Raises :class:`ArgumentError` (and nothing else)
    with ``reason`` ``truncated``, ``undecodable``, ``empty``, ``not-an-object``, ``too-deep``,
    ``too-large`` or ``ambiguous``. Linear in the length of the text.

    >>> decode_arguments("{'query': 'cats',}")[0]
    {'query': 'cats'}
    """
    if type(raw) is str:
        text = raw
        if len(text) > max_chars:
            _text_of(text, max_chars)
    elif raw is None:
        return {}, ()
    elif isinstance(raw, Mapping):
        return dict(raw), ()
    else:
        text = _text_of(raw, max_chars)
    # Fast path: valid JSON that is exactly one object costs one call into the C scanner.
    value = _maybe_scan(text, max_depth)
    if type(value) is dict:
        return value, ()
    notes = _Notes()
    value = _decode_text(text, max_depth, notes, allow_double=True, scanned=value is _MISSING)
    if type(value) is not dict:
        raise ArgumentError(f"Arguments must be a JSON object, got {_json_kind(value)}", reason="not-an-object")
    return value, notes.events()


def _decode_value(text: str) -> Any:
    """Any JSON value from ``text`` (used to coerce a string to an array or object)."""
    return _decode_text(text, DEFAULT_MAX_DEPTH, _Notes(), allow_double=False)


# --------------------------------------------------------------------------------------------
# Schemas: key renaming, coercion, validation
# --------------------------------------------------------------------------------------------

# NFKC + casefold, then drop format characters (zero-width, bidi), '_', '-' and whitespace.
_KEY_NOISE: Final = regex.compile(r"[\p{Cf}_\-\s]+")
_KEY_SUFFIX: Final = re.compile(r"\s*[=:]\s*\Z")
_INT_TEXT: Final = re.compile(r"(-?[0-9]+)(?:\.0+)?")
_MAX_COERCE_DEPTH: Final = DEFAULT_MAX_DEPTH
# Longer keys are never renamed: no property name is this long, and the cache stays small.
_MAX_KEY_CHARS: Final = 256
_TYPE_WORDS: Final = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "a boolean (true or false)",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


@lru_cache(maxsize=4096)
def _normalize_key(key: str) -> str:
    """``' Query= '`` -> ``'query'``: the spelling-insensitive form of an argument name."""
    key = _KEY_SUFFIX.sub("", key.strip())
    return _KEY_NOISE.sub("", unicodedata.normalize("NFKC", key).casefold())


def _is_strict_int(checker: object, instance: object) -> bool:
    # jsonschema accepts 5.0 as an integer; tools taking int do not, so 5.0 is coerced instead.
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_type(value: object, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    return True  # an unknown type name: never coerce towards it


def _coerce_to(value: object, name: str) -> Any:
    """``value`` converted to JSON type ``name`` where that is lossless, else ``_MISSING``."""
    if isinstance(value, str):
        text = value.strip()
        if name in ("integer", "number"):
            if len(text) > _MAX_NUMBER_CHARS or not _NUMBER.fullmatch(text):
                return _MISSING
            whole = _INT_TEXT.fullmatch(text)
            if whole is not None:  # "5", and "5.0" for an integer: no rounding, no exponent
                return int(whole.group(1))
            if name == "integer":
                return _MISSING
            number = float(text)
            return number if number - number == 0.0 else _MISSING
        if name == "boolean":
            folded = text.casefold()
            return True if folded == "true" else False if folded == "false" else _MISSING
        if name == "null":
            return None if text.casefold() == "null" else _MISSING
        if name in ("array", "object"):
            try:
                decoded = _decode_value(value)
            except ArgumentError:
                return _MISSING
            return decoded if _is_type(decoded, name) else _MISSING
        return _MISSING
    if isinstance(value, bool):
        return _MISSING
    if name == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if name == "string" and isinstance(value, int | float):
        return json.dumps(value) if isinstance(value, int) or math.isfinite(value) else _MISSING
    return _MISSING


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _show(value: object, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


_STRICT_CLASSES: dict[type[Any], type[Any]] = {}


def _validator_class(schema: Mapping[str, Any]) -> type[Any]:
    with warnings.catch_warnings():
        # An unknown $schema falls back to the latest draft with a DeprecationWarning.
        warnings.simplefilter("ignore", DeprecationWarning)
        base: type[Any] = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    strict = _STRICT_CLASSES.get(base)
    if strict is None:
        checker = base.TYPE_CHECKER.redefine("integer", _is_strict_int)
        strict = jsonschema.validators.extend(base, type_checker=checker)  # type: ignore[no-untyped-call]
        _STRICT_CLASSES[base] = strict
    return strict


# A fast acceptance check for the common flat schemas, because one jsonschema validation of a
# five-property object costs ~30 µs. It only ever says "valid" for instances jsonschema would
# also accept (it understands a small keyword set exactly and declines every other schema);
# jsonschema stays the only judge of invalid instances and writes every error.
_Check = Callable[[Any], bool]
# Keywords with no effect on these instances: annotations, and "format", which jsonschema does
# not assert unless a format checker is passed (none is).
_ANNOTATIONS: Final = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "$schema",
        "$id",
        "$defs",
        "definitions",
    }
)
_BOUNDS: Final[dict[str, tuple[str, Callable[[Any, Any], bool]]]] = {
    "minimum": ("number", operator.ge),
    "maximum": ("number", operator.le),
    "minLength": ("string", lambda value, bound: len(value) >= bound),
    "maxLength": ("string", lambda value, bound: len(value) <= bound),
    "minItems": ("array", lambda value, bound: len(value) >= bound),
    "maxItems": ("array", lambda value, bound: len(value) <= bound),
}


def _always(value: Any) -> bool:
    return True


def _has_type(names: tuple[str, ...], value: Any) -> bool:
    return any(_is_type(value, name) for name in names)


def _in_enum(allowed: frozenset[str], value: Any) -> bool:
    return type(value) is str and value in allowed


def _all_items(item_check: _Check, value: Any) -> bool:
    return not isinstance(value, list) or all(map(item_check, value))


def _within(applies_to: str, within: Callable[[Any, Any], bool], bound: float, value: Any) -> bool:
    return not _is_type(value, applies_to) or within(value, bound)


def _all_checks(checks: tuple[_Check, ...], value: Any) -> bool:
    return all(check(value) for check in checks)


def _any_check(checks: tuple[_Check, ...], value: Any) -> bool:
    return any(check(value) for check in checks)


def _one_check(checks: tuple[_Check, ...], value: Any) -> bool:
    return sum(check(value) for check in checks) == 1


def _simple_check(schema: object) -> _Check | None:
    """A predicate equivalent to validation for ``schema``, or None if it uses other keywords.

    Each predicate is exact (true exactly when jsonschema, with the strict integer type, says
    valid) for the keywords it accepts; any other keyword declines the whole schema.
    """
    if schema is True or (isinstance(schema, Mapping) and not schema):
        return _always
    if not isinstance(schema, Mapping):
        return None
    checks: list[_Check] = []
    for keyword, argument in schema.items():
        if keyword in _ANNOTATIONS or keyword in ("properties", "required", "additionalProperties"):
            continue  # the object keywords are handled together below
        if keyword == "type":
            names = [argument] if isinstance(argument, str) else argument
            if not isinstance(names, list) or not all(name in _TYPE_WORDS for name in names):
                return None
            checks.append(partial(_has_type, tuple(names)))
        elif keyword == "enum":
            # Strings only: jsonschema tells 1 from True and 1.0, Python's `in` does not.
            if not isinstance(argument, list) or not all(isinstance(item, str) for item in argument):
                return None
            checks.append(partial(_in_enum, frozenset(argument)))
        elif keyword == "items":
            item_check = _simple_check(argument)
            if item_check is None:
                return None
            checks.append(partial(_all_items, item_check))
        elif keyword in ("anyOf", "oneOf"):
            # Exact branch predicates make "exactly one" as safe as "any".
            if not isinstance(argument, list) or not argument:
                return None
            branches = [_simple_check(branch) for branch in argument]
            if any(branch is None for branch in branches):
                return None
            combine = _any_check if keyword == "anyOf" else _one_check
            checks.append(partial(combine, tuple(b for b in branches if b is not None)))
        elif keyword in _BOUNDS:
            if not isinstance(argument, int | float) or isinstance(argument, bool):
                return None
            applies_to, within = _BOUNDS[keyword]
            checks.append(partial(_within, applies_to, within, argument))
        else:
            return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    additional = schema.get("additionalProperties", True)
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        return None
    if additional is not True and additional is not False:
        return None
    if not all(isinstance(name, str) for name in required):
        return None
    prop_checks: dict[str, _Check] = {}
    for name, sub in properties.items():
        sub_check = _simple_check(sub)
        if sub_check is None:
            return None
        prop_checks[name] = sub_check
    if prop_checks or required or additional is False:
        names = frozenset(prop_checks)
        needed = frozenset(required)
        closed = additional is False

        def check_object(value: Any) -> bool:
            if not isinstance(value, dict):
                return True
            if not needed.issubset(value.keys()):
                return False
            if closed and not names.issuperset(value.keys()):
                return False
            for key, item in value.items():
                check = prop_checks.get(key)
                if check is not None and not check(item):
                    return False
            return True

        checks.append(check_object)
    if len(checks) == 1:
        return checks[0]
    return partial(_all_checks, tuple(checks))


class _Run:
    """What one ``apply`` call carries through the coercion walk."""

    __slots__ = ("events", "tool")

    def __init__(self, tool: str, events: list[RepairEvent]) -> None:
        self.tool = tool
        self.events = events


def _coerced(path: str, before: Any, after: Any, tool: str) -> RepairEvent:
    return RepairEvent(
        "coerce",
        f"Coerced {path or 'arguments'!r} from {_short(before)} to {_short(after)}",
        tool=tool,
        before=before,
        after=after,
        path=path or None,
    )


class CompiledSchema:
    """A tool's argument schema, prepared once: names, renames, coercion plan and validator.

    >>> compile_schema({"properties": {"n": {"type": "integer"}}}).apply({"N": "5"}, tool="t")[0]
    {'n': 5}
    """

    __slots__ = (
        "_branch_checks",
        "_fast_check",
        "_known",
        "_normalized",
        "_patterns",
        "_properties",
        "_root",
        "_validator",
        "allows_additional",
        "expected",
    )

    expected: dict[str, list[str]]
    allows_additional: bool

    def __init__(self, schema: Mapping[str, Any]) -> None:
        if not isinstance(schema, Mapping):
            raise TypeError(f"an argument schema must be a mapping, got {type(schema).__name__}")
        cls = _validator_class(schema)
        try:
            cls.check_schema(schema)
        except jsonschema.exceptions.SchemaError as exc:
            raise ValueError(f"Invalid JSON Schema for arguments: {exc.message}") from exc
        self._root = schema
        self._validator: Any = cls(schema)
        self._branch_checks: dict[int, _Check] = {}
        top = self._resolve_all(schema)
        properties = top.get("properties")
        self._properties: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        required = top.get("required")
        required_names = [name for name in required if isinstance(name, str)] if isinstance(required, list) else []
        in_order = [name for name in self._properties if name in required_names]
        in_order += [name for name in required_names if name not in self._properties]
        self.expected = {
            "required": in_order,
            "optional": [name for name in self._properties if name not in required_names],
        }
        self.allows_additional = top.get("additionalProperties", True) is not False
        patterns = top.get("patternProperties")
        # Keys matched by patternProperties are declared too; jsonschema judges their values.
        self._patterns = (
            [re.compile(p) for p in patterns if isinstance(p, str)] if isinstance(patterns, Mapping) else []
        )
        self._known = frozenset(self._properties)
        # normalised spelling -> every property with that spelling (two means ambiguous)
        self._normalized: dict[str, list[str]] = {}
        for name in self._properties:
            self._normalized.setdefault(_normalize_key(name), []).append(name)
        self._fast_check: _Check | None = _simple_check(schema)

    # -- references ---------------------------------------------------------------------------

    def _resolve(self, ref: str) -> Mapping[str, Any] | None:
        """A local ``#/...`` reference (``$defs``, ``definitions``) within the root schema."""
        if ref == "#":
            return self._root
        if not ref.startswith("#/"):
            return None
        node: Any = self._root
        for escaped in ref[2:].split("/"):
            part = escaped.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node if isinstance(node, Mapping) else None

    def _resolve_all(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        seen = 0
        while isinstance(schema.get("$ref"), str) and "properties" not in schema and seen < 32:
            target = self._resolve(schema["$ref"])
            if target is None:
                break
            schema = target
            seen += 1
        return schema

    def _branch_check(self, branch: Any) -> _Check:
        """Validity against one union branch: its exact predicate, else a jsonschema validator."""
        key = id(branch)  # branches live as long as the root schema, so ids are stable
        check = self._branch_checks.get(key)
        if check is None:
            # evolve keeps the root's reference resolver, so '#/$defs/...' still resolves.
            check = _simple_check(branch) or self._validator.evolve(schema=branch).is_valid
            self._branch_checks[key] = check
        return check

    # -- apply --------------------------------------------------------------------------------

    def apply(self, arguments: Mapping[str, Any], *, tool: str) -> tuple[dict[str, Any], tuple[RepairEvent, ...]]:
        """Rename misnamed keys, coerce values where safe, validate; return arguments and events.

        Raises :class:`ArgumentError` (``ambiguous``, ``unknown-key``, ``missing``, ``type``,
        ``enum``, ``constraint`` or ``too-deep``); the message has no parameter hint.
        """
        args = dict(arguments)
        try:
            if self._known.issuperset(args) and self._accepts_quickly(args):
                return args, ()
            return self._repair(args, tool)
        except Unresolvable as exc:
            # A broken $ref in the tool's schema: fail closed, and say it is the schema's fault.
            raise ArgumentError(
                f"Arguments cannot be checked: the tool's schema refers to {exc.ref!r}, which does not exist",
                reason="constraint",
            ) from None

    def _repair(self, args: dict[str, Any], tool: str) -> tuple[dict[str, Any], tuple[RepairEvent, ...]]:
        events: list[RepairEvent] = []
        if self._normalized:
            args = self._rename(args, tool, events)
        try:
            coerced = self._coerce(args, self._root, "", 0, _Run(tool, events))
        except RecursionError:  # a deep union check inside jsonschema; validation says too-deep
            coerced = args
        if not self._is_valid(coerced):
            raise self._first_error(coerced)
        return coerced, tuple(events)

    def _accepts_quickly(self, args: dict[str, Any]) -> bool:
        """Validity for the fast path: the exact predicate when the schema has one.

        Should it ever wrongly say no, the slow path confirms with jsonschema before refusing.
        """
        check = self._fast_check
        return check(args) if check is not None else self._is_valid(args)

    def _is_valid(self, args: dict[str, Any]) -> bool:
        """Validity as jsonschema sees it (the fast predicate may only shortcut a yes)."""
        check = self._fast_check
        if check is not None and check(args):
            return True
        try:
            return bool(self._validator.is_valid(args))
        except RecursionError:
            raise ArgumentError("Arguments nest too deeply to validate", reason="too-deep") from None

    def _rename(self, args: dict[str, Any], tool: str, events: list[RepairEvent]) -> dict[str, Any]:
        known = self._known
        renamed: dict[str, Any] = {}
        source: dict[str, str] = {}  # property -> the key that supplied it
        for key, value in args.items():
            target = key
            if key not in known:
                candidates = (
                    self._normalized.get(_normalize_key(key))
                    if isinstance(key, str) and len(key) <= _MAX_KEY_CHARS
                    else None
                )
                if candidates is not None and len(candidates) > 1:
                    raise ArgumentError(
                        f"Argument {key!r} is ambiguous: it could mean "
                        + " or ".join(repr(name) for name in candidates),
                        reason="ambiguous",
                        path=key,
                    )
                if candidates is not None:
                    target = candidates[0]
                elif not self.allows_additional and not any(
                    pattern.search(key) for pattern in self._patterns if isinstance(key, str)
                ):
                    raise ArgumentError(f"Unexpected argument {key!r}", reason="unknown-key", path=str(key))
            if target in source:
                raise ArgumentError(
                    f"Arguments {source[target]!r} and {key!r} both name {target!r}",
                    reason="ambiguous",
                    path=target,
                )
            source[target] = key
            renamed[target] = value
            if target != key:
                events.append(
                    RepairEvent(
                        "rename",
                        f"Renamed argument {key!r} -> {target!r}",
                        tool=tool,
                        before=key,
                        after=target,
                        path=target,
                    )
                )
        return renamed

    def _coerce(self, value: Any, schema: Any, path: str, depth: int, run: _Run) -> Any:
        """``value`` coerced towards ``schema``; recursive, bounded by the coercion depth limit."""
        if depth > _MAX_COERCE_DEPTH or not isinstance(schema, Mapping):
            return value
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = self._resolve(ref)
            if target is not None:
                value = self._coerce(value, target, path, depth + 1, run)
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list) and branches:
                value = self._coerce_union(value, branches, path, depth, run)
        all_of = schema.get("allOf")
        if isinstance(all_of, list):
            for branch in all_of:
                value = self._coerce(value, branch, path, depth + 1, run)
        types = schema.get("type")
        # check_schema has already made "type" a name or a list of names.
        names = [types] if isinstance(types, str) else types if isinstance(types, list) else []
        if names and not any(_is_type(value, name) for name in names):
            for name in names:
                new = _coerce_to(value, name)
                if new is not _MISSING:
                    run.events.append(_coerced(path, value, new, run.tool))
                    value = new
                    break
        enum = schema.get("enum")
        if isinstance(enum, list) and isinstance(value, str) and value not in enum:
            folded = value.strip().casefold()
            matches = [item for item in enum if isinstance(item, str) and item.casefold() == folded]
            if len(matches) == 1:
                run.events.append(_coerced(path, value, matches[0], run.tool))
                value = matches[0]
        if isinstance(value, dict):
            properties = schema.get("properties")
            additional = schema.get("additionalProperties")
            if isinstance(properties, Mapping) or isinstance(additional, Mapping):
                properties = properties if isinstance(properties, Mapping) else {}
                extra = additional if isinstance(additional, Mapping) else None
                out: dict[str, Any] = {}
                for key, item in value.items():
                    sub = properties.get(key, extra)
                    out[key] = item if sub is None else self._coerce(item, sub, _join(path, key), depth + 1, run)
                value = out
        elif isinstance(value, list):
            prefix = schema.get("prefixItems")
            items = schema.get("items")
            prefix = prefix if isinstance(prefix, list) else items if isinstance(items, list) else []
            rest = items if isinstance(items, Mapping) else None
            if prefix or rest is not None:
                result: list[Any] = []
                for index, item in enumerate(value):
                    sub = prefix[index] if index < len(prefix) else rest
                    result.append(item if sub is None else self._coerce(item, sub, _join(path, index), depth + 1, run))
                value = result
        return value

    def _coerce_union(self, value: Any, branches: list[Any], path: str, depth: int, run: _Run) -> Any:
        checks = [self._branch_check(branch) for branch in branches]
        if any(check(value) for check in checks):
            return value
        for branch, check in zip(branches, checks, strict=True):
            trial = _Run(run.tool, [])
            candidate = self._coerce(value, branch, path, depth + 1, trial)
            if check(candidate):
                run.events.extend(trial.events)
                return candidate
        return value

    # -- errors -------------------------------------------------------------------------------

    def _first_error(self, args: dict[str, Any]) -> ArgumentError:
        try:
            error = jsonschema.exceptions.best_match(self._validator.iter_errors(args))
        except RecursionError:  # is_valid stopped at a shallow error; best_match went on
            return ArgumentError("Arguments nest too deeply to validate", reason="too-deep")
        if error is None:  # pragma: no cover - only reached if the fast check disagrees
            return ArgumentError("Arguments are invalid", reason="constraint")
        return _describe(error)


def _describe(error: jsonschema.exceptions.ValidationError) -> ArgumentError:
    """An error message a model can act on: the argument path and what was expected."""
    # A union of plain types fails as "must be an integer or null", not as one branch's error.
    union = error if error.validator in ("anyOf", "oneOf") else error.parent
    if (
        isinstance(union, jsonschema.exceptions.ValidationError)
        and union.validator in ("anyOf", "oneOf")
        and union.context
        and all(sub.validator == "type" and not sub.relative_path for sub in union.context)
    ):
        wanted: list[str] = []
        for sub in union.context:
            declared: Any = sub.validator_value
            kinds = declared if isinstance(declared, list) else [declared]
            wanted += [kind for kind in kinds if kind not in wanted]
        return _type_error(union, wanted)
    path = ""
    for part in error.absolute_path:
        path = _join(path, part)
    validator = error.validator
    instance = error.instance
    if validator == "required":
        required: Any = error.validator_value
        missing = [name for name in required if isinstance(instance, dict) and name not in instance]
        name = _join(path, missing[0]) if missing else path
        return ArgumentError(f"Missing required argument {name!r}", reason="missing", path=name)
    if validator in ("additionalProperties", "unevaluatedProperties"):
        # jsonschema names each unexpected key by its repr in the message; keep instance order.
        keys = instance if isinstance(instance, dict) else {}
        extras = [key for key in keys if repr(key) in error.message]
        name = _join(path, extras[0]) if extras else path
        return ArgumentError(f"Unexpected argument {name!r}", reason="unknown-key", path=name)
    if validator == "type":
        kinds = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        return _type_error(error, list(kinds))
    subject = f"Argument {path!r}" if path else "Arguments"
    if validator == "enum":
        return ArgumentError(
            f"{subject} must be one of {error.validator_value!r}, got {_show(instance)}",
            reason="enum",
            path=path or None,
        )
    verb = "is" if path else "are"
    return ArgumentError(f"{subject} {verb} invalid: {error.message}", reason="constraint", path=path or None)


def _type_error(error: jsonschema.exceptions.ValidationError, kinds: list[Any]) -> ArgumentError:
    path = ""
    for part in error.absolute_path:
        path = _join(path, part)
    words = " or ".join(_TYPE_WORDS.get(kind, repr(kind)) for kind in kinds)
    subject = f"Argument {path!r}" if path else "Arguments"
    return ArgumentError(f"{subject} must be {words}, got {_show(error.instance)}", reason="type", path=path or None)


def compile_schema(schema: Mapping[str, Any]) -> CompiledSchema:
    """Prepare a tool's JSON Schema for :meth:`CompiledSchema.apply`; build once per tool.

    Raises ``ValueError`` for a schema that is not valid JSON Schema. Checking a schema against
    its metaschema costs milliseconds, so compiled schemas are cached by content (a registry
    rebuilt per request pays it once); the cached copy is private, so later changes to
    ``schema`` do not leak into it.

    >>> compile_schema({"properties": {"q": {"type": "string"}}, "required": ["q"]}).expected
    {'required': ['q'], 'optional': []}
    """
    if not isinstance(schema, Mapping):
        raise TypeError(f"an argument schema must be a mapping, got {type(schema).__name__}")
    try:
        key = json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError, RecursionError):  # not plain JSON: compile it as it is
        return CompiledSchema(schema)
    return _compile_cached(key)


@lru_cache(maxsize=512)
def _compile_cached(key: str) -> CompiledSchema:
    schema: Mapping[str, Any] = json.loads(key)
    return CompiledSchema(schema)
