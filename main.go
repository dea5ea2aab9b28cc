// Command gateway is an OpenAI-compatible AI-model API gateway: it relays
// calls to upstream providers, bills them against user and token quotas and
// serves the console, all from one binary and one data file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"gateway/api"
	"gateway/egress"
	"gateway/policy"
	"gateway/relay"
	"gateway/relay/tokenizer"
	"gateway/store"
	"gateway/ui"
	"gateway/ws"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

// Config is everything the command line and environment can set.
type Config struct {
	Addr                  string
	Data                  string
	LogLevel              string
	AllowPrivateUpstreams bool
	TrustedProxies        string
	APIRateLimit          int
	APIRateWindow         time.Duration
	CriticalRateLimit     int
	CriticalRateWindow    time.Duration
	ShutdownTimeout       time.Duration
	MaxConnsPerIP         int
	TurnstileVerifyURL    string
	StreamIdleTimeout     time.Duration
	FirstByteTimeout      time.Duration
	RelayTimeout          time.Duration
	SyncInterval          time.Duration
	DefaultToken          bool
	RootPassword          string
	NoSync                bool
	GitHubAuthorizeURL    string
	GitHubTokenURL        string
	GitHubUserURL         string
	LinuxDOAuthorizeURL   string
	LinuxDOTokenURL       string
	LinuxDOUserURL        string
	// CompactTo, when set, names the compacted copy of the data file to
	// write instead of starting the server.
	CompactTo string
}

// Main is the running program: Run starts it, Close stops it.
type Main struct {
	Config Config

	store    *store.Store
	server   *api.Server
	stopBG   context.CancelFunc
	bgWG     sync.WaitGroup
	relay    *relay.Relay // its test-all run ends before the store closes
	http     *http.Server
	hub      *ws.Hub // the live sockets, closed first on shutdown
	listener net.Listener
	// pprof is the profiler's own listener (GATEWAY_PPROF), nil when off.
	pprof net.Listener
	// endRequests cancels every request's context when the shutdown
	// timeout ran out; handlers counts the requests still being handled.
	endRequests context.CancelFunc
	handlers    sync.WaitGroup
	// writesStopped receives the error after which the store refuses
	// writes: the gateway then stops, and a restart opens the file afresh.
	writesStopped chan error
}

