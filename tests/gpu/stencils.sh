#!/bin/sh
# stencils.sh - on the GPU machine, after device.sh: larger stencils through the general
# (KernelA), leggy (KernelB) and tile kernels, against the 7-point kernels, in float32 and float64.
export LD_LIBRARY_PATH="$PWD/.gpu/lib"
for f in seven leggy4 leggy8 compact27 box125; do
	for p in float32 float64; do
		sed "s/precision: float32/precision: $p/" tests/gpu/rooms/$f.yaml > /tmp/$f-$p.yaml
		.gpu/bin/roomsim bench /tmp/$f-$p.yaml --steps ${BENCH_STEPS:-10} 2>&1 |
			grep -E "^(scheme|general|leggy|shell|slice-vec|naive3d)"
	done
done
