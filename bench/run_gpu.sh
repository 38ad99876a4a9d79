#!/usr/bin/env bash
# run_gpu.sh - what we run on the GPU machine (see ../shared/device/README.md), in stages named
# by $STAGES (default: all): tests (suites on the NVIDIA device and on PoCL there), same (madfilter
# on the sample and a hard image, GPU and CPU outputs compared byte for byte), big (select
# beyond 2^31 elements), filter (bench_filter beside cupyx), windows (rectangles, even sizes,
# circles and rings against squares of the same area),
# select (bench_select beside numpy/cupy/torch), e2e (madfilter on a 4096^2 FITS, cold and warm),
# hosthost (clstats_median_filter host to host, streamed or not), batch (20 images of 8192^2), select_ab and filter_ab (this build against an
# older one, interleaved: was a kernel change a gain?), select_tune (the select.* and columns.* tuning
# parameters swept, through CLSTATS_TUNE), columns (column medians by the radix kernel, the
# one-launch registers and streamed paths and the bracket, interleaved, per shape), columns_tune (the
# bracket's settings swept), registers_tune (the one-launch path's settings swept), streamed_tune
# (the streamed path's), python (the Python package built there, its tests, and its calls beside
# the C call, scipy and cupyx), regress (bench_regress's LTS at 10^5 and 10^6 rows, p = 10, on
# the GPU and on PoCL there), kmeans (bench_kmeans's seed case, 10^7 x 3 k 16 and 10^6 x 256
# k 1024 per iteration, on the GPU and on PoCL there, beside peers_kmeans.py: scikit-learn and
# torch), gp (bench_gp's deviances: one at n = 4064, d = 6, with and without
# its gradient, and a population of 100 at n = 256, by both trailing updates, beside
# bench/peers_gp.py; with GP_PYTHONPATH the seed's examples by its genetic algorithm), mpi (the MPI module:
# tests/test_mpi with 1 to 4 ranks sharing the GPU, and bench_mpi's weak scaling, 2^28
# float32 a rank, beside one rank holding all 4 x 2^28; issue 25). Expects build/ and .device-libs/ carried (and, for
# select_ab and filter_ab, the older build as $AB_BASE, default build-base/, made by
# bench/build_base.sh);
# logs go under $OUT. Extra bench arguments: $FILTER_ARGS, $SELECT_ARGS.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.device-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
STAGES=${STAGES:-tests same filter select}
mkdir -p "$OUT"
has() { [[ " $STAGES " == *" $1 "* ]]; }
clinfo -l 2>&1 | tee "$OUT/devices.txt"

if has tests; then
    for t in build/tests/test_*; do
        [ -f "$t" ] && [ -x "$t" ] || continue
        for dev in ${TEST_DEVS:-gpu cpu}; do
            echo "== $t on $dev"
            CLSTATS_DEVICE=$dev timeout 300 "$t" 2>&1 | tail -4
        done
    done 2>&1 | tee "$OUT/tests.txt"
fi

if has same; then
    # The sample, and a 1001 x 777 image with NaNs, integer ties, a constant block and a few
    # huge values, through madfilter on the GPU and on PoCL: every map must match byte for byte.
    python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
ny, nx = 777, 1001
img = (100 + 5 * rng.standard_normal((ny, nx))).astype(">f4")
img[:, :300] = rng.integers(0, 20, (ny, 300))
img[100:300, 400:700] = 42.0
img[rng.random((ny, nx)) < 0.05] = np.nan
img[rng.random((ny, nx)) < 0.001] = 1e30
img[500:540, 800:840] = np.nan
cards = ["SIMPLE  =                    T", "BITPIX  =                  -32", "NAXIS   =                    2",
         f"NAXIS1  = {nx:20d}", f"NAXIS2  = {ny:20d}", "END"]
