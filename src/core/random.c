/* random.c - the library's one random generator, for what the host draws (LTS's random subsets,
 * k-means's first centres): xoshiro256** seeded through splitmix64 (Blackman and Vigna), so that
 * a seed gives the same draws on every machine and device. */
#include "internal.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void clstats__rng_seed(struct clstats__rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

uint64_t clstats__rng_next(struct clstats__rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double clstats__rng_uniform(struct clstats__rng *r)
{
    return (double)(clstats__rng_next(r) >> 11) * 0x1.0p-53;
}

/* Draws past the largest multiple of n are drawn again, so that no value is favoured. */
uint64_t clstats__rng_below(struct clstats__rng *r, uint64_t n)
{
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = clstats__rng_next(r);
    while (x >= limit);
    return x % n;
}
