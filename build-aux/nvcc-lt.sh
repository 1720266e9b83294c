#!/bin/sh
# Compile one .cu file into a libtool object (.lo): nvcc rejects libtool's -fPIC, so we build the
# PIC object ourselves and write the .lo descriptor that libtool expects.
# usage: nvcc-lt.sh OUT.lo NVCC [nvcc flags...] -c SRC.cu
set -e
lo=$1; shift
nvcc=$1; shift
dir=$(dirname "$lo"); base=$(basename "$lo" .lo)
mkdir -p "$dir/.libs"
"$nvcc" "$@" -Xcompiler -fPIC -o "$dir/.libs/$base.o"
cat > "$lo" <<EOT
# $base.lo - a libtool object file, written by nvcc-lt.sh
pic_object='.libs/$base.o'
non_pic_object=none
EOT
