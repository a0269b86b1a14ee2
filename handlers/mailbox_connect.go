package handlers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// MailboxesCreate connects an SMTP/IMAP mailbox: the body is checked, the allowance counted, both credentials
// dialed (outside any transaction), and only then is the mailbox stored with its passwords sealed.
func (h *Mailboxes) MailboxesCreate(ctx context.Context, req *api.CreateEmailAccount, _ api.MailboxesCreateParams) (*api.Mailbox, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	if req.Provider != api.CreateEmailAccountProviderSMTPImap {
		return nil, apierror.BadRequest("mailbox_provider_requires_oauth",
			fmt.Sprintf("A %s mailbox is connected through the provider's consent screen, not with a password.", req.Provider)).
			WithFix("Start the consent flow with POST /emails/onboarding/oauth/cli-start and open the URL it returns.")
	}
	email, ok := contacts.NormalizeEmail(req.Email)
	if !ok || email != strings.ToLower(strings.TrimSpace(req.Email)) {
		return nil, apierror.BadRequest("invalid_email", "email must be one plain address, such as ada@example.com.")
	}
	name := strings.TrimSpace(req.Name)
	if utf8.RuneCountInString(name) > maxMailboxName {
		return nil, apierror.BadRequest("invalid_name", fmt.Sprintf("name must be at most %d characters.", maxMailboxName))
	}
	if !req.SMTP.Set || !req.Imap.Set {
		return nil, apierror.BadRequest("mailbox_servers_required", "An smtp_imap mailbox needs both smtp and imap (host, port, username, password).")
	}
	smtpServer, err := h.checkServer(mailbox.ServiceSMTP, req.SMTP.Value)
	if err != nil {
		return nil, err
	}
	imapServer, err := h.checkServer(mailbox.ServiceIMAP, req.Imap.Value)
	if err != nil {
		return nil, err
	}
	campaignLimit := req.CampaignLimit.Or(50)
	if campaignLimit < 0 || campaignLimit > 5000 {
		return nil, apierror.BadRequest("invalid_campaign_limit", "campaign_limit must be between 0 and 5000 emails a day.")
	}
	minWait := req.MinWaitTime.Or(600)
	if minWait < 0 || minWait > maxMinWaitTime {
		return nil, apierror.BadRequest("invalid_min_wait_time", fmt.Sprintf("min_wait_time must be between 0 and %d seconds.", maxMinWaitTime))
	}

	// Cheap refusals first, so a full allowance or a known address costs no dial.
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := h.allowance(ctx, tx, org); err != nil {
			return err
		}
		return h.notConnected(ctx, tx, org, email)
	})
	if err != nil {
		return nil, err
	}
	if err := h.dialBoth(ctx, smtpServer, imapServer); err != nil {
		return nil, err
	}

	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var user uuid.NullUUID
	if p := auth.PrincipalFrom(ctx); p != nil && p.UserID != uuid.Nil {
		user = uuid.NullUUID{UUID: p.UserID, Valid: true}
	}
	var row dbq.Mailbox
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := h.queries.MailboxLockAllowance(ctx, tx, org); err != nil {
			return err
		}
		if err := h.allowance(ctx, tx, org); err != nil {
			return err
		}
		row, err = h.queries.MailboxInsert(ctx, tx, dbq.MailboxInsertParams{
			OrganizationID: org, ID: id, UserID: user, Email: email, Name: name, Provider: string(req.Provider),
			CampaignLimit: int32(campaignLimit), MinWaitTime: int32(minWait),
			SmtpHost: smtpServer.Host, SmtpPort: int32(smtpServer.Port), SmtpUsername: smtpServer.Username,
			SmtpSecurity: string(smtpServer.Security),
			SmtpPassword: mailbox.SealPassword(h.keyring, org, id, mailbox.ServiceSMTP, smtpServer.Password),
			ImapHost:     imapServer.Host, ImapPort: int32(imapServer.Port), ImapUsername: imapServer.Username,
			ImapSecurity: string(imapServer.Security),
			ImapPassword: mailbox.SealPassword(h.keyring, org, id, mailbox.ServiceIMAP, imapServer.Password),
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return errMailboxConnected(email)
		}
		if err != nil {
			return db.Classify(err, "Mailbox")
		}
		if _, err := h.outbox.Emit(ctx, tx, events.MailboxConnected, mailboxEvent(row)); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "mailbox.connected", EntityType: audit.EntityEmailAccount,
			EntityID: id.String(), Metadata: mailboxAudit(row)})
	})
	if err != nil {
		return nil, err
	}
	out := mailboxOf(row)
	return &out, nil
}

func errMailboxConnected(email string) error {
	return apierror.Conflict("mailbox_already_connected", email+" is already connected in this organization.").
		WithFix("Change the existing mailbox with PATCH /emails/{id}, or remove it first.")
}

