package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout bounds a whole request of NewClient's client (connect, TLS, headers and body): part 1's
// webhook request timeout.
const DefaultTimeout = 15 * time.Second

// MaxURLLength is the longest URL ValidateURL accepts (the webhook tables' limit).
const MaxURLLength = 2048

// Resolver resolves host names to addresses; *net.Resolver satisfies it. Tests pass a net.Resolver whose Dial
// points at an in-process DNS server.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Options configure validation and the client alike; pass the same value to both.
type Options struct {
	// Resolver resolves host names at validation and at connect time; nil means net.DefaultResolver.
	Resolver Resolver
	// AllowPrivate admits private, loopback and other non-public addresses, IP literals, plain http and any
	// port, for self-hosted test rigs (OUTFLOW_WEBHOOKS_ALLOW_PRIVATE=1). Cloud metadata addresses stay refused.
	AllowPrivate bool
	// Timeout bounds each request of NewClient's client; zero means DefaultTimeout.
	Timeout time.Duration
}

func (o Options) resolver() Resolver {
	if o.Resolver == nil {
		return net.DefaultResolver
	}
	return o.Resolver
}

// Reason classifies why a URL or a connection was refused; handlers turn it into a stable error code.
type Reason string

// Why ValidateURL or the client refused.
const (
	// ReasonInvalid: not an absolute URL, no host, user information, a malformed host name, too long.
	ReasonInvalid Reason = "invalid_url"
	// ReasonScheme: not https.
	ReasonScheme Reason = "https_required"
	// ReasonPort: a port other than 443.
	ReasonPort Reason = "port_not_allowed"
	// ReasonIPLiteral: the host is an IP address, in any spelling.
	ReasonIPLiteral Reason = "ip_literal"
	// ReasonHost: a name that is never public (localhost, a single label).
	ReasonHost Reason = "host_not_allowed"
	// ReasonUnresolvable: the name does not resolve.
	ReasonUnresolvable Reason = "unresolvable_host"
	// ReasonAddress: the name resolves to (or the client was about to connect to) an address that is not
	// publicly routable.
	ReasonAddress Reason = "address_not_public"
)

// Error is a refusal by ValidateURL or by the client's dialer (there wrapped in *url.Error and *net.OpError;
// errors.As finds it).
type Error struct {
	Reason Reason
	// Host is the host name of the URL, when there is one.
	Host string
	// Addr is the refused address (ReasonAddress, ReasonIPLiteral when it parses).
	Addr netip.Addr
	// Message is a full sentence for people.
	Message string
}

// Error implements error.
func (e *Error) Error() string { return "egress: " + e.Message }

func refuse(reason Reason, host, format string, args ...any) *Error {
	return &Error{Reason: reason, Host: host, Message: fmt.Sprintf(format, args...)}
}

// ValidateURL checks a URL a tenant chose before it is stored or called: https on port 443, a host name (not
// an IP address in any form) that resolves, through opts.Resolver, only to publicly routable addresses. It
// returns the parsed URL with scheme and host lower-cased. Refusals are *Error; a cancelled ctx is returned
// as it is.
func ValidateURL(ctx context.Context, raw string, opts Options) (*url.URL, error) {
	if raw == "" || len(raw) > MaxURLLength {
		return nil, refuse(ReasonInvalid, "", "the URL must be 1 to %d characters", MaxURLLength)
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == '\\' || r == 0x7f }) {
		return nil, refuse(ReasonInvalid, "", "the URL must not contain spaces, control characters or backslashes")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return nil, refuse(ReasonInvalid, "", "%q is not an absolute URL", raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return nil, refuse(ReasonInvalid, "", "the URL has no host")
	}
	if u.User != nil {
		return nil, refuse(ReasonInvalid, host, "the URL must not carry user information")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && opts.AllowPrivate:
	default:
		return nil, refuse(ReasonScheme, host, "the URL must use https")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, refuse(ReasonInvalid, host, "port %q is not a port number", p)
		}
		if !opts.AllowPrivate && p != "443" {
			return nil, refuse(ReasonPort, host, "port %s is not allowed: use the standard https port (443)", p)
		}
	}
	u.Host = strings.ToLower(u.Host)

	if literal, addr := ipLiteral(u.Host, host); literal {
		e := refuse(ReasonIPLiteral, host, "the host must be a domain name, not an IP address (%s)", host)
		if !opts.AllowPrivate || !addr.IsValid() {
			// A numeric host that is not a plain address (127.1, 0x7f.1, 2130706433) is refused even in
			// AllowPrivate mode: resolvers and HTTP stacks disagree about what it means.
			e.Addr = addr
			return nil, e
		}
		if !allowed(addr, opts) {
			return nil, refuse(ReasonAddress, host, "%s is a cloud metadata address", addr)
		}
		return u, nil
	}
	if problem := hostNameProblem(host); problem != "" {
		return nil, refuse(ReasonInvalid, host, "%s", problem)
	}
	if !opts.AllowPrivate && (host == "localhost" || strings.HasSuffix(host, ".localhost") || !strings.Contains(strings.TrimSuffix(host, "."), ".")) {
		return nil, refuse(ReasonHost, host, "%s is not a public host name", host)
	}
	ips, err := opts.resolver().LookupIPAddr(ctx, strings.TrimSuffix(host, "."))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil || len(ips) == 0 {
		return nil, refuse(ReasonUnresolvable, host, "%s does not resolve to an address", host)
	}
	for _, ip := range ips {
		addr := addrOf(ip)
		if !allowed(addr, opts) {
			e := refuse(ReasonAddress, host, "%s resolves to %s, which is not a publicly routable address", host, addr)
			e.Addr = addr
			return nil, e
		}
	}
	return u, nil
}

