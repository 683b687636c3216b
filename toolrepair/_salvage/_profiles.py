"""Model profiles: a model family's dialects and its reasoning convention, as data.

Without a profile the engine must allow for every dialect and every reasoning convention at
once, and one of those, a lone reasoning close (``</think>``) meaning the reply began inside
reasoning, can turn everything before it into reasoning at any point: a stream then holds
what it has until the reply ends. A profile says what the model does instead: its reasoning
markers, and whether its chat template opens reasoning (``opened``: the reply begins inside
the first pair, to its first close). With a profile no close forces reasoning open later, so
a stream releases each call as soon as it closes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .._lazy import lazy
from .._names import normalize_name, suggest_names

__all__ = ["MODEL_PROFILES", "ModelProfile", "model_profile"]


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """A model family's dialects and its reasoning convention.

    ``dialects``: built-in dialect names (see ``DIALECTS``), tried as ``salvage_text``'s
    ``dialects=``. ``reasoning``: the (open, close) marker pairs of the model's reasoning
    blocks (the dialects' own pairs, such as harmony's analysis channel, come with them).
    ``opened``: the chat template opens the first pair, so the reply begins inside reasoning
    and a lone close ends it (Qwen3.5, DeepSeek-R1, Kimi K3 in thinking mode).

    >>> p = ModelProfile("my-qwen", dialects=["hermes"], reasoning=[("<think>", "</think>")], opened=True)
    >>> p.dialects, p.opened
    (('hermes',), True)
    """

    name: str
    dialects: tuple[str, ...]
    reasoning: tuple[tuple[str, str], ...] = ()
    opened: bool = False

    def __init__(
        self,
        name: str,
        *,
        dialects: tuple[str, ...] | list[str],
        reasoning: tuple[tuple[str, str], ...] | list[tuple[str, str]] = (),
        opened: bool = False,
    ) -> None:
        from ._registry import by_name  # the table of built-ins imports every family

        if not isinstance(name, str) or not name:
            raise ValueError("a model profile needs a name")
        if isinstance(dialects, str) or not dialects:  # type: ignore[unreachable]  # a str is a sequence
            raise ValueError("dialects must be a non-empty sequence of built-in dialect names")
        names = tuple(dialects)
        for d in names:
            by_name(d)  # ValueError naming the built-ins for an unknown one
        pairs: list[tuple[str, str]] = []
        for pair in reasoning:
            if not isinstance(pair, tuple | list) or len(pair) != 2 or not all(isinstance(m, str) and m for m in pair):
                raise ValueError(f"a reasoning pair is (open, close), two non-empty strings: {pair!r}")
            pairs.append((pair[0], pair[1]))
        if opened and not pairs:
            raise ValueError("opened=True needs a reasoning pair to be inside")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "dialects", names)
        object.__setattr__(self, "reasoning", tuple(pairs))
        object.__setattr__(self, "opened", bool(opened))


_THINK = (("<think>", "</think>"),)


def _p(
    name: str, dialects: tuple[str, ...], reasoning: tuple[tuple[str, str], ...] = _THINK, opened: bool = False
) -> ModelProfile:
    """A built-in profile, taken as written: checking its dialect names here would import every
    dialect at ``import toolrepair`` (a test checks them against the built-ins instead)."""
    profile = object.__new__(ModelProfile)
    for field, value in (("name", name), ("dialects", dialects), ("reasoning", reasoning), ("opened", opened)):
        object.__setattr__(profile, field, value)
    return profile


# The families' templates and formats as their model cards and chat templates give them.
_TABLE = (
    _p("qwen3", ("hermes",)),  # hybrid thinking: the model opens <think> itself
    _p("qwen3-thinking", ("hermes",), opened=True),  # Qwen3-*-Thinking-2507: the template opens it
    _p("qwen3-coder", ("qwen3_coder",)),
    _p("qwen3.5", ("qwen3_coder",), opened=True),  # Qwen3.5 on: XML calls, thinking pre-filled
    _p("qwen2.5", ("hermes",), ()),
    _p("deepseek-r1", ("deepseek_v3",), opened=True),
    _p("deepseek-v3", ("deepseek_v3",), ()),
    _p("deepseek-v3.1", ("deepseek_v31",)),
    _p("deepseek-v3.2", ("dsml",)),
    _p("gpt-oss", ("harmony",), ()),  # analysis channel: the dialect's own pairs
    _p("gemma4", ("gemma4",), (("<|channel>thought", "<channel|>"),)),
    _p("kimi-k2", ("kimi_k2",)),
    _p("kimi-k2-thinking", ("kimi_k2",), opened=True),
    _p("kimi-k3", ("kimi_k3",), (("<|open|>think<|sep|>", "<|close|>think<|sep|>"),), opened=True),
    _p("glm", ("glm",)),
    _p("glm-4.7", ("glm",), opened=True),  # GLM-4.7 and 5.x: the template opens <think>
    _p("mistral", ("mistral",), (("[THINK]", "[/THINK]"), ("<think>", "</think>"))),
    _p("llama3", ("python_tag", "json")),
    _p("llama4", ("llama4_pythonic", "pythonic")),
    _p("hermes", ("hermes",)),
    _p("minimax", ("minimax_m2", "minimax_m3")),
)

MODEL_PROFILES: Mapping[str, ModelProfile] = MappingProxyType({p.name: p for p in _TABLE})
# Built on the first look-up: normalising a name imports `regex`, which `import toolrepair` does not.
_BY_KEY = lazy(lambda: {normalize_name(p.name): p for p in _TABLE})


def model_profile(name: str) -> ModelProfile:
    """The built-in profile ``name`` (spelling as ``normalize_name`` folds it).

    >>> model_profile("qwen3").dialects
    ('hermes',)
    """
    if not isinstance(name, str):
        raise TypeError(f"a profile name is a str, not {type(name).__name__}")
    found = _BY_KEY().get(normalize_name(name))
    if found is None:
        hint = suggest_names(name, MODEL_PROFILES)
        also = f" Did you mean {hint[0]!r}?" if hint else ""
        raise ValueError(f"Unknown model profile {name!r}.{also} Profiles: {sorted(MODEL_PROFILES)}")
    return found
