#!/bin/bash
# parallel.sh - on a machine with two GPUs or more (bundle of `make gpu-bundle` in .gpu/; GPUS=N
# uses N of them, default 2): a run on N GPUs against one, byte for byte (docs/parallel.md;
# RANKS=M: M ranks through mpirun, several a GPU where M > N), then
# strong and weak scaling and the capacity run of docs/performance.md (PART=exact, scale or
# capacity for one of them). Logs to $OUT. NVLink multicast stays off.
set -u
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH="$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-/tmp/roomsim-parallel}
mkdir -p "$out"
R=$PWD/.gpu/bin/roomsim
w=/tmp/par; mkdir -p $w
part=${PART:-all}
gpus=${GPUS:-2}
ranks=${RANKS:-$gpus}
# the decomposed run of the exactness cases: --gpus N, or more ranks than GPUs through mpirun
many() {
	if [ "$ranks" = "$gpus" ]; then "$R" run "$@" --gpus "$gpus"
	else mpirun --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH \
		-np "$ranks" "$R" run "$@" --backend cuda; fi
}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -4
# same FILE DIR1 DIR2: WAVs the same bytes and rirs.h5's /rir and /rir_air equal
same() {
	local ok=1
	for f in "$2"/*.wav; do cmp -s "$f" "$3/${f##*/}" || ok=0; done
	python3 - "$2/rirs.h5" "$3/rirs.h5" <<'P' || ok=0
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
for d in ("rir", "rir_air"):
    if d in a and not np.array_equal(a[d][()], b[d][()]):
        print(d, "differs: max", np.abs(a[d][()] - b[d][()]).max()); sys.exit(1)
print("engine:", a.attrs["engine"], "|", b.attrs["engine"])
P
	for g in "$2"/*_grids.h5 "$2"/*_snapshots.h5; do	# every dataset of the grid and snapshot files
		[ -e "$g" ] || continue
		python3 - "$g" "$3/${g##*/}" <<'P' || ok=0
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
n = []
def cmp(name, x):
    if isinstance(x, h5py.Dataset):
        n.append(name)
        if not np.array_equal(x[()], b[name][()]):
            print(sys.argv[1], name, "differs"); sys.exit(1)
a.visititems(cmp)
print(sys.argv[1].split("/")[-1] + ":", len(n), "datasets equal")
P
	done
	echo "$1: $([ $ok = 1 ] && echo "the same bytes on 1 GPU and ${4:-2} ranks" || echo DIFFERENT)"
}
if [ "$part" = all ] || [ "$part" = exact ]; then
echo "== exactness: 1 GPU against $ranks ranks"
cat > $w/box.yaml <<'Y'
name: box
grid: {spacing: 0.05}
duration: 0.12
geometry: {box: [1.4, 1.1, 1.2]}
materials: {w: {absorption: 0.2}, f: {admittance: 0.05}}
surfaces: {default: w, floor: f}
sources: [{name: S, position: [0.42, 0.51, 0.41], signal: ricker, fc: 400}]
receivers: [{name: R1, position: [0.9, 0.6, 0.11]}, {name: R2, position: [0.9, 0.6, 0.3]},
  {name: R3, position: [0.9, 0.6, 0.6]}, {name: R4, position: [0.9, 0.6, 0.58]},
  {name: R5, position: [0.9, 0.6, 0.8]}, {name: R6, position: [0.9, 0.6, 1.07]}]
Y
cat > $w/shapes.yaml <<'Y'
name: shapes
grid: {spacing: 0.05}
duration: 0.08
geometry: {shapes: [{add: box, min: [0, 0, 0], max: [1.4, 1.1, 1.2]},
  {add: sphere, center: [0.7, 0.55, 1.2], radius: 0.45},
  {remove: box, min: [0.9, 0, 0], max: [1.4, 0.4, 0.7]}]}
materials: {w: {absorption: {125: 0.1, 250: 0.15, 500: 0.25, 1000: 0.3}}}
surfaces: {default: w}
sources: [{name: S, position: [0.42, 0.61, 0.51]}]
receivers: [{name: R1, position: [1.1, 0.8, 0.3]}, {name: R2, position: [0.7, 0.55, 1.45]},
  {name: R3, position: [0.3, 0.3, 0.62]}]
Y
sed "s#mesh: seminar.obj#mesh: $PWD/tests/gpu/rooms/seminar.obj#; s/^duration:.*/duration: 0.1/" \
	tests/gpu/rooms/seminar.yaml > $w/seminar.yaml
sed -e 's#^receivers: \[#receivers: [{name: h, grid: {at: 0.5, spacing: 0.2}}, {name: v, grid: {plane: x, at: 0.7, spacing: 0.1}}, #' \
    -e 's#^receivers:#output: {snapshots: {every: 50, planes: [{axis: z, at: 0.62}, {axis: y, at: 0.5}]}}\nreceivers:#' $w/box.yaml > $w/grids.yaml
