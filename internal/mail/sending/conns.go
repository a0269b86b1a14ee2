package sending

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/google/uuid"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
)

// codeHandOverUnrecorded: the hand-over's mark could not be written, so the message was not handed over.
const codeHandOverUnrecorded = "hand_over_unrecorded"

// outcome is what one hand-over attempt came to.
type outcome int

const (
	// delivered: the server accepted the message.
	delivered outcome = iota
	// rejected: the server refused for good (or the account cannot send); retrying would not help.
	rejected
	// transient: nothing was handed over and a later attempt may succeed.
	transient
	// ambiguous: the message was handed over and the connection broke before the server answered.
	ambiguous
)

// result is an attempt's outcome with the task's error code and message, and the account-level condition it
// raises (an error-log code such as EMAIL_AUTH_ERROR), if any.
type result struct {
	outcome outcome
	code    string
	message string
	account string
}

// conns keeps one authenticated SMTP session per mailbox, reused across sends while it is fresh, so a burst
// of sends from one mailbox pays for one TLS handshake and one login.
type conns struct {
	dialer mailbox.Dialer
	// idle is how long an unused session is kept; servers drop idle sessions after a few minutes anyway.
	idle time.Duration

	mu        sync.Mutex
	byMailbox map[uuid.UUID]*session
}

// session is one mailbox's pooled SMTP session; its token (a channel of one, so a job whose context ends stops
// waiting) keeps one transaction at a time on it.
type session struct {
	token    chan struct{}
	client   *smtp.Client
	version  time.Time // the mailbox's updated_at when the session was opened: settings changed means redial
	lastUsed time.Time
	// accepted is the last message its server accepted on the session, until its acceptance or its result is
	// written (see Pipeline.handOverOn); read and written by the token's holder only.
	accepted *dbq.SendTask
}

func newConns(d mailbox.Dialer) *conns {
	return &conns{dialer: d, idle: 2 * time.Minute, byMailbox: map[uuid.UUID]*session{}}
}

// entry returns the mailbox's session slot, closing other slots' sessions that have sat idle too long.
func (p *conns) entry(id uuid.UUID, now time.Time) *session {
	p.mu.Lock()
	defer p.mu.Unlock()
	for other, s := range p.byMailbox {
		if other == id {
			continue
		}
		select {
		case s.token <- struct{}{}:
			if s.client != nil && now.Sub(s.lastUsed) > p.idle {
				_ = s.client.Close()
				s.client = nil
			}
			<-s.token
		default:
		}
	}
	s := p.byMailbox[id]
	if s == nil {
		s = &session{token: make(chan struct{}, 1)}
		p.byMailbox[id] = s
	}
	return s
}

// hold waits for the mailbox's session to be free and takes it (nil when ctx ends first); the holder calls
// release when done.
func (p *conns) hold(ctx context.Context, id uuid.UUID) *session {
	s := p.entry(id, time.Now())
	select {
	case s.token <- struct{}{}:
		return s
	case <-ctx.Done():
		return nil
	}
}

// release gives the session back.
func (s *session) release() { <-s.token }

// send hands one message to the mailbox's SMTP server on its pooled session s, which the caller holds
// (dialing one when there is none, it has idled too long or the mailbox changed since), and classifies what
// happened. A pooled session that turns out dead before anything was handed over is replaced once.
//
// handOver runs on the session once the message is written and before the final dot that hands it over:
// when it fails the dot is never sent (the server discards the message) and the attempt is retried later. It
// runs once however many sessions the message takes.
func (p *conns) send(ctx context.Context, s *session, version time.Time, srv mailbox.Server, from string, rcpts []string, msg []byte, handOver func() error) result {
	now := time.Now()
	if s.client != nil && (!s.version.Equal(version) || now.Sub(s.lastUsed) > p.idle) {
		_ = s.client.Close()
		s.client = nil
	}
	for try := 0; ; try++ {
		reused := s.client != nil
		if !reused {
			c, err := p.dialer.SMTP(ctx, srv)
			if err != nil {
				return dialResult(err)
			}
			s.client, s.version = c, version
		}
		res, broken := transaction(ctx, s.client, from, rcpts, msg, handOver)
		s.lastUsed = time.Now()
		if broken {
			_ = s.client.Close()
			s.client = nil
			if reused && try == 0 && res.outcome == transient && res.code != codeHandOverUnrecorded {
				continue // the pooled session had died; a fresh one gets the message
			}
		}
		return res
	}
}

