#!/bin/sh
# diamond.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): the DiamondTorre
# kernel against the CPU engine (gpu-test's diamond cases), under compute-sanitizer racecheck
# and memcheck, then its benchmark on the 5e8-cell absorbing box: a sweep of tile sizes and
# tower heights next to seed 002's model, slice-vec for reference, the leggy orders and the
# padding fraction (docs/performance.md, "DiamondTorre"). Logs to $OUT.
set -u
out=${OUT:-/tmp/roomsim-diamond}
mkdir -p "$out"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== gpu-test, diamond cases"
ROOMSIM_GPU_KERNELS=diamond .gpu/bin/test_gpu > "$out/gpu-test-diamond.txt" 2>&1
echo "rc=$?: $(grep -c 'diamond' "$out/gpu-test-diamond.txt") comparisons," \
     "$(grep -c 'bitwise equal' "$out/gpu-test-diamond.txt") bitwise equal"
grep -E "^not ok|error|# " "$out/gpu-test-diamond.txt" | grep -v "bitwise equal" | head -30
if [ -z "${SKIP_SAN:-}" ]; then
	echo "== compute-sanitizer, quick diamond cases"
	for tool in racecheck memcheck; do
		ROOMSIM_GPU_QUICK=1 ROOMSIM_GPU_KERNELS=diamond "$san" --tool $tool --error-exitcode 9 \
			.gpu/bin/test_gpu > "$out/$tool.txt" 2>&1
		echo "$tool rc=$?: $(tail -n 1 "$out/$tool.txt")"
	done
fi
echo "== bench: 7-point float32, absorbing box of 5e8 cells"
.gpu/bin/roomsim bench --kernel slice-vec 2>&1 | tee "$out/bench-slice-vec.txt"
.gpu/bin/roomsim bench --kernel diamond --steps ${STEPS:-128} --dts ${DTS:-1,2,3,4} \
	--nt ${NT:-8,16,32,64,128} 2>&1 | tee "$out/bench-diamond.txt"
