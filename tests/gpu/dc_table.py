"""dc_table.py BUILDS - the table of docs/physics.md, "A uniform field stays uniform", from the
responses tests/gpu/dc.sh wrote to /tmp/dc-BUILD-ROOM-PRECISION/: per build and room, the
float32 WAVs against the float64 ones (the largest difference over the float64 peak, whole and
over the last 0.3 s), the raw responses' late mean (last 10 %) over the peak in each precision
(rirs.h5, before the WAVs' DC removal), and the level of each WAV's last 0.3 s against its
peak."""
import struct
import sys

import h5py
import numpy as np


def wav(path):
    """The samples of a float32 or 16/24/32-bit PCM WAV, as float64."""
    data = open(path, "rb").read()
    fmt = bits = None
    at = 12
    while at + 8 <= len(data):
        tag, size = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        body = data[at + 8:at + 8 + size]
        if tag == b"fmt ":
            fmt, bits = struct.unpack("<H", body[:2])[0], struct.unpack("<H", body[14:16])[0]
        if tag == b"data":
            if fmt == 3:
                return np.frombuffer(body, "<f4" if bits == 32 else "<f8").astype(float)
            if bits == 16:
                return np.frombuffer(body, "<i2") / 32768.0
            if bits == 32:
                return np.frombuffer(body, "<i4") / 2147483648.0
            raw = np.frombuffer(body, np.uint8).reshape(-1, 3)
            v = raw[:, 0].astype(np.int32) | raw[:, 1].astype(np.int32) << 8 | \
                raw[:, 2].astype(np.int32) << 16
            return np.where(v >= 1 << 23, v - (1 << 24), v) / 8388608.0
        at += 8 + size + (size & 1)
    raise ValueError(path + ": no data chunk")


def main():
    builds = sys.argv[1].split()
    print("| build | room | WAVs f32 - f64 | last 0.3 s | raw late mean f32 | raw late mean f64 |"
          " last 0.3 s of the WAVs f32, f64 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for b in builds:
        for room in ("seminar", "lroom"):
            try:
                h = [h5py.File("/tmp/dc-%s-%s-%s/rirs.h5" % (b, room, p), "r")
                     for p in ("float32", "float64")]
            except OSError as e:
                print("| %s | %s | missing: %s |" % (b, room, e))
                continue
            x, y = (f["rir"][...].reshape(-1, f["rir"].shape[-1]) for f in h)
            pk = np.abs(y).max(axis=1)
            late = x.shape[1] - x.shape[1] // 10
            m32 = (np.abs(x[:, late:].mean(axis=1)) / pk).max()
            m64 = (np.abs(y[:, late:].mean(axis=1)) / pk).max()
            src = h[0]["source_names"][0]
            src = src.decode() if isinstance(src, bytes) else str(src)
            diff = tail = 0
            levels = []
            for r in h[0]["receiver_names"][...]:
                name = r.decode() if isinstance(r, bytes) else str(r)
                w = [wav("/tmp/dc-%s-%s-%s/%s_%s.wav" % (b, room, p, src, name))
                     for p in ("float32", "float64")]
                n = int(0.3 * 48000)
                wp = np.abs(w[1]).max()
                diff = max(diff, np.abs(w[0] - w[1]).max() / wp)
                tail = max(tail, np.abs(w[0][-n:] - w[1][-n:]).max() / wp)
                levels.append("%.0f, %.0f" % tuple(
                    20 * np.log10(np.sqrt(np.mean(v[-n:] ** 2)) / np.abs(v).max()) for v in w))
            print("| %s | %s | %.1e | %.1e | %.1e | %.1e | %s dB |" % (
                b, room, diff, tail, m32, m64, "; ".join(levels)))


main()
