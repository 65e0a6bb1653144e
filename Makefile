# Thin entry points; the scripts do the work.
.PHONY: demo test test-swift-6.0 stress build release bench bench-adverts format package pi-check fuzz sanitize faults soak
demo:
	./scripts/demo.sh
test:
	./scripts/test.sh
test-swift-6.0:
	./scripts/test-swift-6.0.sh
stress:
	$(if $(N),STRESS_RUNS=$(N)) ./scripts/stress.sh
build:
	swift build
release:
	swift build -c release
bench:
	./bench/run.sh
bench-adverts:
	./bench/adverts.sh
format:
	swift format --in-place --recursive Package.swift Sources Tests Fuzz/Package.swift Fuzz/Sources
package:
	./deploy/package
pi-check:
	./Tests/Pi/pi-check.sh
fuzz:
	./scripts/fuzz.sh
sanitize:
	./scripts/sanitize.sh
faults:
	./Tests/Faults/run.sh faults
soak:
	./Tests/Faults/run.sh soak
