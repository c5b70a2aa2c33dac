#!/bin/sh
# diamond-bands.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): diamond's rate
# with band walls (docs/performance.md, "Band materials"): the bench box with --band-walls and
# with scalar walls, rooms/concert-hall at fmax 1200 Hz with its library band materials (dts
# 1), 256 steps each; BASE=BINARY runs the band-wall cases again with an earlier build, in
# the same call. Logs go to $OUT.
set -u
out=${OUT:-/tmp/roomsim-diamond-bands}
steps=${STEPS:-256}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
# the hall's mesh is named relative to its room file, so the variant lies beside it
hall=rooms/concert-hall/hall-1200.yaml
sed 's/^grid: {fmax: 250}/grid: {fmax: 1200}/' rooms/concert-hall/concert-hall.yaml > "$hall"
grep -q "fmax: 1200" "$hall" || { echo "diamond-bands.sh: no grid.fmax to set in $hall" >&2; exit 1; }
for bin in .gpu/bin/roomsim ${BASE:+"$BASE"}; do
	echo "== $bin"
	"$bin" bench --kernel diamond --steps "$steps" --band-walls
	"$bin" bench --kernel diamond --steps "$steps" --dts 1 "$hall"
done > "$out/bench.txt" 2>&1
echo "== .gpu/bin/roomsim, scalar walls" >> "$out/bench.txt"
.gpu/bin/roomsim bench --kernel diamond --steps "$steps" >> "$out/bench.txt" 2>&1
rm -f "$hall"
grep -E "^==|^diamond" "$out/bench.txt"
