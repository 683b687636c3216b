"""Schema coercion and validation: a tool's JSON Schema applied to decoded arguments.

:func:`compile_schema` builds a :class:`CompiledSchema` once per tool; ``apply`` renames
misnamed keys, coerces values where that is safe (each coercion a ``coerce`` event), then
validates with ``jsonschema``, the only validator, which also writes every error message.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
import warnings
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # jsonschema is imported when the first schema is compiled (most of import time otherwise)
    import jsonschema.exceptions
    import regex  # imported when the first argument name is matched
    from referencing.exceptions import Unresolvable

from .._errors import ArgumentError
from .._lazy import lazy
from .._limits import DEFAULT_LIMITS
from .._safe_text import exact_str, has_long_int, int_fits_text
from .._spec import expected_from_schema
from .._types import RepairEvent
from ._decode import _MAX_NUMBER_CHARS, _MISSING, _NUMBER, NullText, SpelledFloat, decode_json_value, is_null_text

__all__ = ["CompiledSchema", "compile_schema"]


# NFKC + casefold, then drop format characters (zero-width, bidi), '_', '-' and whitespace.
@lazy
def _KEY_NOISE() -> regex.Pattern[str]:
    import regex

    return regex.compile(r"[\p{Cf}_\-\s]+")


_KEY_SUFFIX: Final = lazy(lambda: re.compile(r"\s*[=:]\s*\Z"))
_INT_TEXT: Final = lazy(lambda: re.compile(r"(-?[0-9]+)(?:\.0+)?"))
# The coercion walk takes a step per value level and per schema it composes ($ref, a union's
# branch, allOf): a level may sit behind up to this many steps and still be coerced. Its bound
# is this times ``Limits.max_depth``, the one depth limit.
_STEPS_PER_LEVEL: Final = 4
# Longer keys are never renamed: no property name is this long, and the cache stays small.
_MAX_KEY_CHARS: Final = 256
_TYPE_WORDS: Final = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "a boolean (true or false)",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


@lru_cache(maxsize=4096)
def _normalize_key(key: str) -> str:
    """``' Query= '`` -> ``'query'``: the spelling-insensitive form of an argument name."""
    key = _KEY_SUFFIX().sub("", key.strip())
    return _KEY_NOISE().sub("", unicodedata.normalize("NFKC", key).casefold())


def _is_strict_int(checker: object, instance: object) -> bool:
    # jsonschema accepts 5.0 as an integer; tools taking int do not, so 5.0 is coerced instead.
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_type(value: object, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    return True  # an unknown type name: never coerce towards it


def _coerce_to(value: object, name: str, max_depth: int = DEFAULT_LIMITS.max_depth) -> Any:
    """``value`` converted to JSON type ``name`` where that is lossless, else ``_MISSING``;
    JSON text (towards an array or object) is decoded within ``max_depth``."""
    if isinstance(value, str):
        convert = _FROM_TEXT.get(name)
        return _MISSING if convert is None else convert(value, name, max_depth)
    if isinstance(value, bool):
        return _MISSING
    if name == "integer" and isinstance(value, float):
        return _exact_int(value)
    if name == "string" and isinstance(value, int | float):
        return _number_text(value)
    return _MISSING


def _text_to_number(value: str, name: str, max_depth: int) -> Any:
    """``"5"`` (and ``"5.0"`` for an integer: no rounding, no exponent); a fraction for a number."""
    text = value.strip()
    if len(text) > _MAX_NUMBER_CHARS or not _NUMBER.fullmatch(text):
        return _MISSING
    whole = _INT_TEXT().fullmatch(text)
    if whole is not None:
        return int(whole.group(1))
    if name == "integer":
        return _MISSING
    number = float(text)
    return number if number - number == 0.0 else _MISSING


def _text_to_boolean(value: str, name: str, max_depth: int) -> Any:
    folded = value.strip().casefold()
    return True if folded == "true" else False if folded == "false" else _MISSING


def _text_to_null(value: str, name: str, max_depth: int) -> Any:
    return None if is_null_text(value) else _MISSING


def _text_to_json(value: str, name: str, max_depth: int) -> Any:
    """An array or object written as JSON text (double-encoded), within ``max_depth`` levels
    (the registry then holds the whole coerced value to the same limit)."""
    try:
        decoded = decode_json_value(value, max_depth=max_depth)[0]
    except ArgumentError as exc:
        if exc.reason == "duplicate-key":  # refused as it is in the arguments themselves
            raise
        return _MISSING
    return decoded if _is_type(decoded, name) else _MISSING


# Target type -> the conversion of a string towards it (none towards "string": it is one).
_FROM_TEXT: Final[dict[str, Callable[[str, str, int], Any]]] = {
    "integer": _text_to_number,
    "number": _text_to_number,
    "boolean": _text_to_boolean,
    "null": _text_to_null,
    "array": _text_to_json,
    "object": _text_to_json,
}


def _number_text(value: float) -> Any:
    """The model's own spelling: `1.10` stays '1.10', `1e3` '1e3' (a float's repr is the
    spelling of every float not kept as a SpelledFloat)."""
    if isinstance(value, SpelledFloat):
        return value.text
    if isinstance(value, int):
        return str(value) if int_fits_text(value) else _MISSING
    return float.__repr__(value) if math.isfinite(value) else _MISSING


def _exact_int(value: float) -> Any:
    """The integer ``value`` is, exactly as written: ``12345678901234567.0`` is 12345678901234567
    (the float alone says ...568); ``_MISSING`` when the number written is not an integer."""
    if isinstance(value, SpelledFloat):
        # Finite, so at most 309 integer digits: Decimal reads and converts it in linear time.
        from decimal import Decimal  # on first use: not a cost of ``import toolrepair``

        number = Decimal(value.text)
        return int(number) if number == number.to_integral_value() else _MISSING
    return int(value) if value.is_integer() else _MISSING


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _show(value: object, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


_STRICT_CLASSES: dict[type[Any], type[Any]] = {}


def _unresolvable() -> type[Unresolvable]:
    """referencing's error for a broken ``$ref`` (loaded with jsonschema, which a validator needs first)."""
    from referencing.exceptions import Unresolvable

    return Unresolvable


