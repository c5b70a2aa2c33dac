#!/bin/bash
# slab-axis.sh - the slab axis (grid.slab_axis, docs/parallel.md) on a machine with N GPUs
# (bundle of `make gpu-bundle` in .gpu/): the bench box and the concert hall at 1.2 kHz on 1
# and N GPUs, cut across z and across x (what auto picks for both), end to end and stepping;
# N ranks against one GPU byte for byte, and the two axes against each other on one GPU.
# Then the 4 kHz hall's setup on N GPUs with either axis. Logs to $OUT. NVLink multicast off.
set -u
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH="$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-/tmp/roomsim-slab}
mkdir -p "$out"
R=$PWD/.gpu/bin/roomsim
w=/tmp/slab; mkdir -p $w
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1
cp tests/gpu/rooms/bench.yaml $w/bench.yaml
sed -e 's/fmax: 250/fmax: 1200/' -e 's/duration: 2.0/duration: 0.1/' \
	-e "s#mesh: hall.obj#mesh: $PWD/rooms/concert-hall/hall.obj#" \
	rooms/concert-hall/concert-hall.yaml > $w/hall.yaml
for room in bench hall; do
	for axis in z x; do
		"$R" info $w/$room.yaml --ranks $gpus --set grid.slab_axis=$axis | grep -E "^(layers|ranks|  )" | sed "s/^/$room $axis: /"
		for n in 1 $gpus; do
			g=""; [ $n -gt 1 ] && g="--gpus $n"
			/usr/bin/time -f "end to end %e s" "$R" run $w/$room.yaml --backend cuda \
				--kernel slice-vec --set grid.slab_axis=$axis $g --out $w/$room-$axis-$n 2>&1 |
				grep -E "took|ranks|set up|end to end|overlap" | sed "s/^/$room $axis $n GPUs: /"
		done
		ok=1
		for f in $w/$room-$axis-1/*.wav; do cmp -s $f $w/$room-$axis-$gpus/${f##*/} || ok=0; done
		echo "$room $axis: $([ $ok = 1 ] && echo "the same bytes on 1 GPU and $gpus" || echo DIFFERENT)"
	done
	for axis in z x; do	# one GPU, the kernel auto picks
		/usr/bin/time -f "end to end %e s" "$R" run $w/$room.yaml --backend cuda \
			--set grid.slab_axis=$axis --out $w/$room-$axis-auto 2>&1 |
			grep -E "took|kernel|end to end" | sed "s/^/$room $axis 1 GPU, kernel auto: /"
	done
	python3 - $w/$room-z-1/rirs.h5 $w/$room-x-1/rirs.h5 <<'P'
import sys, h5py, numpy as np
a, b = (h5py.File(f)["rir"][()] for f in sys.argv[1:])
print(sys.argv[1].split("/")[-2][:-4], "z against x on one GPU: largest difference",
      "%.2e of the peak" % (np.abs(a - b).max() / np.abs(a).max()))
P
done 2>&1 | tee $out/slab.txt
echo "== the concert hall at 4 kHz on $gpus GPUs, 20 steps" | tee $out/setup-4k.txt
sed -e "s/fmax: 250/fmax: 4000/" -e 's/duration: 2.0/duration: 0.00095/' \
	-e "s#mesh: hall.obj#mesh: $PWD/rooms/concert-hall/hall.obj#" \
	rooms/concert-hall/concert-hall.yaml > $w/hall4k.yaml
for axis in z x; do
	"$R" info $w/hall4k.yaml --ranks $gpus --set grid.slab_axis=$axis | grep -E "^(layers|ranks|  )"
	/usr/bin/time -f "end to end %e s, %M KiB" "$R" run $w/hall4k.yaml --gpus $gpus --kernel slice-vec \
		--set grid.slab_axis=$axis --out $w/h4-$axis 2>&1 | grep -E "took|set up|end to end|ranks"
done 2>&1 | tee -a $out/setup-4k.txt
