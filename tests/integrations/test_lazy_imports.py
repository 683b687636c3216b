"""Every integration module imports without its framework, and says which extra to install when used.

Runs in a subprocess with the framework blocked (``sys.modules[name] = None`` makes importing it
fail), so it holds whether or not the extras are installed.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CASES = [
    ("langchain", ["langchain", "langchain_core", "langgraph"], "m.repair_ai_message(object(), registry)"),
    ("langchain", ["langchain", "langchain_core", "langgraph"], "m.tool_call_wrapper(registry)"),
    ("langchain", ["langchain", "langchain_core", "langgraph"], "m.ToolRepairMiddleware"),
    ("langchain", ["langchain", "langchain_core", "langgraph"], "m.ToolNodeRepair(registry)"),
    ("llamaindex", ["llama_index"], "m.wrap_llm(object(), registry)"),
    ("llamaindex", ["llama_index"], "m.ToolRepairAgent"),
    ("mcp", ["mcp"], "asyncio.run(m.tools_from_session(object()))"),
    ("litellm", ["litellm"], "m.repair_response(object(), registry)"),
    ("litellm", ["litellm"], "m.ToolRepairLogger"),
    ("pydantic_ai", ["pydantic_ai"], "m.ToolRepair"),
    ("openai_agents", ["agents"], "m.ToolRepair()"),
    ("openai_agents", ["agents"], "m.ToolRepairModel"),
    ("google_adk", ["google.adk", "google.genai"], "m.ToolRepairPlugin"),
    ("smolagents", ["smolagents"], "m.ToolRepairModel"),
    ("ray", ["ray", "pyarrow"], "m.fix_dataset(object())"),
    ("ray", ["ray", "pyarrow"], "m.FixBatches()(object())"),
]


@pytest.mark.parametrize(("extra", "blocked", "use"), CASES)
def test_imports_without_the_framework_and_names_the_extra(extra: str, blocked: list[str], use: str) -> None:
    script = textwrap.dedent(f"""
        import asyncio, sys
        for name in {blocked!r}:
            sys.modules[name] = None
        import toolrepair as tr
        import toolrepair.integrations.{extra} as m
        registry = tr.ToolRegistry([])
        try:
            {use}
        except ImportError as exc:
            print(exc)
        else:
            print("no error")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert f"pip install 'toolrepair[{extra}]'" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("module", ["openai", "anthropic"])
def test_sdk_adapters_need_no_sdk(module: str) -> None:
    # They read SDK objects through model_dump, so plain dicts work with nothing installed.
    script = f"""
import sys
sys.modules["{module}"] = None
import toolrepair as tr
import toolrepair.integrations.{module} as m
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "ok", out.stderr
