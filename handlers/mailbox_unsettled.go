package handlers

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// MailboxesListUnsettledSends lists the mailbox's ambiguous sends its Sent folder could not settle, oldest
// first, for a person to decide.
func (h *Mailboxes) MailboxesListUnsettledSends(ctx context.Context, params api.MailboxesListUnsettledSendsParams) (*api.MailboxesListUnsettledSendsOK, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit := params.Limit.Or(50)
	var rows []dbq.SendTask
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.load(ctx, tx, org, params.ID); err != nil {
			return err
		}
		rows, err = h.queries.SendTasksUndecided(ctx, tx, dbq.SendTasksUndecidedParams{OrganizationID: org,
			MailboxID: uuid.NullUUID{UUID: params.ID, Valid: true}, AfterID: params.Cursor.Or(uuid.Nil), MaxRows: int32(limit + 1)})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.MailboxesListUnsettledSendsOK{Data: []api.UnsettledSend{}}
	if len(rows) > limit {
		rows = rows[:limit]
		out.Pagination.HasMore = true
		out.Pagination.NextCursor = api.NewOptNilString(rows[limit-1].ID.String())
	}
	for _, t := range rows {
		out.Data = append(out.Data, unsettledSend(t))
	}
	return out, nil
}

// MailboxesDecideUnsettledSend applies a person's decision (resend or skip) on one of the mailbox's
// ambiguous sends, audited in the same transaction.
func (h *Mailboxes) MailboxesDecideUnsettledSend(ctx context.Context, req *api.MailboxesDecideUnsettledSendReq, params api.MailboxesDecideUnsettledSendParams) (*api.UnsettledSend, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	org, decision := p.OrganizationID, string(req.Decision)
	var t dbq.SendTask
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.load(ctx, tx, org, params.ID); err != nil {
			return err
		}
		before, err := h.opts.Sending.Decide(ctx, tx, h.outbox, org, params.ID, params.SendId, p.UserID, decision)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return apierror.NotFound("not_found", "No send with this id was made from this mailbox.")
		case errors.Is(err, sending.ErrNotUndecided):
			return apierror.Conflict("send_already_settled", "This send is not waiting for a decision (its status is "+before.Status+").")
		case err != nil:
			return err
		}
		event := "send_task.resent"
		if decision == sending.DecisionSkip {
			event = "send_task.skipped"
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: event, EntityType: audit.EntityEmail,
			EntityID: before.ID.String(), Metadata: map[string]any{"email_account_id": params.ID, "to_email": before.ToEmail,
				"message_id": before.MessageID, "decision": decision}}); err != nil {
			return err
		}
		t, err = h.queries.SendTaskGet(ctx, tx, dbq.SendTaskGetParams{OrganizationID: org, ID: before.ID})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := unsettledSend(t)
	return &out, nil
}

// unsettledSend maps a send task to its API shape.
func unsettledSend(t dbq.SendTask) api.UnsettledSend {
	out := api.UnsettledSend{ID: t.ID, Kind: api.UnsettledSendKind(t.Kind), ToEmail: t.ToEmail, Subject: t.Subject,
		MessageID: api.NewOptString(t.MessageID), StepName: api.NewOptString(t.StepName), Status: api.UnsettledSendStatus(t.Status),
		OutcomeCheck: api.UnsettledSendOutcomeCheck(t.OutcomeCheck), ErrorCode: t.ErrorCode, ErrorMessage: t.ErrorMessage,
		CreatedAt: t.CreatedAt}
	if t.CampaignID.Valid {
		out.CampaignID = api.NewOptNilUUID(t.CampaignID.UUID)
	}
	if t.HandedOverAt != nil {
		out.HandedOverAt = api.NewOptNilDateTime(*t.HandedOverAt)
	}
	if t.DecidedAt != nil {
		out.DecidedAt = api.NewOptNilDateTime(*t.DecidedAt)
	}
	return out
}
