// Package mail sends Outflow's own system mail (sign-in codes, password resets, invitations, new sign-in
// alerts) through a configured SMTP relay. With no relay configured, each message is written to the log at WARN
// as one line holding recipient, subject and text, so a development deployment works out of the box.
// (Campaign and mailbox mail is a different pipeline, with its own per-mailbox transport.)
package sysmail

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one plain-text system message.
type Message struct {
	To      string
	Subject string
	Text    string
}

// Sender delivers system mail.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// LogSender writes each message to the log instead of sending it.
type LogSender struct {
	Logger *slog.Logger
}

// Send logs the message at WARN on one line.
func (l LogSender) Send(ctx context.Context, m Message) error {
	l.Logger.WarnContext(ctx, "system mail not sent (no OUTFLOW_SMTP_URL); logged instead",
		slog.String("to", m.To), slog.String("subject", m.Subject), slog.String("text", m.Text))
	return nil
}

// SMTPSender submits through a relay: smtp:// with STARTTLS (required) or smtps:// with implicit TLS.
type SMTPSender struct {
	addr     string
	implicit bool
	user     string
	pass     string
	from     *mail.Address
	tls      *tls.Config
	timeout  time.Duration
}

// NewSMTPSender parses the relay URL and the From address. tlsConfig may be nil (system roots); tests pass
// their own roots.
func NewSMTPSender(rawURL, from string, tlsConfig *tls.Config) (*SMTPSender, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("mail: relay URL: %w", err)
	}
	addr, err := mail.ParseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("mail: From address: %w", err)
	}
	s := &SMTPSender{addr: u.Host, implicit: u.Scheme == "smtps", from: addr, timeout: 30 * time.Second}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		port := "587"
		if s.implicit {
			port = "465"
		}
		s.addr = net.JoinHostPort(u.Host, port)
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
	}
	host, _, _ := net.SplitHostPort(s.addr)
	s.tls = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if tlsConfig != nil {
		s.tls = tlsConfig.Clone()
		if s.tls.ServerName == "" {
			s.tls.ServerName = host
		}
	}
	return s, nil
}

// Send delivers m, refusing to authenticate or send over an unencrypted connection.
func (s *SMTPSender) Send(ctx context.Context, m Message) error {
	deadline := time.Now().Add(s.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var c *smtp.Client
	var err error
	if s.implicit {
		c, err = smtp.DialTLS(s.addr, s.tls)
	} else {
		c, err = smtp.DialStartTLS(s.addr, s.tls)
	}
	if err != nil {
		return fmt.Errorf("mail: connect to relay %s: %w", s.addr, err)
	}
	defer c.Close()
	c.CommandTimeout = time.Until(deadline)
	c.SubmissionTimeout = time.Until(deadline)
	if s.user != "" {
		if err := c.Auth(sasl.NewPlainClient("", s.user, s.pass)); err != nil {
			return fmt.Errorf("mail: authenticate to relay: %w", err)
		}
	}
	if err := c.SendMail(s.from.Address, []string{m.To}, bytes.NewReader(s.compose(m))); err != nil {
		return fmt.Errorf("mail: send to %s: %w", m.To, err)
	}
	return c.Quit()
}

// compose renders an RFC 5322 message with a UTF-8 plain-text body.
func (s *SMTPSender) compose(m Message) []byte {
	var id [12]byte
	_, _ = rand.Read(id[:])
	domain := s.from.Address[strings.LastIndexByte(s.from.Address, '@')+1:]
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\n", s.from.String())
	fmt.Fprintf(&b, "To: %s\r\n", m.To)
	fmt.Fprintf(&b, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", m.Subject))
	fmt.Fprintf(&b, "Date: %s\r\n", time.Now().UTC().Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s@%s>\r\n", hex.EncodeToString(id[:]), domain)
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\n", "\r\n"))
	b.WriteString("\r\n")
	return b.Bytes()
}
