# `make install` and `make uninstall` (included by the top-level Makefile):
# the C library, release build, for `cc app.c $(pkg-config --cflags --libs
# ratekeeper)`.
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [LIBDIR=$(PREFIX)/lib] [INCLUDEDIR=$(PREFIX)/include]
#                [RK_TARGET=TRIPLE] [RELOCATABLE=1]
#
# installs include/ratekeeper.h, the shared library as its versioned file
# with the usual links (for version X.Y.Z, 0.x shown):
#
#   libratekeeper.so.0.1.0            the library
#   libratekeeper.so.0.1 -> ...0.1.0  its soname: what programs record and load
#   libratekeeper.so -> ...so.0.1     what `cc -lratekeeper` finds
#
# libratekeeper.a, and two pkg-config files carrying the version:
# ratekeeper.pc (the shared library) and ratekeeper-static.pc (the static
# one and what it needs; `pkg-config --static ratekeeper` alone would still
# pick the .so where both exist). RELOCATABLE=1 writes them relative to
# their own place (prefix=${pcfiledir}/../..), so the tree works wherever
# it is moved or unpacked: scripts/dist/c.sh's tarball.
include $(dir $(lastword $(MAKEFILE_LIST)))c.mk

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR ?=
RELOCATABLE ?=

RK_RELEASE_DIR := $(RK_TARGET_DIR)/$(if $(RK_TARGET),$(RK_TARGET)/)release
RK_PC_FILES := ratekeeper ratekeeper-static
RK_REALNAME := libratekeeper.so.$(firstword $(subst -, ,$(subst +, ,$(RK_VERSION))))

# The pkg-config files' directories: under ${prefix} when they are (as by
# default), and the prefix itself absolute, or found from the .pc file's
# directory for RELOCATABLE=1 (which needs the pkg-config directory under
# the prefix).
rk_pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(patsubst $(PREFIX),$${prefix},$(1)))
rk_pc_prefix = $(if $(RELOCATABLE),$${pcfiledir}/$(shell realpath -m --relative-to=$(PKGCONFIGDIR) $(PREFIX)),$(PREFIX))

.PHONY: install uninstall
install:
	$(if $(RELOCATABLE),$(if $(filter $(PREFIX)/%,$(PKGCONFIGDIR)),,$(error RELOCATABLE=1 needs PKGCONFIGDIR under PREFIX)))
	$(CARGO) build --locked --release -p ratekeeper-c $(if $(RK_TARGET),--target $(RK_TARGET))
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 $(RK_ROOT)/include/ratekeeper.h $(DESTDIR)$(INCLUDEDIR)/ratekeeper.h
	install -m 755 $(RK_RELEASE_DIR)/libratekeeper.so $(DESTDIR)$(LIBDIR)/$(RK_REALNAME)
	ln -sfn $(RK_REALNAME) $(DESTDIR)$(LIBDIR)/$(RK_SONAME)
	ln -sfn $(RK_SONAME) $(DESTDIR)$(LIBDIR)/libratekeeper.so
	install -m 644 $(RK_RELEASE_DIR)/libratekeeper.a $(DESTDIR)$(LIBDIR)/libratekeeper.a
	for pc in $(RK_PC_FILES); do \
		sed -e 's|@PREFIX@|$(rk_pc_prefix)|' -e 's|@LIBDIR@|$(call rk_pc_dir,$(LIBDIR))|' \
		    -e 's|@INCLUDEDIR@|$(call rk_pc_dir,$(INCLUDEDIR))|' \
		    -e 's|@VERSION@|$(RK_VERSION)|' -e 's|@STATIC_DEPS@|$(RK_STATIC_DEPS)|' \
		    $(RK_ROOT)/bindings/c/$$pc.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/$$pc.pc || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/ratekeeper.h
	rm -f $(DESTDIR)$(LIBDIR)/libratekeeper.so $(DESTDIR)$(LIBDIR)/$(RK_SONAME) $(DESTDIR)$(LIBDIR)/$(RK_REALNAME)
	rm -f $(DESTDIR)$(LIBDIR)/libratekeeper.a
	rm -f $(RK_PC_FILES:%=$(DESTDIR)$(PKGCONFIGDIR)/%.pc)

# The names above as shell assignments, for scripts/dist/c.sh and
# tests/installed/c.sh (one place for them: here).
.PHONY: c-names
c-names:
	@echo "RK_VERSION=$(RK_VERSION) RK_SONAME=$(RK_SONAME) RK_REALNAME=$(RK_REALNAME)"
