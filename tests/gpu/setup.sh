#!/bin/bash
# setup.sh - where the concert hall's setup time goes on one GPU (ROOMSIM_PHASES): the hall at
# fmax 1200 Hz with its band materials, the wave part alone, HALL_S seconds of response, with
# kernel auto and with each kernel of KERNELS; end to end timed from before the command. Bundle
# of `make gpu-bundle` in .gpu/; logs to $OUT.
set -u
export LD_LIBRARY_PATH="$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-/tmp/roomsim-setup}
mkdir -p "$out"
R=${ROOMSIM:-$PWD/.gpu/bin/roomsim}
w=/tmp/setup; mkdir -p $w
HALL_S=${HALL_S:-0.2}
KERNELS=${KERNELS:-auto}
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | head -1
nproc
sed -e 's/fmax: 250/fmax: 1200/' -e "s/duration: 2.0/duration: $HALL_S/" \
	-e "s#mesh: hall.obj#mesh: $PWD/rooms/concert-hall/hall.obj#" \
	rooms/concert-hall/concert-hall.yaml > $w/hall.yaml
for k in $KERNELS; do
	t0=$(date +%s.%N)
	ROOMSIM_PHASES=$t0 "$R" run $w/hall.yaml --set hybrid= --backend cuda --kernel $k \
		--out $w/hall-$k > $w/log 2>&1
	echo "end to end $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}") s" >> $w/log
	sed "s/^/hall $k: /" $w/log
done 2>&1 | tee $out/setup.txt
