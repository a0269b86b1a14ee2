package handlers

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/mail/dnscheck"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Mailboxes implements the sender-mailbox operations of part 2: connecting an SMTP/IMAP mailbox (both
// credentials dialed first, passwords sealed), reading, changing and removing mailboxes, the live test, cold
// rotation (hold, release), the warmup lifecycle with the ramp the scheduler follows, and direct sends
// through the send pipeline.
type Mailboxes struct {
	pool    *pgxpool.Pool
	queries *dbq.Queries
	keyring *seal.Keyring
	outbox  *events.Outbox
	jobs    events.Inserter
	limiter *auth.Limiter
	opts    MailboxOptions
	now     func() time.Time
}

// MailboxOptions are the deployment's settings the mailbox operations follow.
type MailboxOptions struct {
	// Dialer carries the mail TLS roots and the OUTFLOW_ALLOW_INSECURE_MAIL rule.
	Dialer mailbox.Dialer
	// Resolver answers the tracking-domain and authentication lookups.
	Resolver dnscheck.Resolver
	// MaxMailboxes is each organization's allowance (OUTFLOW_MAX_MAILBOXES).
	MaxMailboxes int
	// TrackingHost is the CNAME target of custom tracking domains (OUTFLOW_TRACKING_HOST).
	TrackingHost string
	// AuthGrace is how long a domain may fail authentication before cold sending and warmup stop.
	AuthGrace time.Duration
	// Verifier checks single addresses (POST /emails/verify).
	Verifier *verify.Verifier
	// Credentials opens mailbox logins and holds the gmail and outlook consent providers.
	Credentials *mailbox.Credentials
	// AppURL is the web app a consent callback sends the browser back to.
	AppURL string
	// Approvals holds the direct sends of API keys and OAuth grants that their agent policy does not allow.
	Approvals *approvals.Service
	// Sending applies a person's decision on an ambiguous send.
	Sending *sending.Pipeline
}

// NewMailboxes builds the mailbox operations; jobs enqueues send tasks.
func NewMailboxes(pool *pgxpool.Pool, keyring *seal.Keyring, outbox *events.Outbox, jobs events.Inserter, opts MailboxOptions) *Mailboxes {
	return &Mailboxes{pool: pool, queries: dbq.New(), keyring: keyring, outbox: outbox, jobs: jobs, limiter: auth.NewLimiter(pool),
		opts: opts, now: time.Now}
}

// Limits of a mailbox's fields (the migration's CHECKs hold the same numbers).
const (
	maxMailboxName      = 255
	maxMailboxSignature = 10000
	maxMailboxHost      = 253
	maxMailboxUsername  = 320
	maxMailboxPassword  = 1024
	maxMailboxTags      = 50
	maxMailboxQuery     = 254
	maxMinWaitTime      = 86400
	maxWarmupTag        = 64
	mailboxCheckTimeout = 20 * time.Second
)

// warmupHours is the HH:MM form of warmup_start_time and warmup_end_time.
var warmupHours = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)

// --- mapping

