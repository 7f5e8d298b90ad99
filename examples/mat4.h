/*
 * mat4.h - the matrix math of the draw scenes.
 *
 * Matrices are kiln's (kiln.h, "built-in effects"): 16 floats, row-major,
 * applied to column vectors, so m[r * 4 + c] is row r, column c and
 * clip = M * (x, y, z, 1). mat4_mul(a, b) applies b first, then a.
 *
 * The scenes use a right-handed world (y up, the camera looking down -z in
 * view space) and D3D clip space (0 <= z <= w). Meshes list front faces
 * counter-clockwise as seen from outside, so their rasterizer states set
 * front_ccw. Matrix literals below are written one row per line.
 */
#ifndef KILN_DEMO_MAT4_H
#define KILN_DEMO_MAT4_H

#include <math.h>

typedef struct vec3 {
    float x, y, z;
} vec3;

typedef struct mat4 {
    float m[16];
} mat4;

static inline vec3 v3(float x, float y, float z)
{
    vec3 v = {x, y, z};
    return v;
}

static inline vec3 v3_sub(vec3 a, vec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline vec3 v3_add(vec3 a, vec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline vec3 v3_scale(vec3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
static inline float v3_dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

static inline vec3 v3_cross(vec3 a, vec3 b)
{
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

static inline vec3 v3_normalize(vec3 a)
{
    float len = sqrtf(v3_dot(a, a));
    return len > 0.0f ? v3_scale(a, 1.0f / len) : a;
}

static inline mat4 mat4_identity(void)
{
    mat4 r = {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}};
    return r;
}

static inline mat4 mat4_mul(mat4 a, mat4 b)
{
    mat4 r;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            r.m[i * 4 + j] = a.m[i * 4 + 0] * b.m[0 * 4 + j] + a.m[i * 4 + 1] * b.m[1 * 4 + j] +
                             a.m[i * 4 + 2] * b.m[2 * 4 + j] + a.m[i * 4 + 3] * b.m[3 * 4 + j];
    return r;
}

static inline mat4 mat4_translate(float x, float y, float z)
{
    mat4 r = mat4_identity();
    r.m[3] = x;
    r.m[7] = y;
    r.m[11] = z;
    return r;
}

static inline mat4 mat4_scale(float x, float y, float z)
{
    mat4 r = mat4_identity();
    r.m[0] = x;
    r.m[5] = y;
    r.m[10] = z;
    return r;
}

/* Rotation by `angle` radians about the unit vector `axis`, counter-
 * clockwise when the axis points at the viewer. */
static inline mat4 mat4_rotate(vec3 axis, float angle)
{
    float c = cosf(angle), s = sinf(angle), t = 1.0f - c;
    float x = axis.x, y = axis.y, z = axis.z;
    /* clang-format off */
    mat4 r = {{t * x * x + c,     t * x * y - s * z, t * x * z + s * y, 0,
               t * x * y + s * z, t * y * y + c,     t * y * z - s * x, 0,
               t * x * z - s * y, t * y * z + s * x, t * z * z + c,     0,
               0,                 0,                 0,                 1}};
    /* clang-format on */
    return r;
}

/* Right-handed perspective into D3D clip space: view-space z = -near maps
 * to depth 0, z = -far to depth 1. fovy in radians. */
static inline mat4 mat4_perspective(float fovy, float aspect, float near_z, float far_z)
{
    float ys = 1.0f / tanf(fovy * 0.5f), xs = ys / aspect;
    float a = far_z / (near_z - far_z), b = near_z * far_z / (near_z - far_z);
    /* clang-format off */
    mat4 r = {{xs, 0,  0,  0,
               0,  ys, 0,  0,
               0,  0,  a,  b,
               0,  0,  -1, 0}};
    /* clang-format on */
    return r;
}

/* Right-handed view matrix: the eye at `eye` looking at `at`. */
static inline mat4 mat4_look_at(vec3 eye, vec3 at, vec3 up)
{
    vec3 zaxis = v3_normalize(v3_sub(eye, at)); /* points backwards */
    vec3 xaxis = v3_normalize(v3_cross(up, zaxis));
    vec3 yaxis = v3_cross(zaxis, xaxis);
    /* clang-format off */
    mat4 r = {{xaxis.x, xaxis.y, xaxis.z, -v3_dot(xaxis, eye),
               yaxis.x, yaxis.y, yaxis.z, -v3_dot(yaxis, eye),
               zaxis.x, zaxis.y, zaxis.z, -v3_dot(zaxis, eye),
               0,       0,       0,       1}};
    /* clang-format on */
    return r;
}

#endif
