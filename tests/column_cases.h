/* column_cases.h - what the suites of the column medians' sample paths share
 * (test_column_bracket.c, test_column_registers.c): a matrix whose first columns are the cases
 * a median must get right, and the check of every column's median against the reference. */
#ifndef COLUMN_CASES_H
#define COLUMN_CASES_H

#include "../src/select/select_internal.h"

#include <stddef.h>
#include <stdint.h>

/* A rows x ld matrix (free() it) of normal values, one in ten wide, with columns 0..11 (those
 * there are) made into the hard cases: three values, some NaN, all NaN, half +inf, constant,
 * keys sharing a long prefix, signed zeros, integers 0..99, a few numbers among NaNs, sorted,
 * reverse sorted, a quarter 1e30. */
float *column_cases_matrix(size_t rows, size_t cols, size_t ld, uint64_t salt);

/* A rows x cols matrix (free() it) of standard normal values from the suite's seed + salt. */
float *column_cases_normal(size_t rows, size_t cols, uint64_t salt);

/* clstats_column_medians on the matrix against the reference, bit for bit, under every
 * even-count option (Check assertions; `what` names the case in a failure). */
void column_cases_check(const float *m, size_t rows, size_t cols, size_t ld, const char *what);

/* clstats_column_medians_buffer on a 3001 x 45 matrix inside a device buffer, from an element
 * offset, rows 50 apart, against the reference, bit for bit. */
void column_cases_check_buffer(const char *what, uint64_t salt);

/* The path itself on m, uploaded: its report, after checking the middle keys and NaN count of
 * every column it did not miss against the reference's sorted column. */
struct column_bracket_report column_cases_run_path(clstats__column_path path, const float *m,
                                                   size_t rows, size_t cols);

#endif
