// Package verifytest runs the peers the built-in email verifier talks to, in process and over the real
// protocols: a DNS server (miekg/dns, UDP on 127.0.0.1) that answers MX, A, TXT and CNAME questions from
// records a test sets (the mailbox checks of tracking domains and SPF/DKIM/DMARC use it too), and an SMTP server (go-smtp, on 127.0.0.1) that answers RCPT as a test says. Point the verifier's
// resolver at DNS.Addr and its probe port at SMTP.Port, and give every mail host an A record of 127.0.0.1.
package verifytest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/miekg/dns"
)

// DNS is an in-process authoritative DNS server for whatever names a test gives records.
type DNS struct {
	// Addr is the server's UDP address (127.0.0.1:port): verify.NewResolver(Addr) or OUTFLOW_DNS_SERVER.
	Addr string

	mu       sync.Mutex
	mx       map[string][]*dns.MX
	a        map[string][]net.IP
	txt      map[string][]string
	cname    map[string]string
	servFail map[string]bool
	queries  []string
}

// NewDNS starts a DNS server, stopped when t ends. It answers example.com's MX with a null MX, as the real
// one does, so the verifier's readiness check passes.
func NewDNS(t testing.TB) *DNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("verifytest: dns listen: %v", err)
	}
	d := &DNS{Addr: pc.LocalAddr().String(), mx: map[string][]*dns.MX{}, a: map[string][]net.IP{}, txt: map[string][]string{},
		cname: map[string]string{}, servFail: map[string]bool{}}
	d.MX("example.com", 0, ".")
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, Handler: d, NotifyStartedFunc: func() { close(started) }}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return d
}

// MX adds an MX record: domain's mail goes to host at preference pref; host "." is a null MX.
func (d *DNS) MX(domain string, pref uint16, host string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	name := dns.Fqdn(strings.ToLower(domain))
	d.mx[name] = append(d.mx[name], &dns.MX{
		Hdr:        dns.RR_Header{Name: name, Rrtype: dns.TypeMX, Class: dns.ClassINET, Ttl: 60},
		Preference: pref, Mx: dns.Fqdn(host),
	})
}

// A adds an address record for host.
func (d *DNS) A(host, ip string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	name := dns.Fqdn(strings.ToLower(host))
	d.a[name] = append(d.a[name], net.ParseIP(ip).To4())
}

// TXT adds a text record for name.
func (d *DNS) TXT(name, value string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := dns.Fqdn(strings.ToLower(name))
	d.txt[n] = append(d.txt[n], value)
}

// CNAME makes name an alias of target; address questions about name are answered with the alias and
// target's addresses.
func (d *DNS) CNAME(name, target string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cname[dns.Fqdn(strings.ToLower(name))] = dns.Fqdn(strings.ToLower(target))
}

// ServFail makes every question about name fail (SERVFAIL), as a broken authoritative server does.
func (d *DNS) ServFail(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.servFail[dns.Fqdn(strings.ToLower(name))] = true
}

// Queries returns the questions asked so far, as "TYPE name." strings.
func (d *DNS) Queries() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.queries...)
}

// ServeDNS answers from the records: the records of the asked type, an empty answer for a name that has
// other records, NXDOMAIN for a name without any.
func (d *DNS) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	d.mu.Lock()
	for _, q := range req.Question {
		name := strings.ToLower(q.Name)
		d.queries = append(d.queries, dns.TypeToString[q.Qtype]+" "+name)
		if d.servFail[name] {
			m.Rcode = dns.RcodeServerFailure
			continue
		}
		target, alias := d.cname[name]
		if len(d.mx[name]) == 0 && len(d.a[name]) == 0 && len(d.txt[name]) == 0 && !alias {
			m.Rcode = dns.RcodeNameError
			continue
		}
		hdr := func(name string, t uint16) dns.RR_Header {
			return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: 60}
		}
		if alias && (q.Qtype == dns.TypeCNAME || q.Qtype == dns.TypeA || q.Qtype == dns.TypeAAAA) {
			m.Answer = append(m.Answer, &dns.CNAME{Hdr: hdr(name, dns.TypeCNAME), Target: target})
			name = target
		}
		switch q.Qtype {
		case dns.TypeMX:
			for _, rr := range d.mx[name] {
				m.Answer = append(m.Answer, rr)
			}
		case dns.TypeA:
			for _, ip := range d.a[name] {
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr(name, dns.TypeA), A: ip})
			}
		case dns.TypeTXT:
			for _, v := range d.txt[name] {
				m.Answer = append(m.Answer, &dns.TXT{Hdr: hdr(name, dns.TypeTXT), Txt: []string{v}})
			}
		}
	}
	d.mu.Unlock()
	_ = w.WriteMsg(m)
}

// SMTP is an in-process mail server that answers RCPT per address: accepted, refused with a given reply,
// or by default 550 5.1.1 (no such user). It never accepts DATA.
type SMTP struct {
	// Port is the server's TCP port on 127.0.0.1: the verifier's probe port.
	Port int

	mu       sync.Mutex
	accept   map[string]bool
	catchAll map[string]bool
	replies  map[string]*smtp.SMTPError
	sessions int
	mails    []string
	rcpts    []string
}

// NewSMTP starts a mail server, stopped when t ends.
func NewSMTP(t testing.TB) *SMTP {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("verifytest: smtp listen: %v", err)
	}
	s := &SMTP{Port: l.Addr().(*net.TCPAddr).Port, accept: map[string]bool{}, catchAll: map[string]bool{},
		replies: map[string]*smtp.SMTPError{}}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		s.mu.Lock()
		s.sessions++
		s.mu.Unlock()
		return &session{s: s}, nil
	}))
	srv.Domain = "mx.verifytest"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.ErrorLog = quietLog{}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// Accept makes the server accept RCPT for each address.
func (s *SMTP) Accept(addrs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range addrs {
		s.accept[strings.ToLower(a)] = true
	}
}

// CatchAll makes the server accept RCPT for any address at domain.
func (s *SMTP) CatchAll(domain string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.catchAll[strings.ToLower(domain)] = true
}

// Reply makes the server answer RCPT for addr with code, enhanced code and message.
func (s *SMTP) Reply(addr string, code int, enhanced smtp.EnhancedCode, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies[strings.ToLower(addr)] = &smtp.SMTPError{Code: code, EnhancedCode: enhanced, Message: msg}
}

// Sessions returns how many connections the server took.
func (s *SMTP) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions
}

// Mails returns the MAIL FROM addresses received, in order.
func (s *SMTP) Mails() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.mails...)
}

// Rcpts returns the RCPT TO addresses received, in order.
func (s *SMTP) Rcpts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.rcpts...)
}

type session struct{ s *SMTP }

func (ss *session) Reset()        {}
func (ss *session) Logout() error { return nil }

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	ss.s.mu.Lock()
	defer ss.s.mu.Unlock()
	ss.s.mails = append(ss.s.mails, from)
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s := ss.s
	s.mu.Lock()
	defer s.mu.Unlock()
	to = strings.ToLower(to)
	s.rcpts = append(s.rcpts, to)
	_, domain, _ := strings.Cut(to, "@")
	switch {
	case s.replies[to] != nil:
		return s.replies[to]
	case s.accept[to] || s.catchAll[domain]:
		return nil
	}
	return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user here"}
}

func (ss *session) Data(io.Reader) error {
	return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 5, 1}, Message: "This server takes no mail"}
}

// quietLog drops the server's log of client disconnects.
type quietLog struct{}

func (quietLog) Printf(string, ...any) {}
func (quietLog) Println(...any)        {}
