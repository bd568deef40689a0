/* abi_mismatch.c - a backend plugin from the future: the loader must
 * reject it with a message naming the file and the ABI version. */
#include "backends/backend.h"

static const udnn_backend future = {
    .abi_version = 999u,
    .struct_size = sizeof(udnn_backend),
    .name = "cuda",
};

__attribute__((visibility("default"))) const udnn_backend *
udnn_backend_entry(const udnn_host_api *host)
{
    (void)host;
    return &future;
}
