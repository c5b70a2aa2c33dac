#!/bin/sh
# final.sh - gpu-test without its 10^6-step long runs (every kernel against the CPU engine,
# diamond end to end, ranks, checkpoints), then the checkpoint run of the concert hall
# (resume.sh without its gpu-test). Run from the repository root with the bundle in .gpu/.
set -u
out=${OUT:-/tmp/roomsim-device}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP ROOMSIM="$PWD/.gpu/bin/roomsim"
ROOMSIM_GPU_SKIP='*long_runs*' timeout 480 .gpu/bin/test_gpu > "$out/gpu-test.txt" 2>&1
echo "gpu-test rc=$?: $(grep -c '^ok' "$out/gpu-test.txt") ok, $(grep -c '^not ok' "$out/gpu-test.txt") not ok;" \
     "$(grep -c 'bitwise equal' "$out/gpu-test.txt") comparisons bitwise equal"
grep -E "^not ok|^# .*resume|^# two ranks|stopped by|error" "$out/gpu-test.txt"
