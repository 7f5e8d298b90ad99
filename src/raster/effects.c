/*
 * Built-in effects: their descs (kiln_effect_get), the vertex shaders, the
 * scalar pixel kernels (the reference the SIMD levels must match bit for
 * bit, and the kernels of non-x86 builds), and the choice of SIMD level.
 *
 * Varyings (both backends):
 *   VERTEX_COLOR   varying 0: color
 *   TEXTURE        varying 0: texcoord (u, v, 0, 1)
 *   TEXTURE_COLOR  varying 0: color, varying 1: texcoord
 *   LIT            varying 0: color, varying 1: world normal (xyz, w = 0),
 *                  not normalized (the pixel kernel normalizes per pixel)
 *
 * GLSL convention (for src/gl, the osmesa backend):
 * - An effect's vertex and pixel descs carry the same string: a GLSL 1.20
 *   vertex shader, then a line exactly "//--- fragment", then the fragment
 *   shader. Each part is a complete shader with its own #version line. The
 *   backend compiles the part before the separator from the vertex desc and
 *   the part after it from the pixel desc.
 * - Inputs: the k-th `attribute` declared in the vertex part is input
 *   element k (a_position is input 0); the backend binds locations with
 *   glBindAttribLocation(prog, k, name) in declaration order. Attributes
 *   are vec4 so that GL widens missing components as D3D10 does.
 * - Constant buffers: vertex-stage buffer N is `uniform vec4 u_cb<N>[n]`,
 *   pixel-stage buffer N is `uniform vec4 u_ps_cb<N>[n]` (one GL program
 *   has one uniform namespace, and LIT's two cb0 differ). n is the number
 *   of float4 in the documented layout; upload min(n, size / 16) of them.
 *   Matrices are row-major as in kiln.h, so row r is u_cb0[r] and
 *   clip[r] = dot(u_cb0[r], vec4(pos.xyz, 1)).
 * - Shader resource 0 with sampler 0 is `uniform sampler2D u_tex0`.
 * - gl_Position is the D3D10 clip-space position, exactly what the C vertex
 *   shader writes (0 <= z <= w, y up); the backend adapts GL's clip and
 *   window conventions itself.
 */
#include "effects.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- vertex shaders ----
 *
 * Scalar: a few dozen flops per vertex, against hundreds per pixel block. */

/* clip = M * (x, y, z, 1), row r summed left to right. */
static void transform_position(const float m[16], const float *in, float *out)
{
    float x = in[0], y = in[1], z = in[2];
    for (int r = 0; r < 4; r++)
        out[r] = ((m[4 * r] * x + m[4 * r + 1] * y) + m[4 * r + 2] * z) + m[4 * r + 3];
}

/* An effect's vertex shader `wide` when the application declared it with
 * fewer inputs or varyings than the effect uses (kiln_effect_get's desc
 * changed): vertex by vertex through local rows, the missing inputs read
 * as zeros and only the declared outputs kept (its rows are
 * 4 + 4 * varyings floats: writing the effect's own count would run past
 * them). nin inputs and nout floats are the effect's. */
static void vs_narrow(const kiln_vs_args *a, kiln_vs_fn wide, uint32_t nin, uint32_t nout)
{
    float in[4 * 3] = {0}, out[12];
    kiln_vs_args one = *a;
    one.count = 1;
    one.in = in;
    one.in_stride = 4 * nin;
    one.out = out;
    one.out_stride = nout;
    const uint32_t have = a->in_stride < 4 * nin ? a->in_stride : 4 * nin;
    const uint32_t keep = a->out_stride < nout ? a->out_stride : nout;
    for (uint32_t v = 0; v < a->count; v++) {
        memcpy(in, a->in + (size_t)v * a->in_stride, have * sizeof(float));
        one.vertex_id = a->vertex_id ? a->vertex_id + v : NULL;
        wide(&one);
        memcpy(a->out + (size_t)v * a->out_stride, out, keep * sizeof(float));
    }
}

static void vs_copy1(const kiln_vs_args *a);
static void vs_copy2(const kiln_vs_args *a);

/* Position from input 0; inputs 1..n copied to varyings 0..n-1. */
static void vs_transform_copy(const kiln_vs_args *a, uint32_t n)
{
    if (a->in_stride < 4 + 4 * n || a->out_stride < 4 + 4 * n) {
        vs_narrow(a, n == 1 ? vs_copy1 : vs_copy2, 1 + n, 4 + 4 * n);
        return;
    }
    float m[16];
    kr_cb_read(a->cb, a->cb_size, 0, m, 16);
    for (uint32_t v = 0; v < a->count; v++) {
        const float *in = a->in + (size_t)v * a->in_stride;
        float *out = a->out + (size_t)v * a->out_stride;
        transform_position(m, in, out);
        memcpy(out + 4, in + 4, n * 4 * sizeof(float));
    }
}

