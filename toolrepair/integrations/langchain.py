"""LangChain / LangGraph: repair ``AIMessage``s, wrap ``ToolNode`` dispatch, and a ``create_agent`` middleware.

``ToolRegistry`` takes LangChain ``BaseTool``s directly (their ``tool_call_schema`` is the
schema). Three ways in, from smallest to largest:

- ``repair_ai_message(message, registry)``: names fixed, arguments repaired, broken
  ``invalid_tool_calls`` recovered, calls written as text salvaged from ``content``;
- ``ToolNode(tools, wrap_tool_call=tool_call_wrapper(registry), awrap_tool_call=async_tool_call_wrapper(registry))``:
  drifted names reach the right tool, and unknown names, bad arguments, refused calls and tool
  errors are answered with toolrepair's corrective ``ToolMessage`` (``status="error"``);
- ``ToolNodeRepair(registry)``: both of the above for a hand-built graph (``.message`` in the
  model node, ``.tool_node(tools)``), so broken JSON and text calls reach the tools too;
- ``create_agent(model, tools, middleware=[ToolRepairMiddleware(registry)])``: both.

A call written as text that names a tool never offered (or whose arguments cannot be read) is
answered like a native one: a ``ToolMessage`` with the corrective message, so the next model
turn can fix it, instead of the run ending on the markup.

Streaming a hand-built graph with ``stream_mode="messages"`` shows the tokens the model node's
chat model emits, call markup included: call the model through
``ScreenedChatModel(inner=llm, registry=registry)`` in the node (``create_agent`` with the
middleware does this itself). Its tokens go through the registry's stream salvager, and a call
written as text arrives as a tool-call chunk, which ``ToolNodeRepair.message`` then vets::

    screened = ScreenedChatModel(inner=llm.bind_tools(tools), registry=registry)
    def model(state): return {"messages": [repair.message(screened.invoke(state["messages"]))]}

Nothing here imports LangChain until it is used; without it a clear ImportError names the extra.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .._registry import ToolRegistry
from .._salvage import ReasoningDelta
from ._common import (
    REASONING_SEPARATOR,
    PendingMessages,
    Vetted,
    joined_reasoning,
    lazy_classes,
    require,
    stable_id,
    vet,
    vet_text,
)

# ToolRepairMiddleware is built on first access (module __getattr__, below).
__all__ = [  # noqa: F822
    "ScreenedChatModel",
    "ToolNodeRepair",
    "ToolRepairMiddleware",
    "async_tool_call_wrapper",
    "awrap_tool_call",
    "repair_ai_message",
    "tool_call_wrapper",
    "wrap_tool_call",
]

_EXTRA = "langchain"


def _messages() -> Any:
    return require("langchain_core.messages", _EXTRA)


def _registry(tools: ToolRegistry | Iterable[Any]) -> ToolRegistry:
    return tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)


def _tool_call(name: str, args: dict[str, Any], ident: str | None) -> dict[str, Any]:
    # langchain_core's ToolCall is a TypedDict: this is its shape.
    return {"name": name, "args": args, "id": ident, "type": "tool_call"}


def repair_ai_message(message: Any, registry: ToolRegistry) -> Any:
    """A copy of ``message`` (an ``AIMessage``) with its tool calls repaired.

    ``tool_calls`` get the offered name and repaired arguments, ids kept. ``invalid_tool_calls``
    whose arguments can be repaired become ``tool_calls``. With neither, calls written as text
    in ``content`` are salvaged (content cut, ids ``call_…`` derived from the text). A call that
    cannot be repaired, or that the registry's policy refuses, is never a ``tool_call``: it is an
    ``invalid_tool_calls`` entry whose ``error`` is toolrepair's corrective message, so a plain
    ``ToolNode`` never runs it (``ToolNodeRepair`` answers it instead).
    """
    _messages()  # fail early, naming the extra, when LangChain is missing
    update: dict[str, Any] = {}
    pending = _vetted_calls(message, registry)
    if not pending:  # neither tool_calls nor invalid_tool_calls: salvage the text
        thought: list[str] = []
        content, salvaged = _salvage_content(message.content, registry, thought)
        if salvaged:
            update["content"] = content
            kwargs = message.additional_kwargs or {}
            if thought:
                # Where LangChain's OpenAI-compatible chat models put a reasoning model's thinking,
                # after what the server sent there itself.
                joined = REASONING_SEPARATOR.join(thought)
                update["additional_kwargs"] = {
                    **kwargs,
                    "reasoning_content": joined_reasoning(kwargs.get("reasoning_content"), joined),
                }
            pending = [(vetted, _json_args(vetted.call.arguments)) for vetted in salvaged]
    if not pending:
        return message
    update["tool_calls"] = [_tool_call(v.call.name, v.call.arguments, v.call.id) for v, _ in pending if v.error is None]
    update["invalid_tool_calls"] = [
        {"name": v.call.name, "args": raw_args, "id": v.call.id, "error": v.message, "type": "invalid_tool_call"}
        for v, raw_args in pending
        if v.error is not None
    ]
    if "tool_calls" in (message.additional_kwargs or {}):
        # The provider's raw calls would now disagree with tool_calls: drop them.
        kwargs = update.get("additional_kwargs", message.additional_kwargs)
        update["additional_kwargs"] = {k: v for k, v in kwargs.items() if k != "tool_calls"}
    return message.model_copy(update=update)


def _vetted_calls(message: Any, registry: ToolRegistry) -> list[tuple[Vetted, Any]]:
    """Each of the message's ``tool_calls`` and ``invalid_tool_calls`` vetted, with the
    arguments as a string (what an ``invalid_tool_calls`` entry keeps if it is refused)."""
    pending = [
        (vet(registry, (tc["name"], tc["args"], tc.get("id"))), _json_args(tc["args"]))
        for tc in message.tool_calls or []
    ]
    for i, itc in enumerate(message.invalid_tool_calls or []):
        ident = itc.get("id") or stable_id("call_", str(itc.get("args")), i)
        pending.append((vet(registry, (itc.get("name") or "", itc.get("args"), ident)), itc.get("args")))
    return pending


def _json_args(args: Any) -> str:
    # invalid_tool_calls keep their arguments as a string, as the model would have sent them.
    return json.dumps(args, ensure_ascii=False, default=str)


def _salvage_content(
    content: Any, registry: ToolRegistry, thought: list[str] | None = None
) -> tuple[Any, list[Vetted]]:
    """(content without the text calls, the vetted calls with stable ids) for str or block-list content;
    the reasoning cut out with the calls goes to ``thought``."""
    calls: list[Vetted] = []

    def salvage(text: str) -> str:
        # Refused candidates too: a text call to a tool never offered is answered, not shown.
        vetted = vet_text(registry, text, "call_", answer_rejected=True)
        calls.extend(vetted.calls)
        if vetted.reasoning and thought is not None:
            thought.append(vetted.reasoning)
        return vetted.content

    if isinstance(content, str):
        return salvage(content), calls
    if isinstance(content, list):
        blocks: list[Any] = []
        for block in content:
            if isinstance(block, str):
                text = salvage(block)
                if text:
                    blocks.append(text)
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                text = salvage(block["text"])
                if text:
                    blocks.append({**block, "text": text})
            else:
                blocks.append(block)
        return blocks, calls
    return content, calls


# -- tool dispatch ---------------------------------------------------------------------------
def _error_message(call: Any, text: str) -> Any:
    return _messages().ToolMessage(content=text, name=call.get("name"), tool_call_id=call.get("id"), status="error")


def _find_tool(registry: ToolRegistry, name: str, request: Any) -> Any:
    """The LangChain tool the node should run for a repaired name."""
    runtime_tools = getattr(getattr(request, "runtime", None), "tools", None) or ()
    for tool in runtime_tools:
        if getattr(tool, "name", None) == name:
            return tool
    tool = request.tool
    if tool is not None and getattr(tool, "name", None) == name:
        return tool
    source = registry.info(name).source
    base_tool = require("langchain_core.tools", _EXTRA).BaseTool
    return source if isinstance(source, base_tool) else None


def _prepare(registry: ToolRegistry, request: Any, pending: PendingMessages | None) -> tuple[Any, Any]:
    """(the request to execute, None) or (None, the ToolMessage that answers the call)."""
    call = request.tool_call
    if pending is not None:
        message = pending.pop(call.get("id"))
        if message is not None:
            return None, _error_message(call, message)
    # The dispatch: the call counts for max_repeats here (once, if the message repair vetted it).
    vetted = vet(registry, (call.get("name") or "", call.get("args"), call.get("id")), dispatch=True)
    if vetted.error is not None:
        return None, _error_message(call, vetted.message)
    fixed = vetted.call
    if fixed.name == call.get("name") and fixed.arguments == call.get("args") and request.tool is not None:
        return request, None
    overrides: dict[str, Any] = {"tool_call": {**call, "name": fixed.name, "args": fixed.arguments}}
    tool = _find_tool(registry, fixed.name, request)
    if tool is not None:
        overrides["tool"] = tool
    override = getattr(request, "override", None)
    if callable(override):
        return override(**overrides), None
    return dataclasses.replace(request, **overrides), None  # ToolCallRequest before `override` existed


def _is_control_flow(exc: BaseException) -> bool:
    # Interrupts and other graph control flow must propagate, never become a tool error.
    errors = require("langgraph.errors", _EXTRA)
    return isinstance(exc, errors.GraphBubbleUp)


ToolCallHandler = Callable[[Any], Any]
AsyncToolCallHandler = Callable[[Any], Awaitable[Any]]


def _sync_wrapper(
    registry: ToolRegistry, handle_tool_errors: bool, pending: PendingMessages | None
) -> Callable[[Any, ToolCallHandler], Any]:
    def wrap(request: Any, execute: ToolCallHandler) -> Any:
        ready, answer = _prepare(registry, request, pending)
        if answer is not None:
            return answer
        try:
            return execute(ready)
        except Exception as exc:
            if not handle_tool_errors or _is_control_flow(exc):
                raise
            return _error_message(ready.tool_call, str(exc))

    return wrap


def _async_wrapper(
    registry: ToolRegistry, handle_tool_errors: bool, pending: PendingMessages | None
) -> Callable[[Any, AsyncToolCallHandler], Awaitable[Any]]:
    async def wrap(request: Any, execute: AsyncToolCallHandler) -> Any:
        ready, answer = _prepare(registry, request, pending)
        if answer is not None:
            return answer
        try:
            return await execute(ready)
        except Exception as exc:
            if not handle_tool_errors or _is_control_flow(exc):
                raise
            return _error_message(ready.tool_call, str(exc))

    return wrap


def tool_call_wrapper(
    registry: ToolRegistry | Iterable[Any], *, handle_tool_errors: bool = True
) -> Callable[[Any, ToolCallHandler], Any]:
    """A ``wrap_tool_call`` hook for ``langgraph.prebuilt.ToolNode``: ``(request, execute) -> ToolMessage``.

    Drifted names and repairable arguments are fixed before ``execute``; unknown names, bad
    arguments and calls the registry's policy refuses get toolrepair's corrective
    ``ToolMessage`` (``status="error"``) without running anything; an exception from the tool
    becomes a ``ToolMessage`` with its own message unless ``handle_tool_errors=False``.
    It sees only ``tool_calls``: for broken JSON and text calls too, use ``ToolNodeRepair``.
    """
    require("langgraph.prebuilt", _EXTRA)
    return _sync_wrapper(_registry(registry), handle_tool_errors, None)


def async_tool_call_wrapper(
    registry: ToolRegistry | Iterable[Any], *, handle_tool_errors: bool = True
) -> Callable[[Any, AsyncToolCallHandler], Awaitable[Any]]:
    """The async twin of ``tool_call_wrapper``, for ``ToolNode(awrap_tool_call=...)``."""
    require("langgraph.prebuilt", _EXTRA)
    return _async_wrapper(_registry(registry), handle_tool_errors, None)


def wrap_tool_call(
    registry: ToolRegistry | Iterable[Any], *, handle_tool_errors: bool = True
) -> Callable[[Any, ToolCallHandler], Any]:
    """Deprecated alias of ``tool_call_wrapper`` (the old name is LangChain's own decorator's)."""
    warnings.warn(
        "toolrepair.integrations.langchain.wrap_tool_call is deprecated: use tool_call_wrapper",
        DeprecationWarning,
        stacklevel=2,
    )
    return tool_call_wrapper(registry, handle_tool_errors=handle_tool_errors)


def awrap_tool_call(
    registry: ToolRegistry | Iterable[Any], *, handle_tool_errors: bool = True
) -> Callable[[Any, AsyncToolCallHandler], Awaitable[Any]]:
    """Deprecated alias of ``async_tool_call_wrapper``."""
    warnings.warn(
        "toolrepair.integrations.langchain.awrap_tool_call is deprecated: use async_tool_call_wrapper",
        DeprecationWarning,
        stacklevel=2,
    )
    return async_tool_call_wrapper(registry, handle_tool_errors=handle_tool_errors)


class ToolNodeRepair:
    """The whole repair for a hand-built LangGraph graph with a ``ToolNode``, in one object.

    ``repair.message(reply)`` in the model node repairs names, recovers ``invalid_tool_calls``
    (broken JSON) and salvages text calls, so ``tools_condition`` routes them to the tools; a
    call it cannot repair or that policy refuses stays a tool call answered, never run, by the
    node that ``repair.tool_node(tools)`` builds, with the corrective message::

        repair = ToolNodeRepair(registry)
        def model(state): return {"messages": [repair.message(llm.invoke(state["messages"]))]}
        graph.add_node("tools", repair.tool_node(tools))
        graph.add_conditional_edges("model", tools_condition)
    """

    def __init__(self, registry: ToolRegistry | Iterable[Any], *, handle_tool_errors: bool = True) -> None:
        require("langgraph.prebuilt", _EXTRA)
        self.registry = _registry(registry)
        self._pending = PendingMessages()
        self.wrap_tool_call = _sync_wrapper(self.registry, handle_tool_errors, self._pending)
        self.awrap_tool_call = _async_wrapper(self.registry, handle_tool_errors, self._pending)

    def message(self, message: Any) -> Any:
        """The model's reply, repaired, with every call it holds routed to the tool node."""
        return _repair_for_agent(message, self.registry, self._pending)

    def tool_node(self, tools: Iterable[Any], **kwargs: Any) -> Any:
        """A ``ToolNode`` over ``tools`` whose dispatch goes through this repair."""
        prebuilt = require("langgraph.prebuilt", _EXTRA)
        return prebuilt.ToolNode(
            list(tools), wrap_tool_call=self.wrap_tool_call, awrap_tool_call=self.awrap_tool_call, **kwargs
        )


