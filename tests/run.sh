#!/bin/sh
# run.sh [BUILD] - run every test program and the bad-input checks; one line per test,
# then "N passed, N failed". Exits non-zero when any test failed.
build=${1:-build}
export ROOMSIM="$build/roomsim" CMOCKA_MESSAGE_OUTPUT=TAP
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$build"/tests/test_*; do
	name=$(basename "$t")
	"$t" > "$log" 2>&1
	rc=$?
	# cmocka's TAP: "ok N - name", "not ok N - name", "# ..." diagnostics.
	sed -n "s/^\(not ok\|ok\) [0-9]* - \(.*\)/\1 $name: \2/p; s/^# \(.*\)/    \1/p" "$log" |
		grep -v "^    \(not \)\?ok - "
	if [ $rc -ne 0 ] && ! grep -q "^not ok" "$log"; then
		echo "not ok $name: exited with status $rc"
		cat "$log"
	fi
done > "$log.all"
"$(dirname "$0")"/bad_input.sh "$ROOMSIM" | sed -n 's/^\(not ok\|ok\) [0-9]* - \(.*\)/\1 bad_input: \2/p; s/^# /    /p' >> "$log.all"
cat "$log.all"
passed=$(grep -c "^ok " "$log.all")
failed=$(grep -c "^not ok " "$log.all")
rm -f "$log.all"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
