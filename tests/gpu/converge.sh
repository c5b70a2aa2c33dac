#!/bin/sh
# converge.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): scheme auto against
# the 7-point scheme end to end in every room of rooms/ and examples/, and the seminar room of
# tests/gpu/rooms with compact R = 4 and fcc besides (docs/performance.md, "Accuracy in real
# rooms"): `roomsim converge` at grid.dispersion 0.01 against the 7-point scheme at 24 points
# per wavelength, each run's wall time (auto's timing of its candidates included: its rate
# cache starts empty). Hybrid parts off: the wave part alone. Logs and tables go to $OUT.
set -u
out=${OUT:-/tmp/roomsim-converge}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" XDG_CACHE_HOME="$out/cache"
R=.gpu/bin/roomsim
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

# conv FILE SCHEMES [--set ...]: the table of one room
conv() {
	f=$1 schemes=$2
	shift 2
	name=$(basename "$f" .yaml)
	echo "== $name"
	$R converge "$f" --schemes "$schemes" --dispersions 0.01 --set hybrid= "$@" \
		--out "$out/$name" -q > "$out/$name.txt" 2>&1
	echo "rc=$?"
	cat "$out/$name.txt"
	rm -rf "$out/$name"/*/	# the WAVs: the tables and logs stay
}

conv tests/gpu/rooms/seminar.yaml 7-point,compact-r4,fcc,auto --set duration=0.5
for f in ${ROOMS:-rooms/studio.yaml rooms/corridor.yaml rooms/fan.yaml rooms/l-shaped.yaml \
	rooms/hall.yaml rooms/concert-hall/concert-hall.yaml examples/shoebox.yaml}; do
	conv "$f" 7-point,auto
done
