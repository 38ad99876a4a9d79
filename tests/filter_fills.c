/* filter_fills.c - the filter suites' test images (filter_fills.h). */
#include "filter_fills.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

const char *const fill_name[] = {"normal",     "integers", "constant", "heavy-tail", "sparse",
                                 "nan-blocks", "zeros",    "huge",     "infinite",   "zero-blocks",
                                 "scale-steps"};

/* NaNs of either sign and with payloads, as real data has: every one is missing data. */
static float odd_nan(uint64_t bits)
{
    uint32_t u = 0x7f800001u | (uint32_t)(bits & 0x807fffffu);
    float v;
    memcpy(&v, &u, 4);
    return v;
}

void fill_image(float *img, size_t nx, size_t ny, size_t stride, enum fill kind,
                double nan_fraction, uint64_t seed)
{
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    for (size_t y = 0; y < ny; y++) {
        for (size_t x = 0; x < stride; x++) {
            float v;
            double u = test_rng_uniform(&rng);
            switch (kind) {
            case FILL_INTEGERS:
                v = (float)(test_rng_next(&rng) % 5);
                break;
            case FILL_CONSTANT:
                v = ((x / 7 + y / 5) % 2) ? 3.25f : (float)test_rng_normal(&rng);
                break;
            case FILL_HEAVY_TAIL:
                v = (float)test_rng_normal(&rng);
                if (u < 0.05)
                    v = 1e30f;
                else if (u < 0.10)
                    v = -1e30f;
                else if (u < 0.12)
                    v = INFINITY;
                else if (u < 0.13)
                    v = -INFINITY;
                break;
            case FILL_SPARSE:
                v = u < 0.7 ? NAN : (float)(test_rng_normal(&rng) * 100.0);
                break;
            case FILL_NAN_BLOCKS:
                v = ((x / 13) % 3 == 1 && (y / 9) % 2 == 1) ? NAN : (float)test_rng_normal(&rng);
                break;
            case FILL_ZEROS: {
                static const float zeros[] = {-0.0f, 0.0f, 1.0f, -1.0f, 0x1p-149f, -0x1p-149f};
                v = zeros[test_rng_next(&rng) % 6];
                break;
            }
            case FILL_HUGE:
                v = (float)(3.0e38 + 2.0e37 * test_rng_uniform(&rng));
                if (u < 0.4)
                    v = -v;
                else if (u < 0.45)
                    v = INFINITY;
                else if (u < 0.5)
                    v = -INFINITY;
                else if (u < 0.6)
                    v = 1.0f;
                break;
            case FILL_INFINITE:
                /* Whole windows of one infinity, windows where it is the median among numbers,
                 * and windows whose middles are -inf and +inf. */
                switch ((x / 5 + y / 4) % 4) {
                case 0:
                    v = INFINITY;
                    break;
                case 1:
                    v = -INFINITY;
                    break;
                case 2:
                    v = u < 0.4 ? INFINITY : u < 0.7 ? -INFINITY : (float)test_rng_normal(&rng);
                    break;
                default:
                    v = u < 0.2 ? INFINITY : (float)test_rng_normal(&rng);
                    break;
                }
                break;
            case FILL_SCALE_STEPS: {
                static const double scales[] = {1.0, 1000.0, 0.001};
                v = (float)((double)((y / 7) % 2) * 30.0 +
                            test_rng_normal(&rng) * scales[(y / 5 + x / 17) % 3]);
                break;
            }
            case FILL_ZERO_BLOCKS: {
                static const float tiny[] = {-0.0f, 0.0f, 0x1p-149f, -0x1p-149f, 0x1p-148f};
                switch ((x / 5 + y / 4) % 3) {
                case 0:
                    v = -0.0f;
                    break;
                case 1:
                    v = u < 0.5 ? -0.0f : 0.0f;
                    break;
                default:
                    v = tiny[test_rng_next(&rng) % 5];
                    break;
                }
                break;
            }
            default:
                v = (float)(test_rng_normal(&rng) * 10.0 + 100.0);
                break;
            }
            if (kind != FILL_SPARSE && test_rng_uniform(&rng) < nan_fraction) v = NAN;
            if (isnan(v)) v = odd_nan(test_rng_next(&rng));
            /* Padding past nx must never be read: poison it. */
            img[y * stride + x] = x < nx ? v : -12345.0f;
        }
    }
}
