/* kiln.h must compile on its own: it is the first and only include here,
 * and it is included twice to prove the include guard. Built as strict C by
 * tests/header.cmake (-Wall -Wextra -pedantic -Werror). */
/* clang-format off */
#include <kiln.h>
#include <kiln.h>
/* clang-format on */

/* Touch the declarations a user touches first, so a broken typedef, enum or
 * inline function is an error rather than dead text. */
int kiln_header_check(void);

int kiln_header_check(void)
{
    kiln_device_desc desc = {0};
    kiln_texture t = {0};
    kiln_resource r = kiln_texture_resource(t);
    kiln_buffer b = {0};
    kiln_resource rb = kiln_buffer_resource(b);
    kiln_result (*create)(const kiln_device_desc *, kiln_device **) = kiln_device_create;
    int ids = KILN_LOG_ID_COUNT;
    (void)create;
    return (int)desc.backend + (int)r.id + (int)rb.id + ids + KILN_VERSION_MAJOR +
           (int)KILN_FORMAT_COUNT + (int)KILN_MAP_WRITE_NO_OVERWRITE;
}
