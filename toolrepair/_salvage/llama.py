"""Llama 3.x ``<|python_tag|>`` JSON calls, and llama.cpp's grammar-forced generic envelope.

``python_tag``: ``<|python_tag|>{"name": ..., "parameters": {...}}``, parallel calls separated
by ``;`` or by a repeated tag (``{"type": "function", "name": ..., "parameters": ...}`` too).
The tag also prefixes Llama 3.1 built-in calls and raw code, which are not JSON: those are
left to other dialects. Bare JSON without the tag is the ``json`` dialect's.

``generic_json``: ``{"tool_call": {...}}`` or ``{"tool_calls": [...]}`` as the whole reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ._base import NEED_MORE, Found, Gate, NeedMore, RawCall, ReadContext, skip_ws
from ._json import JsonFailure, call_from_object, calls_from_value, decode_at
from .json_blocks import refused

__all__ = ["GENERIC_JSON", "PYTHON_TAG"]


@dataclass(frozen=True)
class _PythonTag:
    name: str = "python_tag"
    markers: tuple[str, ...] = ("<|python_tag|>",)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(objects read): each object is decoded once; the loop stops at the first thing that
        # is not `; {`, so a run of separators costs what it spans.
        n = len(text)
        i = skip_ws(text, marker_end)
        if i >= n:
            return NEED_MORE if not ctx.final else None
        if text[i] != "{":
            return None  # `brave_search.call(...)` or raw code: not JSON
        calls: list[RawCall] = []
        end = i
        while True:
            decoded = decode_at(text, i, ctx)
            if decoded is NEED_MORE:
                return NEED_MORE
            if isinstance(decoded, JsonFailure):
                if not calls:
                    return refused(decoded, i)
                break  # the broken one after a `;` stays text
            assert isinstance(decoded, tuple)
            value, j = decoded
            call = call_from_object(value, require_arguments=False)
            if call is None:
                if not calls:
                    return Found(j, error="not-a-call", resume=j)
                break
            calls.append(call)
            end = j
            k = skip_ws(text, j)
            if k >= n:
                if not ctx.final:
                    return NEED_MORE  # a `;` and another call may follow
                break
            if text[k] != ";":
                break
            end = k + 1
            i = skip_ws(text, k + 1)
            if i >= n:
                if not ctx.final:
                    return NEED_MORE
                break
            if text[i] != "{":
                break
        return Found(end, tuple(calls))


_KEY = '"tool_call'


def _envelope(value: object) -> tuple[RawCall, ...] | None:
    if not isinstance(value, dict) or len(value) != 1:
        return None
    if isinstance(value.get("tool_call"), dict):
        call = call_from_object(value["tool_call"], require_arguments=False)
        return None if call is None else (call,)
    if isinstance(value.get("tool_calls"), list):
        return calls_from_value(value["tool_calls"], require_arguments=False)
    return None


@dataclass(frozen=True)
class _GenericJson:
    name: str = "generic_json"
    markers: tuple[str, ...] = ("{",)
    gates: ClassVar[Mapping[str, Gate]] = {"{": Gate(lead="")}  # the envelope is the whole reply

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(1) except at the first non-space character, where it is O(the object): the grammar
        # forces the envelope to be the whole reply, so no other `{` is decoded here.
        if start != ctx.first_nonspace:
            return None
        k = skip_ws(text, start + 1)
        head = text[k : k + len(_KEY)]
        if head != _KEY:
            return NEED_MORE if not ctx.final and _KEY.startswith(head) else None
        decoded = decode_at(text, start, ctx)
        if decoded is NEED_MORE:
            return NEED_MORE
        if isinstance(decoded, JsonFailure):
            return None  # the `json` dialect reports broken JSON
        assert isinstance(decoded, tuple)
        value, j = decoded
        calls = _envelope(value)
        if calls is None:
            return None
        return Found(j, calls)


PYTHON_TAG = _PythonTag()
GENERIC_JSON = _GenericJson()