// ipLiteral reports whether a URL host is an IP address in any spelling a resolver or browser would accept:
// bracketed IPv6, dotted IPv4, or a name whose last label is a number (decimal, octal with a leading 0, or
// 0x hex), which the WHATWG URL standard and inet_aton read as an IPv4 address (2130706433, 0177.0.0.1,
// 0x7f.1, 127.1). addr is the address when host parses as a plain one.
func ipLiteral(rawHost, host string) (bool, netip.Addr) {
	if a, err := netip.ParseAddr(host); err == nil {
		return true, a
	}
	if strings.HasPrefix(rawHost, "[") {
		return true, netip.Addr{}
	}
	h := strings.TrimSuffix(host, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false, netip.Addr{}
	}
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == "", netip.Addr{}
	}
	return strings.Trim(last, "0123456789") == "", netip.Addr{}
}

// hostNameProblem explains what is wrong with a host name, or returns "" when nothing is: ASCII labels of
// letters, digits, hyphens and underscores, 1 to 63 characters each, 253 in all.
func hostNameProblem(host string) string {
	h := strings.TrimSuffix(host, ".")
	if len(h) > 253 {
		return "the host name is longer than 253 characters"
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Sprintf("%q is not a valid host name", host)
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Sprintf("%q is not a valid host name (write an internationalized name in its xn-- form)", host)
			}
		}
	}
	return ""
}

func addrOf(ip net.IPAddr) netip.Addr {
	a, ok := netip.AddrFromSlice(ip.IP)
	if !ok {
		return netip.Addr{}
	}
	if a.Is4In6() && len(ip.IP) == net.IPv6len && ip.IP.To4() != nil {
		// net.IP keeps IPv4 answers in 16-byte form: an A record is an IPv4 address, not a mapped one.
		a = a.Unmap()
	}
	return a.WithZone(ip.Zone)
}

// allowed is the address rule of opts: public addresses, or anything but cloud metadata in AllowPrivate mode.
func allowed(a netip.Addr, opts Options) bool {
	if !a.IsValid() || metadata(a) {
		return false
	}
	return opts.AllowPrivate || Public(a)
}

// NewClient returns the HTTP client for tenant-chosen URLs. Its dialer resolves through opts.Resolver and
// checks every address it is about to connect to in net.Dialer.Control, so a connection to an address that
// is not publicly routable is never opened, whatever DNS said when the URL was validated. It uses no proxy
// (the environment's HTTP_PROXY would hide the real destination), never follows redirects (a 3xx answer is
// returned as it is), and bounds each request by opts.Timeout (default 15 s). Callers still validate URLs
// with ValidateURL (scheme, port, literals) and bound how much of an answer they read.
func NewClient(opts Options) *http.Client {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	d := &dialer{opts: opts, timeout: timeout}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// dialer resolves with the configured resolver and connects only to allowed addresses.
type dialer struct {
	opts    Options
	timeout time.Duration
}

// DialContext resolves address's host and tries its addresses in order; the Control hook refuses every one
// that is not allowed before the socket connects.
func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("egress: bad port %q", portText)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ips, err := d.opts.resolver().LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		for _, ip := range ips {
			addrs = append(addrs, addrOf(ip))
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	nd := net.Dialer{Timeout: d.timeout, KeepAlive: 30 * time.Second, Control: d.control}
	var errs []error
	for _, a := range addrs {
		conn, err := nd.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// control runs after the socket is created and before it connects: the last word on where it goes.
func (d *dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refuse(ReasonAddress, "", "cannot check the address %q", address)
	}
	if !allowed(ap.Addr(), d.opts) {
		e := refuse(ReasonAddress, "", "connecting to %s is refused: it is not a publicly routable address", ap.Addr())
		e.Addr = ap.Addr()
		return e
	}
	return nil
}

// Describe turns a failed request of NewClient's client into a short reason for people (a delivery's
// error_reason, a verification result): a refused address, a timeout, a DNS, TLS or connection failure.
func Describe(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "DNS lookup failed: " + dnsErr.Err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return "connection failed: " + op.Err.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

// DialContext opens a TCP connection to a tenant-chosen host:port for protocols other than HTTP (a mailbox's
// SMTP and IMAP servers), under the same rules as NewClient's transport: the host is resolved through
// opts.Resolver and every address is checked just before the socket connects.
func DialContext(ctx context.Context, opts Options, network, address string) (net.Conn, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return (&dialer{opts: opts, timeout: timeout}).DialContext(ctx, network, address)
}