// transaction runs MAIL, RCPT and DATA on c, and handOver between the message and its final dot. broken says
// the session cannot be reused.
func transaction(ctx context.Context, c *smtp.Client, from string, rcpts []string, msg []byte, handOver func() error) (res result, broken bool) {
	// A canceled context (shutdown) cuts the connection; whatever step it interrupts is classified as usual.
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	if err := c.Mail(from, nil); err != nil {
		return stepResult("MAIL", err), !isSMTP(err) || closing(err)
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r, nil); err != nil {
			res := stepResult("RCPT", err)
			if isSMTP(err) {
				return res, c.Reset() != nil
			}
			return res, true
		}
	}
	w, err := c.Data()
	if err != nil {
		res := stepResult("DATA", err)
		if isSMTP(err) {
			return res, c.Reset() != nil
		}
		return res, true
	}
	if _, err := w.Write(msg); err != nil {
		// Part of the message may be on the wire, but without the final dot the server discards it.
		_ = w.Close()
		return result{outcome: transient, code: "connection_lost", message: "The connection broke while the message was being written."}, true
	}
	if err := handOver(); err != nil {
		// Not recorded as handed over, so not handed over: the connection closes before the final dot.
		_ = c.Close()
		return result{outcome: transient, code: codeHandOverUnrecorded, message: "The hand-over could not be recorded, so nothing was sent: " + err.Error()}, true
	}
	if err := w.Close(); err != nil {
		if isSMTP(err) {
			return stepResult("DATA", err), c.Reset() != nil
		}
		// The final dot went out and no answer came back: the server may have taken the message.
		return result{outcome: ambiguous, code: "outcome_unknown",
			message: "The connection broke after the message was handed over and before the server answered; it is not sent again."}, true
	}
	return result{outcome: delivered}, false
}

func isSMTP(err error) bool {
	var se *smtp.SMTPError
	return errors.As(err, &se)
}

// closing reports a 421 answer: the server is closing the session (a pooled session it timed out answers the
// next MAIL with one), so the session is done and the message may go on a fresh one.
func closing(err error) bool {
	var se *smtp.SMTPError
	return errors.As(err, &se) && se.Code == 421
}

// dialResult classifies a failed connect or login.
func dialResult(err error) result {
	var ce *mailbox.CheckError
	if errors.As(err, &ce) {
		switch ce.Kind {
		case mailbox.KindAuth:
			return result{outcome: rejected, code: "mailbox_auth_failed", message: ce.Error(), account: mailbox.ConditionAuthError}
		case mailbox.KindInsecure:
			return result{outcome: rejected, code: "mailbox_insecure_connection", message: ce.Error(), account: mailbox.ConditionServerError}
		}
		return result{outcome: transient, code: "smtp_unreachable", message: ce.Error()}
	}
	return result{outcome: transient, code: "smtp_unreachable", message: err.Error()}
}

// reply writes a server's answer as SMTP did: the reply code, the enhanced status code when the server gave
// one, then its text ("550 5.1.1 No such user"). go-smtp takes the enhanced code off the text; it is put back
// so the bounce a rejected recipient records carries its status code.
func reply(se *smtp.SMTPError) string {
	s := fmt.Sprintf("%03d", se.Code)
	if c := se.EnhancedCode; c[0] > 0 {
		s += fmt.Sprintf(" %d.%d.%d", c[0], c[1], c[2])
	}
	return s + " " + se.Message
}

// stepResult classifies an error answered (or not) to one SMTP command before the message was handed over.
func stepResult(step string, err error) result {
	var se *smtp.SMTPError
	if !errors.As(err, &se) {
		return result{outcome: transient, code: "connection_lost", message: step + ": " + err.Error()}
	}
	text := step + ": " + reply(se)
	lower := strings.ToLower(se.Message)
	rateLimited := se.EnhancedCode[0] == 4 && se.EnhancedCode[1] == 7 ||
		strings.Contains(lower, "rate") || strings.Contains(lower, "too many") || strings.Contains(lower, "limit")
	switch {
	case se.Code == 535 || se.Code == 534 || se.Code == 530:
		return result{outcome: rejected, code: "mailbox_auth_failed", message: text, account: mailbox.ConditionAuthError}
	case se.Code >= 400 && se.Code < 500 && rateLimited:
		return result{outcome: transient, code: "rate_limited", message: text, account: mailbox.ConditionRateLimited}
	case se.Code >= 400 && se.Code < 500:
		return result{outcome: transient, code: "temporary_failure", message: text}
	case step == "RCPT":
		return result{outcome: rejected, code: "recipient_rejected", message: text}
	case step == "MAIL" && se.EnhancedCode[0] == 5 && se.EnhancedCode[1] == 7:
		// The server refuses this sender: the account is blocked or not allowed to send.
		return result{outcome: rejected, code: "sender_rejected", message: text, account: mailbox.ConditionDisabled}
	}
	return result{outcome: rejected, code: "message_rejected", message: text}
}
