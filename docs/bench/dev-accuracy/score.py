#!/usr/bin/python3
"""`roomsim converge`'s spectrum measure for runs made beside a converge run's reference.

score.py REFERENCE_DIR BANDS RUN_DIR...: for each run, the rms over each octave band's six
sixth-octave bands of the level differences against the reference, the worst over the WAVs
(source-receiver pairs) the reference holds, in dB; BANDS: octave centres, e.g. 63,125,250
(taken as the ISO base-10 centres, as app/converge.c's bands). numpy only.
"""
import glob
import os
import sys

import numpy as np


def read_wav(path):
	"""Samples and rate of a mono WAV of IEEE floats or 16- or 24-bit PCM."""
	data = open(path, "rb").read()
	i, rate, fmt, bits, samples = 12, None, None, None, None
	while i + 8 <= len(data):
		cid, n = data[i:i + 4], int.from_bytes(data[i + 4:i + 8], "little")
		body = data[i + 8:i + 8 + n]
		if cid == b"fmt ":
			fmt = int.from_bytes(body[0:2], "little")
			rate = int.from_bytes(body[4:8], "little")
			bits = int.from_bytes(body[14:16], "little")
		elif cid == b"data":
			if fmt == 3:
				samples = np.frombuffer(body, "<f4" if bits == 32 else "<f8").astype(float)
			elif bits == 24:
				b = np.frombuffer(body, np.uint8).reshape(-1, 3).astype(np.int32)
				v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
				samples = np.where(v >= 1 << 23, v - (1 << 24), v).astype(float)
			else:
				samples = np.frombuffer(body, "<i2").astype(float)
		i += 8 + n + (n & 1)
	return samples, rate


def spectrum_error(ref_dir, run_dir, centres):
	g = 10**0.3
	worst = np.zeros(len(centres))
	for path in sorted(glob.glob(os.path.join(ref_dir, "*.wav"))):
		a, rate = read_wav(path)
		x, _ = read_wav(os.path.join(run_dir, os.path.basename(path)))
		n = min(len(a), len(x))
		m = 1 << (n - 1).bit_length()
		pa, px = (np.abs(np.fft.rfft(v[:n], m))**2 for v in (a, x))
		k = np.arange(m // 2 + 1)
		for b, fc in enumerate(centres):
			f1 = 1000 * g**round(np.log(fc / 1000) / np.log(g)) * g**-0.5
			d = []
			for j in range(6):
				lo, hi = f1 * 2**(j / 6), f1 * 2**((j + 1) / 6)
				s = (k >= np.ceil(lo * m / rate)) & (k * rate / m < hi)
				d.append(10 * np.log10(px[s].sum() / pa[s].sum()))
			worst[b] = max(worst[b], np.sqrt(np.mean(np.square(d))))
	return worst


def main():
	ref, centres = sys.argv[1], [float(c) for c in sys.argv[2].split(",")]
	for run in sys.argv[3:]:
		e = spectrum_error(ref, run, centres)
		print(f"{os.path.basename(run.rstrip('/')):16s}", " ".join(f"{v:5.2f}" for v in e))


if __name__ == "__main__":
	main()
