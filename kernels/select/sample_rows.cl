/* sample_rows.cl - the rows the column kernels sample (column_bracket.cl, column_registers.cl);
 * pulled in with #include. tests/test_column_bracket.c uses the same formula. */
#ifndef SAMPLE_ROWS_CL
#define SAMPLE_ROWS_CL

/* Row of sample key i of `samples`: a row at random (a fixed hash of i) within the i-th of
 * `samples` equal strata, so that rows that repeat with a period (even and odd, say) cannot
 * alias with the sample's stride. */
inline uint sample_row(uint i, uint rows, uint samples)
{
    uint h = i * 0x9e3779b9u;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return (uint)(((ulong)i * rows + (((ulong)h * rows) >> 32)) / samples);
}

#endif
