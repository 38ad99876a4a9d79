/* test_threads.c - the rule include/clstats.h states for threads: two threads, each with its own
 * context, filter at the same moment and get the same bits as one thread alone. Check's asserts
 * are not thread-safe, so the threads only record; the main thread judges. */
#include "test_util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_THREADS 2
#define ROUNDS 3

struct job {
    const float *image;
    size_t nx, ny;
    struct clstats_filter_params params;
    float *median, *mad;
    pthread_barrier_t *start;
    int status;
    char message[512];
};

static void *filter_in_thread(void *arg)
{
    struct job *job = arg;
    clstats_ctx *ctx = NULL;
    job->status = clstats_ctx_create(&ctx, NULL);
    if (job->status != CLSTATS_OK) {
        snprintf(job->message, sizeof job->message, "%s", clstats_ctx_message(NULL));
        pthread_barrier_wait(job->start);
        return NULL;
    }
    /* Build the program before the barrier, so the filtering itself overlaps. */
    float one;
    clstats_median_filter(ctx, job->image, 1, 1, 1, &job->params, &one, NULL);
    pthread_barrier_wait(job->start);
    for (int r = 0; r < ROUNDS && job->status == CLSTATS_OK; r++)
        job->status = clstats_median_filter(ctx, job->image, job->nx, job->ny, job->nx,
                                            &job->params, job->median, job->mad);
    snprintf(job->message, sizeof job->message, "%s", clstats_ctx_message(ctx));
    clstats_ctx_destroy(ctx);
    return NULL;
}

static float *random_image(size_t n, uint64_t seed)
{
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    float *img = malloc(n * sizeof *img);
    for (size_t i = 0; i < n; i++)
        img[i] = (float)(test_rng_normal(&rng) * 10.0);
    return img;
}

START_TEST(two_threads_with_their_own_contexts_filter_at_once)
{
    const size_t nx = 300, ny = 200, n = nx * ny;
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, N_THREADS);
    struct job jobs[N_THREADS];
    pthread_t threads[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        /* Different images and modes, so a mix-up between threads would show. */
        jobs[t] = (struct job){
            .image = random_image(n, test_seed() + (uint64_t)t),
            .nx = nx,
            .ny = ny,
            .params = {.width = 7,
                       .boundary = t ? CLSTATS_BOUNDARY_WRAP : CLSTATS_BOUNDARY_REFLECT},
            .median = malloc(n * sizeof(float)),
            .mad = malloc(n * sizeof(float)),
            .start = &start,
        };
        ck_assert_int_eq(pthread_create(&threads[t], NULL, filter_in_thread, &jobs[t]), 0);
    }
    for (int t = 0; t < N_THREADS; t++)
        pthread_join(threads[t], NULL);
    pthread_barrier_destroy(&start);

    float *median = malloc(n * sizeof(float)), *mad = malloc(n * sizeof(float));
    for (int t = 0; t < N_THREADS; t++) {
        ck_assert_msg(jobs[t].status == CLSTATS_OK, "thread %d: %s: %s", t,
                      clstats_strerror(jobs[t].status), jobs[t].message);
        ck_assert_int_eq(clstats_median_filter(test_ctx(), jobs[t].image, nx, ny, nx,
                                               &jobs[t].params, median, mad),
                         CLSTATS_OK);
        ck_assert_uint_eq(test_compare_bits(jobs[t].median, median, n, nx, "median"), 0);
        ck_assert_uint_eq(test_compare_bits(jobs[t].mad, mad, n, nx, "MAD"), 0);
        free((void *)jobs[t].image);
        free(jobs[t].median);
        free(jobs[t].mad);
    }
    free(median);
    free(mad);
}
END_TEST

/* A failed create in one thread leaves its words in that thread's slot only. */
static void *failing_create(void *arg)
{
    clstats_ctx *ctx = NULL;
    clstats_ctx_create(&ctx, "no-such-device-in-this-thread");
    snprintf(arg, 512, "%s", clstats_ctx_message(NULL));
    return NULL;
}

