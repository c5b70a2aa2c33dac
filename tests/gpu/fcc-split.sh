#!/bin/sh
# fcc-split.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): the fcc-split
# kernel (docs/kernels.md) against the CPU engine and against fcc-vec, in one call.
# 1. gpu-test's tests that run the fcc kernels (tests/gpu/each.sh): those of
#    ROOMSIM_GPU_KERNELS's list restricted to them (fcc_lattice, and with LONG=1 the 10^6-step
#    long runs), then fitted_walls_on_gpu, band_materials, uniform_field_on_gpu,
#    ranks_on_gpus and band_frames_on_gpu, which take every kernel or name theirs;
#    SKIP_TESTS=1 leaves this out.
# 2. `roomsim bench` of tests/gpu/rooms/fcc.yaml with fcc-vec and fcc-split, float32 and
#    float64 (the lines give the bandwidth limit of the same run).
# 3. rooms/concert-hall at 2 kHz with fcc's fitted walls at grid.dispersion 0.015 for DUR
#    seconds (default 0.1), once per kernel of KERNELS (default fcc-vec,fcc-split): setup,
#    stepping rate, and whether the WAVs are the same bytes as the first kernel's.
# 4. HALLAUTO=1: the hall with scheme.stencil auto at grid.dispersion 0.01 for 0.6 s, end to
#    end, as tests/gpu/fitted-fcc.sh PART=hallauto does.
# Outputs under $OUT (default /tmp/roomsim-fcc-split).
set -u
out=${OUT:-/tmp/roomsim-fcc-split}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" XDG_CACHE_HOME="$out/cache"
r=.gpu/bin/roomsim
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
if [ -z "${SKIP_TESTS:-}" ]; then
	echo "== gpu-test, the fcc kernels"
	long=
	[ -n "${LONG:-}" ] && long="long_runs_on_gpu band_long_runs_on_gpu"
	ROOMSIM_GPU_KERNELS=fcc OUT="$out/each" TESTS="fcc_lattice $long" DEADLINE=600 \
		sh tests/gpu/each.sh
	OUT="$out/each" TESTS="fitted_walls_on_gpu band_materials uniform_field_on_gpu \
ranks_on_gpus band_frames_on_gpu" DEADLINE=600 sh tests/gpu/each.sh
fi
echo "== bench"
for prec in float32 float64; do
	for k in fcc-vec fcc-split; do
		$r bench tests/gpu/rooms/fcc.yaml --kernel $k --steps 20 --precision $prec \
			> "$out/bench-$k-$prec.txt" 2>&1
		echo "$k $prec: $(grep -iE 'gvox|limit|error' "$out/bench-$k-$prec.txt" | tr '\n' ' ')"
	done
done
echo "== the hall, fitted fcc at 0.015, ${DUR:-0.1} s"
first=
for k in $(echo "${KERNELS:-fcc-vec,fcc-split}" | tr , ' '); do
	n=hall-$k
	ROOMSIM_PHASES=1 $r run rooms/concert-hall/concert-hall.yaml --set grid.fmax=2000 \
		--set grid.dispersion=0.015 --set scheme.stencil=fcc --set grid.walls=fitted \
		--set duration=${DUR:-0.1} --set hybrid= --kernel $k --out "$out/$n" \
		> "$out/$n.log" 2>&1
	echo "$n: rc=$? $(grep -E 'set up in|steps of|update alone|error' "$out/$n.log" | tr '\n' ' ')"
	if [ -z "$first" ]; then
		first=$n
	else
		for w in "$out/$first"/*.wav; do
			cmp -s "$w" "$out/$n/${w##*/}" && echo "  ${w##*/}: the same bytes as $first" ||
				echo "  ${w##*/}: DIFFERS from $first"
		done
	fi
done
rm -rf "$out"/hall-*/
if [ -n "${HALLAUTO:-}" ]; then
	echo "== the hall, auto at 0.01, 0.6 s"
	set -- rooms/concert-hall/concert-hall.yaml --set grid.fmax=2000 \
		--set grid.dispersion=0.01 --set scheme.stencil=auto --set duration=0.6 --set hybrid=
	$r info "$@" > "$out/auto.info" 2>&1
	ROOMSIM_PHASES=1 $r run "$@" --out "$out/auto" > "$out/auto.log" 2>&1
	echo "auto: rc=$? $(grep -E 'scheme auto|set up in|steps of|error' "$out/auto.log" |
		tr '\n' ' ')"
	rm -rf "$out/auto"
fi
rm -rf "$out/cache"
