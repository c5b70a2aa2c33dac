#!/bin/sh
# diamond.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): the DiamondTorre
# kernel against the CPU engine (gpu-test's diamond cases), under compute-sanitizer racecheck
# and memcheck, then its benchmark on the 5e8-cell absorbing box: a sweep of tile sizes and
# tower heights next to seed 002's model, slice-vec for reference, the leggy orders and the
# padding fraction (docs/performance.md, "DiamondTorre"). Logs to $OUT. Knobs: SKIP_SAN,
# DTS, NT, STEPS (the sweep), SKIP_ROOMS (no orders and padding), ROOMS_ONLY (only those).
set -u
out=${OUT:-/tmp/roomsim-diamond}
mkdir -p "$out"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP ROOMSIM="$PWD/.gpu/bin/roomsim"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
if [ -z "${ROOMS_ONLY:-}" ]; then
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
fi
[ -n "${SKIP_ROOMS:-}" ] && exit 0

# Throughput against the stencil's order and the room's padding fraction: a 12 x 9.6 x 4.4 m
# box at 2 cm (6e7 cells; 220 cells tall, within every order's block), then the same bounding
# box with a quarter and with 44 % of its plan carved out (padding), 7-point.
room() {	# name, stencil line, geometry (default: the box)
	cat > "$out/$1.yaml" <<YAML
name: $1
grid: {fmax: 1715, ppw: 10}
scheme: $2
duration: 0.1
geometry:
${3:-  box: [12, 9.6, 4.4]}
materials: {wall: {absorption: 0.1}}
surfaces: {default: wall}
sources:
  - {name: S1, position: [1.0, 1.0, 1.5]}
receivers:
  - {name: R1, position: [2.0, 2.0, 1.2]}
output: {dir: $out/$1}
YAML
}
for o in 2 4 6 8; do
	room order$o "{stencil: leggy, order: $o, precision: float32}" ""
	echo "== bench: leggy order $o, diamond against leggy-shared (6e7-cell box)"
	for k in diamond leggy-shared; do
		.gpu/bin/roomsim bench "$out/order$o.yaml" --kernel $k --steps 128 2>&1
	done | tee "$out/bench-order$o.txt" | grep -E "^grid|diamond|leggy-shared "
done
for p in pad25:6:4.8 pad44:4:3.2; do	# name:x:y of the corner carved out to (12, 9.6)
	room ${p%%:*} "{stencil: leggy, order: 2, precision: float32}" "  shapes:
    - {add: box, min: [0, 0, 0], max: [12, 9.6, 4.4]}
    - {remove: box, min: [$(echo $p | cut -d: -f2), $(echo $p | cut -d: -f3), 0], max: [12, 9.6, 4.4]}"
done
for r in order2 pad25 pad44; do
	echo "== bench: $r, diamond against slice-vec"
	for k in diamond slice-vec; do
		.gpu/bin/roomsim bench "$out/$r.yaml" --kernel $k --steps 128 2>&1
	done | tee "$out/bench-$r.txt" | grep -E "^grid|diamond|slice-vec"
done
