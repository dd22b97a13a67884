SOURCE_FILES := $(shell find src crates -type f -name "*.rs" -o -type f -name Cargo.toml)
# Honour CARGO_TARGET_DIR, as cargo does.
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
WASM := $(TARGET_DIR)/wasm32-wasip1/release/kyverno_validate_policy.wasm
# Sample requests `make run` sends (settings:request, from test_data/).
SAMPLES := \
	settings/require-ns-purpose-label.yaml:requests/namespace-production.json \
	settings/require-ns-purpose-label.yaml:requests/namespace-development.json \
	settings/require-ns-purpose-label-audit.yaml:requests/namespace-development.json \
	settings/pod-images.yaml:requests/deployment-latest.json

.PHONY: setup
setup:
	rustup target add wasm32-wasip1

$(WASM): $(SOURCE_FILES) Cargo.toml Cargo.lock | setup
	cargo build --target=wasm32-wasip1 --release -p kyverno-validate-policy

policy.wasm: $(WASM)
	cp $(WASM) policy.wasm

# The version comes from metadata.yml's io.kubewarden.policy.version
# (tests/metadata.rs keeps it equal to Cargo.toml's).
artifacthub-pkg.yml: metadata.yml Cargo.toml
	@command -v kwctl >/dev/null || { echo "kwctl is not installed: see https://github.com/kubewarden/kwctl#installation"; exit 1; }
	kwctl scaffold artifacthub --metadata-path metadata.yml --output artifacthub-pkg.yml

annotated-policy.wasm: policy.wasm metadata.yml
	@command -v kwctl >/dev/null || { echo "kwctl is not installed: see https://github.com/kubewarden/kwctl#installation"; exit 1; }
	kwctl annotate -m metadata.yml -u README.md -o annotated-policy.wasm policy.wasm

.PHONY: fmt
fmt:
	cargo fmt --all -- --check

.PHONY: lint
lint:
	cargo clippy --workspace --all-targets -- -D warnings

# Unit tests, fixtures natively, and the fixtures through the built module
# in the wapc + wasmtime host that policy-server uses.
.PHONY: test
test: setup policy.wasm
	cargo test --workspace

# A fuzz campaign over validate and validate_settings (crates/fuzz):
# FUZZ_ITERATIONS mutated inputs; findings go to target/fuzz-findings/.
# The DER reader behind x509_decode and the readers of signed manifests
# (gzip, tar) have campaigns of their own.
# FUZZ_JOBS threads share the iterations, each with its own seed.
FUZZ_ITERATIONS ?= 10000000
FUZZ_X509_ITERATIONS ?= 10000000
FUZZ_MANIFESTS_ITERATIONS ?= 2000000
FUZZ_JOBS ?= 2
.PHONY: fuzz
fuzz:
	cargo run --profile fuzz -p kyverno-fuzz -- --x509 $(FUZZ_X509_ITERATIONS)
	cargo run --profile fuzz -p kyverno-fuzz -- --manifests $(FUZZ_MANIFESTS_ITERATIONS)
	cargo run --profile fuzz -p kyverno-fuzz -- --jobs $(FUZZ_JOBS) $(FUZZ_ITERATIONS)

.PHONY: e2e-tests
e2e-tests: annotated-policy.wasm
	@command -v bats >/dev/null || { echo "bats is not installed: see https://bats-core.readthedocs.io"; exit 1; }
	bats e2e.bats

# Sends the sample requests through the built module and prints the responses.
.PHONY: run
run: setup policy.wasm
	@for sample in $(SAMPLES); do \
		settings=test_data/$${sample%%:*}; request=test_data/$${sample##*:}; \
		echo "== $$settings + $$request"; \
		cargo run --quiet --example evaluate -- --settings $$settings --request $$request || exit 1; \
	done

# p50/p95 `validate` latency through the waPC host, fresh and reused instance.
.PHONY: bench
bench: setup policy.wasm
	cargo bench --bench validate

# The hostile inputs of test_data/fuzz/corpus/: time through the module
# (fresh instance) and natively, with the engine's peak memory.
.PHONY: bench-hostile
bench-hostile: setup policy.wasm
	cargo bench --bench hostile

.PHONY: clean
clean:
	cargo clean
	rm -f policy.wasm annotated-policy.wasm
