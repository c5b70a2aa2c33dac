#!/bin/sh
# fcc-walls-bench.sh - on the GPU machine: the fcc kernels' rate in carved rooms with this
# bundle (.gpu/bin/roomsim) and, when $BASE names one, a baseline roomsim beside it in the same
# run (docs/performance.md, "The fcc scheme's walls in carved rooms"): `roomsim bench` on the
# concert hall of tests/gpu/rooms/concert-fcc.yaml at 1.2 and 2 kHz and on the seminar room
# on the fcc lattice, each kernel 200 steps. Logs to $OUT.
set -u
out=${OUT:-/tmp/roomsim-fcc-walls-bench}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
sed -e "s#mesh: ../../../rooms#mesh: $PWD/rooms#" tests/gpu/rooms/concert-fcc.yaml > /tmp/cf-1200.yaml
sed -e "s/fmax: 1200/fmax: 2000/" /tmp/cf-1200.yaml > /tmp/cf-2000.yaml
sed -e "s#mesh: seminar.obj#mesh: $PWD/tests/gpu/rooms/seminar.obj#" \
    -e "s/scheme: {precision: float32}/scheme: {precision: float32, stencil: fcc}/" \
    tests/gpu/rooms/seminar.yaml > /tmp/sem-fcc.yaml
for room in cf-1200 cf-2000 sem-fcc; do
	for bin in ${BASE:-} .gpu/bin/roomsim; do
		tag=$( [ "$bin" = .gpu/bin/roomsim ] && echo new || echo base )
		echo "-- $room, $tag"
		"$bin" bench /tmp/$room.yaml --steps 200 > "$out/$room-$tag.txt" 2>&1
		grep -E "limit|fcc" "$out/$room-$tag.txt"
	done
done
