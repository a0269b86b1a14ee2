// Package mailtest runs real mail peers in process for tests: an SMTP server that records every message it
// accepts and an IMAP server (go-imap's in-memory backend) holding a user's folders. Both require TLS (STARTTLS
// by default, or implicit TLS) behind a certificate from one process-wide test authority, which a server under
// test trusts through CAFile; NoTLS runs them plain, as a loopback relay might.
package mailtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Option changes how a server protects its connections (or, for SMTP, how long it waits for a client; for
// IMAP, which folders it has and whether it offers MOVE).
type Option func(*options)

type options struct {
	implicitTLS bool
	noTLS       bool
	idle        time.Duration
	noMove      bool
	folders     []string
}

// NoMove makes the IMAP server speak IMAP4rev1 with IDLE and UIDPLUS but without MOVE (IMAP4rev2, offered
// otherwise, includes MOVE), so a client moves messages by COPY, STORE \Deleted and UID EXPUNGE.
func NoMove() Option { return func(o *options) { o.noMove = true } }

// Folders gives the IMAP server's user these folders besides IMAPFolders (Drafts, Archive, ...).
func Folders(names ...string) Option {
	return func(o *options) { o.folders = append(o.folders, names...) }
}

// ImplicitTLS makes the server speak TLS from the first byte (ports 465 and 993 in production).
func ImplicitTLS() Option { return func(o *options) { o.implicitTLS = true } }

// NoTLS makes the server plain, offering no STARTTLS and accepting logins without it.
func NoTLS() Option { return func(o *options) { o.noTLS = true } }

// IdleTimeout makes the SMTP server end a session whose client has said nothing for d (10 s unless set) with
// a 421 answer, as production servers end idle sessions.
func IdleTimeout(d time.Duration) Option { return func(o *options) { o.idle = d } }

func optionsOf(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// listen opens the server's socket on 127.0.0.1, wrapped in TLS for ImplicitTLS.
func listen(t testing.TB, o options) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: %v", err)
	}
	if o.implicitTLS {
		ln = tls.NewListener(ln, ServerTLS())
	}
	return ln
}

// Received is one message the server accepted.
type Received struct {
	From string
	To   []string
	Data []byte
}

// SMTPServer is a running in-process SMTP server.
type SMTPServer struct {
	// Addr is host:port to dial.
	Addr string
	// ClientTLS trusts the server's certificate.
	ClientTLS *tls.Config

	mu       sync.Mutex
	received []Received
	user     string
	pass     string
	onRcpt   func(to string) error
	stall    chan struct{}
	logins   int
	token    string
	// sentTo is the IMAP server whose Sent folder gets a copy of every accepted message (FileSentTo).
	sentTo *IMAPServer
}

// FileSentTo makes the server file a copy of every message it accepts in imap's Sent folder, before it
// answers, as Gmail and Microsoft 365 do with what their users send: a server that "keeps sent copies".
func (s *SMTPServer) FileSentTo(imap *IMAPServer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sentTo = imap
}

// AcceptToken makes the server also take XOAUTH2 logins of its user with this access token (as Google's and
// Microsoft's do); an empty token turns that off.
func (s *SMTPServer) AcceptToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// OnRcpt makes the server answer each RCPT with what f returns (nil accepts; an *smtp.SMTPError is sent as
// is), to play a server that rejects or defers recipients.
func (s *SMTPServer) OnRcpt(f func(to string) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onRcpt = f
}

// Stall makes the server take the next messages (they are recorded) but hold back its answer to the final dot
// until release is called (tests release in a cleanup): the moment a sender cannot tell whether it went.
func (s *SMTPServer) Stall() (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.stall = ch
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.stall = nil
			s.mu.Unlock()
			close(ch)
		})
	}
}

