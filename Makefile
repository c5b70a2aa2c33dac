# roomsim - wave-based room acoustics.
#
#   make            build build/roomsim (CUDA parts too when nvcc is found; CUDA=0 forces off;
#                   MPI for several ranks when Open MPI is found; MPI=0 forces off)
#   make deps       install the missing Debian -dev packages (apt-get); nothing when all are there
#   make run        deps, build, simulate examples/shoebox.yaml, print where the WAVs went
#   make test       deps, build, the full test suite (no GPU needed), the programs in parallel
#   make test-stress  the suite five times in a row beside a busy loop per core and a disk writer
#   make bench      the CPU benchmark of docs/performance.md
#   make sanitize   the test suite under AddressSanitizer and UndefinedBehaviorSanitizer
#   make fuzz       a long batch of mutated rooms and meshes (tests/test_fuzz.c)
#
# Every variable below may be overridden: make CC=clang OPT=-O2 CUDA=0.

VERSION   := 0.1.0
CC        ?= cc
OPT       ?= -O3
WERROR    ?= -Werror
NVCC      ?= nvcc
CUDA_ARCH ?= sm_90
BUILD     ?= build
EXAMPLE   ?= examples/shoebox.yaml
JOBS      ?= $(shell nproc 2>/dev/null || echo 1)

# pkg-config module:Debian package, cmd/NAME:package for programs, hdr/PATH:package for a
# library without a pkg-config module (Embree 3: its header under /usr/include).
DEPS_BUILD := cmd/pkg-config:pkg-config yaml-0.1:libyaml-dev sndfile:libsndfile1-dev \
              soxr:libsoxr-dev hdf5:libhdf5-dev lapacke:liblapacke-dev \
              assimp:libassimp-dev libpng:libpng-dev fftw3:libfftw3-dev cairo:libcairo2-dev \
              hdr/embree3/rtcore.h:libembree-dev libmysofa:libmysofa-dev
DEPS_TEST  := cmocka:libcmocka-dev cmd/h5dump:hdf5-tools cmd/python3:python3 cmd/ffmpeg:ffmpeg \
              ompi-c:libopenmpi-dev cmd/mpirun:openmpi-bin
BUILD_MODULES := yaml-0.1 sndfile soxr hdf5 lapacke assimp libpng fftw3 cairo libmysofa

GIT_HASH := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell \
              git diff --quiet HEAD 2>/dev/null || echo -dirty)

