package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/outflowhq/outflow/internal/audience/contacts"
)

// Provider names the built-in verifier: the verification_provider its verdicts carry and the provider the
// API reports when no external verifier is connected.
const Provider = "builtin"

// Source is the verification_source of the built-in verifier's verdicts.
const Source = "probe"

// Resolver is the part of DNS the verifier asks: mail exchangers, and addresses for the implicit MX and for
// the mail hosts it connects to. *net.Resolver implements it.
type Resolver interface {
	LookupMX(ctx context.Context, name string) ([]*net.MX, error)
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// NewResolver returns the resolver of a deployment: the system's when server is empty, otherwise Go's own
// resolver sending every query to server (host:port), for hosts whose system resolver is unsuitable and for
// tests that answer from an in-process DNS server.
func NewResolver(server string) *net.Resolver {
	if server == "" {
		return &net.Resolver{}
	}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, server)
	}}
}

// Options configure a Verifier.
type Options struct {
	// Resolver answers the DNS questions; nil uses the system resolver.
	Resolver Resolver
	// Probe turns on the SMTP probe; nil checks syntax, lists and DNS only.
	Probe *ProbeOptions
	// Timeout bounds each DNS lookup, each connection attempt and each SMTP command; zero is 10 seconds.
	Timeout time.Duration
}

// ProbeOptions configure the SMTP probe: how the verifier introduces itself to the mail servers it asks.
type ProbeOptions struct {
	// From is the MAIL FROM address; it should be a real mailbox of a domain with good reputation, because
	// servers judge the probe by it.
	From string
	// HeloName is the EHLO name; it should resolve to the probing host. Empty uses From's domain.
	HeloName string
	// Port is the mail servers' SMTP port; zero is 25 (other values serve tests).
	Port int
	// AllowPrivate lets the probe connect to mail hosts at loopback, private and other addresses that are not
	// publicly routable, for test rigs. Otherwise such a host is never connected to (the address's verdict is
	// unknown): an MX is chosen by whoever owns the domain, and tenants must not reach into the deployment's
	// own network through it.
	AllowPrivate bool
}

// Verifier checks addresses. It is safe for concurrent use; checks that should share lookups go through a
// Batch.
type Verifier struct {
	resolver Resolver
	probe    *ProbeOptions
	timeout  time.Duration

	mu      sync.Mutex
	ready   bool
	readyAt time.Time
}

// New builds a verifier.
func New(o Options) *Verifier {
	v := &Verifier{resolver: o.Resolver, timeout: o.Timeout}
	if v.resolver == nil {
		v.resolver = NewResolver("")
	}
	if v.timeout <= 0 {
		v.timeout = 10 * time.Second
	}
	if o.Probe != nil {
		p := *o.Probe
		if p.Port == 0 {
			p.Port = 25
		}
		if p.HeloName == "" {
			p.HeloName = contacts.Domain(p.From)
		}
		v.probe = &p
	}
	return v
}

// Probing reports whether the SMTP probe is on.
func (v *Verifier) Probing() bool { return v.probe != nil }

// readyTTL is how long a readiness answer is reused: the overview asks on every call.
const readyTTL = time.Minute

// readyDomain is asked for its MX to tell whether DNS works: IANA's reserved example.com, which every working
// resolver can answer (it publishes a null MX).
const readyDomain = "example.com."

