/* gram_cache.c - the host's book of the device's Gram cache (engine_device.c): which variables
 * have their row x_v^T X in which of the cache's rows. Each iteration the variables of the models
 * of the particles that take the argmax must all be there; the new ones get the next free rows,
 * consecutive so that one GEMM makes them all; where they do not fit beside the old ones the
 * cache starts afresh (the rows of variables that left every model are the ones wasted, and
 * models change little between iterations). */
#include "varsel_internal.h"

#include <stdlib.h>
#include <string.h>

int clstats__cache_init(clstats_ctx *ctx, struct pass_cache *c, size_t p, size_t slots)
{
    *c = (struct pass_cache){.p = p, .slots = slots};
    c->slot_of = malloc(p * sizeof *c->slot_of);
    c->stamp = calloc(p, sizeof *c->stamp);
    c->var_of = malloc(slots * sizeof *c->var_of);
    c->fresh = malloc(slots * sizeof *c->fresh);
    if (!c->slot_of || !c->stamp || !c->var_of || !c->fresh)
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory for PaSS's Gram cache");
    for (size_t i = 0; i < p; i++) c->slot_of[i] = -1;
    return CLSTATS_OK;
}

void clstats__cache_free(struct pass_cache *c)
{
    free(c->slot_of), free(c->stamp), free(c->var_of), free(c->fresh);
    memset(c, 0, sizeof *c);
}

/* Calls visit(c, v) once for each distinct variable of the m models rows[..]; the count. */
static size_t each_variable(struct pass_cache *c, const int32_t *idx, const int32_t *size,
                            const int32_t *rows, size_t m, size_t cap,
                            void (*visit)(struct pass_cache *, int32_t))
{
    size_t count = 0;
    if (++c->epoch == 0) { /* the stamps wrapped: none may look current */
        memset(c->stamp, 0, c->p * sizeof *c->stamp);
        c->epoch = 1;
    }
    for (size_t q = 0; q < m; q++) {
        const int32_t *model = idx + (size_t)rows[q] * cap;
        for (int32_t k = 0; k < size[rows[q]]; k++) {
            const int32_t v = model[k];
            if (c->stamp[v] == c->epoch) continue;
            c->stamp[v] = c->epoch;
            count++;
            if (visit) visit(c, v);
        }
    }
    return count;
}

/* fresh holds slots entries: more new variables than that fail the plan anyway */
static void note_if_new(struct pass_cache *c, int32_t v)
{
    if (c->slot_of[v] < 0 && c->n_fresh < c->slots) c->fresh[c->n_fresh++] = v;
}

bool clstats__cache_plan(struct pass_cache *c, const int32_t *idx, const int32_t *size,
                         const int32_t *rows, size_t m, size_t cap, int32_t *slot)
{
    /* the distinct variables counted and the new ones noted in one walk (the stamps and slots
     * are p entries each: a walk is mostly cache misses) */
    c->n_fresh = 0;
    if (each_variable(c, idx, size, rows, m, cap, note_if_new) > c->slots) {
        c->n_fresh = 0;
        return false;
    }
    if (c->used + c->n_fresh > c->slots) { /* afresh: every variable of the models is new */
        for (size_t s = 0; s < c->used; s++) c->slot_of[c->var_of[s]] = -1;
        c->used = c->n_fresh = 0;
        each_variable(c, idx, size, rows, m, cap, note_if_new);
    }
    c->first_fresh = c->used;
    for (size_t f = 0; f < c->n_fresh; f++) {
        c->slot_of[c->fresh[f]] = (int32_t)c->used;
        c->var_of[c->used++] = c->fresh[f];
    }
    for (size_t q = 0; q < m; q++) {
        const size_t at = (size_t)rows[q] * cap;
        for (int32_t k = 0; k < size[rows[q]]; k++) slot[at + k] = c->slot_of[idx[at + k]];
    }
    return true;
}

void clstats__cache_take_all(struct pass_cache *c)
{
    for (size_t v = 0; v < c->p; v++)
        c->slot_of[v] = c->var_of[v] = c->fresh[v] = (int32_t)v;
    c->used = c->n_fresh = c->p;
    c->first_fresh = 0;
}
