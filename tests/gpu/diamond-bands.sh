#!/bin/sh
# diamond-bands.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): diamond's rate
# with band walls (docs/performance.md, "Band materials"): the bench box with --band-walls and
# with scalar walls; a box of the bench box's cells with the band material on its floor and
# ceiling only, then on its four side walls only (which walls pace the towers); and
# rooms/concert-hall at fmax 1200 Hz with its library band materials (dts 1); then the bench
# box with scalar walls; 256 steps each. Each with the towers publishing their levels every
# PUBLISH levels (a list, default "4 0": ROOMSIM_DT_PUBLISH, 0 waiting for whole towers); then
# the floor-and-ceiling and side-wall boxes at 2 cm run end to end, the schedule timed by run
# and fixed; then (RUN=0: not) the hall run end to end for 0.2 s with diamond and with
# slice-vec.
# BASE=BINARY runs the band-wall cases again with an earlier build, in the same call; NCU=1
# samples the stall reasons of one sweep with bands on a smaller box's floor and ceiling
# (Nsight Compute, clocks left alone).
# Logs go to $OUT.
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
# the bench box's 1200 x 958 x 440 cells, its 8 octave bands on some walls, a scalar on the rest
box() {
	cat <<BOX
name: $1
grid: {spacing: 0.01, slab_axis: z}
scheme: {stencil: leggy, order: 2, precision: float32}
duration: 0.01
geometry: {box: [11.98, 9.56, 4.38]}
materials:
  bands: {bands: [63, 125, 250, 500, 1000, 2000, 4000, 8000],
          absorption: [0.08, 0.1, 0.14, 0.2, 0.26, 0.3, 0.32, 0.34]}
  plain: {absorption: 0.2}
surfaces: $2
sources: [{name: S, position: [3.1, 2.7, 1.6], signal: impulse}]
receivers: [{name: R, position: [8.3, 6.1, 2.2]}]
BOX
}
box floor-ceiling "{default: plain, floor: bands, ceiling: bands}" > "$out/box-z.yaml"
box side-walls "{default: bands, floor: plain, ceiling: plain}" > "$out/box-xy.yaml"
bands() {	# the band-wall cases, then the scalar bench box, with binary $1
	"$1" bench --kernel diamond --steps "$steps" --band-walls
	echo "-- bands on the floor and ceiling only"
	"$1" bench --kernel diamond --steps "$steps" --dts 2 "$out/box-z.yaml"
	echo "-- bands on the side walls only"
	"$1" bench --kernel diamond --steps "$steps" --dts 2 "$out/box-xy.yaml"
	echo "-- the hall at 1.2 kHz"
	"$1" bench --kernel diamond --steps "$steps" --dts 1 "$hall"
	echo "-- scalar walls"
	"$1" bench --kernel diamond --steps "$steps"
}
for pub in ${PUBLISH:-4 0}; do
	echo "== .gpu/bin/roomsim, ROOMSIM_DT_PUBLISH=$pub"
	ROOMSIM_DT_PUBLISH=$pub bands .gpu/bin/roomsim
done > "$out/bench.txt" 2>&1
if [ -n "${BASE:-}" ]; then
	echo "== $BASE"
	bands "$BASE"
fi >> "$out/bench.txt" 2>&1
# run's choice of schedule: the band-wall boxes at 2 cm, 0.1 s, end to end, with the schedule
# timed (unset) and fixed
for b in z xy; do
	sed 's/spacing: 0.01/spacing: 0.02/; s/duration: 0.01/duration: 0.1/' "$out/box-$b.yaml" \
		> "$out/box-$b-2cm.yaml"
	for pub in unset 0 4; do
		echo "== box-$b at 2 cm, 0.1 s, --kernel diamond, ROOMSIM_DT_PUBLISH=$pub"
		( [ $pub = unset ] || export ROOMSIM_DT_PUBLISH=$pub
		  .gpu/bin/roomsim run "$out/box-$b-2cm.yaml" --kernel diamond --out "$out/run" 2>&1 |
			tr "\r" "\n" | grep -E "took" )
		rm -rf "$out/run"
	done
done >> "$out/bench.txt" 2>&1
if [ "${RUN:-1}" = 1 ]; then
	for k in diamond slice-vec; do
		echo "== the hall at 1.2 kHz, 0.2 s, --kernel $k"
		t0=$(date +%s.%N)
		.gpu/bin/roomsim run "$hall" --set hybrid= --set duration=0.2 --kernel $k \
			--out "$out/hall-$k" 2>&1 | tr "\r" "\n" | grep -E "steps|setup" | tail -3
		awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f s wall\n", b - a }'
		rm -rf "$out/hall-$k"
	done >> "$out/bench.txt" 2>&1
fi
if [ "${NCU:-0}" = 1 ]; then
	# k_dt7 with bands on the floor and ceiling of a box a quarter of the bench box's
	# columns: stall reasons per instruction, sampled (application replay: the towers wait
	# on each other's flags, which kernel replay does not restore)
	sed 's/box: \[11.98, 9.56, 4.38\]/box: [5.98, 4.78, 4.38]/' "$out/box-z.yaml" > "$out/box-zq.yaml"
	timeout 240 ncu --clock-control none --replay-mode application -k regex:k_dt7 -c 1 \
		--section WarpStateStats --section SourceCounters --section LaunchStats \
		--section Occupancy --import-source yes -o "$out/dt7-bands" -f \
		.gpu/bin/roomsim bench --kernel diamond --steps 8 --dts 2 "$out/box-zq.yaml" \
		> "$out/ncu.txt" 2>&1
	ncu --import "$out/dt7-bands.ncu-rep" --page details > "$out/ncu-details.txt" 2>&1
	ncu --import "$out/dt7-bands.ncu-rep" --page source --csv --print-source sass \
		> "$out/ncu-source.csv" 2>&1
fi
rm -f "$hall"
grep -E "^==|^--|^diamond|took|wall" "$out/bench.txt"
