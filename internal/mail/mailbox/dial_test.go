package mailbox_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

const (
	user = "ada@example.com"
	pass = "s3cret-pass"
)

// testDialer trusts the test authority and, since the servers listen on 127.0.0.1, admits loopback hosts.
func testDialer() mailbox.Dialer {
	return mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true, Timeout: 5 * time.Second}
}

func server(t *testing.T, addr string, security mailbox.Security, password string) mailbox.Server {
	t.Helper()
	_, portText, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	port, err := strconv.Atoi(portText)
	require.NoError(t, err)
	return mailbox.Server{Host: "localhost", Port: port, Username: user, Password: password, Security: security}
}

func requireKind(t *testing.T, err error, service string, kind mailbox.Kind) *mailbox.CheckError {
	t.Helper()
	var ce *mailbox.CheckError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, service, ce.Service)
	require.Equal(t, kind, ce.Kind, ce.Error())
	require.NotEmpty(t, ce.Fix())
	return ce
}

func TestDefaultSecurity(t *testing.T) {
	t.Parallel()
	for port, want := range map[int]mailbox.Security{465: mailbox.SecurityTLS, 993: mailbox.SecurityTLS,
		587: mailbox.SecurityStartTLS, 143: mailbox.SecurityStartTLS, 25: mailbox.SecurityStartTLS} {
		require.Equal(t, want, mailbox.DefaultSecurity(port), port)
	}
}

func TestChecksLogInOverStartTLSAndImplicitTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testDialer()
	require.NoError(t, d.CheckSMTP(ctx, server(t, mailtest.NewSMTPServer(t, user, pass).Addr, mailbox.SecurityStartTLS, pass)))
	require.NoError(t, d.CheckSMTP(ctx, server(t, mailtest.NewSMTPServer(t, user, pass, mailtest.ImplicitTLS()).Addr, mailbox.SecurityTLS, pass)))
	require.NoError(t, d.CheckIMAP(ctx, server(t, mailtest.NewIMAPServer(t, user, pass).Addr, mailbox.SecurityStartTLS, pass)))
	require.NoError(t, d.CheckIMAP(ctx, server(t, mailtest.NewIMAPServer(t, user, pass, mailtest.ImplicitTLS()).Addr, mailbox.SecurityTLS, pass)))
}

func TestChecksClassifyFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testDialer()
	smtpAddr := mailtest.NewSMTPServer(t, user, pass).Addr
	imapAddr := mailtest.NewIMAPServer(t, user, pass).Addr

	// A wrong password is an auth failure whose text never holds the password.
	ce := requireKind(t, d.CheckSMTP(ctx, server(t, smtpAddr, mailbox.SecurityStartTLS, "wrong-pw-123")), mailbox.ServiceSMTP, mailbox.KindAuth)
	require.NotContains(t, ce.Error(), "wrong-pw-123")
	ce = requireKind(t, d.CheckIMAP(ctx, server(t, imapAddr, mailbox.SecurityStartTLS, "wrong-pw-123")), mailbox.ServiceIMAP, mailbox.KindAuth)
	require.NotContains(t, ce.Error(), "wrong-pw-123")

	// A certificate from an authority the dialer does not trust is a TLS failure, both ways of starting TLS.
	untrusting := testDialer()
	untrusting.TLS = &tls.Config{RootCAs: x509.NewCertPool()}
	requireKind(t, untrusting.CheckSMTP(ctx, server(t, smtpAddr, mailbox.SecurityStartTLS, pass)), mailbox.ServiceSMTP, mailbox.KindTLS)
	requireKind(t, untrusting.CheckIMAP(ctx, server(t, mailtest.NewIMAPServer(t, user, pass, mailtest.ImplicitTLS()).Addr, mailbox.SecurityTLS, pass)), mailbox.ServiceIMAP, mailbox.KindTLS)
	// Implicit TLS against a STARTTLS port fails the handshake instead of hanging.
	requireKind(t, d.CheckSMTP(ctx, server(t, smtpAddr, mailbox.SecurityTLS, pass)), mailbox.ServiceSMTP, mailbox.KindTLS)
	// STARTTLS asked of a server that does not offer it.
	plainSMTP := mailtest.NewSMTPServer(t, user, pass, mailtest.NoTLS()).Addr
	requireKind(t, d.CheckSMTP(ctx, server(t, plainSMTP, mailbox.SecurityStartTLS, pass)), mailbox.ServiceSMTP, mailbox.KindTLS)
	plainIMAP := mailtest.NewIMAPServer(t, user, pass, mailtest.NoTLS()).Addr
	requireKind(t, d.CheckIMAP(ctx, server(t, plainIMAP, mailbox.SecurityStartTLS, pass)), mailbox.ServiceIMAP, mailbox.KindTLS)

	// Nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	requireKind(t, d.CheckIMAP(ctx, server(t, closed, mailbox.SecurityStartTLS, pass)), mailbox.ServiceIMAP, mailbox.KindConnect)
}

