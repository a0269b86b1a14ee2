package verify

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/emersion/go-smtp"

	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/platform/egress"
)

// Limits of one probe session.
const (
	// maxHosts is how many of a domain's mail hosts are tried, best preference first, when connecting fails.
	maxHosts = 3
	// maxRcptPerMail is how many RCPTs one MAIL transaction carries before RSET: servers must accept 100
	// (RFC 5321 4.5.3.1.8), this stays well below.
	maxRcptPerMail = 50
)

// reply is what a mail server answered to one RCPT: code 250 or 251 is accepted; err is set instead when
// there was no SMTP answer (no connection, connection lost).
type reply struct {
	code     int
	enhanced smtp.EnhancedCode
	text     string
	err      error
}

func (r reply) accepted() bool { return r.err == nil && (r.code == 250 || r.code == 251) }

// replyOf reads the result of an SMTP command.
func replyOf(err error) reply {
	if err == nil {
		return reply{code: 250}
	}
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return reply{code: se.Code, enhanced: se.EnhancedCode, text: se.Message}
	}
	return reply{err: err}
}

// session asks one of d's mail hosts about addrs (all at d) over one connection: EHLO, MAIL FROM, then a
// RCPT per address, and once per batch a RCPT to a made-up local part when an address is accepted, to tell
// a catch-all domain. Nothing is ever sent: the session ends with QUIT before DATA. It returns one reply
// per address.
func (p *ProbeOptions) session(ctx context.Context, v *Verifier, d *domainInfo, addrs []string) []reply {
	replies := make([]reply, len(addrs))
	fail := func(from int, r reply) []reply {
		for k := from; k < len(replies); k++ {
			replies[k] = r
		}
		return replies
	}
	conn, err := p.dial(ctx, v, d.hosts)
	if err != nil {
		return fail(0, reply{err: err})
	}
	// The client bounds each command by its own timeout; the connection also ends with ctx.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	c := smtp.NewClient(conn)
	c.CommandTimeout = v.timeout
	defer func() { _ = c.Close() }()
	if err := c.Hello(p.HeloName); err != nil {
		return fail(0, replyOf(err))
	}
	if err := c.Mail(p.From, nil); err != nil {
		return fail(0, replyOf(err))
	}
	inMail := 0
	for k, addr := range addrs {
		if inMail >= maxRcptPerMail {
			if err := c.Reset(); err != nil {
				return fail(k, replyOf(err))
			}
			if err := c.Mail(p.From, nil); err != nil {
				return fail(k, replyOf(err))
			}
			inMail = 0
		}
		replies[k] = replyOf(c.Rcpt(addr, nil))
		inMail++
		if replies[k].err != nil {
			return fail(k, replies[k])
		}
		if replies[k].accepted() && d.catchAll == catchAllUntested {
			r := replyOf(c.Rcpt(madeUpAddress(d.name), nil))
			inMail++
			switch {
			case r.accepted():
				d.catchAll = catchAllYes
			case r.err == nil && mailboxRefused(r):
				d.catchAll = catchAllNo
			default:
				d.catchAll = catchAllUndecided
			}
			if r.err != nil {
				return fail(k+1, r)
			}
		}
	}
	_ = c.Quit()
	return replies
}

// dial connects to the first reachable mail host, best preference first, at most maxHosts of them. Host
// addresses come from the verifier's resolver, like everything else it looks up, and only publicly routable
// ones are connected to unless AllowPrivate; the connection goes to the checked address itself, so nothing
// is resolved again in between.
func (p *ProbeOptions) dial(ctx context.Context, v *Verifier, hosts []string) (net.Conn, error) {
	var lastErr error
	for _, host := range hosts[:min(len(hosts), maxHosts)] {
		ips, err := v.hostIPs(ctx, host)
		if err != nil {
			lastErr = fmt.Errorf("look up %s: %w", host, err)
			continue
		}
		if !p.AllowPrivate {
			ips = slices.DeleteFunc(ips, func(ip net.IP) bool {
				a, ok := netip.AddrFromSlice(ip)
				return !ok || !egress.Public(a.Unmap())
			})
			if len(ips) == 0 {
				lastErr = fmt.Errorf("%s has no publicly routable address", host)
				continue
			}
		}
		for _, ip := range ips[:min(len(ips), 2)] {
			dctx, cancel := context.WithTimeout(ctx, v.timeout)
			var d net.Dialer
			conn, err := d.DialContext(dctx, "tcp", net.JoinHostPort(ip.String(), strconv.Itoa(p.Port)))
			cancel()
			if err == nil {
				return conn, nil
			}
			lastErr = fmt.Errorf("connect to %s port %d: %w", host, p.Port, err)
		}
	}
	if lastErr == nil {
		lastErr = errors.New("no mail host")
	}
	return nil, lastErr
}

