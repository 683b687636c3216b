"""openai-agents: a ``Model`` wrapper that repairs every response, and a ``tool_error_formatter``.

>>> repair = ToolRepair(deny=["delete_file"])                                # doctest: +SKIP
>>> agent = Agent(name="a", model=repair.model(model), tools=[web_search])   # doctest: +SKIP
>>> await Runner.run(agent, "hi", run_config=repair.run_config())            # doctest: +SKIP

``repair.model(model)`` wraps ``get_response`` and ``stream_response``: drifted names become the
offered name, broken arguments are repaired (the SDK would raise ``ModelBehaviorError("Invalid
JSON input for tool …")``), and calls written as text become ``function_call`` items, their text
cut (in a stream, the markup never reaches the screen). A call that cannot be repaired, or that
the registry's policy refuses, never reaches a tool: it is left unresolvable (a refused call to an
offered tool is renamed ``<name>__refused``) and ``repair.run_config()`` makes the runner answer it
(``tool_not_found_behavior="return_error_to_model"``) with toolrepair's corrective message through
``repair.tool_error_formatter``, which also gives a failing tool's own message to the model.

Reasoning a text reply holds (``<think>…</think>`` and the other conventions the salvage reads)
leaves the message's text and becomes a ``ResponseReasoningItem`` before the message (its text in
one ``reasoning_text`` part, the SDK's ``FAKE_RESPONSES_ID`` as its id, for an item no provider
named); streamed, it arrives as ``response.reasoning_text.delta`` events, never as output text.
As for calls, only a reply with no native ``function_call`` is read.

Without ``registry`` each response is repaired against the tools that request offered (their
JSON Schemas), with ``allow``/``deny``/``before_call`` as the policy.

Nothing here imports openai-agents until it is used; without it a clear ImportError names the extra.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Iterable
from typing import Any

from .._registry import ToolRegistry
from .._types import ToolCall, ToolSpec
from ._common import PendingMessages, Reasoned, Vetted, VettedStream, lazy_classes, require
from .openai import ERRORS_KEY, repair_response_items

# ToolRepairModel is built on first access (module __getattr__, below).
__all__ = ["REFUSED_SUFFIX", "ToolRepair", "ToolRepairModel"]  # noqa: F822

_EXTRA = "openai_agents"
REFUSED_SUFFIX = "__refused"
_NO_PROVIDER_ID = "__fake_id__"  # agents.models.fake_id.FAKE_RESPONSES_ID, kept in a test


class ToolRepair:
    """The repair shared by a wrapped model and the runner's error formatter (see the module doc)."""

    def __init__(
        self,
        registry: ToolRegistry | None = None,
        *,
        allow: Collection[str] | None = None,
        deny: Collection[str] | None = None,
        before_call: Callable[[ToolCall], bool | None] | None = None,
    ) -> None:
        require("agents", _EXTRA)
        self.registry = registry
        self._policy: dict[str, Any] = {"allow": allow, "deny": deny, "before_call": before_call}
        self._pending = PendingMessages()

    def registry_for(self, tools: Iterable[Any]) -> ToolRegistry:
        if self.registry is not None:
            return self.registry
        specs = [
            ToolSpec(t.name, _schema(t), getattr(t, "description", "") or "")
            for t in tools
            if isinstance(getattr(t, "params_json_schema", None), dict)
        ]
        return ToolRegistry(specs, **self._policy)

    def model(self, model: Any) -> Any:
        """``model`` (an ``agents.Model``) with every response repaired."""
        cls: type = __getattr__("ToolRepairModel")
        return cls(model, self)

    def run_config(self, **kwargs: Any) -> Any:
        """A ``RunConfig`` whose runner answers refused calls with toolrepair's message."""
        agents = require("agents", _EXTRA)
        kwargs.setdefault("tool_not_found_behavior", "return_error_to_model")
        kwargs.setdefault("tool_error_formatter", self.tool_error_formatter)
        return agents.RunConfig(**kwargs)

    def tool_error_formatter(self, args: Any) -> str | None:
        """``RunConfig.tool_error_formatter``: the corrective message for a call this repair
        refused, the tool's own message when a tool raised, else the SDK's default."""
        if args.kind == "tool_not_found":
            return self._pending.pop(args.call_id)
        if args.kind == "tool_exception" and args.error is not None:
            return str(args.error)
        return None

    # -- the response --------------------------------------------------------------------------
    def repair_output(self, output: list[Any], tools: Iterable[Any], *, turn: int = 0) -> list[Any]:
        """A response's output items, repaired (SDK objects in, SDK objects out). ``turn``: the
        response's position in the run (the input's length), in the ids of calls salvaged from
        text: the runner runs each call id once, and a model may write the same call again."""
        registry = self.registry_for(tools)
        # dispatch: the runner runs the calls with no later check.
        # Reasoning read from the text: a reasoning item with the SDK's own id for items no
        # provider named (left out when the input goes back to OpenAI's Responses API).
        fixed = repair_response_items(
            output, registry, dispatch=True, id_seed=str(turn) if turn else "", reasoning_id=_NO_PROVIDER_ID
        )
        items: list[dict[str, Any]] = fixed["output"]
        for error in fixed[ERRORS_KEY]:
            ident = error.get("call_id")
            if ident is None:
                continue
            self._pending.put(ident, error["message"])
            for item in items:
                if item.get("call_id") == ident and item.get("name") in registry:
                    item["name"] = f"{item['name']}{REFUSED_SUFFIX}"  # unresolvable: the runner answers it
        types = require("openai.types.responses", _EXTRA)
        adapter = require("pydantic", _EXTRA).TypeAdapter(types.ResponseOutputItem)
        return [adapter.validate_python(item) for item in items]

    def screen(self, tools: Iterable[Any]) -> VettedStream:
        """A screen for one streamed text item: visible text out, calls held back."""
        return VettedStream(self.registry_for(tools), "call_", screen_only=True)


