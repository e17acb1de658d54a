# The two commands of a fresh machine (see README.md):
#   make demo   builds everything and runs the demo
#   make test   runs every test (what CI runs)
.PHONY: demo test bench

demo:
	scripts/demo.sh

test:
	scripts/test.sh

bench:
	scripts/bench.sh
