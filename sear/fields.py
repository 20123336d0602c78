"""Field metadata: the one place a file format's rules live (pure Python, no Qt).

Every field of the project and sensor dataclasses is declared with `param(...)`, which puts its unit,
bounds, enumeration, label, help and editor hints into the dataclass field's metadata. From that one
declaration come:

- the XSD files (sear/schemas/*.xsd, written by `python -m sear.schemas.generate`),
- the sentences that explain a schema error ("expected a number greater than 0, found '-1'"),
- the limits, units, labels and tooltips of the settings window and the Sensor Wizard.

Numbers are checked through named XSD simple types ("kinds", e.g. `positive`), whose names lxml puts into
its messages and which `meaning_of` turns back into words. A field either names its kind or gives bounds;
bounds that match no built-in kind get a kind of their own when the schema is generated.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from sear.fielddocs import field_docs

FORMAT_VERSION = 1
"""Version of SEAR's file formats (.prj and sensors XML; root attribute `version`): what the writers write,
the readers accept and the schemas describe."""

_NUMBER_PATTERN = r"\s*[+\-]?(\d+(\.\d*)?|\.\d+)([eE][+\-]?\d+)?\s*"

NUMBER_LIMIT = 1e9
"""Largest size of any number in a project or sensors file (every numeric kind derives from `number`,
whose schema type has these bounds): a literal that overflows (1e999 reads as infinity) is refused by the
schema like any other number out of range. No field needs more: 1e9 m is 25 times round the Earth."""

SMALLEST_NUMBER = 1e-100
"""Smallest size of a number other than 0 in a project or sensors file. Nearer 0 than this a number is
damage, not a measurement, and the run would divide by it (1 / 4.9e-324 overflows): refused when the
file is read (sear.xmlio), since an XSD cannot say it."""


@dataclass(frozen=True)
class Kind:
    """A named XSD simple type and what it means to a user.

    Numeric kinds (base `number` or `xs:integer`) have bounds; the others give their restriction as XSD."""

    name: str
    meaning: str
    base: str = "number"
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    xsd: str = ""
    """For non-numeric kinds: the content of <xs:simpleType> (a restriction or list)."""

    @property
    def numeric(self) -> bool:
        return self.base in ("number", "xs:integer", "xs:double")


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("number", "a number from -1e9 to 1e9 (like 1.5 or -2e3)", base="xs:double", minimum=-NUMBER_LIMIT,
         maximum=NUMBER_LIMIT,
         xsd=f'<xs:restriction base="xs:double"><xs:pattern value="{_NUMBER_PATTERN}"/>'
             f'<xs:minInclusive value="{-NUMBER_LIMIT:.0f}"/><xs:maxInclusive value="{NUMBER_LIMIT:.0f}"/>'
             '</xs:restriction>'),
    Kind("positive", "a number greater than 0 (at most 1e9)", minimum=0, maximum=NUMBER_LIMIT,
         exclusive_minimum=True),
    Kind("nonNegative", "a number from 0 to 1e9", minimum=0, maximum=NUMBER_LIMIT),
    Kind("latitude", "a latitude in decimal degrees from -90 to 90", minimum=-90, maximum=90),
    Kind("longitude", "a longitude in decimal degrees from -180 to 180", minimum=-180, maximum=180),
    Kind("fraction", "a number from 0 to 1", minimum=0, maximum=1),
    Kind("percent", "a percentage from 0 to 100", minimum=0, maximum=100),
    Kind("angle360", "an angle in degrees from 0 to 360", minimum=0, maximum=360, exclusive_minimum=True),
    Kind("incidence", "an angle in degrees from 0 to 90", minimum=0, maximum=90),
    Kind("positiveInt", "a whole number from 1 to 1e9", base="xs:integer", minimum=1, maximum=NUMBER_LIMIT),
    Kind("numberList", "one or more numbers separated by spaces", base="",
         xsd='<xs:restriction><xs:simpleType><xs:list itemType="number"/></xs:simpleType>'
             '<xs:minLength value="1"/></xs:restriction>'),
    Kind("vec2", "two numbers separated by spaces (x y)", base="",
         xsd='<xs:restriction base="numberList"><xs:length value="2"/></xs:restriction>'),
    Kind("vec3", "three numbers separated by spaces (x y z)", base="",
         xsd='<xs:restriction base="numberList"><xs:length value="3"/></xs:restriction>'),
    Kind("quaternion", "four numbers separated by spaces (x y z w)", base="",
         xsd='<xs:restriction base="numberList"><xs:length value="4"/></xs:restriction>'),
    Kind("nonEmptyString", "a non-empty text on one line", base="",
         xsd='<xs:restriction base="xs:string"><xs:minLength value="1"/><xs:pattern value=".*\\S.*"/>'
             '</xs:restriction>'),
    Kind("path", "a file path (not empty)", base="",
         xsd='<xs:restriction base="xs:string"><xs:minLength value="1"/></xs:restriction>'),
    Kind("axes", "a combination of the letters x, y and z (like xyz)", base="",
         xsd='<xs:restriction base="xs:string"><xs:pattern value="x?y?z?"/><xs:minLength value="1"/>'
             '</xs:restriction>'),
    Kind("robotName", "a name of letters, digits, _ and - that starts with a letter (like rover_2)", base="",
         xsd='<xs:restriction base="xs:string"><xs:pattern value="[A-Za-z][A-Za-z0-9_\\-]*"/>'
             '<xs:maxLength value="40"/></xs:restriction>'),
)}
"""The kinds every schema shares (sear/schemas/common.xsd), in the file's order."""

