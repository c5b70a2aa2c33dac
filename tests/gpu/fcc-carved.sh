#!/bin/sh
# fcc-carved.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): the fcc kernels in
# carved rooms against the CPU engine (gpu-test's fcc cases, under compute-sanitizer too), a
# carved room end to end on both engines, and the concert hall at 1 % dispersion with the fcc
# scheme and the 7-point scheme (docs/performance.md). Logs to $OUT.
set -u
out=${OUT:-/tmp/roomsim-fcc-carved}
mkdir -p "$out"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
R=$PWD/.gpu/bin/roomsim
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP
echo "== gpu-test: fcc_lattice, band_materials, uniform_field_on_gpu"
for t in fcc_lattice band_materials uniform_field_on_gpu; do
	ROOMSIM_GPU_TESTS=$t .gpu/bin/test_gpu > "$out/test-$t.txt" 2>&1
	echo "$t rc=$?: $(grep -c '^ok' "$out/test-$t.txt") ok," \
	     "$(grep -c '^not ok' "$out/test-$t.txt") not ok," \
	     "$(grep -c 'bitwise equal' "$out/test-$t.txt") comparisons bitwise equal"
	grep -E "^# (fcc|bands .*fcc|uniform field, fcc)|^not ok|ERROR" "$out/test-$t.txt"
done
for tool in memcheck racecheck; do
	ROOMSIM_GPU_QUICK=1 ROOMSIM_GPU_KERNELS=fcc "$san" --tool $tool --error-exitcode 9 \
		.gpu/bin/test_gpu > "$out/fcc-carved-$tool.txt" 2>&1
	echo "fcc $tool rc=$?: $(tail -n 1 "$out/fcc-carved-$tool.txt")"
done
echo "== an L-shaped room of shapes, fcc, 0.3 s: WAVs of the GPU and the CPU"
cat > /tmp/l-fcc.yaml <<'Y'
name: l
grid: {fmax: 300}
scheme: {precision: float32, stencil: fcc}
duration: 0.3
geometry:
  shapes:
    - {add: box, min: [0, 0, 0], max: [4, 3, 2.5]}
    - {remove: box, min: [2, 1.5, 0], max: [4, 3, 2.5]}
materials: {m: {absorption: 0.2}}
surfaces: {default: m}
sources: [{name: S, position: [1, 1, 1]}]
receivers: [{name: R, position: [1.5, 2.2, 1.2]}, {name: Q, position: [3.2, 0.7, 1.9]}]
Y
"$R" run /tmp/l-fcc.yaml --out /tmp/l-gpu 2>&1 | tail -n 2
"$R" run /tmp/l-fcc.yaml --backend cpu --out /tmp/l-cpu -q
for w in S_R.wav S_Q.wav; do
	cmp /tmp/l-gpu/$w /tmp/l-cpu/$w && echo "$w: the same bytes on the GPU and the CPU"
done
echo "== the concert hall at 1 % dispersion: bench and run"
for fmax in 1200 2000; do
	for st in fcc leggy; do
		[ $st = leggy ] && [ $fmax = 2000 ] && continue	# 30 GiB: docs/performance.md
		sed -e "s/fmax: 1200/fmax: $fmax/" -e "s/stencil: fcc/stencil: $st/" \
		    -e "s#dir: out/concert-fcc#dir: /tmp/cf#" \
		    -e "s#mesh: ../../../rooms#mesh: $PWD/rooms#" tests/gpu/rooms/concert-fcc.yaml \
		    > /tmp/cf-$st-$fmax.yaml
		echo "-- fmax $fmax, $st"
		"$R" info /tmp/cf-$st-$fmax.yaml | grep -E "^(grid|lattice|spacing|scheme|steps|memory)"
		[ $fmax = 1200 ] && "$R" bench /tmp/cf-$st-$fmax.yaml --steps 20 2>&1 |
			grep -vE "^roomsim: (voxel|kernel)" | tee "$out/bench-$st-$fmax.txt"
		"$R" run /tmp/cf-$st-$fmax.yaml 2>&1 | tee "$out/run-$st-$fmax.txt" | tail -n 4
	done
done
