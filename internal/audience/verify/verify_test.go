package verify_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/testkit/verifytest"
)

// rig is a verifier wired to an in-process DNS server and mail server.
type rig struct {
	dns  *verifytest.DNS
	smtp *verifytest.SMTP
	v    *verify.Verifier
}

// setup starts the peers and a verifier that asks them; probe turns the SMTP probe on.
func setup(t *testing.T, probe bool) rig {
	t.Helper()
	r := rig{dns: verifytest.NewDNS(t), smtp: verifytest.NewSMTP(t)}
	o := verify.Options{Resolver: verify.NewResolver(r.dns.Addr), Timeout: 3 * time.Second}
	if probe {
		o.Probe = &verify.ProbeOptions{From: "probe@sender.test", Port: r.smtp.Port, AllowPrivate: true}
	}
	r.v = verify.New(o)
	return r
}

// mailDomain gives domain an MX pointing at the in-process mail server.
func (r rig) mailDomain(domain string) {
	r.dns.MX(domain, 10, "mx."+domain)
	r.dns.A("mx."+domain, "127.0.0.1")
}

func (r rig) check(t *testing.T, emails ...string) []verify.Result {
	t.Helper()
	return r.v.NewBatch().Check(context.Background(), emails)
}

func TestCheckProbeValidMailbox(t *testing.T) {
	t.Parallel()
	r := setup(t, true)
	r.mailDomain("valid.test")
	r.smtp.Accept("ada@valid.test")

	res := r.check(t, "Ada <ADA@valid.test>")
	require.Equal(t, contacts.StatusValid, res[0].Status)
	require.Empty(t, res[0].SubStatus)
	require.Equal(t, 95, res[0].Confidence)
	require.False(t, res[0].CatchAll)
	require.Equal(t, "The mail server accepted the mailbox.", res[0].Reason)
	require.Equal(t, []string{"probe@sender.test"}, r.smtp.Mails())
	rcpts := r.smtp.Rcpts()
	require.Len(t, rcpts, 2, "the address and one made-up address for the catch-all test")
	require.Equal(t, "ada@valid.test", rcpts[0])
	require.True(t, strings.HasSuffix(rcpts[1], "@valid.test") && rcpts[1] != rcpts[0])
}

func TestCheckProbeInvalidMailbox(t *testing.T) {
	t.Parallel()
	r := setup(t, true)
	r.mailDomain("valid.test")
	r.smtp.Reply("moved@valid.test", 551, smtp.EnhancedCode{5, 1, 6}, "User has moved")

	res := r.check(t, "nobody@valid.test", "moved@valid.test")
	for _, got := range res {
		require.Equal(t, contacts.StatusInvalid, got.Status)
		require.Empty(t, got.SubStatus)
		require.Equal(t, 90, got.Confidence)
	}
	require.Contains(t, res[0].Reason, "550 No such user here")
	require.Contains(t, res[1].Reason, "551 User has moved")
	require.Equal(t, 1, r.smtp.Sessions(), "addresses at one domain share a connection")
	require.Equal(t, []string{"nobody@valid.test", "moved@valid.test"}, r.smtp.Rcpts(), "no catch-all test without an accepted address")
}

func TestCheckNoMX(t *testing.T) {
	t.Parallel()
	r := setup(t, true)

	res := r.check(t, "ada@nowhere.test")
	require.Equal(t, verify.Result{Status: contacts.StatusInvalid, SubStatus: "no_mx", Confidence: 95,
		Reason: "nowhere.test has no MX, A or AAAA record: it cannot receive mail."}, res[0])
	require.Zero(t, r.smtp.Sessions())
}

func TestCheckNullMX(t *testing.T) {
	t.Parallel()
	r := setup(t, true)
	r.dns.MX("nomail.test", 0, ".")
	r.dns.A("nomail.test", "127.0.0.1") // an address does not make a null-MX domain take mail

	res := r.check(t, "ada@nomail.test")
	require.Equal(t, contacts.StatusInvalid, res[0].Status)
	require.Equal(t, "no_mx", res[0].SubStatus)
	require.Equal(t, 99, res[0].Confidence)
	require.Contains(t, res[0].Reason, "null MX")
	require.Zero(t, r.smtp.Sessions())
}

