package mailtest

import (
	"bufio"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-imap/v2"
)

// CondStoreProxy puts CONDSTORE (RFC 7162) in front of an IMAPServer started with NoTLS, whose in-memory
// backend lacks it, for what a sync uses of it: the capability is offered, SELECT ... (CONDSTORE) is answered
// with the proxy's HIGHESTMODSEQ, and UID FETCH ... (CHANGEDSINCE n) returns only the messages whose flags
// the test said changed after n (Change). The modification sequences are the proxy's own: a flag change made
// on the server without Change is one CONDSTORE does not report, which lets a test tell the CONDSTORE path
// from a full re-read. A FETCH that asks for MODSEQ gets each message's: the one Change gave it, else the
// proxy's starting HIGHESTMODSEQ. It speaks plain text on loopback and records the commands it relays.
type CondStoreProxy struct {
	// Addr is host:port to dial.
	Addr string

	target string

	mu       sync.Mutex
	start    uint64
	modSeq   uint64
	changed  map[imap.UID]uint64
	commands []string
}

// NewCondStoreProxy starts a proxy to the server at target (NoTLS) with HIGHESTMODSEQ start; it stops when t
// ends.
func NewCondStoreProxy(t testing.TB, target string, start uint64) *CondStoreProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: listen: %v", err)
	}
	p := &CondStoreProxy{Addr: ln.Addr().String(), target: target, start: start, modSeq: start, changed: map[imap.UID]uint64{}}
	var conns sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		conns.Wait()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { p.serve(c) })
		}
	}()
	return p
}

// Change records that the flags of the message with this UID changed: it gets the next modification
// sequence, which becomes the folder's HIGHESTMODSEQ.
func (p *CondStoreProxy) Change(uid imap.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.modSeq++
	p.changed[uid] = p.modSeq
}

// Commands returns the command lines the proxy relayed so far, as the client sent them.
func (p *CondStoreProxy) Commands() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.commands...)
}

var (
	condStoreSelect = regexp.MustCompile(`(?i)^(\S+) (SELECT|EXAMINE) (.*) \(CONDSTORE\)\r\n$`)
	changedSince    = regexp.MustCompile(`(?i)^(\S+) (UID FETCH .*) \(CHANGEDSINCE (\d+)\)\r\n$`)
	modSeqItem      = regexp.MustCompile(`(?i)^(\S+) (?:UID )?FETCH .*\bMODSEQ\b`)
	fetchStart      = regexp.MustCompile(`(?i)^(\* \d+ FETCH \()`)
	fetchUID        = regexp.MustCompile(`(?i)^\* \d+ FETCH \(.*\bUID (\d+)`)
	literalTail     = regexp.MustCompile(`\{(\d+)\+?\}\r\n$`)
)

// proxySession is one client's connection: what the client sent that changes the server's answers.
type proxySession struct {
	mu sync.Mutex
	// selects are tags of SELECTs that asked for CONDSTORE; fetches map tags of CHANGEDSINCE fetches to n;
	// modSeqs are tags of fetches that asked for MODSEQ.
	selects map[string]bool
	fetches map[string]uint64
	modSeqs map[string]bool
}

func (p *CondStoreProxy) serve(client net.Conn) {
	defer func() { _ = client.Close() }()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer func() { _ = server.Close() }()
	s := &proxySession{selects: map[string]bool{}, fetches: map[string]uint64{}, modSeqs: map[string]bool{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.relay(server, client, p.response(s))
		_ = client.Close()
	}()
	p.relay(client, server, p.command(s))
	_ = server.Close()
	<-done
}

// relay copies lines from src to dst through rewrite (which may drop a line by returning ""), and literals
// verbatim.
func (p *CondStoreProxy) relay(src, dst net.Conn, rewrite func(line string) string) {
	r, w := bufio.NewReader(src), bufio.NewWriter(dst)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if out := rewrite(line); out != "" {
			if _, err := w.WriteString(out); err != nil {
				return
			}
		}
		if m := literalTail.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			if _, err := io.CopyN(w, r, n); err != nil {
				return
			}
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// command rewrites a client's command: the CONDSTORE parameter, the MODSEQ fetch item and the CHANGEDSINCE
// modifier come off (the server behind does not know them) and are remembered for the answer.
func (p *CondStoreProxy) command(s *proxySession) func(string) string {
	return func(line string) string {
		p.mu.Lock()
		p.commands = append(p.commands, strings.TrimSuffix(line, "\r\n"))
		p.mu.Unlock()
		s.mu.Lock()
		defer s.mu.Unlock()
		if m := modSeqItem.FindStringSubmatch(line); m != nil {
			s.modSeqs[m[1]] = true
			line = strings.Replace(line, " MODSEQ", "", 1)
		}
		if m := condStoreSelect.FindStringSubmatch(line); m != nil {
			s.selects[m[1]] = true
			return m[1] + " " + m[2] + " " + m[3] + "\r\n"
		}
		if m := changedSince.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseUint(m[3], 10, 64)
			s.fetches[m[1]] = n
			return m[1] + " " + m[2] + "\r\n"
		}
		return line
	}
}

// response rewrites the server's answers: CONDSTORE joins the capabilities, a CONDSTORE SELECT gets the
// HIGHESTMODSEQ, a CHANGEDSINCE fetch keeps only the messages changed since its n, and a fetch that asked for
// MODSEQ gets each message's.
func (p *CondStoreProxy) response(s *proxySession) func(string) string {
	return func(line string) string {
		if i := strings.Index(strings.ToUpper(line), "CAPABILITY "); i >= 0 && !strings.Contains(strings.ToUpper(line), "CONDSTORE") {
			i += len("CAPABILITY ")
			line = line[:i] + "CONDSTORE " + line[i:]
		}
		tag, _, _ := strings.Cut(line, " ")
		s.mu.Lock()
		defer s.mu.Unlock()
		p.mu.Lock()
		defer p.mu.Unlock()
		if s.selects[tag] {
			delete(s.selects, tag)
			return "* OK [HIGHESTMODSEQ " + strconv.FormatUint(p.modSeq, 10) + "] Highest\r\n" + line
		}
		_, since := s.fetches[tag]
		if since || s.modSeqs[tag] {
			delete(s.fetches, tag)
			delete(s.modSeqs, tag)
			return line
		}
		m := fetchUID.FindStringSubmatch(line)
		if m == nil {
			return line
		}
		uid, _ := strconv.ParseUint(m[1], 10, 32)
		for _, since := range s.fetches {
			if p.changed[imap.UID(uid)] <= since {
				return ""
			}
		}
		if len(s.modSeqs) > 0 {
			mod, ok := p.changed[imap.UID(uid)]
			if !ok {
				mod = p.start
			}
			line = fetchStart.ReplaceAllString(line, "${1}MODSEQ ("+strconv.FormatUint(mod, 10)+") ")
		}
		return line
	}
}
