package mailbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/outflowhq/outflow/internal/platform/egress"
)

// Security is how a connection to a mail server is protected.
type Security string

// The security modes of part 2: TLS from the first byte, STARTTLS after the greeting, or none (a loopback host
// on a self-hosted instance only).
const (
	SecurityTLS      Security = "tls"
	SecurityStartTLS Security = "starttls"
	SecurityNone     Security = "none"
)

// DefaultSecurity is the mode a port implies when none is chosen: TLS on the implicit-TLS ports 465 (SMTP
// submission) and 993 (IMAPS), STARTTLS everywhere else.
func DefaultSecurity(port int) Security {
	if port == 465 || port == 993 {
		return SecurityTLS
	}
	return SecurityStartTLS
}

// Server is one SMTP or IMAP endpoint of a mailbox with its credential: a password, or for Google and
// Microsoft mailboxes an OAuth access token (then the login is XOAUTH2).
type Server struct {
	Host     string
	Port     int
	Username string
	Password string
	// AccessToken, when set, replaces the password: the session authenticates with XOAUTH2.
	AccessToken string
	// Security "" means DefaultSecurity(Port).
	Security Security
}

// secret is what must never show in an error: the password or the token.
func (s Server) secret() string {
	if s.AccessToken != "" {
		return s.AccessToken
	}
	return s.Password
}

func (s Server) security() Security {
	if s.Security == "" {
		return DefaultSecurity(s.Port)
	}
	return s.Security
}

// Dialer connects to mailbox servers. Every TCP connection goes through package egress, so a tenant cannot
// point the deployment at its own private network.
type Dialer struct {
	// TLS is the base TLS configuration (its RootCAs); each dial clones it with ServerName set to the host.
	TLS *tls.Config
	// AllowInsecure (OUTFLOW_ALLOW_INSECURE_MAIL) admits private and loopback addresses, and security none
	// for a loopback host.
	AllowInsecure bool
	// Timeout bounds a whole check and each connection's setup; zero means 20 s.
	Timeout time.Duration
	// Resolver resolves host names; nil means the system resolver.
	Resolver egress.Resolver
	// HeloName is the name SMTP EHLO introduces the client with; empty means "localhost".
	HeloName string
}

func (d Dialer) timeout() time.Duration {
	if d.Timeout <= 0 {
		return 20 * time.Second
	}
	return d.Timeout
}

// Kind classifies a failed check so the API can answer with a fix that matches.
type Kind string

// The ways a check fails.
const (
	KindAuth     Kind = "auth"
	KindTLS      Kind = "tls"
	KindConnect  Kind = "connect"
	KindInsecure Kind = "insecure"
	KindProtocol Kind = "protocol"
)

// CheckError is a failed connection, TLS handshake, login or protocol step against one server. Its text
// never holds the password.
type CheckError struct {
	// Service is ServiceSMTP or ServiceIMAP.
	Service string
	Kind    Kind
	Err     error
}

// Error implements error.
func (e *CheckError) Error() string {
	what := map[Kind]string{
		KindAuth: "authentication failed", KindTLS: "TLS failed", KindConnect: "could not connect",
		KindInsecure: "plain connection refused", KindProtocol: "unexpected server answer",
	}[e.Kind]
	if e.Err == nil {
		return e.Service + ": " + what
	}
	return e.Service + ": " + what + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *CheckError) Unwrap() error { return e.Err }

// Fix is one sentence telling a person what to change.
func (e *CheckError) Fix() string {
	name := strings.ToUpper(e.Service)
	switch e.Kind {
	case KindAuth:
		return "Check the " + name + " username and password; providers with two-step sign-in need an app password."
	case KindTLS:
		return "The " + name + " server's TLS was refused: check that the host name matches its certificate, or pick the other security mode (tls for ports 465 and 993, starttls otherwise)."
	case KindInsecure:
		return "Plain connections are allowed only to a loopback host on a self-hosted instance with OUTFLOW_ALLOW_INSECURE_MAIL=1; use tls or starttls."
	case KindProtocol:
		return "Check that the " + name + " host and port point at a " + name + " server that offers authentication."
	}
	return "Check the " + name + " host and port, and that the server accepts connections from this deployment."
}

func fail(service string, kind Kind, err error) *CheckError {
	return &CheckError{Service: service, Kind: kind, Err: err}
}

