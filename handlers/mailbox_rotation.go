package handlers

import (
	"context"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

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
