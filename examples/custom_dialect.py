"""Two made-up tool-call formats as toolrepair dialects, checked with ``check_dialect``.

``@@call {"name": ..., "arguments": {...}} @@end`` is "marker + JSON + marker": a
``TagDialect`` is all it takes. ``@@tool NAME {arguments} @@end`` writes the name outside the
JSON, so it gets a small reader implementing the ``Dialect`` protocol. Run this file to salvage
a reply in both formats and property-test both dialects (needs ``pip install 'toolrepair[test]'``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import toolrepair as tr
from toolrepair import NEED_MORE, Found, NeedMore, RawCall, ReadContext

# --- 1. marker + JSON + marker: a TagDialect --------------------------------------------

AT_CALL = tr.TagDialect("at_call", open="@@call", close="@@end")


def render_at_call(call: tr.ToolCall) -> str:
    """How the model writes a call in this format."""
    return "@@call " + json.dumps({"name": call.name, "arguments": call.arguments}) + " @@end"


# --- 2. the name outside the JSON: a Dialect protocol class -----------------------------

_NAME = re.compile(r"[ \t]*([A-Za-z_][\w.-]{0,127})[ \t]*")  # bounded: at most 128 name chars
_END = "@@end"
_JSON = json.JSONDecoder()


@dataclass(frozen=True)
class AtTool:
    """``@@tool NAME {json arguments} @@end``; the closing ``@@end`` may be missing at the end.

    >>> tr.salvage_text('@@tool add {"a": 1} @@end', ["add"], dialects=[AtTool()]).calls[0].arguments
    {'a': 1}
    """

    name: str = "at_tool"
    markers: tuple[str, ...] = ("@@tool",)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # Reads forward from the marker only, and only as far as the call goes: O(call length).
        n = len(text)
        m = _NAME.match(text, marker_end)
        if m is None:
            # No name. Only a text ending in spaces right after the marker may still get one.
            return NEED_MORE if not ctx.final and not text[marker_end:].strip(" \t") else None
        brace = m.end()
        if brace == n:
            return NEED_MORE if not ctx.final else None  # the name or its `{` may be arriving
        if text[brace] != "{":
            return None  # "@@tool" in prose: not a call; the scan goes on after the marker
        try:
            arguments, end = _JSON.raw_decode(text, brace)
        except (json.JSONDecodeError, RecursionError) as e:
            if not ctx.final:
                # More text may complete the object. (Holding back until the end is always
                # prefix-stable; refusing early would need proof that no text can fix it.)
                return NEED_MORE
            pos = e.pos if isinstance(e, json.JSONDecodeError) else brace + 1
            return Found(max(pos, brace + 1), error="undecodable-arguments")  # refused, not a call
        if not isinstance(arguments, dict):
            return Found(end, error="undecodable-arguments")
        k = end
        while k < n and text[k] in " \t\r\n":
            k += 1
        if k == n and not ctx.final:
            return NEED_MORE  # "@@end" may follow: the span must not change once answered
        rest = text[k : k + len(_END)].lower()
        if not ctx.final and len(rest) < len(_END) and _END.startswith(rest):
            return NEED_MORE  # "@@e" may become "@@end"
        return Found(k + len(_END) if rest == _END else end, (RawCall(m.group(1), arguments),))


def render_at_tool(call: tr.ToolCall) -> str:
    return f"@@tool {call.name} {json.dumps(call.arguments)} @@end"


def main() -> None:
    reply = (
        'Checking both.\n@@call {"name": "get_weather", "arguments": {"city": "Paris"}} @@end\n'
        '@@tool web_search {"query": "Paris weather"} @@end\nDone.'
    )
    result = tr.salvage_text(reply, ["get_weather", "web_search"], dialects=[AT_CALL, AtTool()])
    for call in result.calls:
        print(call.dialect, call.name, call.arguments)
    print(repr(result.content))

    from toolrepair.testing import check_dialect

    check_dialect(AT_CALL, render_at_call, max_examples=50)
    check_dialect(AtTool(), render_at_tool, max_examples=50)
    print("check_dialect: both dialects pass")


if __name__ == "__main__":
    main()