for c in "box float32 slice-vec" "box float32 naive3d" "box float64 slice-shared" \
	 "box float32 auto" "shapes float32 slice-vec" "shapes float64 tiled-shared" \
	 "shapes:leggy4 float32 shell-shared" "shapes:leggy4 float32 general" \
	 "shapes:fcc float64 fcc-vec" "box:compact float32 shell-vec" "seminar float32 auto" \
	 "grids float32 slice-vec" "grids float64 naive3d"; do
	set -- $c; room=${1%%:*}; st=${1#*:}
	case $st in leggy4) s="stencil: leggy, order: 4";; fcc) s="stencil: fcc";;
		compact) s="stencil: compact, radius2: 2";; *) s="stencil: leggy, order: 2";; esac
	sed -e "/^scheme:/d" -e "s/^duration/scheme: {$s, precision: $2}\nduration/" $w/$room.yaml > $w/c.yaml
	rm -rf $w/o1 $w/o2
	"$R" run $w/c.yaml --backend cuda --kernel $3 --out $w/o1 -q 2> $w/e1.txt || { echo "$c: 1 GPU failed"; cat $w/e1.txt; }
	many $w/c.yaml --kernel $3 --out $w/o2 2> $w/e2.txt || { echo "$c: $ranks ranks failed"; grep -v "^--\|^ *$" $w/e2.txt | head -8; }
	grep -E "ranks|kernel [a-z0-9-]+( \(|$)|set up|overlap" $w/e2.txt | head -4
	same "$c" $w/o1 $w/o2 $ranks
done
fi
if [ "$part" = all ] || [ "$part" = scale ]; then
echo "== strong scaling: the bench box (1200 x 958 x 440 cells), slice-vec, 1784 steps"
cp tests/gpu/rooms/bench.yaml $w/bench.yaml
"$R" info $w/bench.yaml --ranks $gpus | grep -E "^(grid|steps|ranks|  )"
for n in $(seq 1 $gpus); do
	[ $n = 1 ] || [ $n = 2 ] || [ $n = $gpus ] || continue
	g=""; [ $n -gt 1 ] && g="--gpus $n"
	"$R" run $w/bench.yaml --backend cuda --kernel slice-vec $g --out $w/b$n 2>&1 | grep -E "took|ranks|source|overlap" | tee $out/bench-$n.txt
done
"$R" run $w/bench.yaml --backend cuda --kernel slice-vec --out $w/bg 2>&1 | grep took
ROOMSIM_NO_GRAPHS=1 "$R" run $w/bench.yaml --backend cuda --kernel slice-vec --out $w/bng 2>&1 | grep took | sed 's/^/no graphs: /'
ROOMSIM_OVERLAP=0 "$R" run $w/bench.yaml --gpus $gpus --kernel slice-vec --out $w/bno 2>&1 | grep -E "took|overlap" | sed 's/^/no overlap: /' | tee $out/bench-$gpus-no-overlap.txt
same "bench box slice-vec" $w/b1 $w/b$gpus $gpus
same "bench box slice-vec, no overlap" $w/b1 $w/bno $gpus
echo "== weak scaling: $gpus times the cells on $gpus GPUs"
sed "s/21.9\]/$(awk -v g=$gpus 'BEGIN { print 22 * g - 0.1 }')]/" $w/bench.yaml > $w/bench2.yaml
"$R" run $w/bench2.yaml --gpus $gpus --kernel slice-vec --out $w/bw 2>&1 | grep -E "took|ranks" | tee $out/weak-$gpus.txt
echo "== the concert hall at 1.2 kHz (band walls), default kernel, 0.1 s"
sed -e 's/fmax: 250/fmax: 1200/' -e 's/duration: 2.0/duration: 0.1/' -e "s#mesh: hall.obj#mesh: $PWD/rooms/concert-hall/hall.obj#" \
	-e "s#dir: out/concert-hall#dir: $w/hall#" rooms/concert-hall/concert-hall.yaml > $w/hall.yaml
for n in 1 $gpus; do
	g=""; [ $n -gt 1 ] && g="--gpus $n"
	/usr/bin/time -f "end to end %e s" "$R" run $w/hall.yaml --backend cuda --kernel slice-vec $g --out $w/h$n 2>&1 | grep -E "took|ranks|source|set up|end to end" | tee $out/hall-$n.txt
done
same "hall 1.2 kHz slice-vec" $w/h1 $w/h$gpus $gpus
fi
if [ "$part" = all ] || [ "$part" = capacity ]; then
F=${FMAX:-4000}	# 4 kHz does not fit two H100s: FMAX=3200 there
echo "== capacity: the concert hall at $F Hz, float32, on $gpus GPUs, 20 steps"
sed -e "s/fmax: 250/fmax: $F/" -e 's/duration: 2.0/duration: 0.00095/' -e "s#mesh: hall.obj#mesh: $PWD/rooms/concert-hall/hall.obj#" \
	rooms/concert-hall/concert-hall.yaml > $w/hall4k.yaml
"$R" info $w/hall4k.yaml --ranks $gpus | grep -E "^(grid|steps|memory|gpu|ranks|  )"
/usr/bin/time -v "$R" run $w/hall4k.yaml --gpus $gpus --kernel slice-vec --out $w/h4k 2>&1 | grep -E "took|ranks|source|set up|Maximum resident|Elapsed|roomsim:" | tee $out/hall4k.txt
fi
