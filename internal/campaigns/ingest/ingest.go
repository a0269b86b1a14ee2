package ingest

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/internal/campaigns/deliverability"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/campaigns/unsubscribe"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/dsn"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Event is one posted event, as the API states it.
type Event struct {
	OrganizationID uuid.UUID
	// Kind is bounce, complaint, unsubscribe, open, click or reply.
	Kind deliverability.Kind
	// Email is the recipient address the event is about.
	Email string
	// TaskID, CampaignID and ContactID say what it is about, when the provider knows.
	TaskID, CampaignID, ContactID uuid.NullUUID
	// Provider names who reports it; Reason is their words (a bounce's SMTP reply, a complaint's feedback type).
	Provider, Reason string
	// IdempotencyKey records the event once (the body's key, else the request's Idempotency-Key).
	IdempotencyKey string
	// Metadata is kept with the event. A bounce's bounce_type (hard or soft) is read from it; an open's or
	// click's user_agent and ip (the reader's, as the provider saw them) and a click's url are judged.
	Metadata map[string]any
}

// Bounds of what an event carries (the stored limits).
const (
	maxProvider = 200
	maxReason   = 1000
	maxKey      = 255
	// maxMetadata is below the stored bound (16,384 bytes in Postgres's own encoding), which JSON text exceeds
	// for no realistic report.
	maxMetadata = 12 << 10
)

// Service applies posted events; build it with New.
type Service struct {
	pool     *pgxpool.Pool
	outbox   *events.Outbox
	recorder *deliverability.Recorder
	engine   *engine.Engine
	unsub    *unsubscribe.Service
	tracking *tracking.Batcher
	hasher   *tracking.IPHasher
	networks *tracking.Networks
}

// Deps are the paths the events go through: the engine (leads, reply matching, and through it the deliverability
// recorder), the unsubscribe service, and the tracking writer with the address hasher and network lists the
// endpoints use.
type Deps struct {
	Pool        *pgxpool.Pool
	Outbox      *events.Outbox
	Engine      *engine.Engine
	Unsubscribe *unsubscribe.Service
	Tracking    *tracking.Batcher
	Hasher      *tracking.IPHasher
	Networks    *tracking.Networks
}

// New builds the service.
func New(d Deps) *Service {
	return &Service{pool: d.Pool, outbox: d.Outbox, recorder: deliverability.New(d.Engine, nil), engine: d.Engine,
		unsub: d.Unsubscribe, tracking: d.Tracking, hasher: d.Hasher, networks: d.Networks}
}

// Ingest applies one event in one transaction (see the package doc). A transaction that lost a deadlock is a
// 503 the provider may retry, having changed nothing.
func (s *Service) Ingest(ctx context.Context, e Event) error {
	if err := e.check(); err != nil {
		return err
	}
	err := db.WithOrgTx(ctx, s.pool, e.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		return s.apply(ctx, tx, e)
	})
	return db.Classify(err, "The event")
}

// check refuses what no path would take, naming the field.
func (e Event) check() error {
	meta, err := json.Marshal(e.Metadata)
	if err != nil {
		return err
	}
	url, _ := e.Metadata["url"].(string)
	switch {
	case len(meta) > maxMetadata:
		return apierror.BadRequest("invalid_metadata", "metadata must be at most 12 KiB of JSON.")
	case len(url) > tracking.MaxURLLength:
		return apierror.BadRequest("invalid_metadata", "metadata.url must be at most 2,048 bytes.")
	case utf8.RuneCountInString(e.Provider) > maxProvider:
		return apierror.BadRequest("invalid_provider", "provider must be at most 200 characters.")
	case utf8.RuneCountInString(e.Reason) > maxReason:
		return apierror.BadRequest("invalid_reason", "reason must be at most 1,000 characters.")
	case utf8.RuneCountInString(e.IdempotencyKey) > maxKey:
		return apierror.BadRequest("invalid_idempotency_key", "idempotency_key must be at most 255 characters.")
	}
	if bt, ok := e.Metadata["bounce_type"]; ok && e.Kind == deliverability.KindBounce && bt != "hard" && bt != "soft" {
		return apierror.BadRequest("invalid_bounce_type", `metadata.bounce_type must be "hard" or "soft".`)
	}
	return nil
}

