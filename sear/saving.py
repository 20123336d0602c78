"""Saving SEAR's XML files (.prj and sensors XML) so that no save loses work.

Nothing is written that the loader would refuse (check_against_schema). Writing is atomic (temporary
file beside the target, fsync, rename) and keeps the previous file as `NAME.bak`, itself made
atomically: a save killed at any moment leaves both files whole (atomic_write). A save through a
symbolic link writes the link's target and keeps the link; the file keeps its permissions; and the
user's comments and layout in a hand-written file are kept (write_document updates the file's own tree
in place).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lxml import etree

from sear.errors import ProjectError
from sear.xmlio import explain_schema_error, parser, schema, serialise


def check_against_schema(root: Any, schema_name: str, root_tag: str, path: Path, what: str) -> None:
    """Refuse to write a document the loader would reject, so a save never replaces good work with
    a file that cannot be opened again."""
    xsd = schema(schema_name)
    doc = etree.fromstring(serialise(root), parser())
    if not xsd.validate(doc):
        error = xsd.error_log[0]
        field, sentence = explain_schema_error(error, root_tag, schema_name)
        raise ProjectError(f"not saved, the {what} has an invalid value: {sentence}", file=path, field=field)


def write_document(path: Path, root: Any, *, template: Path | None, reads_back: Callable[[Any], bool]) -> Path:
    """Write the document `root` to `path` atomically (atomic_write), keeping what the user wrote by hand.

    When `template` (the file the data were read from; often `path` itself) is an existing file of the same
    root element, its tree is updated in place to hold `root`'s data (merge_into): its comments, the
    order and layout of its elements and the spelling of unchanged values ('400' stays '400', not
    '400.0') are kept. `reads_back(merged_root)` must say the merged tree holds the same data as `root`;
    if it does not (or the template cannot be read) `root` is written as a fresh document instead, so
    keeping comments can never change what is saved."""
    data = serialise(root)
    if template is not None:
        merged = _merged_with(Path(template), root)
        if merged is not None and reads_back(merged.getroot()):
            data = etree.tostring(merged, pretty_print=True, xml_declaration=True, encoding="UTF-8")
            if not data.endswith(b"\n"):
                data += b"\n"
    return atomic_write(path, data)


def _merged_with(template: Path, root: Any) -> Any:
    """The template file's tree updated to hold `root`'s data, or None when it is not a readable XML file
    with the same root element (then there is nothing to keep)."""
    try:
        data = template.read_bytes()
        if b"<!DOCTYPE" in data.upper():
            return None
        tree = etree.ElementTree(etree.fromstring(data, parser()))
    except (OSError, etree.XMLSyntaxError):
        return None
    if tree.getroot().tag != root.tag:
        return None
    merge_into(tree.getroot(), root)
    return tree


def _key(el: Any) -> tuple[str, str | None, str | None]:
    """What identifies an element among its siblings: its tag and its id or name attribute (wheels,
    sensors)."""
    return (el.tag, el.get("id"), el.get("name"))


def _elements(parent: Any) -> list[Any]:
    return [child for child in parent if isinstance(child.tag, str)]


def _same_text(old: str | None, new: str | None) -> bool:
    """Whether a hand-written value says what the new one says: the same text, or the same numbers
    ('400' and '400.0', '0 0 0 1' and '0.0 0.0 0.0 1.0'); the read-back check of write_document catches
    the rare text field that only looks like a number."""
    old, new = old or "", new or ""
    if old == new:
        return True
    try:
        a, b = [float(t) for t in old.split()], [float(t) for t in new.split()]
    except ValueError:
        return False
    return len(a) == len(b) > 0 and a == b


def _is_pretty(parent: Any) -> bool:
    """Whether `parent`'s children sit on lines of their own (an indented file), judged by its text."""
    return bool(parent.text) and "\n" in parent.text and not parent.text.strip()


def _detach(el: Any) -> None:
    """Remove `el` from its parent, leaving the layout around it as if it had never been there: the
    whitespace after it (the indentation of what follows) goes to what came before it."""
    parent = el.getparent()
    previous = el.getprevious()
    if previous is not None:
        previous.tail = el.tail
    else:
        parent.text = el.tail if el.tail is None or not el.tail.strip() else parent.text
    el.tail = None
    parent.remove(el)


