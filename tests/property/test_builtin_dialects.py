"""Every built-in dialect we can render passes ``toolrepair.testing.check_dialect``.

Each renderer writes the format as its models do (see the dialect modules' docstrings).
JSON-bodied formats take any JSON arguments; raw-text formats (XML-style) take string values,
minus what the format itself cannot hold in a value; pythonic formats take Python literals.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._salvage._registry import by_name
from toolrepair.testing import arguments, awkward_text, check_dialect, json_values, tool_names

MAX_EXAMPLES = min(settings().max_examples, 100)  # the profile decides (conftest)

Render = Callable[[tr.ToolCall], str]
GEMMA_QUOTE = '<|"|>'


def _obj(call: tr.ToolCall, args_key: str = "arguments", name_key: str = "name") -> str:
    return json.dumps({name_key: call.name, args_key: call.arguments}, ensure_ascii=False)


def _args(call: tr.ToolCall) -> str:
    return json.dumps(call.arguments, ensure_ascii=False)


def _py(value: Any) -> str:
    """A Python literal: what pythonic models write (repr gives True/None, quoted strings)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    return repr(value)


def _py_call(call: tr.ToolCall) -> str:
    return f"{call.name}({', '.join(f'{k}={_py(v)}' for k, v in call.arguments.items())})"


