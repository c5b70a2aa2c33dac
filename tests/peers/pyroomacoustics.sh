#!/bin/sh
# pyroomacoustics.sh PRA_SRC NANOFLANN_SRC PYBIND11_SRC [WORK] - a benchmark, not a test:
# roomsim's hybrid runs of tests/peers/shoebox.yaml and l-shaped.yaml beside pyroomacoustics
# 0.10 (image sources + ray tracing) on the same rooms: T30 and C80 per octave, and the time each
# takes (docs/performance.md, "Full-band responses"). pyroomacoustics is never a dependency.
#
# The Python registry need not be reachable: give the source trees of pyroomacoustics 0.10.1,
# nanoflann 1.9.0 and pybind11 3.0.1 (git checkouts of those tags, or their files), and have
# Debian's python3-numpy python3-scipy python3-venv python3-dev python3-setuptools-scm cython3
# libeigen3-dev cmake installed. pyroomacoustics is built in a virtual environment under WORK
# (default /tmp/roomsim-pra) against Debian's Eigen, with nanoflann and pybind11 from the trees
# given (its external/CMakeLists.txt is replaced so that nothing is downloaded).
set -eu
[ $# -ge 3 ] || { sed -n '2,13p' "$0"; exit 2; }
pra=$(realpath "$1") nano=$(realpath "$2") pyb=$(realpath "$3")
work=${4:-/tmp/roomsim-pra}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
roomsim=${ROOMSIM:-$top/build/roomsim}
mkdir -p "$work"
if [ ! -x "$work/venv/bin/python" ] || ! "$work/venv/bin/python" -c 'import pyroomacoustics' \
	2> /dev/null; then
	rm -rf "$work/src"
	cp -r "$pra" "$work/src"
	cat > "$work/src/external/CMakeLists.txt" <<'CMAKE'
# Debian's Eigen, and nanoflann and pybind11 from local trees (FETCHCONTENT_SOURCE_DIR_*)
include(FetchContent)
find_package(Eigen3 3.3 REQUIRED NO_MODULE GLOBAL)
FetchContent_Declare(nanoflann GIT_REPOSITORY https://github.com/jlblancoc/nanoflann GIT_TAG v1.9.0)
FetchContent_Declare(pybind11 GIT_REPOSITORY https://github.com/pybind/pybind11 GIT_TAG v3.0.1)
set(NANOFLANN_BUILD_EXAMPLES OFF CACHE BOOL "" FORCE)
set(NANOFLANN_BUILD_TESTS OFF CACHE BOOL "" FORCE)
set(BUILD_BENCHMARKS OFF CACHE BOOL "" FORCE)
set(PYBIND11_TEST OFF CACHE BOOL "")
FetchContent_MakeAvailable(nanoflann pybind11)
CMAKE
	/usr/bin/python3 -m venv --system-site-packages "$work/venv"
	cmake_args="-DFETCHCONTENT_FULLY_DISCONNECTED=ON"
	cmake_args="$cmake_args -DFETCHCONTENT_SOURCE_DIR_NANOFLANN=$nano"
	cmake_args="$cmake_args -DFETCHCONTENT_SOURCE_DIR_PYBIND11=$pyb"
	(cd "$work/src" && SETUPTOOLS_SCM_PRETEND_VERSION=0.10.1 CMAKE_ARGS="$cmake_args" \
	 "$work/venv/bin/pip" install --no-build-isolation --no-deps --no-index . \
		> "$work/build.log" 2>&1) || { tail -20 "$work/build.log"; exit 1; }
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
"$work/venv/bin/python" "$here/pra_rooms.py" "$work/pra"
for room in shoebox l-shaped; do
	start=$(date +%s.%N)
	"$roomsim" run "$here/$room.yaml" --out "$work/rs-$room" 2> "$work/rs-$room.log"
	took=$(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $start }")
	echo "roomsim: $room: run $took s end to end;" \
	     "$(grep -o 'traced in [0-9.]* s' "$work/rs-$room.log")"
	"$roomsim" analyze "$work/rs-$room" --no-plots -q --out "$work/rs-$room"
	"$roomsim" analyze "$work"/pra/pra_"$room"_*.wav --no-plots -q --out "$work/pra-$room"
done
# Eyring: the shoebox 90 m^3 and 126 m^2, the L 156 m^3 and 210 m^2, absorption 0.2
echo "== shoebox"
python3 "$here/compare.py" "$work/rs-shoebox/analysis.json" "$work/pra-shoebox/analysis.json" \
	"$(awk 'BEGIN { print 24 * log(10) * 90 / (343 * -126 * log(0.8)) }')"
echo "== l-shaped"
python3 "$here/compare.py" "$work/rs-l-shaped/analysis.json" "$work/pra-l-shaped/analysis.json" \
	"$(awk 'BEGIN { print 24 * log(10) * 156 / (343 * -210 * log(0.8)) }')"
