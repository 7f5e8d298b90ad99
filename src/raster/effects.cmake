# Compile options of the built-in effects (src/raster/effects*.c), included
# from the top-level CMakeLists.txt after KILN_SOURCES is globbed.
#
# - No floating-point contraction in any of them: every SIMD level must give
#   the bit-identical result of the scalar reference, and a fused
#   multiply-add rounds once where the others round twice.
# - effects_avx2.c, fused_avx2.c, pixel_avx2.c and setup_avx2.c alone are
#   compiled for AVX2 + FMA, fused_avx512.c, pixel_avx512.c and
#   setup_avx512.c for AVX-512 F/BW/VL/DQ as well; effects.c, sample.c,
#   tile.c and geom.c run them only on CPUs that have these. On other
#   targets the files compile to nothing.

set(KILN_EFFECTS_DIR ${CMAKE_CURRENT_LIST_DIR})

# geom.c too: an unclipped triangle's screen mapping (to_screen3, SSE lanes)
# must give the bits of the scalar one (to_screen) under any compiler and
# CFLAGS (clang contracts by default where FMA is available); and log2.c,
# whose portable and four-lane logarithms must agree the same way, its
# special values tested as written (no fast-math); and sample.c and
# resources/bc.c, whose coordinates and BC palettes the BC kernels
# (fused_avx2.c, fused_avx512.c) compute again, bit for bit.
set_source_files_properties(
  ${KILN_EFFECTS_DIR}/effects.c
  ${KILN_EFFECTS_DIR}/effects_sse2.c
  ${KILN_EFFECTS_DIR}/geom.c
  ${KILN_EFFECTS_DIR}/sample.c
  ${KILN_EFFECTS_DIR}/../resources/bc.c
  PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
set_source_files_properties(${KILN_EFFECTS_DIR}/log2.c
  PROPERTIES COMPILE_OPTIONS "-fno-fast-math;-ffp-contract=off")

if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|i[3-6]86|x86)$")
  set_source_files_properties(${KILN_EFFECTS_DIR}/effects_avx2.c
    ${KILN_EFFECTS_DIR}/fused_avx2.c
    ${KILN_EFFECTS_DIR}/pixel_avx2.c
    ${KILN_EFFECTS_DIR}/setup_avx2.c
    PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-ffp-contract=off")
  set_source_files_properties(${KILN_EFFECTS_DIR}/fused_avx512.c
    ${KILN_EFFECTS_DIR}/pixel_avx512.c
    ${KILN_EFFECTS_DIR}/setup_avx512.c
    PROPERTIES COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx2;-mfma;-ffp-contract=off")
else()
  set_source_files_properties(${KILN_EFFECTS_DIR}/effects_avx2.c
    ${KILN_EFFECTS_DIR}/fused_avx2.c
    ${KILN_EFFECTS_DIR}/pixel_avx2.c
    ${KILN_EFFECTS_DIR}/fused_avx512.c
    ${KILN_EFFECTS_DIR}/pixel_avx512.c
    ${KILN_EFFECTS_DIR}/setup_avx2.c
    ${KILN_EFFECTS_DIR}/setup_avx512.c
    PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
endif()
