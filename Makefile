# The two commands of a fresh machine (see README.md):
#   make demo   builds everything and runs the demo
#   make test   runs every test (what CI runs): scripts/test.sh, which also
#               runs only the groups or stages named (scripts/test.sh --list)
# and the benchmark report:
#   make bench  runs every benchmark beside its peers, writes BENCHMARKS.md
#               (scripts/bench.sh --quick: rough figures in a few minutes)
# and a release's artifacts (wheel and sdist, npm tarballs, the C tarball,
# the crates), all of one version:
#   make dist   scripts/dist.sh, which writes dist/ (scripts/dist.sh --help)
# and the C library's:
#   make install [PREFIX=/usr/local]   header, libratekeeper.so/.a, pkg-config files
#   make uninstall [PREFIX=/usr/local]
.PHONY: demo test bench dist

demo:
	scripts/demo.sh

test:
	scripts/test.sh

bench:
	scripts/bench.sh

dist:
	scripts/dist.sh

# After the targets above, so that `make` alone still means `make demo`.
include bindings/c/install.mk
