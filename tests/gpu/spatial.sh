#!/bin/sh
# spatial.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): spatial receivers
# (docs/performance.md, "Spatial receivers"). 1: a box with a first- and a third-order
# receiver (one binaural), an omni, a cardioid, a talker and a balloon-table source, on the
# GPU and on the CPU engine, with the leggy scheme and with the default one: every WAV the
# same bytes; 2: what a
# third-order binaural receiver adds to a run's time, end to end, in the concert hall as shipped,
# the hall at 1.2 kHz and the shoebox example, each run without and with it, twice. Logs go
# to $OUT.
set -u
out=${OUT:-/tmp/roomsim-spatial}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib"
R=.gpu/bin/roomsim
now() { date +%s.%N; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "cpu cores: $(nproc)"
w=$(mktemp -d)
cp rooms/concert-hall/hall.obj "$w/"
# binaural receivers read libmysofa's default set, which the GPU machine lacks: SOFA names a
# copy to put there
if [ ! -e /usr/share/libmysofa/default.sofa ] && [ -n "${SOFA:-}" ]; then
	mkdir -p /usr/share/libmysofa && cp "$SOFA" /usr/share/libmysofa/default.sofa
fi

# same CPU GPU LABEL: whether each WAV of CPU is the same bytes in GPU
same() {
	for f in "$1"/*.wav; do
		if cmp -s "$f" "$2/$(basename "$f")"; then
			echo "same bytes: $3$(basename "$f")"
		else
			echo "DIFFERENT: $3$(basename "$f")"
		fi
	done
}

echo "== 1. GPU against the CPU engine"
# a balloon table: levels falling away from the front, louder to the left from 500 Hz up
awk 'BEGIN { print "azimuth, elevation, 125, 250, 500, 1000, 2000";
	for (e = -90; e <= 90; e += 15) for (a = 0; a < 360; a += 15) {
		c = cos(e / 57.29578) * cos(a / 57.29578); l = cos(e / 57.29578) * sin(a / 57.29578)
		printf "%d, %d, %.3f, %.3f, %.3f, %.3f, %.3f\n", a, e, -(1 - c), -2 * (1 - c),
		       -3 * (1 - c) + l, -5 * (1 - c) + l, -8 * (1 - c) + l } }' > "$w/table.csv"
cat > "$w/box.yaml" <<EOF
grid: {fmax: 1000}
scheme: {stencil: leggy, order: 2, precision: float32}
duration: 0.3
geometry: {box: [5.0, 4.0, 3.0]}
materials: {wall: {absorption: 0.10}}
surfaces: {default: wall}
sources: [{name: S1, position: [1.2, 1.5, 1.4], signal: impulse},
  {name: S2, position: [2.2, 1.1, 1.3], directivity: cardioid,
   orientation: {azimuth: 40, elevation: 10}},
  {name: S3, position: [1.9, 2.6, 1.5], directivity: talker,
   orientation: {azimuth: -30, elevation: 5}},
  {name: S4, position: [3.1, 1.4, 1.7], directivity: table.csv,
   orientation: {azimuth: 120}}]
receivers:
  - {name: R1, position: [3.7, 2.5, 1.2], ambisonics: 1}
  - {name: R2, position: [2.5, 2.1, 1.6], ambisonics: 3, binaural: {yaw: 90}}
output: {dir: out, wav: {samplerate: 48000, format: float32}}
EOF
"$R" run "$w/box.yaml" --out "$w/gpu" > "$out/box-gpu.txt" 2>&1
echo "gpu rc=$?"
"$R" run "$w/box.yaml" --out "$w/cpu" --backend cpu > "$out/box-cpu.txt" 2>&1
echo "cpu rc=$?"
grep -E "kernel |receiver|took" "$out/box-gpu.txt"
same "$w/cpu" "$w/gpu" ""
# the same sources with the default scheme (kernel auto: never diamond with a balloon)
sed -e '/^scheme:/d' -e 's/ambisonics: 3, binaural: {yaw: 90}/ambisonics: 1/' "$w/box.yaml" \
	> "$w/box7.yaml"
"$R" run "$w/box7.yaml" --out "$w/gpu7" > "$out/box7-gpu.txt" 2>&1
echo "gpu (7-point) rc=$?"
"$R" run "$w/box7.yaml" --out "$w/cpu7" --backend cpu > "$out/box7-cpu.txt" 2>&1
echo "cpu (7-point) rc=$?"
grep -E "kernel |took" "$out/box7-gpu.txt"
same "$w/cpu7" "$w/gpu7" "7-point "

# run NAME YAML: end to end seconds and the stepping rate, appended to $out/times.txt
run() {
	t0=$(now)
	"$R" run "$2" --out "$w/o-$1" > "$out/$1.txt" 2>&1
	rc=$?
	echo "$1 rc=$rc end to end $(awk "BEGIN { print $(now) - $t0 }") s;" \
	     "$(grep -o '([0-9.]* [MG]vox/s)' "$out/$1.txt" | tail -1)" | tee -a "$out/times.txt"
	rm -rf "$w/o-$1"
}

echo "== 2. the time a third-order binaural receiver adds"
# a third-order binaural receiver in place of a plain one
spatial='s|\(  - {name: stalls, position: \[16.0, 8.0, 1.2\]\)}|\1, ambisonics: 3, binaural: true}|'
sed -e "s|mesh: hall.obj|mesh: $w/hall.obj|" rooms/concert-hall/concert-hall.yaml > "$w/hall.yaml"
sed -e "$spatial" "$w/hall.yaml" > "$w/hall-sp.yaml"
sed -e 's/fmax: [0-9.]*/fmax: 1200/' -e 's/^duration: .*/duration: 2.5/' \
    -e 's/^hybrid: .*/hybrid: {crossover: 1000, rays: 1000000}/' "$w/hall.yaml" > "$w/h12.yaml"
sed -e "$spatial" "$w/h12.yaml" > "$w/h12-sp.yaml"
sed -e 's|\(  - {name: R1, position: \[3.7, 2.5, 1.2\]\)}|\1, ambisonics: 3, binaural: true}|' \
    examples/shoebox.yaml > "$w/shoebox-sp.yaml"
grep -c ambisonics "$w/hall-sp.yaml" "$w/h12-sp.yaml" "$w/shoebox-sp.yaml"
for i in 1 2; do
	run hall "$w/hall.yaml"
	run hall-spatial "$w/hall-sp.yaml"
	run shoebox examples/shoebox.yaml
	run shoebox-spatial "$w/shoebox-sp.yaml"
done
if [ -z "${SPATIAL_QUICK:-}" ]; then	# SPATIAL_QUICK=1: not the 1.2 kHz hall (6 minutes)
	run hall12 "$w/h12.yaml"
	run hall12-spatial "$w/h12-sp.yaml"
	grep -E "receiver stalls|geometric|kernel " "$out/hall12-spatial.txt"
fi
rm -rf "$w"
