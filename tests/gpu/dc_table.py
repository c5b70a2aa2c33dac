"""dc_table.py BUILDS - the table of docs/physics.md, "A uniform field stays uniform", from the
responses tests/gpu/dc.sh wrote to /tmp/dc-BUILD-ROOM-PRECISION/: per build and room, the
float32 response against the float64 one (the largest difference over the peak, whole and over
the last 0.3 s), the late mean (last 10 %) over the peak in each precision, and the level of
the float32 WAV's last 0.3 s against its peak."""
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
    print("| build | room | f32 - f64, whole | f32 - f64, last 0.3 s | late mean f32 | "
          "late mean f64 | f32 WAV's last 0.3 s |")
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
            fs = float(h[0].attrs["sample_rate"][0])
            n = x.shape[1]
            tail = n - int(0.3 * fs)
            pk = np.abs(y).max(axis=1, keepdims=True)
            d = np.abs(x - y) / pk
            late = n - n // 10
            m32 = np.abs(x[:, late:].mean(axis=1)) / pk[:, 0]
            m64 = np.abs(y[:, late:].mean(axis=1)) / pk[:, 0]
            levels = []
            for r in h[0]["receiver_names"][...]:
                name = r.decode() if isinstance(r, bytes) else str(r)
                src = h[0]["source_names"][0]
                src = src.decode() if isinstance(src, bytes) else str(src)
                w = wav("/tmp/dc-%s-%s-float32/%s_%s.wav" % (b, room, src, name))
                t = w[len(w) - int(0.3 * 48000):]
                levels.append(20 * np.log10(np.sqrt(np.mean(t * t)) / np.abs(w).max()))
            print("| %s | %s | %.1e | %.1e | %.1e | %.1e | %s dB |" % (
                b, room, d.max(), d[:, tail:].max(), m32.max(), m64.max(),
                ", ".join("%.0f" % v for v in levels)))


main()