static void vs_copy1(const kiln_vs_args *a) { vs_transform_copy(a, 1); }
static void vs_copy2(const kiln_vs_args *a) { vs_transform_copy(a, 2); }

/* LIT: inputs position, normal, color; varyings color, world normal. */
static void vs_lit(const kiln_vs_args *a)
{
    if (a->in_stride < 12 || a->out_stride < 12) {
        vs_narrow(a, vs_lit, 3, 12);
        return;
    }
    float m[32]; /* world_view_proj, world */
    kr_cb_read(a->cb, a->cb_size, 0, m, 32);
    const float *w = m + 16;
    for (uint32_t v = 0; v < a->count; v++) {
        const float *in = a->in + (size_t)v * a->in_stride;
        float *out = a->out + (size_t)v * a->out_stride;
        transform_position(m, in, out);
        memcpy(out + 4, in + 8, 4 * sizeof(float));
        float nx = in[4], ny = in[5], nz = in[6];
        for (int r = 0; r < 3; r++)
            out[8 + r] = (w[4 * r] * nx + w[4 * r + 1] * ny) + w[4 * r + 2] * nz;
        out[11] = 0.0f;
    }
}

/* ---- pixel kernels: the scalar reference ---- */

void kr_ps_texture(kiln_ps_args *a)
{
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 0, 0), KILN_PS_VARYING(a, 0, 1),
                   KILN_PS_COLOR(a, 0, 0));
}

static void ps_vertex_color(kiln_ps_args *a)
{
    memcpy(KILN_PS_COLOR(a, 0, 0), KILN_PS_VARYING(a, 0, 0), 4 * KILN_PS_BLOCK * sizeof(float));
}

static void ps_texture_color(kiln_ps_args *a)
{
    float t[4 * KILN_PS_BLOCK];
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 1, 0), KILN_PS_VARYING(a, 1, 1), t);
    for (int c = 0; c < 4; c++) {
        const float *col = KILN_PS_VARYING(a, 0, c);
        float *out = KILN_PS_COLOR(a, 0, c);
        for (int i = 0; i < KILN_PS_BLOCK; i++)
            out[i] = t[c * KILN_PS_BLOCK + i] * col[i];
    }
}

static void ps_lit(kiln_ps_args *a)
{
    kr_lit_constants k;
    kr_lit_constants_read(a, &k);
    const float *nx = KILN_PS_VARYING(a, 1, 0), *ny = KILN_PS_VARYING(a, 1, 1),
                *nz = KILN_PS_VARYING(a, 1, 2);
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        float len2 = (nx[i] * nx[i] + ny[i] * ny[i]) + nz[i] * nz[i];
        float inv = len2 > 0.0f ? 1.0f / sqrtf(len2) : 0.0f;
        float d = ((nx[i] * k.l[0] + ny[i] * k.l[1]) + nz[i] * k.l[2]) * inv;
        d = d > 0.0f ? d : 0.0f;
        for (int c = 0; c < 3; c++)
            KILN_PS_COLOR(a, 0, c)[i] =
                KILN_PS_VARYING(a, 0, c)[i] * (k.ambient[c] + k.light[c] * d);
        KILN_PS_COLOR(a, 0, 3)[i] = KILN_PS_VARYING(a, 0, 3)[i];
    }
}

const kr_effect_kernels kr_effects_scalar = {
    "scalar", {ps_vertex_color, kr_ps_texture, ps_texture_color, ps_lit}};

/* ---- GLSL ---- */

#define GLSL_VERSION "#version 120\n"
/* Row-major world_view_proj in u_cb0[0..3]. */
#define GLSL_POSITION                                                                    \
    "    vec4 p = vec4(a_position.xyz, 1.0);\n"                                          \
    "    gl_Position = vec4(dot(u_cb0[0], p), dot(u_cb0[1], p), dot(u_cb0[2], p),\n"      \
    "                       dot(u_cb0[3], p));\n"
#define GLSL_SEPARATOR "//--- fragment\n"

static const char glsl_vertex_color[] =
    GLSL_VERSION
    "uniform vec4 u_cb0[4];\n"
    "attribute vec4 a_position;\n"
    "attribute vec4 a_color;\n"
    "varying vec4 v_color;\n"
    "void main()\n"
    "{\n" GLSL_POSITION
    "    v_color = a_color;\n"
    "}\n" GLSL_SEPARATOR GLSL_VERSION
    "varying vec4 v_color;\n"
    "void main()\n"
    "{\n"
    "    gl_FragColor = v_color;\n"
    "}\n";

