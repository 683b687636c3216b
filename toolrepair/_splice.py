"""Edit a JSON text where its decoded value changed, and nowhere else.

``fix`` repairs a few values inside a record (a call's name and arguments, a turn's content and
calls, a result's id). Re-serialising the whole record would also rewrite what it did not
repair: ``1e400`` would become ``Infinity`` (not JSON), ``12345678901234567890.5`` would lose
digits, ``1.10`` would become ``1.1``, a duplicate key would vanish, spacing and escapes would
change. ``splice`` instead compares the value decoded from the text with the value after the
fix and rewrites only the spans of the sub-values that differ, so every other byte is kept.

>>> splice('{"n": 1.10, "x": "a",  "big": 1e400}', {"n": 1.1, "x": "a", "big": float("inf")},
...        {"n": 1.1, "x": "b", "big": float("inf")})
'{"n": 1.10, "x": "b",  "big": 1e400}'

Cost: O(size of the text) per container on the path to a change (its members are located with
the C scanner), plus ``json.dumps`` of the elements of a list whose length changed (aligned by
``difflib``). Recursion follows only the changed path, whose depth the record's own decoding
(``json.loads``) bounded.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["same_value", "splice"]

_WS: Final = re.compile(r"[ \t\n\r]*")
_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_scanstring: Final[Callable[[str, int], tuple[str, int]]] = json.decoder.scanstring  # type: ignore[attr-defined]

Edit = tuple[int, int, str]
_NOT_THE_TEXT: Final = "the text is not the JSON of the old value"


def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]  # matches the empty string at worst


def _scalar_same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):  # 1, 1.0 and True are equal in Python, never in a record
        return False
    if type(a) is float:
        return (a == b and math.copysign(1.0, a) == math.copysign(1.0, b)) or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


def same_value(a: Any, b: Any) -> bool:
    """Equal as JSON values, types included (``1 != 1.0 != True``, ``-0.0 != 0.0``, NaN equals NaN).

    Decided in C where it can be: equal ``json.dumps`` texts (which spell ``1``, ``1.0``,
    ``true``, ``-0.0`` and ``NaN`` apart) prove it; where ``==`` holds but the texts differ
    (keys in another order, a changed type) the iterative walk decides. O(size), no recursion
    however deep the values.
    """
    if a is b and type(a) is not float:
        return True
    try:
        if _dumps(a) == _dumps(b):
            return True
    except (TypeError, ValueError, RecursionError):
        return _same_walk(a, b)
    return bool(a == b) and _same_walk(a, b)


_dumps: Final = json.JSONEncoder(check_circular=False).encode


def _same_walk(a: Any, b: Any) -> bool:
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y and type(x) is not float:
            continue
        if type(x) is dict and type(y) is dict:
            if x.keys() != y.keys():
                return False
            stack.extend((v, y[k]) for k, v in x.items())
        elif type(x) is list and type(y) is list:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif not _scalar_same(x, y):
            return False
    return True


def _encode(value: Any) -> str:
    """A new value's JSON (UTF-8 as written; a lone surrogate, which has no UTF-8, escaped)."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value)
    return text


@dataclass(frozen=True, slots=True)
class _Member:
    key: str
    start: int  # of the key, or of the element in an array
    key_end: int
    value_start: int
    value_end: int


def _object_members(text: str, pos: int) -> tuple[list[_Member], int]:
    """The members of the object at ``text[pos]`` (``{``) and the position of its ``}``."""
    members: list[_Member] = []
    i = _skip(text, pos + 1)
    if text[i] == "}":
        return members, i
    while True:
        key, key_end = _scanstring(text, i + 1)
        colon = _skip(text, key_end)
        value_start = _skip(text, colon + 1)
        _, value_end = _SCAN(text, value_start)
        members.append(_Member(key, i, key_end, value_start, value_end))
        i = _skip(text, value_end)
        if text[i] == "}":
            return members, i
        i = _skip(text, i + 1)  # the comma


def _array_elements(text: str, pos: int) -> tuple[list[_Member], int]:
    """The elements of the array at ``text[pos]`` (``[``) and the position of its ``]``."""
    elements: list[_Member] = []
    i = _skip(text, pos + 1)
    if text[i] == "]":
        return elements, i
    while True:
        _, end = _SCAN(text, i)
        elements.append(_Member("", i, i, i, end))
        i = _skip(text, end)
        if text[i] == "]":
            return elements, i
        i = _skip(text, i + 1)


def _separator(text: str, members: list[_Member]) -> str:
    """The text between two members as this container writes it (``", "`` when it has one member or none)."""
    return text[members[0].value_end : members[1].start] if len(members) > 1 else ", "


