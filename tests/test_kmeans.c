/* test_kmeans.c - k-means on the device (src/cluster/) against the plain host Lloyd of
 * tests/reference_kmeans.c, bit for bit in labels, centres, iterations and inertia: blobs,
 * uniform data, duplicates, exact ties, empty clusters, weights, NaN rows, tiny and odd shapes,
 * data in a buffer; seeding reproducible by seed; and the errors of bad input. */
#include "reference_kmeans.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct clstats_array host_array(void *data, int f64, size_t nx, size_t ny)
{
    return (struct clstats_array){.host = data, .dtype = f64 ? CLSTATS_FLOAT64 : CLSTATS_FLOAT32,
                                  .nx = nx, .ny = ny};
}

/* n rows of d: `blobs` clusters of normal scatter (0: uniform in [0, 1)), optionally rounded to
 * a grid of `grid` steps (duplicates and exact ties). */
static void *make_data(int f64, int n, int d, int blobs, double grid, uint64_t seed)
{
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    double *centres = malloc((size_t)(blobs ? blobs : 1) * d * sizeof *centres);
    for (int i = 0; i < (blobs ? blobs : 1) * d; i++)
        centres[i] = 20.0 * test_rng_uniform(&rng) - 10.0;
    void *x = malloc((size_t)n * d * (f64 ? 8 : 4));
    for (int p = 0; p < n; p++) {
        const int b = blobs ? (int)(test_rng_next(&rng) % (uint64_t)blobs) : 0;
        for (int c = 0; c < d; c++) {
            double v = blobs ? centres[b * d + c] + test_rng_normal(&rng) : test_rng_uniform(&rng);
            if (grid > 0) v = round(v * grid) / grid;
            if (f64) ((double *)x)[(size_t)p * d + c] = v;
            else ((float *)x)[(size_t)p * d + c] = (float)v;
        }
    }
    free(centres);
    return x;
}

/* Fits with the given centres and compares everything with the reference. */
static void check_given(const void *x, int f64, int n, int d, int k, const void *init,
                        const double *weight, int max_iter, double tol, const char *what)
{
    const size_t es = f64 ? 8 : 4;
    struct ref_kmeans ref = {.x = x, .f64 = f64, .n = n, .d = d, .k = k, .weight = weight,
                             .init = init, .max_iter = max_iter};
    ref.tol = tol > 0 ? ref_kmeans_tolerance(&ref, tol) : 0.0;
    void *want_c = malloc((size_t)k * d * es), *got_c = calloc((size_t)k * d, es);
    int32_t *want_l = malloc((size_t)n * 4), *got_l = malloc((size_t)n * 4);
    void *w = NULL;
    int want_it, got_it = -1;
    double want_in, got_in = -1;
    ref_kmeans_run(&ref, want_c, want_l, &want_it, &want_in);

    struct clstats_kmeans_options o;
    clstats_kmeans_options_init(&o);
    struct clstats_array xa = host_array((void *)x, f64, d, n), ia = host_array((void *)init, f64, d, k),
                         ca = host_array(got_c, f64, d, k), wa;
    o.init = CLSTATS_KMEANS_GIVEN;
    o.init_centers = &ia;
    o.max_iter = max_iter;
    o.tol = tol;
    o.n_iter = &got_it;
    o.inertia = &got_in;
    if (weight) {
        w = malloc((size_t)n * es);
        for (int p = 0; p < n; p++)
            if (f64) ((double *)w)[p] = weight[p];
            else ((float *)w)[p] = (float)weight[p];
        wa = host_array(w, f64, n, 1);
        o.sample_weight = &wa;
    }
    const int st = clstats_kmeans(test_ctx(), &xa, k, &o, &ca, got_l);
    ck_assert_msg(st == CLSTATS_OK, "%s: %s (%s)", what, clstats_strerror(st),
                  clstats_ctx_message(test_ctx()));
    size_t bad = 0;
    for (int p = 0; p < n; p++)
        if (got_l[p] != want_l[p] && bad++ < 5)
            printf("%s: row %d label %d, reference %d\n", what, p, got_l[p], want_l[p]);
    ck_assert_msg(bad == 0, "%s: %zu labels differ", what, bad);
    ck_assert_msg(memcmp(got_c, want_c, (size_t)k * d * es) == 0, "%s: centres differ", what);
    ck_assert_msg(got_it == want_it, "%s: %d iterations, reference %d", what, got_it, want_it);
    ck_assert_msg(memcmp(&got_in, &want_in, 8) == 0, "%s: inertia %.17g, reference %.17g", what,
                  got_in, want_in);
    free(want_c);
    free(got_c);
    free(want_l);
    free(got_l);
    free(w);
}

