"""LlamaIndex: repair and salvage in front of ``FunctionAgent``'s tool dispatch.

``ToolRegistry`` takes LlamaIndex ``FunctionTool`` / ``BaseTool`` objects directly (name and
schema from ``metadata``). ``FunctionAgent`` reads calls with the LLM's
``get_tool_calls_from_response``, which turns arguments it cannot parse into ``{}`` without a
word; two ways to put toolrepair there instead:

- ``wrap_llm(llm, registry)``: a copy of the LLM whose ``get_tool_calls_from_response``
  repairs names and arguments and salvages calls written as text, for any agent;
- ``ToolRepairAgent(tools=..., llm=...)``: a ``FunctionAgent`` that does that and also answers
  unknown names and bad arguments with toolrepair's corrective message.

Nothing here imports LlamaIndex until it is used; without it a clear ImportError names the extra.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._callshape import read_call_shape
from .._registry import ToolRegistry
from ._common import PendingMessages, Vetted, lazy_classes, require, stable_id, vet, vet_text

# ToolRepairAgent is built on first access (module __getattr__, below).
__all__ = ["ToolRepairAgent", "repair_tool_selections", "wrap_llm"]  # noqa: F822

_EXTRA = "llamaindex"

Pending = Callable[[str, str], None]


def _raw_calls(response: Any) -> list[tuple[str | None, str, Any, Any]] | None:
    """(id, name, raw arguments, the block to update) for each call in the reply, before the
    LLM class parses (and possibly blanks) the arguments; None when the reply keeps its calls
    somewhere this does not know."""
    message = response.message
    blocks = [b for b in getattr(message, "blocks", None) or [] if getattr(b, "block_type", None) == "tool_call"]
    if blocks:
        return [(b.tool_call_id, b.tool_name, b.tool_kwargs, b) for b in blocks]
    raw = (getattr(message, "additional_kwargs", None) or {}).get("tool_calls")
    if not raw:
        return []
    out: list[tuple[str | None, str, Any, Any]] = []
    for item in raw:
        data = item.model_dump() if hasattr(item, "model_dump") else item
        if not isinstance(data, dict):
            return None
        # ToolSelection, OpenAI's {"function": {...}}, Anthropic's {"name", "input"}: one table.
        shape = read_call_shape(data)
        if shape.name is None and not isinstance(data.get("function"), dict):
            return None
        out.append((shape.id, shape.name or "", shape.arguments, None))
    return out


def _text_of(message: Any) -> str:
    blocks = getattr(message, "blocks", None) or []
    return "".join(b.text for b in blocks if getattr(b, "block_type", None) == "text")


def repair_tool_selections(
    response: Any, registry: ToolRegistry, *, on_error: Pending | None = None, keep_refused: bool = False
) -> list[Any]:
    """The ``ToolSelection``s to run for a ``ChatResponse``, repaired, or salvaged from its text.

    Native calls get the offered name and repaired arguments (their ``ToolCallBlock`` is
    updated to match, so the conversation records what ran). With none, calls written as text
    are salvaged: the message's text loses them and gains ``ToolCallBlock``s with ``call_…``
    ids derived from the text. A call that cannot be repaired, or that the registry's policy
    refuses, is never handed to the agent's executor: ``on_error(tool_id, message)`` receives
    the corrective message, its block leaves the message and the message is added as text.
    ``keep_refused=True`` returns such calls as written instead, for an agent that answers them
    with that message and never runs them (``ToolRepairAgent`` does).
    """
    llms = require("llama_index.core.llms.llm", _EXTRA)
    types = require("llama_index.core.base.llms.types", _EXTRA)
    raw = _raw_calls(response)
    if raw is None:
        return []
    message = response.message
    vetted_calls = _vet_native(raw, registry) if raw else _vet_salvaged(message, registry, types)
    selections: list[Any] = []
    dropped: list[Any] = []
    for vetted, block in vetted_calls:
        call = vetted.call
        if vetted.error is None and block is not None:
            block.tool_call_id, block.tool_name, block.tool_kwargs = call.id, call.name, call.arguments
        if vetted.error is not None:
            if on_error is not None:
                on_error(str(call.id), vetted.message)
            if not keep_refused:
                dropped.append((block, vetted.message))
                continue
        selections.append(llms.ToolSelection(tool_id=call.id, tool_name=call.name, tool_kwargs=call.arguments))
    if dropped:
        gone = {id(block) for block, _ in dropped}
        message.blocks = [b for b in message.blocks if id(b) not in gone]
        message.blocks.append(types.TextBlock(text="\n".join(text for _, text in dropped)))
    return selections


def _vet_native(raw: list[tuple[str | None, str, Any, Any]], registry: ToolRegistry) -> list[tuple[Vetted, Any]]:
    """Each native call vetted, with its block; a call without an id gets one from its content."""
    vetted_calls: list[tuple[Vetted, Any]] = []
    for i, (ident, name, arguments, block) in enumerate(raw):
        tool_id = ident or stable_id("call_", f"{name}\x00{arguments!r}", i)
        vetted_calls.append((vet(registry, (name, arguments, tool_id)), block))
    return vetted_calls


def _vet_salvaged(message: Any, registry: ToolRegistry, types: Any) -> list[tuple[Vetted, Any]]:
    """The calls salvaged from the message's text, each with the ``ToolCallBlock`` now in the
    message in its place (the text blocks become one, without the calls)."""
    text = _text_of(message)
    if not text:
        return []
    # Refused candidates too: a text call to a tool never offered is a refused call, which
    # ToolRepairAgent answers (a plain agent never receives it), instead of ending on its markup.
    vetted_text = vet_text(registry, text, "call_", answer_rejected=True)
    if not vetted_text.calls:
        return []
    kept = [b for b in message.blocks if getattr(b, "block_type", None) != "text"]
    new_blocks: list[Any] = [types.TextBlock(text=vetted_text.content)] if vetted_text.content else []
    vetted_calls: list[tuple[Vetted, Any]] = []
    for vetted in vetted_text.calls:
        block = types.ToolCallBlock(
            tool_call_id=vetted.call.id, tool_name=vetted.call.name, tool_kwargs=vetted.call.arguments
        )
        new_blocks.append(block)
        vetted_calls.append((vetted, block))
    message.blocks = new_blocks + kept
    return vetted_calls


def wrap_llm(
    llm: Any, registry: ToolRegistry | Iterable[Any], *, on_error: Pending | None = None, keep_refused: bool = False
) -> Any:
    """A copy of ``llm`` whose ``get_tool_calls_from_response`` goes through ``repair_tool_selections``
    (``on_error`` and ``keep_refused`` are passed on: a plain agent never receives a refused call).

    >>> agent = FunctionAgent(tools=tools, llm=wrap_llm(llm, tools))   # doctest: +SKIP
    """
    require("llama_index.core.llms", _EXTRA)
    reg = registry if isinstance(registry, ToolRegistry) else ToolRegistry(registry)
    copy = llm.model_copy() if hasattr(llm, "model_copy") else llm

    def get_tool_calls_from_response(response: Any, error_on_no_tool_call: bool = False, **kwargs: Any) -> Any:
        selections = repair_tool_selections(response, reg, on_error=on_error, keep_refused=keep_refused)
        if not selections and error_on_no_tool_call:
            raise ValueError("Expected at least one tool call, but got 0 tool calls.")
        return selections

    # LLMs are pydantic models that refuse unknown attributes; an instance attribute set this
    # way shadows the class method for this copy only.
    object.__setattr__(copy, "get_tool_calls_from_response", get_tool_calls_from_response)
    return copy


def _agent_class() -> type:
    workflow = require("llama_index.core.agent.workflow", _EXTRA)
    decorators = require("llama_index.core.workflow", _EXTRA)
    tools_mod = require("llama_index.core.tools", _EXTRA)
    pydantic = require("llama_index.core.bridge.pydantic", _EXTRA)

    async def _call_tool(self: Any, ctx: Any, ev: Any) -> Any:
        message = self._toolrepair_pending.pop(ev.tool_id)
        if message is None:
            # The dispatch: counted for max_repeats once with the vetting of the reply.
            vetted = vet(self._toolrepair_registry, (ev.tool_name, ev.tool_kwargs, ev.tool_id), dispatch=True)
            if vetted.error is None:
                return await workflow.FunctionAgent.call_tool(self, ctx, ev)
            message = vetted.message
        ctx.write_event_to_stream(
            workflow.ToolCall(tool_name=ev.tool_name, tool_kwargs=ev.tool_kwargs, tool_id=ev.tool_id)
        )
        output = tools_mod.ToolOutput(
            content=message, tool_name=ev.tool_name, raw_input=ev.tool_kwargs, raw_output=None, is_error=True
        )
        result = workflow.ToolCallResult(
            tool_name=ev.tool_name,
            tool_kwargs=ev.tool_kwargs,
            tool_id=ev.tool_id,
            tool_output=output,
            return_direct=False,
        )
        ctx.write_event_to_stream(result)
        return result

    # The workflow routes events by the step's annotations, read at decoration time: give it
    # the classes themselves (this module's annotations are strings).
    _call_tool.__annotations__ = {"ctx": decorators.Context, "ev": workflow.ToolCall, "return": workflow.ToolCallResult}
    _call_tool.__name__ = "call_tool"
    _call_tool.__qualname__ = "ToolRepairAgent.call_tool"  # a method, not a free step

    class ToolRepairAgent(workflow.FunctionAgent):  # type: ignore[misc,name-defined]
        """A ``FunctionAgent`` with toolrepair in front of its tool dispatch.

        Pass ``registry=`` (a ``ToolRegistry``), or let it build one from ``tools``. Drifted
        names and broken arguments are repaired, calls written as text are salvaged, and
        unknown names and bad arguments are answered with toolrepair's corrective message
        (tool errors already come back as the tool's own message).
        """

        _toolrepair_pending: Any = pydantic.PrivateAttr(default=None)
        _toolrepair_registry: Any = pydantic.PrivateAttr(default=None)

        def __init__(self, *args: Any, registry: ToolRegistry | None = None, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            reg = registry if registry is not None else ToolRegistry(self.tools or [])
            pending = PendingMessages()
            self._toolrepair_registry = reg
            self._toolrepair_pending = pending
            self.llm = wrap_llm(self.llm, reg, on_error=pending.put, keep_refused=True)  # type: ignore[has-type]

        call_tool = decorators.step(_call_tool)

        @property
        def registry(self) -> ToolRegistry:
            registry: ToolRegistry = self._toolrepair_registry
            return registry

    ToolRepairAgent.__module__ = __name__
    ToolRepairAgent.__qualname__ = "ToolRepairAgent"
    return ToolRepairAgent


# ToolRepairAgent subclasses LlamaIndex's FunctionAgent, so it is built on first use: importing this module
# must not import the framework.
__getattr__ = lazy_classes(__name__, {"ToolRepairAgent": _agent_class})
