"""smolagents: a ``Model`` wrapper whose tool calls are repaired, salvaged and vetted.

>>> agent = ToolCallingAgent(tools=[web_search], model=ToolRepairModel(model, deny=["delete_file"]))  # doctest: +SKIP

``ToolRepairModel(model)`` passes every request to ``model`` and repairs what comes back: native
tool calls get the offered name and repaired arguments; a reply with none goes through
``parse_tool_calls``, which salvages every call written as text (all dialects, several calls, no
"JSON blob" needed; never one inside code or reasoning) and vets each. A
reply holding a call that cannot be repaired, or that the registry's policy refuses, is not run at
all: ``parse_tool_calls`` raises with toolrepair's corrective messages, which smolagents records
as the step's error and shows the model next step. Streamed replies (``stream_outputs=True``) are
screened: call markup never reaches the live display; the calls arrive as tool-call deltas.

Without ``registry`` each reply is checked against the tools that request offered (their
``inputs``), ``final_answer`` included, with ``allow``/``deny``/``before_call`` as the policy.

Nothing here imports smolagents until it is used; without it a clear ImportError names the extra.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

from .._registry import ToolRegistry
from .._types import ToolCall, ToolSpec
from ._common import (
    Vetted,
    VettedStream,
    lazy_classes,
    rejection_message,
    require,
    stable_id,
    vet,
    vet_text,
    withdraw,
)

# ToolRepairModel is built on first access (module __getattr__, below).
__all__ = ["ToolRepairModel"]  # noqa: F822

_EXTRA = "smolagents"
# smolagents' input types, as JSON Schema types ("any" and "null" accept anything).
_TYPES = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "array": "array",
    "object": "object",
}


def _spec(tool: Any) -> ToolSpec:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, spec in (getattr(tool, "inputs", None) or {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        prop: dict[str, Any] = {}
        if isinstance(kind, str) and kind in _TYPES:
            prop["type"] = [_TYPES[kind], "null"] if spec.get("nullable") else _TYPES[kind]
        properties[name] = prop
        if not (isinstance(spec, dict) and spec.get("nullable")):
            required.append(name)
    schema = {"type": "object", "properties": properties, "required": required}
    return ToolSpec(tool.name, schema, getattr(tool, "description", "") or "")


def _model_class() -> type:
    models = require("smolagents.models", _EXTRA)

    class ToolRepairModel(models.Model):  # type: ignore[misc,name-defined]
        """A smolagents ``Model`` around another, repairing its tool calls (see the module doc)."""

        def __init__(
            self,
            model: Any,
            registry: ToolRegistry | None = None,
            *,
            allow: Collection[str] | None = None,
            deny: Collection[str] | None = None,
            before_call: Callable[[ToolCall], bool | None] | None = None,
        ) -> None:
            super().__init__(model_id=getattr(model, "model_id", None))
            self.wrapped = model
            self.registry = registry
            self._policy: dict[str, Any] = {"allow": allow, "deny": deny, "before_call": before_call}
            self._last: ToolRegistry | None = None
            self._refusal: str | None = None

        def registry_for(self, tools: Iterable[Any] | None) -> ToolRegistry:
            if self.registry is not None:
                return self.registry
            if tools is None and self._last is not None:
                return self._last
            return ToolRegistry([_spec(t) for t in tools or []], **self._policy)

        # -- whole replies ---------------------------------------------------------------------
        def generate(
            self,
            messages: Any,
            stop_sequences: Any = None,
            response_format: Any = None,
            tools_to_call_from: Any = None,
            **kwargs: Any,
        ) -> Any:
            self._last = registry = self.registry_for(tools_to_call_from)
            self._refusal = None
            message = self.wrapped.generate(
                messages,
                stop_sequences=stop_sequences,
                response_format=response_format,
                tools_to_call_from=tools_to_call_from,
                **kwargs,
            )
            if message.tool_calls:
                vetted = [
                    vet(registry, (tc.function.name, tc.function.arguments, tc.id), dispatch=True)
                    for tc in message.tool_calls
                ]
                self._refusal = _refusal(registry, vetted)
                if self._refusal is not None:
                    message.tool_calls = None  # nothing runs; parse_tool_calls reports why
                else:
                    for tc, v in zip(message.tool_calls, vetted, strict=True):
                        tc.function.name, tc.function.arguments = v.call.name, v.call.arguments
            return message

        def parse_tool_calls(self, message: Any) -> Any:
            refusal, self._refusal = self._refusal, None
            if refusal is not None:
                raise ValueError(refusal)
            registry = self.registry_for(None)
            text = message.content if isinstance(message.content, str) else ""
            # Refused candidates answered too; dispatch: smolagents runs what this returns, unchecked.
            vetted_text = vet_text(registry, text, "call_", answer_rejected=True, dispatch=True)
            if not vetted_text.calls:
                # No fallback to a parser that reads JSON anywhere: a call inside code or
                # reasoning must stay text.
                reasons = [rejection_message(r, registry) for r in vetted_text.rejected]
                raise ValueError(
                    "\n".join(reasons)
                    or "No tool call was found in the reply: call one of the "
                    f"tools {sorted(registry.names)} (final_answer to give the answer)."
                )
            message.content = vetted_text.content
            vetted = list(vetted_text.calls)
            refusal = _refusal(registry, vetted)
            if refusal is not None:
                raise ValueError(refusal)
            message.role = models.MessageRole.ASSISTANT
            message.tool_calls = [_tool_call(models, v.call) for v in vetted]
            return message

        # -- streamed replies ------------------------------------------------------------------
        def generate_stream(
            self,
            messages: Any,
            stop_sequences: Any = None,
            response_format: Any = None,
            tools_to_call_from: Any = None,
            **kwargs: Any,
        ) -> Iterator[Any]:
            self._last = registry = self.registry_for(tools_to_call_from)
            self._refusal = None
            screen = VettedStream(registry, "call_", dispatch=True)
            native: dict[int, dict[str, Any]] = {}
            ready: list[Vetted] = []
            for delta in self.wrapped.generate_stream(
                messages,
                stop_sequences=stop_sequences,
                response_format=response_format,
                tools_to_call_from=tools_to_call_from,
                **kwargs,
            ):
                for tc in delta.tool_calls or []:
                    # Pieces kept, joined once at the end: `+=` copies the whole so far each time.
                    slot = native.setdefault(tc.index or 0, {"id": None, "name": [], "arguments": []})
                    slot["id"] = slot["id"] or tc.id
                    if tc.function is not None:
                        slot["name"].append(tc.function.name or "")
                        args = tc.function.arguments
                        slot["arguments"].append(args if isinstance(args, str) else json.dumps(args or {}))
                items = screen.feed(delta.content) if delta.content else []
                ready += [i for i in items if isinstance(i, Vetted)]
                text = "".join(i for i in items if isinstance(i, str))
                if text or delta.token_usage is not None:
                    yield models.ChatMessageStreamDelta(content=text or None, token_usage=delta.token_usage)
            items = screen.close()
            ready += [i for i in items if isinstance(i, Vetted)]
            text = "".join(i for i in items if isinstance(i, str))
            for index, slot in sorted(native.items()):
                name, arguments = "".join(slot["name"]), "".join(slot["arguments"])
                ident = slot["id"] or stable_id("call_", name + arguments, index)
                ready.append(vet(registry, (name, arguments, ident), dispatch=True))
            self._refusal = _refusal(registry, ready)
            calls = (
                []
                if self._refusal is not None
                else [
                    models.ChatMessageToolCallStreamDelta(
                        index=i,
                        id=v.call.id,
                        type="function",
                        function=models.ChatMessageToolCallFunction(
                            name=v.call.name, arguments=json.dumps(v.call.arguments, ensure_ascii=False)
                        ),
                    )
                    for i, v in enumerate(ready)
                ]
            )
            if text or calls:
                yield models.ChatMessageStreamDelta(content=text or None, tool_calls=calls or None)

    ToolRepairModel.__module__ = __name__
    ToolRepairModel.__qualname__ = "ToolRepairModel"
    return ToolRepairModel


def _refusal(registry: ToolRegistry, vetted: list[Vetted]) -> str | None:
    """The corrective text for a reply holding a refused call, or None when all may run. Such
    a reply runs none of its calls: the others' counts are given back (``withdraw``)."""
    refused = [v.message for v in vetted if v.error is not None]
    if not refused:
        return None
    withdraw(registry, vetted)
    note = " No call of this reply was run: send the ones you still need again." if len(vetted) > 1 else ""
    return "\n".join(refused) + note


def _tool_call(models: Any, call: ToolCall) -> Any:
    return models.ChatMessageToolCall(
        id=call.id or "",
        type="function",
        function=models.ChatMessageToolCallFunction(name=call.name, arguments=call.arguments),
    )


# ToolRepairModel subclasses smolagents' Model, so it is built on first use: importing this module
# must not import the framework.
__getattr__ = lazy_classes(__name__, {"ToolRepairModel": _model_class})