// Logins is how many sessions have authenticated so far (a pooled client logs in once for many messages).
func (s *SMTPServer) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// NewSMTPServer starts a server requiring TLS (STARTTLS unless opts say otherwise) and AUTH PLAIN as
// user/pass; it stops when t ends.
func NewSMTPServer(t testing.TB, user, pass string, opts ...Option) *SMTPServer {
	t.Helper()
	o := optionsOf(opts)
	s := &SMTPServer{user: user, pass: pass, ClientTLS: ClientTLS()}
	srv := smtp.NewServer(backend{s})
	srv.Domain = "localhost"
	if o.noTLS {
		srv.AllowInsecureAuth = true
	} else if !o.implicitTLS {
		srv.TLSConfig = ServerTLS()
	}
	srv.MaxMessageBytes = 1 << 20
	srv.MaxRecipients = 50
	srv.ReadTimeout = 10 * time.Second
	if o.idle > 0 {
		srv.ReadTimeout = o.idle
	}
	srv.WriteTimeout = 10 * time.Second
	ln := listen(t, o)
	s.Addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// Messages returns what the server accepted so far.
func (s *SMTPServer) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Count is how many messages the server accepted so far: what a benchmark polls without copying them.
func (s *SMTPServer) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.received)
}

type backend struct{ s *SMTPServer }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: b.s}, nil }

type session struct {
	s      *SMTPServer
	authed bool
	msg    Received
}

func (s *session) AuthMechanisms() []string {
	s.s.mu.Lock()
	defer s.s.mu.Unlock()
	if s.s.token != "" {
		return []string{sasl.Plain, xoauth2}
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	ok := func() error {
		s.authed = true
		s.s.mu.Lock()
		s.s.logins++
		s.s.mu.Unlock()
		return nil
	}
	if mech == xoauth2 {
		return &xoauth2Server{check: func(user, token string) error {
			s.s.mu.Lock()
			want := s.s.token
			s.s.mu.Unlock()
			if want == "" || user != s.s.user || token != want {
				return smtp.ErrAuthFailed
			}
			return ok()
		}}, nil
	}
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.s.user || pass != s.s.pass {
			return smtp.ErrAuthFailed
		}
		return ok()
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	s.msg = Received{From: from}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.s.mu.Lock()
	f := s.s.onRcpt
	s.s.mu.Unlock()
	if f != nil {
		if err := f(to); err != nil {
			return err
		}
	}
	s.msg.To = append(s.msg.To, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.msg.Data = data
	s.s.mu.Lock()
	s.s.received = append(s.s.received, s.msg)
	stall, sentTo := s.s.stall, s.s.sentTo
	s.s.mu.Unlock()
	if sentTo != nil {
		if err := sentTo.file("Sent", data); err != nil {
			return err
		}
	}
	if stall != nil {
		<-stall
	}
	return nil
}

func (s *session) Reset()        { s.msg = Received{} }
func (s *session) Logout() error { return nil }

// authority is the process-wide test CA and the localhost certificate it signed.
var authority = sync.OnceValues(func() (tls.Certificate, []byte) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mailtest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		panic(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		panic(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		panic(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
})

// ServerTLS is the servers' TLS configuration: the localhost certificate of the test authority.
func ServerTLS() *tls.Config {
	cert, _ := authority()
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// RootCAs trusts the test authority (and nothing else).
func RootCAs() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(CAPEM())
	return pool
}

// ClientTLS is a client configuration that trusts the servers' certificate under the name localhost.
func ClientTLS() *tls.Config {
	return &tls.Config{RootCAs: RootCAs(), ServerName: "localhost", MinVersion: tls.VersionTLS12}
}

// CAPEM is the test authority's certificate in PEM form.
func CAPEM() []byte {
	_, caPEM := authority()
	return caPEM
}

// CAFile writes the test authority's certificate to a file under t's temporary directory and returns its
// path, for configuration that names a CA file (OUTFLOW_MAIL_CA_FILE).
func CAFile(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mailtest-ca.pem")
	if err := os.WriteFile(path, CAPEM(), 0o600); err != nil {
		t.Fatalf("mailtest: %v", err)
	}
	return path
}
