#!/bin/sh
# hall-2k.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): the accuracy of the
# 7-point scheme and fcc in rooms/concert-hall at fmax 2 kHz (docs/performance.md, "Accuracy
# in real rooms"): `roomsim converge` with SCHEMES (default 7-point,fcc) at DISPERSIONS
# (default 0.01,0.005) against the fcc scheme at REF (default 0.0025; the 7-point scheme at
# 24 points per wavelength would need 3.5e10 cells, more than one GPU holds), DURATION
# seconds (default 0.2), the hybrid part off. The table, the logs and a tarball of the WAVs
# (to score further runs against the same reference, docs/bench/dev-accuracy/score.py) go to
# $OUT.
set -u
out=${OUT:-/tmp/roomsim-hall-2k}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" XDG_CACHE_HOME="$out/cache"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
.gpu/bin/roomsim converge rooms/concert-hall/concert-hall.yaml \
	--schemes "${SCHEMES:-7-point,fcc}" --dispersions "${DISPERSIONS:-0.01,0.005}" \
	--reference "fcc:${REF:-0.0025}" --set grid.fmax=2000 --set "duration=${DURATION:-0.2}" \
	--set hybrid= --out "$out/hall" -q > "$out/hall.txt" 2>&1
echo "rc=$?"
cat "$out/hall.txt"
# the WAVs, one tarball (the device returns a limited number of files)
(cd "$out/hall" && find . -name '*.wav' | tar -czf "$out/hall-wavs.tgz" -T -)
rm -rf "$out/hall"/*/ "$out/cache"
