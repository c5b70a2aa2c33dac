#!/bin/sh
# fcc-bands.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): band materials on
# the fcc scheme in float32 (docs/physics.md, "The uniform mode in float32"). gpu-test's
# band_materials (every kernel, fcc in both precisions, against the CPU engine) and
# band_long_runs_on_gpu for the fcc kernels; rooms/l-shaped.yaml with the fcc scheme on the GPU
# and the CPU; the concert hall at 1.2 kHz (0.2 s, grid.dispersion 0.01) with its library
# materials on fcc float32 and float64, with scalar walls, and on the 7-point scheme; and at
# 2 kHz on fcc float32 (docs/performance.md). Logs to $OUT.
set -u
out=${OUT:-/tmp/roomsim-fcc-bands}
mkdir -p "$out"
R=$PWD/.gpu/bin/roomsim
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory --format=csv > "$out/gpu.txt"
cat "$out/gpu.txt"
echo "== gpu-test band_materials"
ROOMSIM_GPU_TESTS=band_materials .gpu/bin/test_gpu > "$out/test-band-materials.txt" 2>&1
echo "rc=$?: $(grep -c 'bitwise equal' "$out/test-band-materials.txt") bitwise equal," \
     "$(grep -c '^not ok' "$out/test-band-materials.txt") not ok"
grep -E "^# bands .*fcc|^not ok|ERROR|FAIL" "$out/test-band-materials.txt" | head -20
echo "== gpu-test band_long_runs_on_gpu, fcc kernels"
ROOMSIM_GPU_TESTS=band_long_runs_on_gpu ROOMSIM_GPU_KERNELS=fcc .gpu/bin/test_gpu \
	> "$out/test-band-long-fcc.txt" 2>&1
echo "rc=$?"
grep -E "^# bands|^not ok|ERROR" "$out/test-band-long-fcc.txt"
echo "== rooms/l-shaped.yaml, fcc float32, 0.5 s: GPU and CPU WAVs"
"$R" run rooms/l-shaped.yaml --set scheme.stencil=fcc --set duration=0.5 --out /tmp/lg -q \
	> "$out/l-gpu.txt" 2>&1; echo "gpu rc=$?"
"$R" run rooms/l-shaped.yaml --set scheme.stencil=fcc --set duration=0.5 --out /tmp/lc -q \
	--backend cpu > "$out/l-cpu.txt" 2>&1; echo "cpu rc=$?"
for w in /tmp/lg/*.wav; do
	cmp "$w" "/tmp/lc/$(basename "$w")" && echo "$(basename "$w"): same bytes"
done
hall="rooms/concert-hall/concert-hall.yaml --set grid.fmax=1200 --set grid.dispersion=0.01 --set duration=0.2 --set hybrid="
scalar="--set materials.wood.library= --set materials.wood.absorption=0.10
	--set materials.audience.library= --set materials.audience.absorption=0.60
	--set materials.plaster.library= --set materials.plaster.absorption=0.05"
run() {	# name, arguments
	n=$1; shift
	"$R" run "$@" --out "/tmp/$n" > "$out/$n.txt" 2>&1
	echo "$n rc=$?: $(grep -E 'stepping|steps|done|wall' "$out/$n.txt" | tail -n 3 | tr '\n' ' ')"
}
echo "== the concert hall at 1.2 kHz, 0.2 s"
run hall-fcc-f32-bands $hall --set scheme.stencil=fcc --kernel fcc-vec
run hall-fcc-f64-bands $hall --set scheme.stencil=fcc --set scheme.precision=float64 --kernel fcc-vec
run hall-fcc-f32-scalar $hall --set scheme.stencil=fcc --kernel fcc-vec $scalar
run hall-7pt-f32-bands $hall --kernel slice-vec
run hall-fcc-f32-bands-2 $hall --set scheme.stencil=fcc --kernel fcc-vec
echo "== the concert hall at 2 kHz, 0.2 s, fcc float32"
run hall2k-fcc-f32-bands $hall --set grid.fmax=2000 --set scheme.stencil=fcc --kernel fcc-vec
run hall2k-fcc-f32-scalar $hall --set grid.fmax=2000 --set scheme.stencil=fcc --kernel fcc-vec $scalar
