#!/bin/sh
# fcc.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): the fcc kernel against
# the CPU engine, under compute-sanitizer, its benchmark against the 7-point kernels on the
# same box, and the end-to-end hall at equal dispersion (docs/performance.md). Logs to $OUT.
set -u
out=${OUT:-/tmp/roomsim-fcc}
mkdir -p "$out"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP
echo "== gpu-test, all of it (the fcc cases print '# fcc')"
.gpu/bin/test_gpu > "$out/gpu-test.txt" 2>&1
echo "rc=$?: $(grep -c '^ok' "$out/gpu-test.txt") ok, $(grep -c '^not ok' "$out/gpu-test.txt") not ok;" \
     "$(grep -c 'bitwise equal' "$out/gpu-test.txt") comparisons bitwise equal"
grep -E "^# fcc|^not ok|auto chose" "$out/gpu-test.txt"
for k in fcc shell; do
	for tool in memcheck racecheck; do
		ROOMSIM_GPU_QUICK=1 ROOMSIM_GPU_KERNELS=$k "$san" --tool $tool --error-exitcode 9 \
			.gpu/bin/test_gpu > "$out/$k-$tool.txt" 2>&1
		echo "$k $tool rc=$?: $(tail -n 1 "$out/$k-$tool.txt")"
	done
done
echo "== bench: the 30 x 24 x 9 m box at 5 cm, 7-point and fcc"
for p in float32 float64; do
	for f in seven fcc; do
		sed "s/precision: float32/precision: $p/" tests/gpu/rooms/$f.yaml > /tmp/$f-$p.yaml
		.gpu/bin/roomsim bench /tmp/$f-$p.yaml --steps ${BENCH_STEPS:-20} 2>&1 |
			grep -E "^(bandwidth|scheme|grid|slice-vec|fcc)" | tee -a "$out/bench.txt"
	done
done
echo "== hall, 1 s at equal dispersion (1 %), fmax 500 and 1000 Hz"
for fmax in 500 1000; do
	for f in hall-seven hall-fcc; do
		sed -e "s/fmax: 500/fmax: $fmax/" -e "s#dir: out/#dir: $out/#" \
			tests/gpu/rooms/$f.yaml > /tmp/$f-$fmax.yaml
		.gpu/bin/roomsim info /tmp/$f-$fmax.yaml | grep -E "^(grid|lattice|nodes|cells|spacing|steps|memory)"
		.gpu/bin/roomsim run /tmp/$f-$fmax.yaml 2>&1 | tail -n 3
		mv "$out/$f" "$out/$f-$fmax"	# the WAVs, to compare the impulse responses
	done
done
