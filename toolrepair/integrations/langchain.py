"""LangChain / LangGraph: repair ``AIMessage``s, wrap ``ToolNode`` dispatch, and a ``create_agent`` middleware.

``ToolRegistry`` takes LangChain ``BaseTool``s directly (their ``tool_call_schema`` is the
schema). Three ways in, from smallest to largest:

- ``repair_ai_message(message, registry)``: names fixed, arguments repaired, broken
  ``invalid_tool_calls`` recovered, calls written as text salvaged from ``content``;
- ``ToolNode(tools, wrap_tool_call=wrap_tool_call(registry), awrap_tool_call=awrap_tool_call(registry))``:
  drifted names reach the right tool, and unknown names, bad arguments and tool errors are
  answered with toolrepair's corrective ``ToolMessage`` (``status="error"``);
- ``create_agent(model, tools, middleware=[ToolRepairMiddleware(registry)])``: both.

Nothing here imports LangChain until it is used; without it a clear ImportError names the extra.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .._registry import ToolRegistry
from ._common import PendingMessages, lazy_classes, require, stable_id

# ToolRepairMiddleware is built on first access (module __getattr__, below).
__all__ = ["ToolRepairMiddleware", "awrap_tool_call", "repair_ai_message", "wrap_tool_call"]  # noqa: F822

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

    ``tool_calls`` get the offered name and repaired arguments, ids kept; one that cannot be
    repaired is kept as it is, for the tool node to answer (``wrap_tool_call`` does so with
    the corrective message). ``invalid_tool_calls`` whose arguments can be repaired become
    ``tool_calls``; the rest stay, with toolrepair's message as their ``error``. With neither,
    calls written as text in ``content`` are salvaged (content cut, ids ``call_…`` derived
    from the text).
    """
    _messages()  # fail early, naming the extra, when LangChain is missing
    native = list(message.tool_calls or [])
    invalid = list(message.invalid_tool_calls or [])
    calls: list[Any] = []
    still_invalid: list[Any] = []
    update: dict[str, Any] = {}
    for tc in native:
        repair = registry.repair({"name": tc["name"], "arguments": tc["args"], "id": tc.get("id")})
        if repair.call is None:
            calls.append(tc)
        else:
            calls.append(_tool_call(repair.call.name, repair.call.arguments, tc.get("id")))
    for i, itc in enumerate(invalid):
        ident = itc.get("id") or stable_id("call_", str(itc.get("args")), i)
        repair = registry.repair({"name": itc.get("name") or "", "arguments": itc.get("args"), "id": ident})
        if repair.call is None:
            still_invalid.append({"name": itc.get("name"), "args": itc.get("args"), "id": ident,
                                  "error": str(repair.error), "type": "invalid_tool_call"})
        else:
            calls.append(_tool_call(repair.call.name, repair.call.arguments, ident))
    if not native and not invalid:
        content, salvaged = _salvage_content(message.content, registry)
        if salvaged:
            update["content"] = content
            for call in salvaged:
                repair = registry.repair(call)
                fixed = repair.call or call  # unrepairable: kept for the tool node to answer
                calls.append(_tool_call(fixed.name, fixed.arguments, call.id))
    if not calls and not invalid:
        return message
    update["tool_calls"] = calls
    update["invalid_tool_calls"] = still_invalid
    if "tool_calls" in (message.additional_kwargs or {}):
        # The provider's raw calls would now disagree with tool_calls: drop them.
        update["additional_kwargs"] = {k: v for k, v in message.additional_kwargs.items() if k != "tool_calls"}
    return message.model_copy(update=update)


def _salvage_content(content: Any, registry: ToolRegistry) -> tuple[Any, list[Any]]:
    """(content without the text calls, the calls with stable ids) for str or block-list content."""
    from .._types import ToolCall

    calls: list[ToolCall] = []

    def salvage(text: str) -> str:
        result = registry.salvage(text)
        for i, call in enumerate(result.calls):
            calls.append(ToolCall(call.name, call.arguments, stable_id("call_", text, i), call.dialect, call.span))
        return result.content.strip() if result.calls else text

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
    return _messages().ToolMessage(content=text, name=call.get("name"), tool_call_id=call.get("id"),
                                   status="error")


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
    repair = registry.repair({"name": call.get("name") or "", "arguments": call.get("args"), "id": call.get("id")})
    if repair.call is None:
        return None, _error_message(call, str(repair.error))
    fixed = repair.call
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


def _sync_wrapper(registry: ToolRegistry, handle_tool_errors: bool,
                  pending: PendingMessages | None) -> Callable[[Any, ToolCallHandler], Any]:
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


def _async_wrapper(registry: ToolRegistry, handle_tool_errors: bool,
                   pending: PendingMessages | None) -> Callable[[Any, AsyncToolCallHandler], Awaitable[Any]]:
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


def wrap_tool_call(registry: ToolRegistry | Iterable[Any], *,
                   handle_tool_errors: bool = True) -> Callable[[Any, ToolCallHandler], Any]:
    """A ``wrap_tool_call`` for ``langgraph.prebuilt.ToolNode``: ``(request, execute) -> ToolMessage``.

    Drifted names and repairable arguments are fixed before ``execute``; unknown names and
    bad arguments get toolrepair's corrective ``ToolMessage`` (``status="error"``) without
    running anything; an exception from the tool becomes a ``ToolMessage`` with its own
    message unless ``handle_tool_errors=False``.
    """
    require("langgraph.prebuilt", _EXTRA)
    return _sync_wrapper(_registry(registry), handle_tool_errors, None)


def awrap_tool_call(registry: ToolRegistry | Iterable[Any], *,
                    handle_tool_errors: bool = True) -> Callable[[Any, AsyncToolCallHandler], Awaitable[Any]]:
    """The async twin of ``wrap_tool_call``, for ``ToolNode(awrap_tool_call=...)``."""
    require("langgraph.prebuilt", _EXTRA)
    return _async_wrapper(_registry(registry), handle_tool_errors, None)




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
            fixed = [_repair_for_agent(m, self.registry, self._pending) if isinstance(m, ai_message) else m
                     for m in result]
            return dataclasses.replace(response, result=fixed)

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return self._repair_response(handler(request))

        async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
            return self._repair_response(await handler(request))

        def wrap_tool_call(self, request: Any, handler: ToolCallHandler) -> Any:
            return self._wrap(request, handler)

        async def awrap_tool_call(self, request: Any, handler: AsyncToolCallHandler) -> Any:
            return await self._awrap(request, handler)

    ToolRepairMiddleware.__module__ = __name__
    ToolRepairMiddleware.__qualname__ = "ToolRepairMiddleware"
    return ToolRepairMiddleware


# ToolRepairMiddleware subclasses LangChain's AgentMiddleware, so it is built on first use: importing this module
# must not import the framework.
__getattr__ = lazy_classes(__name__, {"ToolRepairMiddleware": _middleware_class})
