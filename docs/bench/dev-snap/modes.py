#!/usr/bin/python3
"""The rigid boxes of tests/converge-snap.sh as sums of their modes (numpy only).

Each scheme's response in a rigid box with mirrored walls is the box's cosine modes, each at
the frequency the scheme's own dispersion relation gives it: cos(w dt) = 1 + lam^2 W(k h) / 2,
W the stencil's symbol. This sums the modes up to 900 Hz at those frequencies (the amplitudes
of the exact box, the source and receiver of the script, 0.5 s) and scores each scheme
against the reference as `roomsim converge` does (rms of the sixth-octave level differences
over each octave). It also prints how far each scheme moves the modes of the 250 Hz octave
(mean and spread, against the reference), and the same scores with every mode moved by one
relative shift, to show how little a uniform shift costs. Usage: modes.py [X Y Z]
"""
import sys
import numpy as np

C = 343.0
SRC = np.array([0.9, 0.8, 0.7])
RCV = np.array([2.1, 1.7, 1.3])
FS, T = 4000.0, 0.5


def symbol(kind, k, h):
	x, y, z = (k[:, d] * h for d in range(3))
	axial = 2 * (np.cos(x) - 1) + 2 * (np.cos(y) - 1) + 2 * (np.cos(z) - 1)
	side = sum(2 * (np.cos(p + q) - 1) + 2 * (np.cos(p - q) - 1)
		   for p, q in ((x, y), (y, z), (x, z)))
	corner = sum(2 * (np.cos(x + sy * y + sz * z) - 1) for sy in (1, -1) for sz in (1, -1))
	if kind == "7-point":
		return axial
	if kind == "fcc":	# 12 neighbours at (+-1, +-1, 0) cells, weight 1/4
		return side / 4
	a, b = 0.25, 1 / 16	# IWB (docs/stencils.md)
	return (1 - 4 * a + 4 * b) * axial + (a - 2 * b) * side + b * corner


def modes(box, fmax=900.0):
	n = [np.arange(0, int(2 * fmax * side / C) + 2) for side in box]
	N = np.stack(np.meshgrid(*n, indexing="ij"), -1).reshape(-1, 3)
	k = np.pi * N / box
	f = C * np.linalg.norm(k, axis=1) / (2 * np.pi)
	keep = (f > 0) & (f < fmax)
	return N[keep], k[keep], f[keep]


def frequencies(kind, k, h, lam):
	dt = lam * h / C
	return np.arccos(np.clip(1 + lam**2 * symbol(kind, k, h) / 2, -1, 1)) / dt / (2 * np.pi)


def response(box, f, N, fe):
	amp = np.prod(np.cos(N * np.pi * SRC / box) * np.cos(N * np.pi * RCV / box), axis=1)
	amp = amp * np.prod(np.where(N == 0, 1, 2), axis=1) * np.exp(-(fe / 700.0)**8)
	t = np.arange(int(T * FS)) / FS
	w = 2 * np.pi * f
	return (amp / w) @ np.sin(np.outer(w, t))


def score(a, x, bands=(63, 125, 250)):
	m = 1 << (len(a) - 1).bit_length()
	pa, px = (np.abs(np.fft.rfft(v, m))**2 for v in (a, x))
	fr = np.arange(m // 2 + 1) * FS / m
	out = []
	for fc in bands:
		d = []
		for j in range(6):
			lo, hi = fc / np.sqrt(2) * 2**(j / 6), fc / np.sqrt(2) * 2**((j + 1) / 6)
			s = (fr >= lo) & (fr < hi)
			d.append(10 * np.log10(px[s].sum() / pa[s].sum()))
		out.append(np.sqrt(np.mean(np.square(d))))
	return " ".join(f"{v:5.2f}" for v in out)


def main():
	box = np.array([float(v) for v in sys.argv[1:4]]) if len(sys.argv) == 4 else \
		np.array([3.0, 2.5, 2.0])
	N, k, fe = modes(box)
	# spacings of `roomsim info --set grid.fit=true` in box A (the reference at 22.5757 ppw)
	runs = [("reference", "7-point", 0.029426, 1 / np.sqrt(3)),
		("7-point 0.01", "7-point", 0.062565, 1 / np.sqrt(3)),
		("7-point 0.004", "7-point", 0.038486, 1 / np.sqrt(3)),
		("fcc 0.01", "fcc", 0.083449, 1.0), ("fcc 0.004", "fcc", 0.055607, 1.0),
		("IWB 0.01", "iwb", 0.083449, 1.0), ("IWB 0.004", "iwb", 0.055607, 1.0)]
	f = {name: frequencies(kind, k, h, lam) for name, kind, h, lam in runs}
	ref = response(box, f["reference"], N, fe)
	octave = (fe > 177) & (fe < 354)
	print(f"box {box[0]} x {box[1]} x {box[2]} m, {len(fe)} modes below 900 Hz, "
	      f"{octave.sum()} in the 250 Hz octave")
	print("run            63, 125, 250 Hz (dB)  250 Hz octave's modes against the reference")
	for name, *_ in runs[1:]:
		d = (f[name] - f["reference"])[octave]
		print(f"{name:14s} {score(ref, response(box, f[name], N, fe))}"
		      f"     mean {d.mean():+.3f} Hz, spread {d.std():.3f} Hz")
	exact = response(box, fe, N, fe)
	for rel in (-0.0005, -0.0014):
		print(f"every mode {100 * rel:+.2f} % against the exact box: "
		      f"{score(exact, response(box, fe * (1 + rel), N, fe))}")


if __name__ == "__main__":
	main()
