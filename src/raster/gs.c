/* The geometry stage: one call of a draw's geometry shader on one input
 * primitive, collecting what it emits (kiln_gs_emit, kiln_gs_cut) for
 * geom.c to assemble into output primitives in emission order. */
#include "geom.h"

#include <string.h>

struct kiln_gs_stream {
    kr_gs_out *out;
    uint32_t stride; /* floats per emitted vertex */
    bool rt_index;   /* the desc declares the render-target array index */
    bool cut;        /* the next vertex starts a strip */
};

void kiln_gs_emit(kiln_gs_args *a, const float *vertex)
{
    if (!a || !a->stream || !vertex)
        return;
    struct kiln_gs_stream *s = a->stream;
    kr_gs_out *o = s->out;
    if (o->n >= o->max)
        return; /* past max_vertices: dropped, as in D3D10 */
    memcpy(o->v + (size_t)o->n * s->stride, vertex, sizeof(float) * s->stride);
    o->prim_id[o->n] = a->out_primitive_id;
    o->rt_index[o->n] = s->rt_index ? a->out_rt_array_index : 0;
    o->restart[o->n] = s->cut || o->n == 0;
    s->cut = false;
    o->n++;
}

void kiln_gs_cut(kiln_gs_args *a)
{
    if (a && a->stream)
        a->stream->cut = true;
}

void kr_gs_invoke(const kr_drawx *dx, const float *const *v, uint32_t nv, uint32_t prim_id,
                  uint32_t instance, kr_gs_out *out)
{
    const kd_state *s = dx->s;
    uint32_t is = dx->out_stride;
    float in[6 * (4 + 4 * KILN_MAX_VARYINGS)];
    for (uint32_t k = 0; k < nv; k++)
        memcpy(in + k * is, v[k], sizeof(float) * is);
    out->n = 0;
    out->max = s->gs_max_vertices;
    out->stride = 4 + 4 * s->gs_varyings;
    struct kiln_gs_stream st = {
        .out = out, .stride = out->stride, .rt_index = (s->gs_flags & KILN_GS_WRITES_RT_ARRAY_INDEX) != 0};
    kiln_gs_args a = {
        .primitive_id = prim_id,
        .instance_id = instance,
        .num_vertices = nv,
        .in = in,
        .in_stride = is,
        .user = s->gs_user,
        .out_primitive_id = prim_id,
        .stream = &st,
        .textures = dx->gs_tex,
    };
    s->gs(&a);
}
