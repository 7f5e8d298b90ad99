// kiln.h must compile on its own as C++ (extern "C", no C-only syntax in
// declarations or inline functions). Built by tests/header.cmake with
// -Wall -Wextra -pedantic -Werror for each C++ standard it lists.
// clang-format off
#include <kiln.h>
#include <kiln.h>
// clang-format on

int kiln_header_check_cxx();

int kiln_header_check_cxx()
{
    kiln_device_desc desc = kiln_device_desc();
    kiln_texture t = {0};
    kiln_resource r = kiln_texture_resource(t);
    kiln_buffer b = {0};
    kiln_resource rb = kiln_buffer_resource(b);
    kiln_result (*create)(const kiln_device_desc *, kiln_device **) = kiln_device_create;
    kiln_log_fn log = kiln_log_stderr;
    int ids = KILN_LOG_ID_COUNT;
    (void)create;
    (void)log;
    return static_cast<int>(desc.backend) + static_cast<int>(r.id) + static_cast<int>(rb.id) + ids +
           KILN_VERSION_MAJOR + static_cast<int>(KILN_FORMAT_COUNT) +
           static_cast<int>(KILN_MAP_WRITE_NO_OVERWRITE);
}
