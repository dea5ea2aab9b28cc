// Package api serves the console REST API under /api, the live WebSocket and
// the embedded console, and mounts the relay's OpenAI-compatible routes.
package api

import (
	"context"
	"crypto/x509"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"time"

	"gateway/policy"
	"gateway/relay"
	"gateway/store"
	"gateway/ws"
)

// Config wires a Server to its dependencies.
type Config struct {
	Store  *store.Store
	Policy *policy.Policy
	Hub    *ws.Hub
	// HTTPClient is the guarded egress client for URLs that users or
	// administrators supply (Turnstile, OAuth providers, upstreams).
	HTTPClient *http.Client
	// UI is the built console; nil or empty serves a short notice.
	UI fs.FS
	// Relay serves /v1 and /dashboard, the playground and channel tests.
	Relay *relay.Relay

	TrustedProxies    []netip.Prefix
	APIRateLimit      RateLimit
	CriticalRateLimit RateLimit

	// TurnstileVerifyURL is Cloudflare's siteverify endpoint; tests point it
	// at a local double.
	TurnstileVerifyURL string
	// MailRootCAs, when set, replaces the system roots for SMTP (tests).
	MailRootCAs *x509.CertPool
	// MailDial, when set, opens SMTP connections (main passes the guarded
	// egress dialer, so the SMTP server obeys the same address rules as
	// every other outbound request).
	MailDial func(ctx context.Context, network, addr string) (net.Conn, error)
	// ChannelMail mails root about channel health; give the relay's
	// RelayEvents the same one. Nil builds one that sends with the SMTP
	// settings in force (the relay New builds when Relay is nil uses it).
	ChannelMail *ChannelMailer

	// Third-party login endpoints; empty means the provider's real one
	// (DefaultGitHubTokenURL and friends). Tests point them at local
	// doubles. The authorize URLs reach the console through /api/status.
	GitHubAuthorizeURL  string
	GitHubTokenURL      string
	GitHubUserURL       string
	LinuxDOAuthorizeURL string
	LinuxDOTokenURL     string
	LinuxDOUserURL      string

	// DefaultToken gives every account created by password registration its
	// first API token (S §3.2's GENERATE_DEFAULT_TOKEN).
	DefaultToken bool

	Version   string
	StartTime time.Time
}

// Server is the HTTP front of the gateway.
type Server struct {
	cfg       Config
	ping      lastPing // GET /api/status/test
	store     *store.Store
	policy    *policy.Policy
	hub       *ws.Hub
	mux       *patternMux
	handler   http.Handler
	routes    []route
	cors      map[string]bool // paths that allow other origins
	apiLimit  *limiter
	critical  *limiter
	ips       *clientIPs
	turnstile *turnstileGuard
}

type route struct {
	Method, Path string
	Critical     bool
}

// New builds the server and its routes.
func New(cfg Config) *Server {
	if cfg.StartTime.IsZero() {
		cfg.StartTime = time.Now()
	}
	if cfg.TurnstileVerifyURL == "" {
		cfg.TurnstileVerifyURL = "https://challenges.cloudflare.com/turnstile/v0/siteverify"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	s := &Server{
		cfg:       cfg,
		store:     cfg.Store,
		policy:    cfg.Policy,
		hub:       cfg.Hub,
		mux:       &patternMux{ServeMux: http.NewServeMux()},
		cors:      map[string]bool{},
		apiLimit:  newLimiter(cfg.APIRateLimit),
		critical:  newLimiter(cfg.CriticalRateLimit),
		ips:       &clientIPs{trusted: cfg.TrustedProxies},
		turnstile: newTurnstileGuard(),
	}
	if s.cfg.ChannelMail == nil {
		s.cfg.ChannelMail = NewChannelMailer(cfg.Store, s.sendMail)
	}
	s.registerRoutes()
	if s.cfg.Relay == nil {
		s.cfg.Relay = relay.New(relay.Config{Store: cfg.Store, Client: cfg.HTTPClient,
			ClientIP: func(r *http.Request) string { return s.ips.of(r) }, Events: RelayEvents{Hub: cfg.Hub, Store: cfg.Store, Mail: s.cfg.ChannelMail}})
	}
	// The billing reads count against the same per-IP limit as /api (S §12).
	s.cfg.Relay.Register(s.mux, func(r *http.Request) bool { return s.apiLimit.allow(s.ips.of(r)) })
	s.mux.HandleFunc("/api/", writeNotFoundURL)
	s.mux.HandleFunc("/api", writeNotFoundURL)
	// Unknown relay paths carry the relay's CORS headers, so a browser
	// client reads the 404 rather than a blocked response. The billing
	// reads outside /v1 answer like the relay's routes, in OpenAI's error
	// object, whatever the method or the rest of the path.
	relayNotFound := s.cfg.Relay.CORS(http.HandlerFunc(writeNotFoundURL))
	s.mux.Handle("/v1/", relayNotFound)
	s.mux.Handle("/v1", relayNotFound)
	s.mux.Handle("/dashboard/billing/", relayNotFound)
	s.mux.Handle("/", s.uiHandler())
	// An unclean relay path (a base URL ending in /v1/ that the client
	// appends /chat/completions to) is refused as unknown with the same
	// headers, its preflight let through, so that the refusal is read.
	uncleanRelay := s.cfg.Relay.CORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeNotFoundURL(w, r)
	}))
	s.handler = s.recoverer(s.withRequestID(s.logRequests(refuseCrossSite(s.withCORS(uncleanAPIPaths(s.mux, uncleanRelay))))))
	return s
}

