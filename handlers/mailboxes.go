package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // mailbox time zones are validated by name, whatever the host's zoneinfo holds
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/mail/dnscheck"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
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

// rampOf is the warmup ramp a mailbox row describes.
func rampOf(r dbq.Mailbox) mailbox.Ramp {
	ramp := mailbox.Ramp{Base: int(r.WarmupBase), Max: int(r.WarmupMax), Increase: int(r.WarmupIncrease), Days: int(r.WarmupDays)}
	if r.Warmup != nil {
		ramp.Anchor = *r.Warmup
	}
	if r.WarmupPausedAt != nil {
		ramp.PausedAt = *r.WarmupPausedAt
	}
	return ramp
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
		DailyTarget: rampOf(r).DailyTarget(now), Base: api.NewOptInt(int(r.WarmupBase)), Max: api.NewOptInt(int(r.WarmupMax)),
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

// --- connect

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
	args := dbq.MailboxListParams{OrganizationID: org, RowLimit: int32(limit + 1)}
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
	var rows []dbq.Mailbox
	var total int64
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err = h.queries.MailboxList(ctx, tx, args)
		if err != nil || params.Cursor.Set {
			return err
		}
		total, err = h.queries.MailboxListTotal(ctx, tx, dbq.MailboxListTotalParams{OrganizationID: org, Q: args.Q, Tag: args.Tag, OnlyIds: args.OnlyIds})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.MailboxList{Data: make([]api.Mailbox, 0, min(len(rows), limit))}
	for i, r := range rows {
		if i == limit {
			break
		}
		out.Data = append(out.Data, mailboxOf(r))
	}
	out.Pagination.HasMore = len(rows) > limit
	if out.Pagination.HasMore {
		out.Pagination.NextCursor = api.NewOptNilString(rows[limit-1].ID.String())
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

// --- change

// MailboxesUpdate applies any subset of the mailbox's settings, each validated, in one transaction.
func (h *Mailboxes) MailboxesUpdate(ctx context.Context, req *api.MailboxUpdate, params api.MailboxesUpdateParams) (*api.Mailbox, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var row dbq.Mailbox
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.MailboxGetForUpdate(ctx, tx, dbq.MailboxGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "Mailbox")
		}
		next, changes, err := h.merge(ctx, tx, cur, req)
		if err != nil {
			return err
		}
		row, err = h.queries.MailboxUpdate(ctx, tx, next)
		if err != nil {
			return db.Classify(err, "Mailbox")
		}
		if row.Status != cur.Status {
			kind := events.MailboxDisconnected
			if row.Status == "active" {
				kind = events.MailboxConnected
			}
			if _, err := h.outbox.Emit(ctx, tx, kind, mailboxEvent(row)); err != nil {
				return err
			}
		}
		meta := mailboxAudit(row)
		meta["changed"] = changes
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "mailbox.updated", EntityType: audit.EntityEmailAccount,
			EntityID: row.ID.String(), Metadata: meta})
	})
	if err != nil {
		return nil, err
	}
	out := mailboxOf(row)
	return &out, nil
}

