#!/bin/sh
# shell-blocks.sh - on the GPU machine, after device.sh: the shell kernels' block shapes on the
# 125- and 27-point stencils (docs/performance.md), next to slice-vec's 7-point rate on the
# same grid and the streaming limit of the same run.
export LD_LIBRARY_PATH="$PWD/.gpu/lib"
steps=${BENCH_STEPS:-10}
for f in seven box125 compact27; do
	for p in float32 float64; do
		sed "s/precision: float32/precision: $p/" tests/gpu/rooms/$f.yaml > /tmp/$f-$p.yaml
	done
done
for p in float32 float64; do
	.gpu/bin/roomsim bench /tmp/seven-$p.yaml --kernel slice-vec --steps "$steps" 2>&1 |
		grep -E "^(bandwidth|slice-vec)"
	for f in box125 compact27; do
		for k in shell-shared shell-vec; do
			[ $f = box125 ] && [ $k = shell-vec ] && continue
			for b in 32x2 32x4 64x2 32x8 64x4; do
				printf '%s %s %s ' $f $k $b
				.gpu/bin/roomsim bench /tmp/$f-$p.yaml --kernel $k --block $b \
					--steps "$steps" 2>&1 | grep -E "^shell"
			done
		done
	done
done