static const char glsl_texture[] =
    GLSL_VERSION
    "uniform vec4 u_cb0[4];\n"
    "attribute vec4 a_position;\n"
    "attribute vec4 a_texcoord;\n"
    "varying vec4 v_texcoord;\n"
    "void main()\n"
    "{\n" GLSL_POSITION
    "    v_texcoord = a_texcoord;\n"
    "}\n" GLSL_SEPARATOR GLSL_VERSION
    "uniform sampler2D u_tex0;\n"
    "varying vec4 v_texcoord;\n"
    "void main()\n"
    "{\n"
    "    gl_FragColor = texture2D(u_tex0, v_texcoord.xy);\n"
    "}\n";

static const char glsl_texture_color[] =
    GLSL_VERSION
    "uniform vec4 u_cb0[4];\n"
    "attribute vec4 a_position;\n"
    "attribute vec4 a_color;\n"
    "attribute vec4 a_texcoord;\n"
    "varying vec4 v_color;\n"
    "varying vec4 v_texcoord;\n"
    "void main()\n"
    "{\n" GLSL_POSITION
    "    v_color = a_color;\n"
    "    v_texcoord = a_texcoord;\n"
    "}\n" GLSL_SEPARATOR GLSL_VERSION
    "uniform sampler2D u_tex0;\n"
    "varying vec4 v_color;\n"
    "varying vec4 v_texcoord;\n"
    "void main()\n"
    "{\n"
    "    gl_FragColor = texture2D(u_tex0, v_texcoord.xy) * v_color;\n"
    "}\n";

/* VS cb0: world_view_proj rows in [0..3], world rows in [4..7].
 * PS cb0: [0] light direction, [1] light color, [2] ambient. */
static const char glsl_lit[] =
    GLSL_VERSION
    "uniform vec4 u_cb0[8];\n"
    "attribute vec4 a_position;\n"
    "attribute vec4 a_normal;\n"
    "attribute vec4 a_color;\n"
    "varying vec4 v_color;\n"
    "varying vec3 v_normal;\n"
    "void main()\n"
    "{\n" GLSL_POSITION
    "    vec3 n = a_normal.xyz;\n"
    "    v_normal = vec3(dot(u_cb0[4].xyz, n), dot(u_cb0[5].xyz, n), dot(u_cb0[6].xyz, n));\n"
    "    v_color = a_color;\n"
    "}\n" GLSL_SEPARATOR GLSL_VERSION
    "uniform vec4 u_ps_cb0[3];\n"
    "varying vec4 v_color;\n"
    "varying vec3 v_normal;\n"
    "void main()\n"
    "{\n"
    "    float len2 = dot(v_normal, v_normal);\n"
    "    float d = 0.0;\n"
    "    if (len2 > 0.0)\n"
    "        d = max(dot(v_normal, -u_ps_cb0[0].xyz) * inversesqrt(len2), 0.0);\n"
    "    vec3 light = u_ps_cb0[2].rgb + u_ps_cb0[1].rgb * d;\n"
    "    gl_FragColor = vec4(v_color.rgb * light, v_color.a);\n"
    "}\n";

/* ---- the effects ---- */

typedef struct effect_info {
    kiln_vs_fn vs;
    uint32_t num_inputs;
    uint32_t num_varyings; /* written by the VS and read by the PS */
    const char *glsl;
    uint32_t read_mask;    /* the components the PS reads (kiln_pixel_shader_desc) */
} effect_info;

static const effect_info effects[KILN_EFFECT_COUNT] = {
    [KILN_EFFECT_VERTEX_COLOR] = {vs_copy1, 2, 1, glsl_vertex_color, 0xFu},       /* color */
    [KILN_EFFECT_TEXTURE] = {vs_copy1, 2, 1, glsl_texture, 0x3u},                 /* u, v */
    [KILN_EFFECT_TEXTURE_COLOR] = {vs_copy2, 3, 2, glsl_texture_color, 0x3Fu},    /* color; u, v */
    [KILN_EFFECT_LIT] = {vs_lit, 3, 2, glsl_lit, 0x7Fu},                          /* color; normal xyz */
};

/* ---- choice of level ---- */

static pthread_once_t level_once = PTHREAD_ONCE_INIT;
static bool cpu_avx2, cpu_avx512; /* written once under level_once */
static _Atomic(const kr_effect_kernels *) active_kernels;
/* The level of active_kernels, -1 until level_init: kiln_ps_sample asks
 * for it on every block. */
static _Atomic int active_simd = -1;

