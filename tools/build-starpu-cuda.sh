#!/bin/sh
# build-starpu-cuda.sh SRC_OR_TARBALL PREFIX: build StarPU with CUDA into PREFIX (and the notify
# fix where StarPU needs it). Kept for the commands written with it: it is
# `tools/build-starpu.sh --cuda`, whose header says everything (CUDA_DIR, JOBS, BUILD_DIR).
ME=build-starpu-cuda exec "$(dirname "$0")/build-starpu.sh" --cuda "$@"