// envOr returns the environment value of name without surrounding
// spaces, or def when it is unset or empty (as an environment file often
// leaves it).
func envOr(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

// envReader reads the GATEWAY_* twins of the flags. A variable that is set
// but does not parse is an error at start, not a silent default, unless
// its flag is given too (the flag wins).
type envReader struct {
	errs map[string]error // by variable
}

// envParse reads name with parse: unset or empty, it is def; a value that
// does not parse is recorded, saying what was wanted, and def stands.
func envParse[T any](e *envReader, name string, def T, parse func(string) (T, error), want string) T {
	v := os.Getenv(name)
	if strings.TrimSpace(v) == "" {
		return def
	}
	x, err := parse(strings.TrimSpace(v))
	if err != nil {
		if e.errs == nil {
			e.errs = map[string]error{}
		}
		e.errs[name] = fmt.Errorf("%s=%q: not %s", name, v, want)
		return def
	}
	return x
}

// envTwin is the environment variable of a flag: --stream-idle-timeout is
// GATEWAY_STREAM_IDLE_TIMEOUT.
func envTwin(flag string) string {
	return "GATEWAY_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

func (e *envReader) int(name string, def int) int {
	return envParse(e, name, def, strconv.Atoi, "an integer")
}

func (e *envReader) duration(name string, def time.Duration) time.Duration {
	return envParse(e, name, def, time.ParseDuration, "a duration such as 30s or 5ms")
}

func (e *envReader) bool(name string, def bool) bool {
	return envParse(e, name, def, strconv.ParseBool, "true or false")
}

// seconds reads a whole number of seconds, at least least, as the
// reference's variables are written; one out of range is refused under its
// own name, not under the GATEWAY_ twin the operator did not set.
func (e *envReader) seconds(name string, def time.Duration, least int64) time.Duration {
	want := "a whole number of seconds"
	if least > 0 {
		want = "a positive whole number of seconds"
	}
	return envParse(e, name, def, func(v string) (time.Duration, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil && (n < least || n > int64(math.MaxInt64/time.Second)) {
			err = errors.New("out of range")
		}
		return time.Duration(n) * time.Second, err
	}, want)
}

// older reads the reference's name of a setting (S §12) only when the
// GATEWAY_ twin is unset, as GENERATE_DEFAULT_TOKEN is read.
func older[T any](twin string, def T, read func() T) T {
	if strings.TrimSpace(os.Getenv(twin)) != "" {
		return def
	}
	return read()
}

// olderNames are the reference's environment names of the flags.
var olderNames = map[string]string{
	"addr": "PORT", "relay-timeout": "RELAY_TIMEOUT", "stream-idle-timeout": "STREAMING_TIMEOUT", "default-token": "GENERATE_DEFAULT_TOKEN",
}

// ParseFlags reads the configuration from args, each flag defaulting to its
// GATEWAY_* environment twin; errors and the usage go to out.
func ParseFlags(args []string, out io.Writer) (Config, error) {
	var c Config
	var env envReader
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage of gateway (every flag also reads its GATEWAY_* environment twin; the flag wins):")
		fs.PrintDefaults()
		// The settings the environment alone gives.
		fmt.Fprint(fs.Output(), `Environment only:
  GATEWAY_PPROF
    	an address (e.g. 127.0.0.1:6060) for Go's profiler and execution trace (/debug/pprof/) on its own listener; unset = off
  GOGC, GOMEMLIMIT
    	Go's own; unset, the gateway uses GOGC=400 and a soft memory limit of 768 MiB
`)
	}
	addr := older("GATEWAY_ADDR", ":3000", func() string {
		return envParse(&env, "PORT", ":3000", func(v string) (string, error) {
			if n, err := strconv.Atoi(v); err != nil || n < 1 || n > 65535 {
				return "", errors.New("not a port")
			}
			return ":" + v, nil
		}, "a port number")
	})
	fs.StringVar(&c.Addr, "addr", envOr("GATEWAY_ADDR", addr), "listen address (GATEWAY_ADDR, or PORT for :PORT)")
	fs.StringVar(&c.Data, "data", envOr("GATEWAY_DATA", "data/gateway.db"), "data file; its directory is created (GATEWAY_DATA)")
	fs.StringVar(&c.LogLevel, "log-level", envOr("GATEWAY_LOG_LEVEL", "info"), "debug, info, warn or error (GATEWAY_LOG_LEVEL)")
	fs.BoolVar(&c.AllowPrivateUpstreams, "allow-private-upstreams", env.bool("GATEWAY_ALLOW_PRIVATE_UPSTREAMS", false),
		"let outbound requests reach loopback and private addresses (GATEWAY_ALLOW_PRIVATE_UPSTREAMS)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", envOr("GATEWAY_TRUSTED_PROXIES", ""),
		"comma-separated IPs or CIDRs of reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed (GATEWAY_TRUSTED_PROXIES)")
	fs.IntVar(&c.APIRateLimit, "api-rate-limit", env.int("GATEWAY_API_RATE_LIMIT", 180), "requests per window per IP on /api; 0 = off (GATEWAY_API_RATE_LIMIT)")
	fs.DurationVar(&c.APIRateWindow, "api-rate-window", env.duration("GATEWAY_API_RATE_WINDOW", 180*time.Second), "window of the /api limit (GATEWAY_API_RATE_WINDOW)")
	fs.IntVar(&c.CriticalRateLimit, "critical-rate-limit", env.int("GATEWAY_CRITICAL_RATE_LIMIT", 20),
		"requests per window per IP on login, register, verification, reset, OAuth, redeeming a code and changing a password; 0 = off (GATEWAY_CRITICAL_RATE_LIMIT)")
	fs.DurationVar(&c.CriticalRateWindow, "critical-rate-window", env.duration("GATEWAY_CRITICAL_RATE_WINDOW", 1200*time.Second), "window of the critical limit (GATEWAY_CRITICAL_RATE_WINDOW)")
	fs.IntVar(&c.MaxConnsPerIP, "max-conns-per-ip", env.int("GATEWAY_MAX_CONNS_PER_IP", 512),
		"open connections one client address (an IPv6 one: its /64) may hold; loopback and trusted proxies are not counted; 0 = no limit (GATEWAY_MAX_CONNS_PER_IP)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", env.duration("GATEWAY_SHUTDOWN_TIMEOUT", 30*time.Second), "how long in-flight requests may finish on shutdown (GATEWAY_SHUTDOWN_TIMEOUT)")
	fs.StringVar(&c.TurnstileVerifyURL, "turnstile-verify-url", envOr("GATEWAY_TURNSTILE_VERIFY_URL", ""), "Turnstile siteverify URL; default Cloudflare's (GATEWAY_TURNSTILE_VERIFY_URL)")
	fs.DurationVar(&c.StreamIdleTimeout, "stream-idle-timeout", env.duration("GATEWAY_STREAM_IDLE_TIMEOUT",
		older("GATEWAY_STREAM_IDLE_TIMEOUT", 30*time.Second, func() time.Duration { return env.seconds("STREAMING_TIMEOUT", 30*time.Second, 1) })),
		"end a stream whose upstream sends nothing for this long (GATEWAY_STREAM_IDLE_TIMEOUT, or STREAMING_TIMEOUT in seconds)")
	fs.DurationVar(&c.FirstByteTimeout, "first-byte-timeout", env.duration("GATEWAY_FIRST_BYTE_TIMEOUT", 60*time.Second), "try the next channel when a stream sends nothing for this long; negative = off (GATEWAY_FIRST_BYTE_TIMEOUT)")
	fs.DurationVar(&c.RelayTimeout, "relay-timeout", env.duration("GATEWAY_RELAY_TIMEOUT",
		older("GATEWAY_RELAY_TIMEOUT", 0, func() time.Duration { return env.seconds("RELAY_TIMEOUT", 0, 0) })),
		"bound on a whole non-stream upstream call; 0 = none (GATEWAY_RELAY_TIMEOUT, or RELAY_TIMEOUT in seconds)")
	fs.DurationVar(&c.SyncInterval, "sync", env.duration("GATEWAY_SYNC", 0),
		"0 = a response's last bytes wait for its charge to be committed; N = commit charges every N and answer at once, a crash may lose the charges of the last N and of the commit in progress (GATEWAY_SYNC)")
	// A password is taken as given, spaces and all.
	fs.StringVar(&c.RootPassword, "root-password", os.Getenv("GATEWAY_ROOT_PASSWORD"),
		"password of the root account created on first start, or of a root that still has 123456 (8-20 characters, at most 72 bytes); empty = 123456, which every login warns about (GATEWAY_ROOT_PASSWORD)")
	defaultToken := false
	if strings.TrimSpace(os.Getenv("GATEWAY_DEFAULT_TOKEN")) == "" {
		defaultToken = env.bool("GENERATE_DEFAULT_TOKEN", false) // the older name, read only alone
	}
	fs.BoolVar(&c.DefaultToken, "default-token", env.bool("GATEWAY_DEFAULT_TOKEN", defaultToken),
		"give each account registered with a password an unlimited, never-expiring API token (GATEWAY_DEFAULT_TOKEN or GENERATE_DEFAULT_TOKEN)")
	fs.StringVar(&c.GitHubAuthorizeURL, "github-authorize-url", envOr("GATEWAY_GITHUB_AUTHORIZE_URL", ""), "GitHub OAuth authorize URL; default GitHub's (GATEWAY_GITHUB_AUTHORIZE_URL)")
	fs.StringVar(&c.GitHubTokenURL, "github-token-url", envOr("GATEWAY_GITHUB_TOKEN_URL", ""), "GitHub OAuth token URL; default GitHub's (GATEWAY_GITHUB_TOKEN_URL)")
	fs.StringVar(&c.GitHubUserURL, "github-user-url", envOr("GATEWAY_GITHUB_USER_URL", ""), "GitHub user API URL; default GitHub's (GATEWAY_GITHUB_USER_URL)")
	fs.StringVar(&c.LinuxDOAuthorizeURL, "linuxdo-authorize-url", envOr("GATEWAY_LINUXDO_AUTHORIZE_URL", ""), "LinuxDO OAuth authorize URL; default LinuxDO's (GATEWAY_LINUXDO_AUTHORIZE_URL)")
	fs.StringVar(&c.LinuxDOTokenURL, "linuxdo-token-url", envOr("GATEWAY_LINUXDO_TOKEN_URL", ""), "LinuxDO OAuth token URL; default LinuxDO's (GATEWAY_LINUXDO_TOKEN_URL)")
	fs.StringVar(&c.LinuxDOUserURL, "linuxdo-user-url", envOr("GATEWAY_LINUXDO_USER_URL", ""), "LinuxDO user API URL; default LinuxDO's (GATEWAY_LINUXDO_USER_URL)")
	fs.StringVar(&c.CompactTo, "compact-to", "",
		"write a compacted copy of the data file (without the pages cleared logs left free) to this new file and exit, without starting the server; the gateway must be stopped (a flag only: no environment form, so a service never compacts at each start)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		// The flag package stops at the first word that is not a flag: the
		// flags after it would be dropped without a word (gateway serve
		// --addr 127.0.0.1:8080 listened on every interface at :3000).
		err := fmt.Errorf("%q is not a flag: the gateway takes flags only, and would ignore every flag after it", fs.Arg(0))
		fmt.Fprintln(fs.Output(), "gateway:", err)
		fs.Usage()
		return c, err
	}
	fs.Visit(func(f *flag.Flag) {
		delete(env.errs, envTwin(f.Name))
		delete(env.errs, olderNames[f.Name])
	})
	// A misspelt variable (GATEWAY_TRUSTED_PROXY) would leave its setting
	// at the default without a word: say so, and go on, as the environment
	// may hold other programs' GATEWAY_ names.
	known := map[string]bool{"GATEWAY_PPROF": true}
	fs.VisitAll(func(f *flag.Flag) { known[envTwin(f.Name)] = true })
	var unknown []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "GATEWAY_") && !known[name] {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		fmt.Fprintf(fs.Output(), "gateway: %s is not a setting of the gateway and is ignored (--help lists them)\n", name)
	}
	errs := slices.SortedFunc(maps.Values(env.errs), func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	if err := errors.Join(append(errs, c.validate()...)...); err != nil {
		// As the flag package does for the errors it finds.
		fmt.Fprintln(fs.Output(), "gateway:", err)
		return c, err
	}
	return c, nil
}

// validate refuses settings that no operator means: a negative limit or
// wait, a window of nothing, an unknown log level. Each error names the
// flag and its environment twin, whichever gave the value.
func (c *Config) validate() []error {
	var errs []error
	bad := func(flag string, v any, want string) {
		errs = append(errs, fmt.Errorf("--%s (%s) %v: want %s", flag, envTwin(flag), v, want))
	}
	// Checked here, before the data file is opened: a start that cannot
	// listen must not create the file and its root account first.
	if _, port, err := net.SplitHostPort(c.Addr); err != nil || port == "" {
		bad("addr", strconv.Quote(c.Addr), "host:port or :port, e.g. :3000 or 127.0.0.1:3000")
	}
	if strings.TrimSpace(c.Data) == "" {
		bad("data", strconv.Quote(c.Data), "the path of the data file")
	}
	if _, err := parsePrefixes(c.TrustedProxies); err != nil {
		bad("trusted-proxies", strconv.Quote(c.TrustedProxies), "comma-separated IPs or CIDRs: "+err.Error())
	}
	if c.RootPassword != "" && store.ValidatePassword(c.RootPassword) != nil {
		// The password itself stays out of the message.
		errs = append(errs, fmt.Errorf("--root-password (GATEWAY_ROOT_PASSWORD) of %d characters, %d bytes: want %d to %d characters, at most 72 bytes",
			utf8.RuneCountInString(c.RootPassword), len(c.RootPassword), store.MinPasswordLen, store.MaxPasswordLen))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		bad("log-level", strconv.Quote(c.LogLevel), "debug, info, warn or error")
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"api-rate-limit", c.APIRateLimit}, {"critical-rate-limit", c.CriticalRateLimit}, {"max-conns-per-ip", c.MaxConnsPerIP}} {
		if n.v < 0 {
			bad(n.flag, n.v, "0 (off) or more")
		}
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"api-rate-window", c.APIRateWindow}, {"critical-rate-window", c.CriticalRateWindow}, {"stream-idle-timeout", c.StreamIdleTimeout}} {
		if d.v <= 0 {
			bad(d.flag, d.v, "a positive duration")
		}
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"shutdown-timeout", c.ShutdownTimeout}, {"relay-timeout", c.RelayTimeout}, {"sync", c.SyncInterval}} {
		if d.v < 0 {
			bad(d.flag, d.v, "0 or a positive duration")
		}
	}
	if c.FirstByteTimeout == 0 {
		bad("first-byte-timeout", c.FirstByteTimeout, "a positive duration, or a negative one to turn it off")
	}
	return errs
}