// mailboxOf maps a mailbox row for the API, never with a credential.
func mailboxOf(r dbq.Mailbox) api.Mailbox {
	out := api.Mailbox{
		ID: r.ID, OrganizationID: api.NewOptUUID(r.OrganizationID), Email: r.Email, Name: api.NewOptString(r.Name),
		SignaturePlain: api.NewOptString(r.SignaturePlain), SignatureHTML: api.NewOptString(r.SignatureHtml),
		SignatureSync: api.NewOptBool(r.SignatureSync), SignatureCode: api.NewOptBool(r.SignatureCode),
		SendAsEmail: api.NewOptString(r.SendAsEmail), Provider: api.MailboxProvider(r.Provider),
		Status: api.MailboxStatus(r.Status), LastSyncedAt: optNilTime(r.LastSyncedAt), LastID: api.NewOptInt(int(r.LastID)),
		CampaignLimit: int(r.CampaignLimit), MinWaitTime: int(r.MinWaitTime), ReplyTo: api.NewOptString(r.ReplyTo),
		SaveToSent: api.NewOptBool(r.SaveToSent), TrackingDomain: api.NewOptString(r.TrackingDomain),
		TrackingDomainVerified:   api.NewOptBool(r.TrackingDomainVerified),
		TrackingDomainVerifiedAt: optNilTime(r.TrackingDomainVerifiedAt),
		AuthState:                api.NewOptMailboxAuthState(api.MailboxAuthState(r.AuthState)),
		AuthSpf:                  api.NewOptBool(r.AuthSpf), AuthDkim: api.NewOptBool(r.AuthDkim), AuthDmarc: api.NewOptBool(r.AuthDmarc),
		AuthDmarcPolicy: api.NewOptString(r.AuthDmarcPolicy), AuthReason: api.NewOptString(r.AuthReason),
		AuthFailingSince: optNilTime(r.AuthFailingSince), Warmup: optNilTime(r.Warmup),
		WarmupPausedAt: optNilTime(r.WarmupPausedAt), WarmupBase: api.NewOptInt(int(r.WarmupBase)),
		WarmupMax: api.NewOptInt(int(r.WarmupMax)), WarmupIncrease: api.NewOptInt(int(r.WarmupIncrease)),
		WarmupReplyRate: api.NewOptInt(int(r.WarmupReplyRate)), WarmupTag: api.NewOptString(r.WarmupTag),
		WarmupPoolType:  api.NewOptMailboxWarmupPoolType(api.MailboxWarmupPoolType(r.WarmupPoolType)),
		WarmupStartTime: api.NewOptString(r.WarmupStartTime), WarmupEndTime: api.NewOptString(r.WarmupEndTime),
		WarmupDays: api.NewOptInt(int(r.WarmupDays)), Timezone: api.NewOptString(r.Timezone),
		Tags: make([]string, len(r.Tags)), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	if r.UserID.Valid {
		out.UserID = api.NewOptUUID(r.UserID.UUID)
	}
	if r.WorkerID.Valid {
		out.WorkerID = api.NewOptNilUUID(r.WorkerID.UUID)
	} else {
		out.WorkerID.SetToNull()
	}
	if r.AuthCheckedAt != nil {
		out.AuthCheckedAt = api.NewOptDateTime(*r.AuthCheckedAt)
	}
	for i, t := range r.Tags {
		out.Tags[i] = t.String()
	}
	return out
}

// warmupStatus is the warmup object's status: stopped (never enabled or stopped), paused, blocked (the
// warmup network blocked the mailbox, or its domain failed authentication past the grace period) or warming.
func (h *Mailboxes) warmupStatus(r dbq.Mailbox, now time.Time) api.WarmupStandingStatus {
	switch {
	case r.Warmup == nil:
		return api.WarmupStandingStatusStopped
	case r.WarmupPausedAt != nil:
		return api.WarmupStandingStatusPaused
	case r.WarmupHealth == "blocked" || mailbox.AuthBlocked(r, h.opts.AuthGrace, now):
		return api.WarmupStandingStatusBlocked
	}
	return api.WarmupStandingStatusWarming
}

// warmupOf is a mailbox's warmup standing at now.
func (h *Mailboxes) warmupOf(r dbq.Mailbox, now time.Time) api.WarmupStanding {
	out := api.WarmupStanding{
		EmailAccountID: r.ID, Enabled: r.Warmup != nil, Status: h.warmupStatus(r, now), Pool: api.NewOptString(r.WarmupPoolType),
		DailyTarget: mailbox.RampOf(r).DailyTarget(now), Base: api.NewOptInt(int(r.WarmupBase)), Max: api.NewOptInt(int(r.WarmupMax)),
		Increase: api.NewOptInt(int(r.WarmupIncrease)), ReplyRate: api.NewOptInt(int(r.WarmupReplyRate)),
		HealthState: api.NewOptString(r.WarmupHealth),
	}
	if r.Warmup != nil {
		out.StartedAt = api.NewOptDateTime(*r.Warmup)
	}
	if r.WarmupPausedAt != nil {
		out.PausedAt = api.NewOptDateTime(*r.WarmupPausedAt)
	}
	if r.WarmupHealth == "blocked" {
		if r.WarmupBlockedUntil != nil {
			out.BlockedUntil = api.NewOptDateTime(*r.WarmupBlockedUntil)
		}
		out.BlockedReason = api.NewOptString(r.WarmupBlockReason)
	}
	return out
}

func rotationOf(r dbq.Mailbox) *api.MailboxRotationState {
	return &api.MailboxRotationState{State: api.MailboxRotationStateState(r.RotationState),
		Since: optNilTime(r.RotationSince), Reason: api.NewOptString(r.RotationReason)}
}

func mailboxCampaignsOf(rows []dbq.MailboxCampaignsRow) []api.MailboxCampaign {
	out := make([]api.MailboxCampaign, len(rows))
	for i, c := range rows {
		out[i] = api.MailboxCampaign{ID: c.ID, Name: c.Name, Status: c.Status}
	}
	return out
}

func mailboxErrorsOf(rows []dbq.MailboxError) []api.MailboxErrorLogEntry {
	out := make([]api.MailboxErrorLogEntry, len(rows))
	for i, e := range rows {
		out[i] = api.MailboxErrorLogEntry{Code: e.Code, Severity: e.Severity, Title: e.Title, Message: e.Message,
			ActionRequired: e.ActionRequired, CreatedAt: e.CreatedAt, ResolvedAt: optNilTime(e.ResolvedAt)}
	}
	return out
}

// mailboxAudit is what a mailbox's audit entries keep: which address and how it connects (never a secret).
func mailboxAudit(r dbq.Mailbox) map[string]any {
	return map[string]any{"email": r.Email, "provider": r.Provider, "status": r.Status,
		"smtp_host": r.SmtpHost, "imap_host": r.ImapHost}
}

// mailboxEvent is the data of the email_account.* events.
func mailboxEvent(r dbq.Mailbox) map[string]any {
	return map[string]any{"email_account_id": r.ID, "email": r.Email, "provider": r.Provider, "status": r.Status}
}

// --- read

// MailboxesList answers the organization's mailboxes newest first (a mailbox-limited key sees only its own),
// with q over address and name, one tag, and the id of the last mailbox seen as the cursor.
func (h *Mailboxes) MailboxesList(ctx context.Context, params api.MailboxesListParams) (*api.MailboxList, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit := params.Limit.Or(50)
	if limit < 1 || limit > 100 {
		return nil, apierror.BadRequest("invalid_limit", "limit must be between 1 and 100.")
	}
	args := dbq.MailboxListParams{OrganizationID: org}
	if q := strings.TrimSpace(params.Q.Value); q != "" {
		if utf8.RuneCountInString(q) > maxMailboxQuery {
			return nil, apierror.BadRequest("invalid_query", fmt.Sprintf("q must be at most %d characters.", maxMailboxQuery))
		}
		q = contacts.LikeEscape(q)
		args.Q = &q
	}
	if params.Tag.Set {
		args.Tag = uuid.NullUUID{UUID: params.Tag.Value, Valid: true}
	}
	if params.Cursor.Set {
		args.AfterID = uuid.NullUUID{UUID: params.Cursor.Value, Valid: true}
	}
	if p := auth.PrincipalFrom(ctx); p != nil && p.AllowedMailboxes != nil {
		args.OnlyIds = append([]uuid.UUID{}, p.AllowedMailboxes...)
	}
	var total int64
	rows, hasMore, err := keysetRows(ctx, h.pool, org, limit,
		func(ctx context.Context, tx pgx.Tx, rowLimit int32) ([]dbq.Mailbox, error) {
			args.RowLimit = rowLimit
			return h.queries.MailboxList(ctx, tx, args)
		},
		func(ctx context.Context, tx pgx.Tx, _ []dbq.Mailbox) error {
			if params.Cursor.Set {
				return nil
			}
			var err error
			total, err = h.queries.MailboxListTotal(ctx, tx, dbq.MailboxListTotalParams{OrganizationID: org, Q: args.Q, Tag: args.Tag, OnlyIds: args.OnlyIds})
			return err
		})
	if err != nil {
		return nil, err
	}
	out := &api.MailboxList{Data: make([]api.Mailbox, len(rows))}
	for i, r := range rows {
		out.Data[i] = mailboxOf(r)
	}
	out.Pagination.HasMore = hasMore
	if hasMore {
		out.Pagination.NextCursor = api.NewOptNilString(rows[len(rows)-1].ID.String())
	} else {
		out.Pagination.NextCursor.SetToNull()
	}
	if params.Cursor.Set {
		out.Pagination.Total.SetToNull()
	} else {
		out.Pagination.Total = api.NewOptNilInt64(total)
	}
	return out, nil
}

// get reads one mailbox of the caller's organization (404 when unknown) in a transaction of its own, and
// names the organization.
func (h *Mailboxes) get(ctx context.Context, id uuid.UUID) (uuid.UUID, dbq.Mailbox, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return uuid.Nil, dbq.Mailbox{}, err
	}
	var m dbq.Mailbox
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		m, err = h.load(ctx, tx, org, id)
		return err
	})
	return org, m, err
}