// merge validates a PATCH body against the stored mailbox and answers the row to write and the names of the
// fields sent.
func (h *Mailboxes) merge(ctx context.Context, tx pgx.Tx, cur dbq.Mailbox, req *api.MailboxUpdate) (dbq.MailboxUpdateParams, []string, error) {
	p := dbq.MailboxUpdateParams{
		OrganizationID: cur.OrganizationID, ID: cur.ID, Name: cur.Name, SignaturePlain: cur.SignaturePlain,
		SignatureHtml: cur.SignatureHtml, SignatureSync: cur.SignatureSync, SignatureCode: cur.SignatureCode,
		SendAsEmail: cur.SendAsEmail, Status: cur.Status, CampaignLimit: cur.CampaignLimit, MinWaitTime: cur.MinWaitTime,
		ReplyTo: cur.ReplyTo, SaveToSent: cur.SaveToSent, Timezone: cur.Timezone, Tags: cur.Tags, Warmup: cur.Warmup,
		WarmupPausedAt: cur.WarmupPausedAt, WarmupBase: cur.WarmupBase, WarmupMax: cur.WarmupMax,
		WarmupIncrease: cur.WarmupIncrease, WarmupReplyRate: cur.WarmupReplyRate, WarmupTag: cur.WarmupTag,
		WarmupStartTime: cur.WarmupStartTime, WarmupEndTime: cur.WarmupEndTime, WarmupDays: cur.WarmupDays,
	}
	var changed []string
	text := func(name string, v api.OptString, max int, dst *string) error {
		if !v.Set {
			return nil
		}
		changed = append(changed, name)
		if utf8.RuneCountInString(v.Value) > max {
			return apierror.BadRequest("invalid_"+name, fmt.Sprintf("%s must be at most %d characters.", name, max))
		}
		*dst = v.Value
		return nil
	}
	number := func(name string, v api.OptInt, lo, hi int, dst *int32) error {
		if !v.Set {
			return nil
		}
		changed = append(changed, name)
		if v.Value < lo || v.Value > hi {
			return apierror.BadRequest("invalid_"+name, fmt.Sprintf("%s must be between %d and %d.", name, lo, hi))
		}
		*dst = int32(v.Value)
		return nil
	}
	flag := func(name string, v api.OptBool, dst *bool) {
		if v.Set {
			changed = append(changed, name)
			*dst = v.Value
		}
	}
	if req.Name.Set {
		req.Name.Value = strings.TrimSpace(req.Name.Value)
	}
	for _, err := range []error{
		text("name", req.Name, maxMailboxName, &p.Name),
		text("signature_plain", req.SignaturePlain, maxMailboxSignature, &p.SignaturePlain),
		text("signature_html", req.SignatureHTML, maxMailboxSignature, &p.SignatureHtml),
		text("warmup_tag", req.WarmupTag, maxWarmupTag, &p.WarmupTag),
		number("campaign_limit", req.CampaignLimit, 0, 5000, &p.CampaignLimit),
		number("min_wait_time", req.MinWaitTime, 0, maxMinWaitTime, &p.MinWaitTime),
		number("warmup_base", req.WarmupBase, 1, 100, &p.WarmupBase),
		number("warmup_max", req.WarmupMax, 1, 200, &p.WarmupMax),
		number("warmup_increase", req.WarmupIncrease, 0, 50, &p.WarmupIncrease),
		number("warmup_reply_rate", req.WarmupReplyRate, 0, 100, &p.WarmupReplyRate),
		number("warmup_days", req.WarmupDays, 1, 7, &p.WarmupDays),
	} {
		if err != nil {
			return p, nil, err
		}
	}
	flag("signature_sync", req.SignatureSync, &p.SignatureSync)
	flag("signature_code", req.SignatureCode, &p.SignatureCode)
	flag("save_to_sent", req.SaveToSent, &p.SaveToSent)
	if p.WarmupBase > p.WarmupMax {
		return p, nil, apierror.BadRequest("invalid_warmup_base", "warmup_base must not be above warmup_max.")
	}
	for _, t := range []struct {
		name string
		v    api.OptString
		dst  *string
	}{{"warmup_start_time", req.WarmupStartTime, &p.WarmupStartTime}, {"warmup_end_time", req.WarmupEndTime, &p.WarmupEndTime}} {
		if !t.v.Set {
			continue
		}
		changed = append(changed, t.name)
		if t.v.Value != "" && !warmupHours.MatchString(t.v.Value) {
			return p, nil, apierror.BadRequest("invalid_"+t.name, t.name+" must be a time of day as HH:MM (00:00 to 23:59), or empty.")
		}
		*t.dst = t.v.Value
	}
	if req.Status.Set {
		changed = append(changed, "status")
		p.Status = string(req.Status.Value)
	}
	if req.ReplyTo.Set {
		changed = append(changed, "reply_to")
		p.ReplyTo = ""
		if v := strings.TrimSpace(req.ReplyTo.Value); v != "" {
			addr, ok := contacts.NormalizeEmail(v)
			if !ok {
				return p, nil, apierror.BadRequest("invalid_reply_to", "reply_to must be one address, or empty to clear it.")
			}
			p.ReplyTo = addr
		}
	}
	if req.Timezone.Set {
		changed = append(changed, "timezone")
		tz := strings.TrimSpace(req.Timezone.Value)
		if tz != "" {
			if _, err := time.LoadLocation(tz); err != nil || tz == "Local" {
				return p, nil, apierror.BadRequest("invalid_timezone", "timezone must be an IANA zone name such as Europe/Berlin, or empty to clear it.")
			}
		}
		p.Timezone = tz
	}
	if req.SendAsEmail.Set {
		changed = append(changed, "send_as_email")
		v, err := sendAsChoice(cur, req.SendAsEmail.Value)
		if err != nil {
			return p, nil, err
		}
		p.SendAsEmail = v
	}
	if req.Tags != nil {
		changed = append(changed, "tags")
		tags, err := h.mailboxTags(ctx, tx, cur.OrganizationID, req.Tags)
		if err != nil {
			return p, nil, err
		}
		p.Tags = tags
	}
	if req.Warmup.Set {
		changed = append(changed, "warmup")
		anchor, paused := nextWarmup(cur, req.Warmup.Value, h.now())
		p.Warmup, p.WarmupPausedAt = anchor, paused
	}
	return p, changed, nil
}