// allowance refuses a connect once the organization has as many mailboxes as the deployment allows.
func (h *Mailboxes) allowance(ctx context.Context, tx pgx.Tx, org uuid.UUID) error {
	n, err := h.queries.MailboxCount(ctx, tx, org)
	if err != nil {
		return err
	}
	if n >= int64(h.opts.MaxMailboxes) {
		return apierror.Forbidden("mailbox_allowance_reached",
			fmt.Sprintf("This organization already has %d mailboxes, its allowance.", n)).
			WithFix("Remove a mailbox you no longer use, or ask the operator to raise OUTFLOW_MAX_MAILBOXES.")
	}
	return nil
}

// notConnected refuses an address the organization already connected.
func (h *Mailboxes) notConnected(ctx context.Context, tx pgx.Tx, org uuid.UUID, email string) error {
	n, err := h.queries.MailboxEmailTaken(ctx, tx, dbq.MailboxEmailTakenParams{OrganizationID: org, Email: email})
	if err != nil {
		return err
	}
	if n > 0 {
		return errMailboxConnected(email)
	}
	return nil
}

// checkServer validates one of a connect body's smtp and imap objects before anything is dialed.
func (h *Mailboxes) checkServer(service string, in api.MailService) (mailbox.Server, error) {
	field := func(name string) string { return service + "." + name }
	host := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(in.Host)), ".")
	if host == "" || len(host) > maxMailboxHost || strings.ContainsAny(host, " /:@\r\n\t") && net.ParseIP(host) == nil {
		return mailbox.Server{}, apierror.BadRequest("invalid_"+service+"_host", field("host")+" must be a host name or an IP address, without a scheme or port.")
	}
	if in.Port < 1 || in.Port > 65535 {
		return mailbox.Server{}, apierror.BadRequest("invalid_"+service+"_port", field("port")+" must be between 1 and 65535.")
	}
	if in.Username == "" || len(in.Username) > maxMailboxUsername {
		return mailbox.Server{}, apierror.BadRequest("invalid_"+service+"_username", fmt.Sprintf("%s is required (at most %d characters).", field("username"), maxMailboxUsername))
	}
	if in.Password == "" || len(in.Password) > maxMailboxPassword {
		return mailbox.Server{}, apierror.BadRequest("invalid_"+service+"_password", fmt.Sprintf("%s is required (at most %d characters).", field("password"), maxMailboxPassword))
	}
	security := mailbox.DefaultSecurity(in.Port)
	if in.Security.Set {
		security = mailbox.Security(in.Security.Value)
	}
	if security == mailbox.SecurityNone && (!h.opts.Dialer.AllowInsecure || !loopbackHost(host)) {
		return mailbox.Server{}, apierror.BadRequest("mailbox_insecure_connection",
			field("security")+" none (no TLS) is allowed only for a loopback host on a self-hosted instance.").
			WithFix("Use tls (ports 465 and 993) or starttls (ports 587 and 143).")
	}
	return mailbox.Server{Host: host, Port: in.Port, Username: in.Username, Password: in.Password, Security: security}, nil
}

// loopbackHost reports whether host names this machine.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkBoth dials and logs in to both servers at once; each result is nil or a *mailbox.CheckError.
func (h *Mailboxes) checkBoth(ctx context.Context, smtpServer, imapServer mailbox.Server) (smtpErr, imapErr error) {
	ctx, cancel := context.WithTimeout(ctx, mailboxCheckTimeout)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); smtpErr = h.opts.Dialer.CheckSMTP(ctx, smtpServer) }()
	go func() { defer wg.Done(); imapErr = h.opts.Dialer.CheckIMAP(ctx, imapServer) }()
	wg.Wait()
	return smtpErr, imapErr
}

// dialBoth is checkBoth for a connect: the first failure becomes 400 mailbox_auth_failed with its fix.
func (h *Mailboxes) dialBoth(ctx context.Context, smtpServer, imapServer mailbox.Server) error {
	smtpErr, imapErr := h.checkBoth(ctx, smtpServer, imapServer)
	if issue := checkIssue(cmpErr(smtpErr, imapErr)); issue != nil {
		return apierror.BadRequest(issue.Code, issue.Message).WithFix(issue.Fix.Value)
	}
	return nil
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkIssue describes a failed check for people: always code mailbox_auth_failed (the credential cannot be
// used), a message naming the service and what failed, and the fix for that kind of failure.
func checkIssue(err error) *api.Issue {
	if err == nil {
		return nil
	}
	var ce *mailbox.CheckError
	if !errors.As(err, &ce) {
		return &api.Issue{Code: "mailbox_auth_failed", Message: "The mailbox could not be checked.",
			Fix: api.NewOptString("Try again in a minute.")}
	}
	return &api.Issue{Code: "mailbox_auth_failed", Message: ce.Error(), Fix: api.NewOptString(ce.Fix())}
}