def _insert_after(parent: Any, previous: Any, el: Any, depth: int, unit: str) -> None:
    """Put `el` after `previous` (first when None) in `parent`, indented like its siblings."""
    pretty = _is_pretty(parent) or (len(parent) == 0 and unit != "")
    if previous is None:
        if len(parent) == 0 and pretty:
            parent.text = "\n" + unit * (depth + 1)
            el.tail = "\n" + unit * depth
        else:
            el.tail = parent.text if pretty else None
        parent.insert(0, el)
    else:
        el.tail = previous.tail
        if pretty:
            previous.tail = parent.text
        previous.addnext(el)
    if pretty and len(el):
        etree.indent(el, space=unit, level=depth + 1)


def merge_into(old: Any, new: Any, depth: int = 0, unit: str | None = None) -> None:
    """Make the element `old` (of a file the user may have written by hand) hold the data of `new`,
    changing as little as possible: attributes and texts are set where they differ (_same_text), child
    elements are matched by tag and id/name (a child whose name changed keeps its place when it is the
    next one of its tag), new ones are inserted after their predecessor, gone ones removed, moved ones
    moved. Comments and processing instructions stay where they are."""
    if unit is None:
        first = _elements(old)
        unit = ""
        if first and _is_pretty(old):
            unit = old.text.rsplit("\n", 1)[-1] or "  "
    for name in [name for name in old.attrib if name not in new.attrib]:
        del old.attrib[name]
    for name, value in new.attrib.items():
        if old.get(name) != value:
            old.set(name, value)
    new_children = _elements(new)
    old_children = _elements(old)
    if not new_children:
        for child in old_children:
            _detach(child)
        if not _same_text(old.text, new.text):
            old.text = new.text
        return
    by_key: dict[tuple[str, str | None, str | None], list[Any]] = {}
    for child in old_children:
        by_key.setdefault(_key(child), []).append(child)
    claimed = [c for n in {_key(n) for n in new_children}
               for c in by_key.get(n, [])[: _count(new_children, n)]]
    unclaimed = [c for c in old_children if not any(c is k for k in claimed)]
    previous = None
    position = 0  # in old_children, after the last of them matched so far
    for child in new_children:
        candidates = by_key.get(_key(child))
        match = candidates.pop(0) if candidates else None
        if match is None:
            # A renamed entry: the next unclaimed old element of the same tag takes the new data in place.
            following = [c for c in old_children[position:] if any(c is u for u in unclaimed)]
            if following and following[0].tag == child.tag:
                match = following[0]
                unclaimed = [u for u in unclaimed if u is not match]
        if match is not None:
            position = max(position, next(i for i, c in enumerate(old_children) if c is match) + 1)
        if match is None:
            match = _copy(child)
            _insert_after(old, previous, match, depth, unit)
        else:
            if previous is not None and match.getprevious() is not previous and \
                    _index(old, match) < _index(old, previous):
                _detach(match)
                _insert_after(old, previous, match, depth, unit)
            merge_into(match, child, depth + 1, unit)
        previous = match
    for child in unclaimed:
        _detach(child)


def _count(children: list[Any], key: tuple[str, str | None, str | None]) -> int:
    return sum(1 for c in children if _key(c) == key)


def _index(parent: Any, el: Any) -> int:
    return list(parent).index(el)


def _copy(el: Any) -> Any:
    copy = etree.fromstring(etree.tostring(el))
    copy.tail = None
    return copy


