/*
 * Eight triangles' outcodes, screen mapping and setup (setup8.h), one
 * triangle per lane: geom.c's outcode, to_screen3 and setup_tri with the
 * same IEEE operations in the same order (no contraction) and the same
 * wrapping 64-bit integers, so the same bits. Included by setup_avx512.c
 * and setup_avx2.c, each of which defines
 *   SETUP8_NAME           the function
 *   v8f, v8q, v8d         8 floats (__m256), 8 int64, 8 doubles
 *   m8                    8 lane bits (lane i in bit i), an integer type
 *   f8, q8, d8            broadcasts
 *   addq, subq, mulq      wrapping 64-bit arithmetic
 *   gtq, eqq              64-bit compares, as lane bits
 *   CMPF(a, b, pred)      a float compare (a _CMP_ constant), as lane bits
 *   blendq, blendf, blendi (m, a, b): b in the lanes of m, else a (int64,
 *                         float, int32)
 *   minq, maxq, sra8q     64-bit min, max, arithmetic shift right by 8
 *   add1q(m, a)           a + 1 in the lanes of m
 *   maskz_mulf(m, a, b)   a * b in the lanes of m, else +0
 *   cvtps_q8              floats to int64, rounded to nearest even
 *   cvtq_pd8, cvtps_pd8, cvtpd_ps8   conversions
 *   subd, muld, divd      double arithmetic
 *   store_lo32, store_q   a v8q's lanes as int32 (low halves) or int64
 * and includes <immintrin.h> under fp-contract(off).
 */

/* setup_tri's PLANE: f0, then ((d1 y2 - d2 y1) inv, (d2 x1 - d1 x2) inv)
 * in double, d1 = f1 - f0, d2 = f2 - f0, each rounded to float. */
static inline void plane(v8f f0, v8f f1, v8f f2, v8d x1, v8d y1, v8d x2, v8d y2, v8d inv,
                         float *out0, float *out1, float *out2)
{
    const v8d d0 = cvtps_pd8(f0);
    const v8d d1 = subd(cvtps_pd8(f1), d0), d2 = subd(cvtps_pd8(f2), d0);
    const v8d g1 = muld(subd(muld(d1, y2), muld(d2, y1)), inv);
    const v8d g2 = muld(subd(muld(d2, x1), muld(d1, x2)), inv);
    _mm256_storeu_ps(out0, f0);
    _mm256_storeu_ps(out1, cvtpd_ps8(g1));
    _mm256_storeu_ps(out2, cvtpd_ps8(g2));
}