head = "".join(c.ljust(80) for c in cards).ljust(2880 * ((len(cards) * 80 + 2879) // 2880))
with open("/tmp/same_in.fits", "wb") as f:
    f.write(head.encode()); f.write(img.tobytes()); f.write(b"\0" * (-img.nbytes % 2880))
PY
    runs=""
    for input in samples/sky.fits /tmp/same_in.fits; do
        for w in ${SAME_WIDTHS:-3 11 31 51 101}; do
            for b in reflect constant wrap; do
                tag=$(basename "$input" .fits)_${w}_$b
                for dev in gpu cpu; do
                    ./build/apps/madfilter/madfilter "$input" "/tmp/same_${tag}_$dev.fits" -w "$w" \
                        --boundary "$b" --maps mad,median,sigma,snr -d $dev --overwrite \
                        || echo "madfilter failed: $tag on $dev"
                done
                runs="$runs $tag"
            done
        done
        # Other windows and rules, as madfilter arguments separated by '|' (SAME_WINDOWS):
        # rectangles, origins, footprints, the even rules.
        IFS='|' read -ra windows <<< "${SAME_WINDOWS:-}"
        for k in "${!windows[@]}"; do
            for b in reflect constant; do
                tag=$(basename "$input" .fits)_win${k}_$b
                for dev in gpu cpu; do
                    ./build/apps/madfilter/madfilter "$input" "/tmp/same_${tag}_$dev.fits" \
                        ${windows[$k]} --boundary "$b" --maps mad,median -d $dev --overwrite \
                        || echo "madfilter failed: $tag (${windows[$k]}) on $dev"
                done
                runs="$runs $tag"
            done
        done
    done
    # Headers differ in the HISTORY and MFDEVICE cards naming the device and in DATE/CHECKSUM: compare the
    # data of each HDU (a few lines of FITS parsing: astropy is not on that machine).
    python3 - $runs <<'PY' 2>&1 | tee "$OUT/same.txt"
import sys
def hdus(path):
    raw, pos, out = open(path, "rb").read(), 0, []
    while pos < len(raw):
        cards = {}
        while True:
            block = raw[pos:pos + 2880]; pos += 2880
            for i in range(0, 2880, 80):
                c = block[i:i + 80].decode("ascii")
                if c[8:10] == "= ":
                    cards[c[:8].strip()] = c[10:].split("/")[0].strip().strip("'").strip()
            if any(block[i:i + 8] == b"END     " for i in range(0, 2880, 80)):
                break
        n = abs(int(cards["BITPIX"])) // 8
        for k in range(int(cards["NAXIS"])):
            n *= int(cards[f"NAXIS{k + 1}"])
        out.append((cards.get("EXTNAME"), raw[pos:pos + n]))
        pos += (n + 2879) // 2880 * 2880
    return out
bad = 0
for tag in sys.argv[1:]:
    try:
        pairs = list(zip(hdus(f"/tmp/same_{tag}_gpu.fits"), hdus(f"/tmp/same_{tag}_cpu.fits")))
    except OSError as e:
        print(tag, "missing output:", e); bad += 1; continue
    same = [a == b for (_, a), (_, b) in pairs]
    bad += not all(same)
    print(tag, " ".join(f"{name}:{'same' if ok else 'DIFFERENT'}" for (name, _), ok in zip(
        (p[0] for p in pairs), same)))
print("all bit-identical" if bad == 0 else f"{bad} runs differ or failed")
PY
fi

if has big; then
    # The selection beyond 2^31 elements (9 GB of float32) on the GPU.
    CLSTATS_TEST_BIG=1 CLSTATS_DEVICE=gpu timeout 400 \
        ./build/tests/test_select 2>&1 | tail -6 | tee "$OUT/big.txt"
fi

if has verbose; then
    # Registers and spills of the filter kernels (NVIDIA's compiler reports them).
    CLSTATS_TUNE=filter.path=sorted,build.options=-cl-nv-verbose CLSTATS_LOG=1 \
        ./build/bench/bench_filter --device gpu --sizes 64 --widths ${WIDTHS:-3,11,31} --repeat 1 \
        --maps median 2>&1 | grep -v RESULT | tee "$OUT/verbose.txt"
fi

if has filter; then
    sizes=${SIZES:-1024,4096}
    widths=${WIDTHS:-3,5,11,21,31}
    for path in ${FILTER_PATHS:-auto}; do
        export CLSTATS_TUNE=filter.path=$path
        echo "== path $path"
        timeout 300 ./build/bench/bench_filter --device gpu --sizes "$sizes" --widths "$widths" \
            --repeat 5 --budget 4 ${FILTER_ARGS:-}
    done 2>&1 | tee "$OUT/bench_filter_gpu.txt"
    unset CLSTATS_TUNE
    timeout 200 python3 bench/peers_filter.py --sizes "$sizes" --widths "$widths" --no-cpu 2>&1 \
        | tee "$OUT/peers_filter_gpu.txt"
fi

if has e2e; then
    # madfilter end to end on a sky-like FITS image per size, twice: the first run compiles
    # (empty program cache), the second finds its program on disk.
    export CLSTATS_CACHE_DIR=/tmp/clstats-cache
    rm -rf "$CLSTATS_CACHE_DIR"
    for n in ${E2E_SIZES:-4096}; do
        python3 - "$n" <<'PY'
import sys, numpy as np
n = int(sys.argv[1])
rng = np.random.default_rng(1)
img = (100 + 5 * rng.standard_normal((n, n))).astype(">f4")
cards = ["SIMPLE  =                    T", "BITPIX  =                  -32", "NAXIS   =                    2",
         f"NAXIS1  = {n:20d}", f"NAXIS2  = {n:20d}", "END"]
head = "".join(c.ljust(80) for c in cards).ljust(2880 * ((len(cards) * 80 + 2879) // 2880))
with open(f"/tmp/sky{n}.fits", "wb") as f:
    f.write(head.encode()); f.write(img.tobytes()); f.write(b"\0" * (-img.nbytes % 2880))
PY
        # A new output each time, as a user's run makes: replacing one would time the file
        # system freeing the old file's pages too.
        for run in cold warm warm warm; do
            rm -f "/tmp/out$n.fits"
            /usr/bin/time -f "madfilter $n ${run}: %e s wall, %M KiB" ./build/apps/madfilter/madfilter \
                "/tmp/sky$n.fits" "/tmp/out$n.fits" -w 11 --maps mad,median -d gpu
        done
        # Once more with madfilter's timeline (CLSTATS_LOG): where the run spends its time.
        rm -f "/tmp/out$n.fits"
        CLSTATS_LOG=1 /usr/bin/time -f "madfilter $n timeline: %e s wall" \
            ./build/apps/madfilter/madfilter "/tmp/sky$n.fits" "/tmp/out$n.fits" -w 11 \
            --maps mad,median -d gpu -q 2>&1 | grep -v "rows read"
    done 2>&1 | tee "$OUT/e2e.txt"
    unset CLSTATS_CACHE_DIR
fi

if has hosthost; then
    # clstats_median_filter from a host array to host arrays: the maps streamed through pinned
    # slots (the default on GPUs) against the whole image moved before and after the kernels.
    for t in "" transfer.stream=off; do
        echo "== ${t:-streamed}"
        CLSTATS_TUNE=$t ./build/bench/bench_filter --device gpu --sizes 4096 --widths 3,11 \
            --maps median,both --repeat 7 | grep -v RESULT
    done 2>&1 | tee "$OUT/hosthost.txt"
fi

if has batch; then
    # The seed's batch: BATCH_N copies of one 8192^2 image, MAD, w = 31, one madfilter run.
    export CLSTATS_CACHE_DIR=/tmp/clstats-cache
    python3 - <<'PY'
import numpy as np
n = 8192
img = (100 + 5 * np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)).astype(">f4")
cards = ["SIMPLE  =                    T", "BITPIX  =                  -32", "NAXIS   =                    2",
         f"NAXIS1  = {n:20d}", f"NAXIS2  = {n:20d}", "END"]
head = "".join(c.ljust(80) for c in cards).ljust(2880 * ((len(cards) * 80 + 2879) // 2880))
with open("/tmp/batch_one.fits", "wb") as f:
    f.write(head.encode()); f.write(img.tobytes()); f.write(b"\0" * (-img.nbytes % 2880))
PY
    rm -rf /tmp/batch /tmp/batch_out && mkdir -p /tmp/batch /tmp/batch_out
    for i in $(seq -w 1 "${BATCH_N:-20}"); do cp /tmp/batch_one.fits "/tmp/batch/im$i.fits"; done
    # The program compiled once, outside the timing (a user's second batch finds it cached).
    ./build/apps/madfilter/madfilter /tmp/batch_one.fits /tmp/batch_warm.fits -w 31 --maps mad \
        -d gpu --overwrite -q
    /usr/bin/time -f "batch of ${BATCH_N:-20}: %e s wall, %M KiB" ./build/apps/madfilter/madfilter \
        -o /tmp/batch_out -w 31 --maps mad -d gpu /tmp/batch/*.fits 2>&1 | tail -2 \
        | tee "$OUT/batch.txt"
    unset CLSTATS_CACHE_DIR
fi

if has transfer; then
    ./build/bench/bench_transfer --device gpu --mb 64 | tee "$OUT/transfer.txt"
    ./build/bench/bench_transfer --device gpu --mb 256 --repeat 3 | tee -a "$OUT/transfer.txt"
fi

if has shapes; then
    for shape in ${SHAPES:-32,8,2 16,8,4 32,4,4 32,8,1 32,4,2}; do
        echo "== shape $shape"
        IFS=, read -r tx ty px <<<"$shape"
        CLSTATS_TUNE=filter.shape_tx=$tx,filter.shape_ty=$ty,filter.shape_px=$px \
            ./build/bench/bench_filter --device gpu --sizes 4096 \
            --widths ${WIDTHS:-11} --maps median,both --repeat 5 --budget 2 | grep -v RESULT
    done 2>&1 | tee "$OUT/shapes.txt"
fi

if has windows; then
    # What each window costs against the square of the same area (bench_filter --windows):
    # rectangles both ways, even sizes, a circle and a ring (the footprint design).
    ./build/bench/bench_filter --device gpu --sizes 4096 --maps median,both --repeat 5 --budget 4 \
        --windows ${WINDOWS:-11,32x8,8x32,16x4,4x16,12x12,64x2,2x64,circle:6,ring:4:7} \
        2>&1 | tee "$OUT/windows.txt"
fi

if has select_debug; then
    CLSTATS_LOG=1 ./build/bench/bench_select --device gpu --log2n 25,28 --reps 1 \
        --methods radix,sample --columns 10000x1000 2>&1 | grep -v RESULT \
        | tee "$OUT/select_debug.txt"
fi

if has select_ab; then
    # Three interleaved rounds of each build on the sizes with targets, then each build's
    # kernel-by-kernel breakdown, so that a change is judged on one machine in one hour.
    base=${AB_BASE:-build-base}
    ab_args="--device gpu --log2n 25,28 --reps 20 --methods sample,radix --columns 10000x1000"
    for round in 1 2 3; do
        for b in "$base" build; do
            echo "== $b, round $round"
            timeout 120 "./$b/bench/bench_select" $ab_args 2>&1 | grep -v RESULT
        done
    done 2>&1 | tee "$OUT/select_ab.txt"
    for b in "$base" build; do
        echo "== $b, breakdown"
        # Builds before the tuning table read CLSTATS_SELECT_DEBUG; later ones CLSTATS_LOG.
        CLSTATS_SELECT_DEBUG=1 CLSTATS_LOG=1 timeout 120 "./$b/bench/bench_select" \
            --device gpu --log2n 25 \
            --reps 1 --methods sample --columns none 2>&1 | grep -v RESULT
    done 2>&1 | tee -a "$OUT/select_ab.txt"
fi

if has filter_ab; then
    # Two interleaved rounds of each build's filter, median and median+MAD, at the widths the
    # sorted design serves on the GPU (the sorting code changed above 16: bench/RESULTS.md).
    base=${AB_BASE:-build-base}
    for round in 1 2; do
        for b in "$base" build; do
            echo "== $b, round $round"
            timeout 250 "./$b/bench/bench_filter" --device gpu --sizes "${SIZES:-4096}" \
                --widths "${WIDTHS:-3,11,17,21,25,31,41,51}" --maps median,both --repeat 5 \
                --budget 2
        done
    done 2>&1 | tee "$OUT/filter_ab.txt"
fi

if has select_tune; then
    # One setting changed at a time from the defaults; the 2^25 median and 1000 columns.
    tune() {
        echo "== $*"
        CLSTATS_TUNE=$(IFS=,; echo "$*") timeout 60 ./build/bench/bench_select --device gpu \
            --log2n 25 --reps 20 --methods sample --columns 10000x1000 2>&1 | grep -v RESULT
    }
    {
        for v in 4 8 16 32; do tune select.vpt=$v; done
        for v in 1 2 3 4; do tune select.stage_tiles=$v; done
        for v in 1024 2048 4096; do tune select.sample=$v; done
        for v in 256 512 1024; do tune select.sample_wg=$v; done
        for v in 8 11; do tune columns.bits=$v; done
        for v in 128 256 512; do tune columns.wg=$v; done
    } 2>&1 | tee "$OUT/select_tune.txt"
fi

if has columns; then
    # Column medians by each method ($COL_METHODS), interleaved $COL_ROUNDS (3) times per shape, then each
    # sample path's kernel-by-kernel breakdown (each run first checks its medians against a
    # host sort).
    methods=${COL_METHODS:-radix registers bracket}
    for shape in ${COL_SHAPES:-10000x1000 32768x1000 100000x1000 100000x256 100000x100}; do
        for round in $(seq "${COL_ROUNDS:-3}"); do
            for method in $methods; do
                echo "== $shape $method, round $round"
                CLSTATS_TUNE=columns.method=$method timeout 120 ./build/bench/bench_select \
                    --device gpu --log2n 10 --reps 30 --methods radix --columns "$shape" 2>&1 \
                    | grep -E "FAILED|failed|check|column_medians [0-9]"
            done
        done
        for method in $methods; do
            CLSTATS_TUNE=columns.method=$method CLSTATS_LOG=1 timeout 120 \
                ./build/bench/bench_select --device gpu --log2n 10 --reps 2 --methods radix \
                --columns "$shape" 2>&1 | grep "^column" | tail -1
        done
    done 2>&1 | tee "$OUT/columns.txt"
fi

# One path's settings, as `path_tune METHOD NAME=VALUE...` with tuning names (src/core/tuning.c;
# a NAME without a dot only labels the run), 10^4 x 1000 unless $TUNE_SHAPE, build/ unless
# $TUNE_BUILD, each with the path's own breakdown line from the library's log.
path_tune() {
    local method=$1 tune=
    shift
    echo "== $*"
    for set in "$@"; do [[ $set == *.* ]] && tune+=",$set"; done
    CLSTATS_TUNE="columns.method=$method$tune" CLSTATS_LOG=1 timeout 60 \
        ./${TUNE_BUILD:-build}/bench/bench_select --device gpu --log2n 10 --reps 30 \
        --methods radix --columns ${TUNE_SHAPE:-10000x1000} 2>&1 \
        | grep -E "FAILED|failed|column_medians [0-9]|column $method" | tail -2
}

if has registers_tune; then
    # The one-launch path's settings, one at a time from the defaults.
    rtune() { path_tune registers "$@"; }
    {
        for v in 1 2 4; do rtune registers.cols=$v registers.wg=$((256 * v)); done
        rtune registers.cols=2 registers.wg=1024
        for v in 8 9 10 11 12; do rtune registers.log2_bins=$v; done
        for v in 2 3 4 6; do rtune registers.sigmas=$v; done
        for v in 32 64 256 1024; do rtune registers.cap=$v; done
    } 2>&1 | tee "$OUT/registers_tune.txt"
fi

if has streamed_tune; then
    # The streamed path's settings ($STREAM_SETS: space-separated, each NAME=VALUE,NAME=VALUE):
    # each one's registers and spills (ptxas), then all interleaved three times with the
    # streamed and registers paths' defaults (and $AB_BASE's streamed path where it is built).
    sets=${STREAM_SETS:-"registers.held=16 registers.held=32"}
    {
        for set in $sets; do
            echo "== ptxas, ${set//,/ }"
            CLSTATS_TUNE="$set,columns.method=streamed,build.options=-cl-nv-verbose" \
                CLSTATS_LOG=1 CLSTATS_CACHE_DIR=$(mktemp -d) timeout 60 \
                ./build/bench/bench_select --device gpu --log2n 10 --reps 1 --methods radix \
                --columns ${TUNE_SHAPE:-10000x1000} 2>&1 | grep -iE "ptxas|used|spill|stack"
        done
        base=${AB_BASE:-build-base}
        for round in 1 2 3; do
            [[ -x $base/bench/bench_select ]] && TUNE_BUILD=$base path_tune streamed BASE=1
            path_tune registers REGISTERS=1
            for set in DEFAULT=1 $sets; do path_tune streamed ${set//,/ }; done
        done
    } 2>&1 | tee "$OUT/streamed_tune.txt"
fi

if has columns_tune; then
    # The bracket's settings, one at a time from the defaults.
    ctune() { path_tune bracket "$@"; }
    {
        for v in 256 512 1024 2048; do ctune bracket.sample=$v; done
        for v in 32 64 128 256; do ctune bracket.sample_wg=$v; done
        for v in 16 64 256; do ctune bracket.cells=$v; done
        for v in 2 4 8 16; do ctune bracket.lanes=$v; done
        for v in 64 128 256 512; do ctune bracket.finish_wg=$v; done
        for v in 256 512 1024 2048 4096; do ctune bracket.groups=$v; done
    } 2>&1 | tee "$OUT/columns_tune.txt"
fi

TILES=${TILES:-4096x4096/64x64,4096x4096/128x128,10000x10000/100x100}
if has select; then
    timeout 200 ./build/bench/bench_select --device gpu --log2n 20,25,28 --columns 10000x1000 \
        --tiles "$TILES" --methods radix,cutting-plane,sample,auto ${SELECT_ARGS:-} 2>&1 \
        | tee "$OUT/bench_select_gpu.txt"
    timeout 200 ./build/bench/bench_select --device cpu --log2n 20,25 --columns 10000x1000 \
        --reps 3 2>&1 | tee "$OUT/bench_select_cpu.txt"
    timeout 200 python3 bench/peers_select.py --log2n 20,25,28 --columns 10000x1000 \
        --tiles "$TILES" --reps 3 2>&1 | tee "$OUT/peers_select.txt"
fi

if has python; then
    # The Python package on this machine's Python and numpy (not the build machine's): its
    # extension compiled here over the carried library objects and OpenCL headers
    # (.device-libs/include), its pytest suite on the GPU, then the C call (bench_filter) and
    # the Python call (bench/bench_python.py, beside scipy and cupyx) on one 4096^2 image, on
    # the GPU and on PoCL.
    pkg=/tmp/clstats-pkg
    rm -rf "$pkg" && mkdir -p "$pkg/clstats"
    cp python/clstats/*.py "$pkg/clstats/"
    gcc -O2 -shared -fPIC $(python3-config --includes) \
        -I"$(python3 -c 'import numpy; print(numpy.get_include())')" -Iinclude \
        -I.device-libs/include python/clstats/_ext.c build/src/libclstats_internal.a \
        -L.device-libs -l:libclblast.so.1 -l:libOpenCL.so.1 -lm -lpthread \
        -o "$pkg/clstats/_ext$(python3-config --extension-suffix)" 2>&1 | tee "$OUT/python_build.txt"
    (cd /tmp && CLSTATS_DEVICE=gpu PYTHONPATH=$pkg timeout 200 python3 -m pytest -q -p no:cacheprovider \
        "$OLDPWD/python/tests") 2>&1 | tail -15 | tee "$OUT/python_tests_gpu.txt"
    for dev in $([ "${PY_BENCH:-1}" = 1 ] && echo gpu cpu); do
        timeout 200 ./build/bench/bench_filter --device $dev --sizes 4096 \
            --widths "${PY_WIDTHS:-5,11}" --maps median,mad,both --repeat 5 --budget 4
        PYTHONPATH=$pkg timeout 250 python3 bench/bench_python.py --device $dev --size 4096 \
            --widths "${PY_WIDTHS:-5,11}" --scipy-widths "$([ $dev = gpu ] && echo 5,11)"
    done 2>&1 | tee "$OUT/bench_python.txt"
fi

if has pass; then
    # PaSS (bench/bench_pass.c) on the paper's problems, 256 particles and 16 iterations, float32:
    # Ing & Lai n 400 p 4000 and the huge ones (n 4000 p 40000; Chen & Chen n 20000 p 500), on
    # the GPU; the plain C path only at the small size (it takes minutes at the huge ones). First
    # the suite there: the device's standardisation and inner products must equal the host's bit
    # for bit (fma, correctly rounded division and sqrt in double).
    {
        CLSTATS_DEVICE=gpu timeout 300 ./build/tests/test_pass 2>&1 | tail -3
        CLSTATS_DEVICE=gpu timeout 250 ./build/bench/bench_pass ing-lai 400 4000 256 16 f32 both
        export PASS_LOG=1 # the library's log: setup against iterations, the steps' parts
        # X sent up by each fit (device: the paper's comparison) and already on the device
        # (resident), the default (pass_gram_rows, the log's "Gram rows" their whole time)
        # and CLBlast's GEMM for the Gram rows, two rounds alternated in one process.
        PASS_TUNE="pass.gram_rows=auto;pass.gram_rows=off;pass.gram_rows=auto;pass.gram_rows=off" \
            CLSTATS_DEVICE=gpu timeout 250 ./build/bench/bench_pass ing-lai 4000 40000 256 16 f32 \
            device,resident
        CLSTATS_DEVICE=gpu timeout 250 ./build/bench/bench_pass chen-chen 20000 500 256 16 f32 \
            device,resident
        PASS_TUNE="pass.gram_rows=auto;pass.gram_rows=off" CLSTATS_DEVICE=gpu timeout 250 \
            ./build/bench/bench_pass ing-lai 4000 40000 256 16 f64 resident
        unset PASS_LOG
    } 2>&1 | tee "$OUT/bench_pass.txt"
fi

if has regress; then
    # LTS on synthetic data with 20 % vertical outliers (bench/bench_regress.c), p = 10, on the
    # GPU and on PoCL there, each run with the library's stage times (wall and kernels: data set,
    # starts and nested groups, whole-data C-steps and their count, reweighting); the peer,
    # robustbase, runs on the build machine (bench/RESULTS.md).
    # CLBlast's shared library must be among the carried .device-libs.
    for n in ${REGRESS_SIZES:-100000 1000000}; do
        for dev in gpu cpu; do
            echo "== bench_regress n $n p 10 on $dev"
            CLSTATS_DEVICE=$dev timeout 250 ./build/bench/bench_regress "$n" 10 "${REGRESS_REPS:-3}" log
        done
    done 2>&1 | tee "$OUT/bench_regress.txt"
fi

if has kmeans; then
    # Lloyd from given centres, tol 0 (bench/bench_kmeans.c); the peers on the same machine.
    for c in ${KMEANS_CASES:-seed big wide}; do
        for dev in gpu cpu; do
            [ $dev = cpu ] && [ $c = wide ] && continue # minutes an iteration on PoCL
            echo "== bench_kmeans $c on $dev"
            CLSTATS_DEVICE=$dev timeout 250 ./build/bench/bench_kmeans $c "${KMEANS_REPS:-3}"
        done
        # the launch a step of before issue 22's fusion, for the comparison in the same run
        [ $c = wide ] || { echo "== bench_kmeans $c on gpu, kmeans.fuse=off"
            CLSTATS_TUNE="${CLSTATS_TUNE:+$CLSTATS_TUNE,}kmeans.fuse=off" CLSTATS_DEVICE=gpu \
                timeout 250 ./build/bench/bench_kmeans $c "${KMEANS_REPS:-3}"; }
        echo "== peers_kmeans $c"
        timeout 250 python3 bench/peers_kmeans.py $c --reps "${KMEANS_REPS:-3}"
    done 2>&1 | tee "$OUT/bench_kmeans.txt"
fi

if has gp; then
    # GPfit's deviance (bench/bench_gp.c), issue 23's targets on the GPU: one evaluation at
    # n = 4064, d = 6 (<= 7.4 ms), a batch of 100 at n = 256 (<= 5 ms); each also with the
    # blocked Cholesky's other trailing update (linalg.potrf_update=rows, the CPU devices'), to
    # set that tuning value, with the log's kernel breakdown; the gradient; the seed's
    # Hartman-6 fit by its genetic algorithm at n = 4064 with a given nugget (2 000 deviances,
    # target <= 30 s); the peers beside it; then the seed's examples when the Python package
    # is there.
    for dev in gpu cpu; do
        echo "== bench_gp on $dev"
        for upd in auto tiles rows; do
            [ $dev = cpu ] && [ $upd = tiles ] && continue # minutes at n = 4064 on PoCL
            echo "-- linalg.potrf_update=$upd"
            CLSTATS_LOG=1 CLSTATS_DEVICE=$dev CLSTATS_TUNE=linalg.potrf_update=$upd timeout 250 \
                ./build/bench/bench_gp one 4064 6 "${GP_REPS:-5}" 2>&1 | grep -v "^clstats: built"
            CLSTATS_DEVICE=$dev CLSTATS_TUNE=linalg.potrf_update=$upd timeout 250 \
                ./build/bench/bench_gp batch 256 100 6 "${GP_REPS:-5}"
        done
        CLSTATS_LOG=1 CLSTATS_DEVICE=$dev timeout 250 ./build/bench/bench_gp grad 4064 6 \
            "${GP_REPS:-5}" 2>&1 | grep -v "^clstats: built"
        CLSTATS_DEVICE=$dev timeout 250 ./build/bench/bench_gp batch 64 1000 6 "${GP_REPS:-5}"
        [ $dev = gpu ] && CLSTATS_DEVICE=$dev timeout 250 ./build/bench/bench_gp fit 4064 6 0
    done 2>&1 | tee "$OUT/bench_gp.txt"
    timeout 400 python3 bench/peers_gp.py --reps 3 2>&1 | tee "$OUT/peers_gp.txt"
    if [ -n "${GP_PYTHONPATH:-}" ]; then
        CLSTATS_DEVICE=gpu PYTHONPATH=$GP_PYTHONPATH timeout 500 python3 bench/gp_examples.py \
            --gp-sizes 16,32,64,128,256,512 --hartman-sizes 64,256,1024,4064 --scipy-max-n 0 \
            --optimizer genetic 2>&1 | tee "$OUT/gp_examples.txt"
    fi
fi

if has mpi; then
    # The MPI module (issue 25): the suite with 1 to 4 ranks sharing the one GPU, then weak
    # scaling of the distributed k-th value and median (bench/bench_mpi.c, 2^MPI_LOG2N float32 a
    # rank) beside one rank holding all four ranks' values, with 11- and 8-bit digits. The
    # build links Debian's Open MPI 4.1.4; this machine's own libmpi.so.40 (4.1.6, the same
    # ABI) goes with its own mpirun, so the packed MPI libraries are left out of the path.
    nompi=/tmp/device-libs-nompi
    rm -rf "$nompi" && mkdir -p "$nompi"
    for f in .device-libs/*; do
        case $(basename "$f") in
            libmpi*|libopen-*|libpmix*|libhwloc*|libevent*|libucp*|libucs*|libuct*|libfabric*) ;;
            *) ln -s "$PWD/$f" "$nompi/" ;;
        esac
    done
    mpilib=$(dirname "$(command -v mpirun)")/../lib
    if ! ldconfig -p 2>/dev/null | grep -q 'libmpi.so.40'; then
        if [ -e "$mpilib/libmpi.so.40" ]; then nompi=$nompi:$mpilib; else nompi=$PWD/.device-libs; fi
    fi
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # mpirun hands its ranks OCL_ICD_FILENAMES cut at its first colon (seen on the GPU machine:
    # "libpocl.so.2:libnvidia-opencl.so.1" arrived as "libpocl.so.2", and the ranks saw no GPU),
    # so each rank gets it back through env on its command line.
    rank=()
    [ -n "${OCL_ICD_FILENAMES:-}" ] && rank=(env "OCL_ICD_FILENAMES=$OCL_ICD_FILENAMES")
    {
        echo "libraries: $nompi"
        LD_LIBRARY_PATH=$nompi ldd ./build/bench/bench_mpi | grep -E 'mpi|clstats'
        # The MPI module is libclstats_mpi's: libclstats itself must load no libmpi.
        if LD_LIBRARY_PATH=$nompi ldd ./build/src/libclstats.so | grep -q libmpi; then
            echo "FAILED: libclstats.so needs libmpi"
        else
            echo "libclstats.so needs no libmpi"
        fi
        mpirun --version | head -1
        for np in 1 2 3 4; do
            echo "== test_mpi, $np ranks on the GPU"
            LD_LIBRARY_PATH=$nompi CLSTATS_DEVICE=gpu timeout 250 \
                mpirun -np $np --oversubscribe "${rank[@]}" ./build/tests/test_mpi 2>&1 | tail -4
        done
        log2n=${MPI_LOG2N:-28}
        for bits in 11 8; do
            for np in 1 2 4; do
                for method in auto radix; do
                    echo "== bench_mpi, $np ranks, 2^$log2n a rank, select.bits=$bits, $method"
                    LD_LIBRARY_PATH=$nompi CLSTATS_DEVICE=gpu CLSTATS_TUNE=select.bits=$bits \
                        timeout 250 mpirun -np $np --oversubscribe "${rank[@]}" ./build/bench/bench_mpi \
                        --log2n "$log2n" --reps "${MPI_REPS:-10}" --method $method
                done
            done
            echo "== one rank holding 4 x 2^$log2n, select.bits=$bits"
            LD_LIBRARY_PATH=$nompi CLSTATS_DEVICE=gpu CLSTATS_TUNE=select.bits=$bits \
                timeout 250 mpirun -np 1 "${rank[@]}" ./build/bench/bench_mpi --log2n $((log2n + 2)) \
                --reps "${MPI_REPS:-10}"
        done
    } 2>&1 | tee "$OUT/bench_mpi.txt"
fi
