/* Which backends this library was built with. */
#include "driver.h"

const kq_backend *kd_backend_find(kiln_backend which, const char **why)
{
    *why = NULL;
    switch (which) {
    case KILN_BACKEND_DEFAULT:
    case KILN_BACKEND_SOFT:
        return &kr_soft_backend;
    case KILN_BACKEND_OSMESA:
#if KILN_HAVE_GL
        return &kg_osmesa_backend;
#else
        *why = "the osmesa backend is not built into this library: install libosmesa6-dev "
               "(or libegl-dev) and rebuild";
        return NULL;
#endif
    }
    *why = "not a kiln_backend";
    return NULL;
}
