#!/bin/sh
# device.sh - everything the GPU machine is for, in one call (docs/kernels.md):
# gpu-test, compute-sanitizer memcheck and racecheck, the benchmarks. Run from the
# repository root with the bundle of `make gpu-bundle` in .gpu/; logs go to $OUT.
set -u
out=${OUT:-/tmp/roomsim-device}
steps=${BENCH_STEPS:-20}
mkdir -p "$out"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP ROOMSIM="$PWD/.gpu/bin/roomsim"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv
echo "== gpu-test"
.gpu/bin/test_gpu > "$out/gpu-test.txt" 2>&1
echo "gpu-test rc=$?: $(grep -c '^ok' "$out/gpu-test.txt") ok, $(grep -c '^not ok' "$out/gpu-test.txt") not ok;" \
     "$(grep -c 'bitwise equal' "$out/gpu-test.txt") comparisons bitwise equal"
grep -E "^not ok|auto chose" "$out/gpu-test.txt"
echo "== compute-sanitizer (quick cases: every kernel on the L-shaped room, small textures)"
for tool in memcheck racecheck; do
	ROOMSIM_GPU_QUICK=1 "$san" --tool $tool --error-exitcode 9 .gpu/bin/test_gpu > "$out/$tool.txt" 2>&1
	echo "$tool rc=$?: $(grep -c '^ok' "$out/$tool.txt") ok; $(tail -n 1 "$out/$tool.txt")"
done
echo "== bench"
.gpu/bin/roomsim bench --steps "$steps" > "$out/bench-f32.txt" 2>&1
.gpu/bin/roomsim bench --steps "$steps" --precision float64 > "$out/bench-f64.txt" 2>&1
.gpu/bin/roomsim bench --steps "$steps" --padding 0.4 > "$out/bench-pad.txt" 2>&1
.gpu/bin/roomsim bench --steps "$steps" --kernel slice-vec --block 32x16 > "$out/bench-vec.txt" 2>&1
cat "$out/bench-f32.txt" "$out/bench-f64.txt" "$out/bench-pad.txt" "$out/bench-vec.txt"
