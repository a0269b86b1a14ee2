package mailbox

import "github.com/emersion/go-sasl"

// Xoauth2 is the SASL mechanism Google and Microsoft take OAuth access tokens with over SMTP and IMAP.
const Xoauth2 = "XOAUTH2"

// xoauth2Client authenticates user with an OAuth access token: one initial response, "user=<user>^Aauth=Bearer
// <token>^A^A". A server that refuses sends an error challenge, answered with an empty response so it can
// finish the exchange with its failure.
type xoauth2Client struct {
	user, token string
}

func (c *xoauth2Client) Start() (string, []byte, error) {
	return Xoauth2, []byte("user=" + c.user + "\x01auth=Bearer " + c.token + "\x01\x01"), nil
}

func (c *xoauth2Client) Next([]byte) ([]byte, error) {
	return []byte{}, nil
}

var _ sasl.Client = (*xoauth2Client)(nil)
