# How C code in this repository builds against libratekeeper: included by
# the Makefiles of tests/c, tests/conformance/c and examples/c, and by the
# top-level Makefile's install. One place for the flags and the link lines.
#
#   RK_PROFILE=debug|release   which cargo build to link (default debug)
#   RK_TARGET=TRIPLE           a Rust target triple to build for (cargo's
#                              --target; default the host, cargo's default)
#   CARGO_TARGET_DIR           honoured, as cargo does

RK_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
CARGO ?= cargo
CC ?= cc
RK_PROFILE ?= debug
RK_TARGET ?=
RK_TARGET_DIR := $(abspath $(or $(CARGO_TARGET_DIR),$(RK_ROOT)/target))
RK_LIBDIR := $(RK_TARGET_DIR)/$(if $(RK_TARGET),$(RK_TARGET)/)$(RK_PROFILE)

# The version (the workspace's, the one source) and the soname it gives
# the shared library: libratekeeper.so.MAJOR, or libratekeeper.so.0.MINOR
# while the version is 0.x (bindings/c/build.rs sets it at link time; the
# two rules agree, which tests/installed/c.sh checks).
RK_VERSION := $(shell sed -n '/^\[workspace\.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' $(RK_ROOT)/Cargo.toml)
rk_version_parts := $(subst ., ,$(firstword $(subst -, ,$(subst +, ,$(RK_VERSION)))))
RK_VERSION_MAJOR := $(word 1,$(rk_version_parts))
RK_VERSION_MINOR := $(word 2,$(rk_version_parts))
RK_SONAME := libratekeeper.so.$(if $(filter 0,$(RK_VERSION_MAJOR)),0.$(RK_VERSION_MINOR),$(RK_VERSION_MAJOR))
RK_SHARED := $(RK_LIBDIR)/libratekeeper.so
RK_STATIC := $(RK_LIBDIR)/libratekeeper.a

# What every C file here compiles with: the committed header, and warnings
# as errors.
RK_CFLAGS := -std=c11 -Wall -Wextra -Werror -g -I$(RK_ROOT)/include

# The system libraries the Rust standard library in libratekeeper.a needs
# (`cargo rustc -p ratekeeper-c --crate-type staticlib -- --print
# native-static-libs`): glibc's on Linux, which the static link of the C
# tests checks; musl's libc alone (Rust's musl targets bundle libunwind).
RK_STATIC_DEPS := $(if $(findstring -musl,$(RK_TARGET)),-lc,-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)

# Every C test runs under this: any error, or a leak of any kind, fails.
# --fair-sched=yes: valgrind runs one thread at a time, and by default a
# thread that spins (test_threads' hammers, on a lock or a manual clock)
# can take the turn back again and again from the one it waits for — that
# test once took 20 minutes instead of 10 seconds.
RK_VALGRIND := valgrind -q --fair-sched=yes --error-exitcode=1 --leak-check=full --show-leak-kinds=all \
	--errors-for-leak-kinds=all

# Linking against the build tree: the shared library (found at run time
# through the rpath), or the static one.
RK_LINK_SHARED := -L$(RK_LIBDIR) -Wl,-rpath,$(RK_LIBDIR) -lratekeeper
RK_LINK_STATIC := $(RK_STATIC) $(RK_STATIC_DEPS)

# The libraries themselves: cargo decides whether anything needs doing
# (make then sees whether the files changed). Programs linked against
# libratekeeper.so record its soname, so the build tree has that name too,
# a link to cargo's file, for them to run from.
$(RK_SHARED) $(RK_STATIC) &: rk-force
	$(CARGO) build --locked --quiet -p ratekeeper-c $(if $(filter release,$(RK_PROFILE)),--release) $(if $(RK_TARGET),--target $(RK_TARGET))
	ln -sfn libratekeeper.so $(RK_LIBDIR)/$(RK_SONAME)

.PHONY: rk-force
rk-force:
