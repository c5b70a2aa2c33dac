#!/bin/sh
# converge-boxes.sh - on any machine (the CPU engine): how close fcc and IWB come to the
# converged answer in the box rooms of examples/ and rooms/ at dispersions below
# grid.dispersion 0.01, against the 7-point scheme at 0.01 (docs/performance.md, "Accuracy in
# real rooms": the factors `scheme.stencil: auto` weighs them at). The shoebox and the studio
# at fmax 500 Hz, the corridor at 400 Hz, 0.5 s each, hybrid off: `roomsim converge` as
# given and with grid.fit, then fcc and IWB at more dispersions in the shoebox and the studio,
# scored against the same reference by docs/bench/dev-accuracy/score.py (converge's spectrum
# measure, which reads the WAVs of runs already made); last the
# corridor fitted against a reference at 36 points per wavelength, with its band materials
# replaced by an absorption of 0.02, and so with its near pair off the centre line against
# fcc and IWB at 0.001 (converge --reference fcc:0.001). Logs go to $OUT (about an hour on 2
# cores).
set -eu
out=${OUT:-/tmp/roomsim-converge-boxes}
R=${ROOMSIM:-build/roomsim}
score="/usr/bin/python3 $(cd "$(dirname "$0")/.." && pwd)/docs/bench/dev-accuracy/score.py"
mkdir -p "$out"
common="--set duration=0.5 --set hybrid= --set output.snapshots="
cleared="--set scheme.order= --set scheme.radius2= --set scheme.q= --set scheme.weights=
	--set scheme.dts= --set scheme.nt= --set scheme.split=
	--set scheme.variant= --set scheme.kernel= --set grid.ppw= --set grid.spacing=
	--set grid.courant="
# name:file:fmax:dispersions as given:more as given:dispersions fitted:more fitted
for spec in "shoebox:examples/shoebox.yaml:500:0.01,0.007,0.004:0.006 0.005:0.01,0.007,0.005:0.006 0.004 0.003" \
	    "studio:rooms/studio.yaml:500:0.01,0.007,0.004:0.006 0.005:0.01,0.007,0.005:0.006 0.004 0.003" \
	    "corridor:rooms/corridor.yaml:400:0.01,0.007,0.004::0.01,0.007,0.005,0.004:"; do
	IFS=: read -r name file fmax given more_given fitted more_fitted <<EOT
$spec
EOT
	for fit in false true; do
		tag=$name disps=$given more=$more_given
		[ $fit = true ] && tag=fit-$name disps=$fitted more=$more_fitted
		"$R" converge "$file" --schemes 7-point,fcc,iwb --dispersions "$disps" \
			$common --set grid.fmax="$fmax" --set grid.fit=$fit --out "$out/$tag" -q \
			> "$out/$tag.txt" 2>&1
		[ -n "$more" ] || continue
		for d in $more; do
			"$R" run "$file" --out "$out/$tag/fcc-d$d" -q $common $cleared \
				--set grid.fmax="$fmax" --set grid.fit=$fit --set scheme.stencil=fcc \
				--set grid.dispersion=$d
			"$R" run "$file" --out "$out/$tag/iwb-d$d" -q $common $cleared \
				--set grid.fmax="$fmax" --set grid.fit=$fit \
				--set scheme.stencil=interpolated --set scheme.variant=IWB \
				--set grid.dispersion=$d
		done
		runs=$(cd "$out/$tag" && ls -d 7-point-d0.01 fcc-d* iwb-d* | grep -v '\.log$')
		(cd "$out/$tag" && $score reference-ppw24 63,125,250 $runs) > "$out/$tag-scores.txt"
		echo "== $tag (spectrum dB at 63, 125 and 250 Hz)"
		cat "$out/$tag-scores.txt"
	done
done
"$R" converge rooms/corridor.yaml --schemes 7-point,fcc,iwb --dispersions 0.01,0.005 \
	--reference 36 $common --set grid.fmax=400 --set grid.fit=true --out "$out/fit36-corridor" \
	-q > "$out/fit36-corridor.txt" 2>&1
sed -e 's/concrete: {library: rough_concrete}/concrete: {absorption: 0.02}/' \
	-e 's/tiles: {library: ceramic_tiles}/tiles: {absorption: 0.02}/' rooms/corridor.yaml \
	> "$out/corridor-scalar.yaml"
"$R" converge "$out/corridor-scalar.yaml" --schemes 7-point,fcc --dispersions 0.01,0.005 \
	$common --set grid.fmax=400 --set grid.fit=true --out "$out/corridor-scalar" -q \
	> "$out/corridor-scalar.txt" 2>&1
# the same with the source and the near receiver off the centre line, against fcc and IWB at
# 0.001 (two schemes that agree) as well as the 7-point reference
sed -e 's/position: \[2.0, 1.1, 1.5\]/position: [2.0, 0.93, 1.37]/' \
	-e 's/position: \[5.0, 1.1, 1.5\]/position: [5.0, 1.27, 1.62]/' \
	"$out/corridor-scalar.yaml" > "$out/corridor-off.yaml"
off="$out/corridor-off.yaml"
"$R" converge "$off" --schemes 7-point,fcc,iwb --dispersions 0.01,0.005 $common \
	--set grid.fmax=400 --set grid.fit=true --out "$out/corridor-off" -q > /dev/null 2>&1
for spec in fcc:0.001 iwb:0.001 7-point:0.0025; do
	s=${spec%%:*} d=${spec#*:}
	case $s in
	fcc) set -- --set scheme.stencil=fcc ;;
	iwb) set -- --set scheme.stencil=interpolated --set scheme.variant=IWB ;;
	*) set -- --set scheme.stencil=leggy --set scheme.order=2 ;;
	esac
	"$R" run "$off" --out "$out/corridor-off/$s-d$d" -q $common $cleared --set grid.fmax=400 \
		--set grid.fit=true "$@" --set grid.dispersion="$d"
done
(cd "$out/corridor-off" &&
	$score fcc-d0.001 63,125,250 iwb-d0.001 reference-ppw24 7-point-d0.01 7-point-d0.005 \
		7-point-d0.0025 fcc-d0.01 fcc-d0.005 iwb-d0.01 iwb-d0.005 &&
	$score reference-ppw24 63,125,250 7-point-d0.01 7-point-d0.005 7-point-d0.0025 \
		fcc-d0.01 fcc-d0.005 fcc-d0.001 iwb-d0.01 iwb-d0.005 iwb-d0.001) \
	> "$out/corridor-off-scores.txt"
"$R" converge "$off" --schemes 7-point,fcc,iwb --dispersions 0.01,0.005 --reference fcc:0.001 \
	$common --set grid.fmax=400 --set grid.fit=true --out "$out/corridor-off-fccref" -q \
	> "$out/corridor-off-fccref.txt" 2>&1
cat "$out/fit36-corridor.txt" "$out/corridor-scalar.txt" "$out/corridor-off-scores.txt" \
	"$out/corridor-off-fccref.txt"
