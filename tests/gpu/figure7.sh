#!/bin/sh
# figure7.sh - seed 000's figure 7 on the GPU machine (docs/performance.md): time per node
# against stencil size K for the leggy, compact-in-space and box-compact families, through
# every kernel that runs each, in float32 and float64, next to the streaming limit measured in
# the same run. One box of about 3.3e7 cells, absorbing walls. Prints the bench rows.
export LD_LIBRARY_PATH="$PWD/.gpu/lib"
steps=${BENCH_STEPS:-5}
tmp=${TMPDIR:-/tmp}/figure7.yaml

room() {	# $1: the scheme's keys, $2: precision
	cat <<ROOM
grid: {spacing: 0.0125}
scheme: {precision: $2, $1}
duration: 0.1
geometry: {box: [5.0, 4.0, 3.2]}
materials: {w: {absorption: 0.1}}
surfaces: {default: w}
sources: [{name: S, position: [1.0, 1.0, 1.0]}]
receivers: [{name: R, position: [2.0, 2.0, 2.0]}]
ROOM
}

for p in float32 float64; do
	{
		for o in 2 4 6 8 10 12 14 16; do echo "stencil: leggy, order: $o"; done
		for r in 1 2 3 4 5 6 8 9 10 11 12 13 14 16 17 18 19 20 21 22; do
			echo "stencil: compact, radius2: $r"
		done
		for q in "1, 1, 1" "2, 1, 1" "2, 2, 2" "3, 3, 3" "4, 4, 4"; do
			echo "stencil: box, q: [$q]"
		done
	} | while read -r scheme; do
		room "$scheme" $p > "$tmp"
		.gpu/bin/roomsim bench "$tmp" --steps "$steps" 2>&1 |
			grep -E "^(bandwidth|scheme|naive3d|slice-vec|general|leggy|shell)"
	done
done
