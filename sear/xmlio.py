"""Safe, schema-validated XML files for SEAR's dataclass models (.prj and sensors XML): reading them, and
mapping dataclasses to elements and back.

Both formats map dataclass fields one to one onto child elements of the same name, so the documentation,
the schema and the code cannot drift apart in naming. Reading is hardened: no DTDs, no entity
expansion, no network access; documents that declare a DOCTYPE are refused outright. Every schema
violation becomes a sentence naming the file, line and field and what is expected. Saving such a file
(atomically, keeping the user's comments) is sear.saving's.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import typing
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, Literal

from lxml import etree

from sear.errors import ProjectError
from sear.fields import FORMAT_VERSION, fields_of, list_item_tag, meaning_of, number_problem, strip_optional

_PARSER_OPTIONS = dict(
    resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False, huge_tree=False,
    remove_comments=False,
)


def parser() -> etree.XMLParser:
    """The hardened parser every SEAR XML file is read with (no DTD, no entities, no network)."""
    return etree.XMLParser(**_PARSER_OPTIONS)


def _common_schema() -> str:
    from sear.xsd import common_xsd

    return common_xsd()


def _unchanging() -> int:
    return 0


_SCHEMAS: dict[str, tuple[Callable[[], str], Callable[[], int]]] = {
    "common.xsd": (_common_schema, _unchanging),
}
"""Schema name -> (its text, a number that changes when the text would). Each format's module provides its
own: sear.project the project's, sear.sensors.registry the sensors file's (it alone knows the types)."""


def provide_schema(name: str, text: Callable[[], str], generation: Callable[[], int] = _unchanging) -> None:
    """Make `name` a schema that files can be checked against: `text()` gives the self-contained XSD,
    made again whenever `generation()` changes (so it can follow a registry of types)."""
    _SCHEMAS[name] = (text, generation)


def _provider(name: str) -> tuple[Callable[[], str], Callable[[], int]]:
    try:
        return _SCHEMAS[name]
    except KeyError:
        raise ValueError(f"no schema named {name!r} has been provided") from None


def _generation(name: str) -> int:
    """Changes when what the schema `name` is generated from changes (sensor types registered)."""
    return _provider(name)[1]()


def schema_text(name: str) -> str:
    """The XSD text files are checked against now under the schema name `name`."""
    return _provider(name)[0]()


@cache
def _schema_document_at(name: str, generation: int) -> Any:
    return etree.fromstring(schema_text(name).encode("utf-8"), parser()).getroottree()


@cache
def _schema_at(name: str, generation: int) -> etree.XMLSchema:
    return etree.XMLSchema(_schema_document_at(name, generation))


def schema(name: str) -> etree.XMLSchema:
    """The schema `name` ("project.xsd", "sensors.xsd") generated from the field declarations (the sensors
    schema: from the registered types), parsed once per change of the registry. It equals the shipped
    sear/schemas/<name> for the built-in types (a test checks)."""
    return _schema_at(name, _generation(name))


def _restore_hint(path: Path) -> str:
    """Where a damaged file's previous version is, as a sentence: NAME.bak beside it (a backup itself
    has none)."""
    if path.name.endswith(".bak"):
        return f"Restore it from {path.name[:-4]}, the file it backs up, if that is whole."
    return f"Restore it from {path.name}.bak if there is one."


def parse_file(path: Path, *, root_tag: str, schema_name: str, what: str) -> etree._ElementTree:
    """Read and validate an XML file, refusing hostile or broken input with a ProjectError.

    `what` names the kind of file in messages (e.g. "project file").
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ProjectError(f"the {what} does not exist; check the path.", file=path) from None
    except IsADirectoryError:
        raise ProjectError(f"this is a folder, not a {what}.", file=path) from None
    except OSError as exc:
        raise ProjectError(f"the {what} cannot be read ({exc.strerror}).", file=path) from None
    if not data.strip():
        raise ProjectError(f"the {what} is empty. {_restore_hint(path)}", file=path)
    first_element = re.search(rb"<[A-Za-z_]", data)
    if b"<!DOCTYPE" in data[: first_element.start() if first_element else len(data)].upper():
        raise ProjectError(
            f"the {what} contains a DOCTYPE declaration, which SEAR refuses for safety "
            "(entities could read other files or exhaust memory). Remove the <!DOCTYPE ...> part.",
            file=path, line=data[: data.upper().find(b"<!DOCTYPE")].count(b"\n") + 1,
        )
    try:
        tree = etree.ElementTree(etree.fromstring(data, parser(), base_url=None))
    except etree.XMLSyntaxError as exc:
        line = exc.lineno or None
        raise ProjectError(
            f"the {what} is not well-formed XML ({_clean(exc.msg)}); it may be truncated or damaged. "
            f"Fix it at that line, or {_restore_hint(path)[0].lower()}{_restore_hint(path)[1:]}",
            file=path, line=line,
        ) from None
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        raise ProjectError(
            f"the {what} contains a DOCTYPE declaration, which SEAR refuses for safety "
            "(entities could read other files or exhaust memory). Remove the <!DOCTYPE ...> part.",
            file=path, line=1,
        )
    root = tree.getroot()
    if root.tag != root_tag:
        raise ProjectError(
            f"this is not a SEAR {what}: its root element is <{root.tag}>, expected <{root_tag}>.",
            file=path, line=root.sourceline, field=root.tag,
        )
    version = root.get("version")
    if version is not None and version.strip() != str(FORMAT_VERSION):
        raise ProjectError(
            f"format version {version!r} is not supported by this SEAR (it reads version {FORMAT_VERSION}); "
            "update SEAR or save the file again from a matching version.",
            file=path, line=root.sourceline, field="version",
        )
    xsd = schema(schema_name)
    if not xsd.validate(tree):
        errors = _distinct_errors(xsd.error_log)
        first = errors[0]
        field, sentence = explain_schema_error(first, root_tag, schema_name)
        more = [f"line {e.line}: {explain_schema_error(e, root_tag, schema_name)[1]}" for e in errors[1:6]]
        if more:
            sentence += " Also: " + "; ".join(s.rstrip(".") for s in more) + ("; ..." if len(errors) > 6 else "") + "."
        raise ProjectError(sentence, file=path, line=first.line, field=field)
    return tree