def _validator_class(schema: Mapping[str, Any]) -> type[Any]:
    import jsonschema.validators

    with warnings.catch_warnings():
        # An unknown $schema falls back to the latest draft with a DeprecationWarning.
        warnings.simplefilter("ignore", DeprecationWarning)
        base: type[Any] = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    strict = _STRICT_CLASSES.get(base)
    if strict is None:
        checker = base.TYPE_CHECKER.redefine("integer", _is_strict_int)
        strict = jsonschema.validators.extend(base, type_checker=checker)  # type: ignore[no-untyped-call]
        _STRICT_CLASSES[base] = strict
    return strict


_Check = Callable[[Any], bool]

# Keywords that never make an instance invalid (annotations), and no-op values of the others.
_ANNOTATIONS = frozenset(("title", "description", "$schema", "$id", "$comment", "examples", "default"))
_NO_OP = {"properties": {}, "required": [], "additionalProperties": True}


def _vacuous(schema: Mapping[str, Any]) -> bool:
    """Whether ``schema`` accepts every JSON object: ``{}``, ``{"type": "object"}`` and the
    like, with annotations and no-op keywords only (what tools given by name get)."""
    return all(
        key in _ANNOTATIONS
        or (key == "type" and value in ("object", ["object"]))
        or (key in _NO_OP and value == _NO_OP[key] and type(value) is type(_NO_OP[key]))
        for key, value in schema.items()
    )


class _Run:
    """What one ``apply`` call carries through the coercion walk."""

    __slots__ = ("events", "max_depth", "tool")

    def __init__(self, tool: str, events: list[RepairEvent], max_depth: int) -> None:
        self.tool = tool
        self.events = events
        self.max_depth = max_depth  # Limits.max_depth


def _coerced(path: str, before: Any, after: Any, tool: str) -> RepairEvent:
    return RepairEvent(
        "coerce",
        f"Coerced {path or 'arguments'!r} from {_short(before)} to {_short(after)}",
        tool=tool,
        before=before,
        after=after,
        path=path or None,
    )


