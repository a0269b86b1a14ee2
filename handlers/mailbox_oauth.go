package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/identity/oidc"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/mailoauth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/internal/platform/truncate"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// oauthSessionTTL is how long a consent session waits for the browser.
const oauthSessionTTL = 10 * time.Minute

// oauthCallbackLimit bounds consent callbacks per source address (the route is public).
var oauthCallbackLimit = auth.Limit{Max: 30, Window: time.Minute}

// MailboxesOAuthCliStart opens a consent session for a Google or Microsoft mailbox: the state and the PKCE
// verifier stay on the server (the verifier sealed, the state only as a hash), the caller gets the consent
// URL and the session to poll.
func (h *Mailboxes) MailboxesOAuthCliStart(ctx context.Context, req *api.MailboxesOAuthCliStartReq) (*api.EmailOAuthCLIStart, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	name := string(req.Provider)
	p, ok := h.opts.Credentials.Providers[name]
	if !ok {
		return nil, apierror.Unavailable("mailbox_oauth_unavailable", "Connecting "+name+" mailboxes is not configured on this deployment.").
			WithFix("The operator sets OUTFLOW_MAILBOX_GOOGLE_CLIENT_ID (gmail) or OUTFLOW_MAILBOX_MICROSOFT_CLIENT_ID (outlook) and the matching secret.")
	}
	id := uuid.New()
	state := oidc.RandomToken()
	verifier, challenge := oidc.NewPKCE()
	stateHash := sha256.Sum256([]byte(state))
	var user uuid.NullUUID
	if pr := auth.PrincipalFrom(ctx); pr != nil && pr.UserID != uuid.Nil {
		user = uuid.NullUUID{UUID: pr.UserID, Valid: true}
	}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := h.queries.MailboxOAuthSessionsPrune(ctx, tx, org); err != nil {
			return err
		}
		_, err := h.queries.MailboxOAuthSessionInsert(ctx, tx, dbq.MailboxOAuthSessionInsertParams{
			OrganizationID: org, ID: id, UserID: user, Provider: name, StateHash: stateHash[:],
			VerifierSealed: h.keyring.Seal([]byte(verifier), oauthSessionContext(org, id)),
			ExpiresAt:      h.now().Add(oauthSessionTTL)})
		return err
	})
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(p.AuthCodeURL(state, challenge))
	if err != nil {
		return nil, err
	}
	return &api.EmailOAuthCLIStart{URL: *u, Session: id.String(), ExpiresIn: int(oauthSessionTTL.Seconds())}, nil
}

func oauthSessionContext(org, id uuid.UUID) string {
	return "mailbox-oauth-session:" + org.String() + ":" + id.String()
}

// MailboxesOAuthSessionGet reports a consent session: pending until the browser comes back (failed once it
// expired without an answer), then done with the mailbox or failed with the reason.
func (h *Mailboxes) MailboxesOAuthSessionGet(ctx context.Context, params api.MailboxesOAuthSessionGetParams) (*api.EmailOAuthCLISession, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	notFound := apierror.NotFound("not_found", "No consent session "+params.Session+" exists in this organization.")
	id, err := uuid.Parse(params.Session)
	if err != nil {
		return nil, notFound
	}
	var s dbq.MailboxOauthSession
	var m *dbq.Mailbox
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		s, err = h.queries.MailboxOAuthSessionGet(ctx, tx, dbq.MailboxOAuthSessionGetParams{OrganizationID: org, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound
		}
		if err != nil || !s.MailboxID.Valid {
			return err
		}
		row, err := h.queries.MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: org, ID: s.MailboxID.UUID})
		if err == nil {
			m = &row
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &api.EmailOAuthCLISession{Status: api.EmailOAuthCLISessionStatus(s.Status), Provider: s.Provider}
	switch {
	case s.Status == "pending" && !s.ExpiresAt.After(h.now()):
		out.Status = api.EmailOAuthCLISessionStatusFailed
		out.Error = api.NewOptIssue(api.Issue{Code: "consent_expired", Message: "The consent was not completed within ten minutes.",
			Fix: api.NewOptString("Start again with POST /emails/onboarding/oauth/cli-start.")})
	case s.Status == "failed":
		issue := api.Issue{Code: s.ErrorCode, Message: s.ErrorMessage}
		if s.ErrorFix != "" {
			issue.Fix = api.NewOptString(s.ErrorFix)
		}
		out.Error = api.NewOptIssue(issue)
	case s.Status == "done" && m != nil:
		account, err := accountOf(*m)
		if err != nil {
			return nil, err
		}
		out.Account = api.NewOptEmailOAuthCLISessionAccount(account)
	}
	return out, nil
}

