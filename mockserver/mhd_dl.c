/*
 * mhd_dl.c - libmicrohttpd loaded at its first use, not at every start.
 *
 * As util/curl_dl.c does for libcurl: libmicrohttpd.so.12 brings GnuTLS and
 * its libraries, about 1 ms of CPU at every start of fusebox, also for the
 * commands that never start a mock. The functions of libmicrohttpd the mock
 * calls are defined here under their own names; the first call loads the
 * library with dlopen and looks all of them up at once (pthread_once), and
 * the link's --as-needed then drops -lmicrohttpd from the binary's needed
 * libraries. MHD_start_daemon passes its options on through
 * MHD_start_daemon_va. MHD_get_connection_info and MHD_get_daemon_info take
 * no argument after the info type for the types the mock asks
 * (libmicrohttpd reads none: the `...` is for later types).
 *
 * If the library cannot be loaded, MHD_start_daemon answers NULL (the mock
 * reports that it could not start), the constructors NULL, the others
 * MHD_NO, NULL or nothing.
 */
#include <dlfcn.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>

#define MHD_FUNCTIONS(X)                                                                           \
    X(MHD_start_daemon_va)                                                                         \
    X(MHD_stop_daemon)                                                                             \
    X(MHD_get_daemon_info)                                                                         \
    X(MHD_get_connection_info)                                                                     \
    X(MHD_get_connection_values)                                                                   \
    X(MHD_lookup_connection_value)                                                                 \
    X(MHD_suspend_connection)                                                                      \
    X(MHD_resume_connection)                                                                       \
    X(MHD_create_response_from_buffer)                                                             \
    X(MHD_create_response_from_callback)                                                           \
    X(MHD_add_response_header)                                                                     \
    X(MHD_queue_response)                                                                          \
    X(MHD_destroy_response)

static struct {
#define FIELD(name) __typeof__(name) *name;
    MHD_FUNCTIONS(FIELD)
#undef FIELD
    int ok;
} L;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *h = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) return;
    int ok = 1;
#define LOOKUP(name)                                                                               \
    *(void **)&L.name = dlsym(h, #name);                                                           \
    if (L.name == NULL) ok = 0;
    MHD_FUNCTIONS(LOOKUP)
#undef LOOKUP
    L.ok = ok;
}

/* True once libmicrohttpd is loaded with every function above. */
static int loaded(void) {
    pthread_once(&once, load);
    return L.ok;
}

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls,
                                    ...) {
    if (!loaded()) return NULL;
    va_list ap;
    va_start(ap, dh_cls);
    struct MHD_Daemon *d = L.MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
    va_end(ap);
    return d;
}

void MHD_stop_daemon(struct MHD_Daemon *daemon) {
    if (loaded()) L.MHD_stop_daemon(daemon);
}

const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *daemon,
                                                enum MHD_DaemonInfoType info_type, ...) {
    return loaded() ? L.MHD_get_daemon_info(daemon, info_type) : NULL;
}

const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
                                                        enum MHD_ConnectionInfoType info_type,
                                                        ...) {
    return loaded() ? L.MHD_get_connection_info(connection, info_type) : NULL;
}

int MHD_get_connection_values(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                              MHD_KeyValueIterator iterator, void *iterator_cls) {
    return loaded() ? L.MHD_get_connection_values(connection, kind, iterator, iterator_cls) : -1;
}

const char *MHD_lookup_connection_value(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                        const char *key) {
    return loaded() ? L.MHD_lookup_connection_value(connection, kind, key) : NULL;
}

void MHD_suspend_connection(struct MHD_Connection *connection) {
    if (loaded()) L.MHD_suspend_connection(connection);
}

void MHD_resume_connection(struct MHD_Connection *connection) {
    if (loaded()) L.MHD_resume_connection(connection);
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                     enum MHD_ResponseMemoryMode mode) {
    return loaded() ? L.MHD_create_response_from_buffer(size, buffer, mode) : NULL;
}

struct MHD_Response *MHD_create_response_from_callback(uint64_t size, size_t block_size,
                                                       MHD_ContentReaderCallback crc, void *crc_cls,
                                                       MHD_ContentReaderFreeCallback crfc) {
    return loaded() ? L.MHD_create_response_from_callback(size, block_size, crc, crc_cls, crfc)
                    : NULL;
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header,
                                        const char *content) {
    return loaded() ? L.MHD_add_response_header(response, header, content) : MHD_NO;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response) {
    return loaded() ? L.MHD_queue_response(connection, status_code, response) : MHD_NO;
}

void MHD_destroy_response(struct MHD_Response *response) {
    if (loaded()) L.MHD_destroy_response(response);
}
