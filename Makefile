# Thin entry points; the scripts do the work.
.PHONY: demo test build release bench format package pi-check
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
pi-check:
	./Tests/Pi/pi-check.sh
