/* A weight file truncated while it is mapped: the next reads of its lost
 * pages raise SIGBUS on whichever thread reads them (here the CPU pool's).
 * engine/format/mapguard.c must turn that into zeros and a fault count: the
 * forward pass returns, eng_model_files_damaged names the file, and the
 * process lives on. Also: a replaced (renamed-over) file is not damage. */
#include "tmodel.h"

#include "check.h"
#include "engine.h"

#include <fcntl.h>

static void forward_once(eng_model *m, const char *what) {
    eng_error err = {0};
    eng_ctx *c = eng_ctx_new(m, 1, 16, &err);
    CHECK(c != NULL);
    if (!c)
        return;
    int32_t tok[16];
    for (int i = 0; i < 16; i++)
        tok[i] = (int32_t)(i * 7 % 290);
    eng_batch b = {1, 16, tok, NULL};
    int32_t rows[1] = {3};
    float *logits = malloc(sizeof(float) * (size_t)eng_model_get_info(m)->vocab_size);
    base_status st = eng_forward(c, &b, rows, 1, logits);
    fprintf(stderr, "%s: forward %s\n", what, base_status_str(st));
    free(logits);
    eng_ctx_free(c);
}

int main(void) {
    if (!tm_have_tokenizer()) {
        fprintf(stderr, "skipped: no Qwen tokenizer.json (run ./bootstrap.sh)\n");
        return 77;
    }
    char *root = tm_tmpdir();
    if (!root)
        return 1;
    base_log_set_level(BASE_LOG_WARN);
    char dir[4096], st_path[4200], tmp[4200];
    snprintf(dir, sizeof dir, "%s/m", root);
    tm_spec s = tm_default(TM_DREAM);
    s.d = 256; /* weights over many pages, so that the truncation cuts real data */
    s.ff = 512;
    CHECK_EQ_I(tm_write(dir, &s), 0);
    snprintf(st_path, sizeof st_path, "%s/model.safetensors", dir);
    eng_load_opts o;
    eng_load_opts_default(&o);
    o.device = ENG_DEVICE_CPU;
    eng_error err = {0};

    /* Truncated in place: SIGBUS is absorbed, the damage reported. */
    eng_model *m = eng_model_load(dir, &o, &err);
    CHECK(m != NULL);
    if (m) {
        forward_once(m, "intact");
        CHECK(eng_model_files_damaged(m) == NULL);
        CHECK_EQ_I(truncate(st_path, 4096), 0);
        forward_once(m, "truncated"); /* would die of SIGBUS without the guard */
        const char *bad = eng_model_files_damaged(m);
        CHECK(bad != NULL && strstr(bad, "model.safetensors") != NULL);
        eng_model_free(m);
    }

    /* Replaced by a rename (how downloads land): the old file stays mapped
     * and intact; deleting the directory likewise. */
    CHECK_EQ_I(tm_write(dir, &s), 0);
    m = eng_model_load(dir, &o, &err);
    CHECK(m != NULL);
    if (m) {
        snprintf(tmp, sizeof tmp, "%s/new.safetensors", dir);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        CHECK(fd >= 0 && write(fd, "x", 1) == 1);
        if (fd >= 0)
            close(fd);
        CHECK_EQ_I(rename(tmp, st_path), 0);
        forward_once(m, "replaced");
        CHECK(eng_model_files_damaged(m) == NULL);
        tm_rmrf(dir);
        forward_once(m, "deleted");
        CHECK(eng_model_files_damaged(m) == NULL);
        eng_model_free(m);
    }
    tm_rmrf(root);
    free(root);
    return check_finish("test_mapguard");
}