static kr_simd detect(const char *env_simd)
{
#if KR_EFFECTS_X86
    if (env_simd && strcmp(env_simd, "sse2") == 0)
        return KR_SIMD_SSE2;
    if (env_simd && strcmp(env_simd, "avx2") == 0)
        return cpu_avx2 ? KR_SIMD_AVX2 : KR_SIMD_SSE2;
    return cpu_avx512 ? KR_SIMD_AVX512 : cpu_avx2 ? KR_SIMD_AVX2 : KR_SIMD_SSE2;
#else
    (void)env_simd;
    return KR_SIMD_SCALAR;
#endif
}

static const kr_effect_kernels *kernels_of(kr_simd level)
{
    switch (level) {
    case KR_SIMD_SCALAR:
        return &kr_effects_scalar;
#if KR_EFFECTS_X86
    case KR_SIMD_SSE2:
        return &kr_effects_sse2;
    case KR_SIMD_AVX2:
        return cpu_avx2 ? &kr_effects_avx2 : NULL;
    case KR_SIMD_AVX512:
        return cpu_avx512 ? &kr_effects_avx512 : NULL;
#endif
    default:
        return NULL;
    }
}

static void level_init(void)
{
#if KR_EFFECTS_X86
    /* The AVX2 file is compiled with -mfma too: require both. */
    __builtin_cpu_init();
    cpu_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    /* fused_avx512.c is compiled for AVX-512 F, BW, VL and DQ */
    cpu_avx512 = cpu_avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#endif
    kr_simd l = detect(getenv("KILN_SIMD"));
    atomic_store_explicit(&active_kernels, kernels_of(l), memory_order_release);
    atomic_store_explicit(&active_simd, (int)l, memory_order_release);
}

static const kr_effect_kernels *active(void)
{
    pthread_once(&level_once, level_init);
    return atomic_load_explicit(&active_kernels, memory_order_acquire);
}

const kr_effect_kernels *kr_effects_kernels(kr_simd level)
{
    pthread_once(&level_once, level_init);
    return kernels_of(level);
}

bool kr_effect_vs_writes(kiln_vs_fn fn, uint32_t num_varyings)
{
    /* Each effect's vertex shader writes the position and all four
     * components of each varying it declares, and nothing past them. */
    for (int e = 0; e < KILN_EFFECT_COUNT; e++)
        if (fn == effects[e].vs && num_varyings == effects[e].num_varyings)
            return true;
    return false;
}

bool kr_effect_ps_is(kiln_ps_fn fn, kiln_effect e)
{
    if (!fn || (unsigned)e >= KILN_EFFECT_COUNT)
        return false;
    if (fn == kr_effects_scalar.ps[e])
        return true;
#if KR_EFFECTS_X86
    /* the tables themselves, whatever this CPU runs */
    return fn == kr_effects_sse2.ps[e] || fn == kr_effects_avx2.ps[e] ||
           fn == kr_effects_avx512.ps[e];
#else
    return false;
#endif
}

kr_simd kr_effects_detect(const char *env_simd)
{
    pthread_once(&level_once, level_init);
    return detect(env_simd);
}

kr_simd kr_effects_active_level(void)
{
    int l = atomic_load_explicit(&active_simd, memory_order_acquire);
    if (l < 0) {
        pthread_once(&level_once, level_init);
        l = atomic_load_explicit(&active_simd, memory_order_acquire);
    }
    return (kr_simd)l;
}

kiln_result kr_effects_force_level(kr_simd level)
{
    const kr_effect_kernels *k = kr_effects_kernels(level);
    if (!k)
        return KILN_E_INVALID_ARG;
    atomic_store_explicit(&active_kernels, k, memory_order_release);
    atomic_store_explicit(&active_simd, (int)level, memory_order_release);
    return KILN_OK;
}

/* ---- public ---- */

kiln_result kiln_effect_get(kiln_effect effect, kiln_vertex_shader_desc *out_vs,
                            kiln_pixel_shader_desc *out_ps)
{
    if (out_vs)
        memset(out_vs, 0, sizeof *out_vs);
    if (out_ps)
        memset(out_ps, 0, sizeof *out_ps);
    if ((unsigned)effect >= KILN_EFFECT_COUNT)
        return KILN_E_INVALID_ARG; /* no device to log to */
    const effect_info *e = &effects[effect];
    if (out_vs) {
        out_vs->fn = e->vs;
        out_vs->num_inputs = e->num_inputs;
        out_vs->num_varyings = e->num_varyings;
        out_vs->glsl = e->glsl;
    }
    if (out_ps) {
        out_ps->fn = active()->ps[effect];
        out_ps->num_varyings = e->num_varyings;
        out_ps->num_outputs = 1;
        out_ps->flags = KILN_PS_NO_Z; /* no effect reads the depth */
        out_ps->glsl = e->glsl;
        out_ps->read_mask = e->read_mask;
    }
    return KILN_OK;
}

const char *kiln_effect_simd_level(void)
{
    return active()->name;
}
