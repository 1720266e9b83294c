#!/bin/sh
# cl2h.sh IN.cl OUT.h: an OpenCL C source as a C string constant, named after the file
# (dir/kernels.cl -> kernels_cl_source), so that a program carries its kernels and builds them at
# run time with no file to find. Backslashes and quotes are escaped; each line keeps its newline.
set -e
in=$1
out=$2
name=$(basename "$in" | sed -e 's/[^A-Za-z0-9]/_/g')_source
{
	echo "/* generated from $(basename "$in") by build-aux/cl2h.sh: do not edit */"
	echo "static const char $name[] ="
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$/\\n"/' "$in"
	echo ";"
} >"$out.tmp"
mv "$out.tmp" "$out"
