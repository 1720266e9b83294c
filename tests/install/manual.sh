#!/bin/sh
# manual.sh: the reference manual as a reader meets it (TAP). Installs Tessera to a temporary
# prefix (make install prefix=DIR), then reads `man -M DIR/share/man 3 tsr_index_launch` (the page
# of one call: synopsis, parameters, return values, threads), checks that every function the
# header declares has a page of its own (not a link to its topic's page), that an enumerator's
# link leads to its topic and tessera(3) to the overview, that the HTML is there, and that
# make uninstall takes it all away. Skipped where configure found no doxygen (no manual is built)
# or where man is not installed. make installcheck sets TSR_PREFIX (and TSR_MANDIR, TSR_DOCDIR) to
# read the installation it made instead.
srcdir=${top_srcdir:-.}
builddir=$(cd "${top_builddir:-.}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessera-manual.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
header=$srcdir/runtime/tessera.h

if [ "${TSR_DOC:-no}" != yes ]; then
	echo "1..0 # SKIP configure found no doxygen: no manual is built or installed"
	exit 0
fi
if ! command -v man >/dev/null 2>&1; then
	echo "1..0 # SKIP man is not installed (apt-get install man-db)"
	exit 0
fi

. "${top_srcdir:-.}/tests/common.sh"
report_logs="$tmp/log"
# man without a pager, at a fixed width, in a locale every machine has
page() { # NAME [SECTION]
	MANPAGER=cat PAGER=cat MANWIDTH=100 LC_ALL=C man -M "$mandir" ${2:+"$2"} "$1" 2>&1
}

echo "1..7"
install_prefix
mandir=${TSR_MANDIR:-$prefix/share/man}
docdir=${TSR_DOCDIR:-$prefix/share/doc/tessera}

# The bar: the page of tsr_index_launch, whole.
page tsr_index_launch 3 >"$tmp/log"
status=0
for want in 'tsr_index_launch - Launch one point task per point' '#include <tessera.h>' \
	'int tsr_index_launch (tsr_task_t task, tsr_box_t domain' 'Parameters' \
	'Return values' 'TSR_EINTERFERE' 'Threads' 'Host thread only' 'tessera_launches(3)'; do
	grep -qF "$want" "$tmp/log" || {
		echo "missing: $want" >>"$tmp/log"
		status=1
	}
done
report "man -M PREFIX/share/man 3 tsr_index_launch shows its page" $status

# Without a section, as the README says it.
page tsr_index_launch >"$tmp/log" && grep -qF 'tsr_index_launch - ' "$tmp/log"
report "man -M PREFIX/share/man tsr_index_launch" $?

# Every function the header declares (extern or static inline) has a page of its own.
: >"$tmp/log"
funcs=$(sed -n 's/^[A-Za-z_][A-Za-z0-9_ *]*[ *]\(tsr_[a-z0-9_]*\)(.*/\1/p' "$header" | sort -u)
count=0
for f in $funcs; do
	count=$((count + 1))
	file=$mandir/man3/$f.3
	if [ ! -f "$file" ]; then
		echo "no page for $f" >>"$tmp/log"
	elif head -n 1 "$file" | grep -q '^\.so '; then
		echo "$f.3 is only a link: $(head -n 1 "$file")" >>"$tmp/log"
	elif ! page "$f" 3 | grep -q "^ *$f - "; then
		echo "man 3 $f shows no NAME line for it" >>"$tmp/log"
	fi
done
echo "$count functions in $header" >>"$tmp/log"
[ "$count" -gt 50 ] && ! grep -q '^no page\|only a link\|no NAME' "$tmp/log"
report "each of the header's functions has a page of its own ($count)" $?

# An enumerator leads to its topic's page; tessera(3) is the overview.
{ page TSR_EINTERFERE 3 | grep -q 'requirements of one launch interfere' &&
	page tessera 3 | grep -q 'Failed tasks'; } >"$tmp/log" 2>&1
report "man 3 TSR_EINTERFERE opens the errors page, man 3 tessera the overview" $?

[ -f "$docdir/html/index.html" ] && [ -f "$docdir/html/group__tessera__launches.html" ]
echo "$docdir/html: $(ls "$docdir/html" 2>&1 | wc -l) files" >"$tmp/log"
report "HTML in PREFIX/share/doc/tessera/html" $?

if [ -n "$TSR_PREFIX" ]; then
	echo "ok 7 # SKIP make installcheck: the installation is not this test's to remove"
else
	(unset MAKEFLAGS MFLAGS MAKELEVEL; ${MAKE:-make} -C "$builddir" uninstall prefix="$prefix") >"$tmp/log" 2>&1
	left=$(find "$mandir" "$docdir" -type f 2>/dev/null | wc -l)
	echo "files left under man and doc: $left" >>"$tmp/log"
	[ "$left" -eq 0 ]
	report "make uninstall removes the manual" $?
fi
exit $failed