// apply is Ingest inside the organization's transaction.
func (s *Service) apply(ctx context.Context, tx pgx.Tx, e Event) error {
	m, err := deliverability.MatchRecipient(ctx, tx, e.OrganizationID, deliverability.Hint{Email: e.Email,
		TaskID: e.TaskID, CampaignID: e.CampaignID, ContactID: e.ContactID})
	if err != nil {
		return err
	}
	ev := deliverability.Event{OrganizationID: e.OrganizationID, Kind: e.Kind, Source: deliverability.SourceIngest,
		Recipient: e.Email, Provider: e.Provider, Reason: e.Reason, Metadata: e.Metadata, IdempotencyKey: e.IdempotencyKey}
	var out deliverability.Outcome
	switch e.Kind {
	case deliverability.KindBounce:
		diag := dsn.Diagnose(e.Reason)
		ev.Bounce, ev.StatusCode, ev.SMTPCode = diag.Severity, diag.Status, diag.SMTPCode
		if bt, ok := e.Metadata["bounce_type"].(string); ok {
			ev.Bounce = dsn.Severity(bt)
		}
		if ev.Bounce != dsn.Soft {
			ev.Bounce = dsn.Hard // a provider reporting a bounce without saying more reports a failed delivery
		}
		out, err = s.recorder.Record(ctx, tx, s.outbox, m, ev)
	case deliverability.KindComplaint:
		ev.FeedbackType = "abuse"
		out, err = s.recorder.Record(ctx, tx, s.outbox, m, ev)
	default:
		if out, err = s.recorder.Note(ctx, tx, m, ev); err == nil && !out.Duplicate {
			err = s.effects(ctx, tx, e, m)
		}
	}
	if err != nil || out.Duplicate {
		return err
	}
	entry := audit.Entry{Action: audit.ActionCreate, Event: "deliverability.event_ingested", EntityType: audit.EntityContact,
		Metadata: map[string]any{"event_type": e.Kind, "event_id": out.ID, "provider": e.Provider}}
	if m.ContactID.Valid {
		entry.EntityID = m.ContactID.UUID.String()
	}
	if m.Task != nil {
		entry.Metadata["task_id"] = m.Task.ID
	}
	if m.CampaignID.Valid {
		entry.Metadata["campaign_id"] = m.CampaignID.UUID
	}
	return audit.Record(ctx, tx, entry)
}

// effects applies a recorded unsubscribe, open, click or reply through the path that owns it.
func (s *Service) effects(ctx context.Context, tx pgx.Tx, e Event, m deliverability.Match) error {
	var err error
	switch {
	case e.Kind == deliverability.KindUnsubscribe:
		_, err = s.unsub.Reported(ctx, tx, e.OrganizationID, m.ContactID, m.CampaignID, strings.ToLower(e.Email))
	case m.Task == nil:
		// An open, click or reply about no known send is its record alone.
	case e.Kind == deliverability.KindReply:
		err = s.engine.Replied(ctx, tx, s.outbox, mailsync.Inbound{OrganizationID: e.OrganizationID,
			MailboxID: m.Task.MailboxID.UUID, InReplyTo: m.Task.MessageID, FromEmail: strings.ToLower(e.Email),
			Subject: "Re: " + m.Task.Subject, ReceivedAt: time.Now()})
	default:
		err = s.tracking.RecordTx(ctx, tx, e.OrganizationID, []tracking.Received{s.received(e, m.Task.ID)})
	}
	return err
}

// received is a reported open or click as the tracking endpoints would have received it: the reader's user
// agent and address as the provider saw them (hashed and reduced to their network, never kept), judged by the
// same rules.
func (s *Service) received(e Event, task uuid.UUID) tracking.Received {
	ua, _ := e.Metadata["user_agent"].(string)
	raw, _ := e.Metadata["ip"].(string)
	ip, _ := netip.ParseAddr(raw)
	tok := tracking.Token{Kind: tracking.KindOpen, OrganizationID: e.OrganizationID, TaskID: task}
	if e.Kind == deliverability.KindClick {
		tok.Kind = tracking.KindClick
		tok.URL, _ = e.Metadata["url"].(string)
	}
	return tracking.Received{Token: tok, At: time.Now(), UserAgent: ua, IPHash: s.hasher.Hash(ip),
		SourceNetwork: tracking.SourceNetwork(ip), Source: s.networks.Lookup(ip, ua)}
}
