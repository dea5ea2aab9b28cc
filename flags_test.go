package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// Settings no operator means are refused at start, each named, whether
// they come from a flag or from its GATEWAY_* twin; good ones pass.
func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   map[string]string
		args  []string
		want  []string // parts of the error; none: accepted
		check func(Config) bool
	}{
		{name: "defaults"},
		{name: "good values", env: map[string]string{"GATEWAY_SYNC": "5ms", "GATEWAY_API_RATE_LIMIT": " 0 ", "GATEWAY_ALLOW_PRIVATE_UPSTREAMS": "true"},
			args: []string{"--first-byte-timeout", "-1s", "--log-level", "warn"}},
		{name: "unparsable environment", env: map[string]string{"GATEWAY_SYNC": "5", "GATEWAY_API_RATE_WINDOW": "180", "GATEWAY_MAX_CONNS_PER_IP": "many", "GATEWAY_DEFAULT_TOKEN": "yes please"},
			want: []string{`GATEWAY_SYNC="5"`, `GATEWAY_API_RATE_WINDOW="180"`, `GATEWAY_MAX_CONNS_PER_IP="many"`, `GATEWAY_DEFAULT_TOKEN="yes please"`}},
		{name: "empty environment values are unset", env: map[string]string{"GATEWAY_SYNC": "", "GATEWAY_LOG_LEVEL": " ", "GATEWAY_ADDR": ""},
			check: func(c Config) bool { return c.Addr == ":3000" && c.LogLevel == "info" && c.SyncInterval == 0 }},
		{name: "values lose their spaces", env: map[string]string{"GATEWAY_LOG_LEVEL": "warn ", "GATEWAY_ADDR": " 127.0.0.1:8080"},
			check: func(c Config) bool { return c.Addr == "127.0.0.1:8080" && c.LogLevel == "warn" }},
		{name: "a flag wins over a bad twin", env: map[string]string{"GATEWAY_SYNC": "5", "GENERATE_DEFAULT_TOKEN": "maybe"}, args: []string{"--sync", "5ms", "--default-token"},
			check: func(c Config) bool { return c.SyncInterval == 5*time.Millisecond && c.DefaultToken }},
		{name: "the older default-token name is read only alone", env: map[string]string{"GATEWAY_DEFAULT_TOKEN": "true", "GENERATE_DEFAULT_TOKEN": "maybe"},
			check: func(c Config) bool { return c.DefaultToken }},
		{name: "the older default-token name alone", env: map[string]string{"GENERATE_DEFAULT_TOKEN": "true"},
			check: func(c Config) bool { return c.DefaultToken }},
		{name: "a meaningless twin", env: map[string]string{"GATEWAY_STREAM_IDLE_TIMEOUT": "0s"}, want: []string{"--stream-idle-timeout (GATEWAY_STREAM_IDLE_TIMEOUT) 0s"}},
		{name: "meaningless flags", args: []string{"--stream-idle-timeout", "-1s", "--first-byte-timeout", "0", "--api-rate-window", "0", "--critical-rate-limit", "-1", "--sync", "-5ms", "--log-level", "loud"},
			want: []string{"--stream-idle-timeout", "--first-byte-timeout", "--api-rate-window", "--critical-rate-limit", "--sync", "--log-level"}},
		{name: "an address without a port, an empty data path, a bad proxy", args: []string{"--addr", "3000", "--data", "", "--trusted-proxies", "10.0.0.1/33"},
			want: []string{`--addr (GATEWAY_ADDR) "3000"`, `--data (GATEWAY_DATA) ""`, `--trusted-proxies (GATEWAY_TRUSTED_PROXIES) "10.0.0.1/33"`}},
		{name: "a root password the account rules refuse", env: map[string]string{"GATEWAY_ROOT_PASSWORD": "short"},
			want: []string{"--root-password (GATEWAY_ROOT_PASSWORD) of 5 characters"}},
		{name: "a root password of 21 characters", args: []string{"--root-password", strings.Repeat("x", 21)}, want: []string{"--root-password"}},
		{name: "a root password the rules take", env: map[string]string{"GATEWAY_ROOT_PASSWORD": " spaced pw "},
			check: func(c Config) bool { return c.RootPassword == " spaced pw " }},
		{name: "an empty address", args: []string{"--addr="}, want: []string{`--addr (GATEWAY_ADDR) ""`}},
		{name: "a bad proxy from the environment", env: map[string]string{"GATEWAY_TRUSTED_PROXIES": "10.0.0.1, proxy.local"},
			want: []string{`--trusted-proxies (GATEWAY_TRUSTED_PROXIES)`, `"proxy.local"`}},
		{name: "addresses that listen", env: map[string]string{"GATEWAY_TRUSTED_PROXIES": "10.0.0.1, 172.16.0.0/12,::1"}, args: []string{"--addr", "[::1]:0"},
			check: func(c Config) bool { return c.Addr == "[::1]:0" }},
		{name: "the reference's environment names (S §12) read alone", env: map[string]string{"PORT": "8080", "RELAY_TIMEOUT": "60", "STREAMING_TIMEOUT": "120"},
			check: func(c Config) bool {
				return c.Addr == ":8080" && c.RelayTimeout == 60*time.Second && c.StreamIdleTimeout == 120*time.Second
			}},
		{name: "the GATEWAY_ names win over the reference's", env: map[string]string{"PORT": "8080", "GATEWAY_ADDR": "127.0.0.1:9000", "RELAY_TIMEOUT": "x", "GATEWAY_RELAY_TIMEOUT": "5s"},
			check: func(c Config) bool { return c.Addr == "127.0.0.1:9000" && c.RelayTimeout == 5*time.Second }},
		{name: "a meaningless reference name is named, not its GATEWAY_ twin", env: map[string]string{"STREAMING_TIMEOUT": "0", "RELAY_TIMEOUT": "-5"},
			want: []string{`STREAMING_TIMEOUT="0"`, `RELAY_TIMEOUT="-5"`}},
		{name: "a reference timeout too large for a duration", env: map[string]string{"RELAY_TIMEOUT": "20000000000"},
			want: []string{`RELAY_TIMEOUT="20000000000"`}},
		{name: "a bad reference name", env: map[string]string{"PORT": "http", "STREAMING_TIMEOUT": "30s"},
			want: []string{`PORT="http"`, `STREAMING_TIMEOUT="30s"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			cfg, err := ParseFlags(c.args, io.Discard)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if c.check != nil && !c.check(cfg) {
					t.Fatalf("read %+v", cfg)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted %+v", cfg)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not name %s: %v", w, err)
				}
			}
		})
	}
	clearEnv(t)
	cfg, err := ParseFlags([]string{"--sync", "5ms"}, io.Discard)
	if err != nil || cfg.SyncInterval != 5*time.Millisecond || cfg.StreamIdleTimeout != 30*time.Second {
		t.Fatalf("%+v, %v", cfg, err)
	}
}

// A word that is not a flag is refused: the flag package would stop there
// and drop the flags after it.
func TestParseFlagsRefusesAWordThatIsNoFlag(t *testing.T) {
	clearEnv(t)
	var out strings.Builder
	cfg, err := ParseFlags([]string{"serve", "--addr", "127.0.0.1:8080"}, &out)
	if err == nil {
		t.Fatalf("accepted, listening on %q", cfg.Addr)
	}
	if !strings.Contains(out.String(), `"serve" is not a flag`) {
		t.Errorf("the refusal does not name the word:\n%s", out.String())
	}
	if _, err := ParseFlags([]string{"--addr", "127.0.0.1:8080", "gw.db"}, io.Discard); err == nil {
		t.Error("a word after the flags is accepted")
	}
}

// A GATEWAY_ variable that names no setting (a misspelt twin) is told at
// start, while every twin, GATEWAY_PPROF and GATEWAY_ROOT_PASSWORD pass
// without a word.
func TestUnknownGatewayVariableIsTold(t *testing.T) {
	clearEnv(t)
	t.Setenv("GATEWAY_TRUSTED_PROXY", "10.0.0.1")
	for _, name := range []string{"GATEWAY_TRUSTED_PROXIES", "GATEWAY_PPROF", "GATEWAY_ROOT_PASSWORD", "GATEWAY_SYNC", "GATEWAY_LINUXDO_USER_URL"} {
		t.Setenv(name, "")
	}
	var out strings.Builder
	if _, err := ParseFlags(nil, &out); err != nil {
		t.Fatalf("refused: %v", err)
	}
	if !strings.Contains(out.String(), "GATEWAY_TRUSTED_PROXY is not a setting") {
		t.Errorf("a misspelt variable is not told:\n%s", out.String())
	}
	if n := strings.Count(out.String(), "is not a setting"); n != 1 {
		t.Errorf("%d variables told, want the misspelt one:\n%s", n, out.String())
	}
}

// --help names every setting the README's configuration table lists: the
// environment variables without a flag (GATEWAY_PPROF, Go's GOGC and
// GOMEMLIMIT with the gateway's own defaults) too.
func TestHelpNamesEverySetting(t *testing.T) {
	clearEnv(t)
	var out strings.Builder
	if _, err := ParseFlags([]string{"--help"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"-addr", "GATEWAY_ADDR", "-sync", "GATEWAY_SYNC", "GATEWAY_PPROF", "/debug/pprof/", "GOGC", "400", "GOMEMLIMIT", "768 MiB"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not mention %s:\n%s", want, out.String())
		}
	}
}

// clearEnv unsets every GATEWAY_* variable for the test.
func clearEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GATEWAY_") || name == "GENERATE_DEFAULT_TOKEN" || name == "PORT" || name == "RELAY_TIMEOUT" || name == "STREAMING_TIMEOUT" {
			t.Setenv(name, "") // restored after the test
			os.Unsetenv(name)
		}
	}
}