/* The first k rows as the initial centres. */
static void *first_rows(const void *x, int f64, int d, int k)
{
    const size_t bytes = (size_t)k * d * (f64 ? 8 : 4);
    void *c = malloc(bytes);
    memcpy(c, x, bytes);
    return c;
}

START_TEST(lloyd_matches_reference_bit_for_bit)
{
    /* n, d, k: tiny, odd, several sum levels (n > 256, > 65536). */
    static const int shapes[][3] = {{1, 1, 1}, {7, 3, 2}, {257, 2, 5}, {1000, 5, 7},
                                    {3001, 13, 3}, {600, 1, 40}, {70001, 3, 4}};
    for (int f64 = 0; f64 <= 1; f64++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int n = shapes[s][0], d = shapes[s][1], k = shapes[s][2];
            for (int blobs = 0; blobs <= 1; blobs++) {
                void *x = make_data(f64, n, d, blobs ? k : 0, 0, test_seed() + s * 7 + blobs);
                void *init = first_rows(x, f64, d, k);
                char what[96];
                snprintf(what, sizeof what, "%s n=%d d=%d k=%d %s", f64 ? "f64" : "f32", n, d, k,
                         blobs ? "blobs" : "uniform");
                check_given(x, f64, n, d, k, init, NULL, 300, 0.0, what);
                check_given(x, f64, n, d, k, init, NULL, 3, 1e-4, what); /* max_iter ends it */
                free(init);
                free(x);
            }
        }
}
END_TEST

