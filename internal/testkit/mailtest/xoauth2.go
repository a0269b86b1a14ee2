package mailtest

import (
	"errors"
	"strings"

	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-sasl"
)

// xoauth2 is the mechanism name of OAuth logins at Google and Microsoft.
const xoauth2 = "XOAUTH2"

// xoauth2Server checks one XOAUTH2 initial response ("user=<u>^Aauth=Bearer <token>^A^A").
type xoauth2Server struct {
	check func(user, token string) error
}

func (s *xoauth2Server) Next(response []byte) ([]byte, bool, error) {
	if response == nil {
		return []byte{}, false, nil // ask for the initial response
	}
	var user, token string
	for _, field := range strings.Split(string(response), "\x01") {
		switch {
		case strings.HasPrefix(field, "user="):
			user = strings.TrimPrefix(field, "user=")
		case strings.HasPrefix(field, "auth=Bearer "):
			token = strings.TrimPrefix(field, "auth=Bearer ")
		}
	}
	if user == "" || token == "" {
		return nil, true, errors.New("mailtest: malformed XOAUTH2 response")
	}
	return nil, true, s.check(user, token)
}

var _ sasl.Server = (*xoauth2Server)(nil)

// tokenSession is an IMAP session that also takes XOAUTH2 logins: a valid token logs the inner session in
// with the user's password.
type tokenSession struct {
	imapserver.SessionIMAP4rev2
	user, pass string
	token      func() string
}

func (s *tokenSession) AuthenticateMechanisms() []string { return []string{sasl.Plain, xoauth2} }

func (s *tokenSession) Authenticate(mech string) (sasl.Server, error) {
	if mech == sasl.Plain {
		return sasl.NewPlainServer(func(_, user, pass string) error { return s.Login(user, pass) }), nil
	}
	return &xoauth2Server{check: func(user, token string) error {
		if want := s.token(); want == "" || user != s.user || token != want {
			return imapserver.ErrAuthFailed
		}
		return s.Login(s.user, s.pass)
	}}, nil
}
