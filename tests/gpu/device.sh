#!/bin/sh
# device.sh - everything the GPU machine is for, in one call (docs/kernels.md):
# gpu-test, compute-sanitizer memcheck and racecheck, the benchmarks. Run from the
# repository root with the bundle of `make gpu-bundle` in .gpu/; logs go to $OUT.
set -u
out=${OUT:-/tmp/roomsim-device}
mkdir -p "$out"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv
echo "== gpu-test"
.gpu/bin/test_gpu > "$out/gpu-test.txt" 2>&1; echo "gpu-test rc=$?"
grep -E "^(ok|not ok)|bitwise|error|drift|auto chose" "$out/gpu-test.txt" | grep -v "^# ok" | head -80
echo "== compute-sanitizer (quick cases)"
ROOMSIM_GPU_QUICK=1 "$san" --tool memcheck --error-exitcode 9 .gpu/bin/test_gpu > "$out/memcheck.txt" 2>&1
echo "memcheck rc=$? $(grep -c '^ok' "$out/memcheck.txt") ok; $(tail -n 1 "$out/memcheck.txt")"
ROOMSIM_GPU_QUICK=1 "$san" --tool racecheck --error-exitcode 9 .gpu/bin/test_gpu > "$out/racecheck.txt" 2>&1
echo "racecheck rc=$? $(grep -c '^ok' "$out/racecheck.txt") ok; $(tail -n 1 "$out/racecheck.txt")"
echo "== bench"
.gpu/bin/roomsim bench --steps ${BENCH_STEPS:-20} 2>&1 | tee "$out/bench-f32.txt"
.gpu/bin/roomsim bench --steps ${BENCH_STEPS:-20} --precision float64 2>&1 | tee "$out/bench-f64.txt"
.gpu/bin/roomsim bench --steps ${BENCH_STEPS:-20} --padding 0.4 2>&1 | tee "$out/bench-pad.txt"
