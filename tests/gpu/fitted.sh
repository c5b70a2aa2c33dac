#!/bin/sh
# fitted.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): grid.walls: fitted
# against the staircase. PART=runs: rooms/l-shaped.yaml and the seminar room end to end with
# kernel auto, each with both walls (roomsim's own line: its grid, steps and time); PART=converge:
# `roomsim converge` in the seminar room at 2 kHz (0.5 s), --placements 3 at dispersion 0.01, once
# with each walls, and every run scored against the fitted reference
# (docs/bench/dev-accuracy/score.py); PART=long: the seminar room fitted, float32, its walls
# of library band materials, 10^6 steps (22 s of response), and its WAV's decay: the level of
# each second against the peak, which must fall to the float32 floor and stay there; STENCIL
# (default: the room's) and DURATION (default 22.0, 10^6 steps of the 7-point scheme; 43 for
# fcc at its fitted Courant number 0.9) choose another scheme. Outputs under $OUT (default
# /tmp/roomsim-fitted).
set -u
out=${OUT:-/tmp/roomsim-fitted}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib"
r=.gpu/bin/roomsim
case ${PART:-runs} in
runs)
	for room in rooms/l-shaped.yaml tests/gpu/rooms/seminar.yaml; do
		for w in staircase fitted; do
			n=$(basename "$room" .yaml)-$w
			ROOMSIM_PHASES=1 $r run --set hybrid= --set grid.walls=$w \
				--set output.dir="$out/$n" "$room" > "$out/$n.log" 2>&1
			echo "$n: $(grep -E 'steps of|error' "$out/$n.log" | tail -1)"
		done
	done
	;;
converge)
	for w in fitted staircase; do
		$r converge tests/gpu/rooms/seminar.yaml --schemes 7-point --dispersions 0.01 \
			--placements 3 --set hybrid= --set duration=0.5 --set grid.walls=$w \
			--out "$out/c-$w" \
			> "$out/converge-$w.txt" 2>&1
		tail -14 "$out/converge-$w.txt"
	done
	python3 docs/bench/dev-accuracy/score.py "$out/c-fitted/reference-ppw24" \
		63,125,250,500,1000 "$out/c-staircase/reference-ppw24" \
		"$out"/c-staircase/7-point-d0.01 "$out"/c-staircase/7-point-d0.0101 \
		"$out"/c-staircase/7-point-d0.0099 "$out"/c-fitted/7-point-d0.01 \
		"$out"/c-fitted/7-point-d0.0101 "$out"/c-fitted/7-point-d0.0099 |
		tee "$out/cross.txt"
	;;
long)
	sed -e 's/^grid: {fmax: 2000}/grid: {fmax: 2000, walls: fitted}/' \
		-e "s/^duration: 2.0/duration: ${DURATION:-22.0}/" \
		-e 's/plaster: {absorption: 0.08}/plaster: {library: rough_lime_wash}/' \
		-e "s|mesh: seminar.obj|mesh: $PWD/tests/gpu/rooms/seminar.obj|" \
		tests/gpu/rooms/seminar.yaml > "$out/long.yaml"
	$r run --set hybrid= --set output.wav.highpass=0 --set output.dir="$out/long" \
		${STENCIL:+--set scheme.stencil=$STENCIL} "$out/long.yaml" > "$out/long.log" 2>&1
	tail -1 "$out/long.log"
	python3 - "$out/long/S_front.wav" <<'PY' | tee "$out/long-decay.txt"
import sys
import numpy as np
sys.path.insert(0, "docs/bench/dev-accuracy")
from score import read_wav
x, sr = read_wav(sys.argv[1])
peak = np.abs(x).max()
for s in range(len(x) // sr):
	seg = x[s * sr:(s + 1) * sr]
	print("second %2d: rms %.3e of the peak, largest %.3e, mean %.3e" % (s,
	      np.sqrt(np.mean(seg ** 2)) / peak, np.abs(seg).max() / peak, seg.mean() / peak))
PY
	;;
esac