func parsePrefixes(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if p, err := netip.ParsePrefix(item); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an IP nor a CIDR", item)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// logLevel is the level ParseFlags accepted; anything else (a Config built
// in code) logs at info.
func logLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// Run opens the store, builds the server and starts listening. It returns
// once the listener is open; Serve errors are logged.
func (m *Main) Run(ctx context.Context) error {
	c := m.Config
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(c.LogLevel)})))
	if os.Getenv("GOGC") == "" {
		// The relay allocates per call and the heap stays small: collecting
		// less often spends far less CPU for little memory.
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A soft ceiling, so that the heap of a few large requests does not
		// grow to five times what they hold before the next collection (as
		// GOGC=400 lets it): near the ceiling the collector runs sooner.
		debug.SetMemoryLimit(768 << 20)
	}
	trusted, err := parsePrefixes(c.TrustedProxies)
	if err != nil {
		return err
	}
	if addr := os.Getenv("GATEWAY_PPROF"); addr != "" {
		// Profiling stays off unless asked for, on its own listener; an
		// address it cannot listen on stops the start, as a bad flag does.
		pln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("GATEWAY_PPROF=%q: %w", addr, err)
		}
		m.pprof = pln
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		go http.Serve(pln, mux)
		slog.Info("pprof listening", "addr", pln.Addr().String())
	}
	// The address is taken before the data file is opened: a port in use
	// stops the start before it creates a file and its root account (and
	// logs that it did) at a path the operator did not mean to use yet.
	// Connections wait in the queue until the server is ready.
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return err
	}
	m.listener = ln
	st, err := store.Open(c.Data, store.Options{NoSync: c.NoSync})
	if err != nil {
		return err
	}
	m.store = st
	if created, err := st.EnsureRootWith(c.RootPassword); err != nil {
		return fmt.Errorf("create the first account: %w", err)
	} else if created && c.RootPassword == "" {
		slog.Warn("created the first account root / 123456: log in and change its password now")
	} else if created {
		slog.Info("created the first account root with the password from --root-password")
	}
	pol, err := policy.New()
	if err != nil {
		return err
	}
	hub := ws.NewHub()
	m.hub = hub
	// Behind a proxy that rewrites Host, the console's origin is the public
	// address root configured (ServerAddress), not the Host the gateway sees.
	hub.Origins = func() []string { return publicOrigin(st.Settings().Get("ServerAddress")) }
	out := egress.New(egress.Config{
		AllowPrivate: c.AllowPrivateUpstreams,
		AllowedHosts: func() []string { return st.Settings().List("EgressAllowedHosts") },
		// No bound on waiting for response headers: a non-stream completion
		// sends its headers only when it is done. Each caller bounds its own
		// requests with a context (--relay-timeout for the relay).
	})
	if c.SyncInterval > 0 {
		st.SetSyncInterval(c.SyncInterval)
	}
	charged := make(chan store.ChargeBatch, 1024)
	allowList := &watchedOption{value: st.Settings().Get("EgressAllowedHosts"), onChange: out.CloseIdleConnections}
	m.writesStopped = make(chan error, 1)
	st.SetHooks(store.Hooks{
		WritesStopped: func(err error) { m.writesStopped <- err },
		UserChanged: func(u *store.User) {
			api.PublishUser(hub, u)
			if srv := m.server; srv != nil {
				srv.QuotaReminder().Seen(u.ID, u.Quota)
			}
		},
		SettingsChanged: func(s *store.Settings) {
			api.PublishNotice(hub, s.Get("Notice"))
			api.PublishStatusChanged(hub)
			allowList.changed(s.Get("EgressAllowedHosts"))
		},
		// The ledger's writer hands each committed batch over and goes on
		// to the next commit; the consoles and the quota reminder are
		// served from here, in order. Should they fall 1 024 batches
		// behind, a batch is not pushed live (the pages still show it on
		// their next read) rather than holding up charges.
		Charged: func(b store.ChargeBatch) {
			select {
			case charged <- b:
			default:
				slog.Warn("live updates fell behind: a batch of charges was not pushed", "logs", len(b.Logs))
			}
		},
	})
	go func() {
		for b := range charged {
			api.PublishCharges(hub, b)
			if srv := m.server; srv != nil {
				srv.QuotaReminder().Observe(b)
			}
		}
	}()
	// One mailer for the relay's disable mails and the console's test-all
	// summary: the relay is built before the server.
	chMail := api.NewChannelMailer(st, api.NewMailFunc(st, nil, out.DialContext))
	rl := relay.New(relay.Config{
		Store: st, Client: out.HTTP(),
		ClientIP:          func(r *http.Request) string { return api.ClientIP(trusted, r) },
		Events:            api.RelayEvents{Hub: hub, Store: st, Mail: chMail},
		StreamIdleTimeout: c.StreamIdleTimeout, FirstByteTimeout: c.FirstByteTimeout, RelayTimeout: c.RelayTimeout,
	})
	m.relay = rl
	bg, stopBG := context.WithCancel(ctx)
	m.stopBG = stopBG
	// The tokenizers take a few hundred milliseconds to build: build them
	// while the listener starts, not on the first call.
	go func() {
		if err := tokenizer.Preload(); err != nil {
			slog.Warn("tokenizer unavailable: counting estimates one token per four bytes", "err", err)
		}
	}()
	m.bgWG.Add(2)
	go func() {
		defer m.bgWG.Done()
		rl.RunPeriodicTests(bg, time.Minute)
	}()
	go func() {
		defer m.bgWG.Done()
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			select {
			case <-bg.Done():
				return
			case <-t.C:
				if n, err := st.PurgeExpiredSessions(); err != nil {
					slog.Error("purge sessions", "err", err)
				} else if n > 0 {
					slog.Info("purged expired sessions", "count", n)
				}
				if n, err := st.PurgeExpiredCodes(); err != nil {
					slog.Error("purge verification codes", "err", err)
				} else if n > 0 {
					slog.Info("purged expired verification codes", "count", n)
				}
			}
		}
	}()
	m.server = api.New(api.Config{
		Store: st, Policy: pol, Hub: hub, HTTPClient: out.HTTP(), MailDial: out.DialContext, UI: ui.FS(), Relay: rl, ChannelMail: chMail,
		TrustedProxies:     trusted,
		DefaultToken:       c.DefaultToken,
		APIRateLimit:       api.RateLimit{N: c.APIRateLimit, Window: c.APIRateWindow},
		CriticalRateLimit:  api.RateLimit{N: c.CriticalRateLimit, Window: c.CriticalRateWindow},
		TurnstileVerifyURL: c.TurnstileVerifyURL,
		GitHubAuthorizeURL: c.GitHubAuthorizeURL, GitHubTokenURL: c.GitHubTokenURL, GitHubUserURL: c.GitHubUserURL,
		LinuxDOAuthorizeURL: c.LinuxDOAuthorizeURL, LinuxDOTokenURL: c.LinuxDOTokenURL, LinuxDOUserURL: c.LinuxDOUserURL,
		Version: Version,
	})
	ln = limitPerIP(m.listener, c.MaxConnsPerIP, trusted)
	reqCtx, endRequests := context.WithCancel(context.Background())
	m.endRequests = endRequests
	m.http = &http.Server{
		Handler: bodyDeadlines(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m.handlers.Add(1)
			defer m.handlers.Done()
			m.server.ServeHTTP(w, r)
		})),
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20,
	}
	go func() {
		if err := m.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("serve", "err", err)
		}
	}()
	// The file's full path: a relative one is read from the working
	// directory, which a service manager sets (systemd: /) where the
	// operator may not look.
	data := c.Data
	if abs, err := filepath.Abs(data); err == nil {
		data = abs
	}
	slog.Info("gateway listening", "addr", ln.Addr().String(), "data", data, "version", Version)
	return nil
}

