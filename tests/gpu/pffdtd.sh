#!/bin/sh
# pffdtd.sh - on the GPU machine: PFFDTD beside roomsim in the seminar room of tests/gpu/rooms
# at 2 kHz, 0.5 s, its walls the same admittance (tests/gpu/peers/seminar-admittance.yaml;
# docs/performance.md, "Against PFFDTD"). PFFDTD's CUDA engine (fdtd_main_gpu_single.x, built
# on the development machine from its source) and its inputs (its Python setup: the Cartesian
# scheme at 10.5 points per wavelength and its FCC scheme at 7.7) come in .gpu/bin and
# .gpu/pf/{cart,fcc}; roomsim runs its 7-point and fcc schemes at grid.dispersion 0.01 and the
# converged reference (roomsim converge). Logs, PFFDTD's sim_outs.h5 and every WAV go to $OUT.
# ROOMSIM_ONLY=1 runs roomsim's side alone (compare.py then prints its rows only).
set -u
out=${OUT:-/tmp/roomsim-pffdtd}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
for s in $([ -n "${ROOMSIM_ONLY:-}" ] || echo cart fcc); do	# ROOMSIM_ONLY=1: roomsim's side
	(cd .gpu/pf/$s && /usr/bin/time -f "pffdtd $s: %e s end to end" \
		../../bin/fdtd_main_gpu_single.x > "$out/pffdtd-$s.txt" 2>&1; echo "rc=$?")
	tail -n 12 "$out/pffdtd-$s.txt"
	cp .gpu/pf/$s/sim_outs.h5 "$out/pffdtd-$s.h5"
done
.gpu/bin/roomsim converge tests/gpu/peers/seminar-admittance.yaml --schemes 7-point,fcc \
	--dispersions 0.01 --out "$out/roomsim" -q > "$out/roomsim.txt" 2>&1
echo "roomsim converge rc=$?"
cat "$out/roomsim.txt"
grep -h "Mvox/s\|cells in" "$out"/roomsim/*.log
for d in "$out"/roomsim/*/; do	# the WAVs, where they come back (one level down)
	for f in "$d"*.wav; do
		cp "$f" "$out/$(basename "$d")-$(basename "$f")"
	done
done