// connect opens the TCP connection (and the TLS session for implicit TLS). Until stop is called, the
// connection is closed as soon as ctx ends: protocol libraries reset the deadlines they are given (go-smtp
// waits up to five minutes for a greeting), so closing the socket is the only bound a silent server cannot
// outlast. stop reports false when ctx ended first and the connection is gone.
func (d Dialer) connect(ctx context.Context, service string, s Server) (conn net.Conn, stop func() bool, err error) {
	sec := s.security()
	if sec == SecurityNone && (!d.AllowInsecure || !loopback(s.Host)) {
		return nil, nil, fail(service, KindInsecure, nil)
	}
	if sec != SecurityNone && sec != SecurityTLS && sec != SecurityStartTLS {
		return nil, nil, fail(service, KindProtocol, fmt.Errorf("unknown security %q", sec))
	}
	raw, err := egress.DialContext(ctx, egress.Options{Resolver: d.Resolver, AllowPrivate: d.AllowInsecure, Timeout: d.timeout()},
		"tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)))
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, expired(ctx, service)
		}
		return nil, nil, fail(service, KindConnect, err)
	}
	stop = context.AfterFunc(ctx, func() { _ = raw.Close() })
	if sec != SecurityTLS {
		return raw, stop, nil
	}
	tc := tls.Client(raw, d.tlsConfig(s.Host))
	if err := tc.HandshakeContext(ctx); err != nil {
		stop()
		_ = raw.Close()
		if ctx.Err() != nil {
			return nil, nil, expired(ctx, service)
		}
		return nil, nil, fail(service, KindTLS, err)
	}
	return tc, stop, nil
}

// expired is the failure of a check that ran out of time (or was cancelled) before the server finished
// answering: the usual sign of a firewall dropping packets or a port that is not a mail server.
func expired(ctx context.Context, service string) *CheckError {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fail(service, KindConnect, fmt.Errorf("the server did not answer in time: %w", ctx.Err()))
	}
	return fail(service, KindConnect, ctx.Err())
}

func (d Dialer) tlsConfig(host string) *tls.Config {
	c := &tls.Config{}
	if d.TLS != nil {
		c = d.TLS.Clone()
	}
	c.ServerName = host
	if c.MinVersion < tls.VersionTLS12 {
		c.MinVersion = tls.VersionTLS12
	}
	return c
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SMTP connects, secures and authenticates an SMTP session for sending, within d.Timeout; the caller owns
// the client (and Quit or Close it). Once it is ready, ctx no longer bounds it: the client's own command
// timeouts (d.Timeout, twice that for a message) apply from then on.
func (d Dialer) SMTP(ctx context.Context, s Server) (*smtp.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	c, stop, err := d.smtp(ctx, s)
	if err != nil {
		return nil, err
	}
	if !stop() {
		_ = c.Close()
		return nil, expired(ctx, ServiceSMTP)
	}
	return c, nil
}

// CheckSMTP logs in to the SMTP server and leaves, all within d.Timeout: the connect-time check of a
// credential.
func (d Dialer) CheckSMTP(ctx context.Context, s Server) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	c, stop, err := d.smtp(ctx, s)
	if err != nil {
		return err
	}
	defer stop()
	// The login is what was checked: a server that fumbles QUIT has still passed.
	_ = c.Quit()
	_ = c.Close()
	return nil
}

// smtp opens an authenticated session whose connection ctx still bounds until stop is called.
func (d Dialer) smtp(ctx context.Context, s Server) (*smtp.Client, func() bool, error) {
	conn, stop, err := d.connect(ctx, ServiceSMTP, s)
	if err != nil {
		return nil, nil, err
	}
	c, err := d.smtpSession(conn, s)
	if err != nil {
		stop()
		_ = conn.Close()
		if ctx.Err() != nil {
			return nil, nil, expired(ctx, ServiceSMTP)
		}
		return nil, nil, err
	}
	return c, stop, nil
}

func (d Dialer) smtpSession(conn net.Conn, s Server) (*smtp.Client, error) {
	var c *smtp.Client
	if s.security() == SecurityStartTLS {
		var err error
		// The first EHLO (before TLS) names the client "localhost"; the one that matters comes after. A server
		// that does not offer STARTTLS fails here with a plain error, which is a TLS failure.
		if c, err = smtp.NewClientStartTLS(conn, d.tlsConfig(s.Host)); err != nil {
			var se *smtp.SMTPError
			if errors.As(err, &se) {
				return nil, fail(ServiceSMTP, KindProtocol, err)
			}
			return nil, fail(ServiceSMTP, KindTLS, err)
		}
	} else {
		c = smtp.NewClient(conn)
	}
	c.CommandTimeout = d.timeout()
	c.SubmissionTimeout = 2 * d.timeout()
	// EHLO, which on a STARTTLS session also runs the TLS handshake.
	if err := c.Hello(d.heloName()); err != nil {
		if tlsFailure(err) {
			return nil, fail(ServiceSMTP, KindTLS, err)
		}
		return nil, fail(ServiceSMTP, KindProtocol, err)
	}
	ok, mechs := c.Extension("AUTH")
	if !ok {
		return nil, fail(ServiceSMTP, KindProtocol, errors.New("the server offers no authentication"))
	}
	var auth sasl.Client
	switch {
	case s.AccessToken != "" && hasMech(mechs, Xoauth2):
		auth = &xoauth2Client{user: s.Username, token: s.AccessToken}
	case s.AccessToken != "":
		return nil, fail(ServiceSMTP, KindProtocol, errors.New("the server does not take OAuth tokens (XOAUTH2)"))
	case hasMech(mechs, sasl.Plain):
		auth = sasl.NewPlainClient("", s.Username, s.Password)
	case hasMech(mechs, sasl.Login):
		auth = sasl.NewLoginClient(s.Username, s.Password)
	default:
		return nil, fail(ServiceSMTP, KindProtocol, fmt.Errorf("no supported authentication mechanism among %q", mechs))
	}
	if err := c.Auth(auth); err != nil {
		var se *smtp.SMTPError
		if errors.As(err, &se) && (se.Code == 535 || se.Code == 534 || se.Code == 530 || se.Code == 454) {
			return nil, fail(ServiceSMTP, KindAuth, redact(err, s.secret()))
		}
		return nil, fail(ServiceSMTP, KindProtocol, redact(err, s.secret()))
	}
	return c, nil
}

