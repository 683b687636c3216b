"""Adapters between toolrepair and agent frameworks: one module per framework.

Each module imports its framework only inside the functions that need it, so importing
``toolrepair.integrations.langchain`` never requires LangChain; calling a function that does
raises an ImportError naming the extra to install (``pip install 'toolrepair[langchain]'``).

- ``openai``: Chat Completions messages and Responses API items.
- ``anthropic``: Messages API ``tool_use`` / ``tool_result`` blocks.
- ``langchain``: ``AIMessage`` repair, LangGraph ``ToolNode`` pieces, a ``create_agent`` middleware.
- ``llamaindex``: repair and salvage in front of ``FunctionAgent``'s tool dispatch.
- ``mcp``: an MCP session's tools as ``ToolSpec``s.
- ``litellm``: ``ModelResponse`` and stream repair, and a proxy ``CustomLogger``.
- ``pydantic_ai``: a ``ToolRepair`` capability for ``Agent``.
- ``openai_agents``: a ``Model`` wrapper and a ``tool_error_formatter`` for ``Runner``.
- ``google_adk``: a ``ToolRepairPlugin`` (``BasePlugin``) for ADK runners.
- ``smolagents``: a ``ToolRepairModel`` for ``ToolCallingAgent``.

Every integration applies the registry's policy to each call it creates or repairs, through
``_common.vet``: no framework executor ever receives a call the policy refuses.
"""

from __future__ import annotations

__all__: tuple[str, ...] = ()
