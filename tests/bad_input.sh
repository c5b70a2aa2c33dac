#!/bin/sh
# bad_input.sh ROOMSIM - every tests/bad/*.yaml is refused before anything is written:
# exit status 2, a message "FILE:LINE:COL: KEY: ..." naming the line and key that the
# file's first line expects ("# expect: LINE KEY"), and no output directory created.
# Prints one TAP line per file.
roomsim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0
for f in "$(dirname "$0")"/bad/*.yaml; do
	n=$((n + 1))
	set -- $(sed -n '1s/^# expect: //p' "$f")
	line=$1 key=$2
	msg=$(timeout 300 "$roomsim" run "$f" --out "$dir/out" -q 2>&1)	# a hang fails too
	rc=$?
	why=""
	[ "$rc" = 2 ] || why="exit status $rc, not 2"
	case "$msg" in
	*"$f:$line:"*": $key: "*) ;;
	*) why="${why:+$why; }message does not name $f:$line and $key" ;;
	esac
	[ -e "$dir/out" ] && why="${why:+$why; }output was created"
	if [ -z "$why" ]; then
		echo "ok $n - bad input $(basename "$f" .yaml)"
	else
		echo "not ok $n - bad input $(basename "$f" .yaml)"
		echo "# $why: $msg"
	fi
	rm -rf "$dir/out"
done
echo "1..$n"