_BUILTIN_MEANINGS = {
    "xs:double": "a number (like 1.5 or -2e3)",
    "xs:positiveInteger": "a whole number greater than 0",
    "xs:integer": "a whole number",
    "xs:boolean": "true or false",
}

_extra_meanings: dict[str, str] = {}
"""Meanings of kinds made by schema generation (bounds no built-in kind has, lists of choices)."""


def meaning_of(type_name: str) -> str | None:
    """What the XSD simple type `type_name` (as lxml names it) means to a user, or None if unknown."""
    kind = KINDS.get(type_name)
    if kind is not None:
        return kind.meaning
    return _BUILTIN_MEANINGS.get(type_name) or _extra_meanings.get(type_name)


def note_meaning(type_name: str, meaning: str) -> None:
    """Remember the meaning of a kind the schema generator made."""
    _extra_meanings[type_name] = meaning


def bounds_meaning(minimum: float | None, maximum: float | None, exclusive_minimum: bool, integer: bool) -> str:
    """Words for a range of numbers, for kinds made from a field's own bounds."""
    what = "a whole number" if integer else "a number"
    if minimum is not None and maximum is not None:
        lower = f"greater than {minimum:g}" if exclusive_minimum else f"from {minimum:g}"
        return f"{what} {lower} to {maximum:g}" if not exclusive_minimum else f"{what} {lower} and at most {maximum:g}"
    if minimum is not None:
        return f"{what} greater than {minimum:g}" if exclusive_minimum else f"{what} of {minimum:g} or more"
    if maximum is not None:
        return f"{what} of at most {maximum:g}"
    return what


# --- declaring fields --------------------------------------------------------------------------------

UNIT_SUFFIXES = (
    ("_mv_per_g", "mV/g"), ("_mps2", "m/s²"), ("_dps", "°/s"), ("_pct", "%"), ("_deg", "°"), ("_hz", "Hz"),
    ("_mm", "mm"), ("_cm", "cm"), ("_mv", "mV"), ("_g", "g"), ("_m", "m"),
)
"""Field-name endings that say the unit (sensor fields keep the datasheet's unit in their names)."""

_KEY = "sear"


