"""pydantic-ai: a capability that repairs every model response and every tool call's arguments.

>>> agent = Agent(model, tools=[web_search], capabilities=[ToolRepair(deny=["delete_file"])])  # doctest: +SKIP

``ToolRepair`` hooks the agent's own lifecycle:

- ``after_model_request``: drifted names become the offered name (pydantic-ai rejects an unknown
  name before any validation hook runs), broken arguments are repaired in the ``ToolCallPart``
  (so the history records the call that ran), and a reply with no calls has the calls it wrote as
  text salvaged into ``ToolCallPart``s, its text cut;
- ``before_tool_validate``: a call the registry's policy refuses (or whose arguments cannot be
  repaired) never reaches validation or execution: its tool result is the refusal
  (``before_tool_execute`` skips it), or the model is asked to retry with the corrective message;
- ``on_tool_validate_error``: when pydantic-ai's own validation still fails, the model gets
  toolrepair's corrective message (``ModelRetry``) instead of the raw validation error.

Without ``registry`` the capability repairs against the tools each request offers (their JSON
Schemas), with ``allow``/``deny``/``before_call`` as the policy; with one, against it.
A call naming a tool never offered is left to pydantic-ai, whose retry prompt lists the tools;
a call written as text that names one (or whose arguments cannot be read) becomes such a call,
so it is answered the same way instead of ending the run as raw markup.

``screen_stream`` (default False) hides calls written as text from ``run_stream_events`` and
``iter`` consumers. It registers a ``wrap_run_event_stream`` hook, and pydantic-ai then streams
every request of every run, ``agent.run()`` included: turn it on only with a model that streams
(a ``FunctionModel`` needs a ``stream_function``). Under ``agent.run_stream()`` pydantic-ai takes
the first streamed text as the output before any response hook runs, so a call written as text
is not run there: use ``run()``, ``iter()`` or ``run_stream_events()`` with such models.

Nothing here imports pydantic-ai until it is used; without it a clear ImportError names the extra.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from .._errors import format_expected
from .._registry import ToolRegistry
from .._types import ToolCall, ToolSpec
from ._common import PendingMessages, Vetted, VettedStream, lazy_classes, require, vet, vet_text

# ToolRepair is built on first access (module __getattr__, below).
__all__ = ["ToolRepair"]  # noqa: F822

_EXTRA = "pydantic_ai"


def _registry_from_definitions(definitions: Iterable[Any], policy: Mapping[str, Any]) -> ToolRegistry:
    specs = [
        ToolSpec(d.name, dict(d.parameters_json_schema or {"type": "object"}), d.description or "") for d in definitions
    ]
    return ToolRegistry(specs, **policy)


def _visible(items: list[str | Vetted]) -> str:
    return "".join(item for item in items if isinstance(item, str))


def _offered(ctx: Any) -> list[Any]:
    """The tool definitions of the run, for a registry when none was given."""
    manager = getattr(ctx, "tool_manager", None)
    tools = getattr(manager, "tools", None) or {}
    return [tool.tool_def for tool in tools.values()]


def _capability_class() -> type:
    abstract = require("pydantic_ai.capabilities", _EXTRA)
    messages = require("pydantic_ai.messages", _EXTRA)
    exceptions = require("pydantic_ai.exceptions", _EXTRA)

    class ToolRepair(abstract.AbstractCapability):  # type: ignore[misc,name-defined]
        """A pydantic-ai capability repairing tool calls and applying toolrepair's policy."""

        def __init__(
            self,
            registry: ToolRegistry | None = None,
            *,
            allow: Collection[str] | None = None,
            deny: Collection[str] | None = None,
            before_call: Callable[[ToolCall], bool | None] | None = None,
            screen_stream: bool = False,
        ) -> None:
            super().__init__()
            self.registry = registry
            self.screen_stream = screen_stream
            self._policy: dict[str, Any] = {"allow": allow, "deny": deny, "before_call": before_call}
            # Calls refused in after_model_request, by tool_call_id: (kind, message).
            self._refused = PendingMessages()
            self._skips = PendingMessages()

        def registry_for(self, definitions: Iterable[Any]) -> ToolRegistry:
            return self.registry if self.registry is not None else _registry_from_definitions(definitions, self._policy)

        @property
        def has_wrap_run_event_stream(self) -> bool:
            # pydantic-ai streams every request of a run once a capability wraps the event stream.
            return self.screen_stream

        async def wrap_run_event_stream(self, ctx: Any, *, stream: Any) -> Any:
            """The consumer's view of streamed text: calls written as text never show (they are
            run from the finished response, through ``after_model_request``)."""
            registry = self.registry
            screens: dict[int, VettedStream] = {}
            shown: dict[int, list[str]] = {}
            try:
                async for event in stream:
                    part = getattr(event, "part", None)
                    delta = getattr(event, "delta", None)
                    if isinstance(event, messages.PartStartEvent) and isinstance(part, messages.TextPart):
                        if registry is None:
                            registry = self.registry_for(_offered(ctx))
                        screens[event.index] = VettedStream(registry, "call_", screen_only=True)
                        shown[event.index] = []
                        text = _visible(screens[event.index].feed(part.content))
                        shown[event.index].append(text)
                        yield messages.PartStartEvent(index=event.index, part=messages.TextPart(content=text))
                    elif (
                        isinstance(event, messages.PartDeltaEvent)
                        and event.index in screens
                        and isinstance(delta, messages.TextPartDelta)
                    ):
                        text = _visible(screens[event.index].feed(delta.content_delta))
                        if text:
                            shown[event.index].append(text)
                            yield messages.PartDeltaEvent(
                                index=event.index, delta=messages.TextPartDelta(content_delta=text)
                            )
                    elif isinstance(event, messages.PartEndEvent) and event.index in screens:
                        text = _visible(screens.pop(event.index).close())
                        if text:
                            shown[event.index].append(text)
                            yield messages.PartDeltaEvent(
                                index=event.index, delta=messages.TextPartDelta(content_delta=text)
                            )
                        full = "".join(shown.pop(event.index))
                        yield messages.PartEndEvent(
                            index=event.index, part=messages.TextPart(content=full), next_part_kind=event.next_part_kind
                        )
                    else:
                        yield event
            finally:
                close = getattr(stream, "aclose", None)
                if close is not None:
                    await close()

        async def after_model_request(self, ctx: Any, *, request_context: Any, response: Any) -> Any:
            registry = self.registry_for(request_context.model_request_parameters.function_tools)
            parts = list(response.parts)
            calls = [p for p in parts if isinstance(p, messages.ToolCallPart)]
            if calls:
                for part in calls:
                    self._vet_part(registry, part)
                return response
            texts = [p for p in parts if isinstance(p, messages.TextPart)]
            if not texts:
                return response
            text = "".join(p.content for p in texts)
            # Refused candidates too: a text call to a tool never offered gets pydantic-ai's own
            # unknown-tool retry prompt, as a native one does, instead of ending the run as text.
            vetted_text = vet_text(registry, text, "call_", answer_rejected=True)
            if not vetted_text.calls:
                return response
            kept = [p for p in parts if not isinstance(p, messages.TextPart)]
            new_parts: list[Any] = [messages.TextPart(content=vetted_text.content)] if vetted_text.content else []
            for vetted in vetted_text.calls:
                assert vetted.call.id is not None
                if vetted.error is not None:
                    self._refuse(vetted)
                new_parts.append(
                    messages.ToolCallPart(
                        tool_name=vetted.call.name, args=vetted.call.arguments, tool_call_id=vetted.call.id
                    )
                )
            response.parts = new_parts + kept
            return response

        def _vet_part(self, registry: ToolRegistry, part: Any) -> None:
            vetted = vet(registry, (part.tool_name, part.args, part.tool_call_id))
            if vetted.error is None:
                part.tool_name, part.args = vetted.call.name, vetted.call.arguments
            elif vetted.error.kind != "not-found":  # pydantic-ai answers unknown names itself
                if vetted.error.tool_name:  # the resolved name, so the refusal answers the right tool
                    part.tool_name = vetted.error.tool_name
                self._refuse(vetted)

        def _refuse(self, vetted: Vetted) -> None:
            kind = "denied" if vetted.error is not None and vetted.error.kind == "denied" else "retry"
            self._refused.put(str(vetted.call.id), f"{kind}\x00{vetted.message}")

        async def before_tool_validate(self, ctx: Any, *, call: Any, tool_def: Any, args: Any) -> Any:
            refused = self._refused.pop(call.tool_call_id)
            if refused is None:
                # Arguments the response did not hold when after_model_request saw it.
                vetted = vet(self.registry_for([tool_def]), (call.tool_name, args, call.tool_call_id), dispatch=True)
                if vetted.error is None:
                    return vetted.call.arguments
                refused = f"{'denied' if vetted.error.kind == 'denied' else 'retry'}\x00{vetted.message}"
            kind, message = refused.split("\x00", 1)
            if kind == "denied":
                # Never validated, never run: the refusal is the call's result.
                self._skips.put(call.tool_call_id, message)
                raise exceptions.SkipToolValidation({})
            raise exceptions.ModelRetry(message)

        async def on_tool_validate_error(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, error: Any) -> Any:
            if isinstance(error, exceptions.ModelRetry):
                raise error
            detail = "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}" for e in error.errors())
            registry = self.registry_for([tool_def])
            expected = registry.info(tool_def.name).expected if tool_def.name in registry else None
            hint = f" {format_expected(tool_def.name, expected)}" if expected is not None else ""
            raise exceptions.ModelRetry(f"Invalid arguments for {call.tool_name!r}: {detail}.{hint}") from error

        async def before_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any) -> Any:
            message = self._skips.pop(call.tool_call_id)
            if message is not None:
                raise exceptions.SkipToolExecution(message)
            return args

    ToolRepair.__module__ = __name__
    ToolRepair.__qualname__ = "ToolRepair"
    return ToolRepair


# ToolRepair subclasses pydantic-ai's AbstractCapability, so it is built on first use: importing
# this module must not import the framework.
__getattr__ = lazy_classes(__name__, {"ToolRepair": _capability_class})
