#!/usr/bin/env python3
"""make_corpus.py - writes fuzz/corpus/: small FITS and PNG files of every kind madfilter reads
or refuses (float and scaled integer images with BLANK, a cube, a 4-D image, extensions, a
table, tile compression, gzip; greyscale, alpha, 1-bit, interlaced and palette PNGs; damaged
data units: a header declaring more pixels than follow, tiles whose compressed bytes are
garbled), the seeds tools/fuzz.sh starts from. Needs numpy and astropy; the files are committed, so this only needs
running to change them."""
import gzip
import io
import os
import struct
import sys
import zlib

import numpy as np
from astropy.io import fits

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
rng = np.random.default_rng(20261122)


def fits_bytes(hdus):
    buf = io.BytesIO()
    fits.HDUList(hdus).writeto(buf)
    return buf.getvalue()


def header(h):
    h["OBJECT"] = "seed"
    h["CTYPE1"], h["CTYPE2"] = "RA---TAN", "DEC--TAN"
    h["CRVAL1"], h["CRVAL2"] = 150.25, -2.5
    h["BUNIT"] = "adu"
    h.add_comment("a comment")
    h.add_history("an earlier step")
    return h


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bytes(width, height, depth, colour, rows, interlace=0, extra=b""):
    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, interlace)
    raw = b"".join(b"\x00" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + extra +
            png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b""))


def main():
    os.makedirs(OUT, exist_ok=True)
    img = rng.normal(100, 10, (12, 16)).astype(">f4")
    img[3, 4] = np.nan
    img[5, 6] = np.inf
    seeds = {}
    seeds["float2d.fits"] = fits_bytes([fits.PrimaryHDU(img, header(fits.Header()))])
    ints = rng.integers(-100, 100, (10, 12)).astype(">i2")
    ints[4:6, 4:6] = -32768
    h = fits.Header()
    h["BSCALE"], h["BZERO"], h["BLANK"] = 0.5, 1000.0, -32768
    hdu = fits.PrimaryHDU(ints, header(h))
    hdu.header["BSCALE"], hdu.header["BZERO"], hdu.header["BLANK"] = 0.5, 1000.0, -32768
    seeds["scaled_blank.fits"] = fits_bytes([hdu])
    seeds["cube.fits"] = fits_bytes([fits.PrimaryHDU(rng.normal(0, 1, (3, 6, 8)).astype(">f4"))])
    seeds["naxis4.fits"] = fits_bytes([fits.PrimaryHDU(np.zeros((2, 1, 4, 5), ">f4"))])
    seeds["naxis1.fits"] = fits_bytes([fits.PrimaryHDU(np.arange(10, dtype=">f4"))])
    seeds["mef.fits"] = fits_bytes([fits.PrimaryHDU(),
                                    fits.ImageHDU(img, header(fits.Header()), name="SCI")])
    cols = [fits.Column(name="FLUX", format="E", array=np.arange(3, dtype="f4"))]
    seeds["table.fits"] = fits_bytes([fits.PrimaryHDU(), fits.BinTableHDU.from_columns(cols)])
    seeds["compressed.fits.fz"] = fits_bytes(
        [fits.PrimaryHDU(), fits.CompImageHDU(ints.astype("i2"), compression_type="RICE_1")])
    seeds["float2d.fits.gz"] = gzip.compress(seeds["float2d.fits"], mtime=0)
    # Damaged data units: the header promises 1024 x 1024 pixels and one block follows; a
    # 96 x 96 Rice image of noise whose last tiles' bytes are garbled.
    claims = bytearray(seeds["float2d.fits"][:2880 + 2880])
    for key, value in ((b"NAXIS1  =", 1024), (b"NAXIS2  =", 1024)):
        at = claims.index(key)
        claims[at + 10:at + 30] = b"%20d" % value
    seeds["truncated_data.fits"] = bytes(claims)
    noise = rng.integers(-3000, 3000, (96, 96)).astype("i2")
    packed = bytearray(fits_bytes(
        [fits.PrimaryHDU(), fits.CompImageHDU(noise, compression_type="RICE_1")]))
    end = len(packed) - 2880
    for i in range(end - 2000, end - 100, 7):
        packed[i] ^= 0x5a
    seeds["garbled_tiles.fits.fz"] = bytes(packed)
    seeds["grey8.png"] = png_bytes(5, 4, 8, 0, [bytes(range(i * 5, i * 5 + 5)) for i in range(4)])
    seeds["grey16_alpha.png"] = png_bytes(
        3, 2, 16, 4, [struct.pack(">6H", 40000, 65535, 40001, 0, 40002, 65535)] * 2)
    seeds["grey1.png"] = png_bytes(8, 2, 1, 0, [b"\xa5", b"\x5a"])
    seeds["interlaced_trns.png"] = png_bytes(
        4, 4, 8, 0, [bytes([i * 4 + j for j in range(4)]) for i in range(4)], interlace=1,
        extra=png_chunk(b"tRNS", struct.pack(">H", 5)))
    seeds["palette.png"] = png_bytes(2, 2, 8, 3, [b"\x00\x01", b"\x01\x00"],
                                     extra=png_chunk(b"PLTE", b"\xff\x00\x00\x00\xff\x00"))
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(seeds), OUT), file=sys.stderr)


if __name__ == "__main__":
    main()