// sendAsChoice checks a send-as address: empty resets to the mailbox's own address, which is always allowed;
// anything else must be an alias the provider reported verified (only Google exposes them).
func sendAsChoice(cur dbq.Mailbox, raw string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(raw))
	if v == "" || v == cur.Email {
		return "", nil
	}
	var identities []identityJSON
	if err := json.Unmarshal(cur.Identities, &identities); err != nil {
		return "", err
	}
	for _, id := range identities {
		if id.Verified && strings.EqualFold(id.Email, v) {
			return v, nil
		}
	}
	return "", apierror.BadRequest("mailbox_send_as_unknown", v+" is not a send-as address the provider has verified for this mailbox.").
		WithFix("Refresh the identity with POST /emails/{id}/identity/refresh, then pick one of its verified addresses (Google mailboxes only).")
}

// mailboxTags checks a tag id list: at most 50 distinct ids, each a tag of the organization.
func (h *Mailboxes) mailboxTags(ctx context.Context, tx pgx.Tx, org uuid.UUID, raw []string) ([]uuid.UUID, error) {
	tags := make([]uuid.UUID, 0, len(raw))
	for _, s := range raw {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, apierror.BadRequest("invalid_tags", "tags must be tag ids (uuids); "+fmt.Sprintf("%q", s)+" is not one.")
		}
		if !slices.Contains(tags, id) {
			tags = append(tags, id)
		}
	}
	if len(tags) > maxMailboxTags {
		return nil, apierror.BadRequest("invalid_tags", fmt.Sprintf("A mailbox carries at most %d tags.", maxMailboxTags))
	}
	known, err := h.queries.MailboxTagsKnown(ctx, tx, dbq.MailboxTagsKnownParams{OrganizationID: org, Ids: tags})
	if err != nil {
		return nil, err
	}
	if int(known) != len(tags) {
		return nil, apierror.BadRequest("unknown_tags", "Some tags are not tags of this organization.").
			WithFix("GET /tags lists the organization's tags.")
	}
	return tags, nil
}

// nextWarmup is the warmup anchor and pause time after turning warmup on or off at now. On: a disabled
// warmup starts a fresh ramp, a paused one resumes with its anchor shifted by the time spent paused, a running
// one is unchanged. Off: both cleared, so the ramp's progress is gone.
func nextWarmup(cur dbq.Mailbox, on bool, now time.Time) (anchor, paused *time.Time) {
	switch {
	case !on:
		return nil, nil
	case cur.Warmup == nil:
		return &now, nil
	case cur.WarmupPausedAt != nil:
		shifted := cur.Warmup.Add(now.Sub(*cur.WarmupPausedAt))
		return &shifted, nil
	}
	return cur.Warmup, nil
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

// --- live test

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

// --- cold rotation

// MailboxesHold moves the mailbox to reserve, out of campaign sending; holding a held mailbox changes nothing.
func (h *Mailboxes) MailboxesHold(ctx context.Context, params api.MailboxesHoldParams) (*api.MailboxRotationState, error) {
	return h.rotate(ctx, params.ID, func(cur dbq.Mailbox) (string, string) {
		return "reserve", "Held out of campaign sending by hand."
	})
}

// MailboxesRelease returns a held or resting mailbox to campaign sending: resting while a running warmup still
// reports it throttled or worse, active otherwise. Releasing an active mailbox changes nothing.
func (h *Mailboxes) MailboxesRelease(ctx context.Context, params api.MailboxesReleaseParams) (*api.MailboxRotationState, error) {
	return h.rotate(ctx, params.ID, func(cur dbq.Mailbox) (string, string) {
		if cur.RotationState == "active" {
			return "active", cur.RotationReason
		}
		running := cur.Warmup != nil && cur.WarmupPausedAt == nil
		if running && slices.Contains([]string{"throttled", "quarantined", "blocked"}, cur.WarmupHealth) {
			return "resting", "Warmup reports the mailbox " + cur.WarmupHealth + "; it rests until warmup recovers."
		}
		return "active", ""
	})
}

// rotate moves a mailbox's cold-rotation state to what next decides; an unchanged state is answered as stored.
func (h *Mailboxes) rotate(ctx context.Context, id uuid.UUID, next func(dbq.Mailbox) (state, reason string)) (*api.MailboxRotationState, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var row dbq.Mailbox
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.MailboxGetForUpdate(ctx, tx, dbq.MailboxGetForUpdateParams{OrganizationID: org, ID: id})
		if err != nil {
			return db.Classify(err, "Mailbox")
		}
		state, reason := next(cur)
		if state == cur.RotationState {
			row = cur
			return nil
		}
		row, err = h.queries.MailboxSetRotation(ctx, tx, dbq.MailboxSetRotationParams{OrganizationID: org, ID: id,
			RotationState: state, RotationReason: reason})
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "mailbox.rotation_changed", EntityType: audit.EntityEmailAccount,
			EntityID: id.String(), Metadata: map[string]any{"email": cur.Email, "from": cur.RotationState, "to": state}})
	})
	if err != nil {
		return nil, err
	}
	return rotationOf(row), nil
}