def param(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING,
          unit: str | None = None, kind: str | None = None, minimum: float | None = None,
          maximum: float | None = None, exclusive_minimum: bool = False, choices: tuple[str, ...] = (),
          label: str | None = None, help: str | None = None, group: str = "",
          visible_when: dict[str, Any] | None = None, required: bool = False, attribute: bool = False,
          decimals: int | None = None, type_name: str = "", widget: str = "",
          enumeration: Callable[[], tuple[str, ...]] | None = None, **field_kwargs: Any) -> Any:
    """A dataclass field with SEAR's metadata.

    unit: shown beside editors (default: from the name's ending, e.g. `_cm`); kind: the XSD simple type
    that checks the value (e.g. "positive"); minimum/maximum/exclusive_minimum: bounds instead of a kind;
    choices: allowed words of a list field (e.g. wheel ids); label/help: the editor's label and tooltip
    (help defaults to the docstring under the field); group: where an editor puts it ("noise", ...);
    visible_when: {other field: value} for fields that apply only then (e.g. digital output only);
    required: the element must be present in the file; attribute: stored as an XML attribute;
    decimals: editor precision; type_name: XSD name for an enumeration; widget: an editor hint
    ("axes", "wheels", "point2", "numbers"); enumeration: for a text field, a function giving the words it
    accepts now (a registry's names, which can grow at run time: the drive models).
    """
    metadata = {_KEY: dict(unit=unit, kind=kind, minimum=minimum, maximum=maximum,
                           exclusive_minimum=exclusive_minimum, choices=tuple(choices), label=label, help=help,
                           group=group, visible_when=dict(visible_when or {}), required=required,
                           attribute=attribute, decimals=decimals, type_name=type_name, widget=widget,
                           enumeration=enumeration)}
    return dataclasses.field(default=default, default_factory=default_factory, metadata=metadata, **field_kwargs)


@dataclass(frozen=True)
class FieldInfo:
    """Everything declared about one field, with defaults filled in."""

    name: str
    type: Any
    """The field's type with Optional removed."""
    optional: bool
    """The type allows None (the element is then left out of the file)."""
    unit: str
    label: str
    declared_help: str
    """The help declared with param(help=...), '' when the docstring under the field is the help."""
    owner: Any
    """The dataclass the field was asked of, whose source holds the docstrings under its fields."""
    kind: str
    """XSD simple type name for scalar fields ('' for enumerations, nested dataclasses and dicts)."""
    minimum: float | None
    maximum: float | None
    exclusive_minimum: bool
    choices: tuple[str, ...]
    group: str
    visible_when: dict[str, Any]
    required: bool
    attribute: bool
    decimals: int | None
    type_name: str
    widget: str
    words: Callable[[], tuple[str, ...]] | None = None
    """For a text field whose words come from a registry: gives them as they are now."""

    @property
    def help(self) -> str:
        """The editor's tooltip: param(help=...), else the docstring under the field. Read from the source
        only when asked (a window's tooltips), not for every schema a run generates: parsing the modules
        took a tenth of a second of `sear run`'s start, for text no schema holds."""
        return self.declared_help or field_docs(self.owner).get(self.name, "")

    @property
    def is_number(self) -> bool:
        return self.type in (float, int)

    @property
    def enumeration(self) -> tuple[str, ...]:
        """Allowed values of a Literal field, or of a text field declared with an `enumeration` (as the
        registry it asks holds them now); empty for other fields."""
        if self.words is not None:
            return tuple(self.words())
        return tuple(typing.get_args(self.type)) if typing.get_origin(self.type) is Literal else ()

    def meaning(self) -> str:
        """What the field accepts, in words (for tooltips and refusals)."""
        if self.kind in KINDS:
            return KINDS[self.kind].meaning
        if self.is_number:
            return bounds_meaning(self.minimum, self.maximum, self.exclusive_minimum, self.type is int)
        return meaning_of(self.kind) or ""

    def bounds(self) -> tuple[float, float, bool, str]:
        """(min, max, min excluded, meaning) for a number editor: it refuses what loading would refuse."""
        lo = -NUMBER_LIMIT if self.minimum is None else float(self.minimum)
        hi = NUMBER_LIMIT if self.maximum is None else float(self.maximum)
        return lo, hi, self.exclusive_minimum, self.meaning()


def number_problem(value: float) -> str | None:
    """Why a number read from a file cannot be used whatever its field (not finite, larger than
    NUMBER_LIMIT, nearer 0 than SMALLEST_NUMBER), as the end of a sentence; None when it can."""
    if math.isnan(value):
        return "it is not a number (NaN)"
    if math.isinf(value):
        return "it is too large to be a number (it overflows to infinity)"
    if abs(value) > NUMBER_LIMIT:
        return f"numbers in SEAR's files are at most {NUMBER_LIMIT:g} in size"
    if value != 0 and abs(value) < SMALLEST_NUMBER:
        return f"it is too near 0 to compute with; use 0 or a number of at least {SMALLEST_NUMBER:g} in size"
    return None


