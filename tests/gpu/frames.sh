#!/bin/sh
# frames.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): gpu-test but its
# 10^6-step long runs (band_frames_on_gpu among them: band-limited snapshot frames against
# the CPU engine), then the cost of the snapshots in the default example, end to end: 1 s of
# examples/shoebox.yaml without snapshots, with raw frames (band: full) and with band-limited
# ones (band: fmax), each twice, and at a frame every 50 steps. Logs go to $OUT.
set -u
out=${OUT:-/tmp/roomsim-frames}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP ROOMSIM="$PWD/.gpu/bin/roomsim"
export NCCL_NVLS_ENABLE=0
R=.gpu/bin/roomsim
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "== gpu-test without the long runs"
ROOMSIM_GPU_SKIP='*long_runs*' .gpu/bin/test_gpu > "$out/gpu-test.txt" 2>&1
echo "gpu-test rc=$?: $(grep -c '^ok' "$out/gpu-test.txt") ok, $(grep -c '^not ok' "$out/gpu-test.txt") not ok;" \
     "$(grep -c 'bitwise equal\|same bits' "$out/gpu-test.txt") comparisons bitwise equal"
grep -E "^not ok|band-limited|inside the windows|error" "$out/gpu-test.txt" | head -20
echo "== the default example, 1 s on the GPU, snapshots every 200 steps"
w=$(mktemp -d)
sed 's/^  snapshots:.*//' examples/shoebox.yaml > $w/none.yaml
sed 's/snapshots: {every: 200,/snapshots: {every: 200, band: full,/' examples/shoebox.yaml > $w/full.yaml
cp examples/shoebox.yaml $w/fmax.yaml
sed 's/snapshots: {every: 200,/snapshots: {every: 50,/' examples/shoebox.yaml > $w/fmax50.yaml
sed 's/snapshots: {every: 200,/snapshots: {every: 50, band: full,/' examples/shoebox.yaml > $w/full50.yaml
for pass in 1 2; do
	for c in none full fmax full50 fmax50; do
		"$R" run $w/$c.yaml --out $w/o-$c 2>&1 | grep -E "took|steps of" | sed "s/^/$c ($pass): /" | tee -a "$out/cost.txt"
	done
done
rm -rf "$w"
echo "== the concert hall at 1.2 kHz (band walls), 0.2 s, a z plane every 200 steps"
w=$(mktemp -d)
sed -e 's/fmax: [0-9.]*/fmax: 1200/' -e 's/^duration: .*/duration: 0.2/' -e '/^output:/,$d' \
    rooms/concert-hall/concert-hall.yaml > $w/none.yaml
cp rooms/concert-hall/hall.obj $w/
{ cat $w/none.yaml; echo "output: {snapshots: {every: 200, band: full, planes: [{axis: z, at: 1.5}]}}"; } > $w/full.yaml
{ cat $w/none.yaml; echo "output: {snapshots: {every: 200, planes: [{axis: z, at: 1.5}]}}"; } > $w/fmax.yaml
for c in none full fmax; do
	"$R" run $w/$c.yaml --out $w/o-$c 2>&1 | grep -E "took|steps of" | sed "s/^/hall $c: /" | tee -a "$out/cost.txt"
done
rm -rf "$w"
