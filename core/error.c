/* error.c - text for the error codes of FB_ERRNO_MAP. */
#include "fb.h"

const char *fb_strerror(int err) {
    switch (err) {
    case FB_OK:
        return "ok";
#define FB_ERR_TEXT(name, code, text)                                                              \
    case FB_E##name:                                                                               \
        return text;
        FB_ERRNO_MAP(FB_ERR_TEXT)
#undef FB_ERR_TEXT
    default:
        return "unknown error";
    }
}

const char *fb_err_name(int err) {
    switch (err) {
    case FB_OK:
        return "FB_OK";
#define FB_ERR_NAME(name, code, text)                                                              \
    case FB_E##name:                                                                               \
        return "FB_E" #name;
        FB_ERRNO_MAP(FB_ERR_NAME)
#undef FB_ERR_NAME
    default:
        return "FB_E?";
    }
}
