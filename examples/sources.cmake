# The demo core and the scenes, shared by kiln_demo (examples/CMakeLists.txt)
# and the golden-image test (tests/golden.cmake). Plain C11 and libm over
# the public API (kiln.h) only.
set(KILN_DEMO_DIR ${CMAKE_CURRENT_LIST_DIR})
set(KILN_DEMO_SCENE_SOURCES
  ${KILN_DEMO_DIR}/demo.c
  ${KILN_DEMO_DIR}/scenes.c
  ${KILN_DEMO_DIR}/scenes_draw.c
  ${KILN_DEMO_DIR}/scenes_stream.c
  ${KILN_DEMO_DIR}/scenes_occlusion.c
  ${KILN_DEMO_DIR}/scenes_so.c
  ${KILN_DEMO_DIR}/scenes_sprites.c
  ${KILN_DEMO_DIR}/scenes_skybox.c
  ${KILN_DEMO_DIR}/scenes_srgb.c
  ${KILN_DEMO_DIR}/scenes_msaa.c
  ${KILN_DEMO_DIR}/scenes_shadow.c)