func TestPlainAndPrivateConnectionsNeedTheInsecureSwitch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	plainSMTP := mailtest.NewSMTPServer(t, user, pass, mailtest.NoTLS())
	plainIMAP := mailtest.NewIMAPServer(t, user, pass, mailtest.NoTLS())
	d := testDialer()
	require.NoError(t, d.CheckSMTP(ctx, server(t, plainSMTP.Addr, mailbox.SecurityNone, pass)), "loopback host with the switch on")
	require.NoError(t, d.CheckIMAP(ctx, server(t, plainIMAP.Addr, mailbox.SecurityNone, pass)))

	strict := testDialer()
	strict.AllowInsecure = false
	requireKind(t, strict.CheckSMTP(ctx, server(t, plainSMTP.Addr, mailbox.SecurityNone, pass)), mailbox.ServiceSMTP, mailbox.KindInsecure)
	// Without the switch a loopback (or any private) address is not dialed at all: tenants cannot probe the
	// deployment's own network.
	requireKind(t, strict.CheckSMTP(ctx, server(t, mailtest.NewSMTPServer(t, user, pass).Addr, mailbox.SecurityStartTLS, pass)), mailbox.ServiceSMTP, mailbox.KindConnect)
	literal := server(t, mailtest.NewIMAPServer(t, user, pass, mailtest.ImplicitTLS()).Addr, mailbox.SecurityTLS, pass)
	literal.Host = "127.0.0.1"
	requireKind(t, strict.CheckIMAP(ctx, literal), mailbox.ServiceIMAP, mailbox.KindConnect)

	remote := server(t, plainSMTP.Addr, mailbox.SecurityNone, pass)
	remote.Host = "mail.example.com"
	requireKind(t, d.CheckSMTP(ctx, remote), mailbox.ServiceSMTP, mailbox.KindInsecure)
}

func TestSessionsSendAndRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testDialer()
	smtpSrv := mailtest.NewSMTPServer(t, user, pass)
	c, err := d.SMTP(ctx, server(t, smtpSrv.Addr, mailbox.SecurityStartTLS, pass))
	require.NoError(t, err)
	require.NoError(t, c.SendMail(user, []string{"bob@example.com"}, stringsReader("Subject: hi\r\n\r\nhello\r\n")))
	require.NoError(t, c.Quit())
	got := smtpSrv.Messages()
	require.Len(t, got, 1)
	require.Equal(t, []string{"bob@example.com"}, got[0].To)

	imapSrv := mailtest.NewIMAPServer(t, user, pass)
	uid := imapSrv.Append(t, "INBOX", []byte("Subject: hello\r\n\r\nbody\r\n"), imap.FlagSeen)
	require.NotZero(t, uid)
	ic, err := d.IMAP(ctx, server(t, imapSrv.Addr, mailbox.SecurityStartTLS, pass), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ic.Close() })
	sel, err := ic.Select("INBOX", nil).Wait()
	require.NoError(t, err)
	require.Equal(t, uint32(1), sel.NumMessages)
}

func stringsReader(s string) *bytes.Reader { return bytes.NewReader([]byte(s)) }

func TestSilentServerCannotHangACheck(t *testing.T) {
	t.Parallel()
	// A server that accepts connections and never says a word, like a port a firewall swallows.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	d := testDialer()
	d.Timeout = 300 * time.Millisecond
	ctx := context.Background()
	for _, sec := range []mailbox.Security{mailbox.SecurityStartTLS, mailbox.SecurityTLS} {
		start := time.Now()
		requireKind(t, d.CheckSMTP(ctx, server(t, ln.Addr().String(), sec, pass)), mailbox.ServiceSMTP, mailbox.KindConnect)
		requireKind(t, d.CheckIMAP(ctx, server(t, ln.Addr().String(), sec, pass)), mailbox.ServiceIMAP, mailbox.KindConnect)
		_, err := d.SMTP(ctx, server(t, ln.Addr().String(), sec, pass))
		requireKind(t, err, mailbox.ServiceSMTP, mailbox.KindConnect)
		_, err = d.IMAP(ctx, server(t, ln.Addr().String(), sec, pass), nil)
		requireKind(t, err, mailbox.ServiceIMAP, mailbox.KindConnect)
		require.Less(t, time.Since(start), 3*time.Second, sec)
	}
}

func TestOAuthSessionsLogInWithXOAUTH2(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testDialer()
	smtpSrv := mailtest.NewSMTPServer(t, user, pass)
	imapSrv := mailtest.NewIMAPServer(t, user, pass)
	withToken := func(addr, token string) mailbox.Server {
		s := server(t, addr, mailbox.SecurityStartTLS, "")
		s.AccessToken = token
		return s
	}
	// A server that takes no tokens is told apart from a refused token.
	requireKind(t, d.CheckSMTP(ctx, withToken(smtpSrv.Addr, "ya29.token")), mailbox.ServiceSMTP, mailbox.KindProtocol)

	smtpSrv.AcceptToken("ya29.good")
	imapSrv.AcceptToken("ya29.good")
	require.NoError(t, d.CheckSMTP(ctx, withToken(smtpSrv.Addr, "ya29.good")))
	require.NoError(t, d.CheckIMAP(ctx, withToken(imapSrv.Addr, "ya29.good")))
	ce := requireKind(t, d.CheckSMTP(ctx, withToken(smtpSrv.Addr, "ya29.expired")), mailbox.ServiceSMTP, mailbox.KindAuth)
	require.NotContains(t, ce.Error(), "ya29.expired")
	ce = requireKind(t, d.CheckIMAP(ctx, withToken(imapSrv.Addr, "ya29.expired")), mailbox.ServiceIMAP, mailbox.KindAuth)
	require.NotContains(t, ce.Error(), "ya29.expired")
}
