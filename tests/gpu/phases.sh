#!/bin/bash
# phases.sh - where the time of a run on N GPUs goes (ROOMSIM_PHASES, docs/cli.md): the bench
# box (BENCH_S seconds of response) and the concert hall at 1.2 kHz (HALL_S) on 1 and N GPUs,
# every phase of every rank stamped on one clock from before the command, N ranks against one
# GPU byte for byte; then each room on N GPUs again with variants of the exchange (VARIANTS:
# env settings separated by spaces, "-" for none). ROOMS: which rooms. Bundle of
# `make gpu-bundle` in .gpu/; logs to $OUT. NVLink multicast off.
set -u
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH="$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-/tmp/roomsim-phases}
mkdir -p "$out"
R=${ROOMSIM:-$PWD/.gpu/bin/roomsim}
w=/tmp/phases; mkdir -p $w
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
BENCH_S=${BENCH_S:-0.6}
HALL_S=${HALL_S:-0.1}
ROOMS=${ROOMS:-"bench hall"}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1
sed -e "s/duration: .*/duration: $BENCH_S/" tests/gpu/rooms/bench.yaml > $w/bench.yaml
sed -e 's/fmax: 250/fmax: 1200/' -e "s/duration: 2.0/duration: $HALL_S/" \
	-e "s#mesh: hall.obj#mesh: $PWD/rooms/concert-hall/hall.obj#" \
	rooms/concert-hall/concert-hall.yaml > $w/hall.yaml
t0=$(date +%s.%N); mpirun --allow-run-as-root -np $gpus --bind-to none true
echo "mpirun -np $gpus true: $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}") s"
for room in $ROOMS; do
	for n in 1 $gpus; do
		g=""; [ $n -gt 1 ] && g="--gpus $n"
		t0=$(date +%s.%N)
		ROOMSIM_PHASES=$t0 "$R" run $w/$room.yaml --backend cuda --kernel slice-vec $g \
			--out $w/$room-$n > $w/log 2>&1
		echo "end to end $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}") s" >> $w/log
		grep -E "phase|took|ranks|set up|end to end|overlap|graph" $w/log |
			sed "s/^/$room $n GPUs: /"
	done
	ok=1
	for f in $w/$room-1/*.wav; do cmp -s $f $w/$room-$gpus/${f##*/} || ok=0; done
	echo "$room: $([ $ok = 1 ] && echo "the same bytes on 1 GPU and $gpus" || echo DIFFERENT)"
done 2>&1 | tee $out/phases.txt
for room in $ROOMS; do
	for v in ${VARIANTS:-}; do
		[ "$v" = - ] && v=""
		t0=$(date +%s.%N)
		env $v ROOMSIM_PHASES=$t0 "$R" run $w/$room.yaml --backend cuda --kernel slice-vec \
			--gpus $gpus --out $w/$room-v > $w/log 2>&1
		echo "end to end $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}") s" >> $w/log
		grep -E "took|set up|end to end|overlap|slabs|alone" $w/log |
			sed "s/^/$room $gpus GPUs ${v:-as is}: /"
		for f in $w/$room-1/*.wav; do
			cmp -s $f $w/$room-v/${f##*/} || echo "$room ${v}: DIFFERENT"
		done
	done
done 2>&1 | tee $out/variants.txt
