#!/bin/sh
# floors-src.sh FILE...: what build-aux/floors.sh reads from the objects (nm), read from C and CUDA
# sources instead, every configuration at once (the #ifdef STARPU_USE_CUDA, TSR_HAVE_MPI and
# STARPU_USE_OPENCL branches alike, the .cu files too): "D file symbol" for each tsr_ or tsr__
# function or variable a file defines with external linkage (a line at column 0 that is not
# static), "U file symbol" for each tsr_ or tsr__ name it uses, comments and literals left out.
set -eu
for f in "$@"; do
	name=$(basename "$f")
	name=${name%.*}
	awk -v f="$name" '
	# the line without comments, string and character literals (a comment may span lines)
	function strip(line,    out, i, c, c2, q, n) {
		out = ""
		n = length(line)
		i = 1
		while (i <= n) {
			c = substr(line, i, 1)
			c2 = substr(line, i, 2)
			if (incomment) {
				if (c2 == "*/") {
					incomment = 0
					i += 2
				} else
					i++
				continue
			}
			if (c2 == "/*") {
				incomment = 1
				i += 2
				continue
			}
			if (c2 == "//")
				break
			if (c == "\"" || c == "\047") {
				q = c
				for (i++; i <= n && substr(line, i, 1) != q; i++)
					if (substr(line, i, 1) == "\\")
						i++
				i++
				out = out " "
				continue
			}
			out = out c
			i++
		}
		return out
	}
	{
		line = $0
		sub(/^extern "C" /, "", line) # a C function of a CUDA file
		s = strip(line)
		if (pending != "" && s ~ /^\{/)
			print "D", f, pending # defined here, not only declared
		if (pending != "" && (s ~ /^\{/ || s ~ /;[ \t]*$/))
			pending = ""
		if (s ~ /^[A-Za-z_]/ && s !~ /^(static|extern|typedef|struct [A-Za-z_0-9]+ *\{|enum|union)/) {
			if (match(s, /tsr_[A-Za-z0-9_]+[ \t]*\(/)) {
				pending = substr(s, RSTART, RLENGTH)
				sub(/[ \t]*\($/, "", pending)
				if (s ~ /;[ \t]*$/)
					pending = "" # a prototype on one line
			} else {
				vars = s
				while (match(vars, /tsr_[A-Za-z0-9_]+[ \t]*[=;,[]/)) {
					d = substr(vars, RSTART, RLENGTH)
					sub(/[ \t]*[=;,[]$/, "", d)
					print "D", f, d
					vars = substr(vars, RSTART + RLENGTH)
				}
			}
		}
		rest = s
		while (match(rest, /(^|[^A-Za-z0-9_])tsr_[A-Za-z0-9_]+/)) {
			u = substr(rest, RSTART, RLENGTH)
			sub(/^[^t]/, "", u)
			print "U", f, u
			rest = substr(rest, RSTART + RLENGTH)
		}
	}' "$f"
done