def _distinct_errors(error_log: Any) -> list[Any]:
    """One error per element: libxml2 follows a facet error with a type error (and sometimes a
    'no precomputed value' warning) about the same value, which would only repeat the first sentence."""
    seen: set[tuple[int, str]] = set()
    errors = []
    for error in error_log:
        key = (error.line, error.path or "")
        if key in seen or "No precomputed value available" in error.message:
            continue
        seen.add(key)
        errors.append(error)
    return errors or list(error_log)


_XS = "{http://www.w3.org/2001/XMLSchema}"


def _complex_types_of(schema_name: str, parent: str) -> tuple[Any, ...]:
    """The complex types of the elements named `parent` in the schema (inline or named)."""
    if not schema_name:
        return ()
    return _complex_types_at(schema_name, _generation(schema_name), parent)


@cache
def _complex_types_at(schema_name: str, generation: int, parent: str) -> tuple[Any, ...]:
    doc = _schema_document_at(schema_name, generation)
    named_types = {t.get("name"): t for t in doc.iter(f"{_XS}complexType") if t.get("name")}
    found = []
    for el in doc.iter(f"{_XS}element"):
        if el.get("name") == parent:
            complex_type = named_types.get(el.get("type", "")) if el.get("type") else el.find(f"{_XS}complexType")
            if complex_type is not None:
                found.append(complex_type)
    return tuple(found)


def _child_elements(schema_name: str, parent: str) -> list[Any]:
    """The element declarations directly inside `parent`'s content model (all, sequence or choice)."""
    return [child for complex_type in _complex_types_of(schema_name, parent)
            for group in complex_type for child in group.iterfind(f"{_XS}element")]


