# -max_len per harness, sourced by run.sh (CI) and deep.sh (by hand): what
# its interesting inputs need, no more (a longer limit lets libFuzzer grow
# inputs that only cost time). fuzz_lsp's server has a 4 KiB message limit,
# fuzz_remote's source a 3,000-byte body limit; tokenizer.json / GGUF /
# safetensors files need room (default_maxlen).
declare -A maxlen=(
  [fuzz_lsp]=16384
  [fuzz_remote]=4096
  [fuzz_syntax_edits]=2048
  [fuzz_tokenizer]=4096
  [fuzz_tokenizer_gemma]=4096
)
default_maxlen=65536
