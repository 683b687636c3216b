"""toolrepair.integrations.llamaindex against real LlamaIndex: a FunctionAgent workflow with a scripted LLM."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import toolrepair as tr
from toolrepair.integrations.llamaindex import repair_tool_selections, wrap_llm

pytest.importorskip("llama_index.core")

# LlamaIndex's workflow runtime lists a running agent's members with inspect.getmembers, which
# touches pydantic's deprecated instance attributes (`__fields__`, ...): its warnings, not ours.
pytestmark = pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")
from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult  # noqa: E402
from llama_index.core.base.llms.types import ChatResponse, TextBlock, ToolCallBlock  # noqa: E402
from llama_index.core.llms import ChatMessage  # noqa: E402
from llama_index.core.llms.mock import MockFunctionCallingLLM  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402


def web_search(query: str, limit: int = 3) -> str:
    """Search the web."""
    return f"{limit} results for {query}"


async def read_file(path: str) -> str:
    """Read a file."""
    raise FileNotFoundError(f"No such file: {path}")


TOOLS = [FunctionTool.from_defaults(web_search), FunctionTool.from_defaults(async_fn=read_file)]


def _calls(*calls: tuple[str, str, Any]) -> ChatMessage:
    return ChatMessage(
        role="assistant", blocks=[ToolCallBlock(tool_call_id=i, tool_name=n, tool_kwargs=a) for i, n, a in calls]
    )


def _scripted(script: list[ChatMessage]) -> MockFunctionCallingLLM:
    replies = iter(script)
    return MockFunctionCallingLLM(response_generator=lambda messages, **kwargs: next(replies))


async def _run(agent: FunctionAgent) -> tuple[dict[str, Any], str]:
    handler = agent.run(user_msg="find cats")
    results = {}
    async for event in handler.stream_events():
        if isinstance(event, ToolCallResult):
            results[event.tool_id] = event
    return results, str(await handler)


def test_registry_takes_function_tools() -> None:
    registry = tr.ToolRegistry(TOOLS)
    assert registry.names == ["web_search", "read_file"]
    assert registry.info("web_search").expected == {"required": ["query"], "optional": ["limit"]}
    assert registry.execute("WebSearch", '{"query": "x", "limit": "2"}') == "2 results for x"
    assert asyncio.run(registry.aexecute("web_search", {"query": "y"})) == "3 results for y"
    assert registry.run({"name": "read_file", "arguments": {"path": "/p"}}).content == "No such file: /p"


def test_repair_tool_selections_repairs_where_llamaindex_gives_empty_arguments() -> None:
    registry = tr.ToolRegistry(TOOLS)
    response = ChatResponse(message=_calls(("c1", "WebSearch", "{'query': 'cats', 'limit': '5',}")))
    [plain] = _scripted([]).get_tool_calls_from_response(response)
    assert plain.tool_kwargs == {}  # what LlamaIndex makes of it on its own
    [selection] = repair_tool_selections(response, registry)
    assert (selection.tool_id, selection.tool_name, selection.tool_kwargs) == (
        "c1",
        "web_search",
        {"query": "cats", "limit": 5},
    )
    block = response.message.blocks[0]  # the conversation records the call that ran
    assert (block.tool_name, block.tool_kwargs) == ("web_search", {"query": "cats", "limit": 5})


def test_repair_tool_selections_salvages_text(hermes: Callable[[str, str], str]) -> None:
    text = "Let me look. " + hermes("web_search", '{"query": "otters"}')
    response = ChatResponse(message=ChatMessage(role="assistant", content=text))
    [selection] = repair_tool_selections(response, tr.ToolRegistry(TOOLS))
    assert selection.tool_name == "web_search" and selection.tool_id.startswith("call_")
    text_block, call_block = response.message.blocks
    assert isinstance(text_block, TextBlock) and text_block.text == "Let me look. "
    assert isinstance(call_block, ToolCallBlock) and call_block.tool_call_id == selection.tool_id


def _script(hermes: Callable[[str, str], str]) -> list[ChatMessage]:
    return [
        _calls(
            ("c_drift", "WebSearch", '{"query": "cats", "limit": "5",}'),
            ("c_unknown", "web_serch_v2", '{"query": "cats"}'),
            ("c_bad", "web_search", '{"query": "cats", "limit": "many"}'),
            ("c_fail", "read_file", {"path": "/nope"}),
        ),
        ChatMessage(role="assistant", content="One more. " + hermes("Web_Search", '{"query": "dogs"}')),
        ChatMessage(role="assistant", content="Cats and dogs, found."),
    ]


def test_tool_repair_agent_end_to_end(hermes: Callable[[str, str], str]) -> None:
    from toolrepair.integrations.llamaindex import ToolRepairAgent

    agent = ToolRepairAgent(tools=TOOLS, llm=_scripted(_script(hermes)), streaming=False)
    assert isinstance(agent, FunctionAgent)
    results, final = asyncio.run(_run(agent))
    content = {k: (str(v.tool_output.content), v.tool_output.is_error) for k, v in results.items()}
    assert content["c_drift"] == ("5 results for cats", False)
    assert results["c_drift"].tool_name == "web_search"
    assert content["c_unknown"] == (
        "Tool 'web_serch_v2' not found. Did you mean 'web_search'? Available tools: ['read_file', 'web_search']",
        True,
    )
    assert content["c_bad"][1] and "Expected parameters for 'web_search'" in content["c_bad"][0]
    assert content["c_fail"] == ("No such file: /nope", True)
    [salvaged] = [k for k in results if k.startswith("call_")]
    assert content[salvaged] == ("3 results for dogs", False)
    assert final == "Cats and dogs, found."


def test_wrap_llm_in_a_plain_function_agent(hermes: Callable[[str, str], str]) -> None:
    llm = _scripted(_script(hermes))
    agent = FunctionAgent(tools=TOOLS, llm=wrap_llm(llm, TOOLS))
    results, final = asyncio.run(_run(agent))
    assert str(results["c_drift"].tool_output.content) == "5 results for cats"
    assert any(str(r.tool_output.content) == "3 results for dogs" for r in results.values())
    # Without ToolRepairAgent nothing can answer a refused call: it never reaches the executor.
    assert "c_unknown" not in results and "c_bad" not in results
    assert final == "Cats and dogs, found."


RAN: list[str] = []


def delete_file(path: str) -> str:
    """Delete a file."""
    RAN.append(path)
    return "deleted"


def _denied_script(hermes: Callable[[str, str], str]) -> list[ChatMessage]:
    return [
        _calls(("c_native", "DeleteFile", '{"path": "/a"}'), ("c_ok", "web_search", '{"query": "x"}')),
        ChatMessage(role="assistant", content="Cleaning up. " + hermes("delete_file", '{"path": "/b"}')),
        ChatMessage(role="assistant", content="I may not delete files."),
    ]


POLICIES = [
    {"deny": ["delete_file"]},
    {"allow": ["web_search", "read_file"]},
    {"before_call": lambda call: call.name != "delete_file"},
]


@pytest.mark.parametrize("policy", POLICIES)
def test_a_plain_function_agent_never_runs_a_denied_call(policy: dict, hermes: Callable[[str, str], str]) -> None:
    RAN.clear()
    tools = [*TOOLS, FunctionTool.from_defaults(delete_file)]
    registry = tr.ToolRegistry(tools, **policy)
    errors: list[tuple[str, str]] = []
    agent = FunctionAgent(
        tools=tools,
        llm=wrap_llm(_scripted(_denied_script(hermes)), registry, on_error=lambda i, m: errors.append((i, m))),
    )
    results, final = asyncio.run(_run(agent))
    assert RAN == []
    assert list(results) == ["c_ok"]
    assert errors[0][0] == "c_native" and errors[0][1].startswith("Tool 'delete_file' ")
    # The reply whose only call was refused ends the run with the refusal as its text.
    assert final.endswith(errors[1][1]) and final.startswith("Cleaning up.")


def test_tool_repair_agent_answers_a_denied_call_with_the_refusal(hermes: Callable[[str, str], str]) -> None:
    from toolrepair.integrations.llamaindex import ToolRepairAgent

    RAN.clear()
    tools = [*TOOLS, FunctionTool.from_defaults(delete_file)]
    registry = tr.ToolRegistry(tools, deny=["delete_file"])
    agent = ToolRepairAgent(tools=tools, llm=_scripted(_denied_script(hermes)), registry=registry, streaming=False)
    results, final = asyncio.run(_run(agent))
    assert RAN == []
    refusals = [(k, str(v.tool_output.content)) for k, v in results.items() if v.tool_output.is_error]
    assert [m for _, m in refusals] == ["Tool 'delete_file' is not allowed."] * 2
    assert refusals[0][0] == "c_native" and str(results["c_ok"].tool_output.content) == "3 results for x"
    assert final == "I may not delete files."


# -- calls kept in additional_kwargs (LLM classes that do not use ToolCallBlocks) --------------
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            [{"id": "c1", "type": "function", "function": {"name": "WebSearch", "arguments": "{'query': 'a',}"}}],
            [("c1", "web_search", {"query": "a"})],
        ),
        (
            [{"id": "c2", "name": "web_search", "input": {"query": "b", "limit": "2"}}],
            [("c2", "web_search", {"query": "b", "limit": 2})],
        ),
        (
            [{"tool_id": "c3", "tool_name": "Web-Search", "tool_kwargs": {"query": "c"}}],
            [("c3", "web_search", {"query": "c"})],
        ),
        ([{"id": "c4", "type": "function", "function": {"name": "delete_file", "arguments": "{}"}}], []),
        ([{"something": "else"}], []),
        (["not a call"], []),
    ],
)
def test_calls_kept_in_additional_kwargs(raw: list, expected: list) -> None:
    from llama_index.core.llms.llm import ToolSelection

    raw = [ToolSelection.model_validate(r) if isinstance(r, dict) and "tool_name" in r else r for r in raw]
    tools = [*TOOLS, FunctionTool.from_defaults(delete_file)]
    response = ChatResponse(message=ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": raw}))
    got = repair_tool_selections(response, tr.ToolRegistry(tools, deny=["delete_file"]))
    assert [(s.tool_id, s.tool_name, s.tool_kwargs) for s in got] == expected


def test_wrap_llm_with_nothing_to_call() -> None:
    llm = wrap_llm(_scripted([]), TOOLS)
    empty = ChatResponse(message=ChatMessage(role="assistant", content=""))
    assert llm.get_tool_calls_from_response(empty) == []
    with pytest.raises(ValueError, match="Expected at least one tool call"):
        llm.get_tool_calls_from_response(empty, error_on_no_tool_call=True)
    words = ChatResponse(message=ChatMessage(role="assistant", content="Just words."))
    assert llm.get_tool_calls_from_response(words) == []
