#!/usr/bin/env bash
# installed_library.sh BUILD_DIR - what a pipeline gets from `meson install`: the library, its
# headers (clstats.h and clstats/*.h) and clstats.pc. Installs into a scratch DESTDIR, checks
# that the library exports public clstats_ names only, builds a small program with only
# `pkg-config --cflags --libs clstats` (strict C99, all warnings errors), and runs it from
# another directory, so kernels must come from inside the library, not from the source tree.
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
meson install -C "$build" --destdir "$work/root" --no-rebuild --quiet >/dev/null

pc=$(find "$work/root" -name clstats.pc | head -1)
[ -n "$pc" ] || { echo "clstats.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$work/root
libdir=$(dirname "$(find "$work/root" -name 'libclstats.so*' | head -1)")
for header in clstats.h clstats/core.h clstats/filter.h clstats/select.h; do
    [ -n "$(find "$work/root" -path "*/include/$header")" ] || { echo "$header not installed"; exit 1; }
done

# Exported: functions named clstats_ (not clstats__, the library's internal names), nothing else.
exports=$(nm -D --defined-only "$libdir/libclstats.so" | awk '$2 ~ /[TDBR]/ {print $3}')
stray=$(echo "$exports" | grep -v '^clstats_[a-z]' || true)
if [ -n "$stray" ]; then
    echo "libclstats.so exports names that are not public:"
    echo "$stray"
    exit 1
fi
echo "exports: $(echo "$exports" | wc -l) public clstats_ functions"

cat >"$work/user.c" <<'C'
#include <clstats.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* 1..9 in a 3 x 3 image: the centre's 3 x 3 window is the whole image, median 5, MAD 2. */
int main(void)
{
    const float img[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    float median[9], mad[9];
    clstats_ctx *ctx;
    struct clstats_filter_params p = {.width = 3};
    if (clstats_ctx_create(&ctx, NULL) != CLSTATS_OK) {
        fprintf(stderr, "context: %s\n", clstats_ctx_message(NULL));
        return 1;
    }
    int status = clstats_median_filter(ctx, img, 3, 3, 3, &p, median, mad);
    if (status != CLSTATS_OK) {
        fprintf(stderr, "filter: %s: %s\n", clstats_strerror(status), clstats_ctx_message(ctx));
        return 1;
    }
    float m;
    status = clstats_median(ctx, img, 9, NULL, &m);
    clstats_ctx_destroy(ctx);
    printf("libclstats %s: median %g mad %g whole-array median %g\n", clstats_version(),
           median[4], mad[4], m);
    return status == CLSTATS_OK && median[4] == 5.0f && mad[4] == 2.0f && m == 5.0f &&
                   strcmp(clstats_version(), CLSTATS_VERSION) == 0
               ? 0
               : 1;
}
C
# shellcheck disable=SC2046 # word splitting of pkg-config's flags is intended
cc -std=c99 -Wall -Wextra -Werror -pedantic "$work/user.c" -o "$work/user" \
    $(pkg-config --cflags --libs clstats)
cd "$work"
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ./user
