/*
 * scenes_shadow.h - what the "shadow" scene (scenes_shadow.c) shares with
 * its exact-value test (tests/test_shadow.c): the light, the camera, the
 * objects' placement and their lit and shadowed colors.
 */
#ifndef KILN_DEMO_SCENES_SHADOW_H
#define KILN_DEMO_SCENES_SHADOW_H

#include "mat4.h"

#include <stdint.h>

/* The light's position and view-projection (a 55-degree spot). */
void demo_shadow_light(vec3 *eye, mat4 *view_proj);
/* The camera: where it is, what it looks at (y up), its vertical field
 * of view in degrees; its view-projection for a w x h canvas. */
#define DEMO_SHADOW_FOVY_DEG 45.0f
void demo_shadow_eye(vec3 *eye, vec3 *at);
mat4 demo_shadow_camera(uint32_t w, uint32_t h);
/* Object k's world matrix at frame f: 0 the ground slab (a unit cube
 * scaled), 1..3 cubes. */
mat4 demo_shadow_world(int object, uint32_t frame);
/* What the pixel shader writes for object k where fully lit and where
 * fully shadowed (rgba). */
void demo_shadow_colors(int object, float lit[4], float shadowed[4]);

#endif
