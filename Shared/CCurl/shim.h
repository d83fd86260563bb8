#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>
#include <dlfcn.h>
#include <stddef.h>

// libcurl is loaded when a process first calls a provider, not at start: most services
// never call one, and libcurl brings about thirty libraries with it (GnuTLS, Kerberos,
// LDAP, SSH, ...: about 4 MiB resident in every process that links it). Only Platform's
// `Curl` uses these functions; it calls `backend_curl_load` once before any other.

typedef struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *curl);
    CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
    CURLcode (*easy_perform)(CURL *curl);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *value);
    void (*slist_free_all)(struct curl_slist *list);
} backend_curl_api;

// The functions, found once (a static inside a function: Swift emits it with the function).
static inline backend_curl_api *backend_curl_api_storage(void) {
    static backend_curl_api functions;
    return &functions;
}
#define backend_curl_functions (*backend_curl_api_storage())

// Loads libcurl and initialises it: NULL when it worked, else what went wrong. Not
// thread-safe: the caller makes sure it runs once, before anything below.
static inline const char *backend_curl_load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *error = dlerror();
        return error != NULL ? error : "libcurl.so.4 cannot be loaded";
    }
#define BACKEND_CURL_SYMBOL(field, name)                                  \
    *(void **)(&backend_curl_functions.field) = dlsym(library, name);   \
    if (backend_curl_functions.field == NULL) return "libcurl.so.4 lacks " name;
    BACKEND_CURL_SYMBOL(global_init, "curl_global_init")
    BACKEND_CURL_SYMBOL(easy_init, "curl_easy_init")
    BACKEND_CURL_SYMBOL(easy_cleanup, "curl_easy_cleanup")
    BACKEND_CURL_SYMBOL(easy_setopt, "curl_easy_setopt")
    BACKEND_CURL_SYMBOL(easy_getinfo, "curl_easy_getinfo")
    BACKEND_CURL_SYMBOL(easy_perform, "curl_easy_perform")
    BACKEND_CURL_SYMBOL(easy_strerror, "curl_easy_strerror")
    BACKEND_CURL_SYMBOL(slist_append, "curl_slist_append")
    BACKEND_CURL_SYMBOL(slist_free_all, "curl_slist_free_all")
#undef BACKEND_CURL_SYMBOL
    if (backend_curl_functions.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return "curl_global_init failed";
    return NULL;
}

static inline CURL *backend_curl_easy_init(void) { return backend_curl_functions.easy_init(); }
static inline void backend_curl_easy_cleanup(CURL *curl) { backend_curl_functions.easy_cleanup(curl); }
static inline CURLcode backend_curl_easy_perform(CURL *curl) { return backend_curl_functions.easy_perform(curl); }
static inline const char *backend_curl_easy_strerror(CURLcode code) { return backend_curl_functions.easy_strerror(code); }
static inline struct curl_slist *backend_curl_slist_append(struct curl_slist *list, const char *value) {
    return backend_curl_functions.slist_append(list, value);
}
static inline void backend_curl_slist_free_all(struct curl_slist *list) { backend_curl_functions.slist_free_all(list); }

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call:
// these typed wrappers can be.
static inline CURLcode backend_curl_set_string(CURL *curl, CURLoption option, const char *value) {
    return backend_curl_functions.easy_setopt(curl, option, value);
}
static inline CURLcode backend_curl_set_long(CURL *curl, CURLoption option, long value) {
    return backend_curl_functions.easy_setopt(curl, option, value);
}
static inline CURLcode backend_curl_set_pointer(CURL *curl, CURLoption option, void *value) {
    return backend_curl_functions.easy_setopt(curl, option, value);
}
static inline CURLcode backend_curl_set_list(CURL *curl, CURLoption option, struct curl_slist *value) {
    return backend_curl_functions.easy_setopt(curl, option, value);
}
typedef size_t (*backend_curl_data_callback)(char *buffer, size_t size, size_t count, void *context);
static inline CURLcode backend_curl_set_callback(CURL *curl, CURLoption option, backend_curl_data_callback callback) {
    return backend_curl_functions.easy_setopt(curl, option, callback);
}
static inline CURLcode backend_curl_response_code(CURL *curl, long *code) {
    return backend_curl_functions.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, code);
}
#endif