func TestCheckImplicitMX(t *testing.T) {
	t.Parallel()
	r := setup(t, true)
	r.dns.A("plain.test", "127.0.0.1") // no MX: RFC 5321 falls back to the domain's own address
	r.smtp.Accept("ada@plain.test")

	res := r.check(t, "ada@plain.test")
	require.Equal(t, contacts.StatusValid, res[0].Status)
	require.Equal(t, 95, res[0].Confidence)
	require.Equal(t, 1, r.smtp.Sessions())
}

func TestCheckDisposableAndSyntaxNeedNoDNS(t *testing.T) {
	t.Parallel()
	r := setup(t, true)

	res := r.check(t, "ada@mailinator.com", "bob@eu.yopmail.com", "not an address", "@valid.test")
	require.Equal(t, verify.Result{Status: contacts.StatusInvalid, SubStatus: "disposable", Confidence: 95,
		Reason: "mailinator.com is a disposable (throwaway) mailbox service."}, res[0])
	require.Equal(t, "disposable", res[1].SubStatus, "a subdomain of a disposable service is disposable")
	for _, got := range res[2:] {
		require.Equal(t, verify.Result{Status: contacts.StatusInvalid, SubStatus: "syntax", Confidence: 100,
			Reason: "This is not a valid email address."}, got)
	}
	require.Empty(t, r.dns.Queries())
	require.Zero(t, r.smtp.Sessions())
}

func TestCheckRole(t *testing.T) {
	t.Parallel()
	t.Run("without probe", func(t *testing.T) {
		r := setup(t, false)
		r.mailDomain("corp.test")
		res := r.check(t, "sales+eu@corp.test", "ada@corp.test")
		require.Equal(t, contacts.StatusRisky, res[0].Status)
		require.Equal(t, "role", res[0].SubStatus)
		require.Equal(t, 70, res[0].Confidence)
		require.Contains(t, res[0].Reason, `"sales+eu" names a role`)
		require.Equal(t, verify.Result{Status: contacts.StatusValid, Confidence: 70,
			Reason: "corp.test takes mail (mail exchanger found); the mailbox itself was not probed.", HasMX: true}, res[1])
		require.Zero(t, r.smtp.Sessions(), "the probe is off")
	})
	t.Run("with probe", func(t *testing.T) {
		r := setup(t, true)
		r.mailDomain("corp.test")
		r.smtp.Accept("info@corp.test")
		res := r.check(t, "info@corp.test", "admin@corp.test")
		require.Equal(t, contacts.StatusRisky, res[0].Status)
		require.Equal(t, "role", res[0].SubStatus)
		require.Equal(t, 90, res[0].Confidence)
		require.Equal(t, contacts.StatusInvalid, res[1].Status, "a refused role mailbox is invalid like any other")
	})
}

func TestCheckCatchAll(t *testing.T) {
	t.Parallel()
	r := setup(t, true)
	r.mailDomain("anything.test")
	r.smtp.CatchAll("anything.test")
	b := r.v.NewBatch()

	res := b.Check(context.Background(), []string{"ada@anything.test", "bob@anything.test", "support@anything.test"})
	for _, got := range res[:2] {
		require.Equal(t, contacts.StatusRisky, got.Status)
		require.Equal(t, "catch_all", got.SubStatus)
		require.Equal(t, 50, got.Confidence)
		require.True(t, got.CatchAll)
	}
	require.Equal(t, "role", res[2].SubStatus, "role wins the sub-status")
	require.True(t, res[2].CatchAll)
	require.Len(t, r.smtp.Rcpts(), 4, "three addresses and one catch-all test")

	// The batch remembers the domain: no second MX lookup, no second catch-all test.
	res = b.Check(context.Background(), []string{"cy@anything.test"})
	require.Equal(t, "catch_all", res[0].SubStatus)
	require.Len(t, r.smtp.Rcpts(), 5)
	mxQueries := 0
	for _, q := range r.dns.Queries() {
		if q == "MX anything.test." {
			mxQueries++
		}
	}
	require.Equal(t, 1, mxQueries)
}

