#!/bin/bash
# scale-out.sh - issue 39's measurements on a machine with two GPUs (bundle in .gpu/): every
# exactness case of parallel.sh on 2 ranks and on 4 (two a GPU), the strong scaling of the
# bench box and the 1.2 kHz hall end to end, and the concert hall at 4 kHz (3.2 kHz where a
# GPU holds less than 100 GB) set up and stepped on both GPUs. Logs to $OUT.
set -u
out=${OUT:-/tmp/roomsim-scale-out}
mkdir -p "$out"
PART=exact bash tests/gpu/parallel.sh > "$out/exact-2.txt" 2>&1
RANKS=4 PART=exact bash tests/gpu/parallel.sh > "$out/exact-4.txt" 2>&1
PART=scale bash tests/gpu/parallel.sh > "$out/scale.txt" 2>&1
gb=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
F=4000; [ "$gb" -lt 100000 ] && F=3200
FMAX=$F PART=capacity bash tests/gpu/parallel.sh > "$out/capacity.txt" 2>&1
grep -hE "same bytes|DIFFERENT|failed" "$out"/exact-*.txt | sort | uniq -c | sort -rn | head -5
