/* The declarations alone compile (no implementation, nothing to link). */
#include "atf.h"

int decl_only_marker(void);
int decl_only_marker(void) {
    atf_index_event ev;
    ev.kind = ATF_EVENT_CALL;
    return (int)ev.kind + (int)sizeof(atf_index_reader);
}