func TestCheckTemporaryFailure(t *testing.T) {
	t.Parallel()
	r := setup(t, true)
	r.mailDomain("busy.test")
	r.smtp.Reply("ada@busy.test", 451, smtp.EnhancedCode{4, 7, 1}, "Greylisted, try again later")

	res := r.check(t, "ada@busy.test")
	require.Equal(t, contacts.StatusUnknown, res[0].Status)
	require.Equal(t, 20, res[0].Confidence)
	require.Equal(t, "The mail server deferred the check: 451 Greylisted, try again later; check again later.", res[0].Reason)
}

func TestCheckMailboxFullAndPolicyRefusal(t *testing.T) {
	t.Parallel()
	r := setup(t, true)
	r.mailDomain("full.test")
	r.smtp.Reply("full@full.test", 552, smtp.EnhancedCode{5, 2, 2}, "Mailbox full")
	r.smtp.Reply("ada@full.test", 550, smtp.EnhancedCode{5, 7, 1}, "Client host blocked")

	res := r.check(t, "full@full.test", "ada@full.test")
	require.Equal(t, contacts.StatusRisky, res[0].Status)
	require.Equal(t, "mailbox_full", res[0].SubStatus)
	require.Equal(t, contacts.StatusUnknown, res[1].Status, "a 5.7.x refusal is about the prober, not the mailbox")
	require.Contains(t, res[1].Reason, "refused the check itself")
}

func TestCheckUnreachableMailServer(t *testing.T) {
	t.Parallel()
	d := verifytest.NewDNS(t)
	d.MX("closed.test", 10, "mx.closed.test")
	d.A("mx.closed.test", "127.0.0.1")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close()) // nothing listens there any more
	v := verify.New(verify.Options{Resolver: verify.NewResolver(d.Addr), Timeout: 3 * time.Second,
		Probe: &verify.ProbeOptions{From: "probe@sender.test", Port: port, AllowPrivate: true}})

	res := v.NewBatch().Check(context.Background(), []string{"ada@closed.test", "bob@closed.test"})
	for _, got := range res {
		require.Equal(t, contacts.StatusUnknown, got.Status)
		require.Contains(t, got.Reason, "could not be asked")
		require.Contains(t, got.Reason, "port 25")
	}
}

func TestCheckDNSFailure(t *testing.T) {
	t.Parallel()
	r := setup(t, false)
	r.dns.ServFail("broken.test")
	b := r.v.NewBatch()

	res := b.Check(context.Background(), []string{"ada@broken.test"})
	require.Equal(t, verify.Result{Status: contacts.StatusUnknown, Confidence: 0,
		Reason: "The DNS lookup of broken.test failed; check again later."}, res[0])
	before := len(r.dns.Queries())
	b.Check(context.Background(), []string{"bob@broken.test"})
	require.Greater(t, len(r.dns.Queries()), before, "a DNS failure is asked again, not remembered")
}

func TestReady(t *testing.T) {
	t.Parallel()
	r := setup(t, false)
	require.True(t, r.v.Ready(context.Background()))
	require.True(t, slices.Contains(r.dns.Queries(), "MX example.com."))

	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	silent := pc.LocalAddr().String()
	require.NoError(t, pc.Close()) // no DNS server there
	v := verify.New(verify.Options{Resolver: verify.NewResolver(silent), Timeout: time.Second})
	require.False(t, v.Ready(context.Background()))
}

func TestCheckProbeConnectsOnlyToPublicAddresses(t *testing.T) {
	t.Parallel()
	d := verifytest.NewDNS(t)
	d.MX("inside.test", 10, "mx.inside.test")
	d.A("mx.inside.test", "127.0.0.1")
	mail := verifytest.NewSMTP(t)
	mail.Accept("ada@inside.test")
	v := verify.New(verify.Options{Resolver: verify.NewResolver(d.Addr), Timeout: 3 * time.Second,
		Probe: &verify.ProbeOptions{From: "probe@sender.test", Port: mail.Port}})

	res := v.NewBatch().Check(context.Background(), []string{"ada@inside.test"})
	require.Equal(t, contacts.StatusUnknown, res[0].Status)
	require.Contains(t, res[0].Reason, "mx.inside.test has no publicly routable address")
	require.Zero(t, mail.Sessions(), "a tenant's MX must not reach the deployment's own network")
}
