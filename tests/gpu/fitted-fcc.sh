#!/bin/sh
# fitted-fcc.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): the fcc lattice's
# fitted walls (grid.walls: fitted, docs/physics.md "Fitted walls") against its staircase.
# PART=seminar: `roomsim converge` in the seminar room at 2 kHz (0.5 s), --placements 3 at
# dispersion 0.01, the 7-point scheme and fcc with fitted walls, then fcc with the staircase,
# every run scored against the fitted reference (the 7-point scheme at 24 points per
# wavelength; docs/bench/dev-accuracy/score.py). PART=hall: rooms/concert-hall at 2 kHz (0.2 s,
# its library materials), `roomsim converge` of fcc at 0.01 against fcc at REF (default
# 0.0025) with the staircase, then `roomsim run` of fcc with fitted walls at DISPERSIONS
# (default 0.01,0.02), each scored against that reference; SKIP_CONVERGE=1 leaves the converge
# out and scores against the WAVs an earlier call left in $OUT/hall. PART=runs: the seminar
# room end to end (its own 2 s, grid.dispersion 0.01, kernel auto), the 7-point scheme and
# fcc, each with both walls (roomsim's lines: the setup's time, and the grid, steps and
# whole run's). PART=hallruns: the hall as PART=hall, each run of RUNS (stencil:walls:dispersion,
# comma-separated; a dispersion written pN runs grid.ppw N instead) for DUR seconds (default
# 0.2), with its WAVs and log kept in $OUT/hallruns.tgz for scoring elsewhere. PART=coarser:
# the seminar room as PART=seminar with fcc's fitted walls at each of DISPERSIONS (default
# 0.015,0.02) and the 7-point staircase at 0.01, all scored against the fitted reference, then
# end to end (2 s, kernel auto) with fcc's fitted walls at each of DISPERSIONS. PART=hallauto:
# the hall as PART=hallruns with scheme.stencil auto at grid.dispersion 0.01 for each of DURS
# (default 0.6,0.2) seconds, `roomsim info`'s list of candidates first; WAVs and logs in
# $OUT/hallauto.tgz. Outputs
# under $OUT (default /tmp/roomsim-fitted-fcc).
set -u
out=${OUT:-/tmp/roomsim-fitted-fcc}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" XDG_CACHE_HOME="$out/cache"
r=.gpu/bin/roomsim
case ${PART:-seminar} in
seminar)
	$r converge tests/gpu/rooms/seminar.yaml --schemes 7-point,fcc --dispersions 0.01 \
		--placements 3 --set hybrid= --set duration=0.5 --set grid.walls=fitted \
		--out "$out/c-fitted" > "$out/converge-fitted.txt" 2>&1
	$r converge tests/gpu/rooms/seminar.yaml --schemes fcc --dispersions 0.01 \
		--placements 3 --set hybrid= --set duration=0.5 \
		--out "$out/c-staircase" > "$out/converge-staircase.txt" 2>&1
	grep -E "^[a-z0-9.-]+ +(the reference|7-point|fcc)" "$out"/converge-*.txt
	python3 docs/bench/dev-accuracy/score.py "$out/c-fitted/reference-ppw24" \
		63,125,250,500,1000 "$out"/c-staircase/fcc-d0.01 "$out"/c-staircase/fcc-d0.0101 \
		"$out"/c-staircase/fcc-d0.0099 "$out"/c-fitted/fcc-d0.01 \
		"$out"/c-fitted/fcc-d0.0101 "$out"/c-fitted/fcc-d0.0099 \
		"$out"/c-fitted/7-point-d0.01 "$out"/c-fitted/7-point-d0.0101 \
		"$out"/c-fitted/7-point-d0.0099 | tee "$out/cross.txt"
	rm -rf "$out"/c-*/ "$out/cache"
	;;
runs)
	for st in leggy fcc; do
		for w in staircase fitted; do
			n=seminar-$st-$w
			ROOMSIM_PHASES=1 $r run --set hybrid= --set scheme.stencil=$st \
				--set grid.dispersion=0.01 --set grid.walls=$w --set output.dir="$out/$n" \
				tests/gpu/rooms/seminar.yaml > "$out/$n.log" 2>&1
			echo "$n: $(grep -E 'steps of|set up in|error' "$out/$n.log" | tr '\n' ' ')"
		done
	done
	rm -rf "$out"/seminar-*/
	;;