// load reads one mailbox of org (404 when unknown) inside tx.
func (h *Mailboxes) load(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (dbq.Mailbox, error) {
	row, err := h.queries.MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: org, ID: id})
	return row, db.Classify(err, "Mailbox")
}

// detail reads one mailbox of the caller's organization with what GET /emails/{id} and the test add to it:
// the campaigns that send from it and its ten newest errors.
func (h *Mailboxes) detail(ctx context.Context, id uuid.UUID) (dbq.Mailbox, []api.MailboxCampaign, []api.MailboxErrorLogEntry, error) {
	var row dbq.Mailbox
	var camps []dbq.MailboxCampaignsRow
	var errs []dbq.MailboxError
	org, err := tenantCaller(ctx)
	if err != nil {
		return row, nil, nil, err
	}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if row, err = h.load(ctx, tx, org, id); err != nil {
			return err
		}
		if camps, err = h.queries.MailboxCampaigns(ctx, tx, dbq.MailboxCampaignsParams{OrganizationID: org, MailboxID: id}); err != nil {
			return err
		}
		errs, err = h.queries.MailboxRecentErrors(ctx, tx, dbq.MailboxRecentErrorsParams{OrganizationID: org, MailboxID: id})
		return err
	})
	return row, mailboxCampaignsOf(camps), mailboxErrorsOf(errs), err
}