// accountOf is the connected mailbox as the session's free-form account object.
func accountOf(m dbq.Mailbox) (api.EmailOAuthCLISessionAccount, error) {
	mb := mailboxOf(m)
	raw, err := mb.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	out := make(api.EmailOAuthCLISessionAccount, len(fields))
	for k, v := range fields {
		out[k] = jx.Raw(v)
	}
	return out, nil
}

// MailboxesOAuthCallback receives the browser back from the provider. It spends the session (a state is
// answered once), redeems the code, connects or reconnects the mailbox, records the outcome on the session
// and redirects the browser to the web app with it. Only a rate limit is an HTTP error.
func (h *Mailboxes) MailboxesOAuthCallback(ctx context.Context, params api.MailboxesOAuthCallbackParams) (*api.MailboxesOAuthCallbackFound, error) {
	if err := h.limiter.Allow(ctx, "mailbox-oauth-callback:ip:"+reqctx.From(ctx).ClientIP, oauthCallbackLimit); err != nil {
		return nil, err
	}
	issue := h.consent(ctx, params)
	if issue != nil && issue.Status >= 500 {
		slog.ErrorContext(ctx, "mailbox consent failed", slog.String("error", issue.Error()))
	}
	loc := h.opts.AppURL + "/emails/connected?status=done"
	if issue != nil {
		loc = h.opts.AppURL + "/emails/connected?status=failed&error=" + url.QueryEscape(issue.Code)
	}
	return &api.MailboxesOAuthCallbackFound{Location: loc}, nil
}

// consent runs one callback; nil means the mailbox is connected.
func (h *Mailboxes) consent(ctx context.Context, params api.MailboxesOAuthCallbackParams) *apierror.Error {
	invalid := apierror.BadRequest("invalid_state", "The consent answer names no open session; start again.")
	state := params.State.Or("")
	if state == "" {
		return invalid
	}
	sum := sha256.Sum256([]byte(state))
	ref, err := h.queries.MailboxOAuthSessionByState(ctx, h.pool, sum[:])
	if err != nil {
		return invalid // unknown state (or the lookup failed: either way this answer cannot be used)
	}
	org := ref.OrganizationID
	var s dbq.MailboxOauthSession
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		s, err = h.queries.MailboxOAuthSessionTake(ctx, tx, dbq.MailboxOAuthSessionTakeParams{OrganizationID: org, ID: ref.ID})
		return err
	})
	if err != nil {
		return invalid // answered already, or expired
	}
	row, issue := h.redeem(ctx, s, params)
	finish := dbq.MailboxOAuthSessionFinishParams{OrganizationID: org, ID: s.ID, Status: "done"}
	if issue != nil {
		finish.Status, finish.ErrorCode, finish.ErrorMessage, finish.ErrorFix = "failed", issue.Code,
			truncate.Chars(issue.Message, 1000), truncate.Chars(issue.Fix, 1000)
	} else {
		finish.MailboxID = uuid.NullUUID{UUID: row.ID, Valid: true}
	}
	err = db.WithOrgTx(context.WithoutCancel(ctx), h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return h.queries.MailboxOAuthSessionFinish(ctx, tx, finish)
	})
	if err != nil {
		return apierror.Internal(err)
	}
	return issue
}

// redeem turns a consent answer into a connected mailbox, or the reason it cannot be.
func (h *Mailboxes) redeem(ctx context.Context, s dbq.MailboxOauthSession, params api.MailboxesOAuthCallbackParams) (dbq.Mailbox, *apierror.Error) {
	if params.Error.Or("") != "" {
		return dbq.Mailbox{}, apierror.BadRequest("access_denied", "The consent was refused at the provider ("+truncate.Chars(params.Error.Value, 100)+").").
			WithFix("Start again and allow access to mail on the consent screen.")
	}
	p, ok := h.opts.Credentials.Providers[s.Provider]
	if !ok {
		return dbq.Mailbox{}, apierror.Unavailable("mailbox_oauth_unavailable", "Connecting "+s.Provider+" mailboxes is no longer configured on this deployment.")
	}
	verifier, err := h.keyring.Open(s.VerifierSealed, oauthSessionContext(s.OrganizationID, s.ID))
	if err != nil {
		return dbq.Mailbox{}, apierror.Internal(err)
	}
	g, err := p.Exchange(ctx, params.Code.Or(""), string(verifier))
	if err != nil {
		slog.InfoContext(ctx, "mailbox consent not redeemed", slog.String("provider", s.Provider), slog.String("error", err.Error()))
		if errors.Is(err, mailoauth.ErrRejected) {
			return dbq.Mailbox{}, apierror.BadRequest("mailbox_auth_failed", "The provider did not accept the consent answer.").
				WithFix("Start again; finish the consent within ten minutes and in one browser.")
		}
		return dbq.Mailbox{}, apierror.Unavailable("mailbox_oauth_unavailable", "The provider could not be reached; try again.")
	}
	row, err := h.connectOAuth(ctx, s, p, g)
	if err != nil {
		var ae *apierror.Error
		if errors.As(err, &ae) {
			return dbq.Mailbox{}, ae
		}
		return dbq.Mailbox{}, apierror.Internal(err)
	}
	return row, nil
}

