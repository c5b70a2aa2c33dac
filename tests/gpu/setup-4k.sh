#!/bin/bash
# setup-4k.sh - the setup of the concert hall at 4 kHz on every GPU of the machine (issue 39's
# 20 s target; docs/performance.md, "Four GPUs"): the capacity run of parallel.sh (70 steps)
# with the bundle's roomsim, twice, and, when BASE names another roomsim binary (an earlier
# build), that one twice in between, on the same machine. Logs to $OUT.
set -u
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH="$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-/tmp/roomsim-setup-4k}
mkdir -p "$out"
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/gpus.txt"
nproc | tee -a "$out/gpus.txt"
sed -e "s/fmax: 250/fmax: 4000/" -e 's/duration: 2.0/duration: 0.00095/' \
	-e "s#mesh: hall.obj#mesh: $PWD/rooms/concert-hall/hall.obj#" \
	rooms/concert-hall/concert-hall.yaml > /tmp/hall4k.yaml
one() {	# name binary
	/usr/bin/time -v "$2" run /tmp/hall4k.yaml --gpus "$gpus" --kernel slice-vec --out /tmp/h4k \
		> "$out/$1.txt" 2>&1
	echo "$1 rc=$?: $(grep -E 'set up in' "$out/$1.txt" | head -1 | cut -c1-160)"
	grep -E "Elapsed|Maximum resident" "$out/$1.txt"
	rm -rf /tmp/h4k
}
one new-1 .gpu/bin/roomsim
[ -n "${BASE:-}" ] && one base-1 "$BASE"
one new-2 .gpu/bin/roomsim
[ -n "${BASE:-}" ] && one base-2 "$BASE"
if [ -n "${PHASES:-}" ]; then	# a build with phase timers: RS_T=1 prints them per rank
	RS_T=1 one phases .gpu/bin/roomsim
	grep -E "^(inside|touch|flood|leak|bins|base|walls|finish|kinds)" "$out/phases.txt" | sort | \
		awk '{ s[$1] = s[$1] " " $2 } END { for (k in s) print k ":" s[k] }'
fi
