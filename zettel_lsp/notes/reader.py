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


class ReadStatus(StrEnum):
    OK = "ok"
    TOO_LARGE = "too-large"
    BINARY = "binary"
    UNREADABLE = "unreadable"
    VANISHED = "vanished"
    NOT_A_FILE = "not-a-file"


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


def decode_text(data: bytes) -> tuple[str, bool]:
    """Decode UTF-8 (a BOM is dropped); invalid bytes become U+FFFD. Returns (text, replaced)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
        replaced = False
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        replaced = True
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, replaced


def looks_binary(data: bytes) -> bool:
    """Binary if the first 8 KiB hold NUL bytes in more than 1% of positions, or mostly bytes
    that are not valid UTF-8. (Git and ripgrep call any NUL binary; real notes sometimes carry
    a stray NUL pasted from a terminal, and such a note should stay searchable.)"""
    head = data[:_BINARY_SNIFF]
    if not head:
        return False
    nuls = head.count(b"\x00")
    if nuls == 0:
        return False
    if nuls * 100 > len(head):
        return True
    decoded = head.decode("utf-8", errors="replace")
    return decoded.count("\ufffd") * 10 > len(decoded)


def read_note(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ReadResult:
    """Read and decode a note. Line endings are normalised to ``\\n``.

    Symlink loops, permission errors, files that vanish between listing and reading, binary and
    oversized files all return a non-OK status with a one-line reason in ``problems``.
    """
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return ReadResult(ReadStatus.VANISHED, problems=[f"{p}: file vanished before it was read"])
    except OSError as exc:
        return _os_error(p, exc)
    if not _is_regular(st.st_mode):
        return ReadResult(ReadStatus.NOT_A_FILE, problems=[f"{p}: not a regular file"])
    if st.st_size > max_bytes:
        return ReadResult(
            ReadStatus.TOO_LARGE,
            size=st.st_size,
            mtime_ns=st.st_mtime_ns,
            problems=[
                f"{p}: skipped, {st.st_size:,} bytes is above the {max_bytes:,}-byte limit "
                "(setting max_file_bytes)"
            ],
        )
    try:
        with open(p, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        return ReadResult(ReadStatus.VANISHED, problems=[f"{p}: file vanished while being read"])
    except OSError as exc:
        return _os_error(p, exc)
    if len(data) > max_bytes:  # grew between stat and read
        return ReadResult(
            ReadStatus.TOO_LARGE,
            size=len(data),
            mtime_ns=st.st_mtime_ns,
            problems=[f"{p}: skipped, above the {max_bytes:,}-byte limit (setting max_file_bytes)"],
        )
    problems: list[str] = []
    if data.endswith(b"\x00"):
        stripped = data.rstrip(b"\x00")
        if stripped and not looks_binary(stripped):
            # NUL padding after the text (an interrupted sync can leave it): keep the note.
            problems.append(f"{p}: {len(data) - len(stripped):,} trailing NUL bytes ignored")
            data = stripped
    if looks_binary(data):
        return ReadResult(
            ReadStatus.BINARY,
            size=len(data),
            mtime_ns=st.st_mtime_ns,
            problems=[f"{p}: skipped, looks like a binary file (contains NUL bytes)"],
        )
    text, replaced = decode_text(data)
    if replaced:
        problems.append(f"{p}: invalid UTF-8, decoded with U+FFFD replacements")
    return ReadResult(
        ReadStatus.OK,
        text=text,
        size=len(data),
        mtime_ns=st.st_mtime_ns,
        replaced_invalid_utf8=replaced,
        problems=problems,
    )


def _is_regular(mode: int) -> bool:
    return stat.S_ISREG(mode)


def _os_error(path: str, exc: OSError) -> ReadResult:
    if exc.errno == errno.ELOOP:
        reason = "symlink loop"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        reason = "permission denied"
    else:
        reason = exc.strerror or type(exc).__name__
    return ReadResult(ReadStatus.UNREADABLE, problems=[f"{path}: unreadable ({reason})"])
