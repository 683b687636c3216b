"""Every refusal answered: a call written as text that names a tool never offered, or whose
arguments cannot be read, gets the corrective message a native call gets, in the framework's
own shape, and the next model turn (which fixes the call) succeeds. Run through each
framework's own loop with a scripted model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import toolrepair as tr


def web_search(query: str, limit: int = 3) -> str:
    """Search the web."""
    return f"{limit} results for {query}"


def read_file(path: str) -> str:
    """Read a file."""
    raise FileNotFoundError(f"No such file: {path}")


UNKNOWN = '<tool_call>{"name": "web_serch_v2", "arguments": {"query": "cats"}}</tool_call>'
FIXED = '<tool_call>{"name": "web_search", "arguments": {"query": "cats"}}</tool_call>'
NOT_FOUND = "Tool 'web_serch_v2' not found. Did you mean 'web_search'? Available tools: ['read_file', 'web_search']"
UNDECODABLE = '<tool_call>{"name": "web_search", "arguments": {"query": }}</tool_call>'


def test_the_message_is_the_native_one() -> None:
    registry = tr.ToolRegistry([web_search, read_file])
    native = registry.repair({"name": "web_serch_v2", "arguments": {"query": "cats"}})
    assert str(native.error) == NOT_FOUND
    from toolrepair.integrations._common import vet_text

    vetted = vet_text(registry, "Looking. " + UNKNOWN + " and " + UNDECODABLE, "call_", answer_rejected=True)
    # The refused candidates are cut as far as the salvage read them, by the one content rule.
    assert vetted.content.startswith("Looking.  and") and "<tool_call>" not in vetted.content
    assert vetted.rejected == ()
    first, second = vetted.calls
    assert first.message == NOT_FOUND and first.call.name == "web_serch_v2"
    assert second.message.startswith("A tool call written as text could not be used (undecodable): write it again")
    assert first.call.id != second.call.id
    # Without the option the candidates stay text, as before.
    assert vet_text(registry, UNKNOWN, "call_").calls == ()


LONG = '<tool_call>{"name": "web_serch_v2", "arguments": {"query": "' + "x" * 3000 + '"}}</tool_call>'


@pytest.mark.parametrize(
    ("text", "content"),
    [
        # The same words in a code span first: the candidate is cut where it stands.
        ("Write `" + UNKNOWN + "` like this: " + UNKNOWN + " then.", "Write `" + UNKNOWN + "` like this:  then."),
        # Longer than a rejection's excerpt: cut whole, by its span.
        ("Sure. " + LONG + " Done.", "Sure.  Done."),
        (LONG, ""),
    ],
)
def test_a_refused_candidate_leaves_the_content_by_its_span(text: str, content: str) -> None:
    from toolrepair.integrations._common import vet_text

    vetted = vet_text(tr.ToolRegistry([web_search, read_file]), text, "call_", answer_rejected=True)
    assert vetted.content == content
    [refused] = vetted.calls
    assert refused.message == NOT_FOUND and refused.call.span is not None
    assert refused.call.span[0] == text.rindex("<tool_call>")


# -- LangChain / LangGraph ----------------------------------------------------------------------
def _lc() -> Any:
    pytest.importorskip("langchain_core")
    pytest.importorskip("langgraph.prebuilt")
    from langchain_core.tools import tool

    return tool(web_search), tool(read_file)


def _check_lc(messages: list[Any]) -> None:
    from langchain_core.messages import AIMessage, ToolMessage

    answers = [m for m in messages if isinstance(m, ToolMessage)]
    assert [(m.status, m.content) for m in answers] == [("error", NOT_FOUND), ("success", "3 results for cats")]
    refused = next(m for m in messages if isinstance(m, AIMessage) and m.tool_calls)
    assert "<tool_call>" not in str(refused.content) and refused.tool_calls[0]["id"] == answers[0].tool_call_id
    assert messages[-1].content == "Cats found."


def _lc_script() -> list[Any]:
    from langchain_core.messages import AIMessage

    return [AIMessage(content="Searching. " + UNKNOWN), AIMessage(content=FIXED), AIMessage(content="Cats found.")]


def test_langchain_tool_node_repair_graph() -> None:
    tools = _lc()
    from langchain_core.messages import HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import tools_condition

    from toolrepair.integrations.langchain import ToolNodeRepair

    repair = ToolNodeRepair(tr.ToolRegistry(tools))
    replies = iter(_lc_script())

    def model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [repair.message(next(replies))]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", repair.tool_node(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    _check_lc(graph.compile().invoke({"messages": [HumanMessage("cats?")]})["messages"])


@pytest.mark.parametrize("use_async", [False, True])
def test_langchain_create_agent_middleware(use_async: bool) -> None:
    tools = _lc()
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import HumanMessage

    from toolrepair.integrations.langchain import ToolRepairMiddleware

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
            return self

    agent = create_agent(
        Scripted(messages=iter(_lc_script())), list(tools), middleware=[ToolRepairMiddleware(tr.ToolRegistry(tools))]
    )
    payload = {"messages": [HumanMessage("cats?")]}
    result = asyncio.run(agent.ainvoke(payload)) if use_async else agent.invoke(payload)
    _check_lc(result["messages"])


# -- pydantic-ai: tests/integrations/test_pydantic_ai.py (pydantic-ai's own unknown-tool retry) ------


# -- openai-agents ------------------------------------------------------------------------------
@pytest.mark.parametrize("streamed", [False, True])
def test_openai_agents_runner(streamed: bool) -> None:
    pytest.importorskip("agents")
    from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool
    from openai.types.responses import Response, ResponseCompletedEvent, ResponseOutputMessage

    from toolrepair.integrations.openai_agents import ToolRepair

    def text(value: str) -> ResponseOutputMessage:
        return ResponseOutputMessage.model_validate(
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": value, "annotations": []}],
            }
        )

    class Scripted(Model):  # type: ignore[misc]
        def __init__(self) -> None:
            self.script = iter([[text("Searching. " + UNKNOWN)], [text(FIXED)], [text("Cats found.")]])
            self.inputs: list[Any] = []

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            self.inputs.append(input)
            return ModelResponse(output=next(self.script), usage=Usage(), response_id=None)

        async def stream_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            self.inputs.append(input)
            response = Response(
                id="r",
                created_at=0,
                model="m",
                object="response",
                output=next(self.script),
                parallel_tool_calls=True,
                tool_choice="auto",
                tools=[],
            )
            yield ResponseCompletedEvent(type="response.completed", response=response, sequence_number=1)

    model, repair = Scripted(), ToolRepair()
    agent = Agent(name="a", model=repair.model(model), tools=[function_tool(web_search), function_tool(read_file)])

    async def run() -> Any:
        if not streamed:
            return (await Runner.run(agent, "cats?", run_config=repair.run_config())).final_output
        result = Runner.run_streamed(agent, "cats?", run_config=repair.run_config())
        async for _ in result.stream_events():
            pass
        return result.final_output

    assert asyncio.run(run()) == "Cats found."
    outputs = [
        i["output"]
        for sent in model.inputs
        if isinstance(sent, list)
        for i in sent
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]
    assert outputs[0] == NOT_FOUND and outputs[-1] == "3 results for cats"


# -- a hand-built LangGraph graph, streamed with stream_mode="messages" --------------------------------
def test_langgraph_hand_built_graph_streams_no_markup_through_the_screened_model() -> None:
    tools = _lc()
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import tools_condition

    from toolrepair.integrations.langchain import ScreenedChatModel, ToolNodeRepair

    registry = tr.ToolRegistry(tools)
    repair = ToolNodeRepair(registry)
    script = [AIMessage(content="Searching. " + FIXED), AIMessage(content="Cats found.")]
    llm = ScreenedChatModel(inner=GenericFakeChatModel(messages=iter(script)), registry=registry)

    def model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [repair.message(llm.invoke(state["messages"]))]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", repair.tool_node(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    items = list(graph.compile().stream({"messages": [HumanMessage("cats?")]}, stream_mode=["messages", "values"]))
    shown = "".join(
        chunk.content
        for mode, (chunk, _) in ((m, d) for m, d in items if m == "messages")
        if isinstance(chunk, AIMessageChunk) and isinstance(chunk.content, str)
    )
    assert "tool_call" not in shown and shown.replace(" ", "") == "Searching.Catsfound."
    final = [d for m, d in items if m == "values"][-1]["messages"]
    assert [m.content for m in final if isinstance(m, ToolMessage)] == ["3 results for cats"]
    assert final[-1].content == "Cats found."


# -- Google ADK ---------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True])
def test_google_adk_runner(stream: bool) -> None:
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent
    from google.adk.agents.run_config import RunConfig, StreamingMode
    from google.adk.apps import App
    from google.adk.models import BaseLlm, LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from toolrepair.integrations.google_adk import ToolRepairPlugin

    class Scripted(BaseLlm):  # type: ignore[misc]
        script: list[str]
        seen: list[Any] = []

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            self.seen.append(llm_request.contents[-1])
            text = self.script.pop(0)
            if stream:
                for start in range(0, len(text), 6):
                    yield LlmResponse(
                        content=types.Content(role="model", parts=[types.Part(text=text[start : start + 6])]),
                        partial=True,
                    )
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]), turn_complete=True)

    llm = Scripted(model="scripted", script=["Searching. " + UNKNOWN, UNDECODABLE, FIXED, "Cats found."], seen=[])
    agent = LlmAgent(name="scripted", model=llm, tools=[web_search, read_file])
    runner = InMemoryRunner(
        app=App(name="t", root_agent=agent, plugins=[ToolRepairPlugin(tr.ToolRegistry(agent.tools))])
    )

    async def main() -> list[Any]:
        session = await runner.session_service.create_session(app_name="t", user_id="u")
        config = RunConfig(streaming_mode=StreamingMode.SSE if stream else StreamingMode.NONE)
        events = [
            e
            async for e in runner.run_async(
                user_id="u",
                session_id=session.id,
                run_config=config,
                new_message=types.Content(role="user", parts=[types.Part(text="go")]),
            )
        ]
        await runner.close()
        return events

    events = asyncio.run(main())
    answers = [p.function_response.response for c in llm.seen for p in c.parts or [] if p.function_response is not None]
    assert answers[0] == {"error": NOT_FOUND}
    assert answers[1]["error"].startswith("A tool call written as text could not be used (undecodable)")
    assert answers[2] == {"result": "3 results for cats"}
    final = [p.text for e in events if e.content for p in e.content.parts or [] if p.text and not e.partial]
    assert final[-1] == "Cats found." and not any("<tool_call>" in t for t in final)


# -- LlamaIndex ----------------------------------------------------------------------------------
# LlamaIndex's workflow runtime touches pydantic's deprecated attributes: its warnings, not ours.
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")
def test_llamaindex_tool_repair_agent() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import ToolCallResult
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.tools import FunctionTool

    from toolrepair.integrations.llamaindex import ToolRepairAgent

    replies = iter(
        [
            ChatMessage(role="assistant", content="Searching. " + UNKNOWN),
            ChatMessage(role="assistant", content=FIXED),
            ChatMessage(role="assistant", content="Cats found."),
        ]
    )
    llm = MockFunctionCallingLLM(response_generator=lambda messages, **kwargs: next(replies))
    tools = [FunctionTool.from_defaults(web_search), FunctionTool.from_defaults(read_file)]
    agent = ToolRepairAgent(tools=tools, llm=llm, streaming=False)

    async def run() -> tuple[list[Any], str]:
        handler = agent.run(user_msg="cats?")
        results = [e async for e in handler.stream_events() if isinstance(e, ToolCallResult)]
        return results, str(await handler)

    results, final = asyncio.run(run())
    assert [(str(r.tool_output.content), r.tool_output.is_error) for r in results] == [
        (NOT_FOUND, True),
        ("3 results for cats", False),
    ]
    assert final == "Cats found."


# -- smolagents ----------------------------------------------------------------------------------
# Whole replies only: the stream salvager releases a refused candidate as text and reports no
# rejection, so a streamed step cannot answer it yet.
@pytest.mark.parametrize("stream", [False])
def test_smolagents_tool_calling_agent(stream: bool) -> None:
    pytest.importorskip("smolagents")
    from smolagents import ToolCallingAgent, tool
    from smolagents.models import ChatMessage, ChatMessageStreamDelta, MessageRole, Model

    from toolrepair.integrations.smolagents import ToolRepairModel

    @tool
    def web_search(query: str, limit: int = 3) -> str:
        """Search the web.

        Args:
            query: what to search for.
            limit: how many results.
        """
        return f"{limit} results for {query}"

    class Scripted(Model):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(model_id="scripted")
            self.script = [
                "Searching. " + UNKNOWN + " " + FIXED,
                FIXED,
                '<tool_call>{"name": "final_answer", "arguments": {"answer": "Cats found."}}</tool_call>',
            ]
            self.seen: list[Any] = []

        def generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            self.seen.append(messages)
            return ChatMessage(role=MessageRole.ASSISTANT, content=self.script.pop(0))

        def generate_stream(self, messages: Any, **kwargs: Any) -> Any:
            self.seen.append(messages)
            text = self.script.pop(0)
            for start in range(0, len(text), 5):
                yield ChatMessageStreamDelta(content=text[start : start + 5])

    model = Scripted()
    agent = ToolCallingAgent(
        tools=[web_search], model=ToolRepairModel(model), max_steps=5, verbosity_level=0, stream_outputs=stream
    )
    assert agent.run("cats?") == "Cats found."
    # The reply beside the call to a tool never offered is refused whole, with the native message.
    sent = [("\n".join(str(m.content) for m in step)) for step in model.seen]
    assert "Tool 'web_serch_v2' not found. Did you mean 'web_search'?" in sent[1]
    assert "3 results for cats" in sent[2]


# -- OpenAI and Anthropic SDK shapes: the application's own loop -----------------------------------
def test_openai_chat_loop() -> None:
    pytest.importorskip("openai")
    from openai.types.chat import ChatCompletionMessage

    from toolrepair.integrations.openai import ERRORS_KEY, repair_chat_message, tool_calls, tool_result_message

    registry = tr.ToolRegistry([web_search, read_file])
    replies = iter(["Searching. " + UNKNOWN, FIXED, "Cats found."])
    history: list[Any] = [{"role": "user", "content": "cats?"}]
    while True:
        reply = ChatCompletionMessage.model_validate({"role": "assistant", "content": next(replies)})
        repaired = repair_chat_message(reply, registry)
        errors = {e["tool_call_id"]: e for e in repaired.pop(ERRORS_KEY, [])}
        history.append(repaired)
        if not repaired.get("tool_calls"):
            break
        for call in tool_calls(repaired):
            answer = errors[call.id]["tool_message"] if call.id in errors else tool_result_message(registry.run(call))
            history.append(answer)
    answers = [m["content"] for m in history if m["role"] == "tool"]
    assert answers == [NOT_FOUND, "3 results for cats"] and history[-1]["content"] == "Cats found."
    assert history[1]["content"] == "Searching. " and tr.repair_history(history)[1].changes == ()


def test_anthropic_messages_loop() -> None:
    pytest.importorskip("anthropic")
    from toolrepair.integrations.anthropic import ERRORS_KEY, repair_message, tool_calls, tool_result_block

    registry = tr.ToolRegistry([web_search, read_file])
    replies = iter(["Searching. " + UNKNOWN, FIXED, "Cats found."])
    history: list[Any] = [{"role": "user", "content": "cats?"}]
    while True:
        reply = {"role": "assistant", "content": [{"type": "text", "text": next(replies)}], "stop_reason": "end_turn"}
        repaired = repair_message(reply, registry)
        errors = {e["tool_use_id"]: e for e in repaired.pop(ERRORS_KEY, [])}
        history.append({"role": "assistant", "content": repaired["content"]})
        calls = tool_calls(repaired)
        if not calls:
            break
        history.append(
            {
                "role": "user",
                "content": [
                    errors[c.id]["tool_result"] if c.id in errors else tool_result_block(registry.run(c)) for c in calls
                ],
            }
        )
    answers = [
        b["content"] for m in history if m["role"] == "user" and isinstance(m["content"], list) for b in m["content"]
    ]
    assert answers == [NOT_FOUND, "3 results for cats"] and history[-1]["content"][0]["text"] == "Cats found."
    assert tr.repair_history(history)[1].changes == ()


# -- LiteLLM ------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")  # LiteLLM's own warnings, not ours
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
@pytest.mark.filterwarnings("ignore::DeprecationWarning:litellm.*")
def test_litellm_completion_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network for the price table
    litellm = pytest.importorskip("litellm")
    from toolrepair.integrations.litellm import repair_response

    registry = tr.ToolRegistry([web_search, read_file])
    history: list[Any] = [{"role": "user", "content": "cats?"}]
    answers: list[str] = []
    for text in ("Searching. " + UNKNOWN, FIXED, "Cats found."):
        reply = repair_response(litellm.completion(model="gpt-4o-mini", messages=history, mock_response=text), registry)
        message = reply.choices[0].message
        history.append(
            {
                "role": "assistant",
                "content": message.content,
                **({"tool_calls": [c.model_dump() for c in message.tool_calls]} if message.tool_calls else {}),
            }
        )
        for call in message.tool_calls or []:
            outcome = registry.run({"name": call.function.name, "arguments": call.function.arguments, "id": call.id})
            answers.append(outcome.content)
            history.append({"role": "tool", "tool_call_id": call.id, "content": outcome.content})
    # LiteLLM's shape for a refused call: no call, the corrective message in the reply's content.
    assert history[1]["content"] == "Searching. \n" + NOT_FOUND and "tool_calls" not in history[1]
    assert answers == ["3 results for cats"] and history[-1]["content"] == "Cats found."


# -- MCP: a server's tools behind the loop --------------------------------------------------------
def test_mcp_tools_in_a_chat_loop() -> None:
    mcp = pytest.importorskip("mcp")
    import pathlib
    import sys

    from toolrepair.integrations.mcp import tools_from_session
    from toolrepair.integrations.openai import ERRORS_KEY, repair_chat_message, tool_calls, tool_result_message

    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from mcp_server import build_server

    async def loop(session: Any) -> list[Any]:
        registry = tr.ToolRegistry(await tools_from_session(session))
        history: list[Any] = [{"role": "user", "content": "cats?"}]
        for text in ("Searching. " + UNKNOWN, FIXED, "Cats found."):
            repaired = repair_chat_message({"role": "assistant", "content": text}, registry)
            errors = {e["tool_call_id"]: e for e in repaired.pop(ERRORS_KEY, [])}
            history.append(repaired)
            for call in tool_calls(repaired):
                history.append(
                    errors[call.id]["tool_message"]
                    if call.id in errors
                    else tool_result_message(await registry.arun(call))
                )
        return history

    async def main() -> list[Any]:
        if hasattr(mcp, "Client"):
            async with mcp.Client(build_server()) as client:
                return await loop(client)
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(build_server()._mcp_server) as session:
            return await loop(session)

    history = asyncio.run(main())
    answers = [m["content"] for m in history if m["role"] == "tool"]
    assert answers == [NOT_FOUND, "3 results for cats"] and history[-1]["content"] == "Cats found."
