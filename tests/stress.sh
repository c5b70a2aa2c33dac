#!/bin/bash
# stress.sh [BUILD] - the test suite (tests/run.sh) STRESS_RUNS times in a row (default 5)
# on a saturated machine: a busy loop per core and a disk writer run beside it the whole
# time. Prints each run's time and result, then "N passed, N failed" counting the runs;
# exits non-zero when any run failed. TESTS=... narrows each run as in run.sh.
build=${1:-build}
here=$(dirname "$0")
runs=${STRESS_RUNS:-5}
cores=$(nproc 2>/dev/null || echo 1)
tmp=$(mktemp -d)
pids=""
stop_load() {
	[ -n "$pids" ] && kill $pids 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap stop_load EXIT
trap 'exit 130' INT TERM

for _ in $(seq "$cores"); do
	(while :; do :; done) &
	pids="$pids $!"
done
# 64 MB written and synced over and over, in the suite's temporary directory's file system
(while :; do
	dd if=/dev/zero of="$tmp/disk" bs=1M count=64 conv=fsync status=none
	rm -f "$tmp/disk"
done) &
pids="$pids $!"
echo "stress: $cores busy loop(s) and a disk writer beside $runs run(s) of the suite"

passed=0 failed=0
for i in $(seq "$runs"); do
	start=$(date +%s)
	if "$here"/run.sh "$build" > "$tmp/run$i.log" 2>&1; then
		passed=$((passed + 1))
		result=passed
	else
		failed=$((failed + 1))
		result=FAILED
		grep "^not ok" -A3 "$tmp/run$i.log"
	fi
	echo "stress run $i: $result in $(($(date +%s) - start)) s ($(tail -n 1 "$tmp/run$i.log"))"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
