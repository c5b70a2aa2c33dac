#!/bin/sh
# pffdtd-hall.sh - on the GPU machine: PFFDTD's FCC scheme beside roomsim in the concert hall
# of rooms/concert-hall at 2 kHz, 0.2 s, the same branches on the same walls in both
# (tests/gpu/peers/hall-branches.yaml; docs/performance.md, "Against PFFDTD"). PFFDTD's CUDA
# engine (fdtd_main_gpu_single.x, built on the development machine from its source) and its
# inputs (its Python setup: tests/peers/pffdtd/mkhall.py, then `setup.py fcc 7.65 0.2 hall`)
# come in .gpu/bin and .gpu/pf/hall_fcc; roomsim runs its 7-point and fcc schemes at
# grid.dispersion 0.01 against its fcc scheme at 0.0025 (roomsim converge; the 7-point scheme
# at 24 points per wavelength would need 3.5e10 cells). Logs, PFFDTD's sim_outs.h5 and a
# tarball of roomsim's WAVs go to $OUT (tests/peers/pffdtd/compare.py scores them).
# ROOMSIM_ONLY=1 runs roomsim's side alone, PFFDTD_ONLY=1 PFFDTD's.
set -u
out=${OUT:-/tmp/roomsim-pffdtd-hall}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" XDG_CACHE_HOME="$out/cache"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
if [ -z "${ROOMSIM_ONLY:-}" ]; then
	(cd .gpu/pf/hall_fcc && /usr/bin/time -f "pffdtd fcc: %e s end to end" \
		../../bin/fdtd_main_gpu_single.x > "$out/pffdtd-fcc.txt" 2>&1; echo "rc=$?")
	tail -n 12 "$out/pffdtd-fcc.txt"
	cp .gpu/pf/hall_fcc/sim_outs.h5 "$out/pffdtd-fcc.h5"
fi
[ -n "${PFFDTD_ONLY:-}" ] && exit 0
.gpu/bin/roomsim converge tests/gpu/peers/hall-branches.yaml --schemes 7-point,fcc \
	--dispersions 0.01 --reference fcc:0.0025 --out "$out/roomsim" -q > "$out/roomsim.txt" 2>&1
echo "roomsim converge rc=$?"
cat "$out/roomsim.txt"
grep -h "Mvox/s\|nodes/s\|cells in\|stepping" "$out"/roomsim/*.log
# the WAVs and logs, one tarball (the device returns at most 8 files)
(cd "$out/roomsim" && find . -name '*.wav' -o -name '*.log' | tar -czf "$out/roomsim.tgz" -T -)
rm -rf "$out/roomsim" "$out/cache"
