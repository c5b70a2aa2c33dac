#!/bin/sh
# hybrid.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): the benchmarks of
# docs/performance.md, "Full-band responses". 1: the concert hall as shipped (2 s, four
# receivers, 10^6 rays, the whole band), end to end and the tracer's own time; 2: the L-shaped
# room and 3: the concert hall with the wave part's band raised so that it overlaps the
# geometric part's at 500 Hz and 1 kHz, each part analysed alone (compare_parts.py). Logs go
# to $OUT.
set -u
out=${OUT:-/tmp/roomsim-hybrid}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib"
R=.gpu/bin/roomsim
now() { date +%s.%N; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "cpu cores: $(nproc)"
w=$(mktemp -d)
cp rooms/concert-hall/hall.obj "$w/"

echo "== 1. the concert hall as shipped"
t0=$(now)
"$R" run rooms/concert-hall/concert-hall.yaml --out "$w/hall" > "$out/hall.txt" 2>&1
echo "rc=$? end to end $(awk "BEGIN { print $(now) - $t0 }") s" | tee -a "$out/hall.txt"
grep -E "hybrid|geometric|took|steps of" "$out/hall.txt"
"$R" analyze "$w/hall" --no-plots > "$out/hall-analysis.txt" 2>&1
head -14 "$out/hall-analysis.txt"

echo "== 2. the L-shaped room, fmax 1.5 kHz, 2 s, crossover 1 kHz"
sed -e 's/fmax: 500/fmax: 1500/' -e 's/^duration: .*/duration: 2.0/' \
    -e 's/^hybrid: .*/hybrid: {crossover: 1000}/' -e "s|dir: out/l-shaped|dir: $w/l|" \
    rooms/l-shaped.yaml > "$w/l.yaml"
t0=$(now)
"$R" run "$w/l.yaml" > "$out/l.txt" 2>&1
echo "rc=$? end to end $(awk "BEGIN { print $(now) - $t0 }") s" | tee -a "$out/l.txt"
grep -E "geometric|took" "$out/l.txt"
"$R" analyze "$w/l" --part wave --no-plots -q --out "$w/l-wave"
"$R" analyze "$w/l" --part geometric --no-plots -q --out "$w/l-geo"
python3 tests/gpu/compare_parts.py "$w/l-wave/analysis.json" "$w/l-geo/analysis.json" 500 1k \
	| tee "$out/l-compare.txt"

echo "== 3. the concert hall, fmax 1.2 kHz, 2.5 s, crossover 1 kHz (third octaves: the 1 kHz"
echo "   octave's upper edge is past this fmax)"
sed -e 's/fmax: [0-9.]*/fmax: 1200/' -e 's/^duration: .*/duration: 2.5/' \
    -e 's/^hybrid: .*/hybrid: {crossover: 1000, rays: 1000000}/' \
    rooms/concert-hall/concert-hall.yaml > "$w/hall12.yaml"
t0=$(now)
timeout 480 "$R" run "$w/hall12.yaml" --out "$w/h12" > "$out/hall12.txt" 2>&1
echo "rc=$? end to end $(awk "BEGIN { print $(now) - $t0 }") s" | tee -a "$out/hall12.txt"
grep -E "geometric|took|kernel" "$out/hall12.txt" | head
for part in wave geometric; do
	"$R" analyze "$w/h12" --part $part --no-plots -q --out "$w/h12-$part"
	"$R" analyze "$w/h12" --part $part --third --no-plots -q --out "$w/h12-$part-3"
done
python3 tests/gpu/compare_parts.py "$w/h12-wave/analysis.json" "$w/h12-geometric/analysis.json" \
	500 | tee "$out/hall12-compare.txt"
python3 tests/gpu/compare_parts.py "$w/h12-wave-3/analysis.json" \
	"$w/h12-geometric-3/analysis.json" 500 1k | tee -a "$out/hall12-compare.txt"
rm -rf "$w"
