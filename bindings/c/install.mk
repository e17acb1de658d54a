# `make install` and `make uninstall` (included by the top-level Makefile):
# the C library, release build, for `cc app.c $(pkg-config --cflags --libs
# ratekeeper)`.
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [LIBDIR=$(PREFIX)/lib] [INCLUDEDIR=$(PREFIX)/include]
#
# installs include/ratekeeper.h, libratekeeper.so, libratekeeper.a, and two
# pkg-config files: ratekeeper.pc (the shared library) and
# ratekeeper-static.pc (the static one and what it needs; `pkg-config
# --static ratekeeper` alone would still pick the .so where both exist).
include $(dir $(lastword $(MAKEFILE_LIST)))c.mk

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR ?=

RK_VERSION := $(shell sed -n '/^\[workspace\.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' $(RK_ROOT)/Cargo.toml)
RK_RELEASE_DIR := $(RK_TARGET_DIR)/release
RK_PC_FILES := ratekeeper ratekeeper-static

.PHONY: install uninstall
install:
	$(CARGO) build --locked --release -p ratekeeper-c
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 $(RK_ROOT)/include/ratekeeper.h $(DESTDIR)$(INCLUDEDIR)/ratekeeper.h
	install -m 755 $(RK_RELEASE_DIR)/libratekeeper.so $(DESTDIR)$(LIBDIR)/libratekeeper.so
	install -m 644 $(RK_RELEASE_DIR)/libratekeeper.a $(DESTDIR)$(LIBDIR)/libratekeeper.a
	for pc in $(RK_PC_FILES); do \
		sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		    -e 's|@VERSION@|$(RK_VERSION)|' -e 's|@STATIC_DEPS@|$(RK_STATIC_DEPS)|' \
		    $(RK_ROOT)/bindings/c/$$pc.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/$$pc.pc || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/ratekeeper.h
	rm -f $(DESTDIR)$(LIBDIR)/libratekeeper.so $(DESTDIR)$(LIBDIR)/libratekeeper.a
	rm -f $(RK_PC_FILES:%=$(DESTDIR)$(PKGCONFIGDIR)/%.pc)