// --- warmup lifecycle

// errWarmupOff refuses pausing or resuming a warmup that is not enabled.
var errWarmupOff = apierror.Conflict("mailbox_warmup_disabled", "Warmup is not enabled on this mailbox.").
	WithFix("Start it with POST /emails/{id}/warmup/start.")

// MailboxesWarmupStart enables warmup: a fresh ramp from base when disabled, the ramp where it stopped when
// paused, nothing when already running.
func (h *Mailboxes) MailboxesWarmupStart(ctx context.Context, params api.MailboxesWarmupStartParams) (*api.Mailbox, error) {
	return h.warmup(ctx, params.ID, "start", func(cur dbq.Mailbox, now time.Time) (*time.Time, *time.Time, error) {
		anchor, paused := nextWarmup(cur, true, now)
		return anchor, paused, nil
	})
}

// MailboxesWarmupPause pauses a running warmup; the ramp stands still until it resumes.
func (h *Mailboxes) MailboxesWarmupPause(ctx context.Context, params api.MailboxesWarmupPauseParams) (*api.Mailbox, error) {
	return h.warmup(ctx, params.ID, "pause", func(cur dbq.Mailbox, now time.Time) (*time.Time, *time.Time, error) {
		if cur.Warmup == nil {
			return nil, nil, errWarmupOff
		}
		if cur.WarmupPausedAt != nil {
			return cur.Warmup, cur.WarmupPausedAt, nil
		}
		return cur.Warmup, &now, nil
	})
}

// MailboxesWarmupResume resumes a paused warmup with its anchor moved forward by the time spent paused.
func (h *Mailboxes) MailboxesWarmupResume(ctx context.Context, params api.MailboxesWarmupResumeParams) (*api.Mailbox, error) {
	return h.warmup(ctx, params.ID, "resume", func(cur dbq.Mailbox, now time.Time) (*time.Time, *time.Time, error) {
		if cur.Warmup == nil {
			return nil, nil, errWarmupOff
		}
		anchor, paused := nextWarmup(cur, true, now)
		return anchor, paused, nil
	})
}

// MailboxesWarmupStop turns warmup off and discards the ramp's progress.
func (h *Mailboxes) MailboxesWarmupStop(ctx context.Context, params api.MailboxesWarmupStopParams) (*api.Mailbox, error) {
	return h.warmup(ctx, params.ID, "stop", func(dbq.Mailbox, time.Time) (*time.Time, *time.Time, error) {
		return nil, nil, nil
	})
}

// warmup applies one lifecycle move to the mailbox's warmup anchor and pause time, recording it when it
// changed something.
func (h *Mailboxes) warmup(ctx context.Context, id uuid.UUID, move string, next func(dbq.Mailbox, time.Time) (anchor, paused *time.Time, err error)) (*api.Mailbox, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var row dbq.Mailbox
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.MailboxGetForUpdate(ctx, tx, dbq.MailboxGetForUpdateParams{OrganizationID: org, ID: id})
		if err != nil {
			return db.Classify(err, "Mailbox")
		}
		anchor, paused, err := next(cur, h.now())
		if err != nil {
			return err
		}
		if sameTime(anchor, cur.Warmup) && sameTime(paused, cur.WarmupPausedAt) {
			row = cur
			return nil
		}
		row, err = h.queries.MailboxSetWarmup(ctx, tx, dbq.MailboxSetWarmupParams{OrganizationID: org, ID: id, Warmup: anchor, WarmupPausedAt: paused})
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "mailbox.warmup_" + move, EntityType: audit.EntityEmailAccount,
			EntityID: id.String(), Metadata: map[string]any{"email": cur.Email}})
	})
	if err != nil {
		return nil, err
	}
	out := mailboxOf(row)
	return &out, nil
}

func sameTime(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}