def atomic_write(path: Path, data: bytes) -> Path:
    """Write `data` to `path` atomically, keeping the previous file as `<path>.bak`.

    Guarantee: whenever the process is killed (and, as far as the file system honours fsync, when the
    power fails), `path` and `<path>.bak` (if it exists) each hold one whole file SEAR wrote (the old or
    the new version), never an empty or partial one. Every file is made whole under a temporary name in
    the same folder, flushed to disk (fsync) and only then renamed over its final name (a rename within
    a folder is atomic):

    1. temporary files of an interrupted earlier save of `path` are removed (see below);
    2. `data` is written to a temporary name and fsynced (on a full disk the save fails here, before
       anything else changed);
    3. the current `path` is hard-linked (copied and fsynced where links are not supported) to another
       temporary name and renamed onto `<path>.bak`;
    4. the new file is renamed onto `path`;
    5. the folder is fsynced, so the renames survive a power cut.

    Temporary files are named `.<NAME>.<16 hex digits>.tmp` beside the target. A save that is killed
    leaves at most two of them; the next save of the same file removes every file of that pattern, so
    they never pile up. Two processes saving the same file at the same moment is not supported (one
    would remove the other's temporary file and its save would fail with a ProjectError).

    A symbolic link is followed: the file it points to is saved as above (its `.bak` and temporary files
    beside it) and the link is kept. The new file has the permissions of the one it replaces (a 0644
    project stays 0644, a 0600 one 0600; owner and group are those of the user saving).

    A failure (read-only folder, disk full) is a ProjectError naming the file; the previous file and its
    `.bak` are then untouched (no `.bak` appears where there was none) and no temporary file is left
    behind. Returns `path` as given (a link stays a link)."""
    path = Path(path)
    try:
        return _atomic_write(path, data)
    except OSError as exc:
        raise ProjectError(f"not saved: the file cannot be written ({exc.strerror or exc}); choose another "
                           "folder or free some space. The previous version is unchanged.", file=path) from None


def _temporary_name_pattern(name: str) -> re.Pattern[str]:
    """Temporary files of saves of the file `name`: ours (16 hex digits) and those of SEAR versions that
    used tempfile.mkstemp (8 characters of [a-z0-9_])."""
    return re.compile(rf"\.{re.escape(name)}\.[a-z0-9_]{{8}}(?:[0-9a-f]{{8}})?\.tmp")


def _temporary_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")


def _remove_stale_temporary_files(path: Path) -> None:
    """Remove what interrupted saves of `path` left behind (only names of the temporary pattern)."""
    pattern = _temporary_name_pattern(path.name)
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    for name in names:
        if pattern.fullmatch(name):
            with contextlib.suppress(OSError):
                os.unlink(path.parent / name)


def _write_new_file(path: Path, data: bytes, mode: int | None = None) -> None:
    """Create `path` (which must not exist) holding `data`, flushed to disk. Its permissions are `mode`
    exactly (those of the file it replaces), or with None those of any new file (0666 less the umask)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o666 if mode is None else 0o600)
    if mode is not None and hasattr(os, "fchmod"):
        os.fchmod(fd, mode)  # not os.open's mode, which the umask would narrow (0644 became 0600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync_folder(folder: Path) -> None:
    """Make the renames in `folder` durable (not possible on every platform: then skipped)."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def _atomic_write(path: Path, data: bytes) -> Path:
    given = path
    if path.is_symlink():
        # Save through the link: its target (wherever the chain of links ends) is written, the link stays.
        path = Path(os.path.realpath(path))
    folder = path.parent if str(path.parent) else Path(".")
    path = folder / path.name
    folder.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporary_files(path)
    temporaries: list[Path] = []
    mode = None
    try:
        exists = path.exists()
        if exists:
            mode = stat.S_IMODE(os.stat(path).st_mode)  # a project the user made private stays private
        new = _temporary_path(path)
        temporaries.append(new)
        _write_new_file(new, data, mode)  # first: a full disk fails the save before the .bak changes
        if exists:
            backup = _temporary_path(path)
            temporaries.append(backup)
            try:
                os.link(path, backup)
            except OSError:
                # No hard links here (e.g. FAT, some network shares): a copy, made whole before it is used.
                _write_new_file(backup, path.read_bytes(), mode)
            # If the .bak is already a link to the same file (a save killed after this step), rename does
            # nothing and the temporary name stays: removed below.
            os.replace(backup, path.with_name(path.name + ".bak"))
            _fsync_folder(folder)
        os.replace(new, path)
    finally:
        for temporary in temporaries:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
    _fsync_folder(folder)
    return given
