"""Values never cut short: for any value string v and every XML-style dialect, a rendered call
holding v comes back with exactly v, or refused (no call, and a rejection). Never a shortened
value, and never a call read from inside v.

One exception is no parser's choice: where v holds a whole closing tag and a whole next
parameter (``</parameter><parameter=b>``), the reply is also the rendering of a call with two
arguments (up to the template's layout), and may be read as that call; where it holds a whole
call's end and a whole call's start, the rendering of two calls. So the property checks that a call
that comes back renders to exactly the reply: a faithful reading of it, never a shortened one.

The values are built from the format's own tags (closing tags, openers, block markers) mixed
with text, the values code that writes the format holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolrepair as tr

MAX_EXAMPLES = min(settings().max_examples, 200)

Render = Callable[[dict[str, str]], str]  # the arguments of a call to `a` -> the reply
Many = Callable[[list[dict[str, str]]], str]  # several calls to `a`, as one reply writes them


def _each(form: str) -> Callable[[dict[str, str]], str]:
    return lambda args: "".join(form.format(k=k, v=v) for k, v in args.items())


def _invoke(block: str, invoke: str, param: str, extra: str = "") -> Many:
    params = _each(f'<{param} name="{{k}}"{extra}>{{v}}</{param}>')
    return lambda calls: (
        f"<{block}>\n" + "".join(f'<{invoke} name="a">\n{params(a)}\n</{invoke}>\n' for a in calls) + f"</{block}>"
    )


def _functions(block: str, body: Callable[[dict[str, str]], str]) -> Many:
    return lambda calls: (
        f"<{block}>\n" + "".join(f"<function=a>\n{body(a)}</function>\n" for a in calls) + f"</{block}>"
    )


_QWEN = _each("<parameter={k}>\n{v}\n</parameter>\n")
_SEED = _each("<parameter={k}>{v}</parameter>\n")
_GLM = _each("<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n")

# Several calls in one reply: in one wrapper where the format allows it, else one wrapper each.
MANY: dict[str, Many] = {
    "qwen3_coder": _functions("tool_call", _QWEN),
    "seed_oss": _functions("seed:tool_call", _SEED),
    "glm": lambda calls: "".join(f"<tool_call>a\n{_GLM(a)}</tool_call>" for a in calls),
    "minimax_m2": _invoke("minimax:tool_call", "invoke", "parameter"),
    "dsml": _invoke("｜DSML｜tool_calls", "｜DSML｜invoke", "｜DSML｜parameter", ' string="true"'),
    "glimmer": _invoke("atem:function_calls", "atem:invoke", "atem:parameter"),
}


def _one(many: Many) -> Render:
    return lambda args: many([args])


RENDER: dict[str, Render] = {d: _one(many) for d, many in MANY.items()}

TAGS: dict[str, list[str]] = {
    "qwen3_coder": [
        "</parameter>",
        "<parameter=b>",
        "<parameter=k>",
        "</function>",
        "</tool_call>",
        "<tool_call>",
        "<function=a>",
    ],
    "seed_oss": [
        "</parameter>",
        "<parameter=b>",
        "</function>",
        "</seed:tool_call>",
        "<seed:tool_call>",
        "<function=a>",
    ],
    "glm": ["</arg_value>", "<arg_key>", "</arg_key>", "<arg_value>", "</tool_call>", "<tool_call>", "a", "b"],
    "minimax_m2": [
        "</parameter>",
        '<parameter name="b">',
        "</invoke>",
        '<invoke name="a">',
        "</minimax:tool_call>",
        "<minimax:tool_call>",
    ],
    "dsml": [
        "</｜DSML｜parameter>",
        '<｜DSML｜parameter name="b" string="true">',
        "</｜DSML｜invoke>",
        '<｜DSML｜invoke name="a">',
        "</｜DSML｜tool_calls>",
        "<｜DSML｜tool_calls>",
    ],
    "glimmer": [
        "</atem:parameter>",
        '<atem:parameter name="b">',
        "</atem:invoke>",
        '<atem:invoke name="a">',
        "</atem:function_calls>",
        "<atem:function_calls>",
    ],
}


def _bare(text: str) -> str:
    """The reply without whitespace: the template's layout between tags aside."""
    return re.sub(r"\s+", "", text)


