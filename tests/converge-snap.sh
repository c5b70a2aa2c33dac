#!/bin/sh
# converge-snap.sh - on any machine (the CPU engine): how much of a box room's error at a
# coarse spacing is its walls snapped to whole cells (docs/performance.md, "What sets the
# error at a coarse spacing"). `roomsim converge` with the 7-point scheme, compact R = 4 and
# leggy order 4 at grid.dispersion 0.01, fmax 500 Hz, 0.5 s, in three rigid boxes of about
# 3 x 2.5 x 2 m: A as given (no scheme's whole cells), B of whole cells of compact R = 4's
# spacing (16 x 14 x 11 of 182.32 mm) and C of the 7-point scheme's (45 x 39 x 31 of
# 65.2195 mm), each against a reference whose spacing divides that box's cells (6 and 3
# times their points per wavelength); then box A again with grid.fit (its spacing, and the
# reference's, shrunk until its sides are whole cells), with fcc and IWB too; last, fcc
# and IWB in two fitted boxes whose sides are not in small whole ratios (D and E; box A's
# 6 : 5 : 4 makes many of its modes coincide). Logs go to $OUT.
set -eu
out=${OUT:-/tmp/roomsim-converge-snap}
R=${ROOMSIM:-build/roomsim}
mkdir -p "$out"
room() {	# room NAME X Y Z
	cat > "$out/$1.yaml" <<EOT
grid: {fmax: 500, dispersion: 0.01}
duration: 0.5
geometry: {box: [$2, $3, $4]}
sources: [{name: S, position: [0.9, 0.8, 0.7]}]
receivers: [{name: R, position: [2.1, 1.7, 1.3]}]
EOT
}
room a 3.0 2.5 2.0
room b 2.917120 2.552480 2.005520
room c 2.934878 2.543561 2.021805
room d 3.13 2.41 1.97
room e 3.0 2.47 1.93
for r in a:22.5757 b:22.5757 c:31.5551; do
	name=${r%%:*} ref=${r#*:}
	{
		"$R" info "$out/$name.yaml" | grep '^box'
		"$R" info "$out/$name.yaml" --set scheme.stencil=compact --set scheme.radius2=4 |
			grep '^box'
		"$R" converge "$out/$name.yaml" --schemes 7-point,compact-r4,leggy-4 \
			--dispersions 0.01 --reference "$ref" --out "$out/$name" -q
	} > "$out/box-$name.txt" 2>&1
	echo "== box $name (reference at $ref points per wavelength)"
	cat "$out/box-$name.txt"
done
{
	"$R" info "$out/a.yaml" --set grid.fit=true | grep -E '^(box|fit)'
	"$R" converge "$out/a.yaml" --schemes 7-point,compact-r4,leggy-4,fcc,iwb \
		--dispersions 0.01,0.007 --reference 22.5757 --set grid.fit=true --out "$out/a-fit" -q
} > "$out/box-a-fit.txt" 2>&1
echo "== box a, grid.fit (reference at 22.5757 points per wavelength, fitted)"
cat "$out/box-a-fit.txt"
for name in d e; do
	"$R" converge "$out/$name.yaml" --schemes 7-point,fcc,iwb --dispersions 0.01,0.004 \
		--reference 22.5757 --set grid.fit=true --out "$out/$name-fit" -q \
		> "$out/box-$name-fit.txt" 2>&1
	echo "== box $name, grid.fit (reference at 22.5757 points per wavelength, fitted)"
	cat "$out/box-$name-fit.txt"
done
