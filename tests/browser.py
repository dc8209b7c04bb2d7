"""Headless Chromium for tests of what a page looks like: its DOM as the browser parsed
it, and the colours of a screenshot."""

import shutil
import struct
import subprocess
import zlib

import pytest


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("no chromium binary (apt-get install chromium)")
    return found


def browser(tmp_path, *args) -> subprocess.CompletedProcess:
    """Chromium, headless, run once with ``args`` (``--dump-dom URL``, ``--screenshot=...``);
    the test skips where there is no Chromium."""
    argv = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic"]
    argv += ["--no-first-run", "--disable-background-networking", "--disable-component-update"]
    argv += ["--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def colors(png: bytes, rows: int) -> set[tuple[int, int, int]]:
    """The RGB colours in the top ``rows`` rows of an 8-bit, non-interlaced PNG."""
    width, height, depth, kind, _, _, interlace = struct.unpack(">IIBBBBB", png[16:29])
    assert (depth, interlace) == (8, 0) and kind in (2, 6), (depth, kind, interlace)
    chunks, at = [], 8
    while at < len(png):
        size, name = struct.unpack(">I4s", png[at : at + 8])
        if name == b"IDAT":
            chunks.append(png[at + 8 : at + 8 + size])
        at += 12 + size
    raw, bpp = zlib.decompress(b"".join(chunks)), 3 if kind == 2 else 4
    stride, prev, colors = width * bpp, bytearray(width * bpp), set()
    for y in range(min(rows, height)):
        kind_of_filter = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            paeth = min((abs(p - a), 0, a), (abs(p - b), 1, b), (abs(p - c), 2, c))[2]
            line[i] = (line[i] + (0, a, b, (a + b) // 2, paeth)[kind_of_filter]) & 255
        colors.update(tuple(line[x : x + 3]) for x in range(0, stride, bpp))
        prev = line
    return colors