class _Edits:
    """The edits that turn ``text`` (the JSON of one value) into the JSON of another."""

    __slots__ = ("edits", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.edits: list[Edit] = []

    def delete_runs(self, members: list[_Member], gone: list[int]) -> None:
        """Remove the members at the sorted indices ``gone`` and one separator per run of them."""
        n = len(members)
        k = 0
        while k < len(gone):
            a = b = gone[k]
            while k + 1 < len(gone) and gone[k + 1] == b + 1:
                k += 1
                b = gone[k]
            if a > 0:
                self.edits.append((members[a - 1].value_end, members[b].value_end, ""))
            elif b < n - 1:
                self.edits.append((members[a].start, members[b + 1].start, ""))
            else:
                self.edits.append((members[0].start, members[-1].value_end, ""))
            k += 1

    def insert(self, members: list[_Member], after: int, bounds: tuple[int, int], pieces: list[str]) -> None:
        """Insert ``pieces`` after member ``after`` (-1: before the first). ``bounds`` are the
        positions just past the opening bracket and of the closing one: after the last member the
        pieces go right before the bracket, so the member and the spacing that follows it stay
        together, as written."""
        sep = _separator(self.text, members)
        joined = sep.join(pieces)
        if not members:
            self.edits.append((bounds[0], bounds[0], joined))
        elif after == len(members) - 1:
            self.edits.append((bounds[1], bounds[1], sep + joined))
        elif after >= 0:
            self.edits.append((members[after].value_end, members[after].value_end, sep + joined))
        else:
            self.edits.append((members[0].start, members[0].start, joined + sep))

    def diff(self, pos: int, old: Any, new: Any, end: int | None = None) -> None:
        """Edits for the value at ``pos`` (ending at ``end`` when known), ``old``, to become ``new``."""
        if same_value(old, new):
            return
        if type(old) is dict and type(new) is dict:
            self.diff_object(pos, old, new)
        elif type(old) is list and type(new) is list:
            self.diff_array(pos, old, new)
        else:
            self.edits.append((pos, _SCAN(self.text, pos)[1] if end is None else end, _encode(new)))

    def diff_object(self, pos: int, old: dict[str, Any], new: dict[str, Any]) -> None:
        text = self.text
        members, close = _object_members(text, pos)
        last = {m.key: i for i, m in enumerate(members)}  # a duplicated key's value is its last one's
        if last.keys() != old.keys():
            raise ValueError(_NOT_THE_TEXT)
        for key, value in new.items():
            if key in old:
                m = members[last[key]]
                self.diff(m.value_start, old[key], value, m.value_end)
        gone = [i for i, m in enumerate(members) if m.key not in new]
        self.delete_runs(members, gone)
        added = [(k, v) for k, v in new.items() if k not in old]
        if not added:
            return
        colon = text[members[0].key_end : members[0].value_start] if members else ": "
        pieces = [json.dumps(k, ensure_ascii=False) + colon + _encode(v) for k, v in added]
        if members and len(gone) == len(members):
            # Every member went: the new ones stand alone before the brace, with no separator first.
            self.edits.append((close, close, _separator(text, members).join(pieces)))
        else:
            self.insert(members, len(members) - 1, (pos + 1, close), pieces)

    def diff_array(self, pos: int, old: list[Any], new: list[Any]) -> None:
        elements, close = _array_elements(self.text, pos)
        if len(elements) != len(old):
            raise ValueError(_NOT_THE_TEXT)
        if len(old) == len(new):
            differ = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if not same_value(a, b)]
            if len(differ) == 1:  # one element changed in place (the usual edit): no alignment needed
                i = differ[0]
                self.diff(elements[i].start, old[i], new[i], elements[i].value_end)
                return
        # Elements inserted, deleted or moved (a turn inserted, blocks rebuilt): align by value, then
        # edit each unaligned run, pairing its elements in order (so a changed turn beside an
        # inserted one is edited, not rewritten).
        matcher = difflib.SequenceMatcher(None, [_key(v) for v in old], [_key(v) for v in new], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            paired = min(i2 - i1, j2 - j1)
            for d in range(paired):
                element = elements[i1 + d]
                self.diff(element.start, old[i1 + d], new[j1 + d], element.value_end)
            if i2 - i1 > paired:
                self.delete_runs(elements, list(range(i1 + paired, i2)))
            if j2 - j1 > paired:
                self.insert(elements, i1 + paired - 1, (pos + 1, close), [_encode(v) for v in new[j1 + paired : j2]])


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def splice(text: str, old: Any, new: Any) -> str:
    """``text`` (the JSON of ``old``) edited to decode to ``new``, changed only where they differ.

    Raises ``ValueError`` where ``text`` is found not to be the JSON of ``old``.
    """
    job = _Edits(text)
    job.diff(_skip(text, 0), old, new)
    edits = sorted(job.edits, key=lambda e: (e[0], e[1]))
    out: list[str] = []
    at = 0
    for start, end, replacement in edits:
        if start < at:
            raise ValueError(_NOT_THE_TEXT)  # pragma: no cover - the checks above come first
        out.append(text[at:start])
        out.append(replacement)
        at = end
    out.append(text[at:])
    return "".join(out)