// Ready reports whether the verifier can work on this deployment, which needs DNS: it asks for the MX of
// example.com and takes any answer, "no such domain" included, as a working resolver; a timeout or a refused
// query is not ready. The answer is reused for a minute. The SMTP probe is not part of it: an unreachable mail
// server makes single verdicts unknown, not the verifier unusable.
func (v *Verifier) Ready(ctx context.Context) bool {
	v.mu.Lock()
	if !v.readyAt.IsZero() && time.Since(v.readyAt) < readyTTL {
		defer v.mu.Unlock()
		return v.ready
	}
	v.mu.Unlock()
	lctx, cancel := context.WithTimeout(ctx, min(v.timeout, 3*time.Second))
	defer cancel()
	_, err := v.resolver.LookupMX(lctx, readyDomain)
	ready := err == nil || notFound(err)
	if ctx.Err() != nil {
		return ready // the caller gave up: not an answer worth keeping
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ready, v.readyAt = ready, time.Now()
	return ready
}

// Result is one address's verdict, as it is stored on the contact.
type Result struct {
	Status contacts.Status
	// SubStatus is catch_all, disposable, role, mailbox_full, no_mx, syntax or empty.
	SubStatus string
	// Reason says in a sentence why.
	Reason string
	// Confidence is how sure the verdict is, 0 to 100.
	Confidence int
	// CatchAll is set when the domain's mail server accepts any local part.
	CatchAll bool
	// HasMX is set when the domain takes mail: a mail exchanger, or an address of its own (an implicit MX).
	HasMX bool
}

// maxReason is the longest reason stored (the contacts column allows 500 characters).
const maxReason = 500

// parallelDomains is how many domains of a batch are looked up and probed at once.
const parallelDomains = 8

// Batch checks addresses that share lookups: each domain's MX answer and catch-all test are made once for
// the batch's lifetime, and the addresses of one domain in one Check share an SMTP connection. A DNS failure
// is not kept, so a later Check asks again. Keep a batch for a bounded stretch of work (the run worker keeps
// one for a slice of at most a minute): what it remembers is not refreshed.
type Batch struct {
	v       *Verifier
	mu      sync.Mutex
	domains map[string]*domainInfo
}

// NewBatch starts a batch.
func (v *Verifier) NewBatch() *Batch {
	return &Batch{v: v, domains: map[string]*domainInfo{}}
}

// catchAll is what the batch knows about a domain accepting any local part.
type catchAll int8

const (
	catchAllUntested catchAll = iota
	catchAllYes
	catchAllNo
	catchAllUndecided
)

// domainInfo is what a batch knows about one domain.
type domainInfo struct {
	name string
	// hosts are the mail hosts in preference order (the domain itself for an implicit MX).
	hosts []string
	// verdict is set when DNS decides every address at the domain (no mail exchanger, lookup failure).
	verdict *Result
	// keep is false for an answer a later check should not reuse (a DNS failure).
	keep     bool
	catchAll catchAll
}

// Check verifies emails and returns their verdicts in the same order. Addresses are checked in parallel by
// domain; the results are complete even when ctx ends (the unfinished ones are unknown), so callers that stop
// on cancellation must look at ctx themselves.
func (b *Batch) Check(ctx context.Context, emails []string) []Result {
	out := make([]Result, len(emails))
	addrs := make([]string, len(emails))
	byDomain := map[string][]int{}
	var order []string
	for i, raw := range emails {
		addr, ok := contacts.NormalizeEmail(raw)
		if !ok {
			out[i] = Result{Status: contacts.StatusInvalid, SubStatus: "syntax", Confidence: 100,
				Reason: "This is not a valid email address."}
			continue
		}
		domain := contacts.Domain(addr)
		if IsDisposable(domain) {
			out[i] = Result{Status: contacts.StatusInvalid, SubStatus: "disposable", Confidence: 95,
				Reason: fmt.Sprintf("%s is a disposable (throwaway) mailbox service.", domain)}
			continue
		}
		addrs[i] = addr
		if _, seen := byDomain[domain]; !seen {
			order = append(order, domain)
		}
		byDomain[domain] = append(byDomain[domain], i)
	}
	sem := make(chan struct{}, parallelDomains)
	var wg sync.WaitGroup
	for _, domain := range order {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			b.checkDomain(ctx, domain, byDomain[domain], addrs, out)
		})
	}
	wg.Wait()
	return out
}

