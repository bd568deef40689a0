#!/bin/sh
# Only udnn* symbols leave libudnn.so, and its SONAME is libudnn.so.0.
lib="${top_builddir:-.}/.libs/libudnn.so"
[ -f "$lib" ] || { echo "exports: $lib not built (static-only build?)"; exit 77; }
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWi]$/ {print $3}' | grep -v '^udnn[A-Z]' || true)
if [ -n "$bad" ]; then
    echo "exports: symbols outside the udnn* namespace:"; echo "$bad"; exit 1
fi
count=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | grep -c '^udnn[A-Z]')
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
echo "exports: $count udnn* functions, SONAME $soname"
[ "$soname" = "libudnn.so.0" ] || { echo "exports: SONAME is '$soname', expected libudnn.so.0"; exit 1; }
# every function declared in udnn.h is exported
missing=0
for f in $(grep -o 'udnn[A-Z][A-Za-z0-9_]*(' "${top_srcdir:-.}/include/udnn.h" | tr -d '(' | sort -u); do
    nm -D --defined-only "$lib" | awk '{print $3}' | grep -qx "$f" || { echo "exports: $f is declared but not exported"; missing=1; }
done
exit $missing