def _coerce_type(value: Any, types: Any, path: str, run: _Run) -> Any:
    """``value`` converted to the first of ``types`` it converts to losslessly, unless it has
    one of them already."""
    # check_schema has already made "type" a name or a list of names.
    names = [types] if isinstance(types, str) else types if isinstance(types, list) else []
    if type(value) is NullText:  # raw tag text spelling null
        if "null" in names:
            run.events.append(_coerced(path, value, None, run.tool))
            return None
        value = exact_str(value)  # the string the model wrote, a plain str from here on
    if not names or any(_is_type(value, name) for name in names):
        return value
    for name in names:
        new = _coerce_to(value, name, run.max_depth)
        if new is not _MISSING:
            run.events.append(_coerced(path, value, new, run.tool))
            return new
    return value


def _coerce_enum(value: Any, enum: Any, path: str, run: _Run) -> Any:
    """A string ``value`` as the one ``enum`` member it equals but for case and surrounding space."""
    if not isinstance(enum, list) or not isinstance(value, str) or value in enum:
        return value
    folded = value.strip().casefold()
    matches = [item for item in enum if isinstance(item, str) and item.casefold() == folded]
    if len(matches) != 1:
        return value
    run.events.append(_coerced(path, value, matches[0], run.tool))
    return matches[0]


