/* infilld entry point: LSP server by default, subcommands for people and scripts. */
#include "base.h"
#include "clockjump.h"
#include "daemon.h"
#include "provider.h"

#if DMN_HAVE_CLI
#include "cli/cli.h"
#include "engine.h"
#endif
#if DMN_HAVE_GRAMMARS
#include "grammars.h"
#endif

#include <stdio.h>
#include <string.h>

static int dmn__usage(FILE *f) {
    fprintf(f, "usage: infilld [options]                 serve LSP on stdio\n"
               "       infilld --listen 127.0.0.1:PORT   serve LSP over TCP, one session per "
               "connection\n"
               "       infilld doctor [--model DIR] [--device D] [--config F]   build options, "
               "model, backend, grammars, a remote source's reachability\n"
               "       infilld complete FILE --line L --col C [--json] [--explain] [--seed S]\n"
               "       infilld eval --set NAME [--model DIR] [--json]   completion quality\n"
               "       infilld serve-http --listen HOST:PORT [--model DIR]   the engine as an "
               "OpenAI-style FIM server\n"
               "       infilld tokenize | logits | infill | convert ...   (see each --help)\n"
               "\n"
               "options:\n"
               "  --model DIR            checkpoint folder (config.json, safetensors, tokenizer)\n"
               "  --device auto|cpu|cuda where the model runs (default auto)\n"
               "  --log-file FILE        log there instead of stderr\n"
               "  --log-level LEVEL      trace|debug|info|warn|error|off (default info)\n"
               "  --config FILE          settings file (default "
               "$XDG_CONFIG_HOME/infilld/config.json)\n"
               "  --listen HOST:PORT     TCP instead of stdio (loopback only, unless:)\n"
               "  --stdio                with --listen: stdio as well, one process, one model\n"
               "  --allow-remote         permit a non-loopback address; needs --token-file\n"
               "  --token-file FILE      sessions must send this token in "
               "initializationOptions.token\n"
               "  --max-message BYTES    largest accepted message body (default 256 MiB)\n"
               "  --version, --help\n"
               "\n"
               "Precedence: command line > initializationOptions / didChangeConfiguration >\n"
               "config file > defaults. See docs/PROTOCOL.md.\n");
    return f == stderr ? 2 : 0;
}

/* argv[0] is "doctor"; the daemon's options (--model, --device, --config)
 * choose the model reported, as they would for serving. */
static int dmn__doctor(int argc, char **argv) {
    printf("infilld %s\n", INFILLD_VERSION);
#if DMN_HAVE_CLI
    printf("cpu: %s kernels%s\n", eng_cpu_kernels_name(),
           eng_cpu_amx() ? ", BF16 matmuls on AMX" : "");
    char cuda[512];
    eng_cuda_describe(cuda, sizeof cuda);
    printf("cuda: %s\n", cuda);
#endif
#if DMN_HAVE_GRAMMARS
    printf("grammars:");
    for (size_t i = 0; i < gr_language_count(); i++)
        printf(" %s", gr_language_name(i));
    printf("\n");
#endif
#if DMN_HAVE_PIPELINE
    printf("pipeline: infill provider\n");
#else
    printf("pipeline: none (completions answer empty)\n");
#endif
    dmn_config cfg;
    bool exit_now;
    char err[512];
    if (dmn_config_parse(&cfg, argc, argv, &exit_now, err, sizeof(err)) == BASE_OK) {
        printf("config file: %s\n", cfg.config_file ? cfg.config_file : "(none)");
        fflush(stdout);
        dmn_provider_doctor(cfg.settings, stdout);
    } else {
        printf("config: %s\n", err);
    }
    dmn_config_deinit(&cfg);
    return 0;
}

typedef struct dmn__subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
} dmn__subcommand;

static int dmn__doctor_cmd(int argc, char **argv) { return dmn__doctor(argc, argv); }

static const dmn__subcommand dmn__subcommands[] = {
    {"doctor", dmn__doctor_cmd},
#if DMN_HAVE_CLI
    {"tokenize", dmn_cli_tokenize}, {"logits", dmn_cli_logits}, {"complete", dmn_cli_complete},
    {"infill", dmn_cli_infill},     {"eval", dmn_cli_eval},     {"serve-http", dmn_cli_serve_http},
    {"convert", dmn_cli_convert},
#endif
};

int main(int argc, char **argv) {
    if (argc > 1 && argv[1][0] != '-') {
        for (size_t i = 0; i < BASE_ARRAY_LEN(dmn__subcommands); i++)
            if (strcmp(argv[1], dmn__subcommands[i].name) == 0)
                return dmn__subcommands[i].run(argc - 1, argv + 1);
        fprintf(stderr, "infilld: unknown subcommand '%s' (or not in this build)\n", argv[1]);
        return dmn__usage(stderr);
    }
    dmn_config cfg;
    bool exit_now = false;
    char err[512];
    base_status st = dmn_config_parse(&cfg, argc, argv, &exit_now, err, sizeof(err));
    if (st != BASE_OK) {
        fprintf(stderr, "infilld: %s\n", err[0] ? err : base_status_str(st));
        dmn_config_deinit(&cfg);
        return 2;
    }
    if (exit_now) {
        dmn_config_deinit(&cfg);
        for (int i = 1; i < argc; i++)
            if (strcmp(argv[i], "--version") == 0) {
                printf("infilld %s\n", INFILLD_VERSION);
                return 0;
            }
        return dmn__usage(stdout);
    }
    base_log_level lv = BASE_LOG_INFO;
    if (cfg.log_level)
        base_log_level_parse(cfg.log_level, &lv);
    base_log_set_level(lv);
    if (cfg.log_file && base_log_set_file(cfg.log_file) != BASE_OK) {
        fprintf(stderr, "infilld: cannot open log file %s\n", cfg.log_file);
        dmn_config_deinit(&cfg);
        return 2;
    }
    if (base_clock_jump_install()) /* tests only: see base/clockjump.c */
        BASE_LOGW("dmn", "INFILLD_TEST_CLOCK_JUMP_MS: SIGUSR2 moves the clock forward");
    int code = dmn_serve(&cfg);
    dmn_config_deinit(&cfg);
    base_log_close();
    return code;
}
