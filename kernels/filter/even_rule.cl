/* even_rule.cl - the middle an even count of values takes (enum clstats_even): the mean of the
 * two middles, the lower or the upper. The rectangle designs take it as a build option (-D EVEN,
 * the mean when absent); the footprint design as an argument. */
#ifndef EVEN_RULE_CL
#define EVEN_RULE_CL

#define EVEN_MEAN 0
#define EVEN_LOWER 1
#define EVEN_UPPER 2

#ifndef EVEN
#define EVEN EVEN_MEAN
#endif

/* The rank of the middle of n values (the first of two under the mean rule). */
#define MIDDLE_RANK(n) (EVEN == EVEN_UPPER ? (n) / 2 : ((n) - 1) / 2)
/* Whether the middle of n values is the mean of ranks MIDDLE_RANK(n) and the next. */
#define MIDDLE_IS_MEAN(n) (EVEN == EVEN_MEAN && (n) % 2 == 0)

#endif
