/* curl_lazy.c - the six libcurl functions cfitsio calls, for a cfitsio linked from its static
 * archive (meson.build): each loads libcurl the first time one is called, which only an https://
 * or ftps:// input does. cfitsio's shared library needs libcurl, and through it TLS, Kerberos,
 * LDAP and SSH, some 25 libraries that every program would load and relocate at start-up, and
 * whose symbols an OpenCL driver loaded afterwards (PoCL's LLVM) searches through for each of its
 * own relocations (bench/RESULTS.md, "issue 20f"). Without libcurl an https input fails as
 * cfitsio words a failed download. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>

typedef void CURL;
typedef int CURLcode;
enum { CURLE_FAILED_INIT = 2 };
/* curl_easy_setopt's options by the type of their value (curl.h's CURLOPTTYPE_*). */
enum { OPT_OBJECT = 10000, OPT_FUNCTION = 20000, OPT_OFF_T = 30000, OPT_BLOB = 40000 };

static struct {
    CURLcode (*global_init)(long flags);
    void (*global_cleanup)(void);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *curl, int option, ...);
    CURLcode (*easy_perform)(CURL *curl);
    void (*easy_cleanup)(CURL *curl);
} curl;
static int loaded; /* 1: every function found */

static void load(void)
{
    static const char *const names[] = {"libcurl-gnutls.so.4", "libcurl.so.4"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    *(void **)&curl.global_init = dlsym(lib, "curl_global_init");
    *(void **)&curl.global_cleanup = dlsym(lib, "curl_global_cleanup");
    *(void **)&curl.easy_init = dlsym(lib, "curl_easy_init");
    *(void **)&curl.easy_setopt = dlsym(lib, "curl_easy_setopt");
    *(void **)&curl.easy_perform = dlsym(lib, "curl_easy_perform");
    *(void **)&curl.easy_cleanup = dlsym(lib, "curl_easy_cleanup");
    loaded = curl.global_init && curl.global_cleanup && curl.easy_init && curl.easy_setopt &&
             curl.easy_perform && curl.easy_cleanup;
}

static int have_curl(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load);
    return loaded;
}

CURLcode curl_global_init(long flags);
void curl_global_cleanup(void);
CURL *curl_easy_init(void);
CURLcode curl_easy_setopt(CURL *handle, int option, ...);
CURLcode curl_easy_perform(CURL *handle);
void curl_easy_cleanup(CURL *handle);

CURLcode curl_global_init(long flags)
{
    return have_curl() ? curl.global_init(flags) : CURLE_FAILED_INIT;
}

void curl_global_cleanup(void)
{
    if (have_curl()) curl.global_cleanup();
}

CURL *curl_easy_init(void)
{
    return have_curl() ? curl.easy_init() : NULL;
}

/* The one value after the option, passed on with the type the option takes. */
CURLcode curl_easy_setopt(CURL *handle, int option, ...)
{
    if (!have_curl()) return CURLE_FAILED_INIT;
    va_list ap;
    va_start(ap, option);
    CURLcode rc;
    if (option < OPT_OBJECT) {
        const long v = va_arg(ap, long);
        rc = curl.easy_setopt(handle, option, v);
    } else if (option >= OPT_OFF_T && option < OPT_BLOB) {
        const long long v = va_arg(ap, long long);
        rc = curl.easy_setopt(handle, option, v);
    } else {
        void *const v = va_arg(ap, void *); /* data, strings, lists, callbacks, blobs */
        rc = curl.easy_setopt(handle, option, v);
    }
    va_end(ap);
    return rc;
}

CURLcode curl_easy_perform(CURL *handle)
{
    return have_curl() ? curl.easy_perform(handle) : CURLE_FAILED_INIT;
}

void curl_easy_cleanup(CURL *handle)
{
    if (have_curl()) curl.easy_cleanup(handle);
}
