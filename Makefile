# Thin entry points; the scripts do the work.
.PHONY: demo test build release bench format package
demo:
	./scripts/demo.sh
test:
	./scripts/test.sh
build:
	swift build
release:
	swift build -c release
bench:
	./bench/run.sh
format:
	swift format --in-place --recursive Package.swift Sources Tests
package:
	./deploy/package
