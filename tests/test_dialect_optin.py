"""The opt-in dialects, ReAct and Cline/Roo tag-per-tool XML: reachable by name only, tables
of real replies (from public bug reports, cited per row), streaming equal to the whole text,
and ``check_dialect``'s generic properties."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import partial
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._salvage._engine import SalvagePass, config_for
from toolrepair._salvage._registry import BUILTIN, OPT_IN, by_name
from toolrepair.testing import arguments, awkward_text, check_dialect, tool_names

MAX_EXAMPLES = min(settings().max_examples, 100)  # the profile decides (conftest)

# (reply, offered, calls, content (None: the reply unchanged), rejection reasons)
Row = tuple[str, Any, list[tuple[str, dict[str, Any]]], "str | None", list[str]]

REACT: list[Row] = [
    # crewAIInc/crewAI#540 (a local model through Ollama): the input, a blank line, a thought.
    (
        "Thought: To find the current temperature and weather conditions in New York City, I can use the"
        ' getWeather tool with the action input {"city": "New York City"}.\nAction: getWeather\n'
        'Action Input: {"city": "New York City"}\n\nThought: I will wait for the observation to gather the'
        " current temperature and weather details in New York City.",
        ["getWeather"],
        [("getWeather", {"city": "New York City"})],
        "Thought: To find the current temperature and weather conditions in New York City, I can use the"
        ' getWeather tool with the action input {"city": "New York City"}.\n\nThought: I will wait for the'
        " observation to gather the current temperature and weather details in New York City.",
        [],
    ),
    # run-llama/llama_index#12699: indented lines, a Python dict (single quotes, repaired), an
    # empty object for a tool without parameters, and an input no decoder reads.
    (
        "  Action: current_date\n  Action Input: {'type': 'object'}\n  Observation: Error: current_date() got"
        " an unexpected keyword argument 'type'",
        ["current_date"],
        [("current_date", {"type": "object"})],
        "Observation: Error: current_date() got an unexpected keyword argument 'type'",
        [],
    ),
    (
        "  Thought: The current language of the user is: English. I need to use a tool to help me answer the"
        " question.\n  Action: current_date\n  Action Input: {}\n  Observation: April 10, 2024",
        ["current_date"],
        [("current_date", {})],
        "  Thought: The current language of the user is: English. I need to use a tool to help me answer the"
        " question.\n  Observation: April 10, 2024",
        [],
    ),
    (
        "  Action: current_date\n  Action Input: {'type': 'object', 'properties': AttributedDict()}\n"
        "  Observation: Error: current_date() got an unexpected keyword argument 'type'",
        ["current_date"],
        [],
        None,
        ["undecodable"],
    ),
    # langchain-ai/langchain#20704 (llama3, hwchase17/react): a JSON string for a one-parameter
    # tool, and the model's own made-up Observation after it. Which parameter the string fills
    # is the schema's to say: refused, never guessed.
    (
        "Thought: I need to find out how many home runs Shohei Ohtani hit last year.\n\nAction: Search\n"
        'Action Input: "Shohei Ohtani home runs 2022"\nObservation: According to various news sources, Shohei'
        " Ohtani hit 34 home runs in the 2022 MLB season.",
        ["Search"],
        [],
        None,
        ["undecodable-arguments"],
    ),
    # vllm-project/vllm#3584: a bare single-quoted string, and the stop word cut to `Observ`.
    (
        " 我需要计算这个字符串的长度，应该使用get_word_length函数。\nAction: get_word_length\n"
        "Action Input: 'hwchasfffffe17'\nObserv",
        ["get_word_length"],
        [],
        None,
        ["undecodable-arguments"],
    ),
    # crewAIInc/crewAI#2237: a tool named with spaces, a nested Python dict, lines after it.
    (
        "Action: Name of my tool\nAction Input: {'argument': {'description': 'Description of the argument.',"
        " 'type': 'str'}}\nTool Name: Research",
        ["Name of my tool"],
        [("Name of my tool", {"argument": {"description": "Description of the argument.", "type": "str"}})],
        "Tool Name: Research",
        [],
    ),
    # crewAIInc/crewAI#4186: `Action: None` with no input is no call; the reply ends where the
    # protocol's `Action Input:` must follow, so it is reported (as the frameworks' own parsers
    # fail it), its text kept.
    (
        "Thought: The user only greeted me.\nAction: None (direct response required)",
        ["search"],
        [],
        None,
        ["truncated"],
    ),
    # The fenced input the JSON-agent prompts ask for, on the next line.
    (
        'Thought: search it\nAction: search\nAction Input:\n```json\n{"query": "owl"}\n```\nObservation: ...',
        ["search"],
        [("search", {"query": "owl"})],
        "Thought: search it\nObservation: ...",
        [],
    ),
    (
        'Action: search\nAction Input: ```json\n{"query": "owl"}\n```',
        ["search"],
        [("search", {"query": "owl"})],
        "",
        [],
    ),
    # A fence opened on the `Action Input:` line is no fence in CommonMark, but its closing
    # run, starting a line, opens one: a later call is in that code. Fail closed, and said.
    (
        'Action: a\nAction Input: ```json\n{"q": 1}\n```\nAction: b\nAction Input: {"y": 2}',
        ["a", "b"],
        [("a", {"q": 1})],
        'Action: b\nAction Input: {"y": 2}',
        ["in-code"],
    ),
    # Spelling: case, spacing, Markdown bold, a bracketed name, blank lines between.
    (
        '**Action:** [search]\n\naction input : {"query": "owl"}',
        ["search"],
        [("search", {"query": "owl"})],
        "**",
        [],
    ),
    ('ACTION: search\nACTION_INPUT: {"q": 1}Observation: x', ["search"], [("search", {"q": 1})], "Observation: x", []),
    # crewAIInc/crewAI#674 (phi3 in CrewAI): the tool's line from the prompt copied as its
    # name; no offered name is that: a rejection, never a guess.
    (
        "Thought: I now can give a great answer\nAction: Internet Search Tool(user_query) - Scrapes the weblinks"
        ' for the query based on user input.\nAction Input: {"query": "who is Virat Kohlis son?"}',
        ["Internet Search Tool"],
        [],
        None,
        ["not-offered"],
    ),
    # Not offered: a rejection; text after the object on its line: the framework's input would
    # be another string, refused; the reply cut inside the object: truncated.
    ('Action: delete_all\nAction Input: {"really": true}', ["search"], [], None, ["not-offered"]),
    ('Action: search\nAction Input: {"q": 1} (the owl)', ["search"], [], None, ["undecodable-arguments"]),
    ('Action: search\nAction Input: {"q": "ow', ["search"], [], None, ["truncated"]),
    ("Action: search\nAction Input:", ["search"], [], None, ["truncated"]),
    # Not a line's start, inside code or reasoning: never a call.
    ('The next Action: search\nAction Input: {"q": 1}', ["search"], [], None, []),
    ('```\nAction: search\nAction Input: {"q": 1}\n```', ["search"], [], None, []),
    ('<think>\nAction: search\nAction Input: {"q": 1}\n</think>\nOk.', ["search"], [], "Ok.", []),
    # Two actions: two calls, in text order.
    (
        'Action: a\nAction Input: {"x": 1}\nObservation: 1\nAction: b\nAction Input: {"y": 2}',
        ["a", "b"],
        [("a", {"x": 1}), ("b", {"y": 2})],
        "Observation: 1",
        [],
    ),
]

CLINE: list[Row] = [
    # The shape Cline's own error message teaches the model (cline/cline#2906).
    (
        "<attempt_completion>\n<result>\nI have completed the task...\n</result>\n</attempt_completion>",
        ["attempt_completion"],
        [("attempt_completion", {"result": "I have completed the task..."})],
        "",
        [],
    ),
    # apmantza/pi-free#235 (MiMo writing Cline XML): indentation, an entity kept as written.
    (
        '<execute_command>\n  <command>cat .github/workflows/ci.yml 2&gt;/dev/null || echo "No ci.yml"</command>\n'
        "</execute_command>",
        ["execute_command"],
        [("execute_command", {"command": 'cat .github/workflows/ci.yml 2&gt;/dev/null || echo "No ci.yml"'})],
        "",
        [],
    ),
    # cline/cline#3992: a sentence, then the call the model meant.
    (
        "First, I need to check if `date-fns` is already installed.\n\n<read_file>\n<path>package.json</path>\n"
        "</read_file>",
        ["read_file"],
        [("read_file", {"path": "package.json"})],
        "First, I need to check if `date-fns` is already installed.",
        [],
    ),
    # RooCodeInc/Roo-Code#2340: a tool's *result* (`<file>`), not offered as a tool: text.
    (
        '<file><path>package.json</path><content lines="1-66">\n1 | {\n</content></file>',
        ["read_file"],
        [],
        None,
        [],
    ),
    # Cline writes `<thinking>` before acting: the thinking is reasoning, the call after it a call.
    (
        "<thinking>\nThe user wants the README.\n</thinking>\n\n<read_file>\n<path>README.md</path>\n</read_file>",
        ["read_file"],
        [("read_file", {"path": "README.md"})],
        "",
        [],
    ),
    (
        "<thinking><read_file><path>a</path></read_file></thinking>",
        ["read_file"],
        [],
        "",
        [],
    ),
    # A file's content keeps its lines and may quote the format's own closing tag.
    (
        "<write_to_file>\n<path>a.xml</path>\n<content>\n<x><content>q</content></x>\n  y\n</content>\n"
        "</write_to_file>",
        ["write_to_file"],
        [("write_to_file", {"path": "a.xml", "content": "<x><content>q</content></x>\n  y"})],
        "",
        [],
    ),
    # Roo's multi-file read: a nested value is raw text (the schema types it).
    (
        "<read_file>\n<args>\n<file><path>src/a.py</path></file>\n</args>\n</read_file>",
        ["read_file"],
        [("read_file", {"args": "<file><path>src/a.py</path></file>"})],
        "",
        [],
    ),
    # Only offered names are tags of calls: any other tag is text, never a rejection, and
    # under ANY_TOOL nothing is read.
    (
        "<p>Reading <read_file><path>a</path></read_file> now.</p>",
        ["read_file"],
        [("read_file", {"path": "a"})],
        "<p>Reading  now.</p>",
        [],
    ),
    # A tag of no offered tool in the shape of a call: the offered tags inside it may be its
    # parameters, so they are no call either (found by check_dialect's allowlist property).
    ("<get_weather>\n<web_search>\n\n</web_search>\n</get_weather>", ["web_search"], [], None, []),
    ("<div><read_file><path>a</path></read_file></div>", ["read_file"], [], None, []),
    ("<note>\n<read_file><path>a</path></read_file>", ["read_file"], [("read_file", {"path": "a"})], "<note>", []),
    ("<delete_all><path>/</path></delete_all>", ["read_file"], [], None, []),
    ("<read_file><path>a</path></read_file>", tr.ANY_TOOL, [], None, []),
    # Tags match in any case; the name resolves to the offered one, a key stays as written.
    ("<Read_File><PATH>a</PATH></Read_File>", ["read_file"], [("read_file", {"PATH": "a"})], "", []),
    ("<list_files></list_files>", ["list_files"], [("list_files", {})], "", []),
    # An offered tool's tag never closed: the reply ended inside it (Cline reads a partial tool use).
    ("Use <read_file> to read a file.", ["read_file"], [], None, ["truncated"]),
    (
        "Use <read_file> to read, e.g. <read_file><path>a</path></read_file>",
        ["read_file"],
        [("read_file", {"path": "a"})],
        "Use <read_file> to read, e.g. ",
        [],
    ),
    # cline/cline#4839 (Devstral Medium): the value with no parameter tag. Which parameter it
    # fills is the schema's to say: refused, never guessed.
    (
        "Let's start by reading `rdt_engine.py`.\n\n<read_file> rdt_engine.py </read_file>",
        ["read_file"],
        [],
        None,
        ["undecodable-arguments"],
    ),
    # Inside code: never a call.
    ("```\n<read_file><path>a</path></read_file>\n```", ["read_file"], [], None, []),
    ("`<read_file><path>a</path></read_file>`", ["read_file"], [], None, []),
    # Refusals: one region, one rejection under the tool's name.
    ("<read_file><path>a", ["read_file"], [], None, ["truncated"]),
    ("<read_file>", ["read_file"], [], None, ["truncated"]),
    ("<read_file><path>a</path><path>b</path></read_file>", ["read_file"], [], None, ["undecodable-arguments"]),
    (
        "<read_file><path>a</path>stray text</read_file> x",
        ["read_file"],
        [("read_file", {"path": "a</path>stray text"})],
        "x",
        [],
    ),
    # A later closing tag of the value, which the call's closing tag follows: two readings.
    ("<read_file><path>a</path></read_file> or </path></read_file>", ["read_file"], [], None, ["ambiguous"]),
    # The reply ends after a complete value, the call's closing tag never written: cut short
    # (more parameters may have followed) or eaten; refused, as for every XML dialect.
    ("<read_file><path>a</path>", ["read_file"], [], None, ["truncated"]),
    # Two calls.
    (
        "<read_file><path>a</path></read_file>\nthen\n<read_file><path>b</path></read_file>",
        ["read_file"],
        [("read_file", {"path": "a"}), ("read_file", {"path": "b"})],
        "then",
        [],
    ),
]

ROWS = [pytest.param("react", *row, id=f"react-{i}") for i, row in enumerate(REACT)] + [
    pytest.param("cline", *row, id=f"cline-{i}") for i, row in enumerate(CLINE)
]


def test_opt_in_only_by_name() -> None:
    assert OPT_IN == ("react", "cline")
    assert not set(OPT_IN) & set(tr.DIALECTS)
    assert not {by_name(name) for name in OPT_IN} & set(BUILTIN)
    for name in OPT_IN:
        assert by_name(name).name == name
    with pytest.raises(ValueError, match="opt-in"):
        by_name("nope")


def test_the_default_path_imports_neither() -> None:
    """A salvage with the default dialects loads the table of built-ins, not the opt-in
    modules: naming one imports it."""
    code = (
        "import sys; import toolrepair as tr; tr.salvage_text('<tool_call>{}', ['f']); "
        "print(sorted(m for m in sys.modules if m.endswith(('._salvage.react', '._salvage.cline')))); "
        "tr.salvage_text('x', ['f'], dialects=['cline']); "
        "print(sorted(m for m in sys.modules if m.endswith(('._salvage.react', '._salvage.cline'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[]", "['toolrepair._salvage.cline']"]


@pytest.mark.parametrize(
    "text",
    ['Action: search\nAction Input: {"q": 1}', "<read_file><path>a</path></read_file>"],
)
def test_default_set_reads_neither(text: str) -> None:
    """Off by default: the default dialects leave both formats as text."""
    result = tr.salvage_text(text, ["search", "read_file"])
    assert result.calls == () and result.rejected == () and result.content == text


@pytest.mark.parametrize(("dialect", "text", "allowed", "expected", "content", "reasons"), ROWS)
def test_table(
    dialect: str,
    text: str,
    allowed: Any,
    expected: list[tuple[str, dict[str, Any]]],
    content: str | None,
    reasons: list[str],
) -> None:
    result = tr.salvage_text(text, allowed, dialects=[dialect])
    assert [(c.name, c.arguments) for c in result.calls] == expected
    assert result.content == (text if content is None else content)
    assert [r.reason for r in result.rejected] == reasons
    for call in result.calls:
        assert call.dialect == dialect
        assert call.span is not None and 0 <= call.span[0] < call.span[1] <= len(text)
    for rejection in result.rejected:
        assert rejection.dialect == dialect


def _as_tuple(r: tr.SalvageResult) -> tuple[Any, ...]:
    return (
        [(c.name, c.arguments, c.dialect, c.span) for c in r.calls],
        r.content,
        r.reasoning,
        [(x.reason, x.span, x.name) for x in r.rejected],
    )


@pytest.mark.parametrize(("dialect", "text", "allowed", "expected", "content", "reasons"), ROWS)
def test_streaming_prefix_stability(
    dialect: str, text: str, allowed: Any, expected: Any, content: Any, reasons: Any
) -> None:
    """Any prefix either blocks or agrees with the whole text, wherever the text is cut, and
    the stream gives what the whole text gives."""
    config = config_for([dialect])
    whole = _as_tuple(tr.salvage_text(text, allowed, dialects=[dialect]))
    for k in range(len(text) + 1):
        run = SalvagePass(config, allowed, text[:k])
        run.advance(final=False)
        early = [(c.name, c.arguments, c.dialect, c.span) for c in run.calls]
        assert early == whole[0][: len(early)], (k, text[:k])
        run.extend(text[k:])
        run.advance(final=True)
        assert _as_tuple(run.result()) == whole, (k, text[:k])
    stream = tr.StreamSalvager(allowed, dialects=[dialect])
    events = [e for ch in text for e in stream.feed(ch)] + stream.close()
    calls = [e.call for e in events if isinstance(e, tr.ToolCallReady)]
    shown = "".join(e.text for e in events if isinstance(e, tr.TextDelta))
    assert [(c.name, c.arguments, c.span) for c in calls] == [(n, a, s) for n, a, _, s in whole[0]]
    assert shown == whole[1]


HOSTILE = [
    ("react", "Action: a\n"),
    ("react", "Action: a\nAction Input: {"),
    ("react", 'Action: a\nAction Input: {"x": [1, '),
    ("react", "Action: a\nAction Input: ```json\n"),
    ("cline", "<read_file>"),
    ("cline", "<read_file><path>"),
    ("cline", "<read_file><path>a</path>"),
    ("cline", "</path></read_file>"),
    ("cline", "<div><p>"),
]


@pytest.mark.parametrize(("dialect", "unit"), HOSTILE)
def test_hostile_input_is_linear(dialect: str, unit: str, assert_linear_work: Any) -> None:
    """Work at 2N stays near twice the work at N, counted in function calls."""
    allowed = ["a", "read_file"]
    assert_linear_work(
        lambda k: partial(tr.salvage_text, unit * k, allowed, dialects=[dialect]), max(200, 4_000 // len(unit))
    )


def _react(call: tr.ToolCall) -> str:
    return f"\nAction: {call.name}\nAction Input: {json.dumps(call.arguments, ensure_ascii=False)}\n"


def _cline(call: tr.ToolCall) -> str:
    params = "".join(f"<{k}>\n{v}\n</{k}>\n" for k, v in call.arguments.items())
    return f"<{call.name}>\n{params}</{call.name}>"


def _cline_value(v: str) -> bool:
    """What a Cline value can carry as written: no closing tag (one could end the value), no
    `\\r` before the template's newline, and a one-line value without outer spaces (the
    framework strips it)."""
    return "</" not in v and not v.endswith("\r") and ("\n" in v or v == v.strip())


def test_react_passes_check_dialect() -> None:
    check_dialect(by_name("react"), _react, max_examples=MAX_EXAMPLES)


def test_cline_passes_check_dialect() -> None:
    # Prose tags are hyphenated: a key drawn like `b` would make a later `</b>` at the reply's
    # end a second reading of the call's last value (ambiguous, by the shared value rule).
    values = awkward_text(avoid=["</"]).filter(_cline_value)
    check_dialect(
        by_name("cline"),
        _cline,
        max_examples=MAX_EXAMPLES,
        arguments=arguments(keys=tool_names(), values=values),
        prose=st.sampled_from(["", "Sure.", "I will read it.\n", "<x-note>ok</x-note>", "Done <x-b>now</x-b>"]),
    )
