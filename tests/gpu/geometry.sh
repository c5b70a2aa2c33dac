#!/bin/sh
# geometry.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): every kernel against
# the CPU engine (gpu-test, which includes a room of shapes), the concert hall of rooms/
# voxelised and run on the GPU, and the per-column start/stop skip measured on it: the hall's
# grid against a box of its bounds at the same spacing (docs/performance.md). Logs to $OUT.
set -u
out=${OUT:-/tmp/roomsim-geometry}
steps=${BENCH_STEPS:-20}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "== gpu-test"
.gpu/bin/test_gpu > "$out/gpu-test.txt" 2>&1
echo "rc=$?: $(grep -c '^ok' "$out/gpu-test.txt") ok, $(grep -c '^not ok' "$out/gpu-test.txt") not ok;" \
     "$(grep -c 'bitwise equal' "$out/gpu-test.txt") comparisons bitwise equal"
grep -E "^not ok|shapes" "$out/gpu-test.txt" | head -40
echo "== the concert hall (mesh), 2 s at fmax 250 Hz, roomsim run on the GPU"
.gpu/bin/roomsim run rooms/concert-hall/concert-hall.yaml --out "$out/hall" 2>&1 | tail -n 4
echo "== per-column skip: the hall at fmax 1000 Hz against the box of its bounds"
sed 's/fmax: 250/fmax: 1000/' rooms/concert-hall/concert-hall.yaml > /tmp/hall1000.yaml
sed -e 's#^  mesh: hall.obj.*#  box: [36, 22, 16]#' -e '/^  units:/d' -e '/^surfaces:/d' \
    /tmp/hall1000.yaml > /tmp/box1000.yaml
sed -i 's#^  mesh: hall.obj#  mesh: '"$PWD"'/rooms/concert-hall/hall.obj#' /tmp/hall1000.yaml
for room in hall1000 box1000; do
	for k in slice-vec slice-naive naive3d; do
		.gpu/bin/roomsim bench /tmp/$room.yaml --kernel $k --steps "$steps" 2>&1 |
			grep -E "^(bandwidth|grid|kernel|$k)" | sed "s/^/$room /" | tee -a "$out/skip.txt"
	done
done
