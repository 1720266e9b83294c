#!/bin/sh
# doc-man.sh MANDIR: turn Doxygen's man output (MANDIR/man3) into one page per public symbol.
# Doxygen writes one page per group (tessera_launches.3: every call of the group) and, with
# MAN_LINKS=YES, a one-line `.so` link per symbol to its group's page, so that `man tsr_index_launch`
# would open a page of thirteen calls at its top. Here every function, macro, typedef and enum
# documented in a group gets a page of its own in place of its link: NAME (its brief), SYNOPSIS
# (#include <tessera.h> and its declaration), DESCRIPTION (Doxygen's text: parameters, return
# values, threads) and SEE ALSO (its group's page). The links left are the enumerators' (TSR_EINVAL
# opens the errors page, which lists every code); links named after struct fields (ptr, name,
# size...) and anonymous enums (@0) would shadow other pages in man3 and go. tessera.h's own page
# becomes tessera.3 (`man 3 tessera`: the file's overview: threads, failed tasks, handles).
set -e
man3=$1/man3
[ -d "$man3" ] || {
	echo "doc-man.sh: no $man3 (run doxygen first)" >&2
	exit 1
}
AWK=${AWK:-awk}

# Links named after struct fields and anonymous enums: anything not tsr_*/TSR_*/tessera*.
for f in "$man3"/*.3; do
	base=$(basename "$f" .3)
	case $base in
	tsr_* | TSR_* | tessera*) ;;
	*) rm -f "$f" ;;
	esac
done

# One page per member documented in each group page.
for group in "$man3"/tessera_*.3; do
	"$AWK" -v dir="$man3" -v group="$(basename "$group" .3)" '
	# The symbol a ".SS" line declares, from its text without font escapes.
	function symbol(sig,    s, m) {
		s = sig
		gsub(/\\f[A-Z]|\\&/, "", s)
		if (match(s, /\(\* *[A-Za-z_][A-Za-z0-9_]*\)/)) {
			m = substr(s, RSTART + 2, RLENGTH - 3)
			sub(/^ +/, "", m)
			return m
		}
		if (match(s, /^#define +[A-Za-z_][A-Za-z0-9_]*/)) {
			m = substr(s, RSTART, RLENGTH)
			sub(/^#define +/, "", m)
			return m
		}
		if (match(s, /[A-Za-z_][A-Za-z0-9_]* *\(/)) {
			m = substr(s, RSTART, RLENGTH)
			sub(/ *\($/, "", m)
			return m
		}
		if (match(s, /[A-Za-z_][A-Za-z0-9_]*$/))
			return substr(s, RSTART, RLENGTH)
		return ""
	}
	# The first sentence of the first paragraph: the brief description.
	function brief(text,    b, at) {
		b = text
		at = index(b, "\\&. ")
		if (at > 0)
			b = substr(b, 1, at - 1)
		sub(/\\&\.? *$/, "", b)
		sub(/ +$/, "", b)
		gsub(/\\f[A-Z]/, "", b)
		return b
	}
	# Doxygen lists parameters and return values as "\fIname\fP text" lines joined by .br: one
	# .TP entry each, so that the names stand in a column of their own.
	function lists(text,    n, line, i, out, inlist, tag) {
		n = split(text, line, "\n")
		out = ""
		inlist = 0
		for (i = 1; i <= n; i++) {
			if (line[i] == ".RS 4" && i > 1 && line[i - 1] ~ /^\\fB(Parameters|Return values)\\fP$/) {
				inlist = 1
				out = out "\n" line[i] "\n.PD 0"
				continue
			} else if (inlist && line[i] == ".RE") {
				inlist = 0
				out = out "\n.PD"
			} else if (inlist && line[i] == ".br") {
				continue
			} else if (inlist && match(line[i], /^\\fI[^\\]*\\fP /)) {
				tag = substr(line[i], 1, RLENGTH - 1)
				out = out "\n.TP 16\n" tag "\n" substr(line[i], RLENGTH + 1)
				continue
			}
			out = out "\n" line[i]
		}
		return out
	}
	function flush(    page, sig) {
		if (name == "" || name == "enum" || name ~ /^@/ || body == "")
			return
		page = dir "/" name ".3"
		sig = decl
		gsub(/\\fC \[(inline|static)\]\\fP,? ?/, "", sig)
		sub(/ +$/, "", sig)
		print th_head "\"" name "\"" th_tail > page
		print ".ad l\n.nh\n.SH NAME" > page
		print name " \\- " brief(first) > page
		print ".SH SYNOPSIS\n.nf\n\\fB#include <tessera.h>\\fP\n" > page
		print sig > page
		print ".fi\n.SH DESCRIPTION" lists(body) > page
		print ".SH \"SEE ALSO\"\n\\fB" group "\\fP(3): " title ", and \\fBtessera\\fP(3)" > page
		close(page)
	}
	NR == 1 {
		# .TH "group" 3 "date" "Version x" "Tessera": the same for every page of the group
		th_head = ".TH "
		th_tail = substr($0, index($0, "\" 3 ") + 1)
	}
	/^\.SH NAME/ { getline; title = $0; sub(/^[^ ]* \\- /, "", title) }
	/^\.SH / {
		flush()
		name = ""
		in_docs = ($0 ~ / Documentation"$/)
		next
	}
	in_docs && /^\.SS / {
		flush()
		decl = substr($0, 6, length($0) - 6)
		name = symbol(decl)
		body = ""
		first = ""
		in_first = 0
		next
	}
	in_docs && name != "" {
		body = body "\n" $0
		if ($0 == ".PP" && first == "" && !in_first)
			in_first = 1
		else if (in_first && ($0 ~ /^\./ || $0 == ""))
			in_first = 0
		else if (in_first)
			first = first (first == "" ? "" : " ") $0
	}
	END { flush() }
	' "$group"
done

# tessera.h's page, as tessera(3).
if [ -f "$man3/tessera.h.3" ]; then
	sed -e '1s/^\.TH "tessera\.h"/.TH "tessera"/' -e 's/^tessera\.h \\- /tessera \\- /' \
		"$man3/tessera.h.3" >"$man3/tessera.3"
	rm -f "$man3/tessera.h.3"
fi