def strip_optional(tp: Any) -> tuple[Any, bool]:
    """(T, True) for `T | None`, else (tp, False)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return tp, False


def unit_of(name: str) -> str:
    """The unit a field name ends with (e.g. 'beam_width_cm' -> 'cm'), or ''."""
    for suffix, unit in UNIT_SUFFIXES:
        if name.endswith(suffix):
            return unit
    return ""


def label_of(name: str) -> str:
    """'beam_width_cm' -> 'Beam width'."""
    for suffix, _unit in UNIT_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    text = name.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def _default_kind(tp: Any) -> str:
    if tp is bool:
        return "xs:boolean"
    if tp is float:
        return "number"
    if tp is int:
        return "xs:integer"
    if tp is Path:
        return "path"
    if tp is str:
        return "xs:string"
    if typing.get_origin(tp) is tuple:
        args = typing.get_args(tp)
        if args and args[0] is float:
            if len(args) == 2 and args[1] is Ellipsis:
                return "numberList"
            return {2: "vec2", 3: "vec3", 4: "quaternion"}.get(len(args), "numberList")
    return ""


def list_item_tag(field_name: str) -> str:
    """The element of one item of a list field: its name's last word in the singular ('extra_robots' holds
    <robot> elements, 'boxes' <box>, 'shelves' <shelf>)."""
    word = field_name.rsplit("_", 1)[-1]
    if word.endswith("ves"):
        return word[:-3] + "f"
    if word.endswith(("xes", "ches", "shes", "sses")):
        return word[:-2]
    return word.rstrip("s")


def fields_of(cls: Any) -> tuple[FieldInfo, ...]:
    """The declared fields of dataclass `cls`, in order (inherited fields first); worked out once."""
    return _fields_of(cls)


@cache
def _fields_of(cls: Any) -> tuple[FieldInfo, ...]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        meta = dict(f.metadata.get(_KEY, {}))
        tp, optional = strip_optional(hints[f.name])
        kind = meta.get("kind") or ""
        minimum, maximum = meta.get("minimum"), meta.get("maximum")
        exclusive = bool(meta.get("exclusive_minimum"))
        if kind in KINDS and KINDS[kind].numeric and minimum is None and maximum is None:
            k = KINDS[kind]
            minimum, maximum, exclusive = k.minimum, k.maximum, k.exclusive_minimum
        elif not kind and tp in (float, int) and (minimum is not None or maximum is not None):
            kind = _matching_kind(minimum, maximum, exclusive, tp is int)
        bounded = tp in (float, int) and (minimum is not None or maximum is not None)
        if not kind and not bounded and typing.get_origin(tp) is not Literal and not dataclasses.is_dataclass(tp) \
                and typing.get_origin(tp) is not dict and not meta.get("choices") and not meta.get("enumeration"):
            kind = _default_kind(tp)
        unit = meta.get("unit")
        out.append(FieldInfo(
            name=f.name, type=tp, optional=optional,
            unit=unit_of(f.name) if unit is None else unit,
            label=meta.get("label") or label_of(f.name),
            declared_help=meta.get("help") or "", owner=cls,
            kind=kind, minimum=minimum, maximum=maximum, exclusive_minimum=exclusive,
            choices=tuple(meta.get("choices") or ()), group=meta.get("group") or "",
            visible_when=dict(meta.get("visible_when") or {}), required=bool(meta.get("required")),
            attribute=bool(meta.get("attribute")), decimals=meta.get("decimals"),
            type_name=meta.get("type_name") or "", widget=meta.get("widget") or "",
            words=meta.get("enumeration"),
        ))
    return tuple(out)


def field_info(cls: Any, name: str) -> FieldInfo:
    """The declared metadata of field `name` of dataclass `cls`."""
    for info in fields_of(cls):
        if info.name == name:
            return info
    raise KeyError(f"{cls.__name__} has no field {name!r}")


def _matching_kind(minimum: float | None, maximum: float | None, exclusive: bool, integer: bool) -> str:
    """The built-in numeric kind with exactly these bounds, or '' (the generator then makes one)."""
    for kind in KINDS.values():
        if (kind.numeric and (kind.base == "xs:integer") == integer and kind.minimum == minimum
                and kind.maximum == maximum and kind.exclusive_minimum == exclusive and kind.name != "number"):
            return kind.name
    return ""
