#!/bin/sh
# resume.sh - checkpoints on the GPU machine (docs/cli.md, "Checkpoints"): gpu-test's
# resume_on_gpu, then rooms/concert-hall at 1.2 kHz for 0.1 s on its default kernel: a
# run stopped by SIGTERM after its first checkpoint and resumed gives the WAVs of one that
# never stopped, and what a checkpoint of 6.4e8 cells costs. Run from the repository root
# with the bundle of `make gpu-bundle` in .gpu/; logs go to $OUT.
set -u
out=${OUT:-/tmp/roomsim-device}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP ROOMSIM="$PWD/.gpu/bin/roomsim"
rs=.gpu/bin/roomsim
echo "== resume_on_gpu"
ROOMSIM_GPU_TESTS=resume_on_gpu .gpu/bin/test_gpu 2>&1 | tee "$out/resume-gpu.txt"
echo "== the concert hall at 1.2 kHz"
w=/tmp/hall && rm -rf $w && mkdir -p $w
sed -e 's/^duration: .*/duration: 0.1/' -e 's/fmax: [0-9]*/fmax: 1200/' \
	rooms/concert-hall/concert-hall.yaml > rooms/concert-hall/.resume.yaml
/usr/bin/time -f "reference run: %e s" $rs run rooms/concert-hall/.resume.yaml --out $w/ref -q
# held at step 1500, after the checkpoint at 1000, whatever the machine does meanwhile
ROOMSIM_HOLD_AT=1500 $rs run rooms/concert-hall/.resume.yaml --out $w/ck --checkpoint '1000 steps' \
	> $w/ck.log 2>&1 &
pid=$!
while ! grep -q "holding at step 1500 " $w/ck.log && kill -0 $pid 2>/dev/null; do sleep 0.2; done
kill -TERM $pid; wait $pid; echo "stopped: rc=$?"
grep -v "%" $w/ck.log | tail -n 4
ls -la $w/ck
/usr/bin/time -f "resumed run: %e s" $rs run rooms/concert-hall/.resume.yaml --out $w/ck --resume \
	2>&1 | grep -v "%"
for f in $w/ref/*.wav; do cmp "$f" "$w/ck/$(basename $f)" && echo "same bytes: $(basename $f)"; done
rm -f rooms/concert-hall/.resume.yaml
