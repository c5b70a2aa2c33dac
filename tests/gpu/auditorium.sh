#!/bin/sh
# auditorium.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): the issue's
# targets in a second mesh room, rooms/auditorium at fmax 2 kHz and grid.dispersion 0.01, the
# wave part alone (docs/performance.md, "A second mesh room").
# PART=time: end to end over the room's own 1.5 s, each scheme.stencil of STENCILS (default
# "auto leggy": auto, then the 7-point scheme) with an empty rate cache (roomsim's lines: the
# scheme auto chose, the setup's time, the steps' and the whole run's).
# PART=accuracy: 0.5 s of response; `roomsim converge` of fcc with fitted walls at 0.0175
# (what auto chooses) in three placements against fcc with fitted walls at REF (default
# 0.005), then the 7-point scheme's staircase at 0.0099, 0.01 and 0.0101 (the same three
# placements), every run scored against that reference (docs/bench/dev-accuracy/score.py).
# WAVs and logs in $OUT/auditorium-PART.tgz; outputs under $OUT (default
# /tmp/roomsim-auditorium).
set -u
out=${OUT:-/tmp/roomsim-auditorium}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib"
r=.gpu/bin/roomsim
room=rooms/auditorium/auditorium.yaml
part=${PART:-time}
d="$out/$part"
mkdir -p "$d"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
case $part in
time)
	for st in ${STENCILS:-auto leggy}; do
		rm -rf "$out/cache"
		XDG_CACHE_HOME="$out/cache" ROOMSIM_PHASES=1 $r run $room --set grid.fmax=2000 \
			--set grid.dispersion=0.01 --set scheme.stencil=$st --set hybrid= \
			--out "$d/$st" > "$d/$st.log" 2>&1
		echo "$st: rc=$? $(grep -E 'scheme auto|set up in|steps of|error' "$d/$st.log" \
			| tr '\n' ' ')"
		find "$d/$st" -name '*.h5' -delete
		tar -czf "$out/auditorium-$part.tgz" -C "$out" "$part"
	done
	;;
accuracy)
	export XDG_CACHE_HOME="$out/cache"
	ref=${REF:-0.005}
	$r converge $room --schemes fcc --dispersions 0.0175 --placements 3 \
		--reference "fcc:$ref" --set grid.fmax=2000 --set duration=0.5 --set hybrid= \
		--set grid.walls=fitted --out "$d/c" -q > "$d/converge.txt" 2>&1
	echo "converge rc=$?"
	cat "$d/converge.txt"
	runs=$(ls -d "$d"/c/fcc-d*/)
	for disp in 0.0099 0.01 0.0101; do
		n=7-point-d$disp
		ROOMSIM_PHASES=1 $r run $room --set grid.fmax=2000 --set grid.dispersion=$disp \
			--set scheme.stencil=leggy --set duration=0.5 --set hybrid= \
			--out "$d/$n" > "$d/$n.log" 2>&1
		echo "$n: rc=$? $(grep -E 'set up in|steps of|error' "$d/$n.log" | tr '\n' ' ')"
		runs="$runs $d/$n"
	done
	find "$d" -name '*.h5' -delete
	python3 docs/bench/dev-accuracy/score.py "$d/c/reference-fcc-d$ref" 63,125,250,500,1000 \
		$runs | tee "$d/scores.txt"
	tar -czf "$out/auditorium-$part.tgz" -C "$out" "$part"
	;;
esac
rm -rf "$out/cache"
