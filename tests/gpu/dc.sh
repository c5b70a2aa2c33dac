#!/bin/sh
# dc.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): the benchmarks that the
# increment form must keep (docs/performance.md) and the float32 responses of
# docs/physics.md, "A uniform field stays uniform". With a bundle of an older build in
# .gpu/old/bin (../shared/tools/gpu-bundle .gpu/old OLD/build/roomsim), each benchmark runs
# for both, alternating, twice, and the responses are compared before and after. Logs and
# the responses' table go to $OUT.
set -u
out=${OUT:-/tmp/roomsim-dc}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
builds="new"
[ -x .gpu/old/bin/roomsim ] && builds="old new"
benched="$builds"	# and a variant under trial, .gpu/try/bin/roomsim, is benchmarked too
[ -x .gpu/try/bin/roomsim ] && benched="$builds try"
bin() {	# build name -> binary
	[ "$1" = new ] && echo .gpu/bin/roomsim || echo ".gpu/$1/bin/roomsim"
}
lib() {	# the old build uses the same libraries
	[ -d .gpu/$1/lib ] && echo "$PWD/.gpu/$1/lib" || echo "$PWD/.gpu/lib"
}

echo "== bench (float32; the box is 5.06e8 cells, the stencil rooms 5.4e7)"
for pass in 1 2; do
	for b in $benched; do
		r=$(bin $b)
		export LD_LIBRARY_PATH="$(lib $b)"
		{
			$r bench --kernel slice-vec --steps 20
			$r bench --kernel diamond --steps 128
			if [ $pass = 1 ]; then
				$r bench tests/gpu/rooms/compact27.yaml --kernel shell-vec --steps 10
				$r bench tests/gpu/rooms/box125.yaml --kernel shell-shared --steps 10
				$r bench tests/gpu/rooms/seven.yaml --kernel slice-vec --steps 10
				$r bench tests/gpu/rooms/fcc.yaml --kernel fcc-vec --steps 20
			fi
		} > "$out/bench-$b-$pass.txt" 2>&1
		echo "-- $b, pass $pass"
		grep -E "^(bandwidth|scheme|slice-vec|diamond|shell|fcc)" "$out/bench-$b-$pass.txt"
	done
done
export LD_LIBRARY_PATH="$PWD/.gpu/lib"

[ -n "${SKIP_RESPONSES:-}" ] && exit 0
# Responses: the seminar room (a mesh, 10^7 cells at 2 kHz) and rooms/l-shaped.yaml at 1 kHz,
# 3 s each, float32 and float64, auto kernel.
echo "== responses"
run() {	# build, name, yaml file, precision, extra yaml
	d="/tmp/dc-$1-$2-$4"
	sed -e "s/precision: float32/precision: $4/" -e "s#dir: .*#dir: $d#" \
	    -e "s/^duration: .*/duration: 3.0/" "$3" > "/tmp/dc-$1-$2-$4.yaml"
	[ -n "$5" ] && echo "$5" >> "/tmp/dc-$1-$2-$4.yaml"
	LD_LIBRARY_PATH="$(lib $1)" $(bin $1) run "/tmp/dc-$1-$2-$4.yaml" -q \
		> "$out/run-$1-$2-$4.txt" 2>&1
	echo "$1 $2 $4: rc $? $(tail -n 1 "$out/run-$1-$2-$4.txt")"
}
cp tests/gpu/rooms/seminar.obj /tmp/seminar.obj
sed "s#mesh: seminar.obj#mesh: /tmp/seminar.obj#" tests/gpu/rooms/seminar.yaml > /tmp/seminar.yaml
sed "s/grid: {fmax: 500}/grid: {fmax: 1000}/" rooms/l-shaped.yaml > /tmp/lroom.yaml
for b in $builds; do
	for p in float32 float64; do
		run $b seminar /tmp/seminar.yaml $p ""
		run $b lroom /tmp/lroom.yaml $p ""
	done
done
python3 tests/gpu/dc_table.py "$builds" | tee "$out/responses.txt"
