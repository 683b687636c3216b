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

Reasoning a text reply holds (``<think>…</think>`` and the other conventions the salvage reads)
is handed back as a ``ThinkingPart`` before the text; the ``TextPart`` keeps the rest
(``SalvageResult.content``).

Streamed requests (``run_stream``, ``run_stream_events``, ``iter`` with ``node.stream``) are read
through ``get_wrapper_model``: each text part is held until it ends, then handed on as the parts
it stands for, so a call written as text reaches consumers, and pydantic-ai itself, as a
``ToolCallPart``, never as markup. ``run_stream`` takes the first ``TextPart`` that starts as the
final output; a reply that is a text call (with reasoning or not) has none, so the call runs and
the next turn gives the output, as under ``run()``. A reply with text beside its call ends
``run_stream`` with that text, as pydantic-ai does for a native call after text (the call still
runs under the default ``end_strategy``); use ``run()``, ``iter()`` or ``run_stream_events()``
for such models. Other parts (native calls, the provider's own thinking) stream as they come.

``screen_stream`` (default False) makes pydantic-ai stream every request of every run,
``agent.run()`` included, through that same reading (it registers a ``wrap_run_event_stream``
hook): turn it on only with a model that streams (a ``FunctionModel`` needs a ``stream_function``).

Nothing here imports pydantic-ai until it is used; without it a clear ImportError names the extra.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from .._errors import format_expected
from .._registry import ToolRegistry
from .._types import ToolCall, ToolSpec
from ._common import PendingMessages, Vetted, lazy_classes, require, vet, vet_text

# ToolRepair is built on first access (module __getattr__, below).
__all__ = ["ToolRepair"]  # noqa: F822

_EXTRA = "pydantic_ai"


def _registry_from_definitions(definitions: Iterable[Any], policy: Mapping[str, Any]) -> ToolRegistry:
    specs = [
        ToolSpec(d.name, dict(d.parameters_json_schema or {"type": "object"}), d.description or "") for d in definitions
    ]
    return ToolRegistry(specs, **policy)


def _of_text(event: Any, messages: Any) -> bool:
    """Whether a stream event starts, extends or ends a text part."""
    return isinstance(getattr(event, "part", None), messages.TextPart) or isinstance(
        getattr(event, "delta", None), messages.TextPartDelta
    )


def _salvaging_model_class(messages: Any) -> type:
    """The model wrapper that salvages streamed requests (its streamed response with it)."""
    models = require("pydantic_ai.models", _EXTRA)
    wrapper = require("pydantic_ai.models.wrapper", _EXTRA)
    synced = ("provider_response_id", "provider_details", "canonical_system", "finish_reason", "state", "metadata")

    @dataclasses.dataclass
    class SalvagedStream(models.StreamedResponse):  # type: ignore[misc,name-defined]
        """The wrapped model's stream, its text handed on as the parts it stands for
        (``ToolRepair.salvaged_parts``): a call written as text is a ``ToolCallPart`` before any
        consumer (``run_stream``'s final-output check among them) sees a ``TextPart``, and its
        markup never shows. Parts before the first text part pass as they stream; from it on
        the reply waits for its end, then each text part is read whole.

        Why so long: ``run_stream`` ends the run at the first ``TextPart`` that starts, so no
        text may start while a call may still follow in it; a candidate the salvage refuses (a
        tool never offered) is answered only once its text is known to be one; and a reply with
        a native call anywhere has nothing salvaged (as a whole one). The salvage stream holds
        all of a reply's text until it ends too, without a model profile.

        Cost: the events from the first text part on are kept (O(reply)); each is handled in
        O(1) and each text part salvaged once, O(its length) (the salvage engine's bound)."""

        _inner: Any
        _salvaged: Callable[[str], list[Any] | None]

        async def _get_event_iterator(self) -> AsyncIterator[Any]:
            shown: dict[int, int] = {}  # inner index -> this stream's, for the parts passed on
            later: list[Any] | None = None  # the events from the first text part on
            native = False
            async for event in self._inner:
                self._sync()
                if isinstance(event, messages.PartStartEvent):
                    native = native or isinstance(event.part, messages.ToolCallPart)
                    if later is None and not native and isinstance(event.part, messages.TextPart):
                        later = []
                if later is not None:
                    later.append(event)
                    continue
                for out in self._passed(event, shown):
                    yield out
            self._sync()
            # Salvage runs only on a reply with no native call, as for a whole reply; which it
            # is is known only at its end, so the text, and all after it, waited for it.
            held: dict[int, list[str]] = {}  # the text parts being held, by the inner index
            for event in later or ():
                if native or not _of_text(event, messages):
                    for out in self._passed(event, shown):
                        yield out
                elif isinstance(event, messages.PartStartEvent):
                    held[event.index] = [event.part.content]
                elif isinstance(event, messages.PartDeltaEvent):
                    held.setdefault(event.index, []).append(event.delta.content_delta)
                else:  # the end of a held text part
                    for out in self._released("".join(held.pop(event.index)), event.part):
                        yield out
            for index in list(held):  # text that came back to a part after its end
                for out in self._released("".join(held.pop(index)), None):
                    yield out

        def _passed(self, event: Any, shown: dict[int, int]) -> Iterator[Any]:
            """A part's event passed on as the model sent it, renumbered into this stream."""
            if isinstance(event, messages.PartStartEvent):
                start = self._parts_manager.handle_part(
                    vendor_part_id=event.index, part=dataclasses.replace(event.part)
                )
                shown[event.index] = start.index
                yield start
            elif isinstance(event, messages.PartDeltaEvent):  # a part passed on: its start came first
                self._parts_manager.apply_event(event)
                yield messages.PartDeltaEvent(index=shown[event.index], delta=event.delta)
            # The inner stream's FinalResultEvent and PartEndEvents are this stream's to make.

        def _released(self, text: str, part: Any) -> Iterator[Any]:
            parts = self._salvaged(text)
            if parts is None:  # neither a call nor reasoning: the part as the model sent it
                parts = [part if isinstance(part, messages.TextPart) else messages.TextPart(content=text)]
            for new in parts:
                yield self._parts_manager.handle_part(vendor_part_id=None, part=new)

        def _sync(self) -> None:
            # What the provider said about the response, as the inner stream reads it.
            for name in synced:
                setattr(self, name, getattr(self._inner, name))

        @property
        def usage(self) -> Any:
            return self._inner.usage

        @property
        def model_name(self) -> str:
            return str(self._inner.model_name)

        @property
        def provider_name(self) -> str | None:
            return self._inner.provider_name  # type: ignore[no-any-return]

        @property
        def provider_url(self) -> str | None:
            return self._inner.provider_url  # type: ignore[no-any-return]

        @property
        def timestamp(self) -> Any:
            return self._inner.timestamp

        async def close_stream(self) -> None:
            # The inner stream's own guard takes the transport errors its cancelling raises.
            await self._inner.cancel()

    class SalvagingModel(wrapper.WrapperModel):  # type: ignore[misc,name-defined]
        """The served model, its streamed requests read through the salvage (whole replies are
        salvaged by ``after_model_request``)."""

        def __init__(self, wrapped: Any, capability: Any) -> None:
            super().__init__(wrapped)
            self._capability = capability

        @asynccontextmanager
        async def request_stream(
            self, messages: Any, model_settings: Any, model_request_parameters: Any, run_context: Any = None
        ) -> AsyncIterator[Any]:
            capability = self._capability
            registry = capability.registry_for(model_request_parameters.function_tools)
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as inner:
                yield SalvagedStream(
                    model_request_parameters=inner.model_request_parameters,
                    _inner=inner,
                    _salvaged=lambda text: capability.salvaged_parts(registry, text, streamed=True),
                )

    return SalvagingModel


def _capability_class() -> type:
    abstract = require("pydantic_ai.capabilities", _EXTRA)
    messages = require("pydantic_ai.messages", _EXTRA)
    exceptions = require("pydantic_ai.exceptions", _EXTRA)
    salvaging_model = _salvaging_model_class(messages)

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
            self._streamed = PendingMessages()  # ids of the calls a stream read and vetted

        def registry_for(self, definitions: Iterable[Any]) -> ToolRegistry:
            return self.registry if self.registry is not None else _registry_from_definitions(definitions, self._policy)

        @property
        def has_wrap_run_event_stream(self) -> bool:
            # pydantic-ai streams every request of a run once a capability wraps the event stream;
            # a streamed request is salvaged as it arrives (``get_wrapper_model``).
            return self.screen_stream

        def get_wrapper_model(self, model: Any) -> Any:
            """Every streamed request read through the salvage (see ``SalvagingModel``)."""
            return salvaging_model(model, self)

        async def after_model_request(self, ctx: Any, *, request_context: Any, response: Any) -> Any:
            registry = self.registry_for(request_context.model_request_parameters.function_tools)
            parts = list(response.parts)
            calls = [p for p in parts if isinstance(p, messages.ToolCallPart)]
            if calls:
                for part in calls:
                    if self._streamed.pop(part.tool_call_id) is None:  # a streamed text call was vetted
                        self._vet_part(registry, part)
                return response
            texts = [p for p in parts if isinstance(p, messages.TextPart)]
            if not texts:
                return response
            salvaged = self.salvaged_parts(registry, "".join(p.content for p in texts))
            if salvaged is not None:
                response.parts = salvaged + [p for p in parts if not isinstance(p, messages.TextPart)]
            return response

        def salvaged_parts(self, registry: ToolRegistry, text: str, *, streamed: bool = False) -> list[Any] | None:
            """The parts a reply's text stands for: the reasoning read from it as a
            ``ThinkingPart``, the text left as a ``TextPart`` and each call written in it as a
            ``ToolCallPart``; None when the text holds neither a call nor reasoning.

            Refused candidates too: a text call to a tool never offered gets pydantic-ai's own
            unknown-tool retry prompt, as a native one does, instead of ending the run as text;
            any other refusal is kept for ``before_tool_validate``. ``streamed``: the calls are
            vetted here, so ``after_model_request`` leaves their parts as they are."""
            vetted_text = vet_text(registry, text, "call_", answer_rejected=True)
            if not (vetted_text.calls or vetted_text.reasoning):
                return None
            out: list[Any] = []
            if vetted_text.reasoning:
                out.append(messages.ThinkingPart(content=vetted_text.reasoning))
            if vetted_text.remainder:
                out.append(messages.TextPart(content=vetted_text.remainder))
            for vetted in vetted_text.calls:
                ident = str(vetted.call.id)
                if vetted.error is not None:
                    self._refuse(vetted)
                if streamed:
                    self._streamed.put(ident, "")
                out.append(
                    messages.ToolCallPart(tool_name=vetted.call.name, args=vetted.call.arguments, tool_call_id=ident)
                )
            return out

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
