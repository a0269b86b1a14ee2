package handlers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

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
