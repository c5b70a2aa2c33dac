#!/bin/sh
# hall-2k-spread.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): how far the
# accuracy measures of the concert hall at 2 kHz (tests/gpu/peers/hall-branches.yaml, 0.2 s)
# move when nothing but the grid's placement changes, and how far two fine runs on different
# lattices are apart (docs/performance.md, "The concert hall at 2 kHz against a converged
# run"): the 7-point scheme and fcc at 0.5 % coarser spacing than grid.dispersion 0.01 gives
# (their walls' staircases then fall elsewhere; their dispersion changes by 1 %), and the
# 7-point scheme at grid.dispersion 0.005. Each run's WAVs and log go into $OUT/runs.tgz as it
# ends; docs/bench/dev-accuracy/score.py scores them against tests/gpu/pffdtd-hall.sh's
# reference (fcc at 0.0025).
set -u
out=${OUT:-/tmp/roomsim-hall-spread}
mkdir -p "$out/runs"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" XDG_CACHE_HOME="$out/cache"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
seven="--set scheme.stencil=leggy --set scheme.order=2"
for run in "fcc-ppw7.61|--set scheme.stencil=fcc --set grid.ppw=7.61" \
	"fcc-ppw7.69|--set scheme.stencil=fcc --set grid.ppw=7.69" \
	"7-point-ppw10.47|$seven --set grid.ppw=10.47" \
	"7-point-d0.005|$seven --set grid.dispersion=0.005"; do
	name=${run%%|*}
	# shellcheck disable=SC2086 # the settings split into words
	.gpu/bin/roomsim run tests/gpu/peers/hall-branches.yaml ${run#*|} \
		--out "$out/runs/$name" > "$out/runs/$name.log" 2>&1
	echo "$name rc=$?"
	grep -h "steps of" "$out/runs/$name.log"
	rm -f "$out/runs/$name/rirs.h5"
	(cd "$out/runs" && find . -name '*.wav' -o -name '*.log' | tar -czf "$out/runs.tgz" -T -)
done
rm -rf "$out/runs" "$out/cache"
