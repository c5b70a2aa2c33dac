#!/bin/sh
# each.sh - on the GPU machine (bundle of `make gpu-bundle` in .gpu/): gpu-test one test at a
# time, each timed, so that a device call's time can be planned and the suite split over
# several calls. TESTS: the names, in order (default: the whole suite, main()'s list in
# tests/gpu/test_gpu.c); DEADLINE: seconds from the start after which no further test is
# begun (default 540). Each test's output goes to $OUT/NAME.txt; a line per test to stdout
# and $OUT/each.txt: ok, skipped or FAILED, seconds, the comparisons bitwise equal.
# long_runs_on_gpu and band_long_runs_on_gpu (10^6 steps on each kernel) take most of a
# 600-s call each: give them calls of their own, or leave them out of TESTS.
set -u
out=${OUT:-/tmp/roomsim-each}
deadline=${DEADLINE:-540}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP ROOMSIM="$PWD/.gpu/bin/roomsim"
all=$(sed -n '/const struct CMUnitTest all\[\]/,/};/p' tests/gpu/test_gpu.c |
	grep -o 'cmocka_unit_test([a-z0-9_]*)' | sed 's/cmocka_unit_test(\(.*\))/\1/')
[ -n "$all" ] || { echo "each.sh: no test list found in tests/gpu/test_gpu.c" >&2; exit 2; }
start=$(date +%s)
failed=0
for t in ${TESTS:-$all}; do
	now=$(date +%s)
	if [ $((now - start)) -ge "$deadline" ]; then
		echo "$t: not begun (deadline ${deadline} s)" | tee -a "$out/each.txt"
		continue
	fi
	ROOMSIM_GPU_TESTS=$t .gpu/bin/test_gpu > "$out/$t.txt" 2>&1
	rc=$?
	took=$(($(date +%s) - now))
	if [ $rc = 0 ] && grep -q "^ok .* - $t\$" "$out/$t.txt"; then
		state=ok
	elif [ $rc = 0 ] && grep -q "^\(not \)\?ok .* # SKIP" "$out/$t.txt"; then	# cmocka: "not ok N # SKIP"
		state=skipped
	else
		state=FAILED
		failed=1
	fi
	echo "$t: $state, $took s, $(grep -c 'bitwise equal' "$out/$t.txt") bitwise equal" |
		tee -a "$out/each.txt"
done
exit $failed