// hostIPs resolves a mail host (an IP literal stands for itself).
func (v *Verifier) hostIPs(ctx context.Context, host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	addrs, err := v.resolver.LookupIPAddr(ctx, host+".")
	if err != nil {
		return nil, err
	}
	ips := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		ips = append(ips, a.IP)
	}
	if len(ips) == 0 {
		return nil, errors.New("no address")
	}
	return ips, nil
}

// madeUpAddress is a local part no one has at domain, for the catch-all test.
func madeUpAddress(domain string) string {
	return "outflow-check-" + strings.ToLower(rand.Text()[:16]) + "@" + domain
}

// mailboxRefused reports whether a reply says the mailbox does not exist: 550, 551 or 553, unless the
// enhanced code is 5.7.x (a policy refusal, such as a blocklisted prober, says nothing about the mailbox).
func mailboxRefused(r reply) bool {
	switch r.code {
	case 550, 551, 553:
		return r.enhanced[0] != 5 || r.enhanced[1] != 7
	}
	return false
}

// judge turns an address's reply into its verdict.
func judge(addr string, r reply, d *domainInfo) Result {
	local, _, _ := strings.Cut(addr, "@")
	said := func() string { return oneLine(fmt.Sprintf("%d %s", r.code, r.text), 200) }
	switch {
	case r.err != nil:
		why := fmt.Sprintf("The mail server of %s could not be asked (%v).", d.name, r.err)
		var opErr *net.OpError
		if errors.As(r.err, &opErr) && opErr.Op == "dial" {
			why += " Many networks block outbound connections to port 25."
		}
		return Result{Status: contacts.StatusUnknown, Confidence: 20, Reason: oneLine(why, maxReason)}
	case mailboxRefused(r):
		return Result{Status: contacts.StatusInvalid, Confidence: 90,
			Reason: fmt.Sprintf("The mail server refused the mailbox: %s.", said())}
	case r.code == 552:
		return Result{Status: contacts.StatusRisky, SubStatus: "mailbox_full", Confidence: 70,
			Reason: fmt.Sprintf("The mailbox is over its storage quota: %s.", said())}
	case r.code >= 400 && r.code < 500:
		return Result{Status: contacts.StatusUnknown, Confidence: 20,
			Reason: fmt.Sprintf("The mail server deferred the check: %s; check again later.", said())}
	case !r.accepted():
		return Result{Status: contacts.StatusUnknown, Confidence: 20,
			Reason: fmt.Sprintf("The mail server refused the check itself: %s.", said())}
	}
	var out Result
	switch d.catchAll {
	case catchAllYes:
		out = Result{Status: contacts.StatusRisky, SubStatus: "catch_all", Confidence: 50, CatchAll: true,
			Reason: fmt.Sprintf("The mail server of %s accepts any address, so this mailbox cannot be confirmed.", d.name)}
	case catchAllNo:
		out = Result{Status: contacts.StatusValid, Confidence: 95, Reason: "The mail server accepted the mailbox."}
	default:
		out = Result{Status: contacts.StatusValid, Confidence: 80,
			Reason: "The mail server accepted the mailbox; whether it accepts any address could not be told."}
	}
	if IsRole(local) {
		out.Status, out.SubStatus, out.Confidence = contacts.StatusRisky, "role", 90
		out.Reason = fmt.Sprintf("The mail server accepted the mailbox, but %q names a role or a team rather than a person.", local)
	}
	return out
}