def _children(schema_name: str, parent: str, required_only: bool) -> frozenset[str]:
    """Names of the elements the schema allows (or requires) directly inside elements named `parent`."""
    return frozenset(child.get("name") for child in _child_elements(schema_name, parent)
                     if not required_only or child.get("minOccurs", "1") != "0")


def _child_types(schema_name: str, parent: str) -> dict[str, str]:
    """Simple type names of the child elements (and '@attributes') of elements named `parent`."""
    types_of: dict[str, str] = {}
    for child in _child_elements(schema_name, parent):
        if child.get("type"):
            types_of.setdefault(child.get("name"), child.get("type"))
    for complex_type in _complex_types_of(schema_name, parent):
        for attribute in complex_type.iterfind(f"{_XS}attribute"):
            types_of.setdefault("@" + attribute.get("name"), attribute.get("type", ""))
    return types_of


def _clean(msg: str) -> str:
    return re.sub(r",? line \d+, column \d+", "", msg).strip().rstrip(".")


def _field_of(error_path: str, root_tag: str) -> str:
    """XPath from lxml ('/sear-project/dynamics/mass') to a field name ('dynamics.mass')."""
    parts = [re.sub(r"\[\d+\]$", "", p) for p in error_path.split("/") if p]
    if parts and parts[0] == root_tag:
        parts = parts[1:]
    return ".".join(parts)


def explain_schema_error(error: Any, root_tag: str, schema_name: str = "") -> tuple[str, str]:
    """Turn one lxml schema error into (field, a sentence a user understands)."""
    msg = error.message
    field = _field_of(error.path or "", root_tag)
    m = re.search(r"'(?P<value>[^']*)' is not a valid value of the (?:local )?(?:atomic|list|union) type "
                  r"'(?P<type>[^']+)'", msg)
    if m:
        meaning = meaning_of(m["type"]) or f"a value of type {m['type']}"
        return field, f"expected {meaning}, found {m['value']!r}."
    attribute = re.match(r"Element '[^']+', attribute '(?P<name>[^']+)'", msg)
    if attribute:
        field = f"{field}@{attribute['name']}" if field else attribute["name"]
    m = re.search(r"\[facet '(?P<facet>\w+)'\] The value (?:'(?P<value>[^']*)')?(?P<rest>.*)", msg)
    if m:
        rest = m["rest"].strip().rstrip(".")
        if m["facet"] == "enumeration":
            allowed = re.findall(r"'([^']*)'", rest)
            return field, f"{m['value']!r} is not allowed; use one of: {', '.join(allowed)}."
        # The facet message does not name the type: look it up, so the sentence says what is expected.
        element, _, attr = field.partition("@")
        parts = element.split(".") if element else []
        if attr:
            parent, key = (parts[-1] if parts else root_tag), "@" + attr
        else:
            parent, key = (parts[-2] if len(parts) > 1 else root_tag), (parts[-1] if parts else "")
        expected = meaning_of(_child_types(schema_name, parent).get(key, ""))
        if expected and m["value"] is not None:
            return field, f"expected {expected}, found {m['value']!r}."
        if expected:
            return field, f"expected {expected}."
        if m["value"] is not None:
            return field, f"the value {m['value']!r} {rest.lower()}."
        return field, f"the value {rest.lower()}."
    m = re.search(r"Duplicate key-sequence \[(?P<keys>[^\]]*)\]", msg)
    if m:
        return field, f"<{field.split('.')[-1]}> {m['keys']} appears more than once; give each only once."
    m = re.search(r"Missing child element\(s\)\. Expected is (?:one of )?\( (?P<names>[^)]+) \)", msg)
    if m:
        names = [n.strip() for n in m["names"].split(",")]
        # libxml2 lists every element still allowed; keep the ones the schema requires.
        required = _children(schema_name, field.split(".")[-1] if field else root_tag, required_only=True)
        names = [n for n in names if n in required] or names
        missing = ", ".join(names)
        where = field or "the file"
        sub = f"{field}.{names[0]}" if field else names[0]
        return sub, f"required field(s) {missing} missing in <{where.split('.')[-1]}>; add them."
    m = re.search(r"Element '(?P<name>[^']+)': This element is not expected\.", msg)
    if m:
        name = m["name"]
        parent = field.split(".")[-2] if "." in field else root_tag
        allowed = sorted(_children(schema_name, parent, required_only=False))
        if name in allowed:
            return field, f"<{name}> appears more than once in <{parent}>; keep one."
        hint = difflib.get_close_matches(name, allowed, n=1)
        if hint:
            return field, f"unknown element <{name}>; did you mean <{hint[0]}>?"
        listed = f"; <{parent}> may contain: {', '.join(allowed)}." if allowed else "; remove it."
        return field, f"unknown element <{name}>{listed}"
    m = re.search(r"The attribute '(?P<name>[^']+)' is required but missing", msg)
    if m:
        return f"{field}@{m['name']}" if field else m["name"], f"the attribute {m['name']!r} is required."
    return field, _clean(re.sub(r"^Element '[^']+'(?:, attribute '[^']+')?: ", "", msg)) + "."


