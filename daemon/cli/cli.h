/* daemon/cli: the subcommands of the infilld binary for people and scripts.
 * Each takes argv[0] = the subcommand name and returns a process exit code.
 *   tokenize  text <-> ids with a model's tokenizer (JSON lines; it reads them
 *             with the tokenizer's own JSON reader, so a lone surrogate maps
 *             exactly as it does inside tokenizer.json)
 *   logits    one forward pass, logits of chosen positions
 *   infill    one hole between a prefix and a suffix, every sampler knob
 *   complete  a completion at FILE:LINE:COL through the whole pipeline
 *   eval      completion quality over a task set, through the same pipeline
 *             (docs/QUALITY.md)
 *   serve-http  the local engine as an OpenAI-style /v1/fim/completions server
 *             (libmicrohttpd; docs/PROTOCOL.md "serve-http")
 *   convert   a safetensors model as a GGUF file (f32 ... q4_k_m) */
#ifndef INFILLD_DAEMON_CLI_H
#define INFILLD_DAEMON_CLI_H

int dmn_cli_tokenize(int argc, char **argv);
int dmn_cli_logits(int argc, char **argv);
int dmn_cli_infill(int argc, char **argv);
int dmn_cli_complete(int argc, char **argv);
int dmn_cli_eval(int argc, char **argv);
int dmn_cli_serve_http(int argc, char **argv);
int dmn_cli_convert(int argc, char **argv);

#endif
