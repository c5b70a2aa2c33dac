#!/bin/bash
# run.sh [BUILD] - run every test program and the bad-input checks, TEST_JOBS at a time
# (default: one per core), the longest first; one line per test, each program's time, then
# "N passed, N failed". Exits non-zero when any test failed.
#
# The longest-first order comes from BUILD/tests/durations, the seconds each program took
# in the last run here, or from tests/durations before the first. Each program gets
# OMP_NUM_THREADS = cores / jobs (at least 1), so that the jobs do not oversubscribe the
# cores, and idle threads and MPI ranks wait without spinning.
# TESTS="test_cli test_resume" runs only those programs (bad_input names the checks).
build=${1:-build}
here=$(dirname "$0")
export ROOMSIM="$build/roomsim" CMOCKA_MESSAGE_OUTPUT=TAP
cores=$(nproc 2>/dev/null || echo 1)
jobs=${TEST_JOBS:-$cores}
threads=$((cores / jobs))
[ "$threads" -ge 1 ] || threads=1
export OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

names=${TESTS:-$(cd "$build/tests" && ls test_* | tr '\n' ' ') bad_input}
durations="$build/tests/durations"
[ -s "$durations" ] || durations="$here/durations"
# Longest first: the known seconds, unknown programs first of all (they may be long).
order=$(for n in $names; do
	s=$(awk -v n="$n" '$1 == n { print $2 }' "$durations" 2>/dev/null)
	echo "${s:-100000} $n"
done | sort -k1,1nr -k2 | awk '{ print $2 }')

# One program: its TAP output in tmp/NAME.log, its exit status and seconds in tmp/NAME.rc.
run_one() {
	local name=$1 start end rc
	start=$(date +%s.%N)
	if [ "$name" = bad_input ]; then
		"$here"/bad_input.sh "$ROOMSIM" > "$tmp/$name.log" 2>&1
	else
		"$build/tests/$name" > "$tmp/$name.log" 2>&1
	fi
	rc=$?
	end=$(date +%s.%N)
	echo "$rc $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')" > "$tmp/$name.rc"
}
export -f run_one
export build here tmp
echo "$order" | xargs -P "$jobs" -I{} bash -c 'run_one {}'

for name in $names; do
	log=$tmp/$name.log
	set -- $(cat "$tmp/$name.rc" 2>/dev/null || echo "127 0")
	rc=$1
	# cmocka's TAP: "ok N - name", "not ok N - name", "# ..." diagnostics.
	sed -n "s/^\(not ok\|ok\) [0-9]* - \(.*\)/\1 $name: \2/p; s/^# \(.*\)/    \1/p" "$log" |
		grep -v "^    \(not \)\?ok - "
	if [ "$rc" -ne 0 ] && ! grep -q "^not ok" "$log"; then
		echo "not ok $name: exited with status $rc"
		cat "$log"
	fi
done > "$tmp/all"
cat "$tmp/all"

echo "seconds per program ($jobs at a time, $threads thread(s) each):"
for name in $names; do
	set -- $(cat "$tmp/$name.rc" 2>/dev/null || echo "127 0")
	echo "$name $2"
done | sort -k2,2nr > "$tmp/durations"
sed 's/^/    /' "$tmp/durations"
[ -d "$build/tests" ] && [ -z "$TESTS" ] && cp "$tmp/durations" "$build/tests/durations"

passed=$(grep -c "^ok " "$tmp/all")
failed=$(grep -c "^not ok " "$tmp/all")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