void SETUP8_NAME(const kr_tri8_consts *k, const float *rows, const int32_t off[3][8], kr_tri8 *o,
                 float *attr)
{
    const v8f zero = _mm256_setzero_ps(), one = f8(1.0f), half = f8(0.5f);
    const v8f absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256i idx[3];
    v8f z[3], q[3];
    v8q X[3], Y[3];
    m8 clip = 0, good = 0xff;
    for (int m = 0; m < 3; m++) {
        idx[m] = _mm256_loadu_si256((const __m256i *)(const void *)off[m]);
        const v8f x = _mm256_i32gather_ps(rows, idx[m], 4),
                  y = _mm256_i32gather_ps(rows + 1, idx[m], 4);
        const v8f zc = _mm256_i32gather_ps(rows + 2, idx[m], 4),
                  w = _mm256_i32gather_ps(rows + 3, idx[m], 4);
        /* outcode: w - 1e-6 |w| - 1e-30, then z and w - z, then the
         * guard band's guard * w -+ x, -+ y; any below zero: clipped */
        clip |= CMPF(
            _mm256_sub_ps(_mm256_sub_ps(w, _mm256_mul_ps(f8(1e-6f), _mm256_and_ps(w, absmask))),
                          f8(1e-30f)),
            zero, _CMP_LT_OQ);
        if (k->depth_clip)
            clip |= CMPF(zc, zero, _CMP_LT_OQ) | CMPF(_mm256_sub_ps(w, zc), zero, _CMP_LT_OQ);
        const v8f gw = _mm256_mul_ps(f8(k->guard), w);
        clip |= CMPF(_mm256_sub_ps(gw, x), zero, _CMP_LT_OQ) |
                CMPF(_mm256_add_ps(gw, x), zero, _CMP_LT_OQ) |
                CMPF(_mm256_sub_ps(gw, y), zero, _CMP_LT_OQ) |
                CMPF(_mm256_add_ps(gw, y), zero, _CMP_LT_OQ);
        /* to_screen3 */
        const v8f qm = _mm256_div_ps(one, w);
        const v8f sx = _mm256_add_ps(
            f8(k->vp_x),
            _mm256_mul_ps(_mm256_mul_ps(_mm256_add_ps(_mm256_mul_ps(x, qm), one), f8(k->vp_w)),
                          half));
        const v8f sy = _mm256_add_ps(
            f8(k->vp_y),
            _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(one, _mm256_mul_ps(y, qm)), f8(k->vp_h)),
                          half));
        const v8f sz =
            _mm256_add_ps(f8(k->vp_min), _mm256_mul_ps(_mm256_mul_ps(zc, qm), f8(k->vp_range)));
        const m8 ok = CMPF(w, zero, _CMP_GT_OQ) & CMPF(sz, sz, _CMP_ORD_Q) &
                      CMPF(_mm256_and_ps(sx, absmask), f8(1e7f), _CMP_LT_OQ) &
                      CMPF(_mm256_and_ps(sy, absmask), f8(1e7f), _CMP_LT_OQ);
        good &= ok;
        /* a bad vertex's products may not fit: converted from zero */
        X[m] = cvtps_q8(maskz_mulf(ok, sx, f8(256.0f)));
        Y[m] = cvtps_q8(maskz_mulf(ok, sy, f8(256.0f)));
        z[m] = sz;
        q[m] = qm;
    }
    /* setup_tri */
    const v8q zq = q8(0);
    const v8q area =
        subq(mulq(subq(X[1], X[0]), subq(Y[2], Y[0])), mulq(subq(X[2], X[0]), subq(Y[1], Y[0])));
    m8 live = (m8)(~clip & good & ~eqq(area, zq) & 0xffu);
    const m8 cw = gtq(area, zq);
    const m8 front = (m8)((k->front_ccw ? ~cw : cw) & 0xffu);
    if (k->cull_front)
        live &= (m8)~front;
    if (k->cull_back)
        live &= front;
    /* clockwise order: vertices 1 and 2 swapped where the area is negative */
    const m8 swap = gtq(zq, area);
    {
        const v8q x1 = X[1], y1 = Y[1];
        X[1] = blendq(swap, X[1], X[2]);
        Y[1] = blendq(swap, Y[1], Y[2]);
        X[2] = blendq(swap, X[2], x1);
        Y[2] = blendq(swap, Y[2], y1);
        const v8f z1 = z[1], q1 = q[1];
        z[1] = blendf(swap, z[1], z[2]);
        q[1] = blendf(swap, q[1], q[2]);
        z[2] = blendf(swap, z[2], z1);
        q[2] = blendf(swap, q[2], q1);
        const __m256i i1 = idx[1];
        idx[1] = blendi(swap, idx[1], idx[2]);
        idx[2] = blendi(swap, idx[2], i1);
    }
    /* the pixels whose centers can be inside: ceil((min - 128 - reach) / 256)
     * .. floor((max - 128 + reach) / 256), clamped to the raster rect */
    const v8q minX = minq(minq(X[0], X[1]), X[2]), maxX = maxq(maxq(X[0], X[1]), X[2]);
    const v8q minY = minq(minq(Y[0], Y[1]), Y[2]), maxY = maxq(maxq(Y[0], Y[1]), Y[2]);
    const v8q lo = q8(128 + k->reach), hi = q8(128 - k->reach);
    v8q x0 = subq(zq, sra8q(subq(zq, subq(minX, lo))));
    v8q y0 = subq(zq, sra8q(subq(zq, subq(minY, lo))));
    v8q x1 = addq(sra8q(subq(maxX, hi)), q8(1));
    v8q y1 = addq(sra8q(subq(maxY, hi)), q8(1));
    x0 = maxq(x0, q8(k->rx0));
    y0 = maxq(y0, q8(k->ry0));
    x1 = minq(x1, q8(k->rx1));
    y1 = minq(y1, q8(k->ry1));
    live &= gtq(x1, x0) & gtq(y1, y0);
    for (int i = 0; i < 8; i++) {
        o->status[i] = (uint8_t)(clip >> i & 1   ? KR_TRI8_CLIP
                                 : live >> i & 1 ? KR_TRI8_EMIT
                                                 : KR_TRI8_DROP);
        o->front[i] = (uint8_t)(front >> i & 1);
    }
    if (!live)
        return;
    store_lo32(o->minx, x0);
    store_lo32(o->miny, y0);
    store_lo32(o->maxx, x1);
    store_lo32(o->maxy, y1);
    /* edges: a = -dy, b = dx, c = dy X - dx Y, less one off the top and
     * left edges */
    for (int e = 0; e < 3; e++) {
        const int n = e == 2 ? 0 : e + 1;
        const v8q ddx = subq(X[n], X[e]), ddy = subq(Y[n], Y[e]);
        const m8 top_left = gtq(zq, ddy) | (eqq(ddy, zq) & gtq(ddx, zq));
        const v8q c = subq(subq(mulq(ddy, X[e]), mulq(ddx, Y[e])), q8(1));
        store_q(o->a[e], subq(zq, ddy));
        store_q(o->b[e], ddx);
        store_q(o->c[e], add1q(top_left, c));
    }
    /* planes from the snapped positions, relative to vertex 0 */
    const v8d sub = d8(1.0 / 256.0);
    const v8d fx0 = muld(cvtq_pd8(X[0]), sub), fy0 = muld(cvtq_pd8(Y[0]), sub);
    const v8d dx1 = subd(muld(cvtq_pd8(X[1]), sub), fx0);
    const v8d dy1 = subd(muld(cvtq_pd8(Y[1]), sub), fy0);
    const v8d dx2 = subd(muld(cvtq_pd8(X[2]), sub), fx0);
    const v8d dy2 = subd(muld(cvtq_pd8(Y[2]), sub), fy0);
    const v8d inv = divd(d8(1.0), subd(muld(dx1, dy2), muld(dx2, dy1)));
    _mm256_storeu_ps(o->ox, cvtpd_ps8(fx0));
    _mm256_storeu_ps(o->oy, cvtpd_ps8(fy0));
    plane(z[0], z[1], z[2], dx1, dy1, dx2, dy2, inv, o->z[0], o->z[1], o->z[2]);
    plane(q[0], q[1], q[2], dx1, dy1, dx2, dy2, inv, o->q[0], o->q[1], o->q[2]);
    /* the varyings over w */
    for (uint32_t c = 0; c < k->ncomp; c++) {
        const float *base = rows + 4 + c;
        const v8f f0 = _mm256_mul_ps(_mm256_i32gather_ps(base, idx[0], 4), q[0]);
        const v8f f1 = _mm256_mul_ps(_mm256_i32gather_ps(base, idx[1], 4), q[1]);
        const v8f f2 = _mm256_mul_ps(_mm256_i32gather_ps(base, idx[2], 4), q[2]);
        float *out = attr + (size_t)3 * 8 * c;
        plane(f0, f1, f2, dx1, dy1, dx2, dy2, inv, out, out + 8, out + 16);
    }
}
