/*
 * The base-2 logarithm the sampler's LOD takes (lod = 0.5 * log2(rho2) +
 * bias), kiln's own rather than libm's log2f: libm's differs between C
 * libraries and their versions (glibc's log2f, since 2.28, is off the
 * correctly rounded value on about 1 float in 7,000), and an image must
 * not depend on the library it was drawn with; and a libm call per quad
 * cannot be vectorized. log2.c has the method; both forms below compute
 * the same IEEE operations in the same order, so they give the same bits.
 */
#ifndef KILN_RASTER_LOG2_H
#define KILN_RASTER_LOG2_H

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* log2(x) rounded to float: within 0.5 ulp of the exact value plus about
 * 2^-44 of it (so correctly rounded but for values within that of a
 * rounding boundary). log2(+0) = log2(-0) = -inf, log2(+inf) = +inf, a
 * negative x or a NaN gives the default quiet NaN (0x7fc00000); subnormal
 * x are exact inputs like any other (unless the thread's MXCSR treats
 * them as zero: -inf then). */
float kr_log2f(float x);

#if defined(__SSE2__)
/* kr_log2f of each of four lanes (kr_log2f is one of them). */
__m128 kr_log2f4(__m128 x);
#endif

/* The same operations in portable C (what kr_log2f is on targets without
 * SSE2), and the double it rounds for a positive finite x; with SSE2, the
 * four doubles that kr_log2f4 rounds. For test_log2, which holds the
 * portable form to the lanes' bits. */
float kr_log2f_c(float x);
double kr_log2d_c(float x);
#if defined(__SSE2__)
void kr_log2d4(__m128 x, double out[4]);
#endif

#endif
