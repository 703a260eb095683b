/* daemon memtrim: see memtrim.h. */
#define _GNU_SOURCE /* mallinfo2, malloc_trim */
#include "memtrim.h"

#include "base.h"

#include <string.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define DMN__HAVE_TRIM 1
#else
#define DMN__HAVE_TRIM 0
#endif

static void dmn__trim_look(dmn_memtrim *m) {
    m->last_ms = uv_now(m->check.loop);
#if DMN__HAVE_TRIM
    size_t free_now = mallinfo2().fordblks;
    if (free_now < m->low)
        m->low = free_now;
    if (free_now - m->low < DMN_MEMTRIM_MIN_BYTES)
        return;
    uint64_t t0 = base_now_ns();
    malloc_trim(0);
    uint64_t ns = base_now_ns() - t0;
    m->trims++;
    if (ns > m->trim_ns_max)
        m->trim_ns_max = ns;
    BASE_LOGD("dmn", "heap: %zu MiB free (%zu MiB more than at the low point): trimmed in %.1f ms",
              free_now >> 20, (free_now - m->low) >> 20, (double)ns / 1e6);
    /* Free chunks stay free (only their pages went): the next trim waits
     * for this much more to be freed again. */
    m->low = free_now;
#endif
}

static void dmn__trim_on_timer(uv_timer_t *t) {
    dmn_memtrim *m = t->data;
    m->armed = false;
    m->ticked = true; /* the check of this same iteration must not re-arm */
    dmn__trim_look(m);
}

/* After every loop iteration's callbacks. */
static void dmn__trim_on_check(uv_check_t *c) {
    dmn_memtrim *m = c->data;
    if (m->ticked) {
        m->ticked = false;
        return;
    }
    uint64_t now = uv_now(c->loop);
    uint64_t since = now - m->last_ms;
    if (since >= DMN_MEMTRIM_GAP_MS) {
        dmn__trim_look(m);
    } else if (!m->armed) {
        m->armed = true;
        uv_timer_start(&m->timer, dmn__trim_on_timer, DMN_MEMTRIM_GAP_MS - since, 0);
    }
}

void dmn_memtrim_start(dmn_memtrim *m, uv_loop_t *loop) {
    memset(m, 0, sizeof *m);
    m->low = SIZE_MAX;
    if (uv_check_init(loop, &m->check) != 0)
        return;
    if (uv_timer_init(loop, &m->timer) != 0) {
        uv_close((uv_handle_t *)&m->check, NULL);
        return;
    }
    m->check.data = m->timer.data = m;
    uv_check_start(&m->check, dmn__trim_on_check);
    /* Neither handle keeps the loop running: they only follow other work. */
    uv_unref((uv_handle_t *)&m->check);
    uv_unref((uv_handle_t *)&m->timer);
    m->last_ms = uv_now(loop);
    m->started = true;
}

void dmn_memtrim_look(dmn_memtrim *m) {
    if (m && m->started)
        dmn__trim_look(m);
}

void dmn_memtrim_stop(dmn_memtrim *m) {
    if (!m || !m->started)
        return;
    m->started = false;
    if (!uv_is_closing((uv_handle_t *)&m->check))
        uv_close((uv_handle_t *)&m->check, NULL);
    if (!uv_is_closing((uv_handle_t *)&m->timer))
        uv_close((uv_handle_t *)&m->timer, NULL);
}