START_TEST(ties_go_to_the_lowest_centre)
{
    /* Integer points, centres at half-integers: every point is equally far from two centres. */
    const int n = 9;
    const float x[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, init[3] = {0.5f, 3.5f, 6.5f};
    float c[3];
    int32_t labels[9];
    struct clstats_kmeans_options o;
    clstats_kmeans_options_init(&o);
    struct clstats_array xa = host_array((void *)x, 0, 1, n), ia = host_array((void *)init, 0, 1, 3);
    o.init = CLSTATS_KMEANS_GIVEN;
    o.init_centers = &ia;
    o.max_iter = 1;
    struct clstats_array ca = host_array(c, 0, 1, 3);
    ck_assert_int_eq(clstats_kmeans_predict(test_ctx(), &xa, &ia, NULL, labels, NULL), CLSTATS_OK);
    static const int32_t want[9] = {0, 0, 0, 1, 1, 1, 2, 2, 2};
    for (int p = 0; p < n; p++)
        ck_assert_msg(labels[p] == want[p], "row %d: label %d, want %d", p, labels[p], want[p]);
    ck_assert_int_eq(clstats_kmeans(test_ctx(), &xa, 3, &o, &ca, labels), CLSTATS_OK);
    /* Grids with many exact ties and duplicates, against the reference. */
    for (int f64 = 0; f64 <= 1; f64++) {
        void *g = make_data(f64, 5000, 2, 0, 4.0, test_seed() + 11);
        void *gi = first_rows(g, f64, 2, 6);
        check_given(g, f64, 5000, 2, 6, gi, NULL, 300, 0.0, "grid of quarters");
        free(g);
        free(gi);
    }
}
END_TEST

START_TEST(empty_clusters_take_the_farthest_rows)
{
    /* A centre far from every row is empty after the first assignment; so are duplicates of
     * one centre (the second copy never wins a tie). */
    for (int f64 = 0; f64 <= 1; f64++) {
        const int n = 2000, d = 2, k = 5;
        void *x = make_data(f64, n, d, 3, 0, test_seed() + 21);
        void *init = first_rows(x, f64, d, k);
        for (int c = 0; c < d; c++) {
            if (f64) ((double *)init)[4 * d + c] = 1e3;
            else ((float *)init)[4 * d + c] = 1e3f;
            if (f64) ((double *)init)[3 * d + c] = ((double *)init)[c];
            else ((float *)init)[3 * d + c] = ((float *)init)[c];
        }
        check_given(x, f64, n, d, k, init, NULL, 300, 0.0, "two empty clusters");
        /* Duplicated rows: two distinct values, three clusters. */
        void *dup = make_data(f64, 600, 1, 0, 1.0, test_seed() + 22);
        void *dinit = first_rows(dup, f64, 1, 3);
        check_given(dup, f64, 600, 1, 3, dinit, NULL, 300, 0.0, "two values, three clusters");
        /* Every centre a copy of the first row: 39 clusters empty at once, taking the farthest
         * rows in turn (more than the host's first list of 8 holds), on blobs and on a grid of
         * quarters, whose equal distances go to the lowest row. */
        for (int grid = 0; grid <= 1; grid++) {
            const int mk = 40, md = 3, mn = 3000;
            void *mx = make_data(f64, mn, md, grid ? 0 : 6, grid ? 4.0 : 0, test_seed() + 23);
            void *minit = first_rows(mx, f64, md, mk);
            for (int e = md; e < mk * md; e++) {
                if (f64) ((double *)minit)[e] = ((double *)minit)[e % md];
                else ((float *)minit)[e] = ((float *)minit)[e % md];
            }
            check_given(mx, f64, mn, md, mk, minit, NULL, 300, 0.0,
                        grid ? "39 empty clusters, grid" : "39 empty clusters, blobs");
            free(mx);
            free(minit);
        }
        free(x);
        free(init);
        free(dup);
        free(dinit);
    }
}
END_TEST

START_TEST(weights_match_the_reference)
{
    for (int f64 = 0; f64 <= 1; f64++) {
        const int n = 3000, d = 3, k = 6;
        struct test_rng rng;
        test_rng_seed(&rng, test_seed() + 31);
        double *w = malloc((size_t)n * sizeof *w);
        for (int p = 0; p < n; p++)
            w[p] = p % 17 == 0 ? 0.0 : (double)(float)(4.0 * test_rng_uniform(&rng));
        void *x = make_data(f64, n, d, k, 0, test_seed() + 32);
        void *init = first_rows(x, f64, d, k);
        check_given(x, f64, n, d, k, init, w, 300, 1e-4, "weights");
        free(w);
        free(x);
        free(init);
    }
}
END_TEST

/* Rows with NaN (or infinite) values: refused, then left out (skip_nan, label -1) by a fit from
 * the first k rows, whose labels and centres are the reference's with those rows left out. */
static void check_rows_left_out(const void *x, int f64, int n, int d, int k,
                                const unsigned char *valid)
{
    const size_t bytes = (size_t)k * d * (f64 ? 8 : 4);
    void *init = first_rows(x, f64, d, k), *c = malloc(bytes), *wc = malloc(bytes);
    int32_t *labels = malloc((size_t)n * 4), *want = malloc((size_t)n * 4);
    struct clstats_kmeans_options o;
    clstats_kmeans_options_init(&o);
    struct clstats_array xa = host_array((void *)x, f64, d, n), ia = host_array(init, f64, d, k),
                         ca = host_array(c, f64, d, k);
    o.init = CLSTATS_KMEANS_GIVEN;
    o.init_centers = &ia;
    o.tol = 0;
    ck_assert_int_eq(clstats_kmeans(test_ctx(), &xa, k, &o, &ca, labels), CLSTATS_ERR_NAN);
    o.skip_nan = 1;
    ck_assert_int_eq(clstats_kmeans(test_ctx(), &xa, k, &o, &ca, labels), CLSTATS_OK);
    struct ref_kmeans ref = {.x = x, .f64 = f64, .n = n, .d = d, .k = k, .valid = valid,
                             .init = init, .max_iter = 300};
    double inertia;
    int it;
    ref_kmeans_run(&ref, wc, want, &it, &inertia);
    for (int p = 0; p < n; p++)
        ck_assert_msg(labels[p] == want[p], "row %d: %d, want %d", p, labels[p], want[p]);
    ck_assert(memcmp(c, wc, bytes) == 0);
    free(init);
    free(c);
    free(wc);
    free(labels);
    free(want);
}

START_TEST(nan_rows_are_refused_or_left_out)
{
    const int n = 1200, d = 2, k = 4;
    double *x = make_data(1, n, d, k, 0, test_seed() + 41);
    unsigned char *valid = malloc(n);
    for (int p = 0; p < n; p++) {
        valid[p] = p % 97 != 5;
        if (!valid[p]) x[(size_t)p * d + (p % 2)] = p % 3 ? NAN : INFINITY;
    }
    check_rows_left_out(x, 1, n, d, k, valid);
    free(x);
    free(valid);
}
END_TEST

START_TEST(seeding_is_reproducible_and_restarts_never_lose)
{
    const int n = 5000, d = 2, k = 8;
    float *x = make_data(0, n, d, k, 0, test_seed() + 51);
    float c1[16], c2[16], c3[16];
    int32_t *l1 = malloc((size_t)n * 4), *l2 = malloc((size_t)n * 4);
    double in1, in2, in3;
    struct clstats_array xa = host_array(x, 0, d, n);
    for (int init = CLSTATS_KMEANS_PLUSPLUS; init <= CLSTATS_KMEANS_RANDOM; init++) {
        struct clstats_kmeans_options o;
        clstats_kmeans_options_init(&o);
        o.init = init;
        o.seed = 1234;
        o.inertia = &in1;
        struct clstats_array ca = host_array(c1, 0, d, k);
        ck_assert_int_eq(clstats_kmeans(test_ctx(), &xa, k, &o, &ca, l1), CLSTATS_OK);
        o.inertia = &in2;
        ca.host = c2;
        ck_assert_int_eq(clstats_kmeans(test_ctx(), &xa, k, &o, &ca, l2), CLSTATS_OK);
        ck_assert(memcmp(c1, c2, sizeof c1) == 0 && memcmp(l1, l2, (size_t)n * 4) == 0);
        ck_assert(memcmp(&in1, &in2, 8) == 0);
        /* The first of three restarts is the single run: the best of three is no worse. */
        o.n_init = 3;
        o.inertia = &in3;
        ca.host = c3;
        ck_assert_int_eq(clstats_kmeans(test_ctx(), &xa, k, &o, &ca, l2), CLSTATS_OK);
        ck_assert_msg(in3 <= in1, "n_init 3: %g, one run %g", in3, in1);
        /* The fitted labels are those predict gives for the fitted centres. */
        double pin;
        ca.host = c3;
        ck_assert_int_eq(clstats_kmeans_predict(test_ctx(), &xa, &ca, NULL, l1, &pin), CLSTATS_OK);
        ck_assert(memcmp(l1, l2, (size_t)n * 4) == 0);
        ck_assert(memcmp(&pin, &in3, 8) == 0);
    }
    free(x);
    free(l1);
    free(l2);
}
END_TEST

START_TEST(data_in_a_buffer_gives_the_same)
{
    const int n = 4000, d = 3, k = 5;
    float *x = make_data(0, n, d, k, 0, test_seed() + 61);
    float c1[15], c2[15];
    int32_t *l1 = malloc((size_t)n * 4), *l2 = malloc((size_t)n * 4);
    cl_int err;
    const size_t offset = 5;
    cl_mem buf = clCreateBuffer(clstats_ctx_cl_context(test_ctx()), CL_MEM_READ_WRITE,
                                ((size_t)n * d + offset) * 4, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clEnqueueWriteBuffer(clstats_ctx_cl_queue(test_ctx()), buf, CL_TRUE,
                                          offset * 4, (size_t)n * d * 4, x, 0, NULL, NULL),
                     CL_SUCCESS);
    struct clstats_kmeans_options o;
    clstats_kmeans_options_init(&o);
    o.seed = 7;
    struct clstats_array xa = host_array(x, 0, d, n), ca = host_array(c1, 0, d, k);
    ck_assert_int_eq(clstats_kmeans(test_ctx(), &xa, k, &o, &ca, l1), CLSTATS_OK);
    struct clstats_array xb = {.buffer = buf, .offset = offset, .dtype = CLSTATS_FLOAT32, .nx = d,
                               .ny = n};
    ca.host = c2;
    ck_assert_int_eq(clstats_kmeans(test_ctx(), &xb, k, &o, &ca, l2), CLSTATS_OK);
    ck_assert(memcmp(c1, c2, sizeof c1) == 0 && memcmp(l1, l2, (size_t)n * 4) == 0);
    clReleaseMemObject(buf);
    free(x);
    free(l1);
    free(l2);
}
END_TEST

START_TEST(bad_input_gives_clear_errors)
{
    float x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, c[12];
    int32_t labels[12];
    clstats_ctx *ctx = test_ctx();
    struct clstats_array xa = host_array(x, 0, 2, 6), ca = host_array(c, 0, 2, 3);
    ck_assert_int_eq(clstats_kmeans(ctx, &xa, 0, NULL, &ca, labels), CLSTATS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(clstats_ctx_message(ctx), "at least one cluster"));
    struct clstats_array c7 = host_array(c, 0, 2, 7);
    ck_assert_int_eq(clstats_kmeans(ctx, &xa, 7, NULL, &c7, labels), CLSTATS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(clstats_ctx_message(ctx), "exceed"));
    struct clstats_array x0 = host_array(x, 0, 0, 6);
    ck_assert_int_eq(clstats_kmeans(ctx, &x0, 3, NULL, &ca, labels), CLSTATS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(clstats_ctx_message(ctx), "d = 0"));
    struct clstats_array empty = host_array(x, 0, 2, 0);
    ck_assert_int_eq(clstats_kmeans(ctx, &empty, 3, NULL, &ca, labels), CLSTATS_ERR_EMPTY);
    struct clstats_array wrong = host_array(c, 0, 3, 2);
    ck_assert_int_eq(clstats_kmeans(ctx, &xa, 3, NULL, &wrong, labels), CLSTATS_ERR_ARG);
    /* NaN leaving fewer valid rows than clusters. */
    x[0] = x[2] = x[4] = x[6] = NAN;
    struct clstats_kmeans_options o;
    clstats_kmeans_options_init(&o);
    o.skip_nan = 1;
    ck_assert_int_eq(clstats_kmeans(ctx, &xa, 3, &o, &ca, labels), CLSTATS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(clstats_ctx_message(ctx), "valid rows"));
    x[8] = x[10] = NAN;
    struct clstats_array c1 = host_array(c, 0, 2, 1);
    ck_assert_int_eq(clstats_kmeans(ctx, &xa, 1, &o, &c1, labels), CLSTATS_ERR_EMPTY);
    for (int i = 0; i < 12; i++)
        x[i] = (float)i;
    float w[6] = {1, 1, -1, 1, 1, 1};
    struct clstats_array wa = host_array(w, 0, 6, 1);
    o.sample_weight = &wa;
    struct clstats_array c2 = host_array(c, 0, 2, 2);
    ck_assert_int_eq(clstats_kmeans(ctx, &xa, 2, &o, &c2, labels), CLSTATS_ERR_ARG);
    ck_assert_msg(strstr(clstats_ctx_message(ctx), "weights"), "%s", clstats_ctx_message(ctx));
    clstats_kmeans_options_init(&o);
    o.init = CLSTATS_KMEANS_GIVEN;
    ck_assert_int_eq(clstats_kmeans(ctx, &xa, 2, &o, &c2, labels), CLSTATS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(clstats_ctx_message(ctx), "init_centers"));
    clstats_kmeans_options_init(&o);
    o.n_init = 0;
    ck_assert_int_eq(clstats_kmeans(ctx, &xa, 2, &o, &c2, labels), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_kmeans(ctx, &xa, 2, NULL, &c2, labels), CLSTATS_OK);
    double xd[12] = {0};
    struct clstats_array xda = host_array(xd, 1, 2, 6);
    ck_assert_int_eq(clstats_kmeans(ctx, &xda, 3, NULL, &ca, labels), CLSTATS_ERR_ARG);
}
END_TEST

/* Every assignment path (clstats_ctx_tune "kmeans.assign") gives the reference's labels and so
 * its centres bit for bit: blobs, uniform data, a grid of exact ties, and data far from the
 * origin, where |x|^2 - 2 x.c + |c|^2 in float32 is off by far more than the gaps between the
 * distances, so that only the GEMM path's screen (the direct form deciding every centre within
 * the error bound) keeps its labels right. */
START_TEST(assignment_paths_give_the_same_labels)
{
    static const char *const paths[] = {"direct", "tiled", "gemm"};
    static const int shapes[][3] = {{3000, 40, 33}, {1500, 2, 6}, {700, 9, 3}};
    for (size_t pi = 0; pi < 3; pi++) {
        ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.assign", paths[pi]), CLSTATS_OK);
        for (int f64 = 0; f64 <= 1; f64++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                const int n = shapes[s][0], d = shapes[s][1], k = shapes[s][2];
                for (int kind = 0; kind < 3; kind++) {
                    /* kind 0 blobs, 1 a grid of quarters (ties), 2 uniform moved to 1000 */
                    void *x = make_data(f64, n, d, kind == 0 ? k : 0, kind == 1 ? 4.0 : 0,
                                        test_seed() + s * 11 + kind);
                    for (size_t e = 0; kind == 2 && e < (size_t)n * d; e++) {
                        if (f64) ((double *)x)[e] += 1000.0;
                        else ((float *)x)[e] += 1000.0f;
                    }
                    void *init = first_rows(x, f64, d, k);
                    char what[112];
                    snprintf(what, sizeof what, "%s path %s n=%d d=%d k=%d kind %d",
                             f64 ? "f64" : "f32", paths[pi], n, d, k, kind);
                    check_given(x, f64, n, d, k, init, NULL, 300, 0.0, what);
                    free(init);
                    free(x);
                }
            }
    }
    ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.assign", "auto"), CLSTATS_OK);
}
END_TEST

/* The fused path (kmeans.assign "fused", float32: our own tiled products, never written, the
 * screen in their epilogue and the direct form for the rows it leaves): the reference's labels
 * and bits across the tiles' edges (rows not a multiple of 128, features not of 8, one to three
 * blocks of 128 centres, one cluster), on blobs, on a grid of exact ties and far from the
 * origin (where most rows go to the direct form), and with NaN and infinite rows left out. */
START_TEST(fused_path_gives_the_same_labels)
{
    static const int shapes[][3] = {{1000, 13, 130}, {300, 64, 257}, {129, 8, 1}, {2000, 40, 33}};
    ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.assign", "fused"), CLSTATS_OK);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int n = shapes[s][0], d = shapes[s][1], k = shapes[s][2];
        for (int kind = 0; kind < 3; kind++) {
            float *x = make_data(0, n, d, kind == 0 ? k : 0, kind == 1 ? 4.0 : 0,
                                 test_seed() + s * 13 + kind);
            for (size_t e = 0; kind == 2 && e < (size_t)n * d; e++)
                x[e] += 1000.0f;
            void *init = first_rows(x, 0, d, k);
            char what[112];
            snprintf(what, sizeof what, "fused n=%d d=%d k=%d kind %d", n, d, k, kind);
            check_given(x, 0, n, d, k, init, NULL, 300, 0.0, what);
            free(init);
            free(x);
        }
    }
    /* rows left out: label -1, the others as the reference's */
    const int n = 700, d = 16, k = 20;
    float *x = make_data(0, n, d, k, 0, test_seed() + 71);
    unsigned char *valid = malloc(n);
    for (int p = 0; p < n; p++) {
        valid[p] = p < k || p % 37 != 3;
        if (!valid[p]) x[(size_t)p * d + p % d] = p % 2 ? NAN : -INFINITY;
    }
    check_rows_left_out(x, 0, n, d, k, valid);
    ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.assign", "auto"), CLSTATS_OK);
    free(x);
    free(valid);
}
END_TEST

