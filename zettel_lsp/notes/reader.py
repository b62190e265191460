"""Read one note file safely: never raise, always say why something was skipped."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
_BINARY_SNIFF = 8192
# C0 control bytes that text does not use (tab, newlines, vertical tab, form feed and ESC, which
# ANSI colours pasted from a terminal bring, are text), and DEL; NUL is counted with them
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])
# byte order marks, longest first (a UTF-32 LE mark starts like a UTF-16 LE one)
_BOMS: tuple[tuple[bytes, str, str], ...] = (
    (b"\x00\x00\xfe\xff", "utf-32-be", "UTF-32"),
    (b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32"),
    (b"\xef\xbb\xbf", "utf-8", "UTF-8"),
    (b"\xfe\xff", "utf-16-be", "UTF-16"),
    (b"\xff\xfe", "utf-16-le", "UTF-16"),
)


class ReadStatus(StrEnum):
    OK = "ok"
    TOO_LARGE = "too-large"
    BINARY = "binary"
    UNREADABLE = "unreadable"
    VANISHED = "vanished"
    NOT_A_FILE = "not-a-file"
    DANGLING_SYMLINK = "dangling-symlink"
    OUTSIDE_VAULT = "outside-vault"  # a symlink whose target is outside the vault (not followed)
    HIDDEN = "hidden"  # a dot-file: not read (notes.scan.hidden_problem)


@dataclass(slots=True)
class ReadResult:
    status: ReadStatus
    text: str = ""
    size: int = 0
    mtime_ns: int = 0
    replaced_invalid_utf8: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status is ReadStatus.OK


def bom_encoding(data: bytes) -> tuple[str, str, int] | None:
    """(Python codec, name for messages, BOM length) when ``data`` starts with a byte order
    mark of UTF-8, UTF-16 or UTF-32 (big or little endian), else None."""
    for bom, codec, name in _BOMS:
        if data.startswith(bom):
            return codec, name, len(bom)
    return None


def decode_text(data: bytes) -> tuple[str, bool]:
    """Decode by the byte order mark (UTF-16 and UTF-32, big or little endian; a UTF-8 BOM is
    dropped), else as UTF-8; invalid bytes become U+FFFD. Line endings become ``\\n``.
    Returns (text, replaced)."""
    codec = "utf-8"
    found = bom_encoding(data)
    if found is not None:
        codec, _, skip = found
        data = data[skip:]
    try:
        text = data.decode(codec)
        replaced = False
    except UnicodeDecodeError:
        text = data.decode(codec, errors="replace")
        replaced = True
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, replaced


def looks_binary(data: bytes) -> bool:
    """Judged on the first 8 KiB, by proportion: binary if more than 1% of the bytes are NUL
    (and more than one is), if more than 30% are control bytes text does not use, or if there
    are NULs and mostly bytes that are not valid UTF-8. Git and ripgrep call any NUL binary;
    real notes sometimes carry a stray NUL pasted from a terminal, and such a note should stay
    searchable. A file with a UTF-16 or UTF-32 byte order mark is text (see :func:`read_note`)."""
    head = data[:_BINARY_SNIFF]
    if not head:
        return False
    nuls = head.count(b"\x00")
    if nuls > 1 and nuls * 100 > len(head):
        return True
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    if controls * 10 > len(head) * 3:
        return True
    if nuls == 0:
        return False
    decoded = head.decode("utf-8", errors="replace")
    return decoded.count("\ufffd") * 10 > len(decoded)


def read_note(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ReadResult:
    """Read and decode a note. Line endings are normalised to ``\\n``.

    Symlink loops, dangling symlinks, FIFOs and other special files, permission errors, files
    that vanish between listing and reading, binary and oversized files all return a non-OK
    status with a one-line reason in ``problems``. UTF-16 and UTF-32 files with a byte order
    mark are decoded; NUL bytes kept in a text note become U+FFFD (with a warning).
    """
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        dangling = _dangling_target(p)
        if dangling is not None:
            why = f"dangling symlink (its target {dangling} does not exist), skipped"
            return _skipped(ReadStatus.DANGLING_SYMLINK, f"{p}: {why}")
        return _skipped(ReadStatus.VANISHED, f"{p}: file vanished before it was read")
    except OSError as exc:
        return _os_error(p, exc)
    if not stat.S_ISREG(st.st_mode):
        why = f"{_file_kind(st.st_mode)}, not a regular file: skipped"
        return _skipped(ReadStatus.NOT_A_FILE, f"{p}: {why}")
    limit = f"above the {max_bytes:,}-byte limit (setting max_file_bytes)"
    if st.st_size > max_bytes:
        why = f"skipped, {st.st_size:,} bytes is {limit}"
        return _skipped(ReadStatus.TOO_LARGE, f"{p}: {why}", st.st_size, st.st_mtime_ns)
    try:
        with open(p, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        return _skipped(ReadStatus.VANISHED, f"{p}: file vanished while being read")
    except OSError as exc:
        return _os_error(p, exc)
    size = len(data)
    if size > max_bytes:  # grew between stat and read
        return _skipped(ReadStatus.TOO_LARGE, f"{p}: skipped, {limit}", size, st.st_mtime_ns)
    problems: list[str] = []
    found = bom_encoding(data)
    wide = found is not None and found[1] != "UTF-8"  # UTF-16/32: NUL bytes are part of the text
    if data.endswith(b"\x00") and not wide:
        stripped = data.rstrip(b"\x00")
        if stripped and not looks_binary(stripped):
            # NUL padding after the text (an interrupted sync can leave it): keep the note.
            problems.append(f"{p}: {len(data) - len(stripped):,} trailing NUL bytes ignored")
            data = stripped
    if not wide and looks_binary(data):
        why = "skipped, looks like a binary file (NUL or control bytes)"
        return _skipped(ReadStatus.BINARY, f"{p}: {why}", size, st.st_mtime_ns)
    text, replaced = decode_text(data)
    if replaced:
        name = found[1] if found is not None else "UTF-8"
        problems.append(f"{p}: invalid {name}, decoded with U+FFFD replacements")
    if "\x00" in text:
        if wide and text.endswith("\x00"):
            stripped_text = text.rstrip("\x00")
            problems.append(
                f"{p}: {len(text) - len(stripped_text):,} trailing NUL characters ignored"
            )
            text = stripped_text
        nuls = text.count("\x00")
        if nuls:
            # one NUL would end a C string downstream (tokenizer, LSP client): make it visible
            text = text.replace("\x00", "\ufffd")
            problems.append(f"{p}: {nuls:,} NUL byte{'s' if nuls > 1 else ''} replaced by U+FFFD")
    return ReadResult(ReadStatus.OK, text, size, st.st_mtime_ns, replaced, problems)


def _skipped(status: ReadStatus, problem: str, size: int = 0, mtime_ns: int = 0) -> ReadResult:
    return ReadResult(status, size=size, mtime_ns=mtime_ns, problems=[problem])


def _file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for messages."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _dangling_target(path: str) -> str | None:
    """The target a dangling symlink names, or None when ``path`` is no symlink."""
    try:
        return os.readlink(path) if os.path.islink(path) else None
    except OSError:
        return None


def _os_error(path: str, exc: OSError) -> ReadResult:
    if exc.errno == errno.ELOOP:
        reason = "symlink loop"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        reason = "permission denied"
    else:
        reason = exc.strerror or type(exc).__name__
    return _skipped(ReadStatus.UNREADABLE, f"{path}: unreadable ({reason})")