// uncleanAPIPaths answers an /api or /v1 path that is not in its clean
// form (an empty or dot segment) as an unknown URL, in the error shape of
// its routes: the mux would redirect it elsewhere with an HTML body that no
// API client reads, and a client that built such a path has a bug to see.
// A /v1 path goes to relay, which answers it with the relay's CORS headers.
func uncleanAPIPaths(next, relay http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		clean := path.Clean(p)
		if strings.HasSuffix(p, "/") && clean != "/" {
			clean += "/"
		}
		if clean != p && (clean == "/api" || strings.HasPrefix(clean, "/api/")) {
			writeNotFoundURL(w, r)
			return
		}
		if clean != p && (clean == "/v1" || strings.HasPrefix(clean, "/v1/")) {
			relay.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// ChannelMailer returns the mailer that tells root about channel health.
func (s *Server) ChannelMailer() *ChannelMailer { return s.cfg.ChannelMail }

// Routes returns every /api route registered, for the policy completeness test.
func (s *Server) Routes() []route { return s.routes }

// Patterns returns every pattern registered on the server's mux, guarded or
// not (the relay's, the catch-alls, the console's files), so that the route
// tests see a route however it was added.
func (s *Server) Patterns() []string { return append([]string(nil), s.mux.patterns...) }

// patternMux is the server's mux. It remembers every pattern registered on
// it: http.ServeMux cannot list them.
type patternMux struct {
	*http.ServeMux
	patterns []string
}

// Handle registers h for pattern.
func (m *patternMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// HandleFunc registers f for pattern.
func (m *patternMux) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(f))
}

// Close stops background work.
func (s *Server) Close() {
	s.apiLimit.stop()
	s.critical.stop()
}

// handle registers an /api route behind the rate limits, authentication and
// the policy check for exactly this pattern.
func (s *Server) handle(pattern string, h http.HandlerFunc) { s.register(pattern, false, h) }

// handleCritical is handle with the critical rate limit added.
func (s *Server) handleCritical(pattern string, h http.HandlerFunc) { s.register(pattern, true, h) }

func (s *Server) register(pattern string, critical bool, h http.HandlerFunc) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		panic("route without method: " + pattern)
	}
	s.routes = append(s.routes, route{Method: method, Path: path, Critical: critical})
	s.mux.Handle(pattern, s.guard(method, path, critical, h))
}

func (s *Server) registerRoutes() {
	// Public.
	s.handle("GET /api/status", s.getStatus)
	s.handle("GET /api/status/test", s.testStatus)
	s.handle("GET /api/notice", s.getOptionText("Notice"))
	s.handle("GET /api/about", s.getOptionText("About"))
	s.handle("GET /api/home_page_content", s.getOptionText("HomePageContent"))
	s.handle("GET /api/user/groups", s.getUsableGroups)
	s.handleCritical("POST /api/user/register", s.register_)
	s.handleCritical("POST /api/user/login", s.login)
	s.handle("GET /api/user/logout", s.logout)
	s.handle("POST /api/user/logout", s.logout)
	s.handleCritical("GET /api/verification", s.sendVerification)
	s.handleCritical("GET /api/reset_password", s.sendPasswordReset)
	s.handleCritical("POST /api/user/reset", s.resetPassword)

	// Own account.
	s.handle("GET /api/user/self", s.getSelf)
	s.handle("PUT /api/user/self", s.updateSelf)
	s.handle("DELETE /api/user/self", s.deleteSelf)
	s.handle("GET /api/user/token", s.resetAccessToken)
	s.handle("GET /api/user/aff", s.getAffCode)
	s.handle("POST /api/user/aff_transfer", s.transferAffQuota)
	s.handle("GET /api/user/self/groups", s.getSelfGroups)
	s.handleCritical("GET /api/oauth/email/bind", s.bindEmail)
	s.handle("GET /api/ws", s.serveWS)

	s.registerTokenRoutes()
	s.registerChannelRoutes()
	s.registerLogRoutes()
	s.registerChannelOpsRoutes()
	s.registerTokenLogRoutes()
	s.registerOAuthRoutes()
	s.registerAdminRoutes()

	// Root.
	s.handle("GET /api/option/{$}", s.listOptions)
	s.handle("PUT /api/option/{$}", s.updateOption)
	s.handle("POST /api/option/rest_model_ratio", s.resetModelRatio)
	s.handle("GET /api/backup", s.backup)
}

func logAttrs(r *http.Request) []any {
	return []any{"method", r.Method, "path", r.URL.Path, "request_id", requestID(r)}
}

var _ = slog.Info
