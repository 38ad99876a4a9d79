#!/usr/bin/env bash
# installed_library.sh BUILD_DIR - what a pipeline gets from `meson install`: the library, its
# headers (clstats.h and clstats/*.h) and clstats.pc. Installs into a scratch DESTDIR, checks
# that the library exports public clstats_ names only, builds a small program with only
# `pkg-config --cflags --libs clstats` (strict C99, all warnings errors), and runs it from
# another directory, so kernels must come from inside the library, not from the source tree;
# where the build has the MPI module, the same for libclstats_mpi (clstats_mpi.pc).
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

# The names LIBRARY exports (defined functions and data), failing (said on stderr, since the
# names are the output) where one does not start with PREFIX and a lower-case letter.
exports_only() {
    local names stray
    names=$(nm -D --defined-only "$1" | awk '$2 ~ /[TDBR]/ {print $3}')
    stray=$(echo "$names" | grep -v "^$2[a-z]" || true)
    if [ -n "$stray" ]; then
        echo "$(basename "$1") exports names that are not its public ones ($2):" >&2
        echo "$stray" >&2
        exit 1
    fi
    echo "$names"
}

# Exported: functions named clstats_ (not clstats__, the library's internal names), nothing else.
exports=$(exports_only "$libdir/libclstats.so" clstats_)
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

# The MPI module, where the build has it: a library of its own (libclstats_mpi), so that
# libclstats never loads libmpi; it exports its clstats_mpi_ names only, and a program built with
# `pkg-config --cflags --libs clstats_mpi` alone runs (as one MPI process, without a launcher).
mpi_lib=$(find "$work/root" -name 'libclstats_mpi.so' | head -1)
[ -n "$mpi_lib" ] || { echo "no MPI module in this build"; exit 0; }
if objdump -p "$libdir/libclstats.so" | awk '/NEEDED/ {print $2}' | grep -q mpi; then
    echo "libclstats.so needs MPI: the MPI module must stay in libclstats_mpi"
    exit 1
fi
[ -n "$(find "$work/root" -path '*/include/clstats/mpi.h')" ] || { echo "clstats/mpi.h not installed"; exit 1; }
mpi_exports=$(exports_only "$mpi_lib" clstats_mpi_)
echo "MPI module: $(echo "$mpi_exports" | wc -l) clstats_mpi_ functions; libclstats needs no MPI"
cat >"$work/user_mpi.c" <<'C'
#include <clstats.h>
#include <clstats/mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    const float x[5] = {3, 1, 4, 1, 5};
    const struct clstats_array part = {.host = (void *)x, .dtype = CLSTATS_FLOAT32, .nx = 5, .ny = 1};
    clstats_ctx *ctx;
    double m = 0;
    MPI_Init(&argc, &argv);
    int status = clstats_ctx_create(&ctx, NULL);
    if (status == CLSTATS_OK) status = clstats_mpi_median(ctx, MPI_COMM_WORLD, &part, NULL, &m, NULL);
    if (status != CLSTATS_OK) fprintf(stderr, "%s\n", clstats_ctx_message(ctx));
    clstats_ctx_destroy(ctx);
    MPI_Finalize();
    printf("libclstats_mpi: median %g over one rank\n", m);
    return status == CLSTATS_OK && m == 3.0 ? 0 : 1;
}
C
# MPI's own flags as its .pc file gives them: the scratch root's sysroot is ours, not MPI's.
mpi_pc=$(pkg-config --print-requires clstats_mpi | awk '$1 != "clstats" {print $1}')
# shellcheck disable=SC2046 # word splitting of pkg-config's flags is intended
cc -std=c99 -Wall -Wextra -Werror "$work/user_mpi.c" -o "$work/user_mpi" \
    $(pkg-config --cflags --libs clstats_mpi) \
    $(PKG_CONFIG_SYSROOT_DIR='' pkg-config --cflags --libs $mpi_pc)
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ./user_mpi
