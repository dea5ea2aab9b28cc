# make run   builds the console and the gateway, then starts it on :3000
# make test  runs go vet, every Go test with -race, and the browser tests
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.Version=$(VERSION)

.PHONY: run build ui gateway test vet test-go test-e2e chromium bench clean

run: build
	./gateway

build: ui gateway

gateway:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o gateway .

ui/node_modules/.installed: ui/package.json ui/package-lock.json
	cd ui && npm ci --no-audit --no-fund
	touch $@

ui: ui/node_modules/.installed
	cd ui && npm run build

test: build vet test-go test-e2e

vet:
	$(GO) vet ./...

test-go:
	$(GO) test -race -count=1 ./...

# apt-get needs root: another user installs through sudo.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

chromium:
	@[ -n "$$CHROMIUM_BIN" ] || command -v chromium >/dev/null 2>&1 || ($(SUDO) apt-get update && $(SUDO) apt-get install -y chromium)

# The browser tests use CHROMIUM_BIN when set, else the chromium on the path.
test-e2e: chromium
	cd ui && GATEWAY_BIN=$(CURDIR)/gateway CHROMIUM_BIN="$${CHROMIUM_BIN:-$$(command -v chromium)}" npm run test:e2e

bench:
	bash bench/run.sh

clean:
	rm -rf gateway ui/dist/* ui/.parcel-cache
