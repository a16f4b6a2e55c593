# The two commands a newcomer needs: `make run` and `make test`.
BUILD ?= build
INVENTORY ?= inventories/local.toml
CMAKE_FLAGS ?= -DCLUSTERCHECK_WERROR=ON
JOBS ?= $(shell nproc)

.PHONY: deps configure build programs run test package clean format

deps:
	@./scripts/install-deps.sh

configure: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null; fi

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Only what `run` runs (controller, agent, probes): the tests are most of
# the build, and `make test` builds them.
programs: configure
	@cmake --build $(BUILD) -j $(JOBS) --target programs

run: programs
	$(BUILD)/clustercheck run $(INVENTORY)

# A simulated 6-node cluster with two faults, diagnosed (root; scripts/demo.sh).
.PHONY: demo
demo: programs
	@./scripts/demo.sh $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

# The .deb (CPack) of what `programs` builds: controller, agent, probes,
# inventories, man page. Not `--target package`, which builds the tests too.
package: programs
	@cd $(BUILD) && cpack -G DEB

clean:
	rm -rf $(BUILD)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h' '*.c' | grep -v '^tests/fixtures/')