/* The fixed-order sums by a group of 256 items or by one item (tuning "kmeans.sums"), the
 * scatter by both and by each row's count (many clusters), the serial assignment forced or not,
 * the counts' scan and the upper levels of the sums in fewer launches or not ("kmeans.fuse"):
 * every combination gives the reference's bits, at one, two and three levels of sums, with the
 * scan in one launch, in two (64 clusters over 274 blocks) and by a work-item a cluster, and the
 * upper levels all in the finishing kernel, split with row_sums (finish_trees 20: level 2 of
 * 70000 x 2, k 5 there, level 1 not, or level 1 halved there too: finish_halve), or none
 * there. */
START_TEST(sums_and_scatter_paths_give_the_same_bits)
{
    static const char *const sums[] = {"groups", "serial"};
    static const char *const assign[] = {"auto", "serial"};
    static const char *const fuse[] = {"off", "on"};
    static const int shapes[][3] = {
        {70000, 2, 5}, {3000, 3, 130}, {2100, 2, 1100}, {200, 4, 3}, {70000, 2, 64}};
    for (size_t si = 0; si < 2; si++)
        for (size_t ai = 0; ai < 2; ai++)
            for (size_t fi = 0; fi < 2; fi++) {
                ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.sums", sums[si]), CLSTATS_OK);
                ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.assign", assign[ai]),
                                 CLSTATS_OK);
                ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.fuse", fuse[fi]), CLSTATS_OK);
                ck_assert_int_eq(
                    clstats_ctx_tune(test_ctx(), "kmeans.finish_trees", si == ai ? "20" : "0"),
                    CLSTATS_OK);
                /* level 1 halved in finish (70000 rows: its 7 and 66 rows), or by row_sums */
                ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.finish_halve",
                                                  si == 0 && ai == 0 ? "80" : "1"),
                                 CLSTATS_OK);
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                    const int n = shapes[s][0], d = shapes[s][1], k = shapes[s][2],
                              f64 = (int)s % 2;
                    void *x = make_data(f64, n, d, k < 20 ? k : 0, 0, test_seed() + 5 * s);
                    void *init = first_rows(x, f64, d, k);
                    char what[112];
                    snprintf(what, sizeof what, "sums %s assign %s fuse %s n=%d d=%d k=%d",
                             sums[si], assign[ai], fuse[fi], n, d, k);
                    check_given(x, f64, n, d, k, init, NULL, k > 1000 ? 3 : 20, 0.0, what);
                    free(init);
                    free(x);
                }
            }
    ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.sums", "auto"), CLSTATS_OK);
    ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.assign", "auto"), CLSTATS_OK);
    ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.fuse", "auto"), CLSTATS_OK);
    ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.finish_trees", "0"), CLSTATS_OK);
    ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "kmeans.finish_halve", "0"), CLSTATS_OK);
}
END_TEST

