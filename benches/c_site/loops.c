/*
 * The loops of scripts/c-site-bench.sh, compiled three times: into the
 * executable (local-exec TLS), as a -fPIC shared library loaded with dlopen
 * (general-dynamic), and as one built with PVAR_TLS_MODEL "initial-exec"
 * (what a library loaded at startup, e.g. libmpi.so, may choose). Each
 * build's loops use thread-locals of that build's model, so every ratio is
 * against a thread-local add of the same model in the same object.
 *
 * Every loop has the same shape: its update, then a compiler barrier
 * (other code in a real loop touches memory, so the macro's cache and the
 * handle are read again each time, and the plain add is not folded into
 * one `+= n`). scripts/c-site-bench.sh prints each loop's instructions.
 */
#include <pvar.h>

#ifndef PFX
#define PFX exe
#endif
#define CAT2_(a, b) a##_##b
#define CAT_(a, b) CAT2_(a, b)

#if defined(PVAR_TLS_MODEL)
#define FLOOR_TLS_ static PVAR_THREAD_LOCAL_ __attribute__((tls_model(PVAR_TLS_MODEL)))
#else
#define FLOOR_TLS_ static PVAR_THREAD_LOCAL_
#endif

static pvar_var var_; /* the component's handle, a static as in a component */
FLOOR_TLS_ uint64_t plain_;

void CAT_(PFX, set)(pvar_var v) { var_ = v; }
uint64_t CAT_(PFX, plain_total)(void) { return plain_; }

/* The floor: a thread-local `+= 1` of this object's TLS model. */
void CAT_(PFX, plain)(uint64_t n) {
    for (uint64_t k = 0; k < n; k++) {
        plain_ += 1;
        __asm__ volatile("" ::: "memory");
    }
}

/* PVAR_COUNTER_INC: one call site, its pvar_use_site cache. */
void CAT_(PFX, macro)(uint64_t n) {
    for (uint64_t k = 0; k < n; k++) {
        PVAR_COUNTER_INC(var_);
        __asm__ volatile("" ::: "memory");
    }
}

/* The older cache (pvar_site and its check, what the macros did before
 * pvar_use_site and what code keeping its own pvar_site still does). */
void CAT_(PFX, site_v2)(uint64_t n) {
    for (uint64_t k = 0; k < n; k++) {
        FLOOR_TLS_ pvar_site c;
        pvar_var v = var_;
        uint64_t *p = pvar_site_cell(&c, v, 0, PVAR_SITE_INT);
        if (p)
            pvar_local_add(p, 1);
        else
            pvar_add_at(v, 0, 1);
        __asm__ volatile("" ::: "memory");
    }
}
