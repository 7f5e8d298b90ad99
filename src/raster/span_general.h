/*
 * The general pixel path over a rect inside a triangle (a kr_span_fn, see
 * kr_general_span_select in tile.c): what shade_block does block by block
 * for a draw without a depth or stencil test whose output is one write8
 * call, in one loop per rect. Per block the same steps as there, with the
 * same functions: the pixels' depth (only for a shader that reads it), the
 * varyings, the outputs zeroed, the pixel shader, its discards, write8,
 * which runs after the next block's shader (two output buffers: the
 * blocks are distinct pixels and no shader can read its target, so the
 * bytes are the same). What the loop saves is shade_block's
 * per-block dispatch (its checks of the draw's state and the calls between
 * shade_block, shade_unblocked and shade_rest), and the zeros of the
 * varying components the shader does not read, written once per rect.
 *
 * Included by pixel_avx2.c and pixel_avx512.c, each of which defines
 *   SPAN_NAME                     the function
 *   SPAN_DEPTH(p, x, y, z)        the block's depth at the pixel centers
 *   SPAN_INTERP(p, x, y, n, m, v) its varyings (kr_interpolate_*'s), the
 *                                 components the shader does not read left
 *                                 as they are
 *   SPAN_ZERO(c)                  one output's 4 x 16 floats zeroed
 */

bool SPAN_NAME(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)
{
    /* a counted scene (queries) never gets here (kr_general_span_select's
     * caller); declined all the same, the count being shade_block's */
    if (fb->counts)
        return false;
    kr_general_span_counted();
    const kr_drawx *dx = p->dx;
    const kd_state *s = dx->s;
    /* the 16 zeros a KILN_PS_NO_Z shader reads (tile.c's no_z) */
    static _Alignas(64) const float no_z[B];
    _Alignas(64) float z[B];
    _Alignas(64) float vary[KILN_MAX_VARYINGS * 4 * B];
    /* Two blocks' outputs: a block's write8 runs once the next block's
     * shader has (its loads then find the outputs in the cache, not in
     * stores still in flight, and its conversion overlaps that shader);
     * the blocks are distinct pixels and a shader cannot read the target
     * it draws into (a draw hazard), so the bytes are the same. */
    _Alignas(64) float colors[2][KILN_MAX_RENDER_TARGETS * 4 * B];
    int cur = 0, hx = 0, hy = 0; /* colors[cur ^ 1]: block (hx, hy)'s, pending if hmask */
    uint32_t hmask = 0;
    const bool read_z = !(s->ps_flags & KILN_PS_NO_Z);
    const bool discard = (s->ps_flags & KILN_PS_MAY_DISCARD) != 0;
    const uint32_t ncomp = dx->nvary * 4, vmask = dx->vmask, nout = s->ps_outputs;
    /* raster_tri_to's fetches ahead, which a span function does itself */
    const uint32_t ahead = x1 - x0 > 16 ? dx->ahead_rt : 0;
    const int bx0 = x0 & ~3;
    /* the components the shader does not read: zeros, written once (the
     * loop's interpolation writes only the others) */
    memset(vary, 0, sizeof(float) * B * ncomp);
    for (int by = y0 & ~3; by < y1; by += 4)
        for (int bx = bx0; bx < x1; bx += 4) {
            if (ahead && !((bx - bx0) & 15)) /* a block that starts a line */
                kr_fetch_ahead(fb->rt[0], fb->rt_pitch[0], ahead, bx, by, x0, x1, y1);
            uint32_t mask = kr_rect_mask(bx, by, x0, y0, x1, y1);
            if (read_z)
                SPAN_DEPTH(p, bx, by, z);
            SPAN_INTERP(p, bx, by, ncomp, vmask, vary);
            float *color = colors[cur];
            for (uint32_t r = 0; r < nout; r++)
                SPAN_ZERO(color + r * 4 * B);
            kiln_ps_args a = {
                .x = bx,
                .y = by,
                .mask = mask,
                .front_facing = p->front,
                .varyings = vary,
                .z = read_z ? z : no_z,
                .color = color,
                .cb = dx->ps_cb,
                .cb_size = dx->ps_cb_size,
                .textures = dx->tex,
                .user = s->ps_user,
                .primitive_id = p->prim_id,
            };
            s->ps(&a);
            if (discard)
                mask &= a.mask;
            if (hmask)
                dx->write8(&s->blend[0], s->blend_factor, fb->rt[0], fb->rt_pitch[0], hx, hy,
                           colors[cur ^ 1], hmask);
            hmask = mask;
            if (mask) {
                hx = bx;
                hy = by;
                cur ^= 1;
            }
        }
    if (hmask)
        dx->write8(&s->blend[0], s->blend_factor, fb->rt[0], fb->rt_pitch[0], hx, hy,
                   colors[cur ^ 1], hmask);
    return true;
}