START_TEST(create_failures_are_reported_per_thread)
{
    clstats_ctx *ctx = NULL;
    ck_assert_int_eq(clstats_ctx_create(&ctx, "no-such-device-in-main"), CLSTATS_ERR_DEVICE_SPEC);
    char other[512];
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, failing_create, other), 0);
    pthread_join(thread, NULL);
    ck_assert_ptr_nonnull(strstr(other, "no-such-device-in-this-thread"));
    ck_assert_ptr_nonnull(strstr(clstats_ctx_message(NULL), "no-such-device-in-main"));
}
END_TEST

static void *release_in_thread(void *arg)
{
    clstats_ctx_release_device(arg);
    return NULL;
}

START_TEST(a_device_given_back_on_a_thread_leaves_the_name_and_fails_later_calls)
{
    /* clstats_ctx_release_device on a thread of its own after a streamed call (its pinned slots,
     * copy threads and queues made), as madfilter gives a GPU back while it writes: the name
     * and the message stay readable, a later call fails with a status instead of crashing, and
     * destroy frees the rest (the sanitizer build sees any leak or double release). */
    clstats_ctx *ctx = NULL;
    ck_assert_int_eq(clstats_ctx_create(&ctx, NULL), CLSTATS_OK);
    ck_assert_int_eq(clstats_ctx_tune(ctx, "transfer.stream", "on"), CLSTATS_OK);
    enum { NX = 64, NY = 48 };
    float image[NX * NY], median[NX * NY];
    for (int i = 0; i < NX * NY; i++)
        image[i] = (float)(i * 7919 % 101);
    const struct clstats_filter_params p = {.width = 3, .boundary = CLSTATS_BOUNDARY_REFLECT};
    ck_assert_int_eq(clstats_median_filter(ctx, image, NX, NY, NX, &p, median, NULL), CLSTATS_OK);
    char name[256];
    snprintf(name, sizeof name, "%s", clstats_ctx_device_name(ctx));
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, release_in_thread, ctx), 0);
    pthread_join(thread, NULL);
    ck_assert_str_eq(clstats_ctx_device_name(ctx), name);
    ck_assert_int_ne(clstats_median_filter(ctx, image, NX, NY, NX, &p, median, NULL), CLSTATS_OK);
    clstats_ctx_release_device(ctx); /* twice is harmless */
    clstats_ctx_destroy(ctx);
}
END_TEST

START_TEST(buffers_given_back_are_made_again_by_the_next_call)
{
    /* clstats_ctx_release_buffers after calls that leave scratch (the selection's) and pinned
     * slots with copy threads (a streamed filter): the same calls after it give the same bits,
     * twice is harmless, and destroy frees what the second round made. */
    clstats_ctx *ctx = NULL;
    ck_assert_int_eq(clstats_ctx_create(&ctx, NULL), CLSTATS_OK);
    ck_assert_int_eq(clstats_ctx_tune(ctx, "transfer.stream", "on"), CLSTATS_OK);
    enum { NX = 64, NY = 48 };
    float image[NX * NY], median[2][NX * NY], whole[2];
    for (int i = 0; i < NX * NY; i++)
        image[i] = (float)(i * 7919 % 101) - (i % 7 == 0 ? 0.5f : 0.0f);
    const struct clstats_filter_params p = {.width = 5, .boundary = CLSTATS_BOUNDARY_NEAREST};
    for (int round = 0; round < 2; round++) {
        ck_assert_int_eq(clstats_median_filter(ctx, image, NX, NY, NX, &p, median[round], NULL),
                         CLSTATS_OK);
        ck_assert_int_eq(clstats_median(ctx, image, NX * NY, NULL, &whole[round]), CLSTATS_OK);
        clstats_ctx_release_buffers(ctx);
        clstats_ctx_release_buffers(ctx);
    }
    ck_assert_mem_eq(median[0], median[1], sizeof median[0]);
    ck_assert_mem_eq(&whole[0], &whole[1], sizeof whole[0]);
    ck_assert_int_eq(clstats_median(ctx, image, NX * NY, NULL, &whole[1]), CLSTATS_OK);
    clstats_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, two_threads_with_their_own_contexts_filter_at_once);
    tcase_add_test(tc, create_failures_are_reported_per_thread);
    tcase_add_test(tc, a_device_given_back_on_a_thread_leaves_the_name_and_fails_later_calls);
    tcase_add_test(tc, buffers_given_back_are_made_again_by_the_next_call);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
