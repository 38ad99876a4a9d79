#!/usr/bin/env bash
# sanitize.sh - builds a second tree, build-sanitize/, with AddressSanitizer and
# UndefinedBehaviorSanitizer (meson's -Db_sanitize=address,undefined) and runs the whole test
# suite in it, madfilter's end-to-end runs included: an out-of-bounds access, a use after free,
# undefined behaviour or a leak in our code fails the test that met it. Leaks inside the OpenCL
# runtime (PoCL, the ICD loader, LLVM) are suppressed by tools/lsan.supp, and nothing else is.
# Arguments go to meson test (e.g. a suite name).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-sanitize
if [ ! -f "$dir/build.ninja" ]; then
    # b_lundef=false: the sanitizer runtimes resolve symbols of the shared library at run time.
    meson setup "$dir" --buildtype=debugoptimized -Db_sanitize=address,undefined \
        -Db_lundef=false -Dpython=disabled >/dev/null
fi
ninja -C "$dir"
# verify_asan_link_order=0: the tests preload tests/opencl_shim.c into some runs, ahead of the
#   sanitizer runtime; the shim allocates nothing before the runtime starts.
# use_sigaltstack=0: LLVM (PoCL's compiler) installs its own signal stack on the threads that
#   build kernels, and ASan then fails to unmap it when such a thread ends.
# intercept_tls_get_addr=0: LeakSanitizer misreads glibc 2.36's dynamic TLS blocks of dlopen'ed
#   libraries and crashes while scanning them (google/sanitizers#1322); static TLS is still
#   scanned.
# allocator_may_return_null=1: an absurd allocation (cfitsio sizing from a malformed header,
#   see tools/fuzz.sh) fails as it does outside ASan, so our NULL checks are what is tested.
# fast_unwind_on_malloc=0: whole stacks through libraries built without frame pointers (PoCL),
#   so that tools/lsan.supp can name the runtime's own functions rather than whole libraries.
export ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0:use_sigaltstack=0:intercept_tls_get_addr=0:fast_unwind_on_malloc=0:allocator_may_return_null=1
export LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The instrumented suites run two to four times slower than plain ones (slower still on a loaded
# machine): the suites' own time limits are scaled to match.
meson test -C "$dir" --print-errorlogs --timeout-multiplier 3 "$@"
