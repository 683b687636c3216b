"""With a model profile (the dialect decided) and without, a value ends only where its call's
whole closing structure follows in order: the value's closing tag, the call's, the wrapper's. A
closing tag followed by the wrapper's closer with the call's own skipped is part of the value
when a whole closing structure comes after it (the property's falsifying examples, one row per
XML-family dialect); where none comes, it ends the value as a stop tag would (a model that
forgot ``</function>``). The stream reads the same calls as the whole reply."""

from __future__ import annotations

from typing import Any

import pytest

import toolrepair as tr

_DSML_P = "｜DSML｜parameter"
_DSML = f'<｜DSML｜tool_calls>\n<｜DSML｜invoke name="a">\n<{_DSML_P} name="k" string="true">{{v}}</{_DSML_P}>\n{{end}}</｜DSML｜tool_calls>'
FORMS: dict[str, tuple[str, str, str]] = {
    # dialect: (the reply with {v} and {end}, the call's closer, the partial structure in v)
    "qwen3_coder": (
        "<tool_call>\n<function=a>\n<parameter=k>\n{v}\n</parameter>\n{end}</tool_call>",
        "</function>\n",
        "</parameter></tool_call>",
    ),
    "seed_oss": (
        "<seed:tool_call>\n<function=a>\n<parameter=k>{v}</parameter>\n{end}</seed:tool_call>",
        "</function>\n",
        "</parameter></seed:tool_call>",
    ),
    "minimax_m2": (
        '<minimax:tool_call>\n<invoke name="a">\n<parameter name="k">{v}</parameter>\n{end}</minimax:tool_call>',
        "</invoke>\n",
        "</parameter></minimax:tool_call>",
    ),
    "dsml": (_DSML, "</｜DSML｜invoke>\n", f"</{_DSML_P}></｜DSML｜tool_calls>"),
    "glimmer": (
        '<atem:function_calls>\n<atem:invoke name="a">\n<atem:parameter name="k">{v}</atem:parameter>\n{end}</atem:function_calls>',
        "</atem:invoke>\n",
        "</atem:parameter></atem:function_calls>",
    ),
}

ROWS = [
    # (dialect, value, call closer written, expected value or None for a refusal)
    *((d, p, True, p) for d, (_, _, p) in FORMS.items()),  # the falsifying examples: whole
    *((d, "x" + p + "y", True, "x" + p + "y") for d, (_, _, p) in FORMS.items()),
    *((d, p + "\n" + p, True, p + "\n" + p) for d, (_, _, p) in FORMS.items()),
    *((d, "x", False, "x") for d in FORMS),  # no whole structure anywhere: the call's closer forgotten
    *((d, "x", True, "x") for d in FORMS),  # plain values
    # The explore profile's examples: the partial structure, text, then a parameter opener.
    (
        "dsml",
        f'</{_DSML_P}></｜DSML｜tool_calls>x<{_DSML_P} name="b" string="true">',
        True,
        f'</{_DSML_P}></｜DSML｜tool_calls>x<{_DSML_P} name="b" string="true">',
    ),
    (
        "qwen3_coder",
        "</parameter></tool_call>x<parameter=b>",
        True,
        "</parameter></tool_call>x<parameter=b>",
    ),
    # A stop that disagrees (`</function>` then text), then a partial structure that agrees:
    # the value ends there, the stop inside it (a model that forgot `</function>`).
    ("qwen3_coder", "v</function>", False, "v</function>"),
]

# A run of closers broken off before the wrapper's closer (`</function>` then text): the call
# may have closed there, its wrapper holding other text, or the value holds it all. Two
# readings that disagree: refused (`ambiguous`), never cut short (the explore profile's finding).
BROKEN_OFF = [
    ("qwen3_coder", "</parameter></function>x<parameter=b>"),
    ("seed_oss", "</parameter></function>x<parameter=b>"),
    ("minimax_m2", '</parameter></invoke>x<parameter name="b">'),
    ("glimmer", '</atem:parameter></atem:invoke>x<atem:parameter name="b">'),
]
# GLM's call closer is its wrapper's (`</arg_value></tool_call>` is whole): a value holding it
# ends there, a faithful reading of the reply up to its end.
GLM = "<tool_call>a\n<arg_key>k</arg_key>\n<arg_value>{v}</arg_value>\n</tool_call>"


def _reply(dialect: str, v: str, closed: bool) -> str:
    form, closer, _ = FORMS[dialect]
    return form.format(v=v, end=closer if closed else "")


def _stream(text: str, kw: dict[str, Any]) -> list[tuple[str, dict[str, object]]]:
    stream = tr.StreamSalvager(["a"], **kw)
    events = [e for ch in text for e in stream.feed(ch)] + stream.close()
    return [(e.call.name, e.call.arguments) for e in events if isinstance(e, tr.ToolCallReady)]


@pytest.mark.parametrize("profiled", [True, False])
@pytest.mark.parametrize(("dialect", "value", "closed", "expected"), ROWS)
def test_a_partial_closing_structure_is_part_of_the_value(
    dialect: str, value: str, closed: bool, expected: str | None, profiled: bool
) -> None:
    text = _reply(dialect, value, closed)
    model = tr.ModelProfile("p", dialects=[dialect])
    kw: dict[str, Any] = {"model": model} if profiled else {"dialects": [dialect]}
    result = tr.salvage_text(text, ["a"], **kw)
    got = [(c.name, c.arguments) for c in result.calls]
    assert got == ([("a", {"k": expected})] if expected is not None else []), text
    if expected is None:
        assert [r.reason for r in result.rejected] == ["ambiguous"], text
    assert _stream(text, kw) == got


@pytest.mark.parametrize(("dialect", "value"), BROKEN_OFF)
@pytest.mark.parametrize("profiled", [True, False])
def test_a_run_of_closers_broken_off_reads_two_ways(dialect: str, value: str, profiled: bool) -> None:
    text = _reply(dialect, value, True)
    kw: dict[str, Any] = {"model": tr.ModelProfile("p", dialects=[dialect])} if profiled else {"dialects": [dialect]}
    result = tr.salvage_text(text, ["a", "b"], **kw)
    assert (result.calls, [r.reason for r in result.rejected]) == ((), ["ambiguous"]), text
    stream = tr.StreamSalvager(["a", "b"], **kw)
    events = [e for ch in text for e in stream.feed(ch)] + stream.close()
    assert not [e for e in events if isinstance(e, tr.ToolCallReady)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("</arg_value></tool_call>", ""), ("x</tool_call>y", "x</tool_call>y"), ("x", "x")],
)
def test_glm_whose_call_closer_is_its_wrapper(value: str, expected: str) -> None:
    text = GLM.format(v=value)
    model = tr.ModelProfile("p", dialects=["glm"])
    result = tr.salvage_text(text, ["a"], model=model)
    assert [(c.name, c.arguments) for c in result.calls] == [("a", {"k": expected})]
    assert _stream(text, {"model": model}) == [("a", {"k": expected})]