// connectOAuth checks SMTP and IMAP with the new access token and stores the mailbox with its sealed tokens:
// a new mailbox within the allowance, or, for an address the organization already has from the same
// provider, the existing one reconnected (active again, its login error resolved).
func (h *Mailboxes) connectOAuth(ctx context.Context, s dbq.MailboxOauthSession, p *mailoauth.Provider, g mailoauth.Grant) (dbq.Mailbox, error) {
	org := s.OrganizationID
	var existing *dbq.Mailbox
	err := db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err := h.queries.MailboxGetByEmail(ctx, tx, dbq.MailboxGetByEmailParams{OrganizationID: org, Email: g.Email})
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return h.allowance(ctx, tx, org)
		case err != nil:
			return err
		case row.Provider != p.Name:
			return errMailboxConnected(g.Email)
		}
		existing = &row
		return nil
	})
	if err != nil {
		return dbq.Mailbox{}, err
	}
	smtpServer := mailbox.Server{Host: p.SMTP.Host, Port: p.SMTP.Port, Username: g.Email, AccessToken: g.AccessToken, Security: mailbox.DefaultSecurity(p.SMTP.Port)}
	imapServer := mailbox.Server{Host: p.IMAP.Host, Port: p.IMAP.Port, Username: g.Email, AccessToken: g.AccessToken, Security: mailbox.DefaultSecurity(p.IMAP.Port)}
	if err := h.dialBoth(ctx, smtpServer, imapServer); err != nil {
		return dbq.Mailbox{}, err
	}

	var row dbq.Mailbox
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		action, event := audit.ActionCreate, "mailbox.connected"
		if existing != nil {
			action, event = audit.ActionUpdate, "mailbox.reconnected"
			row, err = h.queries.MailboxSetStatus(ctx, tx, dbq.MailboxSetStatusParams{OrganizationID: org, ID: existing.ID, Status: "active"})
			if err != nil {
				return db.Classify(err, "Mailbox")
			}
			if err := mailbox.Resolve(ctx, tx, row, mailbox.ConditionAuthError); err != nil {
				return err
			}
		} else {
			id, err := uuid.NewV7()
			if err != nil {
				return err
			}
			if err := h.queries.MailboxLockAllowance(ctx, tx, org); err != nil {
				return err
			}
			if err := h.allowance(ctx, tx, org); err != nil {
				return err
			}
			row, err = h.queries.MailboxInsert(ctx, tx, dbq.MailboxInsertParams{
				OrganizationID: org, ID: id, UserID: s.UserID, Email: g.Email, Name: truncate.Chars(g.Name, maxMailboxName),
				Provider: p.Name, CampaignLimit: 50, MinWaitTime: 600,
				SmtpHost: smtpServer.Host, SmtpPort: int32(smtpServer.Port), SmtpUsername: g.Email, SmtpSecurity: string(smtpServer.Security),
				ImapHost: imapServer.Host, ImapPort: int32(imapServer.Port), ImapUsername: g.Email, ImapSecurity: string(imapServer.Security),
			})
			if errors.Is(err, pgx.ErrNoRows) {
				return errMailboxConnected(g.Email)
			}
			if err != nil {
				return db.Classify(err, "Mailbox")
			}
		}
		if err := h.opts.Credentials.StoreGrant(ctx, tx, org, row.ID, g); err != nil {
			return err
		}
		if _, err := h.outbox.Emit(ctx, tx, events.MailboxConnected, mailboxEvent(row)); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: action, Event: event, EntityType: audit.EntityEmailAccount, EntityID: row.ID.String(),
			Metadata: mailboxAudit(row)})
	})
	return row, err
}