def _schema(tool: Any) -> dict[str, Any]:
    schema = dict(tool.params_json_schema)
    if getattr(tool, "strict_json_schema", False):
        # A strict schema lists every property as required, those with defaults too; the tool's
        # own validation knows which may be left out.
        schema.pop("required", None)
    return schema


def _turn(input: Any) -> int:
    """A response's position in its run: how many items the model was sent (a str is one)."""
    return len(input) if isinstance(input, list) else 1


def _shown(items: list[str | Vetted | Reasoned]) -> tuple[str, str]:
    """(visible text, reasoning) a screen released."""
    text = "".join(item for item in items if isinstance(item, str))
    return text, "".join(item.text for item in items if isinstance(item, Reasoned))


def _model_class() -> type:
    agents = require("agents", _EXTRA)
    events = require("openai.types.responses", _EXTRA)

    def _deltas(event: Any, items: list[str | Vetted | Reasoned]) -> list[Any]:
        """What a text delta's screen released, as events: the reasoning read from the text as
        ``response.reasoning_text.delta`` (its item, with the id the completed response gives
        it, comes with that response), the visible text as the delta itself."""
        text, reasoning = _shown(items)
        out: list[Any] = []
        if reasoning:
            out.append(
                events.ResponseReasoningTextDeltaEvent(
                    type="response.reasoning_text.delta",
                    item_id=_NO_PROVIDER_ID,
                    output_index=event.output_index,
                    content_index=0,
                    delta=reasoning,
                    sequence_number=event.sequence_number,
                )
            )
        if text:
            out.append(event.model_copy(update={"delta": text}))
        return out

    class ToolRepairModel(agents.Model):  # type: ignore[misc,name-defined]
        """An ``agents.Model`` whose responses go through a ``ToolRepair``."""

        def __init__(self, model: Any, repair: ToolRepair) -> None:
            self.wrapped = model
            self.repair = repair

        # The SDK's own positional signature, passed on unchanged.
        async def get_response(  # noqa: PLR0917
            self,
            system_instructions: Any,
            input: Any,
            model_settings: Any,
            tools: Any,
            output_schema: Any,
            handoffs: Any,
            tracing: Any,
            **kwargs: Any,
        ) -> Any:
            response = await self.wrapped.get_response(
                system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs
            )
            response.output = self.repair.repair_output(list(response.output), tools, turn=_turn(input))
            return response

        async def stream_response(  # noqa: PLR0917
            self,
            system_instructions: Any,
            input: Any,
            model_settings: Any,
            tools: Any,
            output_schema: Any,
            handoffs: Any,
            tracing: Any,
            **kwargs: Any,
        ) -> AsyncIterator[Any]:
            screens: dict[str, VettedStream] = {}
            last_delta: dict[str, Any] = {}
            stream = self.wrapped.stream_response(
                system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs
            )
            async for event in stream:
                if isinstance(event, events.ResponseTextDeltaEvent):
                    screen = screens.setdefault(event.item_id, self.repair.screen(tools))
                    last_delta[event.item_id] = event
                    for out in _deltas(event, screen.feed_reasoned(event.delta)):
                        yield out
                elif isinstance(event, events.ResponseCompletedEvent):
                    for item_id, screen in screens.items():
                        for out in _deltas(last_delta[item_id], screen.close_reasoned()):
                            yield out
                    screens.clear()
                    response = event.response.model_copy()
                    response.output = self.repair.repair_output(list(response.output), tools, turn=_turn(input))
                    yield event.model_copy(update={"response": response})
                else:
                    yield event

        def get_retry_advice(self, request: Any) -> Any:
            return self.wrapped.get_retry_advice(request)

        async def close(self) -> None:
            await self.wrapped.close()

        async def _cleanup_on_run_end(self, owner: object) -> None:
            cleanup = getattr(self.wrapped, "_cleanup_on_run_end", None)
            if cleanup is not None:
                await cleanup(owner)

    ToolRepairModel.__module__ = __name__
    ToolRepairModel.__qualname__ = "ToolRepairModel"
    return ToolRepairModel


# ToolRepairModel subclasses openai-agents' Model, so it is built on first use: importing this module
# must not import the framework.
__getattr__ = lazy_classes(__name__, {"ToolRepairModel": _model_class})