// checkDomain fills out[i] for the addresses at one domain (their indexes idx).
func (b *Batch) checkDomain(ctx context.Context, domain string, idx []int, addrs []string, out []Result) {
	d := b.domain(ctx, domain)
	if d.verdict != nil {
		for _, i := range idx {
			out[i] = *d.verdict
		}
		return
	}
	if b.v.probe == nil {
		for _, i := range idx {
			out[i] = unprobed(addrs[i])
			out[i].HasMX = true
		}
		return
	}
	batch := make([]string, len(idx))
	for k, i := range idx {
		batch[k] = addrs[i]
	}
	replies := b.v.probe.session(ctx, b.v, d, batch)
	for k, i := range idx {
		out[i] = judge(addrs[i], replies[k], d)
	}
	for _, i := range idx {
		out[i].HasMX = true
	}
}

// domain returns the batch's knowledge of a domain, looking it up on first use. Only one goroutine of a Check
// handles a domain, so the lookup itself needs no lock.
func (b *Batch) domain(ctx context.Context, name string) *domainInfo {
	b.mu.Lock()
	d, ok := b.domains[name]
	b.mu.Unlock()
	if ok {
		return d
	}
	d = b.v.lookup(ctx, name)
	if d.keep {
		b.mu.Lock()
		b.domains[name] = d
		b.mu.Unlock()
	}
	return d
}

// lookup finds a domain's mail hosts: its MX records, or by RFC 5321's implicit MX the domain itself when it
// has no MX but an A or AAAA record. A null MX (RFC 7505) or no record at all means it takes no mail.
func (v *Verifier) lookup(ctx context.Context, name string) *domainInfo {
	ctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	d := &domainInfo{name: name, keep: true}
	mxs, err := v.resolver.LookupMX(ctx, name+".")
	if err != nil && !notFound(err) {
		return dnsFailure(name, err)
	}
	for _, mx := range mxs {
		if host := strings.TrimSuffix(mx.Host, "."); host != "" {
			d.hosts = append(d.hosts, host)
		}
	}
	switch {
	case len(d.hosts) > 0:
		return d
	case len(mxs) > 0: // every record is "." : a null MX
		d.verdict = &Result{Status: contacts.StatusInvalid, SubStatus: "no_mx", Confidence: 99,
			Reason: fmt.Sprintf("%s publishes a null MX record: it accepts no mail.", name)}
		return d
	}
	ips, err := v.resolver.LookupIPAddr(ctx, name+".")
	if err != nil && !notFound(err) {
		return dnsFailure(name, err)
	}
	if len(ips) > 0 {
		d.hosts = []string{name}
		return d
	}
	d.verdict = &Result{Status: contacts.StatusInvalid, SubStatus: "no_mx", Confidence: 95,
		Reason: fmt.Sprintf("%s has no MX, A or AAAA record: it cannot receive mail.", name)}
	return d
}

// dnsFailure is the verdict of a domain DNS did not answer for. The reason leaves out the resolver's address.
func dnsFailure(name string, err error) *domainInfo {
	why := "failed"
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsTimeout || errors.Is(err, context.DeadlineExceeded) {
		why = "timed out"
	}
	return &domainInfo{name: name, verdict: &Result{Status: contacts.StatusUnknown, Confidence: 0,
		Reason: fmt.Sprintf("The DNS lookup of %s %s; check again later.", name, why)}}
}

// notFound reports whether err is DNS saying the name or the record does not exist (as opposed to DNS not
// answering).
func notFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

// unprobed is the verdict of an address whose domain takes mail when the probe is off.
func unprobed(addr string) Result {
	local, domain, _ := strings.Cut(addr, "@")
	if IsRole(local) {
		return Result{Status: contacts.StatusRisky, SubStatus: "role", Confidence: 70,
			Reason: fmt.Sprintf("%s takes mail, but %q names a role or a team rather than a person (mailbox not probed).", domain, local)}
	}
	return Result{Status: contacts.StatusValid, Confidence: 70,
		Reason: fmt.Sprintf("%s takes mail (mail exchanger found); the mailbox itself was not probed.", domain)}
}

// oneLine shortens a mail server's reply for a reason: one line, printable, bounded.
func oneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, s)), " ")
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit-1]) + "…"
	}
	return s
}