// MailboxesGet answers one mailbox with the campaigns that send from it and its ten newest errors.
func (h *Mailboxes) MailboxesGet(ctx context.Context, params api.MailboxesGetParams) (*api.MailboxDetail, error) {
	row, camps, errs, err := h.detail(ctx, params.ID)
	if err != nil {
		return nil, err
	}
	// MailboxDetail is Mailbox plus two lists (allOf in the spec, flattened by the generator): carry the
	// mapped mailbox across through its JSON form rather than copying fifty fields by hand.
	m := mailboxOf(row)
	raw, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	// The two lists are required by the schema; they are filled once decoded.
	raw = append(raw[:len(raw)-1], `,"campaigns":[],"recent_errors":[]}`...)
	var out api.MailboxDetail
	if err := out.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	out.Campaigns, out.RecentErrors = camps, errs
	return &out, nil
}

// MailboxesWarmupGet answers the mailbox's warmup standing with today's target from the ramp.
func (h *Mailboxes) MailboxesWarmupGet(ctx context.Context, params api.MailboxesWarmupGetParams) (*api.WarmupStanding, error) {
	_, row, err := h.get(ctx, params.ID)
	if err != nil {
		return nil, err
	}
	out := h.warmupOf(row, h.now())
	return &out, nil
}

// MailboxesDelete removes a mailbox: in the same transaction its queued sends are canceled (sent history
// stays, naming the sender) and its sync state goes with the row.
func (h *Mailboxes) MailboxesDelete(ctx context.Context, params api.MailboxesDeleteParams) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.MailboxGetForUpdate(ctx, tx, dbq.MailboxGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "Mailbox")
		}
		canceled, err := h.queries.MailboxCancelPendingSends(ctx, tx, dbq.MailboxCancelPendingSendsParams{OrganizationID: org, MailboxID: uuid.NullUUID{UUID: cur.ID, Valid: true}})
		if err != nil {
			return err
		}
		if _, err := h.queries.MailboxDelete(ctx, tx, dbq.MailboxDeleteParams{OrganizationID: org, ID: cur.ID}); err != nil {
			return err
		}
		if _, err := h.outbox.Emit(ctx, tx, events.MailboxRemoved, mailboxEvent(cur)); err != nil {
			return err
		}
		meta := mailboxAudit(cur)
		meta["canceled_sends"] = canceled
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "mailbox.removed", EntityType: audit.EntityEmailAccount,
			EntityID: cur.ID.String(), Metadata: meta})
	})
}
