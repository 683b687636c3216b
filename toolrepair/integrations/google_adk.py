"""Google ADK: a ``BasePlugin`` that repairs every model response and every tool call.

>>> runner = InMemoryRunner(agent, plugins=[ToolRepairPlugin(registry)])   # doctest: +SKIP

- ``after_model_callback``: drifted names become the offered name and broken arguments are
  repaired in the response's ``function_call`` parts; a response with none has the calls written
  as text salvaged into ``function_call`` parts, its text cut (in a streamed run, partial text
  never shows the markup);
- ``before_tool_callback``: a call the registry's policy refuses, or whose arguments cannot be
  repaired, never reaches the tool: its response is ``{"error": <toolrepair's message>}``;
- ``on_tool_error_callback``: a tool never offered gets toolrepair's corrective message (with its
  suggestion) and a tool that raised gets its own message, as ``{"error": ...}``, instead of
  ending the run.

``registry`` holds the same tools as the agent (plain functions, as ADK takes them) and the
policy (allow, deny, ``before_call``). Nothing here imports ADK until it is used; without it a
clear ImportError names the extra.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .._registry import ToolRegistry
from .._types import ToolCall
from ._common import PendingMessages, Vetted, VettedStream, lazy_classes, require, stable_id, vet, vet_text

# ToolRepairPlugin is built on first access (module __getattr__, below).
__all__ = ["ToolRepairPlugin"]  # noqa: F822

_EXTRA = "google_adk"


def _visible(items: list[str | Vetted]) -> str:
    return "".join(item for item in items if isinstance(item, str))


def _plugin_class() -> type:
    plugins = require("google.adk.plugins.base_plugin", _EXTRA)
    types = require("google.genai.types", _EXTRA)

    class ToolRepairPlugin(plugins.BasePlugin):  # type: ignore[misc,name-defined]
        """An ADK plugin repairing tool calls and applying toolrepair's policy (see the module doc)."""

        def __init__(self, registry: ToolRegistry | Iterable[Any], *, name: str = "toolrepair") -> None:
            super().__init__(name=name)
            self.registry = registry if isinstance(registry, ToolRegistry) else ToolRegistry(registry)
            self._refused = PendingMessages()
            # One screen per invocation while its partial (streamed) text arrives.
            self._screens: dict[str, VettedStream] = {}

        async def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> Any:
            content = llm_response.content
            parts = list(getattr(content, "parts", None) or [])
            if not parts:
                return None
            if getattr(llm_response, "partial", False):
                return self._screen_partial(callback_context, llm_response, parts)
            self._screens.pop(_invocation(callback_context), None)
            calls = [p for p in parts if getattr(p, "function_call", None) is not None]
            if calls:
                for index, part in enumerate(calls):
                    self._repair_part(part.function_call, index)
                return llm_response
            text = "".join(p.text for p in parts if isinstance(getattr(p, "text", None), str) and not p.thought)
            if not text:
                return None
            # Refused candidates too: a text call to a tool never offered is answered, not shown.
            vetted_text = vet_text(self.registry, text, "call_", answer_rejected=True)
            if not vetted_text.calls:
                return None
            kept = [p for p in parts if not isinstance(getattr(p, "text", None), str) or p.thought]
            new_parts = [types.Part(text=vetted_text.content)] if vetted_text.content else []
            for vetted in vetted_text.calls:
                if vetted.error is not None:
                    self._refused.put(str(vetted.call.id), vetted.message)
                new_parts.append(
                    types.Part(
                        function_call=types.FunctionCall(
                            id=vetted.call.id, name=vetted.call.name, args=vetted.call.arguments
                        )
                    )
                )
            content.parts = kept + new_parts
            return llm_response

        def _screen_partial(self, callback_context: Any, llm_response: Any, parts: list[Any]) -> Any:
            # Partial chunks are shown as they come; the final response (not partial) is the one
            # the calls are read from, so a chunk only has to hide what may be call markup.
            screen = self._screens.setdefault(
                _invocation(callback_context), VettedStream(self.registry, "call_", screen_only=True)
            )
            for part in parts:
                if isinstance(getattr(part, "text", None), str) and not part.thought:
                    part.text = _visible(screen.feed(part.text))
            return llm_response

        def _repair_part(self, call: Any, index: int) -> None:
            if not call.id:
                call.id = stable_id("call_", json.dumps([call.name, call.args], default=str), index)
            vetted = vet(self.registry, (call.name, call.args, call.id))
            if vetted.error is None:
                call.name, call.args = vetted.call.name, vetted.call.arguments
                return
            if vetted.error.kind != "not-found" and vetted.error.tool_name:
                call.name = vetted.error.tool_name  # the refusal answers the tool that was meant
            self._refused.put(call.id, vetted.message)

        async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> Any:
            ident = getattr(tool_context, "function_call_id", None)
            message = self._refused.pop(ident)
            if message is not None:
                return {"error": message}
            if tool.name not in self.registry:
                return None  # not offered: ADK's lookup error reaches on_tool_error_callback
            vetted = vet(self.registry, ToolCall(tool.name, dict(tool_args), ident), dispatch=True)
            if vetted.error is not None:
                return {"error": vetted.message}
            if vetted.call.arguments != tool_args:
                tool_args.clear()
                tool_args.update(vetted.call.arguments)
            return None

        async def on_tool_error_callback(
            self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, error: Exception
        ) -> Any:
            refused = self._refused.pop(getattr(tool_context, "function_call_id", None))
            if refused is not None:  # a refused call ADK could not look up (a text call to no tool)
                return {"error": refused}
            if tool.name not in self.registry:
                repair = self.registry.repair({"name": tool.name, "arguments": {}})
                if repair.error is not None:
                    return {"error": str(repair.error)}
            return {"error": str(error)}

    ToolRepairPlugin.__module__ = __name__
    ToolRepairPlugin.__qualname__ = "ToolRepairPlugin"
    return ToolRepairPlugin


def _invocation(callback_context: Any) -> str:
    return str(getattr(callback_context, "invocation_id", ""))


# ToolRepairPlugin subclasses ADK's BasePlugin, so it is built on first use: importing this module
# must not import the framework.
__getattr__ = lazy_classes(__name__, {"ToolRepairPlugin": _plugin_class})
