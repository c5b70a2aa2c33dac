#!/bin/sh
# fcc-walls.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): the fcc scheme's
# walls in carved rooms against the 7-point scheme (docs/performance.md, "Accuracy in real
# rooms"): `roomsim converge` in the seminar room of tests/gpu/rooms and the carved rooms of
# rooms/ at grid.dispersion 0.01 and 0.004, against the 7-point scheme at 24 points per
# wavelength. Hybrid parts off: the wave part alone. Logs and tables go to $OUT.
set -u
out=${OUT:-/tmp/roomsim-fcc-walls}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" XDG_CACHE_HOME="$out/cache"
R=.gpu/bin/roomsim
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

# conv FILE [--set ...]: the table of one room
conv() {
	f=$1
	shift
	name=$(basename "$f" .yaml)
	echo "== $name"
	$R converge "$f" --schemes 7-point,fcc --dispersions ${DISPERSIONS:-0.01,0.004} \
		--set hybrid= "$@" --out "$out/$name" -q > "$out/$name.txt" 2>&1
	echo "rc=$?"
	cat "$out/$name.txt"
	rm -rf "$out/$name"/*/	# the WAVs: the tables and logs stay
}

conv tests/gpu/rooms/seminar.yaml --set duration=0.5
for f in ${ROOMS:-rooms/l-shaped.yaml rooms/fan.yaml rooms/concert-hall/concert-hall.yaml}; do
	conv "$f"
done
