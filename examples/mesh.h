/*
 * mesh.h - the unit cube the draw scenes share: 24 vertices (4 per face, so
 * each face has its own normal and texture coordinates) and 36 indices.
 *
 * Faces are counter-clockwise as seen from outside (see mat4.h). Texture
 * coordinates run left to right and top to bottom as the face is seen from
 * outside with the cube upright (the +y and -y faces as seen from +z).
 */
#ifndef KILN_DEMO_MESH_H
#define KILN_DEMO_MESH_H

#include <stdint.h>

#define DEMO_CUBE_VERTICES 24
#define DEMO_CUBE_INDICES 36

typedef struct demo_cube_vertex {
    float pos[3]; /* corners at +-1 */
    float normal[3];
    float uv[2];
    uint32_t face; /* 0..5: +x, -x, +y, -y, +z, -z */
} demo_cube_vertex;

static inline void demo_cube_mesh(demo_cube_vertex v[DEMO_CUBE_VERTICES],
                                  uint16_t idx[DEMO_CUBE_INDICES])
{
    /* normal, right and up as seen from outside: right x up = normal */
    static const float faces[6][3][3] = {
        {{1, 0, 0}, {0, 0, -1}, {0, 1, 0}}, {{-1, 0, 0}, {0, 0, 1}, {0, 1, 0}},
        {{0, 1, 0}, {1, 0, 0}, {0, 0, -1}}, {{0, -1, 0}, {1, 0, 0}, {0, 0, 1}},
        {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}},  {{0, 0, -1}, {-1, 0, 0}, {0, 1, 0}},
    };
    static const float corner[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
    for (uint32_t f = 0; f < 6; f++) {
        const float *n = faces[f][0], *r = faces[f][1], *u = faces[f][2];
        for (uint32_t k = 0; k < 4; k++) {
            demo_cube_vertex *o = &v[f * 4 + k];
            float sr = corner[k][0], su = corner[k][1];
            for (int c = 0; c < 3; c++) {
                o->pos[c] = n[c] + sr * r[c] + su * u[c];
                o->normal[c] = n[c];
            }
            o->uv[0] = (sr + 1.0f) * 0.5f;
            o->uv[1] = (1.0f - su) * 0.5f;
            o->face = f;
        }
        static const uint16_t quad[6] = {0, 1, 2, 0, 2, 3};
        for (uint32_t k = 0; k < 6; k++)
            idx[f * 6 + k] = (uint16_t)(f * 4 + quad[k]);
    }
}

#endif
