package handlers

import (
	"context"
	"errors"
	"time"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
)

// sendingStatus is the test's one-word answer to "will this mailbox send campaigns now": ready, or why not
// (inactive, revoked, held, resting, auth_failing for a domain past its grace, credential_failing).
func (h *Mailboxes) sendingStatus(r dbq.Mailbox, credentialOK bool, now time.Time) string {
	switch {
	case r.Status != "active":
		return r.Status
	case !credentialOK:
		return "credential_failing"
	case r.RotationState == "reserve":
		return "held"
	case r.RotationState == "resting":
		return "resting"
	case mailbox.AuthBlocked(r, h.opts.AuthGrace, now):
		return "auth_failing"
	}
	return "ready"
}

// MailboxesTest dials and logs in to both servers now and answers the checklist, always 200: a failing
// credential is auth false with the error and its fix, not an error answer.
func (h *Mailboxes) MailboxesTest(ctx context.Context, params api.MailboxesTestParams) (*api.EmailLiveCheck, error) {
	row, camps, errs, err := h.detail(ctx, params.ID)
	if err != nil {
		return nil, err
	}
	var smtpErr, imapErr error
	smtpServer, imapServer, err := h.opts.Credentials.Servers(ctx, h.outbox, row)
	if err != nil {
		smtpErr = &mailbox.CheckError{Service: mailbox.ServiceSMTP, Kind: mailbox.KindAuth, Err: errors.New("the stored credential cannot be read; connect the mailbox again")}
		imapErr = smtpErr
	} else {
		smtpErr, imapErr = h.checkBoth(ctx, smtpServer, imapServer)
	}
	reached := func(err error) bool {
		var ce *mailbox.CheckError
		return err == nil || errors.As(err, &ce) && ce.Kind == mailbox.KindAuth
	}
	ok := smtpErr == nil && imapErr == nil
	out := &api.EmailLiveCheck{
		EmailAccountID: row.ID, Email: row.Email, Provider: row.Provider,
		SMTP: api.NewOptBool(reached(smtpErr)), Imap: api.NewOptBool(reached(imapErr)), Auth: ok,
		Healthy:       ok && row.Status == "active" && !mailbox.AuthBlocked(row, h.opts.AuthGrace, h.now()),
		SendingStatus: h.sendingStatus(row, ok, h.now()), Status: row.Status,
		DailyLimit: int(row.CampaignLimit), MinDelaySeconds: int(row.MinWaitTime),
		Warmup: api.NewOptWarmupStanding(h.warmupOf(row, h.now())), Campaigns: camps, RecentErrors: errs,
	}
	if issue := checkIssue(cmpErr(smtpErr, imapErr)); issue != nil {
		out.Error = api.NewOptIssue(*issue)
	}
	return out, nil
}