/* Mini-batch k-means against the reference's replay of scikit-learn's update: centres and
 * labels bit for bit, float32 and float64, with a short last batch, weights and NaN rows left
 * out; one batch of all the rows; the step call alone; the seeding reproducible by seed; tol
 * ending the passes early; bad input refused. */
START_TEST(minibatch_matches_reference_bit_for_bit)
{
    static const int cases[][5] = {/* n, d, k, batch, passes */
                                   {5000, 3, 7, 512, 3}, {777, 5, 4, 1000, 2}, {300, 1, 3, 7, 2}};
    for (int f64 = 0; f64 <= 1; f64++)
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
            for (int weighted = 0; weighted <= 1; weighted++) {
                const int n = cases[ci][0], d = cases[ci][1], k = cases[ci][2],
                          batch = cases[ci][3], passes = cases[ci][4];
                const size_t es = f64 ? 8 : 4;
                void *x = make_data(f64, n, d, k, ci == 2 ? 4.0 : 0, test_seed() + ci);
                void *init = first_rows(x, f64, d, k);
                unsigned char *valid = malloc((size_t)n);
                double *weight = malloc((size_t)n * sizeof *weight);
                void *w = malloc((size_t)n * es);
                for (int p = 0; p < n; p++) {
                    valid[p] = !(p % 97 == 50);
                    if (!valid[p]) {
                        if (f64) ((double *)x)[(size_t)p * d] = NAN;
                        else ((float *)x)[(size_t)p * d] = NAN;
                    }
                    weight[p] = 0.5 + (p % 5);
                    if (f64) ((double *)w)[p] = weight[p];
                    else ((float *)w)[p] = (float)weight[p];
                }
                struct ref_kmeans ref = {.x = x, .f64 = f64, .n = n, .d = d, .k = k,
                                         .weight = weighted ? weight : NULL, .valid = valid,
                                         .init = init, .max_iter = passes};
                void *want_c = malloc((size_t)k * d * es), *got_c = malloc((size_t)k * d * es);
                int32_t *want_l = malloc((size_t)n * 4), *got_l = malloc((size_t)n * 4);
                double want_in, got_in = -1;
                ref_kmeans_minibatch(&ref, batch, want_c, want_l, &want_in);
                struct clstats_kmeans_minibatch_options o;
                clstats_kmeans_minibatch_options_init(&o);
                struct clstats_array xa = host_array(x, f64, d, n), ia = host_array(init, f64, d, k),
                                     ca = host_array(got_c, f64, d, k), wa = host_array(w, f64, n, 1);
                o.init = CLSTATS_KMEANS_GIVEN;
                o.init_centers = &ia;
                o.batch_size = (size_t)batch;
                o.max_iter = passes;
                o.skip_nan = 1;
                o.sample_weight = weighted ? &wa : NULL;
                o.inertia = &got_in;
                int it = -1;
                size_t steps = 0;
                o.n_iter = &it;
                o.n_steps = &steps;
                const int st = clstats_kmeans_minibatch(test_ctx(), &xa, (size_t)k, &o, &ca, got_l);
                ck_assert_msg(st == CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
                const int per_pass = (n + (batch < n ? batch : n) - 1) / (batch < n ? batch : n);
                ck_assert_msg(it == passes && steps == (size_t)(passes * per_pass),
                              "case %zu: %d passes, %zu steps", ci, it, steps);
                ck_assert_msg(memcmp(got_c, want_c, (size_t)k * d * es) == 0,
                              "case %zu f64 %d weighted %d: centres differ", ci, f64, weighted);
                ck_assert_msg(memcmp(got_l, want_l, (size_t)n * 4) == 0, "case %zu: labels differ",
                              ci);
                ck_assert_msg(fabs(got_in - want_in) <= 1e-9 * want_in, "inertia %.17g, want %.17g",
                              got_in, want_in);
                free(x), free(init), free(valid), free(weight), free(w);
                free(want_c), free(got_c), free(want_l), free(got_l);
            }
}
END_TEST

START_TEST(minibatch_steps_seeding_and_errors)
{
    clstats_ctx *ctx = test_ctx();
    const int n = 4000, d = 2, k = 5;
    float *x = make_data(0, n, d, k, 0, test_seed() + 7);
    float c1[10], c2[10];
    struct clstats_array xa = host_array(x, 0, d, n), ca = host_array(c1, 0, d, k);
    struct clstats_kmeans_minibatch_options o;
    clstats_kmeans_minibatch_options_init(&o);
    o.seed = 99;
    o.max_iter = 50;
    o.tol = 1e-4;
    int it = 0;
    o.n_iter = &it;
    ck_assert_int_eq(clstats_kmeans_minibatch(ctx, &xa, k, &o, &ca, NULL), CLSTATS_OK);
    ck_assert_msg(it < 50, "tol ended the passes after %d", it);
    ca.host = c2;
    ck_assert_int_eq(clstats_kmeans_minibatch(ctx, &xa, k, &o, &ca, NULL), CLSTATS_OK);
    ck_assert_msg(memcmp(c1, c2, sizeof c1) == 0, "the same seed, the same centres");
    o.init = CLSTATS_KMEANS_RANDOM;
    ck_assert_int_eq(clstats_kmeans_minibatch(ctx, &xa, k, &o, &ca, NULL), CLSTATS_OK);
    /* The step call: two steps from no weight equal one pass of two batches. */
    float s[10];
    memcpy(s, x, sizeof s);
    double seen[5] = {0};
    struct clstats_array sa = host_array(s, 0, d, k), b1 = host_array(x, 0, d, 2000),
                         b2 = host_array(x + 2 * 2000, 0, d, 2000);
    ck_assert_int_eq(clstats_kmeans_minibatch_step(ctx, &b1, NULL, 0, &sa, seen, NULL, NULL),
                     CLSTATS_OK);
    ck_assert_int_eq(clstats_kmeans_minibatch_step(ctx, &b2, NULL, 0, &sa, seen, NULL, NULL),
                     CLSTATS_OK);
    struct clstats_array ia = host_array(x, 0, d, k);
    clstats_kmeans_minibatch_options_init(&o);
    o.init = CLSTATS_KMEANS_GIVEN;
    o.init_centers = &ia;
    o.batch_size = 2000;
    o.max_iter = 1;
    ck_assert_int_eq(clstats_kmeans_minibatch(ctx, &xa, k, &o, &ca, NULL), CLSTATS_OK);
    ck_assert_msg(memcmp(s, ca.host, sizeof s) == 0, "steps equal a pass");
    double total = 0;
    for (int j = 0; j < k; j++)
        total += seen[j];
    ck_assert_msg(total == n, "weight seen %g", total);
    /* Errors: NaN rows without skip_nan, k > n, a buffer, batch_size 0. */
    x[6] = NAN;
    ck_assert_int_eq(clstats_kmeans_minibatch_step(ctx, &b1, NULL, 0, &sa, seen, NULL, NULL),
                     CLSTATS_ERR_NAN);
    ck_assert_int_eq(clstats_kmeans_minibatch(ctx, &xa, k, &o, &ca, NULL), CLSTATS_ERR_NAN);
    o.skip_nan = 1;
    ck_assert_int_eq(clstats_kmeans_minibatch(ctx, &xa, k, &o, &ca, NULL), CLSTATS_OK);
    struct clstats_array small = host_array(x, 0, d, 3);
    ck_assert_int_eq(clstats_kmeans_minibatch(ctx, &small, k, &o, &ca, NULL), CLSTATS_ERR_ARG);
    o.batch_size = 0;
    ck_assert_int_eq(clstats_kmeans_minibatch(ctx, &xa, k, &o, &ca, NULL), CLSTATS_ERR_ARG);
    struct clstats_array onbuf = {.buffer = (cl_mem)1, .dtype = CLSTATS_FLOAT32, .nx = d, .ny = n};
    ck_assert_int_eq(clstats_kmeans_minibatch(ctx, &onbuf, k, NULL, &ca, NULL), CLSTATS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(clstats_ctx_message(ctx), "host memory"));
    free(x);
}
END_TEST

int main(void)
{
    /* Four cases, so that CK_RUN_CASE can pick one (a GPU builds each shape's programs: the
     * whole suite takes minutes there). */
    Suite *s = suite_create("kmeans");
    TCase *lloyd = tcase_create("lloyd"), *paths = tcase_create("paths"),
          *fused = tcase_create("fused"), *minibatch = tcase_create("minibatch");
    tcase_set_timeout(lloyd, 600);
    tcase_set_timeout(paths, 600);
    tcase_set_timeout(minibatch, 600);
    tcase_set_timeout(fused, 600);
    tcase_add_test(lloyd, lloyd_matches_reference_bit_for_bit);
    tcase_add_test(lloyd, ties_go_to_the_lowest_centre);
    tcase_add_test(lloyd, empty_clusters_take_the_farthest_rows);
    tcase_add_test(lloyd, weights_match_the_reference);
    tcase_add_test(lloyd, nan_rows_are_refused_or_left_out);
    tcase_add_test(lloyd, seeding_is_reproducible_and_restarts_never_lose);
    tcase_add_test(lloyd, data_in_a_buffer_gives_the_same);
    tcase_add_test(lloyd, bad_input_gives_clear_errors);
    tcase_add_test(paths, assignment_paths_give_the_same_labels);
    tcase_add_test(paths, sums_and_scatter_paths_give_the_same_bits);
    tcase_add_test(fused, fused_path_gives_the_same_labels);
    tcase_add_test(minibatch, minibatch_matches_reference_bit_for_bit);
    tcase_add_test(minibatch, minibatch_steps_seeding_and_errors);
    suite_add_tcase(s, lloyd);
    suite_add_tcase(s, paths);
    suite_add_tcase(s, fused);
    suite_add_tcase(s, minibatch);
    return test_run_suite(s);
}
