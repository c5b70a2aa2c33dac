#!/bin/sh
# auto.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): scheme auto against the
# 7-point scheme end to end, both at grid.dispersion 0.01, in every room of rooms/ and
# examples/ and the seminar room of tests/gpu/rooms (hybrid parts off), twice each, auto's rate
# cache empty at first (docs/performance.md, "Accuracy in real rooms"). Logs go to $OUT.
set -u
out=${OUT:-/tmp/roomsim-auto}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" XDG_CACHE_HOME="$out/cache"
R=.gpu/bin/roomsim
now() { date +%s.%N; }
clear="--set scheme.stencil= --set scheme.order= --set scheme.radius2= --set scheme.variant=
	--set scheme.kernel= --set grid.ppw= --set grid.spacing= --set grid.courant="
for f in tests/gpu/rooms/seminar.yaml rooms/studio.yaml rooms/corridor.yaml rooms/fan.yaml \
	rooms/l-shaped.yaml rooms/hall.yaml rooms/concert-hall/concert-hall.yaml examples/shoebox.yaml; do
	name=$(basename "$f" .yaml)
	fmax=$($R info "$f" | sed -n 's/^spacing .*(fmax \([0-9.]*\) Hz.*/\1/p')
	for i in 1 2; do
		for s in auto leggy; do
			t0=$(now)
			# shellcheck disable=SC2086
			$R run "$f" $clear --set hybrid= --set grid.fmax="$fmax" --set grid.dispersion=0.01 \
				--set scheme.stencil=$s --out "$out/o" > "$out/$name-$s-$i.txt" 2>&1
			rc=$?
			echo "$name $s round $i rc=$rc $(awk "BEGIN { print $(now) - $t0 }") s;" \
			     "$(grep -o 'scheme auto: [^,]*' "$out/$name-$s-$i.txt")"
			rm -rf "$out/o"
		done
	done
done
