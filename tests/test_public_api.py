"""The public face, pinned: ``toolrepair.__all__`` is the contract's list of names, no more and
no less, each importable, and the signatures the contract gives keep their keywords. A name
added or dropped is a decision, made here on purpose, never a side effect of a refactor."""

from __future__ import annotations

import inspect

import pytest

import toolrepair as tr

PUBLIC = (
    "ANY_TOOL",
    "DIALECTS",
    "MODEL_PROFILES",
    "NEED_MORE",
    "AnyTool",
    "ArgumentError",
    "AuditReport",
    "BindFailure",
    "Dialect",
    "Found",
    "Gate",
    "HistoryReport",
    "InputTooLargeError",
    "Limits",
    "ModelProfile",
    "NeedMore",
    "RawCall",
    "ReadContext",
    "ReasoningDelta",
    "RejectReason",
    "Rejection",
    "Repair",
    "RepairEvent",
    "SalvageResult",
    "StreamSalvager",
    "TagDialect",
    "TextDelta",
    "ToolCall",
    "ToolCallReady",
    "ToolExecutionError",
    "ToolOutcome",
    "ToolRegistry",
    "ToolRepairError",
    "ToolResolutionError",
    "ToolSpec",
    "__version__",
    "audit_records",
    "bind_check",
    "fix_record",
    "model_profile",
    "normalize_name",
    "repair_call",
    "repair_history",
    "resolve_tool_names",
    "salvage_text",
    "serialize_result",
    "suggest_names",
)


def test_all_is_the_pinned_list() -> None:
    assert tr.__all__ == PUBLIC  # sorted, a tuple, exactly these names


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(tr, name) is not None


# (callable, keywords the contract in DESIGN.md section 2 gives it)
SIGNATURES = [
    (tr.salvage_text, {"dialects", "mask_fences", "mask_reasoning", "model", "reasoning_calls", "limits"}),
    (
        tr.ToolRegistry,
        {"profile", "max_repairs", "allow", "deny", "limits", "trace_content", "max_repeats", "model"},
    ),
    (tr.StreamSalvager, {"dialects", "mask_fences", "mask_reasoning", "model"}),
    (tr.repair_history, {"tools", "shape", "unanswered"}),
    (tr.resolve_tool_names, {"strict", "on_unknown"}),
    (tr.suggest_names, {"n", "cutoff"}),
    (tr.serialize_result, {"max_chars"}),
    (tr.audit_records, {"tools"}),
    (tr.fix_record, {"tools"}),
]


@pytest.mark.parametrize(("fn", "keywords"), SIGNATURES, ids=lambda x: getattr(x, "__name__", ""))
def test_contract_keywords_are_accepted(fn: object, keywords: set[str]) -> None:
    parameters = inspect.signature(fn).parameters  # type: ignore[arg-type]
    assert keywords <= set(parameters), keywords - set(parameters)


def test_no_class_reuses_a_slot_of_its_base() -> None:
    # A subclass slot named like one of its base's is a second attribute under one name: each
    # class's code then reads the other's value (the registry's trusted stream once shared the
    # salvager's `_tail` and garbled the text it released).
    import importlib
    import inspect
    import pkgutil

    import toolrepair

    clashes = []
    for info in pkgutil.walk_packages(toolrepair.__path__, "toolrepair."):
        if info.name.startswith(("toolrepair.integrations.", "toolrepair.proxy")) or info.name.endswith("__main__"):
            continue  # edges import their frameworks; `__main__` runs the command line
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            own = set(cls.__dict__.get("__slots__", ()))
            for base in cls.__mro__[1:]:
                clashes += [
                    (cls.__qualname__, base.__qualname__, s) for s in own & set(base.__dict__.get("__slots__", ()))
                ]
    assert clashes == []