def _repair_for_agent(message: Any, registry: ToolRegistry, pending: PendingMessages) -> Any:
    """repair_ai_message, then turn the calls that stayed invalid into tool calls the tool node
    answers with their corrective message: otherwise the agent loop would end on them silently."""
    repaired = repair_ai_message(message, registry)
    if not repaired.invalid_tool_calls:
        return repaired
    calls = list(repaired.tool_calls)
    for itc in repaired.invalid_tool_calls:
        pending.put(itc["id"], itc.get("error") or "The tool call could not be read.")
        calls.append(_tool_call(itc.get("name") or "", {}, itc["id"]))
    return repaired.model_copy(update={"tool_calls": calls, "invalid_tool_calls": []})


def _screened_model_class() -> type:
    chat_models = require("langchain_core.language_models.chat_models", _EXTRA)
    outputs = require("langchain_core.outputs", _EXTRA)
    messages = _messages()
    pydantic = require("pydantic", _EXTRA)

    class ScreenedChatModel(chat_models.BaseChatModel):  # type: ignore[misc,name-defined]
        """A chat model around another whose streamed tokens never show call markup: text goes
        through the registry's ``StreamSalvager`` and a call written as text arrives as a tool-call
        chunk instead (the middleware then repairs and vets it like any native call)."""

        model_config = pydantic.ConfigDict(arbitrary_types_allowed=True)
        inner: Any
        registry: Any

        @property
        def _llm_type(self) -> str:
            return "toolrepair-screened"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.model_copy(update={"inner": self.inner.bind_tools(tools, **kwargs)})

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            # The inner model runs without callbacks: its tokens would bypass the screen.
            message = self.inner.invoke(messages, config={"callbacks": []}, stop=stop, **kwargs)
            return outputs.ChatResult(generations=[outputs.ChatGeneration(message=message)])

        def _screen(self, screen: Any, chunk: Any, count: list[int]) -> list[Any]:
            out: list[Any] = []
            content = chunk.content if isinstance(chunk.content, str) else ""
            events = screen.feed(content) if content else []
            # A chunk with calls, blocks or fields of its own (a server's reasoning_content) goes
            # on, its text taken out: the text comes through the screen.
            if chunk.tool_call_chunks or chunk.additional_kwargs or not isinstance(chunk.content, str):
                out.append(chunk.model_copy(update={"content": "" if content else chunk.content}))
            out += self._events(events, chunk, count)
            return out

        def _events(self, events: list[Any], template: Any, count: list[int]) -> list[Any]:
            out: list[Any] = []
            for event in events:
                call = getattr(event, "call", None)
                if isinstance(event, ReasoningDelta):
                    # Reasoning read from the text: where whole replies put it (chunks merge
                    # additional_kwargs strings by concatenation).
                    kwargs = {"reasoning_content": event.text}
                    out.append(messages.AIMessageChunk(content="", additional_kwargs=kwargs, id=template.id))
                    continue
                if call is None:
                    out.append(messages.AIMessageChunk(content=event.text, id=template.id))
                    continue
                key = json.dumps([call.name, call.arguments, call.span], ensure_ascii=False, default=str)
                ident = stable_id("call_", key, count[0])
                out.append(
                    messages.AIMessageChunk(
                        content="",
                        id=template.id,
                        tool_call_chunks=[
                            {
                                "name": call.name,
                                "args": json.dumps(call.arguments, ensure_ascii=False),
                                "id": ident,
                                "index": 1000 + count[0],
                                "type": "tool_call_chunk",
                            }
                        ],
                    )
                )
                count[0] += 1
            return out

        def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            screen, count, last = self.registry.stream(), [0], None
            for chunk in self.inner.stream(messages, config={"callbacks": []}, stop=stop, **kwargs):
                last = chunk
                for piece in self._screen(screen, chunk, count):
                    yield self._emit(piece, run_manager)
            if last is not None:
                for piece in self._events(screen.close(), last, count):
                    yield self._emit(piece, run_manager)

        async def _astream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            screen, count, last = self.registry.stream(), [0], None
            async for chunk in self.inner.astream(messages, config={"callbacks": []}, stop=stop, **kwargs):
                last = chunk
                for piece in self._screen(screen, chunk, count):
                    yield await self._aemit(piece, run_manager)
            if last is not None:
                for piece in self._events(screen.close(), last, count):
                    yield await self._aemit(piece, run_manager)

        @staticmethod
        def _emit(piece: Any, run_manager: Any) -> Any:
            generation = outputs.ChatGenerationChunk(message=piece)
            if run_manager is not None:
                run_manager.on_llm_new_token(piece.content if isinstance(piece.content, str) else "", chunk=generation)
            return generation

        @staticmethod
        async def _aemit(piece: Any, run_manager: Any) -> Any:
            generation = outputs.ChatGenerationChunk(message=piece)
            if run_manager is not None:
                await run_manager.on_llm_new_token(
                    piece.content if isinstance(piece.content, str) else "", chunk=generation
                )
            return generation

    ScreenedChatModel.__module__ = __name__
    ScreenedChatModel.__qualname__ = "ScreenedChatModel"
    return ScreenedChatModel


