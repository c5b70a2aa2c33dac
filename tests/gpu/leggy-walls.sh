#!/bin/sh
# leggy-walls.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): leggy order 4
# in carved rooms, its legs folded about the walls along their lines, against the 7-point
# scheme (docs/performance.md, "Leggy stencils' walls in carved rooms"): `roomsim converge`
# in the seminar room of tests/gpu/rooms and the carved rooms of rooms/ at grid.dispersion
# 0.01 and 0.004, against the 7-point scheme at 24 points per wavelength. BASE=BINARY runs
# leggy order 4 again with a build from before the folded legs (the 7-point fall-back near
# carved walls). Hybrid parts off: the wave part alone. Logs and tables go to $OUT.
set -u
out=${OUT:-/tmp/roomsim-leggy-walls}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" XDG_CACHE_HOME="$out/cache"
R=.gpu/bin/roomsim
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

# conv BINARY TAG SCHEMES FILE [--set ...]: the table of one room
conv() {
	bin=$1 tag=$2 schemes=$3 f=$4
	shift 4
	name=$(basename "$f" .yaml)-$tag
	echo "== $name"
	$bin converge "$f" --schemes "$schemes" --dispersions ${DISPERSIONS:-0.01,0.004} \
		--set hybrid= "$@" --out "$out/$name" -q > "$out/$name.txt" 2>&1
	echo "rc=$?"
	cat "$out/$name.txt"
	rm -rf "$out/$name"/*/	# the WAVs: the tables and logs stay
}

# room FILE [--set ...]: this build's 7-point scheme and leggy order 4, then BASE's leggy
room() {
	conv $R new 7-point,leggy-4 "$@"
	[ -z "${BASE:-}" ] || conv "$BASE" base leggy-4 "$@"
}

room tests/gpu/rooms/seminar.yaml --set duration=0.5
for f in ${ROOMS:-rooms/l-shaped.yaml rooms/fan.yaml rooms/concert-hall/concert-hall.yaml}; do
	room "$f"
done
