/*
 * curl_dl.c - libcurl loaded at its first use, not at every start.
 *
 * libcurl.so.4 brings some 30 libraries with it (TLS, LDAP, Kerberos, SSH,
 * IDN, ...); the dynamic loader mapping and relocating them took about 5 ms of
 * CPU at every start of fusebox, also for the commands that never open a
 * connection (run, check, sweep: measured in docs/performance.md). The
 * functions of libcurl that fusebox calls (live/, mockserver/proxy.c) are
 * defined here under their own names: the first call loads libcurl.so.4 with
 * dlopen and looks all of them up at once (pthread_once); each then passes
 * its arguments on. With these definitions nothing else asks for -lcurl, and
 * the link's --as-needed drops it from the binary's needed libraries (a test
 * program that calls one libcurl function more links libcurl as before; the
 * calls here reach the same loaded library).
 *
 * If libcurl.so.4 cannot be loaded, each function answers as libcurl does
 * when it fails: curl_global_init and the options CURLE_FAILED_INIT, the
 * constructors NULL, the others nothing.
 */
#define CURL_DISABLE_TYPECHECK /* the functions below are defined, not called */
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>

#define CURL_FUNCTIONS(X)                                                                          \
    X(curl_global_init)                                                                            \
    X(curl_global_cleanup)                                                                         \
    X(curl_easy_init)                                                                              \
    X(curl_easy_cleanup)                                                                           \
    X(curl_easy_reset)                                                                             \
    X(curl_easy_setopt)                                                                            \
    X(curl_easy_getinfo)                                                                           \
    X(curl_easy_perform)                                                                           \
    X(curl_easy_pause)                                                                             \
    X(curl_easy_strerror)                                                                          \
    X(curl_multi_init)                                                                             \
    X(curl_multi_cleanup)                                                                          \
    X(curl_multi_setopt)                                                                           \
    X(curl_multi_add_handle)                                                                       \
    X(curl_multi_remove_handle)                                                                    \
    X(curl_multi_assign)                                                                           \
    X(curl_multi_perform)                                                                          \
    X(curl_multi_poll)                                                                             \
    X(curl_multi_wakeup)                                                                           \
    X(curl_multi_info_read)                                                                        \
    X(curl_multi_socket_action)                                                                    \
    X(curl_slist_append)                                                                           \
    X(curl_slist_free_all)

static struct {
#define FIELD(name) __typeof__(name) *name;
    CURL_FUNCTIONS(FIELD)
#undef FIELD
    int ok;
} L;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) return;
    int ok = 1;
#define LOOKUP(name)                                                                               \
    *(void **)&L.name = dlsym(h, #name);                                                           \
    if (L.name == NULL) ok = 0;
    CURL_FUNCTIONS(LOOKUP)
#undef LOOKUP
    L.ok = ok;
}

/* True once libcurl is loaded with every function above. */
static int loaded(void) {
    pthread_once(&once, load);
    return L.ok;
}

CURLcode curl_global_init(long flags) {
    return loaded() ? L.curl_global_init(flags) : CURLE_FAILED_INIT;
}

void curl_global_cleanup(void) {
    if (loaded()) L.curl_global_cleanup();
}

CURL *curl_easy_init(void) {
    return loaded() ? L.curl_easy_init() : NULL;
}

void curl_easy_cleanup(CURL *curl) {
    if (loaded()) L.curl_easy_cleanup(curl);
}

void curl_easy_reset(CURL *curl) {
    if (loaded()) L.curl_easy_reset(curl);
}

/*
 * The option's number says the type of its one argument (curl.h: CURLOPTTYPE_*,
 * the same ranges for the multi handle's CURLMOPT_*): a long below 10000, an
 * object or function pointer below 30000, a curl_off_t below 40000, a blob's
 * pointer above.
 */
#define PASS_OPTION(fn, handle, option, ap)                                                        \
    ((option) < CURLOPTTYPE_OBJECTPOINT ? fn(handle, option, va_arg(ap, long))                     \
     : (option) < CURLOPTTYPE_OFF_T     ? fn(handle, option, va_arg(ap, void *))                   \
     : (option) < CURLOPTTYPE_BLOB      ? fn(handle, option, va_arg(ap, curl_off_t))               \
                                        : fn(handle, option, va_arg(ap, void *)))

CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...) {
    if (!loaded()) return CURLE_FAILED_INIT;
    va_list ap;
    va_start(ap, option);
    CURLcode rc = PASS_OPTION(L.curl_easy_setopt, curl, option, ap);
    va_end(ap);
    return rc;
}

/* Every CURLINFO_* takes one pointer to where the answer goes. */
CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...) {
    if (!loaded()) return CURLE_FAILED_INIT;
    va_list ap;
    va_start(ap, info);
    CURLcode rc = L.curl_easy_getinfo(curl, info, va_arg(ap, void *));
    va_end(ap);
    return rc;
}

CURLcode curl_easy_perform(CURL *curl) {
    return loaded() ? L.curl_easy_perform(curl) : CURLE_FAILED_INIT;
}

CURLcode curl_easy_pause(CURL *handle, int bitmask) {
    return loaded() ? L.curl_easy_pause(handle, bitmask) : CURLE_FAILED_INIT;
}

const char *curl_easy_strerror(CURLcode code) {
    return loaded() ? L.curl_easy_strerror(code) : "libcurl.so.4 could not be loaded";
}

CURLM *curl_multi_init(void) {
    return loaded() ? L.curl_multi_init() : NULL;
}

CURLMcode curl_multi_cleanup(CURLM *multi) {
    return loaded() ? L.curl_multi_cleanup(multi) : CURLM_BAD_HANDLE;
}

CURLMcode curl_multi_setopt(CURLM *multi, CURLMoption option, ...) {
    if (!loaded()) return CURLM_BAD_HANDLE;
    va_list ap;
    va_start(ap, option);
    CURLMcode rc = PASS_OPTION(L.curl_multi_setopt, multi, option, ap);
    va_end(ap);
    return rc;
}

CURLMcode curl_multi_add_handle(CURLM *multi, CURL *curl) {
    return loaded() ? L.curl_multi_add_handle(multi, curl) : CURLM_BAD_HANDLE;
}

CURLMcode curl_multi_remove_handle(CURLM *multi, CURL *curl) {
    return loaded() ? L.curl_multi_remove_handle(multi, curl) : CURLM_BAD_HANDLE;
}

CURLMcode curl_multi_assign(CURLM *multi, curl_socket_t sockfd, void *sockp) {
    return loaded() ? L.curl_multi_assign(multi, sockfd, sockp) : CURLM_BAD_HANDLE;
}

CURLMcode curl_multi_perform(CURLM *multi, int *running) {
    return loaded() ? L.curl_multi_perform(multi, running) : CURLM_BAD_HANDLE;
}

CURLMcode curl_multi_poll(CURLM *multi, struct curl_waitfd extra[], unsigned int n, int timeout_ms,
                          int *numfds) {
    return loaded() ? L.curl_multi_poll(multi, extra, n, timeout_ms, numfds) : CURLM_BAD_HANDLE;
}

CURLMcode curl_multi_wakeup(CURLM *multi) {
    return loaded() ? L.curl_multi_wakeup(multi) : CURLM_BAD_HANDLE;
}

CURLMsg *curl_multi_info_read(CURLM *multi, int *msgs_in_queue) {
    return loaded() ? L.curl_multi_info_read(multi, msgs_in_queue) : NULL;
}

CURLMcode curl_multi_socket_action(CURLM *multi, curl_socket_t s, int ev_bitmask,
                                   int *running_handles) {
    return loaded() ? L.curl_multi_socket_action(multi, s, ev_bitmask, running_handles)
                    : CURLM_BAD_HANDLE;
}

struct curl_slist *curl_slist_append(struct curl_slist *list, const char *data) {
    return loaded() ? L.curl_slist_append(list, data) : NULL;
}

void curl_slist_free_all(struct curl_slist *list) {
    if (loaded()) L.curl_slist_free_all(list);
}
