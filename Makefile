# topogate: one Makefile. `make` builds build/topogate; `make run` serves;
# `make test` runs every test. Both install missing Debian packages first.

VERSION := 0.1.0
BUILD ?= build
CC ?= gcc
OPT ?= -O2
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -I. $(OPT) -g -Wall -Wextra -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla \
	-DTOPOGATE_VERSION='"$(VERSION)"' $(SAN) $(CFLAGS)
LIBS = -lmicrohttpd -lcjson -lyaml -lcrypto -lpthread

POLICY_SRC  := $(wildcard policy/*.c)
WEBHOOK_SRC := $(wildcard webhook/*.c)
CMD_SRC     := $(wildcard cmd/*.c)
POLICY_OBJ  := $(POLICY_SRC:%.c=$(BUILD)/%.o) $(BUILD)/policy/embedded.o
WEBHOOK_OBJ := $(WEBHOOK_SRC:%.c=$(BUILD)/%.o)
CMD_OBJ     := $(CMD_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC    := $(wildcard test/unit/test_*.c)
UNIT_BIN    := $(UNIT_SRC:test/unit/%.c=$(BUILD)/unit/%)

# Debian packages: to build, and to run the tests.
BUILD_DEPS = gcc make libc6-dev libmicrohttpd-dev libcjson-dev libyaml-dev \
	libssl-dev openssl
TEST_DEPS = curl valgrind python3 python3-yaml python3-jsonpatch \
	python3-jsonschema

.PHONY: all run test unit golden golden-update e2e corpus valgrind \
	deps test-deps clean sanitize

all: $(BUILD)/topogate

$(BUILD)/topogate: $(CMD_OBJ) $(WEBHOOK_OBJ) $(POLICY_OBJ)
	$(CC) $(SAN) -o $@ $^ $(LIBS)

$(BUILD)/%.o: %.c $(wildcard policy/*.h webhook/*.h cmd/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/policy/embedded.o: policy/embedded.S deploy/policy.yaml
	@mkdir -p $(dir $@)
	$(CC) -c -o $@ policy/embedded.S

# Unit tests link policy/ alone (plus cJSON and libyaml): a call into
# webhook/ from policy/ fails to link here.
$(BUILD)/unit/test_%: test/unit/test_%.c test/unit/check.h $(POLICY_OBJ) \
		$(WEBHOOK_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(if $(findstring webhook_,$*), \
		$(WEBHOOK_OBJ),) $(POLICY_OBJ) $(LIBS)

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

test: test-deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory BUILD=$(SANBUILD) OPT=-O1 \
		SAN="$(SANITIZE)" sanitize
	@$(MAKE) --no-print-directory valgrind
	@echo "all tests passed"

sanitize: all $(UNIT_BIN)
	@for t in $(UNIT_BIN); do $$t || exit 1; done
	@test/golden/run.sh $(BUILD)/topogate
	@test/e2e/run.sh $(BUILD)/topogate
	@test/corpus/run.sh $(BUILD)/topogate

unit: all $(UNIT_BIN)
	@for t in $(UNIT_BIN); do $$t || exit 1; done

golden: all
	@test/golden/run.sh $(BUILD)/topogate

golden-update: all
	@UPDATE=1 test/golden/run.sh $(BUILD)/topogate

valgrind: all
	@VALGRIND=1 test/golden/run.sh $(BUILD)/topogate

clean:
	rm -rf $(BUILD)