func (d Dialer) heloName() string {
	if d.HeloName == "" {
		return "localhost"
	}
	return d.HeloName
}

func hasMech(list, mech string) bool {
	for _, m := range strings.Fields(list) {
		if strings.EqualFold(m, mech) {
			return true
		}
	}
	return false
}

// tlsFailure reports whether err comes from a TLS handshake: an untrusted or mismatched certificate, or a
// peer that does not speak TLS.
func tlsFailure(err error) bool {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	return errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert)
}

// redact keeps a server's error text from echoing the password back into logs and answers.
func redact(err error, password string) error {
	if password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), password, "[redacted]"))
}

// IMAP connects, secures and logs in an IMAP session for syncing, within d.Timeout; the caller owns the
// client, which ctx no longer bounds once it is returned. opts may carry a unilateral data handler (IDLE
// updates); its TLS configuration is replaced by the dialer's.
func (d Dialer) IMAP(ctx context.Context, s Server, opts *imapclient.Options) (*imapclient.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	c, stop, err := d.imap(ctx, s, opts)
	if err != nil {
		return nil, err
	}
	if !stop() {
		_ = c.Close()
		return nil, expired(ctx, ServiceIMAP)
	}
	return c, nil
}

// CheckIMAP logs in to the IMAP server and leaves, all within d.Timeout: the connect-time check of a
// credential.
func (d Dialer) CheckIMAP(ctx context.Context, s Server) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	c, stop, err := d.imap(ctx, s, nil)
	if err != nil {
		return err
	}
	defer stop()
	// The login is what was checked: a server that fumbles LOGOUT has still passed.
	_ = c.Logout().Wait()
	_ = c.Close()
	return nil
}

// imap opens a logged-in session whose connection ctx still bounds until stop is called.
func (d Dialer) imap(ctx context.Context, s Server, opts *imapclient.Options) (*imapclient.Client, func() bool, error) {
	conn, stop, err := d.connect(ctx, ServiceIMAP, s)
	if err != nil {
		return nil, nil, err
	}
	c, err := d.imapSession(conn, s, opts)
	if err != nil {
		stop()
		_ = conn.Close()
		if ctx.Err() != nil {
			return nil, nil, expired(ctx, ServiceIMAP)
		}
		return nil, nil, err
	}
	return c, stop, nil
}

func (d Dialer) imapSession(conn net.Conn, s Server, opts *imapclient.Options) (*imapclient.Client, error) {
	o := imapclient.Options{}
	if opts != nil {
		o = *opts
	}
	o.TLSConfig = d.tlsConfig(s.Host)
	var c *imapclient.Client
	if s.security() == SecurityStartTLS {
		var err error
		// Every failure here is of TLS: a server that does not offer STARTTLS refuses the command (NO or BAD),
		// a certificate is not trusted, or the server sent PREAUTH in the clear.
		if c, err = imapclient.NewStartTLS(conn, &o); err != nil {
			var ie *imap.Error
			if errors.As(err, &ie) {
				err = fmt.Errorf("the server refused STARTTLS: %w", err)
			}
			return nil, fail(ServiceIMAP, KindTLS, err)
		}
	} else {
		c = imapclient.New(conn, &o)
		if err := c.WaitGreeting(); err != nil {
			_ = c.Close()
			return nil, fail(ServiceIMAP, KindProtocol, err)
		}
	}
	var err error
	if s.AccessToken != "" {
		err = c.Authenticate(&xoauth2Client{user: s.Username, token: s.AccessToken})
	} else {
		err = c.Login(s.Username, s.Password).Wait()
	}
	if err != nil {
		_ = c.Close()
		var ie *imap.Error
		switch {
		case errors.As(err, &ie) && ie.Code == imap.ResponseCodePrivacyRequired:
			return nil, fail(ServiceIMAP, KindTLS, redact(err, s.secret()))
		case errors.As(err, &ie) && ie.Type == imap.StatusResponseTypeNo:
			return nil, fail(ServiceIMAP, KindAuth, redact(err, s.secret()))
		}
		return nil, fail(ServiceIMAP, KindProtocol, redact(err, s.secret()))
	}
	return c, nil
}