# CUDA: on when nvcc is found and there are kernels to build, unless CUDA=0.
CU_SRCS := $(wildcard solver/cuda/*.cu)
CUDA    ?= $(if $(and $(CU_SRCS),$(shell command -v $(NVCC) 2>/dev/null)),1,0)

PKG_CFLAGS = $(shell pkg-config --cflags $(BUILD_MODULES) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(BUILD_MODULES) 2>/dev/null)
WARN     := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wundef -Wvla $(WERROR)
CPPFLAGS += -D_DEFAULT_SOURCE -DROOMSIM_VERSION='"$(VERSION)"' -DROOMSIM_GIT='"$(GIT_HASH)"'
CFLAGS   ?= $(OPT) -g
# No FP contraction: the CPU engine is the oracle and rounds the same on every x86-64 machine
# (the CUDA kernels are built with -fmad=false for the same reason).
CFLAGS   += -std=c11 -fopenmp -pthread -ffp-contract=off $(WARN)
# Embree 3 (the geometric engine's ray casting) has no pkg-config module; FFTW's threads
# library makes its planner safe for the geometric engine's thread beside the outputs.
LDLIBS    = $(PKG_LIBS) -lembree3 -lfftw3_threads -lm
ifeq ($(CUDA),1)
CUDA_HOME ?= $(abspath $(dir $(shell command -v $(NVCC)))..)
CPPFLAGS += -DROOMSIM_CUDA=1
# -fmad=false: no FMA contraction, so kernels round exactly as the CPU engine does.
NVFLAGS  ?= -O3 -arch=$(CUDA_ARCH) -lineinfo
NVFLAGS  += -std=c++17 -fmad=false -Xptxas -v -Xcompiler -Wall -Xcompiler -fopenmp
# Each host thread its own default stream, which the step loop's CUDA graphs capture.
NVFLAGS  += --default-stream per-thread
# cudart is linked statically: the binary needs only the driver on the GPU machine, and
# runs (CPU engine) where there is none.
LDLIBS   += -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lpthread -lstdc++
endif

# MPI: on when Open MPI's pkg-config module is found, unless MPI=0 (docs/parallel.md).
MPI ?= $(shell pkg-config --exists ompi-c 2>/dev/null && echo 1 || echo 0)
ifeq ($(MPI),1)
CPPFLAGS += -DROOMSIM_MPI=1
PKG_CFLAGS += $(shell pkg-config --cflags ompi-c 2>/dev/null)
LDLIBS   += $(shell pkg-config --libs ompi-c 2>/dev/null)
endif

LIB_SRCS := $(wildcard common/*.c model/*.c geometry/*.c io/*.c solver/*.c solver/ga/*.c)
APP_SRCS := $(wildcard app/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/library_yaml.o \
            $(if $(filter 1,$(CUDA)),$(CU_SRCS:%.cu=$(BUILD)/%.o))
APP_OBJS := $(APP_SRCS:%.c=$(BUILD)/%.o)
HEADERS  := $(wildcard common/*.h model/*.h geometry/*.h io/*.h solver/*.h solver/ga/*.h)

TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
TEST_LIBS  = $(shell pkg-config --libs cmocka 2>/dev/null)

GPU_TEST  := $(BUILD)/tests/gpu/test_gpu

.PHONY: all deps check-deps check-test-deps run test test-stress tests check-headers bench clean \
        gpu-test gpu-bundle sanitize fuzz

all: check-deps $(BUILD)/roomsim

# Report what is missing, by package, for the modules of $(1); sets $$missing.
define find_missing
missing=""; for d in $(1); do name=$${d%%:*}; pkg=$${d#*:}; \
  case $$name in cmd/*) command -v $${name#cmd/} >/dev/null 2>&1 || missing="$$missing $$pkg";; \
  hdr/*) [ -f /usr/include/$${name#hdr/} ] || missing="$$missing $$pkg";; \
  *) pkg-config --exists $$name 2>/dev/null || missing="$$missing $$pkg";; esac; done
endef

check-deps:
	@$(call find_missing,$(DEPS_BUILD)); if [ -n "$$missing" ]; then \
	  echo "roomsim: missing build dependencies:$$missing" >&2; \
	  echo "roomsim: run 'make deps' (apt-get install$$missing)" >&2; exit 1; fi

check-test-deps:
	@$(call find_missing,$(DEPS_BUILD) $(DEPS_TEST)); if [ -n "$$missing" ]; then \
	  echo "roomsim: missing test dependencies:$$missing" >&2; \
	  echo "roomsim: run 'make deps' (apt-get install$$missing)" >&2; exit 1; fi

deps:
	@$(call find_missing,$(DEPS_BUILD) $(DEPS_TEST)); \
	if [ -z "$$missing" ]; then echo "deps: all present"; exit 0; fi; \
	echo "deps: installing$$missing"; sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	$$sudo apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing

$(BUILD)/roomsim: $(APP_OBJS) $(BUILD)/libroomsim.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libroomsim.a: $(LIB_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP -c -o $@ $<

# The materials library goes into the binary as bytes (a string literal would pass the 4095
# characters ISO C promises), NUL-terminated.
$(BUILD)/gen/library_yaml.c: materials/library.yaml
	@mkdir -p $(dir $@)
	{ echo '/* generated from materials/library.yaml by the Makefile */'; \
	  echo 'extern const char materials_library_yaml[];'; \
	  echo 'const char materials_library_yaml[] = {'; \
	  od -An -v -td1 $< | sed 's/\(-*[0-9][0-9]*\)/\1,/g'; echo '0 };'; } > $@

# The kernels share the grid's and the room's structs with the C side: rebuild when they change.
$(BUILD)/%.o: %.cu $(wildcard solver/cuda/*.h solver/cuda/*.cuh) geometry/voxel.h model/room.h model/mesh.h \
              solver/fdtd.h solver/kernels.h solver/stencil.h
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c -o $@ $< 2> $(@:.o=.ptxas.txt) || { cat $(@:.o=.ptxas.txt); exit 1; }

$(BUILD)/tests/%: tests/%.c tests/helper.c tests/helper.h $(BUILD)/libroomsim.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PKG_CFLAGS) -o $@ $< tests/helper.c \
	  $(BUILD)/libroomsim.a $(TEST_LIBS) $(LDLIBS)

# test_gpu is made of the files of tests/gpu/ (gpu.h).
$(GPU_TEST): $(wildcard tests/gpu/test_gpu*.c) tests/gpu/gpu.h tests/helper.c tests/helper.h \
             $(BUILD)/libroomsim.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PKG_CFLAGS) -o $@ $(filter %.c,$^) $(BUILD)/libroomsim.a \
	  $(TEST_LIBS) $(LDLIBS)

# The objects that print the version rebuild when the commit changes.
$(BUILD)/version.stamp: FORCE
	@mkdir -p $(BUILD); echo "$(VERSION) $(GIT_HASH)" > $@.new; \
	  cmp -s $@.new $@ && rm -f $@.new || mv $@.new $@
$(BUILD)/app/main.o $(BUILD)/io/rirs.o: $(BUILD)/version.stamp
FORCE:

# Each public header compiles on its own (STYLE.md rule 13).
check-headers:
	@for h in $(HEADERS); do echo "#include \"$$h\"" | \
	  $(CC) -std=c11 -pedantic -Werror -D_DEFAULT_SOURCE $(PKG_CFLAGS) -I. -x c -fsyntax-only - \
	  || { echo "not self-contained: $$h"; exit 1; }; done

tests: check-test-deps all $(TEST_BINS)

run:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	$(BUILD)/roomsim run $(EXAMPLE)
	@echo "WAVs are in $$(sed -n 's/^ *dir: *//p' $(EXAMPLE) | head -n 1)/ (see docs/output.md)"

# tests/run.sh runs the programs TEST_JOBS at a time (default: one per core), longest first.
test:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory -j$(JOBS) tests
	@tests/run.sh $(BUILD)

# The suite STRESS_RUNS times (default 5) on a saturated machine (tests/stress.sh).
test-stress:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory -j$(JOBS) tests
	@tests/stress.sh $(BUILD)

bench: all
	$(BUILD)/roomsim bench

# The suite under AddressSanitizer and UndefinedBehaviorSanitizer: a CPU build of its own in
# build-san (nvcc's objects are not instrumented), any report fails the test that made it.
# Leaks inside system libraries are left out by tests/lsan.supp; ranks under mpirun run
# without the leak check (Open MPI unloads its components before LeakSanitizer reports).
# SAN_SKIP: the programs of long runs only (modes, decay, the uniform mode's drift), whose
# steps the others take too, and which make test runs uninstrumented. Instrumented on the
# development machine (2 cores) they took 1166, 689 and 426 s of the 6865 s that every
# program took, and the whole suite 3423 s.
SAN_SKIP ?= test_modes test_decay test_dc
SAN_TESTS = $(filter-out $(SAN_SKIP),$(TEST_SRCS:tests/%.c=%)) bad_input
SAN_OPT ?= -O2 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
           -fno-omit-frame-pointer
SAN_ENV := ASAN_OPTIONS=abort_on_error=0:detect_leaks=1:exitcode=86 \
           LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
sanitize:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=build-san CUDA=0 OPT="$(SAN_OPT)" tests
	@$(SAN_ENV) TESTS="$(SAN_TESTS)" tests/run.sh build-san

# A long fuzz batch (tests/test_fuzz.c) with a fresh seed, or FUZZ_SEED=N to replay one;
# FUZZ_CASES mutated rooms and as many meshes. Failing cases are kept in
# /tmp/roomsim-fuzz-failures.
FUZZ_CASES ?= 5000
fuzz: check-test-deps all $(BUILD)/tests/test_fuzz
	FUZZ_CASES=$(FUZZ_CASES) FUZZ_SEED=$${FUZZ_SEED:-$$(date +%s)} ROOMSIM=$(BUILD)/roomsim \
	  CMOCKA_MESSAGE_OUTPUT=TAP $(BUILD)/tests/test_fuzz

# On a machine with a GPU (and the libraries): every kernel against the CPU engine.
gpu-test: check-test-deps all
	@[ "$(CUDA)" = 1 ] || { echo "gpu-test: needs a CUDA build (nvcc not found)" >&2; exit 1; }
	@$(MAKE) --no-print-directory $(GPU_TEST)
	CMOCKA_MESSAGE_OUTPUT=TAP ROOMSIM=$(BUILD)/roomsim $(GPU_TEST)

# For a GPU machine without the -dev libraries: .gpu/ holds the binaries and their libraries
# (carry it there and run tests/gpu/device.sh).
gpu-bundle: all $(GPU_TEST)
	../shared/tools/gpu-bundle .gpu $(BUILD)/roomsim $(GPU_TEST)
	strip --strip-debug .gpu/bin/*	# the carry to the GPU machine is limited to 64 MiB

clean:
	rm -rf $(BUILD) build-cpu build-san .gpu

-include $(LIB_OBJS:.o=.d) $(APP_OBJS:.o=.d)