class CompiledSchema:
    """A tool's argument schema, prepared once: names, renames, coercion plan and validator.

    >>> compile_schema({"properties": {"n": {"type": "integer"}}}).apply({"N": "5"}, tool="t")[0]
    {'n': 5}
    """

    __slots__ = (
        "_branch_checks",
        "_known",
        "_normalized",
        "_patterns",
        "_properties",
        "_root",
        "_top",
        "_vacuous",
        "_validator",
        "allows_additional",
    )

    allows_additional: bool

    def __init__(self, schema: Mapping[str, Any]) -> None:
        if not isinstance(schema, Mapping):
            raise TypeError(f"an argument schema must be a mapping, got {type(schema).__name__}")
        cls = _validator_class(schema)
        import jsonschema.exceptions

        try:
            cls.check_schema(schema)
        except jsonschema.exceptions.SchemaError as exc:
            raise ValueError(f"Invalid JSON Schema for arguments: {exc.message}") from exc
        self._root = schema
        self._validator: Any = cls(schema)
        self._vacuous = _vacuous(schema)
        self._branch_checks: dict[int, _Check] = {}
        top = self._top = self._resolve_all(schema)
        properties = top.get("properties")
        self._properties: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        self.allows_additional = top.get("additionalProperties", True) is not False
        patterns = top.get("patternProperties")
        # Keys matched by patternProperties are declared too; jsonschema judges their values.
        self._patterns = (
            [re.compile(p) for p in patterns if isinstance(p, str)] if isinstance(patterns, Mapping) else []
        )
        self._known = frozenset(self._properties)
        # normalised spelling -> every property with that spelling (two means ambiguous)
        self._normalized: dict[str, list[str]] = {}
        for name in self._properties:
            self._normalized.setdefault(_normalize_key(name), []).append(name)

    @property
    def expected(self) -> dict[str, list[str]]:
        """``{"required": [...], "optional": [...]}`` of the top-level object schema."""
        return expected_from_schema(self._top)

    # -- references ---------------------------------------------------------------------------

    def _resolve(self, ref: str) -> Mapping[str, Any] | None:
        """A local ``#/...`` reference (``$defs``, ``definitions``) within the root schema."""
        if ref == "#":
            return self._root
        if not ref.startswith("#/"):
            return None
        node: Any = self._root
        for escaped in ref[2:].split("/"):
            part = escaped.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node if isinstance(node, Mapping) else None

    def _resolve_all(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        seen = 0
        while isinstance(schema.get("$ref"), str) and "properties" not in schema and seen < 32:
            target = self._resolve(schema["$ref"])
            if target is None:
                break
            schema = target
            seen += 1
        return schema

    def _branch_check(self, branch: Any) -> _Check:
        """Validity against one union branch, as jsonschema sees it."""
        key = id(branch)  # branches live as long as the root schema, so ids are stable
        check = self._branch_checks.get(key)
        if check is None:
            # evolve keeps the root's reference resolver, so '#/$defs/...' still resolves.
            check = self._validator.evolve(schema=branch).is_valid
            self._branch_checks[key] = check
        return check

    # -- apply --------------------------------------------------------------------------------

    def apply(
        self, arguments: Mapping[str, Any], *, tool: str, max_depth: int = DEFAULT_LIMITS.max_depth
    ) -> tuple[dict[str, Any], tuple[RepairEvent, ...]]:
        """Rename misnamed keys, coerce values where safe, validate; return arguments and events.

        ``max_depth`` is ``Limits.max_depth``: JSON text coerced to an array or object is
        decoded within it, and the coercion walk goes as deep.

        Raises :class:`ArgumentError` (``ambiguous``, ``unknown-key``, ``missing``, ``type``,
        ``enum``, ``constraint`` or ``too-deep``); the message has no parameter hint.
        """
        args = dict(arguments)
        if self._vacuous:
            # Nothing to rename, coerce or reject, and jsonschema would accept the dict (see
            # ``_vacuous``): its answer is known since compile time, which saves its fixed
            # cost per call (several us) and the coercion walk for name-only tools.
            if NullText in map(type, args.values()):  # no type allows null: the text stays
                args = {k: exact_str(v) if type(v) is NullText else v for k, v in args.items()}
            return args, ()
        try:
            # Raw tag text spelling null may be None under this schema: the walk decides.
            if self._known.issuperset(args) and NullText not in map(type, args.values()) and self._is_valid(args):
                return args, ()
            return self._repair(args, tool, max_depth)
        except ArgumentError:
            raise
        except ValueError:
            # jsonschema writes repr(instance) into its messages, which raises for an int past
            # the int-string limit (only native arguments hold one: decoding refuses them).
            if not has_long_int(args):
                raise
            raise ArgumentError("Arguments hold an integer with too many digits to check", reason="too-large") from None
        except _unresolvable() as exc:
            # A broken $ref in the tool's schema: fail closed, and say it is the schema's fault.
            raise ArgumentError(
                f"Arguments cannot be checked: the tool's schema refers to {exc.ref!r}, which does not exist",
                reason="constraint",
            ) from None

    def _repair(
        self, args: dict[str, Any], tool: str, max_depth: int
    ) -> tuple[dict[str, Any], tuple[RepairEvent, ...]]:
        events: list[RepairEvent] = []
        if self._normalized:
            args = self._rename(args, tool, events)
        try:
            coerced = self._coerce(args, self._root, "", 0, _Run(tool, events, max_depth))
        except RecursionError:  # a deep union check inside jsonschema; validation says too-deep
            coerced = args
        if not self._is_valid(coerced):
            raise self._first_error(coerced)
        return coerced, tuple(events)

    def _is_valid(self, args: dict[str, Any]) -> bool:
        """Validity as jsonschema sees it."""
        try:
            return bool(self._validator.is_valid(args))
        except RecursionError:
            raise ArgumentError("Arguments nest too deeply to validate", reason="too-deep") from None

    def _rename(self, args: dict[str, Any], tool: str, events: list[RepairEvent]) -> dict[str, Any]:
        known = self._known
        renamed: dict[str, Any] = {}
        source: dict[str, str] = {}  # property -> the key that supplied it
        for key, value in args.items():
            target = key if key in known else self._property_named(key)
            if target in source:
                raise ArgumentError(
                    f"Arguments {source[target]!r} and {key!r} both name {target!r}",
                    reason="ambiguous",
                    path=target,
                )
            source[target] = key
            renamed[target] = value
            if target != key:
                events.append(
                    RepairEvent(
                        "rename",
                        f"Renamed argument {key!r} -> {target!r}",
                        tool=tool,
                        before=key,
                        after=target,
                        path=target,
                    )
                )
        return renamed

    def _property_named(self, key: str) -> str:
        """The property a key that is none names: the one property with its normalised spelling,
        or the key itself where additional keys are allowed. Raises ``ambiguous`` or ``unknown-key``."""
        candidates = (
            self._normalized.get(_normalize_key(key)) if isinstance(key, str) and len(key) <= _MAX_KEY_CHARS else None
        )
        if candidates is not None:
            if len(candidates) > 1:
                raise ArgumentError(
                    f"Argument {key!r} is ambiguous: it could mean " + " or ".join(repr(name) for name in candidates),
                    reason="ambiguous",
                    path=key,
                )
            return candidates[0]
        if not self.allows_additional and not any(
            pattern.search(key) for pattern in self._patterns if isinstance(key, str)
        ):
            raise ArgumentError(f"Unexpected argument {key!r}", reason="unknown-key", path=str(key))
        return key

    def _coerce(self, value: Any, schema: Any, path: str, depth: int, run: _Run) -> Any:
        """``value`` coerced towards ``schema``; recursive, bounded by the coercion depth limit.

        In the order jsonschema's verdict depends on them: the schemas this one composes
        (``$ref``, unions, ``allOf``), then its ``type``, its ``enum``, then the members."""
        if depth > _STEPS_PER_LEVEL * run.max_depth or not isinstance(schema, Mapping):
            return value
        value = self._coerce_composed(value, schema, path, depth, run)
        value = _coerce_type(value, schema.get("type"), path, run)
        value = _coerce_enum(value, schema.get("enum"), path, run)
        if isinstance(value, dict):
            return self._coerce_properties(value, schema, path, depth, run)
        if isinstance(value, list):
            return self._coerce_items(value, schema, path, depth, run)
        return value

    def _coerce_composed(self, value: Any, schema: Mapping[str, Any], path: str, depth: int, run: _Run) -> Any:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = self._resolve(ref)
            if target is not None:
                value = self._coerce(value, target, path, depth + 1, run)
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list) and branches:
                value = self._coerce_union(value, branches, path, depth, run)
        all_of = schema.get("allOf")
        if isinstance(all_of, list):
            for branch in all_of:
                value = self._coerce(value, branch, path, depth + 1, run)
        return value

    def _coerce_properties(
        self, value: dict[str, Any], schema: Mapping[str, Any], path: str, depth: int, run: _Run
    ) -> dict[str, Any]:
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        if not (isinstance(properties, Mapping) or isinstance(additional, Mapping)):
            return value
        properties = properties if isinstance(properties, Mapping) else {}
        extra = additional if isinstance(additional, Mapping) else None
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = properties.get(key, extra)
            out[key] = item if sub is None else self._coerce(item, sub, _join(path, key), depth + 1, run)
        return out

    def _coerce_items(self, value: list[Any], schema: Mapping[str, Any], path: str, depth: int, run: _Run) -> list[Any]:
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        # Draft 2020-12's prefixItems, or the older array form of items.
        prefix = prefix if isinstance(prefix, list) else items if isinstance(items, list) else []
        rest = items if isinstance(items, Mapping) else None
        if not prefix and rest is None:
            return value
        result: list[Any] = []
        for index, item in enumerate(value):
            sub = prefix[index] if index < len(prefix) else rest
            result.append(item if sub is None else self._coerce(item, sub, _join(path, index), depth + 1, run))
        return result

    def _coerce_union(self, value: Any, branches: list[Any], path: str, depth: int, run: _Run) -> Any:
        checks = [self._branch_check(branch) for branch in branches]
        if type(value) is NullText and any(check(None) for check in checks):  # as in _coerce_type
            run.events.append(_coerced(path, value, None, run.tool))
            return None
        if any(check(value) for check in checks):
            return value
        for branch, check in zip(branches, checks, strict=True):
            trial = _Run(run.tool, [], run.max_depth)
            candidate = self._coerce(value, branch, path, depth + 1, trial)
            if check(candidate):
                run.events.extend(trial.events)
                return candidate
        return value

    # -- errors -------------------------------------------------------------------------------

    def _first_error(self, args: dict[str, Any]) -> ArgumentError:
        import jsonschema.exceptions

        try:
            error = jsonschema.exceptions.best_match(self._validator.iter_errors(args))
        except RecursionError:  # is_valid stopped at a shallow error; best_match went on
            return ArgumentError("Arguments nest too deeply to validate", reason="too-deep")
        if error is None:  # pragma: no cover - is_valid and iter_errors agree
            return ArgumentError("Arguments are invalid", reason="constraint")
        return _describe(error)


