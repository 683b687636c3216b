"""toolrepair.integrations.langchain against real LangChain / LangGraph: a ToolNode graph and create_agent."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest

import toolrepair as tr
from toolrepair.integrations.langchain import (
    ToolNodeRepair,
    async_tool_call_wrapper,
    repair_ai_message,
    tool_call_wrapper,
)

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph.prebuilt")
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def web_search(query: str, limit: int = 3) -> str:
    """Search the web."""
    return f"{limit} results for {query}"


@tool
def read_file(path: str) -> str:
    """Read a file."""
    raise FileNotFoundError(f"No such file: {path}")


@tool
def take_note(text: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Take a note."""
    return f"noted {text!r} in {tool_call_id}"


TOOLS = [web_search, read_file, take_note]


@pytest.fixture
def lc_registry() -> tr.ToolRegistry:
    return tr.ToolRegistry(TOOLS)


def _call(name: str, args: dict[str, Any], ident: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": ident, "type": "tool_call"}


# One reply covering the four dispatch cases: drift, unknown name, bad arguments, tool error.
MIXED = [
    _call("WebSearch", {"query": "cats", "limit": "5"}, "c_drift"),
    _call("web_serch_v2", {"query": "cats"}, "c_unknown"),
    _call("web_search", {"query": "cats", "limit": "many"}, "c_bad"),
    _call("read_file", {"path": "/nope"}, "c_fail"),
]


def _check_mixed(messages: list[Any]) -> None:
    by_id = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert by_id["c_drift"].content == "5 results for cats" and by_id["c_drift"].status == "success"
    assert by_id["c_drift"].name == "web_search"
    unknown = by_id["c_unknown"]
    assert unknown.status == "error"
    assert unknown.content == (
        "Tool 'web_serch_v2' not found. Did you mean 'web_search'? "
        "Available tools: ['read_file', 'take_note', 'web_search']"
    )
    assert by_id["c_bad"].status == "error" and "limit" in by_id["c_bad"].content
    assert "Expected parameters for 'web_search'" in by_id["c_bad"].content
    assert by_id["c_fail"].status == "error" and by_id["c_fail"].content == "No such file: /nope"


# -- BaseTools in a registry ------------------------------------------------------------------
def test_registry_takes_base_tools_with_their_schema(lc_registry: tr.ToolRegistry) -> None:
    assert lc_registry.names == ["web_search", "read_file", "take_note"]
    assert lc_registry.info("web_search").expected == {"required": ["query"], "optional": ["limit"]}
    # Injected arguments are not the model's to give: tool_call_schema leaves them out.
    assert lc_registry.info("take_note").expected == {"required": ["text"], "optional": []}
    assert lc_registry.execute("WebSearch", '{"query": "x", "limit": "2"}') == "2 results for x"
    assert lc_registry.run({"name": "read_file", "arguments": {"path": "/p"}}).content == "No such file: /p"


# -- repair_ai_message ------------------------------------------------------------------------
def test_repair_ai_message_fixes_names_and_arguments(lc_registry: tr.ToolRegistry) -> None:
    message = AIMessage(
        content="", tool_calls=[_call("WebSearch", {"query": "cats", "limit": "5"}, "c1"), _call("nope", {}, "c2")]
    )
    fixed = repair_ai_message(message, lc_registry)
    assert fixed.tool_calls == [_call("web_search", {"query": "cats", "limit": 5}, "c1")]
    # Never a tool_call a plain ToolNode would run: an invalid one, with the corrective message.
    assert fixed.invalid_tool_calls == [
        {
            "name": "nope",
            "args": "{}",
            "id": "c2",
            "type": "invalid_tool_call",
            "error": "Tool 'nope' not found. Available tools: ['read_file', 'take_note', 'web_search']",
        }
    ]
    assert message.tool_calls[0]["name"] == "WebSearch"  # the original is untouched


def test_repair_ai_message_recovers_invalid_tool_calls(lc_registry: tr.ToolRegistry) -> None:
    raw = [
        {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": "{'query': 'cats',}"}},
        {"id": "c2", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "ca'}},
    ]
    message = AIMessage(content="", additional_kwargs={"tool_calls": raw})
    assert [c["id"] for c in message.invalid_tool_calls] == ["c1", "c2"]  # what LangChain made of them
    fixed = repair_ai_message(message, lc_registry)
    assert fixed.tool_calls == [_call("web_search", {"query": "cats"}, "c1")]
    [still] = fixed.invalid_tool_calls
    assert still["id"] == "c2" and "Expected parameters for 'web_search'" in still["error"]


def test_repair_ai_message_salvages_text_calls(lc_registry: tr.ToolRegistry, hermes) -> None:
    text = "Let me search. " + hermes("web_search", '{"query": "otters"}')
    fixed = repair_ai_message(AIMessage(content=text), lc_registry)
    assert fixed.content == "Let me search. "
    [call] = fixed.tool_calls
    assert call["name"] == "web_search" and call["args"] == {"query": "otters"} and call["id"].startswith("call_")
    assert repair_ai_message(AIMessage(content=text), lc_registry).tool_calls[0]["id"] == call["id"]
    blocks = [{"type": "text", "text": text}]
    assert repair_ai_message(AIMessage(content=blocks), lc_registry).content == [
        {"type": "text", "text": "Let me search. "}
    ]


def test_a_message_with_nothing_to_repair_is_returned_as_is(lc_registry: tr.ToolRegistry) -> None:
    message = AIMessage(content="All done.")
    assert repair_ai_message(message, lc_registry) is message


# -- LangGraph ToolNode -----------------------------------------------------------------------
def _tool_node(registry: tr.ToolRegistry) -> ToolNode:
    return ToolNode(
        TOOLS, wrap_tool_call=tool_call_wrapper(registry), awrap_tool_call=async_tool_call_wrapper(registry)
    )


def _tools_only(registry: tr.ToolRegistry) -> Any:
    """START -> ToolNode -> END: the node sees the model's calls exactly as written."""
    graph = StateGraph(MessagesState)
    graph.add_node("tools", _tool_node(registry))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def test_tool_node_answers_every_case(lc_registry: tr.ToolRegistry) -> None:
    graph = _tools_only(lc_registry)
    out = graph.invoke({"messages": [AIMessage(content="", tool_calls=MIXED)]})
    _check_mixed(out["messages"])
    out = asyncio.run(graph.ainvoke({"messages": [AIMessage(content="", tool_calls=MIXED)]}))
    _check_mixed(out["messages"])


def test_tool_node_injects_into_a_repaired_call(lc_registry: tr.ToolRegistry) -> None:
    out = _tools_only(lc_registry).invoke(
        {"messages": [AIMessage(content="", tool_calls=[_call("TakeNote", {"text": "hi"}, "c_note")])]}
    )
    assert out["messages"][-1].content == "noted 'hi' in c_note"


def _scripted_graph(registry: tr.ToolRegistry, script: list[AIMessage]) -> Any:
    replies = iter(script)
    repair = ToolNodeRepair(registry)

    def model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [repair.message(next(replies))]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", repair.tool_node(TOOLS))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()


def test_a_tool_node_graph_end_to_end(lc_registry: tr.ToolRegistry, hermes) -> None:
    truncated = {"id": "c_cut", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "ca'}}
    script = [
        AIMessage(content="", tool_calls=MIXED),
        AIMessage(content="", additional_kwargs={"tool_calls": [truncated]}),
        AIMessage(content="One more. " + hermes("WebSearch", '{"query": "dogs"}')),
        AIMessage(content="Cats and dogs, found."),
    ]
    result = _scripted_graph(lc_registry, script).invoke({"messages": [HumanMessage("find cats and dogs")]})
    messages = result["messages"]
    _check_mixed(messages)
    cut = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "c_cut"]
    assert cut[0].status == "error" and "Expected parameters for 'web_search'" in cut[0].content
    salvaged = messages[8]
    assert isinstance(salvaged, AIMessage) and salvaged.content == "One more. "
    assert salvaged.tool_calls[0]["name"] == "web_search"
    assert messages[9].content == "3 results for dogs" and messages[9].tool_call_id == salvaged.tool_calls[0]["id"]
    assert messages[-1].content == "Cats and dogs, found."


# -- create_agent middleware ------------------------------------------------------------------
class ScriptedChatModel(GenericFakeChatModel):
    """GenericFakeChatModel replays its messages; create_agent also needs bind_tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self


def _agent(registry: tr.ToolRegistry, script: list[AIMessage]) -> Any:
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent

    from toolrepair.integrations.langchain import ToolRepairMiddleware

    return create_agent(ScriptedChatModel(messages=iter(script)), TOOLS, middleware=[ToolRepairMiddleware(registry)])


def _agent_script(hermes) -> list[AIMessage]:
    truncated = {"id": "c_cut", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "ca'}}
    return [
        AIMessage(content="", tool_calls=MIXED, additional_kwargs={}),
        AIMessage(content="", additional_kwargs={"tool_calls": [truncated]}),
        AIMessage(content=hermes("Web_Search", '{"query": "dogs", "limit": "1"}')),
        AIMessage(content="Done."),
    ]


def _check_agent(messages: list[Any]) -> None:
    _check_mixed(messages)
    by_id = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    # A call too broken to run is answered too, instead of silently ending the loop.
    assert by_id["c_cut"].status == "error" and "Expected parameters for 'web_search'" in by_id["c_cut"].content
    salvaged = [
        m for m in messages if isinstance(m, AIMessage) and m.tool_calls and m.tool_calls[0]["id"].startswith("call_")
    ]
    [reply] = salvaged
    assert reply.tool_calls[0]["args"] == {"query": "dogs", "limit": 1}
    assert by_id[reply.tool_calls[0]["id"]].content == "1 results for dogs"
    assert messages[-1].content == "Done."


def test_create_agent_with_the_middleware(lc_registry: tr.ToolRegistry, hermes) -> None:
    result = _agent(lc_registry, _agent_script(hermes)).invoke({"messages": [HumanMessage("find cats")]})
    _check_agent(result["messages"])


def test_create_agent_with_the_middleware_async(lc_registry: tr.ToolRegistry, hermes) -> None:
    agent = _agent(lc_registry, _agent_script(hermes))
    result = asyncio.run(agent.ainvoke({"messages": [HumanMessage("find cats")]}))
    _check_agent(result["messages"])


# -- policy: no executor ever receives a denied call ------------------------------------------
RAN: list[str] = []


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    RAN.append(path)
    return "deleted"


def _denied_script(hermes) -> list[AIMessage]:
    return [
        AIMessage(content="", tool_calls=[_call("DeleteFile", {"path": "/a"}, "c_native")]),
        AIMessage(content="Cleaning up. " + hermes("delete_file", '{"path": "/b"}')),
        AIMessage(content="I may not delete files."),
    ]


def _plain_graph(registry: tr.ToolRegistry, script: list[AIMessage], *, repair: ToolNodeRepair | None = None) -> Any:
    replies = iter(script)

    def model(state: MessagesState) -> dict[str, Any]:
        reply = next(replies)
        return {"messages": [repair.message(reply) if repair else repair_ai_message(reply, registry)]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node(
        "tools", repair.tool_node([web_search, delete_file]) if repair else ToolNode([web_search, delete_file])
    )
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()


@pytest.mark.parametrize(
    "policy",
    [{"deny": ["delete_file"]}, {"allow": ["web_search"]}, {"before_call": lambda call: call.name != "delete_file"}],
)
def test_a_plain_tool_node_never_runs_a_denied_call(policy: dict, hermes) -> None:
    RAN.clear()
    registry = tr.ToolRegistry([web_search, delete_file], **policy)
    for reply in _denied_script(hermes)[:2]:
        fixed = repair_ai_message(reply, registry)
        assert fixed.tool_calls == []
        [refused] = fixed.invalid_tool_calls
        assert refused["error"].startswith("Tool 'delete_file' ")
    result = _plain_graph(registry, _denied_script(hermes)).invoke({"messages": [HumanMessage("clean up")]})
    assert RAN == []
    assert not any(isinstance(m, ToolMessage) for m in result["messages"])


def test_tool_node_repair_answers_a_denied_call_with_the_refusal(hermes) -> None:
    RAN.clear()
    registry = tr.ToolRegistry([web_search, delete_file], deny=["delete_file"])
    repair = ToolNodeRepair(registry)
    result = _plain_graph(registry, _denied_script(hermes), repair=repair).invoke({"messages": [HumanMessage("x")]})
    assert RAN == []
    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [(m.status, m.content) for m in answers] == [("error", "Tool 'delete_file' is not allowed.")] * 2
    assert answers[0].tool_call_id == "c_native"
    assert result["messages"][-1].content == "I may not delete files."
    out = asyncio.run(
        _plain_graph(registry, _denied_script(hermes), repair=ToolNodeRepair(registry)).ainvoke(
            {"messages": [HumanMessage("x")]}
        )
    )
    assert RAN == [] and len([m for m in out["messages"] if isinstance(m, ToolMessage)]) == 2


def test_the_middleware_answers_a_denied_call_with_the_refusal(hermes) -> None:
    RAN.clear()
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent

    from toolrepair.integrations.langchain import ToolRepairMiddleware

    registry = tr.ToolRegistry([web_search, delete_file], deny=["delete_file"])
    agent = create_agent(
        ScriptedChatModel(messages=iter(_denied_script(hermes))),
        [web_search, delete_file],
        middleware=[ToolRepairMiddleware(registry)],
    )
    result = agent.invoke({"messages": [HumanMessage("clean up")]})
    assert RAN == []
    answers = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["Tool 'delete_file' is not allowed."] * 2


@pytest.mark.parametrize(
    ("old", "new"), [("wrap_tool_call", "tool_call_wrapper"), ("awrap_tool_call", "async_tool_call_wrapper")]
)
def test_the_old_wrapper_names_still_work_and_warn(old: str, new: str, lc_registry: tr.ToolRegistry) -> None:
    import toolrepair.integrations.langchain as m

    with pytest.warns(DeprecationWarning, match=f"use {new}"):
        wrapper = getattr(m, old)(lc_registry)
    assert wrapper.__qualname__ == getattr(m, new)(lc_registry).__qualname__


# -- the pieces on their own ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            [
                'Words. <tool_call>{"name": "web_search", "arguments": {"query": "a"}}</tool_call>',
                {"type": "image_url", "image_url": {"url": "data:,"}},
            ],
            ["Words. ", {"type": "image_url", "image_url": {"url": "data:,"}}],
        ),
        (['<tool_call>{"name": "web_search", "arguments": {"query": "a"}}</tool_call>'], []),
    ],
)
def test_block_list_content_keeps_what_is_not_text(lc_registry: tr.ToolRegistry, content: list, expected: list) -> None:
    fixed = repair_ai_message(AIMessage(content=content), lc_registry)
    assert fixed.content == expected and fixed.tool_calls[0]["args"] == {"query": "a"}


def test_content_that_is_neither_text_nor_blocks_is_left_alone(lc_registry: tr.ToolRegistry) -> None:
    from toolrepair.integrations.langchain import _salvage_content

    assert _salvage_content(None, lc_registry) == (None, [])


def _request(name: str, args: dict[str, Any], tool: Any) -> Any:
    from langgraph.prebuilt.tool_node import ToolCallRequest

    return ToolCallRequest(tool_call=_call(name, args, "c_direct"), tool=tool, state={}, runtime=None)


def test_the_wrapper_finds_the_tool_for_a_repaired_call(lc_registry: tr.ToolRegistry) -> None:
    wrap = tool_call_wrapper(lc_registry)
    ran: list[Any] = []

    def execute(request: Any) -> Any:
        ran.append((request.tool.name, request.tool_call["args"]))
        return ToolMessage(content="ok", tool_call_id="c_direct")

    wrap(_request("WebSearch", {"query": "q"}, None), execute)  # the node found no tool: the registry's
    wrap(_request("web_search", {"query": "q", "limit": "2"}, web_search), execute)  # the node's own
    assert ran == [("web_search", {"query": "q"}), ("web_search", {"query": "q", "limit": 2})]


def test_the_wrappers_raise_when_asked_to(lc_registry: tr.ToolRegistry) -> None:
    def execute(request: Any) -> Any:
        raise RuntimeError("boom")

    async def aexecute(request: Any) -> Any:
        raise RuntimeError("boom")

    request = _request("web_search", {"query": "q"}, web_search)
    assert tool_call_wrapper(lc_registry)(request, execute).content == "boom"
    with pytest.raises(RuntimeError, match="boom"):
        tool_call_wrapper(lc_registry, handle_tool_errors=False)(request, execute)
    with pytest.raises(RuntimeError, match="boom"):
        asyncio.run(async_tool_call_wrapper(lc_registry, handle_tool_errors=False)(request, aexecute))


def test_the_middleware_repairs_a_bare_message_and_leaves_other_responses(lc_registry: tr.ToolRegistry, hermes) -> None:
    from toolrepair.integrations.langchain import ToolRepairMiddleware

    middleware = ToolRepairMiddleware(lc_registry)
    fixed = middleware._repair_response(AIMessage(content=hermes("WebSearch", '{"query": "x"}')))
    assert fixed.tool_calls[0]["name"] == "web_search"
    assert middleware._repair_response("not a response") == "not a response"


# -- token streaming (stream_mode="messages") ---------------------------------------------------
@pytest.mark.parametrize("use_async", [False, True])
def test_streamed_tokens_never_show_the_markup(lc_registry: tr.ToolRegistry, hermes, use_async: bool) -> None:
    from langchain_core.messages import AIMessageChunk

    script = [
        AIMessage(content="Let me look. " + hermes("WebSearch", '{"query": "otters", "limit": "2"}')),
        AIMessage(content="Otters hold hands."),
    ]
    agent = _agent(lc_registry, script)
    payload = {"messages": [HumanMessage("otters?")]}

    async def collect() -> list[Any]:
        return [item async for item in agent.astream(payload, stream_mode=["messages", "values"])]

    items = asyncio.run(collect()) if use_async else list(agent.stream(payload, stream_mode=["messages", "values"]))
    tokens = [
        chunk for mode, (chunk, _) in ((m, d) for m, d in items if m == "messages") if isinstance(chunk, AIMessageChunk)
    ]
    shown = "".join(t.content for t in tokens if isinstance(t.content, str))
    assert "<tool_call>" not in shown and "tool_call" not in shown
    assert shown.replace(" ", "") == "Letmelook.Ottersholdhands."
    final = [d for m, d in items if m == "values"][-1]["messages"]
    results = [m for m in final if isinstance(m, ToolMessage)]
    assert [r.content for r in results] == ["2 results for otters"]
    assert final[-1].content == "Otters hold hands."


# -- reasoning read from the text ----------------------------------------------------------------
_CALL_TEXT = '<think>Plan.</think>Sure. <tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>'


@pytest.mark.parametrize(("upstream", "expected"), [({}, "Plan."), ({"reasoning_content": "UP"}, "UP\n\nPlan.")])
def test_reasoning_cut_from_the_content_goes_to_reasoning_content(
    lc_registry: tr.ToolRegistry, upstream: dict[str, Any], expected: str
) -> None:
    fixed = repair_ai_message(AIMessage(content=_CALL_TEXT, additional_kwargs=upstream), lc_registry)
    assert (fixed.content, fixed.additional_kwargs["reasoning_content"]) == ("Sure. ", expected)
    assert [c["name"] for c in fixed.tool_calls] == ["web_search"]


def test_streamed_reasoning_read_from_the_text_goes_to_reasoning_content(lc_registry: tr.ToolRegistry) -> None:
    from langchain_core.messages import AIMessageChunk

    from toolrepair.integrations.langchain import ScreenedChatModel

    inner = GenericFakeChatModel(messages=iter([AIMessage(content=_CALL_TEXT)]))
    chunks = list(ScreenedChatModel(inner=inner, registry=lc_registry).stream("hi"))
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged += chunk
    assert isinstance(merged, AIMessageChunk)
    assert (merged.content, merged.additional_kwargs.get("reasoning_content")) == ("Sure. ", "Plan.")
    assert [c["name"] for c in merged.tool_calls] == ["web_search"]