def _loose(value: Any, quote: str) -> str:
    """Gemma's JavaScript-like object: bare keys, strings between quote tokens."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_loose(v, quote)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_loose(v, quote) for v in value) + "]"
    if isinstance(value, str):
        return quote + value + quote
    return json.dumps(value)


def _attr_json(value: Any) -> str:
    # JSON text with `<` escaped, for formats where `<|` ends a value (Kimi K3).
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


def _json_type(value: Any) -> str:
    for kind, name in ((bool, "boolean"), ((int, float), "number"), (list, "array"), (dict, "object")):
        if isinstance(value, kind):
            return name
    return "null"


def _xml_params(call: tr.ToolCall, tag: str) -> str:
    return "".join(f'<{tag} name="{k}">{v}</{tag}>' for k, v in call.arguments.items())


RENDER: dict[str, Render] = {
    "hermes": lambda c: f"<tool_call>\n{_obj(c)}\n</tool_call>",
    "function_tag": lambda c: f"<function={c.name}>{_args(c)}</function>",
    "deepseek_v3": lambda c: (
        f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{c.name}\n```json\n"
        f"{_args(c)}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
    "deepseek_v31": lambda c: (
        f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{c.name}<｜tool▁sep｜>{_args(c)}"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
    "kimi_k2": lambda c: (
        f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{c.name}:0"
        f"<|tool_call_argument_begin|>{_args(c)}<|tool_call_end|><|tool_calls_section_end|>"
    ),
    "harmony": lambda c: (
        f"<|start|>assistant<|channel|>commentary to=functions.{c.name} <|constrain|>json<|message|>{_args(c)}<|call|>"
    ),
    "gemma4": lambda c: f"<|tool_call>call:{c.name}{_loose(c.arguments, GEMMA_QUOTE)}<tool_call|>",
    "functiongemma": lambda c: (
        f"<start_function_call>call:{c.name}{_loose(c.arguments, '<escape>')}<end_function_call>"
    ),
    "qwen3_coder": lambda c: (
        "<tool_call>\n<function="
        + c.name
        + ">\n"
        + "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in c.arguments.items())
        + "</function>\n</tool_call>"
    ),
    "glm": lambda c: (
        f"<tool_call>{c.name}\n"
        + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in c.arguments.items())
        + "</tool_call>"
    ),
    "seed_oss": lambda c: (
        "<seed:tool_call>\n<function="
        + c.name
        + ">\n"
        + "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in c.arguments.items())
        + "</function>\n</seed:tool_call>"
    ),
    "minimax_m2": lambda c: (
        f'<minimax:tool_call>\n<invoke name="{c.name}">\n{_xml_params(c, "parameter")}\n</invoke>\n</minimax:tool_call>'
    ),
    "minimax_m3": lambda c: (
        ']<]minimax[>[<tool_call>]<]minimax[>[<invoke name="'
        + c.name
        + '">'
        + "".join(f"]<]minimax[>[<{k}>{v}]<]minimax[>[</{k}>" for k, v in c.arguments.items())
        + "]<]minimax[>[</invoke>]<]minimax[>[</tool_call>"
    ),
    "dsml": lambda c: (
        f'<｜DSML｜function_calls>\n<｜DSML｜invoke name="{c.name}">\n'
        + "".join(
            f'<｜DSML｜parameter name="{k}" string="true">{v}</｜DSML｜parameter>\n'
            if isinstance(v, str)
            else f'<｜DSML｜parameter name="{k}" string="false">{json.dumps(v)}</｜DSML｜parameter>\n'
            for k, v in c.arguments.items()
        )
        + "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    ),
    "step3": lambda c: (
        f'<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{c.name}">'
        f"{_xml_params(c, 'steptml:parameter')}</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>"
    ),
    "glimmer": lambda c: (
        f'<atem:function_calls><atem:invoke name="{c.name}">{_xml_params(c, "atem:parameter")}'
        "</atem:invoke></atem:function_calls>"
    ),
    "anthropic_xml": lambda c: (
        f'<function_calls>\n<invoke name="{c.name}">\n{_xml_params(c, "parameter")}\n</invoke>\n</function_calls>'
    ),
    "function_name_tag": lambda c: f"<tool_call><function>{c.name}</function>{_args(c)}</tool_call>",
    "tool_use": lambda c: f"<tool_use>\n{_obj(c)}\n</tool_use>",
    "qwen_agent": lambda c: f"✿FUNCTION✿: {c.name}\n✿ARGS✿: {_args(c)}",
    "minicpm5": lambda c: (
        f'<function name="{c.name}">'
        + "".join(f'<param name="{k}"><![CDATA[{v}]]></param>' for k, v in c.arguments.items())
        + "</function>"
    ),
    "kimi_k3": lambda c: (
        f'<|open|>tools<|sep|><|open|>call tool="{c.name}" index="1"<|sep|>'
        + "".join(
            f'<|open|>argument key="{k}" type="string"<|sep|>{v}<|close|>argument<|sep|>'
            if isinstance(v, str)
            else f'<|open|>argument key="{k}" type="{_json_type(v)}"<|sep|>{_attr_json(v)}<|close|>argument<|sep|>'
            for k, v in c.arguments.items()
        )
        + "<|close|>call<|sep|><|close|>tools<|sep|>"
    ),
    "llama4_pythonic": lambda c: f"<|python_start|>[{_py_call(c)}]<|python_end|>",
    "olmo3": lambda c: f"<function_calls>\n{_py_call(c)}\n</function_calls>",
    "lfm2_pythonic": lambda c: f"<|tool_call_start|>[{_py_call(c)}]<|tool_call_end|>",
    "pythonic": lambda c: f"[{_py_call(c)}]",
    "mistral": lambda c: f"[TOOL_CALLS]{c.name}[ARGS]{_args(c)}",
    "python_tag": lambda c: f"<|python_tag|>{_obj(c, 'parameters')}",
    "granite": lambda c: f"<|tool_call|>[{_obj(c)}]",
    "granite_20b": lambda c: f"<function_call> {_obj(c)}",
    "internlm2": lambda c: f"<|action_start|><|plugin|>\n{_obj(c, 'parameters')}<|action_end|>",
    "tool_calls": lambda c: f"<tool_calls>[{_obj(c)}]</tool_calls>",
    "nemotron": lambda c: f"<TOOLCALL>[{_obj(c)}]</TOOLCALL>",
    "longcat": lambda c: f"<longcat_tool_call>{_obj(c)}</longcat_tool_call>",
    "cohere": lambda c: (
        '<|START_ACTION|>[{"tool_call_id": "0", ' + _obj(c, "parameters", "tool_name")[1:] + "]<|END_ACTION|>"
    ),
    "command_r_plus": lambda c: f"Action:\n```json\n[{_obj(c, 'parameters', 'tool_name')}]\n```",
    "apertus": lambda c: f"<|tools_prefix|>[{json.dumps({c.name: c.arguments}, ensure_ascii=False)}]<|tools_suffix|>",
    "gigachat": lambda c: f"<|message_sep|>\n\nfunction call<|role_sep|>\n{_obj(c)}",
    "lfm2_json": lambda c: f"<|tool_call_start|>[{_obj(c)}]<|tool_call_end|>",
    "functools": lambda c: f"functools[{_obj(c)}]",
    "generic_json": lambda c: json.dumps({"tool_call": {"name": c.name, "arguments": c.arguments}}, ensure_ascii=False),
    "functionary": lambda c: f">>>{c.name}\n{_args(c)}",
    "json": _obj,
}

# Not rendered: `xlam` is defined as the array right after `</think>`, so a rendered xlam call
# is the text that ends a reasoning block, and the masks property (a call inside `<think>` is
# no call) cannot hold by construction; its JSON array is the `json` dialect's otherwise.
NOT_RENDERED = {"xlam"}


def _identifiers() -> Any:
    return tool_names()


def _strings(*avoid: str, crlf: bool = False) -> Any:
    """Raw-text values: awkward strings, minus what the format cannot carry in a value.
    ``crlf``: the reader takes `\r\n` as one template newline, so a value cannot end in `\r`
    (it would merge with the newline the template puts after it)."""
    values = awkward_text(avoid=avoid)
    if crlf:
        values = values.filter(lambda v: not v.endswith("\r"))
    return arguments(keys=_identifiers(), values=values)


# Per-dialect strategies: (names, arguments, prose). None keeps check_dialect's default.
OPTIONS: dict[str, dict[str, Any]] = {
    # Names these formats reserve for something other than a tool.
    "harmony": {"names": tool_names().filter(lambda n: n.lower() not in {"python", "browser", "container"})},
    "functionary": {"names": tool_names().filter(lambda n: n.lower() not in {"all", "python"})},
    # Bare keys; strings end at their quote token.
    "gemma4": {
        "arguments": arguments(keys=_identifiers(), values=json_values(awkward_text(avoid=['<|"|>']), _identifiers()))
    },
    "functiongemma": {
        "arguments": arguments(
            keys=_identifiers(), values=json_values(awkward_text(avoid=["<escape>"]), _identifiers())
        )
    },
    # Raw-text values end at their closing tag (the next tag or NS token, for some).
    # Qwen3-Coder / Seed-OSS also tolerate a missing `</parameter>`: a value ends at the next
    # `<parameter=`, `</function>` or block close too (as vLLM's regexes do), so a value
    # cannot hold those either (tests/test_dialect_xml_family.py pins that cut).
    "qwen3_coder": {"arguments": _strings("</parameter>", "<parameter=", "</function>", "</tool_call>", crlf=True)},
    "seed_oss": {"arguments": _strings("</parameter>", "<parameter=", "</function>", "</seed:tool_call>")},
    "glm": {"arguments": _strings("</arg_value>")},
    "minimax_m2": {"arguments": _strings("</parameter>")},
    "anthropic_xml": {"arguments": _strings("</parameter>")},
    "minimax_m3": {"arguments": _strings("]<]minimax[>[")},
    "dsml": {
        "arguments": arguments(keys=_identifiers(), values=json_values(awkward_text(avoid=["</｜dsml｜parameter>"])))
    },
    "step3": {"arguments": _strings("</steptml:parameter>")},
    "glimmer": {"arguments": _strings("</atem:parameter>")},
    "minicpm5": {"arguments": _strings("]]>")},
    "kimi_k3": {
        "arguments": arguments(
            keys=_identifiers(),
            values=awkward_text(avoid=["<|"])
            | json_values(st.text(max_size=8)).filter(lambda v: not isinstance(v, str)),
        )
    },
    # Python keyword arguments: identifier keys.
    "llama4_pythonic": {"arguments": arguments(keys=_identifiers())},
    "olmo3": {"arguments": arguments(keys=_identifiers())},
    "lfm2_pythonic": {"arguments": arguments(keys=_identifiers())},
    "pythonic": {"arguments": arguments(keys=_identifiers())},
    # The whole reply or nothing.
    "generic_json": {"prose": st.sampled_from(["", " ", "\n"])},
}

# Real bugs found by check_dialect in built-in dialects (owned elsewhere): strict xfails, so
# a fix turns them into failures that ask for the mark to go.
KNOWN_BUGS: dict[str, str] = {}
# The prose that triggers each known bug: a random search may miss it in one run, and a strict
# xfail must fail every run.
KNOWN_BUG_PROSE: dict[str, str] = {}


def _cases() -> list[Any]:
    cases = []
    for name in tr.DIALECTS:
        if name in NOT_RENDERED:
            continue
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[name])] if name in KNOWN_BUGS else []
        cases.append(pytest.param(name, marks=marks, id=name))
    return cases


def test_every_builtin_dialect_is_rendered_or_explained() -> None:
    assert set(RENDER) | NOT_RENDERED == set(tr.DIALECTS)


# One dialect per reader implementation in the README's command; every dialect under ci-deep.
@pytest.mark.covering(name=lambda name: type(by_name(name)))
@pytest.mark.parametrize("name", _cases())
def test_builtin_dialect_passes_check_dialect(name: str) -> None:
    options = dict(OPTIONS.get(name, {}))
    if name in KNOWN_BUG_PROSE:
        options["prose"] = st.just(KNOWN_BUG_PROSE[name])
    check_dialect(by_name(name), RENDER[name], max_examples=MAX_EXAMPLES, **options)
