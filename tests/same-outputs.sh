#!/bin/sh
# same-outputs.sh BIN DIR [DURATION] - run every example and test room on the CPU engine with
# the roomsim binary BIN for DURATION seconds (default 0.1, enough for the sound to reach every
# receiver), each into DIR/<room>/, and print one line per output file: its name and a checksum
# of what it holds. WAVs are hashed whole; HDF5 files as h5dump prints them, less their path and
# the attribute roomsim_version (which names the commit). Two builds give the same outputs when
# their listings are the same:
#     tests/same-outputs.sh old/roomsim /tmp/a > a.txt
#     tests/same-outputs.sh build/roomsim /tmp/b > b.txt && diff a.txt b.txt
# The rooms are copied next to their originals (meshes are found relative to them) as
# .same-outputs.yaml, removed afterwards. The GPU test rooms of 5e7 cells run 0.002 s.
set -eu
bin=$1 dir=$2 dur=${3:-0.1}
mkdir -p "$dir"
for room in examples/*.yaml rooms/*.yaml rooms/*/*.yaml tests/gpu/rooms/*.yaml; do
	name=$(echo "$room" | tr / _ | sed 's/\.yaml$//')
	d=$dur
	case $room in tests/gpu/rooms/box125.yaml|tests/gpu/rooms/compact27.yaml|\
		tests/gpu/rooms/fcc.yaml|tests/gpu/rooms/leggy*.yaml|tests/gpu/rooms/seven.yaml|\
		tests/gpu/rooms/hall-seven.yaml) d=0.002 ;;
	esac
	copy=$(dirname "$room")/.same-outputs.yaml
	sed "s/^duration: .*/duration: $d/" "$room" > "$copy"
	status=0
	"$bin" run "$copy" --backend cpu --out "$dir/$name" -q 2> "$dir/$name.err" || status=$?
	rm -f "$copy"
	echo "$name: exit $status"
	for f in "$dir/$name"/*; do
		[ -f "$f" ] || continue
		case $f in
		*.h5) sum=$(h5dump "$f" | tail -n +2 | awk '/ATTRIBUTE "roomsim_version"/ {
				skip = 1; end = substr($0, 1, index($0, "A") - 1) "}" }
			skip && $0 == end { skip = 0; next } !skip' | sha256sum | cut -c1-16) ;;
		*) sum=$(sha256sum < "$f" | cut -c1-16) ;;
		esac
		echo "  $(basename "$f") $sum"
	done
done