def _describe(error: jsonschema.exceptions.ValidationError) -> ArgumentError:
    """An error message a model can act on: the argument path and what was expected."""
    union = _maybe_type_union(error)
    if union is not None:
        return union
    path = _path_of(error)
    describe = _DESCRIBERS.get(str(error.validator))
    if describe is not None:
        return describe(error, path)
    subject = f"Argument {path!r}" if path else "Arguments"
    verb = "is" if path else "are"
    return ArgumentError(f"{subject} {verb} invalid: {error.message}", reason="constraint", path=path or None)


def _maybe_type_union(error: jsonschema.exceptions.ValidationError) -> ArgumentError | None:
    """A union of plain types fails as "must be an integer or null", not as one branch's error."""
    import jsonschema.exceptions

    union = error if error.validator in ("anyOf", "oneOf") else error.parent
    if not (
        isinstance(union, jsonschema.exceptions.ValidationError)
        and union.validator in ("anyOf", "oneOf")
        and union.context
        and all(sub.validator == "type" and not sub.relative_path for sub in union.context)
    ):
        return None
    wanted: list[str] = []
    for sub in union.context:
        declared: Any = sub.validator_value
        kinds = declared if isinstance(declared, list) else [declared]
        wanted += [kind for kind in kinds if kind not in wanted]
    return _type_error(union, wanted)


