#!/usr/bin/env python3
"""Decodes an 8-bit RGB or RGBA PNG (as rsvg-convert writes) with the standard library
only, and prints its size and how many pixels are within 12 of each color given:
png_colors.py image.png '["#0072B2", ...]' -> {"width", "height", "counts": {color: n}}."""
import json
import struct
import sys
import zlib
from collections import Counter


def decode(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = color_type = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, chunk = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color_type = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and color_type in (2, 6), "only 8-bit RGB or RGBA"
        elif kind == b"IDAT":
            idat += chunk
    raw = zlib.decompress(idat)
    bpp = 4 if color_type == 6 else 3
    stride = width * bpp
    rows, previous, index = [], bytearray(stride), 0
    for _ in range(height):
        kind = raw[index]
        index += 1
        line = bytearray(raw[index:index + stride])
        index += stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = previous[x]
            c = previous[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        previous = line
    pixels = Counter()
    for line in rows:
        for x in range(0, stride, bpp):
            pixels[(line[x], line[x + 1], line[x + 2])] += 1
    return width, height, pixels


def main():
    width, height, pixels = decode(sys.argv[1])
    counts = {}
    for color in json.loads(sys.argv[2]):
        r, g, b = int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)
        counts[color] = sum(n for (pr, pg, pb), n in pixels.items() if abs(pr - r) <= 12 and abs(pg - g) <= 12 and abs(pb - b) <= 12)
    print(json.dumps({"width": width, "height": height, "counts": counts}))


main()
