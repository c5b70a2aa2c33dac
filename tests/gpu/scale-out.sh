#!/bin/bash
# scale-out.sh - issue 39's measurements on a machine with two GPUs or more (bundle in .gpu/),
# using all of them (N): the strong scaling of the bench box (1, 2 and N GPUs) and of the
# 1.2 kHz hall end to end, weak scaling; the concert hall at 4 kHz (3.2 kHz where the GPUs hold
# less than 300 GB together) set up and stepped on the N GPUs; then every exactness case of
# parallel.sh on N ranks (and on 4 ranks, two a GPU, where N = 2). Logs to $OUT.
set -u
out=${OUT:-/tmp/roomsim-scale-out}
mkdir -p "$out"
export GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
PART=scale bash tests/gpu/parallel.sh > "$out/scale-$GPUS.txt" 2>&1
mb=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
F=4000; [ $((mb * GPUS)) -lt 300000 ] && F=3200
FMAX=$F PART=capacity bash tests/gpu/parallel.sh > "$out/capacity-$F-$GPUS.txt" 2>&1
PART=exact bash tests/gpu/parallel.sh > "$out/exact-$GPUS.txt" 2>&1
[ "$GPUS" = 2 ] && RANKS=4 PART=exact bash tests/gpu/parallel.sh > "$out/exact-4.txt" 2>&1
grep -hE "same bytes|DIFFERENT|failed" "$out"/exact-*.txt | sort | uniq -c | sort -rn | head -5