// Close stops accepting requests, lets in-flight ones finish within the
// shutdown timeout, and closes the store cleanly.
func (m *Main) Close() error {
	var errs []error
	if m.stopBG != nil {
		m.stopBG()
		m.bgWG.Wait()
	}
	if m.http != nil {
		// Shutdown does not wait for hijacked connections, and ending the
		// requests cuts them: the live sockets are sent their 1001 beside
		// it, and the requests end only once each was answered (or its
		// write timeout passed), so consoles and scripts know to reconnect
		// to the next process (some got 1000 or no close frame at all).
		// The listener closes at once meanwhile: a socket whose client
		// never answers keeps no new call coming in.
		sockets := make(chan struct{})
		go func() {
			m.hub.CloseAll()
			close(sockets)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
		err := m.http.Shutdown(ctx)
		<-sockets
		if err != nil {
			// Requests still running (long streams) are ended as if their
			// clients had left: each bills what it produced, and the store
			// closes only after they have (a charge needs the ledger).
			slog.Warn("shutdown timeout: ending the requests still running", "err", err)
			m.endRequests()
			done := make(chan struct{})
			go func() {
				m.handlers.Wait()
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				errs = append(errs, errors.New("requests still running 10 s after they were ended"))
			}
		}
		cancel()
		m.endRequests()
	}
	if m.http == nil && m.listener != nil {
		// A start that failed after taking the address frees it.
		m.listener.Close()
	}
	if m.pprof != nil {
		m.pprof.Close()
	}
	if m.server != nil {
		m.server.Close()
	}
	if m.relay != nil {
		m.relay.Close()
	}
	if m.store != nil {
		if err := m.store.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func main() {
	cfg, err := ParseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	if cfg.CompactTo != "" {
		before, after, err := store.Compact(cfg.Data, cfg.CompactTo)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gateway:", err)
			os.Exit(1)
		}
		fmt.Printf("compacted %s (%d bytes) into %s (%d bytes); with the gateway stopped, put the copy in the data file's place\n",
			cfg.Data, before, cfg.CompactTo, after)
		return
	}
	m := &Main{Config: cfg}
	// A hangup (the terminal that started it closed) stops the gateway as
	// SIGTERM does: Go's default for it is to die at once, running streams
	// unbilled and charges not yet committed lost. Started with it ignored
	// (nohup), it stays ignored: asking for it would undo that.
	stopOn := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		stopOn = append(stopOn, syscall.SIGHUP)
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopOn...)
	// The same hangup ends a reader of its output (gateway | tee log): a
	// log line written to the closed pipe would otherwise kill it at once,
	// in the middle of the shutdown or of streams it serves. Such lines
	// are lost; the gateway goes on.
	signal.Ignore(syscall.SIGPIPE)
	defer stop()
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		m.Close()
		os.Exit(1)
	}
	select {
	case <-ctx.Done():
		slog.Info("shutting down")
	case err := <-m.writesStopped:
		slog.Error("stopping: the data file reported a write failure; start the gateway again once the disk is sound", "err", err)
		m.Close()
		os.Exit(1)
	}
	if err := m.Close(); err != nil {
		slog.Error("shutdown", "err", err)
		os.Exit(1)
	}
}

// watchedOption calls onChange when an option's value changes, e.g. to drop
// pooled connections to hosts an administrator took off EgressAllowedHosts
// (a pooled connection is not dialled, so not checked, again).
type watchedOption struct {
	mu       sync.Mutex
	value    string
	onChange func()
}

func (w *watchedOption) changed(v string) {
	w.mu.Lock()
	differs := v != w.value
	w.value = v
	w.mu.Unlock()
	if differs {
		w.onChange()
	}
}

// publicOrigin is the origin of the configured public address as a
// WebSocket origin pattern: scheme and host, without the scheme's default
// port (browsers leave it out of Origin), the pattern's special characters
// escaped (an IPv6 host's brackets); none when it is unset or not a URL.
func publicOrigin(address string) []string {
	u, err := url.Parse(strings.TrimSpace(address))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil
	}
	host := u.Host
	if p := u.Port(); (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		host = strings.TrimSuffix(host, ":"+p)
	}
	escape := strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`)
	return []string{u.Scheme + "://" + escape.Replace(host)}
}
