package mailbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/dnscheck"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

var queries = dbq.New()

// StoreTracking records a resolution of domain (m's saved domain, or a new one replacing it) on m. A
// verified domain stays verified through a failed lookup (the status still says the lookup failed); any
// other answer about the same domain, or a new domain, sets verified from this resolution alone.
func StoreTracking(ctx context.Context, tx pgx.Tx, m dbq.Mailbox, domain string, res dnscheck.TrackingResult) (dbq.Mailbox, error) {
	same := domain == m.TrackingDomain
	verified := res.Status == dnscheck.TrackingVerified
	var verifiedAt *time.Time
	switch {
	case verified && same && m.TrackingDomainVerified:
		verifiedAt = m.TrackingDomainVerifiedAt
	case verified:
		now := time.Now()
		verifiedAt = &now
	case res.Status == dnscheck.TrackingLookupError && same && m.TrackingDomainVerified:
		verified, verifiedAt = true, m.TrackingDomainVerifiedAt
	}
	return queries.MailboxSetTracking(ctx, tx, dbq.MailboxSetTrackingParams{OrganizationID: m.OrganizationID, ID: m.ID,
		TrackingDomain: domain, Verified: verified, VerifiedAt: verifiedAt, Status: res.Status, Message: res.Message,
		Observed: truncate.Chars(res.Observed, 1000), HostUnresolvable: res.HostUnresolvable})
}

// Domain is the domain part of a mailbox address.
func Domain(email string) string {
	_, d, _ := strings.Cut(email, "@")
	return d
}

// StoreAuth records a domain authentication check on m (failing_since starts at the first failing check and
// is kept while the domain keeps failing) and emits email_account.health_changed when the state moved.
func StoreAuth(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, m dbq.Mailbox, res dnscheck.AuthResult) (dbq.Mailbox, error) {
	row, err := queries.MailboxSetAuth(ctx, tx, dbq.MailboxSetAuthParams{OrganizationID: m.OrganizationID, ID: m.ID,
		AuthState: res.State(), AuthSpf: res.SPFFound, AuthDkim: res.DKIMFound, AuthDmarc: res.DMARCFound,
		AuthDmarcPolicy: res.DMARCPolicy, AuthReason: truncate.Chars(res.Summary(), 500)})
	if err != nil || row.AuthState == m.AuthState {
		return row, err
	}
	_, err = outbox.Emit(ctx, tx, events.MailboxHealthChanged, map[string]any{
		"email_account_id": m.ID, "email": m.Email, "auth_state": row.AuthState, "previous_auth_state": m.AuthState,
		"auth_failing_since": row.AuthFailingSince, "reason": row.AuthReason,
	})
	return row, err
}

// AuthBlocked reports whether m's domain has failed authentication for longer than grace: its mailboxes then
// send no cold mail and no warmup.
func AuthBlocked(m dbq.Mailbox, grace time.Duration, now time.Time) bool {
	return m.AuthFailingSince != nil && now.Sub(*m.AuthFailingSince) > grace
}

// DNSSweepArgs is the hourly job that re-resolves custom tracking domains and re-checks domain
// authentication, each mailbox at most once a day.
type DNSSweepArgs struct{}

// Kind names the job.
func (DNSSweepArgs) Kind() string { return "mailbox_dns_sweep" }

// DNSSweepInterval is how often the sweep runs; DNSRecheckAfter how old a check must be to be redone.
const (
	DNSSweepInterval = time.Hour
	DNSRecheckAfter  = 24 * time.Hour
	dnsSweepBatch    = 500
)

// DNSSweepWorker works DNSSweepArgs. Lookups run outside any transaction; each mailbox's results are stored in
// its organization's transaction.
type DNSSweepWorker struct {
	river.WorkerDefaults[DNSSweepArgs]
	Pool     *pgxpool.Pool
	Resolver dnscheck.Resolver
	// TrackingHost is the deployment's tracking host (OUTFLOW_TRACKING_HOST).
	TrackingHost string
}

// Timeout bounds one sweep: a batch of mailboxes, each a handful of lookups. It is the jobs package's
// MaxJobTimeout, so a sweep killed with its process is rescued within minutes; a sweep cut short leaves the
// mailboxes it did not reach due, and the retry or the next sweep takes them.
func (w *DNSSweepWorker) Timeout(*river.Job[DNSSweepArgs]) time.Duration { return 5 * time.Minute }

// Work checks up to one batch of due mailboxes; the rest wait for the next hour. Domains shared by several
// mailboxes are looked up once per sweep.
func (w *DNSSweepWorker) Work(ctx context.Context, _ *river.Job[DNSSweepArgs]) error {
	due, err := queries.MailboxDNSDue(ctx, w.Pool, dbq.MailboxDNSDueParams{CheckedBefore: time.Now().Add(-DNSRecheckAfter), RowLimit: dnsSweepBatch})
	if err != nil {
		return fmt.Errorf("mailbox dns sweep: %w", err)
	}
	outbox := events.NewOutbox(river.ClientFromContext[pgx.Tx](ctx))
	auth := map[string]dnscheck.AuthResult{}
	for _, d := range due {
		if err := w.check(ctx, outbox, d.OrganizationID, d.ID, auth); err != nil {
			return err
		}
	}
	return nil
}

func (w *DNSSweepWorker) check(ctx context.Context, outbox *events.Outbox, org, id uuid.UUID, auth map[string]dnscheck.AuthResult) error {
	var m dbq.Mailbox
	err := db.WithOrgTx(ctx, w.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		m, err = queries.MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: org, ID: id})
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // removed meanwhile
	}
	if err != nil {
		return err
	}
	recheck := time.Now().Add(-DNSRecheckAfter)
	var tracking *dnscheck.TrackingResult
	if m.TrackingDomain != "" && (m.TrackingCheckedAt == nil || m.TrackingCheckedAt.Before(recheck)) {
		res := dnscheck.CheckTracking(ctx, w.Resolver, m.TrackingDomain, w.TrackingHost)
		tracking = &res
	}
	var authRes *dnscheck.AuthResult
	if m.AuthCheckedAt == nil || m.AuthCheckedAt.Before(recheck) {
		domain := Domain(m.Email)
		res, seen := auth[domain]
		if !seen {
			res = dnscheck.CheckAuth(ctx, w.Resolver, domain)
			auth[domain] = res
		}
		authRes = &res
	}
	return db.WithOrgTx(ctx, w.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		// Read again under lock: a result about a domain the mailbox no longer has is dropped.
		cur, err := queries.MailboxGetForUpdate(ctx, tx, dbq.MailboxGetForUpdateParams{OrganizationID: org, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if tracking != nil && cur.TrackingDomain == m.TrackingDomain {
			if cur, err = StoreTracking(ctx, tx, cur, cur.TrackingDomain, *tracking); err != nil {
				return err
			}
		}
		if authRes != nil {
			if _, err := StoreAuth(ctx, tx, outbox, cur, *authRes); err != nil {
				return err
			}
		}
		return nil
	})
}