def _values(dialect: str) -> st.SearchStrategy[str]:
    piece = st.sampled_from([*TAGS[dialect], "\n", " ", "x", "<", ">", "/"]) | st.text(max_size=3)
    return st.lists(piece, max_size=8).map("".join)


@pytest.mark.parametrize("dialect", sorted(RENDER))
def test_a_value_comes_back_whole_or_not_at_all(dialect: str) -> None:
    render = RENDER[dialect]

    @settings(max_examples=MAX_EXAMPLES, deadline=None)
    @given(v=_values(dialect))
    def run(v: str) -> None:
        text = render({"k": v})
        result = tr.salvage_text(text, ["a", "b"])
        got = [(c.name, c.arguments) for c in result.calls]
        if not got:
            assert result.rejected, text  # refused, never silently dropped
            return
        assert all(name == "a" for name, _ in got), (text, got)
        if got != [("a", {"k": v})]:  # another reading: only one the reply is the rendering of
            # (several calls where v holds a whole call's end and a whole call's start)
            assert _bare(MANY[dialect]([args for _, args in got])) == _bare(text), (text, got)

    run()


@pytest.mark.parametrize("dialect", ["qwen3_coder", "seed_oss"])
def test_null_text_is_none_only_where_the_schema_allows_null(dialect: str) -> None:
    """Under ``["string", "null"]`` a value comes back as the string written, or None exactly
    where it spells null; under ``"string"`` always as the string written (or refused)."""
    render = RENDER[dialect]
    nullable = tr.ToolRegistry([tr.ToolSpec("a", {"properties": {"k": {"type": ["string", "null"]}}})])
    textual = tr.ToolRegistry([tr.ToolSpec("a", {"properties": {"k": {"type": "string"}}})])
    spelled = st.sampled_from(["null", "NULL", " null", "null\n", "nul", "'null'"])

    @settings(max_examples=MAX_EXAMPLES // 2, deadline=None)
    @given(v=spelled | _values(dialect))
    def run(v: str) -> None:
        calls = tr.salvage_text(render({"k": v}), ["a"]).calls
        if len(calls) != 1 or calls[0].arguments != {"k": v}:
            return  # refused, or another faithful reading: the property above
        for registry, allows_null in ((nullable, True), (textual, False)):
            repaired = tr.repair_call(calls[0], registry).call
            assert repaired is not None
            got = repaired.arguments["k"]
            if allows_null and v.strip().casefold() == "null":
                assert got is None, v
            else:
                assert got == v and type(got) is str, v

    run()


@pytest.mark.parametrize("dialect", sorted(RENDER))
def test_with_a_profile_a_value_comes_back_whole_or_as_its_call_closed(dialect: str) -> None:
    # A model profile decides the dialect, and a stream releases a call the moment its wrapper
    # closes: a value that holds its call's whole closing structure (closing tag, the call's
    # and the wrapper's closers, in order) ends there. Every call read is then the rendering
    # of the reply up to its end: never a value cut inside a structure that disagrees.
    render = RENDER[dialect]
    model = tr.ModelProfile("p", dialects=[dialect])

    @settings(max_examples=MAX_EXAMPLES, deadline=None)
    @given(v=_values(dialect))
    def run(v: str) -> None:
        text = render({"k": v})
        result = tr.salvage_text(text, ["a", "b"], model=model)
        if not result.calls:
            assert result.rejected, text
            return
        first = result.calls[0]
        assert first.name == "a" and first.span is not None and first.span[0] == 0, (text, result.calls)
        if first.arguments != {"k": v}:
            assert _bare(render(first.arguments)) in (_bare(text), _bare(text[: first.span[1]])), (text, first)

    run()
