// Package egress is the one outbound HTTP client for every request whose URL
// a user or an administrator supplied: upstream provider base URLs, model
// lists, balance queries, OAuth token and profile endpoints, Turnstile
// verification and image downloads. It exists to stop server-side request
// forgery (SSRF).
//
// # Rules
//
//   - Only http and https URLs are fetched, including on redirects; anything
//     else fails with an error wrapping [ErrScheme].
//   - The host is resolved when a connection is dialled. If any resolved
//     address is loopback, unspecified, link-local (which covers the cloud
//     metadata address 169.254.169.254), private, CGNAT, multicast,
//     broadcast or reserved, or an IPv4-mapped or NAT64 form of one of
//     these, the dial fails with a [*BlockedError]. Names such as
//     localhost and metadata.google.internal are refused before resolution.
//   - The checked address is the one dialled, so a DNS answer that changes
//     between the check and the connection (DNS rebinding) cannot bypass
//     the rule. TLS server name and the Host header stay the original name.
//   - At most 5 redirects are followed; each one dials through the same
//     check. A proxy from the environment is never used.
//
// [Config.AllowPrivate] lifts the address rules, for gateways whose
// upstreams live on a private network. [Config.AllowedHosts] lifts them for
// the listed host names, IP addresses and CIDR prefixes only. The cloud
// metadata endpoints stay blocked under AllowPrivate: only an explicit
// AllowedHosts entry reaches them, because one user-supplied image URL
// would otherwise read the instance credentials.
//
// # Timeouts
//
// [Config.Timeout] bounds dialling, the TLS handshake and the wait for
// response headers; it is not a limit on the whole exchange, because the
// relay streams responses for minutes. Bound a whole request with its
// context:
//
//	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
//	defer cancel()
//	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
//	resp, err := client.HTTP().Do(req)
//
// # Connections
//
// Plain-http requests with a body of known length up to 64 KiB are sent on
// the caller's goroutine over a pooled HTTP/1.1 connection of the Client's
// own; other requests, and every https request, go through an
// *http.Transport (HTTP/2 when the server offers it). Both pools dial
// through the same checks.
//
// # Response size
//
// [Config.MaxResponseBytes] caps every response body read through the
// client; [LimitedBody] applies a cap to a single response. Both fail with an error wrapping [ErrResponseTooLarge].
package egress
