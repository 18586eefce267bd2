# topogate: one Makefile. `make` builds build/topogate; `make run` serves;
# `make test` runs every test. Both install missing Debian packages first.

VERSION := 0.1.0
BUILD ?= build
CC ?= gcc
OPT ?= -O2
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -I. $(OPT) -g -Wall -Wextra -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla -fno-plt \
	-DTOPOGATE_VERSION='"$(VERSION)"' $(SAN) $(CFLAGS)
# Full RELRO: every library symbol is bound at start and the table of
# them is then read-only, so an overwrite there cannot redirect a call;
# with -fno-plt above, calls into libraries go through that table instead
# of PLT stubs (a 6 KB review touches 22 fewer lines of code, 702 -> 680,
# make bench-lines).
HARDEN = -Wl,-z,relro,-z,now
# GnuTLS is the TLS library libmicrohttpd already links; topogate hands
# each session its credentials itself, so a certificate can be rotated.
# floor() is inlined at -O1 and -O2 but called from libm at -O0 and -Os:
# libm is linked only where a call to it is left.
LIBS = -lmicrohttpd -lgnutls -lcjson -lyaml -lpthread \
	-Wl,--push-state,--as-needed -lm -Wl,--pop-state $(HARDEN)

# One source list per folder, named after it; each folder's README says
# what it may include, and test/layout/check.sh holds the tree to that.
BASE_SRC    := $(wildcard base/*.c)
JSON_SRC    := $(wildcard json/*.c)
LIB_SRC     := $(wildcard lib/*.c)
POLICY_SRC  := $(wildcard policy/*.c policy/*/*.c)
# The apiserver client (libcurl) is topogate-kubewatch's alone, an
# executable beside topogate: libcurl and what it links (libssh2 ->
# libcrypto, LDAP, Kerberos) would cost the server 3.4 MiB resident.
KUBE_SRC    := $(wildcard kube/*.c)
CLUSTERVIEW_SRC := $(wildcard clusterview/*.c)
WEBHOOK_SRC := $(wildcard webhook/*.c)
# OpenSSL is certgen's alone, in an executable of its own beside
# topogate: the server never loads libcrypto (cmd/certgen_main.c).
CERTGEN_SRC := cmd/certgen.c cmd/certgen_main.c
KUBEWATCH_SRC := cmd/kubewatch_main.c cmd/kubewatch_live.c
CMD_SRC     := $(filter-out $(CERTGEN_SRC) $(KUBEWATCH_SRC),$(wildcard cmd/*.c))
obj = $(1:%.c=$(BUILD)/%.o)
# The pure floor: policy/ and the text helpers it stands on.
PURE_OBJ    := $(call obj,$(POLICY_SRC) $(BASE_SRC)) \
	$(BUILD)/policy/table/embedded.o
# The I/O both processes share above it: the server, the JSON reader,
# lib/ and the cluster view's process boundary.
SERVER_OBJ  := $(call obj,$(WEBHOOK_SRC) $(JSON_SRC) $(LIB_SRC) \
	$(CLUSTERVIEW_SRC))
KUBE_OBJ    := $(call obj,$(KUBE_SRC))
CMD_OBJ     := $(call obj,$(CMD_SRC))
CERTGEN_OBJ := $(call obj,$(CERTGEN_SRC))
UNIT_SRC    := $(wildcard test/unit/test_*.c)
UNIT_BIN    := $(UNIT_SRC:test/unit/%.c=$(BUILD)/unit/%)

# Debian packages: to build, and to run the tests.
BUILD_DEPS = gcc make libc6-dev libmicrohttpd-dev libcjson-dev libyaml-dev \
	libssl-dev openssl libgnutls28-dev libcurl4-gnutls-dev
TEST_DEPS = curl valgrind python3 python3-yaml python3-jsonpatch \
	python3-jsonschema openmpi-bin python3-torch libxml2-utils
# `make bench` only: load tools and the peers of ../shared/bench.
BENCH_DEPS = wrk nghttp2-client golang-1.19-go nginx util-linux curl \
	openssl python3 valgrind

.PHONY: all run test unit golden golden-update e2e corpus valgrind \
	deps test-deps clean sanitize bench bench-deps bench-decide \
	bench-parse-bins bench-parse bench-parse-bundle bench-cold \
	bench-lines bench-threads bench-bodies bench-check

all: $(BUILD)/topogate $(BUILD)/topogate-certgen $(BUILD)/topogate-kubewatch

$(BUILD)/topogate: $(CMD_OBJ) $(SERVER_OBJ) $(PURE_OBJ)
	$(CC) $(SAN) -o $@ $^ $(LIBS)

$(BUILD)/topogate-certgen: $(CERTGEN_OBJ)
	$(CC) $(SAN) -o $@ $^ -lcrypto $(HARDEN)

$(BUILD)/topogate-kubewatch: $(KUBEWATCH_SRC:%.c=$(BUILD)/%.o) $(KUBE_OBJ) \
		$(SERVER_OBJ) $(PURE_OBJ)
	$(CC) $(SAN) -o $@ $^ $(LIBS) -lcurl

# Every folder's objects by the one rule; -MMD records which headers each
# object read, so a changed header rebuilds just those.
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

$(BUILD)/policy/table/embedded.o: policy/table/embedded.S deploy/policy.yaml
	@mkdir -p $(dir $@)
	$(CC) -c -o $@ policy/table/embedded.S

# Unit tests link policy/ alone (plus cJSON and libyaml): a call into
# webhook/ from policy/ fails to link here.
$(BUILD)/unit/test_%: test/unit/test_%.c $(wildcard test/unit/*.h) $(PURE_OBJ) \
		$(SERVER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(if $(findstring webhook_,$*), \
		$(SERVER_OBJ),) $(PURE_OBJ) $(LIBS)

# The apiserver client's callbacks as JSON lines, for test/kube/run.sh.
$(BUILD)/kube_dump: test/kube/kube_dump.c $(KUBE_OBJ) $(SERVER_OBJ) \
		$(PURE_OBJ)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(KUBE_OBJ) $(SERVER_OBJ) $(PURE_OBJ) \
		$(LIBS) -lcurl

# --- installing what is missing -------------------------------------------

define install_missing
	@missing=""; for p in $(1); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing:$$missing"; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get install -y -q $$missing >/dev/null || \
			{ apt-get update -q >/dev/null && \
			  apt-get install -y -q $$missing >/dev/null; } || exit 1; \
		else \
			echo "missing Debian packages; run:"; \
			echo "  sudo apt-get install -y$$missing"; exit 1; \
		fi; \
	fi
endef

deps:
	$(call install_missing,$(BUILD_DEPS))

test-deps: deps
	$(call install_missing,$(TEST_DEPS))

bench-deps: deps
	$(call install_missing,$(BENCH_DEPS))

# --- running ---------------------------------------------------------------

run: deps
	@$(MAKE) --no-print-directory all
	@test/run-local.sh $(BUILD)/topogate

# --- tests -------------------------------------------------------------------

# The whole suite runs on an ASan+UBSan build; the golden set also runs
# under valgrind on the plain build.
SANITIZE = -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
SANBUILD = $(BUILD)/san

test: test-deps fuzz-deps
	@[ -d "$(SHARED)" ] || echo "# no $(SHARED): the tests read test/data" \
		"(test/data/README.md); a test that needs a tool from it says skipped"
	@$(MAKE) --no-print-directory all
	@for b in topogate topogate-certgen topogate-kubewatch; do \
		readelf -d $(BUILD)/$$b | grep -q BIND_NOW || \
		{ echo "$(BUILD)/$$b is not linked with full RELRO"; exit 1; }; \
	done
	@test/layout/check.sh
	@test/kube/view-scale.sh $(BUILD)/topogate
	@test/kube/liveaudit-scale.sh $(BUILD)/topogate
	@$(MAKE) --no-print-directory BUILD=$(SANBUILD) OPT=-O1 \
		SAN="$(SANITIZE)" sanitize
	@$(MAKE) --no-print-directory valgrind
	@$(MAKE) --no-print-directory fuzz-smoke
	@$(MAKE) --no-print-directory stress-smoke
	@$(MAKE) --no-print-directory chart-test
	@echo "all tests passed"

# jsonread's verdicts against Python's json module, an independent reader.
JSONREAD_ORACLE = /usr/bin/python3 test/unit/jsonread_oracle.py \
	$(BUILD)/unit/test_webhook_jsonread

sanitize: all $(UNIT_BIN) $(BUILD)/kube_dump
	@for t in $(UNIT_BIN); do $$t || exit 1; done
	@$(JSONREAD_ORACLE)
	@test/kube/run.sh $(BUILD)
	@test/kube/dra-helper.sh $(BUILD)/topogate
	@test/kube/nrt-helper.sh $(BUILD)/topogate
	@test/golden/run.sh $(BUILD)/topogate
	@test/runtimes/run.sh $(BUILD)/topogate
	@test/nodes/run.sh $(BUILD)/topogate
	@test/dra/run.sh $(BUILD)/topogate
	@test/tables/run.sh $(BUILD)/topogate
	@test/sched/run.sh $(BUILD)/topogate
	@test/e2e/run.sh $(BUILD)/topogate
	@test/e2e/tls.sh $(BUILD)/topogate
	@test/e2e/reload.sh $(BUILD)/topogate
	@test/e2e/view.sh $(BUILD)/topogate
	@test/e2e/liveaudit.sh $(BUILD)/topogate
	@test/certgen/run.sh $(BUILD)/topogate
	@test/corpus/run.sh $(BUILD)/topogate
	@test/audit/run.sh $(BUILD)/topogate
	@test/e2e/hostile.sh $(BUILD)/topogate

unit: all $(UNIT_BIN)
	@for t in $(UNIT_BIN); do $$t || exit 1; done
	@$(JSONREAD_ORACLE)

golden: all
	@test/golden/run.sh $(BUILD)/topogate

golden-update: all
	@UPDATE=1 test/golden/run.sh $(BUILD)/topogate

valgrind: all
	@VALGRIND=1 test/golden/run.sh $(BUILD)/topogate

# --- fuzzing (test/fuzz) ---------------------------------------------------

# libFuzzer is clang's; Debian 12 ships its runtime in libclang-rt-14-dev.
FUZZ_DEPS = clang libclang-rt-14-dev
FUZZ_BUILD = $(BUILD)/fuzz
FUZZ_SAN = -fsanitize=fuzzer-no-link,address,undefined \
	-fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 20
# One target per test/fuzz/fuzz_NAME.c, seeded from test/fuzz/corpus/NAME/,
# with test/fuzz/NAME.dict and test/fuzz/regressions/NAME/: adding a file
# (fuzz_manifest.c for `audit` over manifests) adds a target.
FUZZ_NAMES = $(patsubst test/fuzz/fuzz_%.c,%,$(wildcard test/fuzz/fuzz_*.c))

.PHONY: fuzz fuzz-smoke fuzz-deps fuzz-bins

fuzz-deps: deps
	$(call install_missing,$(FUZZ_DEPS))

# Run by the sub-make below, where BUILD is $(FUZZ_BUILD) and CC clang:
# the project objects carry coverage and ASan+UBSan, the target links
# libFuzzer's main.
fuzz-bins: $(FUZZ_NAMES:%=$(BUILD)/fuzz_%)

$(BUILD)/fuzz_%: test/fuzz/fuzz_%.c $(wildcard test/unit/*.h) $(SERVER_OBJ) \
		$(PURE_OBJ)
	$(CC) $(CFLAGS_ALL) -fsanitize=fuzzer -o $@ $< $(SERVER_OBJ) \
		$(PURE_OBJ) $(LIBS)

define fuzz_build
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang OPT=-O1 \
		SAN="$(FUZZ_SAN)" fuzz-bins
endef

fuzz: fuzz-deps
	$(fuzz_build)
	@test/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_NAMES)

fuzz-smoke: fuzz-deps
	$(fuzz_build)
	@KEEP=0 test/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS) $(FUZZ_NAMES)

# --- bench (not part of `make test`) ----------------------------------------

# topogate against the peers of ../shared/bench, then the decision alone;
# writes test/bench/results.md and the table in docs/performance.md.
SHARED ?= ../shared
BENCH_BIN = $(BUILD)/bench/decide_bench

$(BENCH_BIN): test/bench/decide_bench.c test/bench/bench_time.h \
		$(PURE_OBJ) $(SERVER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(SERVER_OBJ) $(PURE_OBJ) $(LIBS)

VIEW_BENCH = $(BUILD)/bench/view_bench

$(VIEW_BENCH): test/bench/view_bench.c test/bench/bench_time.h \
		$(PURE_OBJ) $(SERVER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(SERVER_OBJ) $(PURE_OBJ) $(LIBS)

# topogate serve with the review's parse, decision and answer replaced by
# a fixed "allowed" (test/bench/floor_review.c): what the transport alone
# costs, for the many-core bench (test/bench/manycore-ab.sh, FLOOR=1).
FLOOR_BIN = $(BUILD)/bench/topogate-floor

$(FLOOR_BIN): test/bench/floor_review.c $(CMD_OBJ) $(SERVER_OBJ) $(PURE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Wl,--wrap=review_respond \
		-Wl,--wrap=review_respond_in_place -o $@ $^ $(LIBS)

# topogate serve whose parse of a body it has read before costs nothing
# (test/bench/noparse_review.c): beside the floor, what the parse costs.
NOPARSE_BIN = $(BUILD)/bench/topogate-noparse

$(NOPARSE_BIN): test/bench/noparse_review.c test/bench/kept_tree.h \
		$(CMD_OBJ) $(SERVER_OBJ) $(PURE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Wl,--wrap=jsonread_in_place -o $@ \
		$(filter-out %.h,$^) $(LIBS)

# topogate serve that runs a first review before each one it answers
# (test/bench/twice_review.c): beside topogate, what a review costs right
# after another instead of right after the transport.
TWICE_BIN = $(BUILD)/bench/topogate-twice

$(TWICE_BIN): test/bench/twice_review.c $(CMD_OBJ) $(SERVER_OBJ) $(PURE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Wl,--wrap=review_respond_in_place -o $@ $^ $(LIBS)

# topogate serve whose parse only checks a body it has read before,
# building nothing (test/bench/checkonly_review.c, which compiles
# json/jsonread.c in itself): the least a parse into a tape could cost.
CHECKONLY_BIN = $(BUILD)/bench/topogate-checkonly

$(CHECKONLY_BIN): test/bench/checkonly_review.c test/bench/kept_tree.h \
		json/jsonread.c $(CMD_OBJ) \
		$(filter-out $(BUILD)/json/jsonread.o,$(SERVER_OBJ)) $(PURE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $(filter-out %.h json/jsonread.c,$^) \
		$(LIBS)

# The bench's instruments are checked to measure what they say before
# anything is measured with them (test/bench/instruments-check.sh).
bench-check: bench-deps
	@$(MAKE) --no-print-directory all $(FLOOR_BIN) $(NOPARSE_BIN) \
		$(CHECKONLY_BIN) $(TWICE_BIN) $(BENCH_BIN)
	@test/bench/instruments-check.sh $(BUILD)/topogate $(FLOOR_BIN) \
		$(NOPARSE_BIN) $(CHECKONLY_BIN) $(TWICE_BIN) \
		test/e2e/review-plain.json \
		$(wildcard $(SHARED)/bench/fixtures/*.json)
	@$(BENCH_BIN) -n 3 -b 1 -m read test/e2e/review-plain.json | \
		grep -q '"read_ns":[1-9]' && \
		! $(BENCH_BIN) -m read Makefile 2>/dev/null && \
		echo "ok - decide_bench -m read (turns.sh's pace)" || \
		{ echo "not ok - decide_bench -m read: no time for a review's" \
			"parse, or one for a file that is not a review"; exit 1; }
	@/usr/bin/python3 test/bench/turns_table.py test/bench/turns-sample.txt 5 | \
		diff -u test/bench/turns-sample.md - && echo "ok - turns_table" || \
		{ echo "not ok - turns_table: not the table of turns-sample.txt"; \
			exit 1; }
	@/usr/bin/python3 test/bench/turns_table.py test/bench/turns-sample-go.txt | \
		diff -u test/bench/turns-sample-go.md - && \
		echo "ok - turns_table with Go's client's column" || \
		{ echo "not ok - turns_table: not the table of turns-sample-go.txt"; \
			exit 1; }

bench: bench-check
	@$(MAKE) --no-print-directory all $(BENCH_BIN) $(VIEW_BENCH)
	@SHARED=$(SHARED) test/bench/run.sh $(BUILD)/topogate $(BENCH_BIN)
	@$(VIEW_BENCH) $(SHARED)/bench/fixtures/p4d-training.json | \
		tee test/bench/view.json
	@NODES=50000 test/kube/view-scale.sh $(BUILD)/topogate
	@PODS=10000 test/kube/liveaudit-scale.sh $(BUILD)/topogate

# The in-process figures alone, in a few seconds.
bench-decide: deps
	@$(MAKE) --no-print-directory $(BENCH_BIN) $(VIEW_BENCH)
	@$(BENCH_BIN) $(SHARED)/bench/fixtures/*.json
	@$(VIEW_BENCH) $(SHARED)/bench/fixtures/p4d-training.json

# The whole review after the caches were emptied to several depths: what
# a review costs at 1,000/s, when it runs cold (test/bench/cold_review.c).
COLD_BIN = $(BUILD)/bench/cold_review

$(COLD_BIN): test/bench/cold_review.c test/bench/bench_time.h \
		$(PURE_OBJ) $(SERVER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(SERVER_OBJ) $(PURE_OBJ) $(LIBS)

bench-cold: deps
	@$(MAKE) --no-print-directory $(COLD_BIN)
	@$(COLD_BIN) $(SHARED)/bench/fixtures/*.json

# The cache lines one review touches from cold, under callgrind's cache
# simulator: what the figures above follow (test/bench/cold-lines.sh).
bench-lines: deps
	$(call install_missing,valgrind)
	@$(MAKE) --no-print-directory $(COLD_BIN)
	@test/bench/cold-lines.sh $(COLD_BIN) $(SHARED)/bench/fixtures/*.json

# Each of serve's threads' CPU per review at 1,000/s, the load on the other
# CPU (test/bench/thread-cost.sh): the request thread against the ones
# that wake on their own, such as the log writer.
OPENLOOP = $(BUILD)/bench/openloop

$(OPENLOOP): $(SHARED)/bench/bench/openloop.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -o $@ $< -lssl -lcrypto

bench-threads: deps
	$(call install_missing,util-linux curl python3)
	@$(MAKE) --no-print-directory all $(OPENLOOP)
	@test/bench/thread-cost.sh $(BUILD)/topogate $(BUILD)/topogate-certgen \
		$(OPENLOOP) $(SHARED)/bench/fixtures/p4d-training.json

# What a review costs per KB of body, 16 KiB to 1 MiB, and the page faults
# a review takes (test/bench/body-sweep.sh): large bodies as cheap per KB
# as small ones (issue 49).
bench-bodies: deps
	$(call install_missing,util-linux curl python3)
	@$(MAKE) --no-print-directory all $(OPENLOOP)
	@SHARED=$(SHARED) test/bench/body-sweep.sh $(BUILD)/topogate \
		$(BUILD)/topogate-certgen $(OPENLOOP)

# topogate's parse beside simdjson's, the fastest parser we know of, on the
# same reviews (test/bench/parse-peer.sh): how far a parse can go.
PARSE_PEER = $(BUILD)/bench/simdjson_peer
BENCH_PARSE_DEPS = g++ libsimdjson-dev util-linux python3

$(PARSE_PEER): test/bench/simdjson_peer.cpp
	@mkdir -p $(dir $@)
	g++ -std=c++17 -O2 -Wall -Wextra -o $@ $< -lsimdjson

bench-parse-bins: deps
	$(call install_missing,$(BENCH_PARSE_DEPS))
	@$(MAKE) --no-print-directory $(BENCH_BIN) $(PARSE_PEER)

bench-parse: bench-parse-bins
	@test/bench/parse-peer.sh $(BENCH_BIN) $(PARSE_PEER) \
		$(SHARED)/bench/fixtures/*.json

# The same, packed into build/parsepeer for the 16-core device.
bench-parse-bundle: bench-parse-bins
	@test/bench/parse-peer-bundle.sh $(BUILD)/parsepeer $(BENCH_BIN) \
		$(PARSE_PEER) $(SHARED)/bench/fixtures/*.json

# --- load and faults (test/stress) ------------------------------------------

STRESS_SRC = $(wildcard test/stress/*.c)
STRESSC = $(BUILD)/stress/stressc
# test/e2e/hostile.sh floods with it.
sanitize: $(STRESSC)

.PHONY: stress stress-smoke

# The client, plain: it measures, it is not under test.
$(STRESSC): $(STRESS_SRC) $(wildcard test/stress/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $(STRESS_SRC) -lssl -lcrypto -lpthread

# About two minutes: the sanitizer build under load and faults, the plain
# one for resident memory and the address-space limit.
stress-smoke: test-deps all $(STRESSC)
	@$(MAKE) --no-print-directory BUILD=$(SANBUILD) OPT=-O1 \
		SAN="$(SANITIZE)" all
	@test/stress/run.sh smoke $(SANBUILD)/topogate $(BUILD)/topogate \
		$(STRESSC)

# The issue's sizes (a million reviews for memory), on the plain build.
stress: test-deps all $(STRESSC)
	@test/stress/run.sh full $(BUILD)/topogate $(BUILD)/topogate $(STRESSC)

# --- chart, plain manifests, image (charts/topogate, deploy/, Dockerfile) --

# Real helm when installed; otherwise ../shared/tools/helm-render, built
# once (build.sh installs golang-1.19-go and its Go libraries) and rebuilt
# only when its sources change.
HELM ?= $(shell command -v helm 2>/dev/null)
HELM_RENDER_DIR = $(SHARED)/tools/helm-render
HELM_RENDER = $(BUILD)/helm-render
CHART_RENDERER = $(if $(HELM),$(HELM),$(HELM_RENDER))
IMAGE ?= localhost/topogate:$(VERSION)
CONTAINER_ENGINE ?= $(shell command -v podman 2>/dev/null || \
	command -v docker 2>/dev/null)

.PHONY: chart-test deploy-manifests image

$(HELM_RENDER): $(wildcard $(HELM_RENDER_DIR)/*.go) $(HELM_RENDER_DIR)/build.sh
	$(HELM_RENDER_DIR)/build.sh $@

# A clone without ../shared builds no renderer: test/chart/run.sh skips
# what renders and says so.
chart-test: test-deps all $(if $(HELM),,$(if $(wildcard \
		$(HELM_RENDER_DIR)/build.sh),$(HELM_RENDER)))
	@test/chart/run.sh $(BUILD)/topogate $(CHART_RENDERER)

# Refreshes the chart's copy of the policy and the plain manifests, one per
# range of Kubernetes versions (the first line of each says which); read
# the diff before committing.
deploy-manifests: $(if $(HELM),,$(HELM_RENDER))
	cp deploy/policy.yaml charts/topogate/policy.yaml
	@mkdir -p $(BUILD)
	test/chart/render-deploy.sh $(CHART_RENDERER) 1.30 >$(BUILD)/topogate.yaml
	test/chart/render-deploy.sh $(CHART_RENDERER) 1.25 1.29 \
		>$(BUILD)/topogate-1.25.yaml
	mv $(BUILD)/topogate.yaml deploy/topogate.yaml
	mv $(BUILD)/topogate-1.25.yaml deploy/topogate-1.25.yaml

# Podman or Docker; neither runs on the project's own machines.
image:
	@test -n "$(CONTAINER_ENGINE)" || { echo "make image: needs podman" \
		"or docker (none found); see README, Install"; exit 1; }
	$(CONTAINER_ENGINE) build -t $(IMAGE) .

clean:
	rm -rf $(BUILD)