def _middleware_class() -> type:
    middleware = require("langchain.agents.middleware", _EXTRA)
    ai_message = _messages().AIMessage

    class ToolRepairMiddleware(middleware.AgentMiddleware):  # type: ignore[misc,name-defined]
        """``create_agent`` middleware: repairs and salvages each model reply (``wrap_model_call``)
        and repairs each tool call's dispatch (``wrap_tool_call``), answering unknown names, bad
        arguments and tool errors with toolrepair's corrective ``ToolMessage``.

        >>> agent = create_agent(model, tools, middleware=[ToolRepairMiddleware(tools)])  # doctest: +SKIP
        """

        def __init__(self, registry: ToolRegistry | Iterable[Any], *, handle_tool_errors: bool = True) -> None:
            super().__init__()
            self.registry = _registry(registry)
            self._pending = PendingMessages()
            self._wrap = _sync_wrapper(self.registry, handle_tool_errors, self._pending)
            self._awrap = _async_wrapper(self.registry, handle_tool_errors, self._pending)

        def _repair_response(self, response: Any) -> Any:
            if isinstance(response, ai_message):
                return _repair_for_agent(response, self.registry, self._pending)
            result = getattr(response, "result", None)
            if not isinstance(result, list) or not dataclasses.is_dataclass(response) or isinstance(response, type):
                return response
            fixed = [
                _repair_for_agent(m, self.registry, self._pending) if isinstance(m, ai_message) else m for m in result
            ]
            return dataclasses.replace(response, result=fixed)

        def _screened(self, request: Any) -> Any:
            # Token streaming (stream_mode="messages") shows what the model's run emits: screen it.
            screened = __getattr__("ScreenedChatModel")(inner=request.model, registry=self.registry)
            return request.override(model=screened)

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return self._repair_response(handler(self._screened(request)))

        async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
            return self._repair_response(await handler(self._screened(request)))

        def wrap_tool_call(self, request: Any, handler: ToolCallHandler) -> Any:
            return self._wrap(request, handler)

        async def awrap_tool_call(self, request: Any, handler: AsyncToolCallHandler) -> Any:
            return await self._awrap(request, handler)

    ToolRepairMiddleware.__module__ = __name__
    ToolRepairMiddleware.__qualname__ = "ToolRepairMiddleware"
    return ToolRepairMiddleware


# ToolRepairMiddleware subclasses LangChain's AgentMiddleware, so it is built on first use: importing this module
# must not import the framework.
__getattr__ = lazy_classes(
    __name__, {"ToolRepairMiddleware": _middleware_class, "ScreenedChatModel": _screened_model_class}
)
