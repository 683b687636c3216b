"""The name in a tag, then JSON arguments, inside a wrapper::

    <tool_call><function>get_weather</function>{"city": "Tokyo"}</tool_call>
    ✿FUNCTION✿: get_weather
    ✿ARGS✿: {"city": "Tokyo"}

(Qwen-Agent's text protocol: the marker opens the name, a newline ends it, a lead opens the
arguments.)

A wrapper (its opening and closing markers) and the name tags are data; the arguments are read
by the reader every "name outside the JSON" format shares (``arguments_at``). The wrapper's
marker is shared (Hermes takes JSON bodies, Qwen3-Coder ``<function=``, GLM a bare name): this
reader takes only bodies that open with its name tag.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._base import NEED_MORE, Found, NeedMore, ReadContext, expect_literal, skip_ws
from .json_blocks import arguments_at, read_after_payload

__all__ = ["FUNCTION_NAME_TAG", "QWEN_AGENT", "NameTagDialect"]


def _name_ok(name: str) -> bool:
    return bool(name) and all(c.isalnum() or c in "_-.:" for c in name)


@dataclass(frozen=True)
class NameTagDialect:
    """``OPEN name_open NAME name_close args_lead {arguments} CLOSE`` (literals in lower case;
    ``name_open`` and ``args_lead`` may be empty, ``close`` None)."""

    name: str
    open: str
    close: str | None
    name_open: str = "<function>"
    name_close: str = "</function>"
    args_lead: str = ""

    @property
    def markers(self) -> tuple[str, ...]:
        return (self.open,)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(ctx.max_name_chars + payload).
        n = len(text)
        i = skip_ws(text, marker_end)
        if i >= n:
            return NEED_MORE if not ctx.final else None
        opened = expect_literal(text, i, self.name_open, ctx) if self.name_open else True
        if isinstance(opened, NeedMore):
            return NEED_MORE
        if not opened:
            return None
        s = i + len(self.name_open)
        limit = min(n, s + ctx.max_name_chars + len(self.name_close))
        at = text[s:limit].lower().find(self.name_close)
        if at == -1:
            return NEED_MORE if not ctx.final and limit == n else None
        name = text[s : s + at].strip()
        if not _name_ok(name):
            return None
        j = skip_ws(text, s + at + len(self.name_close))
        if self.args_lead:
            led = expect_literal(text, j, self.args_lead, ctx)
            if isinstance(led, NeedMore) or (j >= n and not ctx.final):
                return NEED_MORE
            if not led:
                return None if j < n else Found(n, error="truncated")
            j = skip_ws(text, j + len(self.args_lead))
        if j >= n:
            return NEED_MORE if not ctx.final else Found(n, error="truncated")
        if text[j] not in '{"':
            return None  # not JSON arguments: another reader's body
        got = arguments_at(text, name, j, ctx, bound=self.open)
        if not isinstance(got, Found) or got.error is not None:
            return got
        end = read_after_payload(text, got.end, self.close, ctx)
        return NEED_MORE if isinstance(end, NeedMore) else Found(end, got.calls)


FUNCTION_NAME_TAG = NameTagDialect("function_name_tag", "<tool_call>", "</tool_call>")
QWEN_AGENT = NameTagDialect("qwen_agent", "✿function✿:", None, "", "\n", "✿args✿:")
