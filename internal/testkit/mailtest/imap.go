package mailtest

import (
	"bytes"
	"crypto/tls"
	"io"
	"log"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// IMAPFolders are the folders every test user starts with.
var IMAPFolders = []string{"INBOX", "Sent", "Spam", "Trash"}

// IMAPServer is a running in-process IMAP server with one user.
type IMAPServer struct {
	// Addr is host:port to dial.
	Addr string
	// ClientTLS trusts the server's certificate.
	ClientTLS *tls.Config

	user *imapmemserver.User

	mu    sync.Mutex
	token string
}

// AcceptToken makes the server also take XOAUTH2 logins of its user with this access token; an empty token
// turns that off.
func (s *IMAPServer) AcceptToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// NewIMAPServer starts a server for one user (user/pass) with IMAPFolders (and the Folders option's),
// requiring TLS (STARTTLS unless opts say otherwise) before LOGIN, and offering IDLE and UIDPLUS, and MOVE
// unless NoMove; it stops when t ends.
func NewIMAPServer(t testing.TB, user, pass string, opts ...Option) *IMAPServer {
	t.Helper()
	o := optionsOf(opts)
	mem := imapmemserver.New()
	u := imapmemserver.NewUser(user, pass)
	for _, name := range append(slices.Clone(IMAPFolders), o.folders...) {
		if err := u.Create(name, nil); err != nil {
			t.Fatalf("mailtest: create %s: %v", name, err)
		}
	}
	mem.AddUser(u)
	s := &IMAPServer{ClientTLS: ClientTLS(), user: u}
	srvOpts := &imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return &tokenSession{SessionIMAP4rev2: mem.NewSession().(imapserver.SessionIMAP4rev2), user: user, pass: pass, token: func() string {
				s.mu.Lock()
				defer s.mu.Unlock()
				return s.token
			}}, nil, nil
		},
		Caps:   imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}, imap.CapIdle: {}, imap.CapUIDPlus: {}},
		Logger: log.New(io.Discard, "", 0),
	}
	if o.noMove {
		srvOpts.Caps = imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIdle: {}, imap.CapUIDPlus: {}}
	}
	switch {
	case o.noTLS:
		srvOpts.InsecureAuth = true
	case o.implicitTLS:
		// The listener speaks TLS; the session is already protected.
		srvOpts.InsecureAuth = true
	default:
		srvOpts.TLSConfig = ServerTLS()
	}
	srv := imapserver.New(srvOpts)
	ln := listen(t, o)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	s.Addr = ln.Addr().String()
	return s
}

// Append stores a raw message in the user's folder as if it had been delivered, and returns its UID.
// Clients idling on the folder are told.
func (s *IMAPServer) Append(t testing.TB, folder string, raw []byte, flags ...imap.Flag) imap.UID {
	t.Helper()
	data, err := s.user.Append(folder, literal{bytes.NewReader(raw)}, &imap.AppendOptions{Flags: flags, Time: time.Now()})
	if err != nil {
		t.Fatalf("mailtest: append to %s: %v", folder, err)
	}
	return data.UID
}

// file stores a raw message in the user's folder, \Seen, as a server files what its user sent.
func (s *IMAPServer) file(folder string, raw []byte) error {
	_, err := s.user.Append(folder, literal{bytes.NewReader(raw)}, &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen}, Time: time.Now()})
	return err
}

// literal is a message body as IMAP literal.
type literal struct{ *bytes.Reader }

func (l literal) Size() int64 { return l.Reader.Size() }

// Idle first sends what changed since the last command, as real servers do when IDLE starts (the in-memory
// server only reports changes made after it), so a message delivered between a client's last command and its
// IDLE is reported at once instead of at the next command.
func (s *tokenSession) Idle(w *imapserver.UpdateWriter, stop <-chan struct{}) error {
	if err := s.Poll(w, true); err != nil {
		return err
	}
	return s.SessionIMAP4rev2.Idle(w, stop)
}
