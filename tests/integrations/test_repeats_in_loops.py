"""Repeated calls, in each integration: the same call (name and canonical arguments) past
``max_repeats`` (default 3) within a turn, or turn after turn with a registry that lives as long
as the conversation, is not run; the model gets the registry's corrective message, which says
the call was repeated, and the run goes on.

The registry's repeated-call detection (``ToolRegistry(max_repeats=...)``), seen through each
framework's own loop.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import toolrepair as tr

RAN: list[str] = []


def web_search(query: str, limit: int = 3) -> str:
    """Search the web."""
    RAN.append(query)
    return f"{limit} results for {query}"


def read_file(path: str) -> str:
    """Read a file."""
    raise FileNotFoundError(f"No such file: {path}")


OK = "3 results for cats"
TIMES = 4  # one past the default max_repeats


def _check(answers: list[str]) -> None:
    """Three identical calls ran, the fourth was answered with the corrective message."""
    assert RAN == ["cats"] * 3
    assert answers[:3] == [OK] * 3
    assert "has already run 3 times" in answers[3] and answers[3] != OK


def test_the_registry_itself() -> None:
    RAN.clear()
    registry = tr.ToolRegistry([web_search])
    with registry.turn():
        outcomes = [registry.run({"name": "web_search", "arguments": {"query": "cats"}}) for _ in range(TIMES)]
    _check([o.content for o in outcomes])
    assert not outcomes[3].ok and any(e.kind == "repeat" for e in registry.events)
    # Arguments spelled differently, canonically the same: still a repeat.
    RAN.clear()
    with registry.turn():
        for arguments in ({"query": "cats"}, '{"query": "cats"}', ' {"query":"cats"} '):
            registry.run({"name": "web_search", "arguments": arguments})
        assert "has already run 3 times" in registry.run({"name": "web_search", "arguments": {"query": "cats"}}).content
    # max_repeats=None turns it off.
    RAN.clear()
    free = tr.ToolRegistry([web_search], max_repeats=None)
    with free.turn():
        assert all(free.run({"name": "web_search", "arguments": {"query": "cats"}}).ok for _ in range(TIMES))


def test_openai() -> None:
    from toolrepair.integrations.openai import repair_chat_message, tool_calls, tool_result_message

    RAN.clear()
    registry = tr.ToolRegistry([web_search])
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "cats"}'}}
            for i in range(TIMES)
        ],
    }
    with registry.turn():
        repaired = repair_chat_message(message, registry)
        answers = [tool_result_message(registry.run(call))["content"] for call in tool_calls(repaired)]
    # The fourth is answered with its ready tool message, never run.
    _check(answers + [e["tool_message"]["content"] for e in repaired["toolrepair_errors"]])


def test_anthropic() -> None:
    from toolrepair.integrations.anthropic import repair_message, tool_calls, tool_result_block

    RAN.clear()
    registry = tr.ToolRegistry([web_search])
    message = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": f"t{i}", "name": "web_search", "input": {"query": "cats"}} for i in range(TIMES)
        ],
    }
    with registry.turn():
        repaired = repair_message(message, registry)
        answers = [tool_result_block(registry.run(call))["content"] for call in tool_calls(repaired)]
    _check(answers + [e["message"] for e in repaired["toolrepair_errors"]])


def test_langchain_create_agent() -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool

    from toolrepair.integrations.langchain import ToolRepairMiddleware

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
            return self

    RAN.clear()
    tools = [tool(web_search)]
    calls = [
        {"name": "web_search", "args": {"query": "cats"}, "id": f"c{i}", "type": "tool_call"} for i in range(TIMES)
    ]
    script = iter([AIMessage(content="", tool_calls=calls), AIMessage(content="Done.")])
    agent = create_agent(Scripted(messages=script), tools, middleware=[ToolRepairMiddleware(tr.ToolRegistry(tools))])
    result = agent.invoke({"messages": [HumanMessage("cats?")]})
    answers = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    _check(answers)
    assert result["messages"][-1].content == "Done."


def test_pydantic_ai() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import FunctionModel

    from toolrepair.integrations.pydantic_ai import ToolRepair

    RAN.clear()
    seen: list[Any] = []
    script = iter(
        [
            ModelResponse(
                parts=[ToolCallPart("web_search", {"query": "cats"}, tool_call_id=f"c{i}") for i in range(TIMES)]
            ),
            ModelResponse(parts=[TextPart("Done.")]),
        ]
    )

    def model(messages: list[Any], info: Any) -> Any:
        seen.append(messages[-1])
        return next(script)

    agent = Agent(FunctionModel(model), tools=[web_search], capabilities=[ToolRepair()])
    assert asyncio.run(agent.run("cats?")).output == "Done."
    request = seen[1]
    assert isinstance(request, ModelRequest)
    answers = [
        p.model_response() if isinstance(p, RetryPromptPart) else str(p.content)
        for p in request.parts
        if isinstance(p, (ToolReturnPart, RetryPromptPart))
    ]
    assert RAN == ["cats"] * 3 and answers[:3] == [OK] * 3 and "has already run 3 times" in answers[3]


def test_openai_agents() -> None:
    pytest.importorskip("agents")
    from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage

    from toolrepair.integrations.openai_agents import ToolRepair

    done = ResponseOutputMessage.model_validate(
        {
            "type": "message",
            "id": "m",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
        }
    )
    calls = [
        ResponseFunctionToolCall(
            type="function_call",
            call_id=f"c{i}",
            name="web_search",
            arguments='{"query": "cats"}',
            id=f"fc{i}",
            status="completed",
        )
        for i in range(TIMES)
    ]

    class Scripted(Model):  # type: ignore[misc]
        def __init__(self) -> None:
            self.script, self.inputs = iter([calls, [done]]), []

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            self.inputs.append(input)
            return ModelResponse(output=next(self.script), usage=Usage(), response_id=None)

        async def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not streamed here
            raise NotImplementedError
            yield

    RAN.clear()
    model, repair = Scripted(), ToolRepair()
    agent = Agent(name="a", model=repair.model(model), tools=[function_tool(web_search)])
    assert asyncio.run(Runner.run(agent, "cats?", run_config=repair.run_config())).final_output == "Done."
    answers = [i["output"] for i in model.inputs[-1] if isinstance(i, dict) and i.get("type") == "function_call_output"]
    _check(answers)


def _repeat_events(registry: tr.ToolRegistry) -> list[tuple[str, int | None]]:
    return [(e.tool, e.before) for e in registry.events if e.kind == "repeat"]


@pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")  # LiteLLM's own warnings, not ours
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
@pytest.mark.filterwarnings("ignore::DeprecationWarning:litellm.*")
def test_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network for the price table
    litellm = pytest.importorskip("litellm")
    from toolrepair.integrations.litellm import repair_response

    RAN.clear()
    registry = tr.ToolRegistry([web_search])
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "cats"}'}}
        for i in range(TIMES)
    ]
    history: list[Any] = [{"role": "user", "content": "cats?"}]
    answers: list[str] = []
    for turn in ({"mock_tool_calls": calls, "mock_response": ""}, {"mock_response": "Done."}):
        reply = repair_response(litellm.completion(model="gpt-4o-mini", messages=history, **turn), registry)
        message = reply.choices[0].message
        history.append({"role": "assistant", "content": message.content})
        for call in message.tool_calls or []:
            answers.append(
                registry.run({"name": call.function.name, "arguments": call.function.arguments, "id": call.id}).content
            )
    # LiteLLM's shape for a refused call: it leaves tool_calls, its message joins the reply's text.
    _check([*answers, history[1]["content"]])
    assert history[-1]["content"] == "Done." and _repeat_events(registry) == [("web_search", 3)]


def test_mcp() -> None:
    mcp = pytest.importorskip("mcp")
    import pathlib
    import sys

    from toolrepair.integrations.mcp import tools_from_session
    from toolrepair.integrations.openai import ERRORS_KEY, repair_chat_message, tool_calls, tool_result_message

    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from mcp_server import build_server

    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "cats"}'}}
            for i in range(TIMES)
        ],
    }

    async def loop(session: Any) -> tuple[tr.ToolRegistry, list[str]]:
        registry = tr.ToolRegistry(await tools_from_session(session))
        repaired = repair_chat_message(message, registry)
        answers = [tool_result_message(await registry.arun(c))["content"] for c in tool_calls(repaired)]
        # The fourth left tool_calls: it is answered with its ready tool message, never sent on.
        return registry, answers + [e["tool_message"]["content"] for e in repaired.pop(ERRORS_KEY)]

    async def main() -> tuple[tr.ToolRegistry, list[str]]:
        if hasattr(mcp, "Client"):
            async with mcp.Client(build_server()) as client:
                return await loop(client)
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(build_server()._mcp_server) as session:
            return await loop(session)

    registry, answers = asyncio.run(main())
    # The server ran the call three times (its results), the fourth never reached it.
    assert answers[:3] == [OK] * 3 and "has already run 3 times" in answers[3] and len(answers) == TIMES
    assert _repeat_events(registry) == [("web_search", 3)]


def test_google_adk() -> None:
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from google.adk.models import BaseLlm, LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from toolrepair.integrations.google_adk import ToolRepairPlugin

    calls = [
        types.Part(function_call=types.FunctionCall(id=f"c{i}", name="web_search", args={"query": "cats"}))
        for i in range(TIMES)
    ]

    class Scripted(BaseLlm):  # type: ignore[misc]
        script: list[list[Any]]
        seen: list[Any] = []

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            self.seen.append(llm_request.contents[-1])
            yield LlmResponse(content=types.Content(role="model", parts=self.script.pop(0)), turn_complete=True)

    RAN.clear()
    llm = Scripted(model="scripted", script=[calls, [types.Part(text="Done.")]], seen=[])
    agent = LlmAgent(name="scripted", model=llm, tools=[web_search])
    registry = tr.ToolRegistry(agent.tools)
    runner = InMemoryRunner(app=App(name="t", root_agent=agent, plugins=[ToolRepairPlugin(registry)]))

    async def main() -> list[Any]:
        session = await runner.session_service.create_session(app_name="t", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="go")])
        events = [e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)]
        await runner.close()
        return events

    events = asyncio.run(main())
    answers = {
        p.function_response.id: p.function_response.response
        for c in llm.seen
        for p in c.parts or []
        if p.function_response is not None
    }
    _check([answers[f"c{i}"].get("result") or answers[f"c{i}"]["error"] for i in range(TIMES)])
    assert events[-1].content.parts[0].text == "Done." and _repeat_events(registry) == [("web_search", 3)]


# LlamaIndex's workflow runtime touches pydantic's deprecated attributes: its warnings, not ours.
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")
def test_llamaindex() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import ToolCallResult
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.tools import FunctionTool

    from toolrepair.integrations.llamaindex import ToolRepairAgent

    RAN.clear()
    blocks = [
        ToolCallBlock(tool_call_id=f"c{i}", tool_name="web_search", tool_kwargs={"query": "cats"}) for i in range(TIMES)
    ]
    replies = iter([ChatMessage(role="assistant", blocks=blocks), ChatMessage(role="assistant", content="Done.")])
    llm = MockFunctionCallingLLM(response_generator=lambda messages, **kwargs: next(replies))
    registry = tr.ToolRegistry([FunctionTool.from_defaults(web_search)])
    agent = ToolRepairAgent(tools=[FunctionTool.from_defaults(web_search)], llm=llm, registry=registry, streaming=False)

    async def run() -> tuple[dict[str, Any], str]:
        handler = agent.run(user_msg="cats?")
        results = {e.tool_id: e async for e in handler.stream_events() if isinstance(e, ToolCallResult)}
        return results, str(await handler)

    results, final = asyncio.run(run())
    _check([str(results[f"c{i}"].tool_output.content) for i in range(TIMES)])
    assert results["c3"].tool_output.is_error and not results["c0"].tool_output.is_error
    assert final == "Done." and _repeat_events(registry) == [("web_search", 3)]


def test_smolagents() -> None:
    pytest.importorskip("smolagents")
    from smolagents import ToolCallingAgent, tool
    from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole, Model

    from toolrepair.integrations.smolagents import ToolRepairModel

    @tool
    def web_search(query: str, limit: int = 3) -> str:
        """Search the web.

        Args:
            query: what to search for.
            limit: how many results.
        """
        RAN.append(query)
        return f"{limit} results for {query}"

    def reply(name: str, arguments: dict[str, Any], ident: str) -> Any:
        call = ChatMessageToolCall(
            id=ident, type="function", function=ChatMessageToolCallFunction(name=name, arguments=arguments)
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])

    class Scripted(Model):  # type: ignore[misc]
        """A model stuck on one call, step after step, until it gives the answer."""

        def __init__(self) -> None:
            super().__init__(model_id="scripted")
            self.script = [reply("web_search", {"query": "cats"}, f"c{i}") for i in range(TIMES)]
            self.script.append(reply("final_answer", {"answer": "Done."}, "c_end"))
            self.seen: list[Any] = []

        def generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            self.seen.append(messages)
            return self.script.pop(0)

    RAN.clear()
    model = Scripted()
    # A registry of the agent's tools (final_answer too) lives as long as the agent: the same
    # call counts across its steps, the stuck loop a model falls into.
    specs = [
        tr.ToolSpec("web_search", {"type": "object", "properties": {"query": {"type": "string"}}}),
        tr.ToolSpec("final_answer", {"type": "object", "properties": {"answer": {}}}),
    ]
    repairing = ToolRepairModel(model, tr.ToolRegistry(specs))
    agent = ToolCallingAgent(tools=[web_search], model=repairing, max_steps=6, verbosity_level=0)
    assert agent.run("cats?") == "Done."
    sent = ["\n".join(str(m.content) for m in step[-1:]) for step in model.seen]
    _check([OK if OK in s else s for s in sent[1:5]])
    assert _repeat_events(repairing.registry) == [("web_search", 3)]


def test_the_same_text_call_turn_after_turn() -> None:
    """A call salvaged from text gets an id derived from the text: the same text each turn is
    the same id each turn, and still a new call once the one before it ran."""
    from toolrepair.integrations.openai import repair_chat_message, tool_calls, tool_result_message

    RAN.clear()
    registry = tr.ToolRegistry([web_search])
    text = '<tool_call>{"name": "web_search", "arguments": {"query": "cats"}}</tool_call>'
    answers: list[str] = []
    for _ in range(TIMES):
        repaired = repair_chat_message({"role": "assistant", "content": text}, registry)
        answers += [tool_result_message(registry.run(call))["content"] for call in tool_calls(repaired)]
        answers += [e["tool_message"]["content"] for e in repaired.get("toolrepair_errors", [])]
    _check(answers)


# -- a model stuck on one text call, turn after turn, through each framework's loop ---------------
TEXT = '<tool_call>{"name": "web_search", "arguments": {"query": "cats"}}</tool_call>'


def test_text_call_turn_after_turn_langchain_middleware() -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool

    from toolrepair.integrations.langchain import ToolRepairMiddleware

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
            return self

    RAN.clear()
    tools = [tool(web_search)]
    script = iter([*(AIMessage(content=TEXT) for _ in range(TIMES)), AIMessage(content="Done.")])
    agent = create_agent(Scripted(messages=script), tools, middleware=[ToolRepairMiddleware(tr.ToolRegistry(tools))])
    result = agent.invoke({"messages": [HumanMessage("cats?")]})
    _check([m.content for m in result["messages"] if isinstance(m, ToolMessage)])
    assert result["messages"][-1].content == "Done."


@pytest.mark.parametrize("stream", [False, True])
def test_text_call_turn_after_turn_google_adk(stream: bool) -> None:
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
            if stream:  # partial chunks first: the screen must not count the call again
                for start in range(0, len(text), 9):
                    part = types.Part(text=text[start : start + 9])
                    yield LlmResponse(content=types.Content(role="model", parts=[part]), partial=True)
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]), turn_complete=True)

    RAN.clear()
    llm = Scripted(model="scripted", script=[TEXT] * TIMES + ["Done."], seen=[])
    agent = LlmAgent(name="scripted", model=llm, tools=[web_search])
    registry = tr.ToolRegistry(agent.tools)
    runner = InMemoryRunner(app=App(name="t", root_agent=agent, plugins=[ToolRepairPlugin(registry)]))

    async def main() -> None:
        session = await runner.session_service.create_session(app_name="t", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="go")])
        config = RunConfig(streaming_mode=StreamingMode.SSE if stream else StreamingMode.NONE)
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message, run_config=config):
            pass
        await runner.close()

    asyncio.run(main())
    answers = [p.function_response.response for c in llm.seen for p in c.parts or [] if p.function_response]
    _check([a.get("result") or a["error"] for a in answers])
    assert _repeat_events(registry) == [("web_search", 3)]


@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")
def test_text_call_turn_after_turn_llamaindex() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import ToolCallResult
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.tools import FunctionTool

    from toolrepair.integrations.llamaindex import ToolRepairAgent

    RAN.clear()
    texts = iter([TEXT] * TIMES + ["Done."])
    llm = MockFunctionCallingLLM(
        response_generator=lambda messages, **kwargs: ChatMessage(role="assistant", content=next(texts))
    )
    agent = ToolRepairAgent(tools=[FunctionTool.from_defaults(web_search)], llm=llm, streaming=False)

    async def run() -> tuple[list[str], str]:
        handler = agent.run(user_msg="cats?")
        results = [str(e.tool_output.content) async for e in handler.stream_events() if isinstance(e, ToolCallResult)]
        return results, str(await handler)

    results, final = asyncio.run(run())
    _check(results)
    assert final == "Done."


def test_text_call_turn_after_turn_smolagents() -> None:
    pytest.importorskip("smolagents")
    from smolagents import ToolCallingAgent, tool
    from smolagents.models import ChatMessage, MessageRole, Model

    from toolrepair.integrations.smolagents import ToolRepairModel

    @tool
    def web_search(query: str, limit: int = 3) -> str:
        """Search the web.

        Args:
            query: what to search for.
            limit: how many results.
        """
        RAN.append(query)
        return f"{limit} results for {query}"

    class Scripted(Model):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(model_id="scripted")
            end = '<tool_call>{"name": "final_answer", "arguments": {"answer": "Done."}}</tool_call>'
            self.script, self.seen = [TEXT] * TIMES + [end], []

        def generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            self.seen.append(messages)
            return ChatMessage(role=MessageRole.ASSISTANT, content=self.script.pop(0))

    RAN.clear()
    model = Scripted()
    specs = [
        tr.ToolSpec("web_search", {"type": "object", "properties": {"query": {"type": "string"}}}),
        tr.ToolSpec("final_answer", {"type": "object", "properties": {"answer": {}}}),
    ]
    agent = ToolCallingAgent(
        tools=[web_search], model=ToolRepairModel(model, tr.ToolRegistry(specs)), max_steps=6, verbosity_level=0
    )
    assert agent.run("cats?") == "Done."
    sent = [str(step[-1].content) for step in model.seen]
    _check([OK if OK in s else s for s in sent[1:5]])


def test_text_call_turn_after_turn_pydantic_ai() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, RetryPromptPart, TextPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    from toolrepair.integrations.pydantic_ai import ToolRepair

    RAN.clear()
    seen: list[Any] = []
    script = iter(
        [*(ModelResponse(parts=[TextPart(TEXT)]) for _ in range(TIMES)), ModelResponse(parts=[TextPart("Done.")])]
    )

    def model(messages: list[Any], info: Any) -> Any:
        seen.append(messages[-1])
        return next(script)

    registry = tr.ToolRegistry([web_search])
    agent = Agent(FunctionModel(model), tools=[web_search], capabilities=[ToolRepair(registry)])
    assert asyncio.run(agent.run("cats?")).output == "Done."
    answers = [
        p.model_response() if isinstance(p, RetryPromptPart) else str(p.content)
        for request in seen[1:]
        for p in request.parts
        if isinstance(p, (ToolReturnPart, RetryPromptPart))
    ]
    _check(answers)
    assert _repeat_events(registry) == [("web_search", 3)]


def test_langgraph_tool_node_with_the_wrapper_alone() -> None:
    """``ToolNode(wrap_tool_call=tool_call_wrapper(registry))``, no message repair: the wrapper
    is the dispatch, and counts."""
    pytest.importorskip("langgraph.prebuilt")
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from toolrepair.integrations.langchain import tool_call_wrapper

    RAN.clear()
    tools = [tool(web_search)]
    registry = tr.ToolRegistry(tools)
    call = {"name": "web_search", "args": {"query": "cats"}}
    script = iter(
        [*(AIMessage(content="", tool_calls=[{**call, "id": f"c{i}"}]) for i in range(TIMES)), AIMessage("Done.")]
    )
    graph = StateGraph(MessagesState)
    graph.add_node("model", lambda state: {"messages": [next(script)]})
    graph.add_node("tools", ToolNode(tools, wrap_tool_call=tool_call_wrapper(registry)))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    messages = graph.compile().invoke({"messages": [HumanMessage("cats?")]})["messages"]
    _check([str(m.content) for m in messages if isinstance(m, ToolMessage)])
    assert messages[-1].content == "Done." and _repeat_events(registry) == [("web_search", 3)]


def test_text_call_turn_after_turn_openai_agents() -> None:
    pytest.importorskip("agents")
    from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool
    from openai.types.responses import ResponseOutputMessage

    from toolrepair.integrations.openai_agents import ToolRepair

    def message(text: str) -> ResponseOutputMessage:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        return ResponseOutputMessage.model_validate(
            {"type": "message", "id": "m", "role": "assistant", "status": "completed", "content": content}
        )

    class Scripted(Model):  # type: ignore[misc]
        def __init__(self) -> None:
            self.script, self.inputs = iter([TEXT] * TIMES + ["Done."]), []

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            self.inputs.append(input)
            return ModelResponse(output=[message(next(self.script))], usage=Usage(), response_id=None)

        async def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not streamed here
            raise NotImplementedError
            yield

    RAN.clear()
    registry = tr.ToolRegistry([web_search])
    model, repair = Scripted(), ToolRepair(registry)
    agent = Agent(name="a", model=repair.model(model), tools=[function_tool(web_search)])
    assert asyncio.run(Runner.run(agent, "cats?", run_config=repair.run_config())).final_output == "Done."
    answers = [i["output"] for i in model.inputs[-1] if isinstance(i, dict) and i.get("type") == "function_call_output"]
    _check(answers)
    assert _repeat_events(registry) == [("web_search", 3)]


def test_smolagents_reply_refused_whole_gives_its_counts_back() -> None:
    """smolagents runs a reply's calls together or not at all: a reply holding a repeat runs
    none, so none of its calls counts, and the model sending the call once more is not refused."""
    pytest.importorskip("smolagents")
    from smolagents import ToolCallingAgent, tool
    from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole, Model

    from toolrepair.integrations.smolagents import ToolRepairModel

    @tool
    def web_search(query: str, limit: int = 3) -> str:
        """Search the web.

        Args:
            query: what to search for.
            limit: how many results.
        """
        RAN.append(query)
        return f"{limit} results for {query}"

    def reply(*calls: tuple[str, dict[str, Any]]) -> Any:
        tool_calls = [
            ChatMessageToolCall(id=f"c{i}", type="function", function=ChatMessageToolCallFunction(name=n, arguments=a))
            for i, (n, a) in enumerate(calls)
        ]
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=tool_calls)

    class Scripted(Model):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(model_id="scripted")
            self.script = [
                reply(*[("web_search", {"query": "cats"})] * TIMES),
                reply(("web_search", {"query": "cats"})),
                reply(("final_answer", {"answer": "Done."})),
            ]
            self.seen: list[Any] = []

        def generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            self.seen.append(messages)
            return self.script.pop(0)

    RAN.clear()
    model = Scripted()
    specs = [
        tr.ToolSpec("web_search", {"type": "object", "properties": {"query": {"type": "string"}}}),
        tr.ToolSpec("final_answer", {"type": "object", "properties": {"answer": {}}}),
    ]
    agent = ToolCallingAgent(
        tools=[web_search], model=ToolRepairModel(model, tr.ToolRegistry(specs)), max_steps=4, verbosity_level=0
    )
    assert agent.run("cats?") == "Done."
    refused, ran = (str(step[-1].content) for step in model.seen[1:3])
    assert "has already run 3 times" in refused and "No call of this reply was run" in refused
    assert OK in ran and RAN == ["cats"]