coarser)
	ds=${DISPERSIONS:-0.015,0.02}
	$r converge tests/gpu/rooms/seminar.yaml --schemes fcc --dispersions $ds \
		--placements 3 --set hybrid= --set duration=0.5 --set grid.walls=fitted \
		--out "$out/c-fitted" > "$out/converge-fitted.txt" 2>&1
	$r converge tests/gpu/rooms/seminar.yaml --schemes 7-point --dispersions 0.01 \
		--placements 3 --set hybrid= --set duration=0.5 \
		--out "$out/c-staircase" > "$out/converge-staircase.txt" 2>&1
	grep -E "^[a-z0-9.-]+ +(the reference|7-point|fcc)" "$out"/converge-*.txt
	python3 docs/bench/dev-accuracy/score.py "$out/c-fitted/reference-ppw24" \
		63,125,250,500,1000 "$out"/c-staircase/7-point-d*/ "$out"/c-fitted/fcc-d*/ \
		| tee "$out/cross.txt"
	for d in $(echo "$ds" | tr , ' '); do
		n=seminar-fcc-fitted-d$d
		ROOMSIM_PHASES=1 $r run --set hybrid= --set scheme.stencil=fcc \
			--set grid.dispersion=$d --set grid.walls=fitted --set output.dir="$out/$n" \
			tests/gpu/rooms/seminar.yaml > "$out/$n.log" 2>&1
		echo "$n: $(grep -E 'steps of|set up in|error' "$out/$n.log" | tr '\n' ' ')"
	done
	rm -rf "$out"/c-*/ "$out"/seminar-*/ "$out/cache"
	;;
hallauto)
	nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
	mkdir -p "$out/hallauto"
	for dur in $(echo "${DURS:-0.6,0.2}" | tr , ' '); do
		n=auto-dur$dur
		set -- rooms/concert-hall/concert-hall.yaml --set grid.fmax=2000 \
			--set grid.dispersion=0.01 --set scheme.stencil=auto --set duration=$dur \
			--set hybrid=
		$r info "$@" > "$out/hallauto/$n.info" 2>&1
		ROOMSIM_PHASES=1 $r run "$@" --out "$out/hallauto/$n" > "$out/hallauto/$n.log" 2>&1
		echo "$n: rc=$? $(grep -E 'scheme auto|set up in|steps of|error' \
			"$out/hallauto/$n.log" | tr '\n' ' ')"
		python3 -c "import h5py, sys; a = h5py.File(sys.argv[1]).attrs; \
print('rirs.h5:', a['scheme'], a['walls'])" "$out/hallauto/$n/rirs.h5"
		find "$out/hallauto/$n" -name '*.h5' -delete
		tar -czf "$out/hallauto.tgz" -C "$out" hallauto
	done
	rm -rf "$out/hallauto" "$out/cache"
	;;
hall)
	nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
	if [ -z "${SKIP_CONVERGE:-}" ]; then
		$r converge rooms/concert-hall/concert-hall.yaml --schemes fcc --dispersions 0.01 \
			--reference "fcc:${REF:-0.0025}" --set grid.fmax=2000 --set duration=0.2 \
			--set hybrid= --out "$out/hall" -q > "$out/hall.txt" 2>&1
		echo "converge rc=$?"
		cat "$out/hall.txt"
	fi
	runs="$out/hall/fcc-d0.01"
	for d in $(echo "${DISPERSIONS:-0.01,0.02}" | tr , ' '); do
		n=fitted-d$d
		ROOMSIM_PHASES=1 $r run rooms/concert-hall/concert-hall.yaml --set grid.fmax=2000 \
			--set grid.dispersion=$d --set scheme.stencil=fcc --set grid.walls=fitted \
			--set duration=0.2 --set hybrid= --out "$out/hall/$n" \
			> "$out/$n.log" 2>&1
		echo "$n: rc=$? $(grep -E 'steps of|fitted|error' "$out/$n.log" | tail -2 | tr '\n' ' ')"
		runs="$runs $out/hall/$n"
	done
	python3 docs/bench/dev-accuracy/score.py "$out/hall/reference-fcc-d${REF:-0.0025}" \
		63,125,250,500,1000 $runs | tee "$out/hall-scores.txt"
	find "$out/hall" -name '*.h5' -delete	# the WAVs stay: a later call can score against them
	rm -rf "$out/cache"
	;;
hallruns)
	# every run's WAVs and log under $OUT/hallruns, scored afterwards (score.py) against
	# whichever run serves as the reference: RUNS names them, stencil:walls:dispersion
	nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
	mkdir -p "$out/hallruns"
	for spec in $(echo "${RUNS:-fcc:fitted:0.01,fcc:fitted:0.02,fcc:staircase:0.01,leggy:staircase:0.01,fcc:fitted:0.005}" | tr , ' '); do
		st=${spec%%:*}
		rest=${spec#*:}
		w=${rest%%:*}
		d=${rest#*:}
		n=$st-$w-d$d
		case $d in
		p*) sp="grid.ppw=${d#p}" ;;
		*) sp="grid.dispersion=$d" ;;
		esac
		ROOMSIM_PHASES=1 $r run rooms/concert-hall/concert-hall.yaml --set grid.fmax=2000 \
			--set $sp --set scheme.stencil=$st --set grid.walls=$w \
			--set duration=${DUR:-0.2} --set hybrid= --out "$out/hallruns/$n" \
			> "$out/hallruns/$n.log" 2>&1
		echo "$n: rc=$? $(grep -E 'steps of|stability|error' "$out/hallruns/$n.log" | tail -3 | tr '\n' ' ')"
		find "$out/hallruns/$n" -name '*.h5' -delete
		rm -rf "$out/cache"
		tar -czf "$out/hallruns.tgz" -C "$out" hallruns	# one file: few come back
	done
	rm -rf "$out/hallruns"
	;;
esac