def _path_of(error: jsonschema.exceptions.ValidationError) -> str:
    path = ""
    for part in error.absolute_path:
        path = _join(path, part)
    return path


def _missing_error(error: jsonschema.exceptions.ValidationError, path: str) -> ArgumentError:
    required: Any = error.validator_value
    instance = error.instance
    missing = [name for name in required if isinstance(instance, dict) and name not in instance]
    name = _join(path, missing[0]) if missing else path
    return ArgumentError(f"Missing required argument {name!r}", reason="missing", path=name)


def _unexpected_error(error: jsonschema.exceptions.ValidationError, path: str) -> ArgumentError:
    # jsonschema names each unexpected key by its repr in the message; keep instance order.
    keys = error.instance if isinstance(error.instance, dict) else {}
    extras = [key for key in keys if repr(key) in error.message]
    name = _join(path, extras[0]) if extras else path
    return ArgumentError(f"Unexpected argument {name!r}", reason="unknown-key", path=name)


def _enum_error(error: jsonschema.exceptions.ValidationError, path: str) -> ArgumentError:
    subject = f"Argument {path!r}" if path else "Arguments"
    return ArgumentError(
        f"{subject} must be one of {error.validator_value!r}, got {_show(error.instance)}",
        reason="enum",
        path=path or None,
    )


def _type_error(error: jsonschema.exceptions.ValidationError, kinds: list[Any]) -> ArgumentError:
    path = _path_of(error)
    words = " or ".join(_TYPE_WORDS.get(kind, repr(kind)) for kind in kinds)
    subject = f"Argument {path!r}" if path else "Arguments"
    return ArgumentError(f"{subject} must be {words}, got {_show(error.instance)}", reason="type", path=path or None)


def _declared_type_error(error: jsonschema.exceptions.ValidationError, path: str) -> ArgumentError:
    declared: Any = error.validator_value
    return _type_error(error, list(declared) if isinstance(declared, list) else [declared])


# The failing keyword -> its message; every other keyword is a "constraint".
_DESCRIBERS: Final[dict[str, Callable[[jsonschema.exceptions.ValidationError, str], ArgumentError]]] = {
    "required": _missing_error,
    "additionalProperties": _unexpected_error,
    "unevaluatedProperties": _unexpected_error,
    "type": _declared_type_error,
    "enum": _enum_error,
}


def compile_schema(schema: Mapping[str, Any]) -> CompiledSchema:
    """Prepare a tool's JSON Schema for :meth:`CompiledSchema.apply`; build once per tool.

    Raises ``ValueError`` for a schema that is not valid JSON Schema. Checking a schema against
    its metaschema costs milliseconds, so compiled schemas are cached by content (a registry
    rebuilt per request pays it once); the cached copy is private, so later changes to
    ``schema`` do not leak into it.

    >>> compile_schema({"properties": {"q": {"type": "string"}}, "required": ["q"]}).expected
    {'required': ['q'], 'optional': []}
    """
    if not isinstance(schema, Mapping):
        raise TypeError(f"an argument schema must be a mapping, got {type(schema).__name__}")
    try:
        key = json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError, RecursionError):  # not plain JSON: compile it as it is
        return CompiledSchema(schema)
    return _compile_cached(key)


@lru_cache(maxsize=512)
def _compile_cached(key: str) -> CompiledSchema:
    schema: Mapping[str, Any] = json.loads(key)
    return CompiledSchema(schema)
