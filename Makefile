# The two commands a newcomer needs: `make run` and `make test`.
BUILD ?= build
INVENTORY ?= inventories/local.toml
CMAKE_FLAGS ?= -DCLUSTERCHECK_WERROR=ON
JOBS ?= $(shell nproc)

.PHONY: deps build run test clean format

deps:
	@./scripts/install-deps.sh

build: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null; fi
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/clustercheck run $(INVENTORY)

# A simulated 6-node cluster with two faults, diagnosed (root; scripts/demo.sh).
.PHONY: demo
demo: build
	@./scripts/demo.sh $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

clean:
	rm -rf $(BUILD)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')
