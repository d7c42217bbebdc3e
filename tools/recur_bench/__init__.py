"""recur-bench: compare recur's providers and peer runtimes on a model (tools/recur-bench)."""
