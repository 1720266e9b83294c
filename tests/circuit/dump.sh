#!/bin/sh
# dump.sh: apps/circuit -dump prints Legion's format (one line per wire: its 10 segment currents,
# then its 9 inner voltages, each " %.5g") with the values of the sequential reference that
# --verify uses (printed by --dump-reference). TAP.
prog=${top_builddir:-.}/apps/circuit/circuit
if [ ! -x "$prog" ]; then
	echo "1..0 # SKIP $prog not built"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/circuit-dump.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
unset TSR_SCHED

. "${top_srcdir:-.}/tests/common.sh"
report_logs="$tmp/log"

# dump NAME ARGS...: run the program; its output in $tmp/log, the dump lines (Legion's start
# with a space, none of the program's other lines do) in $tmp/NAME.
dump() {
	name=$1
	shift
	"$prog" "$@" >"$tmp/log" 2>&1
	rc=$?
	grep '^ ' "$tmp/log" >"$tmp/$name"
	return $rc
}

# close_to A B: two dumps of 150 wires with the same values up to rounding: per column,
# max |a - b| <= 1e-4 max |b| (%.5g keeps 5 digits; the reordered charge sums differ in the last
# bits only; README.md, "Verification").
close_to() {
	paste -d ' ' "$1" "$2" | awk '
	function abs(x) { return x < 0 ? -x : x }
	{ for (i = 1; i <= 19; i++) {
		d = abs($i - $(i + 19)); r = abs($(i + 19))
		if (d > maxd[i]) maxd[i] = d
		if (r > maxr[i]) maxr[i] = r
	} }
	END { if (NR != 150) { print "lines: " NR; exit 1 }
	      for (i = 1; i <= 19; i++) if (maxd[i] > 1e-4 * maxr[i]) { print "column " i ": " maxd[i] " > 1e-4 x " maxr[i]; exit 1 }
	}' >"$tmp/log"
}

# 3 pieces of 50 wires; 95% of wires in their piece, so shared nodes sum charges from several
# pieces in an order Tessera chooses: values agree with the reference to rounding, not bits.
small="-p 3 -npp 40 -wpp 50 -i 3 -l 2"
echo "1..7"

dump tessera $small -dump
rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$tmp/tessera")" -eq 150 ]
report "-dump prints one line per wire (3 x 50)" $?

# Each line: " %.5g" 19 times (10 currents, 9 voltages), nothing else.
awk 'NF != 19 || substr($0, 1, 1) != " " { bad = 1 }
     { for (i = 1; i <= NF; i++) if ($i !~ /^-?[0-9]+(\.[0-9]+)?(e[-+][0-9]+)?$/) bad = 1 }
     END { exit bad }' "$tmp/tessera"
report "each line: 10 currents then 9 voltages, as %.5g" $?

dump reference $small --dump-reference
rc=$?
[ $rc = 0 ] && close_to "$tmp/tessera" "$tmp/reference"
report "-dump matches the reference's values (normwise 1e-4 per column)" $?

# One piece: no node gets charge from two pieces, every value is the reference's bit for bit,
# so the two dumps are the same text.
one="-p 1 -npp 300 -wpp 400 -i 3 -l 3"
dump tessera1 $one -dump && dump reference1 $one --dump-reference &&
	[ "$(wc -l <"$tmp/tessera1")" -eq 400 ] && cmp "$tmp/tessera1" "$tmp/reference1" >"$tmp/log" 2>&1
report "one piece: -dump is the reference's text exactly" $?

# --verify runs one more calc_new_currents after the loops (its probe); -dump must show the state
# after the loops, as Legion's does, and --verify must still pass.
dump verified $small -dump --verify && grep -q '^verify: Tessera: PASS' "$tmp/log" &&
	close_to "$tmp/reference" "$tmp/verified"
report "-dump with --verify: the state after the loops, verification passes" $?

# --reps 2: the dump is the last repetition's, which starts again from the initial circuit.
dump reps $small -dump --reps 2 && close_to "$tmp/reps" "$tmp/reference"
report "-dump with --reps 2 prints the last repetition, the same values" $?
# The comparison can fail: one loop more is not the reference's state after two.
dump later -p 3 -npp 40 -wpp 50 -i 3 -l 3 -dump && ! close_to "$tmp/later" "$tmp/reference"
report "a dump after 3 loops does not match the reference after 2" $?
exit $failed
