#include "base.h"

const char *base_status_str(base_status st) {
    switch (st) {
#define BASE__STATUS_STR(name, value, msg)                                                         \
    case BASE_##name:                                                                              \
        return msg;
        BASE_STATUS_MAP(BASE__STATUS_STR)
#undef BASE__STATUS_STR
    }
    return "unknown status";
}

const char *base_status_name(base_status st) {
    switch (st) {
#define BASE__STATUS_NAME(name, value, msg)                                                        \
    case BASE_##name:                                                                              \
        return #name;
        BASE_STATUS_MAP(BASE__STATUS_NAME)
#undef BASE__STATUS_NAME
    }
    return "UNKNOWN";
}
