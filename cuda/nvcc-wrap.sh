#!/bin/sh
# nvcc-wrap.sh NVCC ARGS... - runs nvcc with the flags libtool and
# configure hand a C compiler: libtool has no CUDA tag, so the .cu files
# are compiled through `libtool --tag=CC --mode=compile` and this script.
# -f... (-fPIC, -fvisibility=...) and -pthread go to the host compiler via
# -Xcompiler; C-only flags nvcc does not take (-W..., -std=...) are dropped.
nvcc=$1
shift
for a in "$@"; do
  shift
  case $a in
    -f*|-pthread) set -- "$@" -Xcompiler "$a" ;;
    -W*|-std=*|-pedantic) ;;
    *) set -- "$@" "$a" ;;
  esac
done
exec "$nvcc" "$@"
