package mailbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailoauth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
)

// RefreshMargin is how long before its expiry an access token is replaced: a token handed to a login must
// outlive the login, and a sync run lasts minutes.
const RefreshMargin = 5 * time.Minute

// ErrNeedsConsent means an OAuth mailbox's grant is gone: the mailbox was moved to revoked, with an
// EMAIL_AUTH_ERROR entry and email_account.disconnected, and sends nothing until it is connected again.
var ErrNeedsConsent = errors.New("mailbox: the provider revoked the grant; connect the mailbox again")

// Credentials opens what a mailbox logs in with: the sealed passwords of an SMTP/IMAP mailbox, or the
// access token of a gmail or outlook mailbox, refreshed here before it expires. Every sender and the sync
// take their credentials from it, so a token refresh happens in one place.
type Credentials struct {
	Keyring   *seal.Keyring
	Pool      *pgxpool.Pool
	Providers mailoauth.Providers
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// OAuth reports whether a mailbox logs in with an OAuth grant rather than passwords.
func OAuth(m dbq.Mailbox) bool {
	return m.Provider == mailoauth.Google || m.Provider == mailoauth.Microsoft
}

// Servers opens m's SMTP and IMAP endpoints with their credentials, ready to dial. For an OAuth mailbox the
// access token is refreshed first when it expires within RefreshMargin; a refused refresh answers
// ErrNeedsConsent (outbox carries the events of that). The secrets live only in the returned values; callers never log them.
func (c *Credentials) Servers(ctx context.Context, outbox *events.Outbox, m dbq.Mailbox) (smtpServer, imapServer Server, err error) {
	if !OAuth(m) {
		return Servers(c.Keyring, m)
	}
	token, err := c.AccessToken(ctx, outbox, m)
	if err != nil {
		return Server{}, Server{}, err
	}
	smtpServer = Server{Host: m.SmtpHost, Port: int(m.SmtpPort), Username: m.SmtpUsername, AccessToken: token, Security: Security(m.SmtpSecurity)}
	imapServer = Server{Host: m.ImapHost, Port: int(m.ImapPort), Username: m.ImapUsername, AccessToken: token, Security: Security(m.ImapSecurity)}
	return smtpServer, imapServer, nil
}

// AccessToken answers a live access token of an OAuth mailbox. Concurrent callers needing a refresh wait on
// the token row's lock, and all but the first find the token it stored.
func (c *Credentials) AccessToken(ctx context.Context, outbox *events.Outbox, m dbq.Mailbox) (string, error) {
	org := m.OrganizationID
	var tok dbq.MailboxOauthToken
	err := db.WithOrgTx(ctx, c.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		tok, err = queries.MailboxOAuthTokenGet(ctx, tx, dbq.MailboxOAuthTokenGetParams{OrganizationID: org, MailboxID: m.ID})
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNeedsConsent
	}
	if err != nil {
		return "", err
	}
	if tok.ExpiresAt.After(c.now().Add(RefreshMargin)) {
		return c.open(m, "access", tok.AccessSealed)
	}
	return c.refresh(ctx, outbox, m)
}

func (c *Credentials) refresh(ctx context.Context, outbox *events.Outbox, m dbq.Mailbox) (string, error) {
	p, ok := c.Providers[m.Provider]
	if !ok {
		return "", fmt.Errorf("mailbox: %s consent is not configured on this deployment", m.Provider)
	}
	org := m.OrganizationID
	var access string
	revoked := false
	err := db.WithOrgTx(ctx, c.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		tok, err := queries.MailboxOAuthTokenLock(ctx, tx, dbq.MailboxOAuthTokenLockParams{OrganizationID: org, MailboxID: m.ID})
		if err != nil {
			return err
		}
		if tok.ExpiresAt.After(c.now().Add(RefreshMargin)) {
			access, err = c.open(m, "access", tok.AccessSealed) // another process refreshed it meanwhile
			return err
		}
		refresh, err := c.open(m, "refresh", tok.RefreshSealed)
		if err != nil {
			return err
		}
		g, err := p.Refresh(ctx, refresh)
		if errors.Is(err, mailoauth.ErrRevoked) {
			revoked = true
			return c.revoke(ctx, tx, outbox, m, err)
		}
		if err != nil {
			return err
		}
		if g.RefreshToken != "" {
			refresh = g.RefreshToken // Microsoft rotates refresh tokens
		}
		access = g.AccessToken
		return queries.MailboxOAuthTokenUpsert(ctx, tx, c.sealTokens(m.OrganizationID, m.ID, refresh, access, g.Expiry))
	})
	if err != nil {
		return "", err
	}
	if revoked {
		return "", ErrNeedsConsent
	}
	return access, nil
}

// revoke moves a mailbox whose grant the provider refused to revoked: an EMAIL_AUTH_ERROR entry and
// email_account.disconnected, and its queued sends wait for a new consent.
func (c *Credentials) revoke(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, m dbq.Mailbox, cause error) error {
	row, err := queries.MailboxSetStatus(ctx, tx, dbq.MailboxSetStatusParams{OrganizationID: m.OrganizationID, ID: m.ID, Status: "revoked"})
	if err != nil {
		return err
	}
	if err := Raise(ctx, tx, outbox, row, ConditionAuthError,
		"The provider no longer accepts this mailbox's grant ("+cause.Error()+"); connect it again through the consent screen."); err != nil {
		return err
	}
	_, err = outbox.Emit(ctx, tx, events.MailboxDisconnected, map[string]any{"email_account_id": row.ID, "email": row.Email,
		"provider": row.Provider, "status": row.Status, "reason": "grant_revoked"})
	return err
}

// StoreGrant seals and stores a consent's tokens for mailbox m (of org).
func (c *Credentials) StoreGrant(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, g mailoauth.Grant) error {
	return queries.MailboxOAuthTokenUpsert(ctx, tx, c.sealTokens(org, id, g.RefreshToken, g.AccessToken, g.Expiry))
}

func (c *Credentials) sealTokens(org, id uuid.UUID, refresh, access string, expiry time.Time) dbq.MailboxOAuthTokenUpsertParams {
	return dbq.MailboxOAuthTokenUpsertParams{OrganizationID: org, MailboxID: id,
		RefreshSealed: c.Keyring.Seal([]byte(refresh), sealContext(org, id, "oauth-refresh")),
		AccessSealed:  c.Keyring.Seal([]byte(access), sealContext(org, id, "oauth-access")),
		ExpiresAt:     expiry}
}

func (c *Credentials) open(m dbq.Mailbox, kind string, sealed []byte) (string, error) {
	b, err := c.Keyring.Open(sealed, sealContext(m.OrganizationID, m.ID, "oauth-"+kind))
	if err != nil {
		return "", fmt.Errorf("mailbox: open the %s token: %w", kind, err)
	}
	return string(b), nil
}

func (c *Credentials) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