# --- dataclass <-> element -----------------------------------------------------------------------

def _fmt_float(value: float) -> str:
    return repr(float(value))


def _to_text(value: Any, tp: Any, base_dir: Path | None) -> str:
    if tp is bool:
        return "true" if value else "false"
    if tp is float:
        return _fmt_float(value)
    if tp is int:
        return str(int(value))
    if tp is Path:
        return path_to_text(Path(value), base_dir)
    if typing.get_origin(tp) is tuple:
        args = typing.get_args(tp)
        item = args[0]
        return " ".join(_fmt_float(v) if item is float else str(v) for v in value)
    return str(value)


def _from_text(text: str, tp: Any, base_dir: Path | None) -> Any:
    if tp is str:
        return text or ""  # free text keeps its spaces
    text = (text or "").strip()
    if tp is bool:
        return text in ("true", "1")
    if tp is float:
        return float(text)
    if tp is int:
        return int(text)
    if tp is Path:
        return text_to_path(text, base_dir)
    if typing.get_origin(tp) is tuple:
        item = typing.get_args(tp)[0]
        return tuple(float(v) if item is float else v for v in text.split())
    if typing.get_origin(tp) is Literal:
        return text
    raise TypeError(f"unsupported field type {tp!r}")


def path_to_text(path: Path, base_dir: Path | None) -> str:
    """A path as stored: relative to `base_dir` (posix) when it lies below it, else absolute."""
    path = Path(os.path.normpath(path))
    if base_dir is not None and path.is_absolute():
        base = Path(os.path.normpath(base_dir.absolute()))
        try:
            return path.relative_to(base).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def text_to_path(text: str, base_dir: Path | None) -> Path:
    """A stored path made absolute against `base_dir` (the folder of the file it was read from)."""
    path = Path(text.replace("\\", "/"))
    if not path.is_absolute() and base_dir is not None:
        path = base_dir.absolute() / path
    return Path(os.path.normpath(path))


# Characters outside XML 1.0's Char production cannot be stored in a file at all.
_NOT_XML_CHAR = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str, field: str) -> str:
    bad = _NOT_XML_CHAR.search(text)
    if bad:
        raise ProjectError(f"{field} contains the character U+{ord(bad.group()):04X}, which an XML file cannot "
                           "hold; remove it.", field=field)
    return text


def dataclass_to_element(obj: Any, tag: str, base_dir: Path | None, attributes: tuple[str, ...] = (),
                         prefix: str = "") -> Any:
    """Element <tag> with one child per dataclass field (None fields are left out).

    A text no XML file can hold (control characters, lone surrogates) raises ProjectError naming the
    field (`prefix` + field name) and no file, so the caller can add the file it was saving."""
    el = etree.Element(tag)
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        if not f.compare and f.name == "path":
            continue
        value = getattr(obj, f.name)
        if value is None:
            continue
        tp, _ = strip_optional(hints[f.name])
        name = f"{prefix}{f.name}"
        for number in value if isinstance(value, tuple) else (value,):
            if isinstance(number, float) and (problem := number_problem(number)) is not None:
                raise ProjectError(f"{name} is {number!r}, which cannot be saved: {problem}.", field=name)
        if f.name in attributes:
            el.set(f.name, _xml_text(_to_text(value, tp, base_dir), name))
        elif dataclasses.is_dataclass(tp):
            el.append(dataclass_to_element(value, f.name, base_dir, prefix=f"{name}."))
        elif typing.get_origin(tp) is list:
            if not value:  # an empty list is left out, as None is
                continue
            holder = etree.SubElement(el, f.name)
            item_cls = typing.get_args(tp)[0]
            for item in value:
                key = getattr(item, "name", "")
                holder.append(dataclass_to_element(item, list_item_tag(f.name), base_dir,
                                                   attributes=attribute_fields(item_cls),
                                                   prefix=f"{name}.{key}."))
        elif typing.get_origin(tp) is dict:
            holder = etree.SubElement(el, f.name)
            item_tag = f.name.rstrip("s")
            for key, item in value.items():
                child = dataclass_to_element(item, item_tag, base_dir, prefix=f"{name}.{key}.")
                child.set("id", _xml_text(str(key), name))
                holder.append(child)
        else:
            etree.SubElement(el, f.name).text = _xml_text(_to_text(value, tp, base_dir), name)
    return el


def attribute_fields(cls: Any) -> tuple[str, ...]:
    """The fields of dataclass `cls` declared to be stored as XML attributes (param(attribute=True))."""
    return tuple(info.name for info in fields_of(cls) if info.attribute)


@cache
def _type_hints(cls: Any) -> dict[str, Any]:
    """typing.get_type_hints of a dataclass, worked out once (it costs ~1 ms, once per sensor of a file)."""
    return typing.get_type_hints(cls)


def element_to_dataclass(cls: Any, el: Any, base_dir: Path | None, attributes: tuple[str, ...] = ()) -> Any:
    """The inverse of dataclass_to_element, for a schema-valid element; absent fields keep defaults."""
    hints = _type_hints(cls)
    kwargs: dict[str, Any] = {}
    children = {child.tag: child for child in el if isinstance(child.tag, str)}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp, _ = strip_optional(hints[f.name])
        if f.name in attributes:
            if el.get(f.name) is not None:
                kwargs[f.name] = _from_text(el.get(f.name), tp, base_dir)
            continue
        child = children.get(f.name)
        if child is None:
            continue
        if dataclasses.is_dataclass(tp):
            kwargs[f.name] = element_to_dataclass(tp, child, base_dir)
        elif typing.get_origin(tp) is list:
            item_cls = typing.get_args(tp)[0]
            kwargs[f.name] = [element_to_dataclass(item_cls, item, base_dir, attribute_fields(item_cls))
                              for item in child if isinstance(item.tag, str)]
        elif typing.get_origin(tp) is dict:
            item_cls = typing.get_args(tp)[1]
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else {}
            for item in child:
                if isinstance(item.tag, str):
                    default[item.get("id")] = element_to_dataclass(item_cls, item, base_dir)
            kwargs[f.name] = default
        else:
            kwargs[f.name] = value = _from_text(child.text or "", tp, base_dir)
            _check_numbers(value, child)
    return cls(**kwargs)


def _check_numbers(value: Any, element: Any) -> None:
    """Refuse the numbers a schema cannot (sear.fields.number_problem: too near 0), naming the line and
    the field; the caller adds the file."""
    numbers = value if isinstance(value, tuple) else (value,)
    for number in numbers:
        if isinstance(number, float) and (problem := number_problem(number)) is not None:
            root = element.getroottree().getroot()
            field = _field_of(element.getroottree().getpath(element), root.tag)
            text = (element.text or "").strip()
            raise ProjectError(f"{text!r} cannot be used: {problem}.", line=element.sourceline, field=field)


# --- writing -------------------------------------------------------------------------------------

def serialise(root: Any) -> bytes:
    return etree.tostring(root, pretty_print=True, xml_declaration=True, encoding="UTF-8")
